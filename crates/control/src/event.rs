//! What execution reports upward: why the program stopped, and what happened on the way.

use hindsight_ptrace::Tid;

/// Why [`crate::Inferior::resume`] returned. Every thread is stopped when it does (or the
/// process is gone).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopEvent {
    /// A thread trapped at a breakpoint site and the hook chose to stop; its pc is the site.
    Breakpoint {
        /// The thread.
        tid: Tid,
        /// The site's address.
        addr: u64,
    },
    /// A hardware watchpoint fired and the hook chose to stop.
    Watchpoint {
        /// The thread.
        tid: Tid,
        /// Which debug registers fired (DR6 bits 0–3).
        slots: u8,
    },
    /// A single-step finished.
    Stepped {
        /// The thread.
        tid: Tid,
    },
    /// A thread received a signal that stops the program; it is delivered on the next resume
    /// unless discarded.
    Signal {
        /// The thread.
        tid: Tid,
        /// The signal number.
        signal: i32,
    },
    /// [`crate::Inferior::resume_polled`]'s condition came true: every thread is stopped
    /// wherever it was.
    Interrupted,
    /// The process exited with this status.
    Exited(i32),
    /// The process was killed by this signal.
    Killed(i32),
    /// A thread is about to make a syscall (only when the program was started with
    /// `trap_syscalls`, for recording and replay): the syscall has not run yet; the caller
    /// decides what it does (see `Stop::Seccomp`).
    Syscall {
        /// The thread.
        tid: Tid,
    },
    /// The process executed a new program: one thread is left, and the breakpoint sites went
    /// with the old memory. The front end loads the new program's symbols, plants its
    /// breakpoints again and resumes.
    Exec {
        /// The thread (now the only one, with the process id as its tid).
        tid: Tid,
        /// The path of the new program, from /proc.
        path: String,
    },
}

/// Things that happen while the program runs and that the user is told about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notification {
    /// A new thread: gdb number, tid, pthread id (its TCB address, from fs_base).
    NewThread {
        /// gdb thread number.
        num: u32,
        /// Kernel thread id.
        tid: Tid,
        /// pthread_t of the thread (glibc: the fs_base register).
        pthread: u64,
    },
    /// A thread exited.
    ThreadExited {
        /// gdb thread number.
        num: u32,
        /// Kernel thread id.
        tid: Tid,
        /// pthread_t of the thread.
        pthread: u64,
    },
    /// The program forked; the child was detached (breakpoints removed from its memory).
    Detached {
        /// The child's pid.
        pid: i32,
    },
}

/// The front end's say in what stops the program. Called while other threads may be running:
/// implementations read the trapped thread's state through the `Inferior`.
pub trait StopHook {
    /// Thread `tid` executed the int3 at `addr` (a site of ours). Return true to stop the program.
    fn breakpoint_hit(&mut self, inferior: &crate::Inferior, tid: Tid, addr: u64) -> bool;
    /// A hardware watchpoint fired (`slots`: DR6 bits 0–3). Return true to stop the program.
    fn watchpoint_hit(&mut self, inferior: &crate::Inferior, tid: Tid, slots: u8) -> bool;
    /// Something happened that the user is told about at once.
    fn notify(&mut self, note: Notification);
    /// Whether a signal stops the program (gdb's `handle SIG stop`); the others are passed to
    /// the program silently.
    fn stops_on_signal(&mut self, signal: i32) -> bool {
        stops_by_default(signal)
    }
    /// Whether a signal that arrived is given to the program (gdb's `handle SIG pass`).
    fn passes_signal(&mut self, _signal: i32) -> bool {
        true
    }
    /// A signal arrived for thread `tid` and does not stop the program (gdb prints it when
    /// `handle SIG print` says so).
    fn signal_arrived(&mut self, _inferior: &crate::Inferior, _tid: Tid, _signal: i32) {}
    /// Replay only: `events` recorded events have been replayed and thread `tid` is about to
    /// run towards the next one. Between two such calls only that thread runs, and what it
    /// does is determined (this is what makes positions nameable). Return true to stop here.
    fn at_event(&mut self, _inferior: &crate::Inferior, _events: u64, _tid: Tid) -> bool {
        false
    }
    /// Replay only: the running thread's tick count now (the instruction counter), told just
    /// before each of the calls above (None: the trace counts no ticks).
    fn clock(&mut self, _ticks: Option<u64>) {}
}

/// gdb's default `handle` table: these signals pass to the program silently (32 and 33 are
/// glibc's own, for thread cancellation and set*id); every other one stops it.
pub fn stops_by_default(signal: i32) -> bool {
    !matches!(
        signal,
        libc::SIGCHLD
            | libc::SIGWINCH
            | libc::SIGALRM
            | libc::SIGURG
            | libc::SIGPROF
            | libc::SIGVTALRM
            | libc::SIGIO
            | libc::SIGPWR
            | 32
            | 33
    )
}
