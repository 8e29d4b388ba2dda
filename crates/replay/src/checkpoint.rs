//! Checkpoints of a replay (DESIGN.md, "Checkpoints and reverse execution"; seed 003's
//! RECAP): a forked copy of the replayed process, stopped between two events, with the
//! replayer's state at that event. Going back to it forks the copy again and replays on from
//! there, instead of from the start of the recording.
//!
//! Invariants: a checkpoint is taken only between two events (so positions, which count
//! from an event, mean the same from it as from the start), with no asynchronous position
//! being approached. The fork copies the main thread only: the others are saved as their
//! registers (and, for a thread parked in a syscall, that syscall) and recreated by injected
//! clones when the checkpoint is restored; a thread parked at a syscall's seccomp stop is
//! sent back to it (`repark`). Kernel state per thread beyond registers, the clear-tid
//! address and the signal mask inherited from the main thread (a robust futex list, an
//! alternate signal stack) is not recreated.
//!
//! The copy is a tracee of ours that never runs: it is killed (and reaped) when the
//! checkpoint is dropped, and with hindsight (PTRACE_O_EXITKILL).

use hindsight_control::{Inferior, StepOverMode};
use hindsight_ptrace::inject::{clone_thread, fork_stopped, repark};
use hindsight_ptrace::{ProcessMemory, Regs, Tid};

use crate::replayer::Replayer;
use crate::ReplayError;

/// A thread other than the main one, as the checkpoint saw it.
struct SavedThread {
    recorded: i32,
    /// The debugger's number for it (kept: gdb never renumbers threads).
    num: u32,
    regs: Regs,
    /// Parked at the seccomp stop of a syscall (its registers are that stop's).
    parked: bool,
    clear_tid: u64,
}

/// A stopped copy of the replayed process and the replay's state at one event.
pub struct Checkpoint {
    /// The copy's only thread: a copy of the main thread.
    copy: Tid,
    /// The replayer as it was.
    state: Replayer,
    main_recorded: i32,
    /// The main thread was parked in a syscall: its registers there.
    main_parked: Option<Regs>,
    /// The other threads, in the order the debugger numbers them.
    others: Vec<SavedThread>,
    /// The number the next new thread gets.
    next_num: u32,
    /// The tick count of the thread running towards the next event, and whether it has
    /// counted ticks since that event (a checkpoint inside a stretch without syscalls).
    ticks: Option<u64>,
    mid: bool,
    /// Ticks that thread counted since the event (0 at the event).
    offset: u64,
    /// What the memory files behind file mappings held: they are shared with the replay
    /// that goes on, and put back when the checkpoint is restored.
    memory: crate::memfiles::Snapshot,
}

impl Checkpoint {
    /// Recorded events replayed at the checkpoint.
    pub fn event(&self) -> u64 {
        self.state.events_replayed()
    }

    /// The tick count of the thread running towards the next event (None without ticks).
    pub fn ticks(&self) -> Option<u64> {
        self.ticks
    }

    /// Whether the checkpoint lies inside its stretch (that thread counted ticks since the
    /// event), not at the event.
    pub fn mid(&self) -> bool {
        self.mid
    }

    /// Its place in time, for ordering checkpoints: (events replayed, ticks the running
    /// thread counted since the event).
    pub fn order(&self) -> (u64, u64) {
        (self.event(), self.offset)
    }

