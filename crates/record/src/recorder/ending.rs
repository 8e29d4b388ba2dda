//! The end of a recording that a signal to the recorder cut short (SIGTERM, SIGHUP).
//!
//! What the program did before the recorder stops must be in the trace: a user who saw a line
//! printed expects the replay to print it. A thread the recorder resumed into a syscall may
//! have done it (written that line) without its exit stop having been handled yet, and the
//! running thread may have buffered calls in the agent since its last stop. So the recorder
//! does not kill at once: it interrupts every thread that runs (PTRACE_INTERRUPT: a syscall in
//! progress completes, or is interrupted if it sleeps, and its exit stop comes first), goes on
//! handling the stops that come as usual — recording those exits, draining the agent — but
//! gives no thread a new turn and resumes none that reaches user code again ("parked"), and
//! ends when every interrupted thread is parked or gone, or after [`PATIENCE`].
//!
//! Invariant while ending: no thread runs that was not running when the request came.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use hindsight_ptrace::Tid;

use super::{set_timer, Recorder, State};
use crate::error::RecordError;

/// How long the running threads get to reach a stop once interrupted (a thread stuck in an
/// uninterruptible sleep must not keep the recorder from ending).
const PATIENCE: Duration = Duration::from_secs(2);

/// A recording being ended (see the module's header).
#[derive(Debug)]
pub(super) struct Ending {
    /// The signal that asked for the end.
    pub(super) signal: i32,
    /// Interrupted threads not parked or gone yet.
    running: HashSet<i32>,
    /// When they stop being waited for.
    deadline: Instant,
}

impl Recorder {
    /// Starts ending the recording for `signal`: interrupts every thread that runs.
    pub(super) fn begin_ending(&mut self, signal: i32) {
        // (A thread interrupted for a preemption is stopping already: its stop is awaited
        // the same way.)
        // (A thread waiting at its write to the outputs is stopped already: not awaited.)
        let waiting: HashSet<i32> = self.output_waiters.iter().map(|w| w.1).collect();
        let running: HashSet<i32> = self
            .procs
            .values()
            .flat_map(|p| &p.threads)
            .filter(|t| t.interrupted || matches!(t.state, State::User | State::InSyscall))
            .filter(|t| !waiting.contains(&t.tid))
            .map(|t| t.tid)
            .collect();
        for &tid in &running {
            let _ = Tid(tid).interrupt();
        }
        // Wakes the wait regularly, so that the deadline is noticed.
        set_timer(Some(Duration::from_millis(5)));
        self.timer_armed = true;
        self.ending = Some(Ending {
            signal,
            running,
            deadline: Instant::now() + PATIENCE,
        });
    }

    /// True when the ending is over: every interrupted thread is parked, gone or stopped in
    /// the ready queue, or the patience ran out.
    pub(super) fn ending_finished(&mut self) -> bool {
        let Some(e) = self.ending.as_mut() else {
            return false;
        };
        let procs = &mut self.procs;
        e.running.retain(|&tid| {
            procs
                .values_mut()
                .any(|p| p.thread(tid).is_some_and(|t| t.state != State::Ready))
        });
        e.running.is_empty() || Instant::now() >= e.deadline
    }

    /// True while ending: `tid`, stopped, stays stopped (and no longer counts as running).
    pub(super) fn park(&mut self, tid: i32) -> bool {
        match self.ending.as_mut() {
            Some(e) => {
                e.running.remove(&tid);
                true
            }
            None => false,
        }
    }

    /// The interrupt stop of `tid` while ending: the agent's buffer drained (if the thread is
    /// inside the agent, it is let out first and stops again), then parked.
    pub(super) fn ending_event_stop(&mut self, pid: i32, tid: i32) -> Result<(), RecordError> {
        let user = self
            .procs
            .get_mut(&pid)
            .and_then(|p| p.thread(tid))
            .is_some_and(|t| {
                t.interrupted = false;
                t.state == State::User
            });
        if user && !self.agent_at_interrupt(pid, tid)? {
            // Let go to leave the agent: it stops again at the agent's exit trap or at its
            // syscall, and is parked there.
            return Ok(());
        }
        self.park(tid);
        Ok(())
    }
}
