//! Calls into the vsyscall page (`0xffffffffff600000`: gettimeofday, time, getcpu, the
//! legacy fixed-address entry points). The kernel emulates them: it runs the seccomp filter
//! (so the recorder is stopped at its seccomp stop with the syscall's number) but never
//! reports a syscall exit, and lets a tracer do nothing but skip the call with a result of its
//! own. So the recorder makes the call itself and skips the program's, giving it the result
//! and writing what the call writes; replay skips it the same way with the recorded result.

use hindsight_ptrace::{ProcessMemory, Regs};
use hindsight_trace::MemWrite;

/// The vsyscall page.
const PAGE: u64 = 0xffff_ffff_ff60_0000;

/// Whether the thread stopped at a vsyscall entry point.
pub fn is_vsyscall(regs: &Regs) -> bool {
    regs.pc() & !0xfff == PAGE
}

/// Performs the vsyscall the thread stopped at (in the recorder, on the same CPU): its result
/// and the memory it writes, written into the program. None for an entry point that is not
/// one of the three.
pub fn perform(mem: &ProcessMemory, regs: &Regs) -> Option<(i64, Vec<MemWrite>)> {
    let (a0, a1) = (regs.0.rdi, regs.0.rsi);
    let mut writes = Vec::new();
    let mut put = |addr: u64, data: &[u8]| {
        if addr != 0 && mem.write(addr, data).is_ok() {
            writes.push(MemWrite {
                addr,
                data: data.to_vec(),
            });
        }
    };
    let result = match regs.pc() - PAGE {
        0x000 => {
            // SAFETY: plain syscall with our own buffers.
            let mut tv: libc::timeval = unsafe { std::mem::zeroed() };
            let mut tz = [0u8; 8];
            let r = unsafe {
                libc::syscall(
                    libc::SYS_gettimeofday,
                    &mut tv as *mut libc::timeval,
                    tz.as_mut_ptr(),
                )
            };
            let mut b = tv.tv_sec.to_ne_bytes().to_vec();
            b.extend_from_slice(&tv.tv_usec.to_ne_bytes());
            put(a0, &b);
            put(a1, &tz);
            r
        }
        0x400 => {
            // SAFETY: plain syscall without arguments to write.
            let t = unsafe { libc::syscall(libc::SYS_time, 0usize) };
            put(a0, &t.to_ne_bytes());
            t
        }
        0x800 => {
            let (mut cpu, mut node) = (0u32, 0u32);
            // SAFETY: plain syscall with our own buffers.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_getcpu,
                    &mut cpu as *mut u32,
                    &mut node as *mut u32,
                    0usize,
                )
            };
            put(a0, &cpu.to_ne_bytes());
            put(a1, &node.to_ne_bytes());
            r
        }
        _ => return None,
    };
    Some((result, writes))
}
