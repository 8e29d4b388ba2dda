//! Remote syscall injection: make a stopped tracee execute one system call of our choosing.
//!
//! Used to map scratch memory (displaced-stepping slots) into the program. The thread's registers
//! and the two bytes at its pc are saved, a `syscall` instruction is written at the pc, the thread
//! single-steps it, and everything is restored.
//!
//! Kernel surprise: a thread stopped inside an interrupted system call may have the kernel's
//! restart logic pending (rax = -ERESTARTSYS…, orig_rax = the syscall). Resuming it with
//! modified registers would let the kernel "restart" our injected call or the old one at the wrong
//! place, so the injected register set carries `orig_rax = -1` (no syscall to restart), and the
//! saved set — with its own orig_rax — is put back afterwards so the original call restarts.
//!
//! Another: single-stepping a thread that is stopped at a syscall exit (the exec event is one)
//! reports a SIGTRAP before any instruction runs; the step is repeated until the pc moved.

use crate::error::PtraceError;
use crate::memory::ProcessMemory;
use crate::thread::Tid;
use crate::wait::{wait_tid, Stop, WaitEvent};

const SYSCALL_INSN: [u8; 2] = [0x0f, 0x05];

/// Executes syscall `nr` with `args` in stopped thread `tid` and returns its raw result
/// (negative errno on failure). Signals that arrive meanwhile stay pending for the program.
pub fn inject_syscall(
    tid: Tid,
    mem: &ProcessMemory,
    nr: i64,
    args: [u64; 6],
) -> Result<i64, PtraceError> {
    let saved = tid.regs()?;
    let pc = saved.pc();
    let mut saved_code = [0u8; 2];
    mem.read(pc, &mut saved_code)?;
    mem.write(pc, &SYSCALL_INSN)?;
    let mut r = saved;
    r.0.rax = nr as u64;
    r.0.orig_rax = u64::MAX;
    r.set_syscall_args(args);
    let mut deferred = Vec::new();
    let result = (|| {
        tid.set_regs(&r)?;
        loop {
            tid.step(0)?;
            match wait_tid(tid)? {
                WaitEvent::Stopped(Stop::Signal(libc::SIGTRAP)) => {
                    // Stepping from a syscall-exit stop (the exec event, an interrupted call)
                    // traps before any user instruction runs: step again until it has.
                    if tid.regs()?.pc() == pc + SYSCALL_INSN.len() as u64 {
                        break;
                    }
                    // That early trap also let the kernel write the interrupted call's
                    // result into rax: load our registers again.
                    tid.set_regs(&r)?;
                }
                // Another signal arrived before the instruction ran. Stepping on without it
                // discards it, so it is re-sent to the thread once its state is restored.
                WaitEvent::Stopped(Stop::Signal(sig)) => deferred.push(sig),
                WaitEvent::Stopped(_) => continue,
                WaitEvent::Exited(_) | WaitEvent::Killed(_) => {
                    return Err(PtraceError::Spawn {
                        path: format!("thread {}", tid.0),
                        reason: "exited during an injected system call".into(),
                    })
                }
            }
        }
        Ok(tid.regs()?.0.rax as i64)
    })();
    // Restore whatever happened above; report the first failure.
    let restored = mem
        .write(pc, &saved_code)
        .and_then(|_| tid.set_regs(&saved));
    let value = result?;
    restored?;
    for sig in deferred {
        tid.kill(mem.pid(), sig)?;
    }
    Ok(value)
}

/// Maps `len` bytes of anonymous read+execute memory in the tracee, preferably at `hint`.
/// Returns the address, or None when the kernel refused.
pub fn map_scratch(
    tid: Tid,
    mem: &ProcessMemory,
    hint: u64,
    len: u64,
) -> Result<Option<u64>, PtraceError> {
    let prot = (libc::PROT_READ | libc::PROT_EXEC) as u64;
    let flags = (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS) as u64;
    let r = inject_syscall(
        tid,
        mem,
        libc::SYS_mmap,
        [hint, len, prot, flags, u64::MAX, 0],
    )?;
    if r < 0 && r > -4096 {
        return Ok(None);
    }
    Ok(Some(r as u64))
}

