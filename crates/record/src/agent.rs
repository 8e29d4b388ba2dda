//! The recorder's side of the in-process agent (crate `hindsight-agent`).
//!
//! The agent runs the program's common syscalls without a stop; at a thread's next stop the
//! recorder drains what it logged into an [`Event::Buffered`](hindsight_trace::Event)
//! written before the stop's own event. A stop can also find the thread *inside* the agent
//! (a signal, a preemption, the desched signal of a call that blocks): the agent's code is
//! not the program's, its positions are not counted, and it must never run a signal handler
//! or be named by a position. What this module decides for such a stop ([`Place`]):
//!
//! - The thread is blocked in the agent's untraced syscall, which the stop interrupted
//!   (its result is a restart code): nothing of the call has happened. At its desched
//!   signal, the call is left to go on, blocked, from the agent's second untraced syscall
//!   instruction, after which the thread stops before it touches the agent's memory
//!   again, and is then put where the stub's traced call would stand at its exit (the
//!   recorder's `block_in_agent`; the trace is that of a traced call). When that cannot be,
//!   the thread is sent back to its stub's `syscall` instruction with the program's
//!   registers, to make the call traced ([`redo_traced`]: a call that blocks then lets
//!   another thread run, as rr's "desched" does). For a signal of the program's, it is put
//!   where that traced call would stand once interrupted ([`interrupted_traced`]), and the
//!   signal is delivered there, with the kernel's restart rules.
//! - Anywhere else in the agent (or in its stub before the call returned), the thread runs
//!   on to the agent's return, where a hardware breakpoint stops it ([`arm_exit_trap`]); what
//!   the stop was for (a signal, a preemption) happens there, outside the agent.
//!
//! Invariant: whenever another thread of the process runs, no thread of it is inside the
//! agent, except threads blocked in its second untraced syscall, which never read or write
//! the agent's memory again: one buffer, one stack and one register save area serve the
//! whole process.

use hindsight_agent::abi::{self, Frame};
use hindsight_agent_host::{Agent, State};
use hindsight_ptrace::{ProcessMemory, PtraceError, Regs, Tid};
use hindsight_ticks::assemble::AgentStub;
use hindsight_ticks::counter::CodeView;

/// Where a stopped thread is, with respect to the agent.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Place {
    /// At a program instruction, or in its stub where stepping on is safe: the usual
    /// handling applies (the buffer may be drained).
    Outside,
    /// In its stub after the agent asked for the call to be executed there: the thread is
    /// about to make a traced syscall (what the stop was for waits for it).
    ToSyscall,
    /// In the agent's untraced syscall, interrupted before it did anything.
    Interrupted {
        /// The stub the call came from.
        stub: AgentStub,
        /// The program's registers at the call.
        frame: Frame,
        /// The stack pointer at the agent's entry.
        saved_sp: u64,
        /// The interrupted result (-EINTR or a restart code).
        result: i64,
    },
    /// Inside the agent (or its stub before the call returned): it returns to `ret`.
    Inside {
        /// The return address into the stub.
        ret: u64,
        /// The agent's phase (`abi::PHASE_*`): in `PHASE_COMMIT` a record is being written
        /// and the buffer must not be drained.
        phase: u64,
    },
}

/// Where thread `regs` stands (the agent's `state` read at this stop).
pub(crate) fn place(
    agent: &Agent,
    view: &CodeView,
    mem: &ProcessMemory,
    regs: &Regs,
    state: &State,
) -> Place {
    let pc = regs.pc();
    let a = &agent.addrs;
    if let Some(stub) = view.agent_stub(pc) {
        return if pc == stub.entry || pc == stub.end {
            Place::Outside
        } else if pc < stub.ret {
            // On its way into the agent (lea, mov, call).
            Place::Inside {
                ret: stub.ret,
                phase: abi::PHASE_IDLE,
            }
        } else if regs.0.rcx != 0 {
            Place::ToSyscall
        } else {
            Place::Outside
        };
    }
    if !a.in_code(pc) {
        return Place::Outside;
    }
    let result = regs.0.rax as i64;
    if pc == a.untraced + abi::SYSCALL_LEN
        && state.phase == abi::PHASE_SYSCALL
        && abi::interrupted(result)
    {
        let ret = mem.read_u64(state.saved_sp).unwrap_or(0);
        if let Some(stub) = view.agent_stub(ret).filter(|s| s.ret == ret) {
            return Place::Interrupted {
                stub,
                frame: state.frame,
                saved_sp: state.saved_sp,
                result,
            };
        }
    }
    // The return address: on the stack before the entry saved the stack pointer and at the
    // agent's last instruction, where the entry saved the stack pointer everywhere else.
    let sp = if (a.prologue.0..a.prologue.1).contains(&pc) || pc == a.ret {
        regs.sp()
    } else {
        state.saved_sp
    };
    Place::Inside {
        ret: mem.read_u64(sp).unwrap_or(0),
        phase: state.phase,
    }
}

