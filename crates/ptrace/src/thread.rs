//! Operations on one traced thread: resume, step, interrupt, signal information, debug registers.

use crate::error::PtraceError;
use crate::regs::{FpRegs, Regs};
use std::ptr;

/// A thread id (Linux tid; the thread-group leader's tid is the process id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tid(pub i32);

impl std::fmt::Display for Tid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

fn ptrace(
    req: libc::c_uint,
    tid: Tid,
    addr: usize,
    data: usize,
    what: &str,
) -> Result<libc::c_long, PtraceError> {
    // SAFETY: every request used here takes integer/pointer arguments that the callers below
    // give valid buffers for; the kernel validates the tid.
    let r = unsafe {
        libc::ptrace(
            req,
            tid.0,
            addr as *mut libc::c_void,
            data as *mut libc::c_void,
        )
    };
    if r == -1 {
        return Err(PtraceError::last(format!("{what} of thread {}", tid.0)));
    }
    Ok(r)
}

/// What kind of syscall stop a thread is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyscallOp {
    /// Not a syscall stop.
    None,
    /// Syscall-entry stop.
    Entry,
    /// Syscall-exit stop.
    Exit,
    /// Seccomp stop.
    Seccomp,
}

/// Offset of `u_debugreg` in the kernel's `struct user` (x86-64), for PTRACE_POKEUSER.
const DEBUGREG_OFFSET: usize = std::mem::offset_of!(libc::user, u_debugreg);

impl Tid {
    /// Resumes the thread, delivering `signal` (0 for none).
    pub fn cont(self, signal: i32) -> Result<(), PtraceError> {
        ptrace(libc::PTRACE_CONT, self, 0, signal as usize, "PTRACE_CONT").map(|_| ())
    }

    /// Lets a thread in a group stop stay stopped as it would untraced (`PTRACE_LISTEN`): its
    /// parent's `waitpid(WUNTRACED)` sees it stopped, and a SIGCONT (or SIGKILL) wakes it;
    /// waking, it reports an event stop again.
    pub fn listen(self) -> Result<(), PtraceError> {
        ptrace(libc::PTRACE_LISTEN, self, 0, 0, "PTRACE_LISTEN").map(|_| ())
    }

    /// Resumes the thread until its next syscall entry or exit (`PTRACE_SYSCALL`), delivering
    /// `signal` (0 for none). From a seccomp stop, this lets the syscall run and stops at its
    /// exit, where its result and memory effects can be read.
    pub fn syscall(self, signal: i32) -> Result<(), PtraceError> {
        ptrace(
            libc::PTRACE_SYSCALL,
            self,
            0,
            signal as usize,
            "PTRACE_SYSCALL",
        )
        .map(|_| ())
    }

    /// At a syscall stop: whether it is the entry (`SyscallOp::Entry`), the exit, or a
    /// seccomp stop (`PTRACE_GET_SYSCALL_INFO`). Resuming a syscall-exit stop with
    /// PTRACE_SYSCALL stops at the *entry* of the next syscall, before its seccomp stop: the
    /// two look alike in the wait status.
    pub fn syscall_op(self) -> Result<SyscallOp, PtraceError> {
        const PTRACE_GET_SYSCALL_INFO: libc::c_uint = 0x420e;
        let mut info = [0u8; 88];
        ptrace(
            PTRACE_GET_SYSCALL_INFO,
            self,
            info.len(),
            info.as_mut_ptr() as usize,
            "PTRACE_GET_SYSCALL_INFO",
        )?;
        Ok(match info[0] {
            1 => SyscallOp::Entry,
            2 => SyscallOp::Exit,
            3 => SyscallOp::Seccomp,
            _ => SyscallOp::None,
        })
    }

    /// Replaces the signal information of the current signal-delivery stop (what the
    /// program's handler will see).
    pub fn set_siginfo(self, si: &libc::siginfo_t) -> Result<(), PtraceError> {
        ptrace(
            libc::PTRACE_SETSIGINFO,
            self,
            0,
            si as *const libc::siginfo_t as usize,
            "PTRACE_SETSIGINFO",
        )
        .map(|_| ())
    }

    /// Executes one instruction (delivering `signal` first if non-zero), then stops with SIGTRAP.
    pub fn step(self, signal: i32) -> Result<(), PtraceError> {
        ptrace(
            libc::PTRACE_SINGLESTEP,
            self,
            0,
            signal as usize,
            "PTRACE_SINGLESTEP",
        )
        .map(|_| ())
    }

    /// Asks a running thread to stop; it reports a `PTRACE_EVENT_STOP` (or whatever stop it was
    /// about to report anyway). Harmless on a thread that already stopped.
    pub fn interrupt(self) -> Result<(), PtraceError> {
        ptrace(libc::PTRACE_INTERRUPT, self, 0, 0, "PTRACE_INTERRUPT").map(|_| ())
    }

    /// Sends signal `sig` to this thread of process `pid` again, with its siginfo
    /// (rt_tgsigqueueinfo), or as a plain tgkill when the kernel refuses a foreign siginfo
    /// (si_code ≥ 0): a signal that a stop took from the thread reaches it later.
    pub fn resend_signal(self, pid: i32, sig: i32, si: &libc::siginfo_t) {
        // SAFETY: plain syscalls on our own tracee with a valid siginfo pointer.
        unsafe {
            let r = libc::syscall(
                libc::SYS_rt_tgsigqueueinfo,
                pid,
                self.0,
                sig,
                si as *const libc::siginfo_t,
            );
            if r != 0 {
                libc::syscall(libc::SYS_tgkill, pid, self.0, sig);
            }
        }
    }