/// Forks the stopped single-threaded process whose thread is `tid` (a checkpoint of it, or a
/// copy that runs on from a checkpoint) and returns the copy's thread, stopped, in exactly the
/// state `tid` is in: same registers, same memory (but no exit signal to its parent).
///
/// Kernel surprises: the copy starts right after the injected `syscall` instruction, with
/// rax = 0 and the instruction still written at the pc in its memory (its memory was copied
/// while the injection was in place): both are put back. It is traced from its first
/// instruction (the tracee's PTRACE_O_TRACEFORK) and starts in a SIGSTOP signal-delivery-stop,
/// which the first resume with no signal discards. Only the calling thread is copied: other
/// threads of a multi-threaded process would be missing from the copy.
pub fn fork_stopped(tid: Tid, mem: &ProcessMemory) -> Result<Tid, PtraceError> {
    let saved = tid.regs()?;
    let pc = saved.pc();
    let mut code = [0u8; 2];
    mem.read(pc, &mut code)?;
    // clone with CLONE_PARENT and no exit signal: the copy is a child of the process's parent
    // (hindsight), not of the program, which must never see it — no SIGCHLD when it is
    // killed (a checkpoint dropped), not even after the program execs (the kernel turns a
    // child's exit signal back into SIGCHLD when its parent has exec'd since). The copy is
    // reported as a clone (PTRACE_EVENT_CLONE), and waited for with __WALL.
    let pid = inject_syscall(
        tid,
        mem,
        libc::SYS_clone,
        [libc::CLONE_PARENT as u64, 0, 0, 0, 0, 0],
    )?;
    if pid <= 0 {
        return Err(PtraceError::Spawn {
            path: format!("process {}", mem.pid()),
            reason: format!("fork failed: errno {}", -pid),
        });
    }
    let child = Tid(pid as i32);
    match wait_tid(child)? {
        WaitEvent::Stopped(_) => {}
        _ => {
            return Err(PtraceError::Spawn {
                path: format!("process {}", mem.pid()),
                reason: "its copy died at once".into(),
            })
        }
    }
    let cmem = ProcessMemory::open(child.0)?;
    cmem.write(pc, &code)?;
    child.set_regs(&saved)?;
    Ok(child)
}

/// Puts a thread that is stopped anywhere back at the seccomp stop of the syscall its
/// registers `regs` were taken at (a replay parks threads there, the syscall not yet run).
///
/// How: the syscall instruction is just before the saved pc (`syscall` is 2 bytes); the thread
/// is sent back to it with rax = the syscall number and run until the seccomp filter stops it
/// again, which leaves it exactly as it was parked.
pub fn repark(tid: Tid, mem: &ProcessMemory, regs: &crate::Regs) -> Result<(), PtraceError> {
    let mut r = *regs;
    r.0.rip = regs.0.rip.wrapping_sub(SYSCALL_INSN.len() as u64);
    r.0.rax = regs.0.orig_rax;
    r.0.orig_rax = u64::MAX;
    tid.set_regs(&r)?;
    let mut deferred = Vec::new();
    tid.cont(0)?;
    loop {
        match wait_tid(tid)? {
            WaitEvent::Stopped(Stop::Seccomp) => break,
            WaitEvent::Stopped(Stop::Signal(sig)) => {
                deferred.push(sig);
                tid.cont(0)?;
            }
            WaitEvent::Stopped(_) => tid.cont(0)?,
            WaitEvent::Exited(_) | WaitEvent::Killed(_) => {
                return Err(PtraceError::Spawn {
                    path: format!("thread {}", tid.0),
                    reason: "exited on its way back to a syscall".into(),
                })
            }
        }
    }
    // Signals that came meanwhile are the program's: sent again, they wait for the thread.
    for sig in deferred {
        tid.kill(mem.pid(), sig)?;
    }
    Ok(())
}

/// Creates, in the process of stopped thread `via`, a new thread with registers `regs` (its
/// stack pointer and TLS base among them), stopped before its first instruction.
/// `clear_tid`: the address the kernel clears (and futex-wakes) when the thread exits
/// (pthread_join waits on it), 0 for none.
///
/// Only what clone and the registers carry is recreated: a robust futex list or an alternate
/// signal stack of the original thread is not.
pub fn clone_thread(
    via: Tid,
    mem: &ProcessMemory,
    regs: &crate::Regs,
    clear_tid: u64,
) -> Result<Tid, PtraceError> {
    let mut flags = (libc::CLONE_VM
        | libc::CLONE_FS
        | libc::CLONE_FILES
        | libc::CLONE_SIGHAND
        | libc::CLONE_THREAD
        | libc::CLONE_SYSVSEM
        | libc::CLONE_SETTLS) as u64;
    if clear_tid != 0 {
        flags |= libc::CLONE_CHILD_CLEARTID as u64;
    }
    // clone(flags, stack, parent_tid, child_tid, tls)
    let args = [flags, regs.0.rsp, 0, clear_tid, regs.0.fs_base, 0];
    let tid = inject_syscall(via, mem, libc::SYS_clone, args)?;
    if tid <= 0 {
        return Err(PtraceError::Spawn {
            path: format!("process {}", mem.pid()),
            reason: format!("clone failed: errno {}", -tid),
        });
    }
    let t = Tid(tid as i32);
    match wait_tid(t)? {
        WaitEvent::Stopped(_) => {}
        _ => {
            return Err(PtraceError::Spawn {
                path: format!("process {}", mem.pid()),
                reason: "a recreated thread died at once".into(),
            })
        }
    }
    t.set_regs(regs)?;
    Ok(t)
}