/// The program's registers at its call (the stub's, with the stack pointer it had there).
fn program_regs(now: &Regs, frame: &Frame, saved_sp: u64) -> Regs {
    let mut r = *now;
    let g = &mut r.0;
    g.rax = frame.rax;
    g.rbx = frame.rbx;
    g.rcx = frame.rcx;
    g.rdx = frame.rdx;
    g.rsi = frame.rsi;
    g.rdi = frame.rdi;
    g.rbp = frame.rbp;
    g.r8 = frame.r8;
    g.r9 = frame.r9;
    g.r10 = frame.r10;
    g.r11 = frame.r11;
    g.r12 = frame.r12;
    g.r13 = frame.r13;
    g.r14 = frame.r14;
    g.r15 = frame.r15;
    g.eflags = frame.rflags;
    // The entry's stack pointer points at the return address, below the red zone.
    g.rsp = saved_sp + 8 + 128;
    r
}

/// Sends a thread whose untraced call was interrupted (`Place::Interrupted`) back to its
/// stub's `syscall` instruction, the program's registers as they were: the call runs again,
/// traced. Nothing restarts the interrupted one (orig_rax = -1).
pub(crate) fn redo_traced(tid: Tid, place: &Place) -> Result<(), PtraceError> {
    let Place::Interrupted {
        stub,
        frame,
        saved_sp,
        ..
    } = place
    else {
        return Ok(());
    };
    let mut r = program_regs(&tid.regs()?, frame, *saved_sp);
    r.0.rip = stub.fallback;
    r.0.orig_rax = u64::MAX;
    tid.set_regs(&r)
}

/// Puts a thread whose untraced call a signal interrupted (`Place::Interrupted`) where the
/// same call, traced from its stub, would stand when interrupted: just past the stub's
/// `syscall`, with the interrupted result and the call's number for the kernel's restart
/// rules. Returns (number, arguments, result) for the recording.
pub(crate) fn interrupted_traced(
    tid: Tid,
    place: &Place,
) -> Result<Option<(u64, [u64; 6], i64)>, PtraceError> {
    let Place::Interrupted {
        stub,
        frame,
        saved_sp,
        result,
    } = place
    else {
        return Ok(None);
    };
    let mut r = program_regs(&tid.regs()?, frame, *saved_sp);
    r.0.rip = stub.end;
    r.0.rax = *result as u64;
    r.0.orig_rax = frame.rax;
    // What the `syscall` instruction leaves: the return address and the flags.
    r.0.rcx = stub.end;
    r.0.r11 = frame.rflags;
    tid.set_regs(&r)?;
    Ok(Some((frame.rax, frame.args(), *result)))
}

/// Sends a thread stopped inside the agent before its call did anything (the agent faulted
/// on a bad pointer of the program's, or the stub's call on the program's stack) to
/// `stub`'s `syscall`, traced.
pub(crate) fn redo_at(tid: Tid, stub: &AgentStub, state: &State) -> Result<(), PtraceError> {
    let now = tid.regs()?;
    if let Some(r) = stub.in_place(&now) {
        return tid.set_regs(&r);
    }
    let mut r = program_regs(&now, &state.frame, state.saved_sp);
    r.0.rip = stub.fallback;
    r.0.orig_rax = u64::MAX;
    tid.set_regs(&r)
}

/// A syscall in words: `munmap(0x7a0000000000, 0x1000)`.
pub(crate) fn describe(nr: u64, args: &[u64; 6]) -> String {
    let name = hindsight_syscalls::name(nr)
        .map(str::to_string)
        .unwrap_or_else(|| format!("syscall {nr}"));
    format!("{name}({:#x}, {:#x})", args[0], args[1])
}

/// SIGSEGV, SIGBUS… (or the number).
pub(crate) fn signal_name(sig: i32) -> String {
    match sig {
        libc::SIGSEGV => "SIGSEGV".into(),
        libc::SIGBUS => "SIGBUS".into(),
        libc::SIGILL => "SIGILL".into(),
        libc::SIGFPE => "SIGFPE".into(),
        other => format!("signal {other}"),
    }
}

/// DR7 bits: local enable of DR0, execution breakpoint (R/W0 = 00, LEN0 = 00).
const DR7_EXEC0: u64 = 1;

/// Stops `tid` when it executes the instruction at `ret` (the agent's return into its stub),
/// with DR0: the agent's code is shared by the process's threads, and no byte of it changes.
pub(crate) fn arm_exit_trap(tid: Tid, ret: u64) -> Result<(), PtraceError> {
    tid.set_debugreg(0, ret)?;
    tid.set_debugreg(7, DR7_EXEC0)
}

