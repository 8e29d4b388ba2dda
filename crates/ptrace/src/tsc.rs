//! The time-stamp counter under `PR_SET_TSC(PR_TSC_SIGSEGV)`: `rdtsc` and `rdtscp` fault with
//! SIGSEGV (si_code `SI_KERNEL`) instead of executing, so that a recorder can supply — and
//! write down — the value, and a replayer can supply the recorded one.

use crate::memory::ProcessMemory;
use crate::regs::Regs;

/// A time-stamp-counter read instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TscRead {
    /// `rdtsc` (0f 31): edx:eax = TSC.
    Rdtsc,
    /// `rdtscp` (0f 01 f9): edx:eax = TSC, ecx = TSC_AUX.
    Rdtscp,
}

impl TscRead {
    /// Length of the instruction in bytes.
    pub fn length(self) -> u64 {
        match self {
            TscRead::Rdtsc => 2,
            TscRead::Rdtscp => 3,
        }
    }
}

/// The TSC read at `pc`, if the instruction there is one.
pub fn tsc_read_at(mem: &ProcessMemory, pc: u64) -> Option<TscRead> {
    let mut code = [0u8; 3];
    if mem.read(pc, &mut code[..2]).is_err() {
        return None;
    }
    if code[..2] == [0x0f, 0x31] {
        return Some(TscRead::Rdtsc);
    }
    if code[..2] == [0x0f, 0x01] && mem.read(pc + 2, &mut code[2..]).is_ok() && code[2] == 0xf9 {
        return Some(TscRead::Rdtscp);
    }
    None
}

/// Completes the instruction in `regs` as the CPU would have, with `tsc` (and `aux` for
/// rdtscp): the upper halves of rax/rdx/rcx are zeroed, as a 32-bit write does.
pub fn complete(regs: &mut Regs, read: TscRead, tsc: u64, aux: u32) {
    regs.0.rax = tsc & 0xffff_ffff;
    regs.0.rdx = tsc >> 32;
    if read == TscRead::Rdtscp {
        regs.0.rcx = u64::from(aux);
    }
    regs.0.rip += read.length();
}

/// Reads this CPU's TSC (and TSC_AUX) the way the program asked for.
pub fn read_host(read: TscRead) -> (u64, u32) {
    let mut aux = 0u32;
    // SAFETY: rdtsc/rdtscp have no memory effects besides writing `aux`.
    let tsc = unsafe {
        match read {
            TscRead::Rdtsc => core::arch::x86_64::_rdtsc(),
            TscRead::Rdtscp => core::arch::x86_64::__rdtscp(&mut aux),
        }
    };
    (tsc, aux)
}
