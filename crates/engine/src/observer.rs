//! What a front end hears while a motion runs: the things that happen on the way and are not
//! its end (a thread starts or exits, a dprintf prints, the program executes another one), in
//! the order they happen, so that a front end can interleave them with the program's own
//! output as they occurred.
//!
//! Invariant: the engine never prints; a [`Notice`] is data for the front end to show (the CLI
//! in gdb's words, the DAP server as events) or to drop.

use hindsight_ptrace::Tid;

use crate::frames::FrameInfo;
use crate::session::Session;

/// Something that happened during a motion.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// A new thread.
    NewThread {
        /// gdb's thread number.
        num: u32,
        /// Kernel thread id.
        tid: Tid,
        /// Its pthread_t.
        pthread: u64,
    },
    /// A motion across the processes of a replayed tree stopped in another process than the
    /// current one, which is the current one now (gdb's inferiors).
    SwitchedInferior {
        /// gdb's inferior number.
        num: u32,
        /// Its recorded pid.
        pid: i32,
        /// The program it runs.
        program: String,
    },
    /// A thread exited.
    ThreadExited {
        /// gdb's thread number.
        num: u32,
        /// Kernel thread id.
        tid: Tid,
        /// Its pthread_t.
        pthread: u64,
    },
    /// The program forked; the child goes on undebugged.
    Detached {
        /// The child's pid.
        pid: i32,
    },
    /// The process executed a new program (its symbols replaced the old ones).
    Exec {
        /// The process.
        pid: i32,
        /// The new program.
        path: String,
    },
    /// A dprintf breakpoint (a logpoint) was hit and formatted this text.
    Dprintf {
        /// The breakpoint.
        breakpoint: u32,
        /// The text (it ends with a newline only if the format does).
        text: String,
    },
    /// A dprintf's format could not be applied where it was hit.
    DprintfError {
        /// The breakpoint.
        breakpoint: u32,
        /// Why.
        error: String,
    },
    /// `finish` (forward) or `reverse-finish` (backward) starts: out of this frame, or back to
    /// its call.
    Finishing {
        /// The frame being finished.
        frame: Box<FrameInfo>,
        /// Backward (`reverse-finish`).
        backward: bool,
    },
    /// A signal arrived that does not stop the program and that `handle SIG print` says to
    /// mention (gdb: `Program received signal …`, or `Thread N "name" received signal …`
    /// when the program has several threads).
    SignalReceived {
        /// The thread's number and name, when the program has several threads.
        thread: Option<(u32, String)>,
        /// The signal.
        signal: i32,
    },
    /// What the program wrote to its stdout (`fd` 1) or stderr (2) in the recording, shown
    /// again by a replay whose output the engine held back (another process's run in a
    /// motion across a replayed tree: told only when it happened before the stop's
    /// consistent state, in the recording's order). A replay shows its output itself
    /// otherwise.
    ProgramOutput {
        /// The recorded process that wrote it.
        pid: i32,
        /// 1 or 2.
        fd: i32,
        /// The bytes written.
        data: Vec<u8>,
    },
    /// A line step started in a function without line information: the program runs until
    /// that function returns.
    SteppingOutOf {
        /// The function (`??` when unknown).
        function: String,
    },
}

/// The front end's side of a motion.
pub trait Observer {
    /// Something happened (called as it happens).
    fn notice(&mut self, notice: Notice);

    /// [`Observer::notice`] of something that happened in a replay standing before event
    /// `at.0`, `at.1` calls of that event's batch of buffered calls made: a replayed tree
    /// keeps what another process's run saw only up to the consistent state around the
    /// stop. The default tells [`Observer::notice`].
    fn notice_at(&mut self, notice: Notice, at: (u64, u32)) {
        let _ = at;
        self.notice(notice);
    }

    /// Commands of a periodic debugger event (`every K [ticks] COMMAND`) are due: the replay stands at
    /// that event, with the thread about to run selected. The front end runs them in its own
    /// command language (the motion goes on afterwards). The default ignores them.
    fn run_commands(&mut self, session: &mut Session, commands: &[String]) {
        let _ = (session, commands);
    }
}

/// An observer that drops everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct Quiet;

impl Observer for Quiet {
    fn notice(&mut self, _: Notice) {}
}
