//! Moving an asynchronous stop to a position that replay can tell apart.
//!
//! An asynchronous position (a preemption, a timer signal in code without syscalls) is named
//! by its pc, registers and top of stack (see [`crate::point`]); replay stops at the first
//! execution of the pc in that state. In a loop whose progress lives in memory that no
//! register holds at that pc (a global counter between its store and its next load), every
//! iteration looks the same there, and replay would stop at the first one.
//!
//! Where an asynchronous event lands is the recorder's choice (a signal may be delivered, a
//! thread preempted, a few instructions later without the program being able to tell), so
//! the recorder single-steps the thread on until it comes back to a pc it has seen during
//! these steps in another state: there the state carries the loop's progress (the counter was
//! just loaded, the stack slot changed), and the event is recorded and delivered there.
//! Stepping stops early, where it stands, before an instruction that is an event of its own
//! (a syscall, `rdtsc`, a trap) or leaves the loop's function (a call, a return), at a stop that is not the step's (a signal: the program's,
//! sent again unless it is a fault that the instruction will raise again), or after
//! [`MAX_STEPS`] steps (a loop body that long rarely repeats its states).

use std::collections::HashMap;

use hindsight_ptrace::{ProcessMemory, Tid};
use iced_x86::{Code, Decoder, DecoderOptions, FlowControl};

use crate::point;

/// The most instructions a stop is moved by (a few microseconds each).
pub const MAX_STEPS: usize = 48;

/// How settling ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// The thread is stopped where the event goes (after a step's trap, or where it was).
    Here,
    /// The thread ended (killed) while being stepped: its wait status was consumed.
    Gone(hindsight_ptrace::WaitEvent),
}

/// Single-steps stopped thread `tid` of `pid` to a position that replay can tell apart from
/// the same pc's other executions (see the module's comment). The first step discards the
/// signal the thread is stopped with (the caller delivers it itself). Stepping also stops
/// before a pc for which `stop_before` holds (where a syscall goes to the in-process agent:
/// an event of its own, like a `syscall` instruction).
pub fn settle(
    pid: i32,
    tid: Tid,
    mem: &ProcessMemory,
    stop_before: &dyn Fn(u64) -> bool,
) -> Result<Settled, hindsight_ptrace::PtraceError> {
    use hindsight_ptrace::{Stop, WaitEvent};
    let mut seen: HashMap<u64, ([u64; 27], u64)> = HashMap::new();
    for _ in 0..MAX_STEPS {
        let regs = tid.regs()?;
        let pc = regs.pc();
        let (words, digest) = (regs.to_words(), point::stack_digest(mem, regs.sp()));
        match seen.get(&pc) {
            Some((w, d)) if !point::same_registers(w, &words) || *d != digest => {
                return Ok(Settled::Here)
            }
            Some(_) => {}
            None => {
                seen.insert(pc, (words, digest));
            }
        }
        if stop_before(pc) || !steppable(mem, pc) {
            return Ok(Settled::Here);
        }
        tid.step(0)?;
        match hindsight_ptrace::wait_tid(tid)? {
            WaitEvent::Stopped(Stop::Signal(libc::SIGTRAP)) => {}
            WaitEvent::Stopped(Stop::Signal(sig)) => {
                // The instruction did not run. A fault comes back when it runs again; any
                // other signal is the program's and must not be lost: it is sent again.
                let si = tid.siginfo()?;
                let fault = matches!(
                    sig,
                    libc::SIGSEGV | libc::SIGBUS | libc::SIGILL | libc::SIGFPE
                ) && si.si_code > 0;
                if !fault {
                    tid.resend_signal(pid, sig, &si);
                }
                return Ok(Settled::Here);
            }
            WaitEvent::Stopped(_) => return Ok(Settled::Here),
            gone => return Ok(Settled::Gone(gone)),
        }
    }
    Ok(Settled::Here)
}

/// Whether the instruction at `pc` may run under a single step here: not a syscall, a trap
/// or a time-stamp read (those are events the recorder handles when the program runs), and
/// not a call or return: the loop body is what settling is for, and a call leads into code
/// whose stack holds what replay cannot reproduce (the lazy binder's `xsave` area, whose
/// in-use bits depend on the kernel's own use of the FPU).
fn steppable(mem: &ProcessMemory, pc: u64) -> bool {
    let mut code = [0u8; 16];
    if mem.read(pc, &mut code).is_err() {
        return false;
    }
    let insn = Decoder::with_ip(64, &code, pc, DecoderOptions::NONE).decode();
    !insn.is_invalid()
        && matches!(
            insn.flow_control(),
            FlowControl::Next
                | FlowControl::UnconditionalBranch
                | FlowControl::ConditionalBranch
                | FlowControl::IndirectBranch
        )
        && !matches!(
            insn.code(),
            Code::Syscall
                | Code::Sysenter
                | Code::Int3
                | Code::Int_imm8
                | Code::Into
                | Code::Int1
                | Code::Rdtsc
                | Code::Rdtscp
                | Code::Ud2
                | Code::Hlt
        )
}
