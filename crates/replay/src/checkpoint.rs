//! Checkpoints of a replay (DESIGN.md, "Checkpoints and reverse execution"; seed 003's
//! RECAP): a forked copy of the replayed process, stopped between two events, with the
//! replayer's state at that event. Going back to it forks the copy again and replays on from
//! there, instead of from the start of the recording.
//!
//! Invariants: a checkpoint is taken only between two events (so positions, which count
//! from an event, mean the same from it as from the start), and only of a process with one
//! thread, nothing parked in a syscall and no asynchronous position being approached — the
//! state that the fork copies completely. Multi-threaded stretches of a replay are reached
//! from the last checkpoint before their threads were created, or from the start.
//!
//! The copy is a tracee of ours that never runs: it is killed (and reaped) when the
//! checkpoint is dropped, and with hindsight (PTRACE_O_EXITKILL).

use hindsight_control::{Inferior, StepOverMode};
use hindsight_ptrace::{ProcessMemory, Tid};

use crate::replayer::Replayer;
use crate::ReplayError;

/// A stopped copy of the replayed process and the replay's state at one event.
pub struct Checkpoint {
    copy: Tid,
    /// The replayer as it was, bound to the copy.
    state: Replayer,
}

impl Checkpoint {
    /// Recorded events replayed at the checkpoint.
    pub fn event(&self) -> u64 {
        self.state.events_replayed()
    }

    /// A new replay from this checkpoint: a fresh copy of the checkpoint's process, stopped
    /// where the checkpoint is, and the replayer driving it. The checkpoint stays.
    pub fn restore(&self) -> Result<(Replayer, Inferior), ReplayError> {
        let mem = ProcessMemory::open(self.copy.0)?;
        let live = hindsight_ptrace::inject::fork_stopped(self.copy, &mem)?;
        let mut inf = Inferior::adopt(live.0)?;
        inf.set_step_over_mode(StepOverMode::NoSwitch);
        let replayer = self.state.duplicate(live)?;
        Ok((replayer, inf))
    }
}

impl Drop for Checkpoint {
    fn drop(&mut self) {
        // SAFETY: plain syscalls on a process of ours that nothing else uses.
        unsafe {
            libc::kill(self.copy.0, libc::SIGKILL);
            let mut status = 0;
            libc::waitpid(self.copy.0, &mut status, libc::__WALL);
        }
    }
}

impl Replayer {
    /// Whether a checkpoint can be taken now (see the module's invariants).
    pub fn can_checkpoint(&self, inf: &Inferior) -> bool {
        inf.is_alive() && inf.threads().len() == 1 && self.quiet_state()
    }

    /// Takes a checkpoint of the replay as it is (between two events; see
    /// [`Replayer::can_checkpoint`]).
    pub fn checkpoint(&self, inf: &mut Inferior) -> Result<Checkpoint, ReplayError> {
        if !self.can_checkpoint(inf) {
            return Err(ReplayError::Unsupported(
                "no checkpoint here: the process has several threads or is inside an event".into(),
            ));
        }
        let tid = Tid(inf.pid());
        let copy = inf.fork_copy(tid)?;
        let state = self.duplicate(copy)?;
        Ok(Checkpoint { copy, state })
    }
}