    /// A new replay from this checkpoint: a fresh copy of the checkpoint's process, its other
    /// threads recreated (by injected clones, with their registers), stopped where the
    /// checkpoint is, and the replayer driving it. The checkpoint stays.
    pub fn restore(&self) -> Result<(Replayer, Inferior), ReplayError> {
        self.memory.restore()?;
        let mem = ProcessMemory::open(self.copy.0)?;
        let main = fork_stopped(self.copy, &mem)?;
        let gmem = ProcessMemory::open(main.0)?;
        let mut inf = Inferior::adopt(main.0)?;
        inf.set_step_over_mode(StepOverMode::NoSwitch);
        let mut threads = vec![(self.main_recorded, main)];
        if std::env::var_os("HINDSIGHT_TRACE_REPLAY").is_some() {
            eprintln!(
                "replay: restoring the checkpoint at event {} ({} other threads, parked: {:?}; main parked: {})",
                self.event(),
                self.others.len(),
                self.others.iter().map(|t| t.parked).collect::<Vec<_>>(),
                self.main_parked.is_some()
            );
        }
        for t in &self.others {
            let live = clone_thread(main, &gmem, &t.regs, t.clear_tid)?;
            inf.add_thread_numbered(live, t.num, self.next_num);
            if t.parked {
                repark(live, &gmem, &t.regs)?;
            }
            threads.push((t.recorded, live));
        }
        // Last: the clones above were injected through the main thread.
        if let Some(regs) = &self.main_parked {
            repark(main, &gmem, regs)?;
        }
        // Threads created later are numbered as they were after the checkpoint's.
        if self.others.is_empty() {
            inf.add_thread_numbered(main, 1, self.next_num);
        }
        let replayer = self.state.duplicate(&threads)?;
        replayer.publish_code(&mut inf);
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

/// A thread whose syscall result the kernel would restart at its next signal (it is stopped
/// at a syscall exit): its registers alone do not say that, so no checkpoint is taken then.
fn restarting(regs: &Regs) -> bool {
    regs.0.orig_rax != u64::MAX && (-516..=-512).contains(&(regs.0.rax as i64))
}

impl Replayer {
    /// Whether a checkpoint can be taken now (see the module's invariants).
    pub fn can_checkpoint(&self, inf: &Inferior) -> bool {
        inf.is_alive()
            && self.quiet_state()
            // A signal about to be delivered lives in our bookkeeping, not in the process.
            && !inf.has_pending_signal()
            && self.main_recorded().is_some()
            // A main thread that called pthread_exit is a zombie: nothing to copy through.
            && inf.threads().iter().any(|t| t.tid.0 == inf.pid())
    }

    /// Takes a checkpoint of the replay as it is (between two events; see
    /// [`Replayer::can_checkpoint`]).
    pub fn checkpoint(&mut self, inf: &mut Inferior) -> Result<Checkpoint, ReplayError> {
        let (_, ticks, mid) = self.time();
        let offset = self.ticks_since_event().unwrap_or(0);
        let refuse = |why: &str| {
            Err(ReplayError::Unsupported(format!(
                "no checkpoint here: {why}"
            )))
        };
        if !self.can_checkpoint(inf) {
            return refuse("the replay is inside an event");
        }
        let Some(main_recorded) = self.main_recorded() else {
            return refuse("no main thread");
        };
        let leader = Tid(inf.pid());
        let mut threads = inf.threads();
        threads.sort_by_key(|t| t.num);
        // A thread at a seccomp stop whose syscall still has to run (rt_sigreturn runs when
        // the thread resumes) cannot be copied: the fork injected through it would skip that
        // syscall. (Parked threads are the exception: they are sent back to their stop.)
        for t in &threads {
            if self.parked_regs(self.recorded_tid_of(t.tid)).is_some() {
                continue;
            }
            let at_seccomp = matches!(
                t.tid.syscall_op(),
                Ok(hindsight_ptrace::thread::SyscallOp::Seccomp)
            );
            if at_seccomp && t.tid.regs()?.0.orig_rax != u64::MAX {
                return refuse("a thread is about to run a syscall");
            }
        }
        let mut others = Vec::new();
        for t in threads.iter().filter(|t| t.tid != leader) {
            let recorded = self.recorded_tid_of(t.tid);
            let parked = self.parked_regs(recorded);
            let regs = match parked {
                Some(r) => r,
                None => t.tid.regs()?,
            };
            if restarting(&regs) {
                return refuse("a thread is in a syscall the kernel would restart");
            }
            others.push(SavedThread {
                recorded,
                num: t.num,
                regs,
                parked: parked.is_some(),
                clear_tid: self.clear_tid_of(recorded),
            });
        }
        let main_parked = self.parked_regs(main_recorded);
        if restarting(&leader.regs()?) {
            return refuse("the main thread is in a syscall the kernel would restart");
        }
        let memory = self.memfiles_snapshot()?;
        let copy = inf.fork_copy(leader)?;
        if let Some(regs) = &main_parked {
            // The fork ran through the parked main thread: it goes back to its syscall.
            repark(leader, &ProcessMemory::open(leader.0)?, regs)?;
        }
        let state = self.duplicate(&[(main_recorded, copy)])?;
        Ok(Checkpoint {
            copy,
            state,
            main_recorded,
            main_parked,
            others,
            next_num: inf.next_thread_number(),
            ticks,
            mid,
            offset,
            memory,
        })
    }
}
