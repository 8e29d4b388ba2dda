//! Bookkeeping for the threads of the program.

use hindsight_ptrace::Tid;

/// Where a thread is, from the tracer's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ThreadState {
    /// Running; a stop will be reported by `waitpid`.
    Running,
    /// Interrupted (or known to be about to stop): its stop has not been reaped yet.
    Stopping,
    /// Stopped under ptrace; its state can be read and written.
    Stopped,
}

/// One thread of the program.
#[derive(Debug, Clone)]
pub(crate) struct Thread {
    pub tid: Tid,
    /// gdb's thread number: 1 for the main thread, then in creation order.
    pub num: u32,
    /// pthread_t (glibc: the thread's fs_base); 0 until its first stop.
    pub pthread: u64,
    pub state: ThreadState,
    /// Signal to deliver when the thread next resumes (0: none).
    pub pending_signal: i32,
    /// Announced by its creator, first stop not seen yet: its creation is reported then.
    pub announced: bool,
}

impl Thread {
    pub fn new(tid: Tid, num: u32) -> Self {
        Thread {
            tid,
            num,
            pthread: 0,
            state: ThreadState::Stopped,
            pending_signal: 0,
            announced: false,
        }
    }
}