    /// Reads the general-purpose registers.
    pub fn regs(self) -> Result<Regs, PtraceError> {
        let mut r: libc::user_regs_struct = unsafe { std::mem::zeroed() };
        ptrace(
            libc::PTRACE_GETREGS,
            self,
            0,
            ptr::addr_of_mut!(r) as usize,
            "PTRACE_GETREGS",
        )?;
        Ok(Regs(r))
    }

    /// Writes the general-purpose registers.
    pub fn set_regs(self, regs: &Regs) -> Result<(), PtraceError> {
        ptrace(
            libc::PTRACE_SETREGS,
            self,
            0,
            ptr::addr_of!(regs.0) as usize,
            "PTRACE_SETREGS",
        )
        .map(|_| ())
    }

    /// Reads the x87/SSE registers (xmm0 holds a returned `double`).
    pub fn fp_regs(self) -> Result<FpRegs, PtraceError> {
        let mut r: libc::user_fpregs_struct = unsafe { std::mem::zeroed() };
        ptrace(
            libc::PTRACE_GETFPREGS,
            self,
            0,
            ptr::addr_of_mut!(r) as usize,
            "PTRACE_GETFPREGS",
        )?;
        Ok(FpRegs(r))
    }

    /// The signal information of the current signal-delivery stop (si_code tells an int3 from a
    /// single-step trap from a hardware watchpoint from a `kill`).
    pub fn siginfo(self) -> Result<libc::siginfo_t, PtraceError> {
        let mut si: libc::siginfo_t = unsafe { std::mem::zeroed() };
        ptrace(
            libc::PTRACE_GETSIGINFO,
            self,
            0,
            ptr::addr_of_mut!(si) as usize,
            "PTRACE_GETSIGINFO",
        )?;
        Ok(si)
    }

    /// Reads debug register `n` (0–3 addresses, 6 status, 7 control).
    pub fn debugreg(self, n: usize) -> Result<u64, PtraceError> {
        // PEEKUSER returns the value itself, so -1 is ambiguous: clear errno first.
        unsafe { *libc::__errno_location() = 0 };
        let r = unsafe {
            libc::ptrace(
                libc::PTRACE_PEEKUSER,
                self.0,
                (DEBUGREG_OFFSET + n * 8) as *mut libc::c_void,
                ptr::null_mut::<libc::c_void>(),
            )
        };
        if r == -1 && std::io::Error::last_os_error().raw_os_error() != Some(0) {
            return Err(PtraceError::last(format!(
                "reading DR{n} of thread {}",
                self.0
            )));
        }
        Ok(r as u64)
    }

    /// Writes debug register `n`. The kernel validates DR7 against the address registers, so
    /// addresses go in before the control bits that enable them.
    pub fn set_debugreg(self, n: usize, value: u64) -> Result<(), PtraceError> {
        ptrace(
            libc::PTRACE_POKEUSER,
            self,
            DEBUGREG_OFFSET + n * 8,
            value as usize,
            "writing a debug register",
        )
        .map(|_| ())
    }

    /// The message of the last ptrace event (the new thread's tid for `PTRACE_EVENT_CLONE`,
    /// the exit status for `PTRACE_EVENT_EXIT`).
    pub fn event_msg(self) -> Result<u64, PtraceError> {
        let mut msg: libc::c_ulong = 0;
        ptrace(
            libc::PTRACE_GETEVENTMSG,
            self,
            0,
            ptr::addr_of_mut!(msg) as usize,
            "PTRACE_GETEVENTMSG",
        )?;
        Ok(msg)
    }

    /// Sends `signal` to this thread only (tgkill).
    pub fn kill(self, pid: i32, signal: i32) -> Result<(), PtraceError> {
        let r = unsafe { libc::syscall(libc::SYS_tgkill, pid, self.0, signal) };
        if r == -1 {
            return Err(PtraceError::last(format!("tgkill of thread {}", self.0)));
        }
        Ok(())
    }

    /// The thread's name (`/proc/PID/task/TID/comm`), as gdb shows it in `info threads`.
    pub fn name(self, pid: i32) -> Option<String> {
        std::fs::read_to_string(format!("/proc/{pid}/task/{}/comm", self.0))
            .ok()
            .map(|s| s.trim_end().to_string())
    }
}

/// Pins the calling process's thread and, if given, a tracee to CPU `cpu`. Tracer and tracee on
/// one CPU make each ptrace stop a direct context switch instead of a cross-CPU wake-up.
pub fn pin_to_cpu(tid: i32, cpu: usize) -> Result<(), PtraceError> {
    // SAFETY: cpu_set_t is plain data; CPU_SET only writes inside it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) == -1 {
            return Err(PtraceError::last(format!("pinning {tid} to CPU {cpu}")));
        }
    }
    Ok(())
}

/// The CPU the caller is currently running on.
pub fn current_cpu() -> usize {
    let c = unsafe { libc::sched_getcpu() };
    if c < 0 {
        0
    } else {
        c as usize
    }
}

impl Tid {
    /// Lets the thread go untraced, delivering `signal`.
    pub fn detach(self, signal: i32) -> Result<(), PtraceError> {
        ptrace(
            libc::PTRACE_DETACH,
            self,
            0,
            signal as usize,
            "PTRACE_DETACH",
        )
        .map(|_| ())
    }

    /// The thread-group id of a thread (from `/proc/TID/status`): tells a new thread of ours
    /// from a forked child when its first stop arrives before its creator's event.
    pub fn tgid(self) -> Option<i32> {
        let s = std::fs::read_to_string(format!("/proc/{}/status", self.0)).ok()?;
        s.lines()
            .find_map(|l| l.strip_prefix("Tgid:"))
            .and_then(|v| v.trim().parse().ok())
    }
}