/// Takes the exit trap away (after it hit, or when the thread left the agent another way).
pub(crate) fn disarm_exit_trap(tid: Tid) -> Result<(), PtraceError> {
    tid.set_debugreg(7, 0)?;
    tid.set_debugreg(6, 0)
}

/// `si_code`s of a SIGTRAP from the debug exception: TRAP_BRKPT (no cause left in DR6),
/// TRAP_TRACE (a single step) and TRAP_HWBKPT (DR0–DR3). A program's own `int3` gives
/// SI_KERNEL.
const TRAP_BRKPT: i32 = 1;
const TRAP_TRACE: i32 = 2;
const TRAP_HWBKPT: i32 = 4;

/// Whether `tid`, stopped by a SIGTRAP with siginfo `si` at `pc`, hit its exit trap: DR6 says
/// so, or a debug exception's SIGTRAP stands at the trap's address. The second catches a hit
/// reported after DR6 was rewritten (the trap taken away, or taken away and set again, at a
/// stop reported in between; or a step of the recorder's own whose trap was pending there):
/// the kernel then reports it with any of the three codes. Only the recorder sets hardware
/// breakpoints and single-steps (a program cannot without ptrace; its own trap flag would
/// have to stop it exactly at the agent's return).
pub(crate) fn hit_exit_trap(tid: Tid, si: &libc::siginfo_t, pc: u64) -> bool {
    tid.debugreg(6).is_ok_and(|d| d & 1 != 0)
        || (matches!(si.si_code, TRAP_BRKPT | TRAP_TRACE | TRAP_HWBKPT)
            && tid.debugreg(0).is_ok_and(|a| a == pc))
}

/// The desched descriptor of thread `fd`'s owner, duplicated into the recorder (so that the
/// recorder can disarm the event of a call it took out of the agent).
pub(crate) fn dup_desched(pid: i32, fd: i64) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    if fd < 0 {
        return None;
    }
    // SAFETY: plain syscalls; the descriptors they return are owned here.
    unsafe {
        let pidfd = libc::syscall(libc::SYS_pidfd_open, pid, 0);
        if pidfd < 0 {
            return None;
        }
        let dup = libc::syscall(libc::SYS_pidfd_getfd, pidfd as i32, fd as i32, 0);
        libc::close(pidfd as i32);
        (dup >= 0).then(|| std::os::fd::OwnedFd::from_raw_fd(dup as i32))
    }
}

/// Arms or disarms a desched event through the recorder's duplicate of its descriptor.
pub(crate) fn set_desched(fd: &std::os::fd::OwnedFd, on: bool) {
    use std::os::fd::AsRawFd;
    const PERF_EVENT_IOC_DISABLE: u64 = 0x2401;
    // Enabled for one overflow, as the agent arms it (see its runtime): the event then
    // disables itself, and the switch into the ptrace stop of its own signal sends no
    // second one.
    const PERF_EVENT_IOC_REFRESH: u64 = 0x2402;
    let (req, arg) = if on {
        (PERF_EVENT_IOC_REFRESH, 1)
    } else {
        (PERF_EVENT_IOC_DISABLE, 0)
    };
    // SAFETY: an ioctl on our own descriptor.
    unsafe {
        libc::ioctl(fd.as_raw_fd(), req as _, arg);
    }
}

/// Whether signal `sig` with siginfo `si` is the desched signal of descriptor `fd`.
pub(crate) fn is_desched(sig: i32, si: &libc::siginfo_t, fd: i64) -> bool {
    if sig != abi::DESCHED_SIGNAL || fd < 0 {
        return false;
    }
    // SIGIO-style siginfo: si_band (long) then si_fd (int) after the three leading ints.
    // SAFETY: siginfo_t is plain data of 128 bytes.
    let bytes: &[u8; 128] = unsafe { &*(si as *const libc::siginfo_t).cast::<[u8; 128]>() };
    let code = i32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    let si_fd = i32::from_le_bytes([bytes[24], bytes[25], bytes[26], bytes[27]]);
    code > 0 && i64::from(si_fd) == fd
}

/// Whether a syscall (name, arguments) would map, unmap or change memory that overlaps the
/// agent's.
pub(crate) fn touches_agent(agent: &Agent, name: &str, args: &[u64; 6]) -> bool {
    let a = &agent.addrs;
    match name {
        "mmap" => {
            args[3] & (libc::MAP_FIXED as u64 | 0x10_0000) != 0 && a.overlaps(args[0], args[1])
        }
        "mremap" => {
            a.overlaps(args[0], args[1])
                || (args[3] & libc::MREMAP_FIXED as u64 != 0 && a.overlaps(args[4], args[2]))
        }
        "munmap" | "mprotect" | "pkey_mprotect" | "madvise" | "mlock" | "munlock" | "mlock2"
        | "remap_file_pages" => a.overlaps(args[0], args[1]),
        _ => false,
    }
}
