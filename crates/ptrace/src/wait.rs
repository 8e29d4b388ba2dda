//! Why a traced thread stopped: `waitpid` statuses decoded into one enum.

use crate::error::PtraceError;
use crate::thread::Tid;

/// A ptrace event stop (`status >> 16`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Signal-delivery stop: the thread is about to receive this signal. Whether it does is
    /// decided by the signal passed to the next resume.
    Signal(i32),
    /// `PTRACE_EVENT_CLONE`: the thread created a thread (its tid is the event message).
    Clone,
    /// `PTRACE_EVENT_FORK`: the thread created a process (its pid is the event message).
    Fork,
    /// `PTRACE_EVENT_VFORK`: the thread created a process that shares its memory until it
    /// executes or exits.
    Vfork,
    /// `PTRACE_EVENT_EXEC`: the process executed a new program (the thread may have a new tid).
    Exec,
    /// `PTRACE_EVENT_EXIT`: the thread is about to exit (registers still readable).
    Exiting,
    /// `PTRACE_EVENT_STOP`: a `PTRACE_INTERRUPT`, a new thread's first stop, or a group stop
    /// (the signal is SIGSTOP/SIGTSTP/SIGTTIN/SIGTTOU then).
    EventStop(i32),
    /// Syscall entry or exit (with `PTRACE_O_TRACESYSGOOD`).
    Syscall,
    /// `PTRACE_EVENT_SECCOMP`: a syscall is about to run (a seccomp filter said "trace").
    /// `orig_rax` holds its number; setting it to -1 skips it, and `rax` is then its result.
    Seccomp,
}

/// What `waitpid` reported for one thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitEvent {
    /// The thread stopped and is under our control.
    Stopped(Stop),
    /// The thread (or, for the leader, the process) exited with this status.
    Exited(i32),
    /// The thread was killed by this signal.
    Killed(i32),
}

fn decode(status: i32) -> WaitEvent {
    if libc::WIFEXITED(status) {
        return WaitEvent::Exited(libc::WEXITSTATUS(status));
    }
    if libc::WIFSIGNALED(status) {
        return WaitEvent::Killed(libc::WTERMSIG(status));
    }
    let sig = libc::WSTOPSIG(status);
    let event = (status >> 16) & 0xff;
    WaitEvent::Stopped(match event {
        0 if sig == (libc::SIGTRAP | 0x80) => Stop::Syscall,
        0 => Stop::Signal(sig),
        libc::PTRACE_EVENT_CLONE => Stop::Clone,
        libc::PTRACE_EVENT_FORK => Stop::Fork,
        libc::PTRACE_EVENT_VFORK => Stop::Vfork,
        libc::PTRACE_EVENT_EXEC => Stop::Exec,
        libc::PTRACE_EVENT_EXIT => Stop::Exiting,
        libc::PTRACE_EVENT_SECCOMP => Stop::Seccomp,
        _ => Stop::EventStop(sig),
    })
}

fn wait_raw(pid: i32, flags: i32) -> Result<Option<(Tid, WaitEvent)>, PtraceError> {
    loop {
        match wait_once(pid, flags) {
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
            other => return other,
        }
    }
}

/// Waits for the next stop of any traced thread, or returns Ok(None) when a signal handler of
/// hindsight's ran meanwhile (a timer of the recorder: its deadline has come).
pub fn wait_any_interruptible() -> Result<Option<(Tid, WaitEvent)>, PtraceError> {
    match wait_once(-1, 0) {
        Err(e) if e.raw_os_error() == Some(libc::EINTR) => Ok(None),
        Err(e) => Err(e),
        Ok(r) => Ok(r),
    }
}

fn wait_once(pid: i32, flags: i32) -> Result<Option<(Tid, WaitEvent)>, PtraceError> {
    let mut status = 0;
    {
        // __WALL: wait for threads (clone children) too, not only the process leader.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::__WALL | flags) };
        if r == -1 {
            let err = std::io::Error::last_os_error();
            return Err(PtraceError::Sys {
                what: "waiting for the program".into(),
                source: err,
            });
        }
        if r == 0 {
            return Ok(None);
        }
        Ok(Some((Tid(r), decode(status))))
    }
}

/// Waits for the next stop or exit of any traced thread.
pub fn wait_any() -> Result<(Tid, WaitEvent), PtraceError> {
    wait_raw(-1, 0)?.ok_or_else(|| PtraceError::Sys {
        what: "waiting for the program".into(),
        source: std::io::Error::from_raw_os_error(libc::ECHILD),
    })
}

/// Returns a pending stop of any traced thread without blocking.
pub fn poll_any() -> Result<Option<(Tid, WaitEvent)>, PtraceError> {
    wait_raw(-1, libc::WNOHANG)
}

/// Waits for the next stop or exit of one thread.
pub fn wait_tid(tid: Tid) -> Result<WaitEvent, PtraceError> {
    Ok(wait_raw(tid.0, 0)?
        .map(|(_, e)| e)
        .unwrap_or(WaitEvent::Exited(0)))
}
