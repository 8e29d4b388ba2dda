//! Every way a user moves the program, forward and backward, as calls that return the
//! [`Stop`] they end with: continue, line and instruction steps, finish, run to a location;
//! reverse-continue, reverse steps and reverse-finish; goto a position, an event, a bookmark
//! or a checkpoint.
//!
//! Invariants: an interrupt request made before a motion ends (^C, a front end's pause; see
//! [`crate::session::Interrupter`]) ends it with a stop whose reason is
//! [`StopReason::Interrupted`], wherever the replay stood (at an event, or between two
//! single-steps), with the thread that was about to run selected. Reverse motions and
//! positions need a replay; on a live session they fail with [`NEEDS_RECORDING`].

use anyhow::bail;
use hindsight_control::{Resume, StopEvent};
use hindsight_ptrace::Tid;
use hindsight_timeline::Position;

use crate::hook::{self, Reason};
use crate::observer::Observer;
use crate::session::Session;
use crate::stepping;
use crate::stop::{arrive, Stop, StopReason};
use crate::travel;

pub use crate::travel::NEEDS_RECORDING;

/// Which line-stepping motion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineStep {
    /// `step`: into functions that have line information.
    Step,
    /// `next`: over calls.
    Next,
    /// `until`: like `next`, but never stops at a line before the starting one (loops).
    Until,
}

/// What a point in time is named by when going there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// The start of the recording.
    Start,
    /// The moment event N has been replayed.
    Event(u64),
    /// One instruction instance, as `when` names it.
    Position(Position),
    /// A bookmark, by name.
    Bookmark(String),
}

impl Session {
    /// Runs `f` as a motion: a fresh interrupt state, and an interrupt turned into a stop
    /// where the replay stands.
    fn motion(
        &mut self,
        f: impl FnOnce(&mut Session) -> anyhow::Result<Stop>,
    ) -> anyhow::Result<Stop> {
        // (A motion inside a motion — a periodic command — keeps the outer one's state.)
        let outer = std::mem::replace(&mut self.in_motion, true);
        let r = f(self);
        self.in_motion = outer;
        if !outer {
            // A request that came too late for this motion is not one for the next.
            self.interrupt.forget();
        }
        match r {
            Err(e) if e.is::<crate::Interrupted>() => {
                let tid = e
                    .downcast_ref::<crate::Interrupted>()
                    .and_then(|i| i.tid)
                    .or(self.thread)
                    .or(self.pid().map(Tid));
                travel::arrived(self, tid, None);
                let stop = match tid {
                    Some(tid) => StopEvent::Stepped { tid },
                    None => StopEvent::Interrupted,
                };
                arrive(self, &stop, Some(&Reason::Interrupted), true)
            }
            r => r,
        }
    }

    /// Whether time travel can start from here: a replay that has not executed another
    /// program (its symbols and memory would not be those of the replays it starts).
    pub fn can_travel(&mut self) -> anyhow::Result<()> {
        // A motion starts afresh (a failed one may have left a selection behind).
        self.travel.forget_selection();
        if self.replay.is_none() {
            bail!(NEEDS_RECORDING);
        }
        self.travel.check_no_exec()
    }

    /// Refuses what needs the position of now when the replay stands at a buffered call
    /// where it was placed (see [`crate::inferiors`]): no position names that instant yet.
    pub(crate) fn check_not_held(&self) -> anyhow::Result<()> {
        if let Some((event, call)) = self.held_call {
            bail!(
                "This process was placed at call {} of the buffered calls of its event {event}, an instant that has no position yet: go forward (`continue`, `next`) before going back in time here.",
                call + 1
            );
        }
        Ok(())
    }

    /// The checks of a reverse motion: [`Session::can_travel`], and the program is there. After
    /// the program exited in a replay, the motion starts from its exit syscall instruction (the
    /// last one it ran): returns the exiting thread then.
    fn check_reverse(&mut self) -> anyhow::Result<Option<Tid>> {
        self.can_travel()?;
        self.check_not_held()?;
        let exited = self.inferior.as_ref().is_some_and(|i| !i.is_alive());
        if exited && self.replay.is_some() {
            if let Some(tid) = crate::remote::to_the_exit(self)? {
                return Ok(Some(tid));
            }
        }
        self.live()?;
        Ok(None)
    }

    /// `continue`: runs the program until something stops it. In a replay of several
    /// processes where others have breakpoints too: the next hit in any of them (see
    /// [`crate::inferiors`]).
    pub fn resume(&mut self, obs: &mut dyn Observer) -> anyhow::Result<Stop> {
        if self.others_have_breakpoints() {
            return self.continue_across(obs, false);
        }
        self.resume_alone(obs)
    }

    /// `continue` in this process alone.
    pub(crate) fn resume_alone(&mut self, obs: &mut dyn Observer) -> anyhow::Result<Stop> {
        self.motion(|s| {
            s.live()?;
            let (stop, reason) = hook::resume_raw(s, obs, Resume::Continue, None)?;
            let stop = arrive(s, &stop, reason.as_ref(), true)?;
            s.on_to_message_call(&stop)?;
            Ok(stop)
        })
    }

    /// One instruction of thread `tid` (the others stay stopped), reported as a stop.
    pub fn step_thread(&mut self, obs: &mut dyn Observer, tid: Tid) -> anyhow::Result<Stop> {
        self.motion(|s| {
            let (stop, reason) = hook::resume_raw(s, obs, Resume::Step(tid), None)?;
            arrive(s, &stop, reason.as_ref(), true)
        })
    }

    /// `step`, `next`, `until`: runs the selected thread to the start of another line.
    pub fn step_line(&mut self, obs: &mut dyn Observer, kind: LineStep) -> anyhow::Result<Stop> {
        self.motion(|s| {
            s.live()?;
            stepping::line_step(s, obs, kind)
        })
    }

    /// `stepi` (`over_calls`: `nexti`).
    pub fn step_instruction(
        &mut self,
        obs: &mut dyn Observer,
        over_calls: bool,
    ) -> anyhow::Result<Stop> {
        self.motion(|s| {
            s.live()?;
            stepping::instruction_step(s, obs, over_calls)
        })
    }

    /// `finish`: runs until the selected frame returns; the stop carries what it returned.
    pub fn finish(&mut self, obs: &mut dyn Observer) -> anyhow::Result<Stop> {
        self.motion(|s| stepping::finish(s, obs))
    }

    /// `until LOCATION` / `advance LOCATION`: runs until one of `addresses` is reached or the
    /// selected frame returns.
    pub fn run_to_location(
        &mut self,
        obs: &mut dyn Observer,
        addresses: &[u64],
    ) -> anyhow::Result<Stop> {
        self.motion(|s| stepping::run_to_location(s, obs, addresses))
    }

    /// Starts the program again from its beginning, stopped before its first instruction
    /// (killing it if it runs); a replay starts the recording again.
    pub fn restart(&mut self) -> anyhow::Result<()> {
        self.kill();
        self.spawn()
    }

    /// Kills the program; returns the pid it had (gdb's `kill`).
    pub fn kill_program(&mut self) -> anyhow::Result<i32> {
        let pid = self.live()?.pid();
        self.kill();
        Ok(pid)
    }

    /// `reverse-continue`: back to the last breakpoint hit, watched change or stopping
    /// signal before now (from the end too, after the program exited). In a replay of
    /// several processes where others have breakpoints too: the previous hit in any of them.
    pub fn reverse_continue(&mut self, obs: &mut dyn Observer) -> anyhow::Result<Stop> {
        if self.others_have_breakpoints() {
            return self.continue_across(obs, true);
        }
        self.reverse_continue_alone()
    }

    /// `reverse-continue` in this process alone.
    pub(crate) fn reverse_continue_alone(&mut self) -> anyhow::Result<Stop> {
        self.motion(|s| {
            // From the end of a replay too (the program exited): back to its last stop.
            s.can_travel()?;
            travel::reverse_continue(s)
        })
    }

    /// `reverse-step` / `reverse-next` (`Until` goes back as `reverse-next`).
    pub fn reverse_step_line(&mut self, kind: LineStep) -> anyhow::Result<Stop> {
        self.motion(|s| {
            s.check_reverse()?;
            let kind = match kind {
                LineStep::Step => hindsight_timeline::stepper::Motion::Step,
                LineStep::Next | LineStep::Until => hindsight_timeline::stepper::Motion::Next,
            };
            travel::reverse_line_step(s, kind)
        })
    }

    /// `reverse-stepi` (`over_calls`: `reverse-nexti`).
    pub fn reverse_step_instruction(&mut self, over_calls: bool) -> anyhow::Result<Stop> {
        self.motion(|s| {
            if let Some(tid) = s.check_reverse()? {
                // From the exit: the exit syscall is the instruction before.
                return arrive(s, &StopEvent::Stepped { tid }, None, true);
            }
            travel::reverse_stepi(s, over_calls)
        })
    }

    /// `reverse-finish`: back to the call of the selected frame's function.
    pub fn reverse_finish(&mut self, obs: &mut dyn Observer) -> anyhow::Result<Stop> {
        self.motion(|s| {
            s.check_reverse()?;
            travel::reverse_finish(s, obs)
        })
    }

    /// Travels to `place`, from anywhere in the replay (its end included). A place the
    /// recording does not have is refused and the replay stays where it was.
    pub fn goto(&mut self, place: &Place) -> anyhow::Result<Stop> {
        self.motion(|s| {
            s.can_travel()?;
            match place {
                Place::Start => travel::goto(s, "start"),
                Place::Event(e) => travel::goto(s, &format!("event {e}")),
                Place::Position(p) => travel::goto(s, &p.to_string()),
                Place::Bookmark(b) => {
                    if !s.travel.bookmarks.contains_key(b) {
                        bail!("No bookmark named \"{b}\".");
                    }
                    travel::goto(s, b)
                }
            }
        })
    }

    /// Travels to what `goto` accepts as text: `start`, `event N`, a bookmark's name, a
    /// position as `when` prints it.
    pub fn goto_text(&mut self, text: &str) -> anyhow::Result<Stop> {
        self.motion(|s| {
            s.can_travel()?;
            travel::goto(s, text)
        })
    }

    /// Back to checkpoint `n` (0: the start of the recording).
    pub fn restore_checkpoint(&mut self, n: u32) -> anyhow::Result<Stop> {
        self.motion(|s| {
            s.check_reverse()?;
            travel::restart_checkpoint(s, n)
        })
    }

    /// The position of the current stop (`when`).
    pub fn position(&mut self) -> anyhow::Result<Position> {
        self.check_reverse()?;
        travel::here(self)
    }

    /// Names the current position (`bookmark [NAME]`): returns the name (a number when none
    /// is given) and the position.
    pub fn bookmark(&mut self, name: &str) -> anyhow::Result<(String, Position)> {
        self.check_reverse()?;
        travel::bookmark(self, name)
    }

    /// The bookmarks, in the order they were made.
    pub fn bookmarks(&self) -> Vec<(String, Position)> {
        travel::bookmarks(self)
    }

    /// Forgets a bookmark.
    pub fn delete_bookmark(&mut self, name: &str) -> anyhow::Result<()> {
        travel::delete_bookmark(self, name)
    }

    /// Keeps the current position as a numbered checkpoint (`checkpoint`).
    pub fn checkpoint(&mut self) -> anyhow::Result<(u32, Position)> {
        self.check_reverse()?;
        travel::checkpoint(self)
    }

    /// The user's checkpoints by number.
    pub fn checkpoints(&self) -> anyhow::Result<Vec<(u32, Position)>> {
        if self.replay.is_none() {
            bail!(NEEDS_RECORDING);
        }
        Ok(self
            .travel
            .checkpoints
            .iter()
            .map(|(n, p)| (*n, *p))
            .collect())
    }

    /// The events at which automatic checkpoints are kept now, oldest first.
    pub fn automatic_checkpoints(&self) -> Vec<u64> {
        self.travel.auto.iter().map(|(_, c)| c.event()).collect()
    }

    /// Forgets checkpoint `n`.
    pub fn delete_checkpoint(&mut self, n: u32) -> anyhow::Result<()> {
        travel::delete_checkpoint(self, n)
    }

    /// `break event N`: a quantum debugger event that stops the replay when it reaches event
    /// N; returns its id.
    pub fn break_at_event(&mut self, n: u64) -> anyhow::Result<u32> {
        travel::break_at_event(self, n)
    }

    /// `break tick N [thread M]`: a quantum event that stops the replay when thread M (gdb's
    /// number; default the selected one) has counted N ticks; returns its id and the thread's
    /// number.
    pub fn break_at_tick(&mut self, ticks: u64, thread: Option<u32>) -> anyhow::Result<(u32, u32)> {
        travel::break_at_tick(self, ticks, thread)
    }

    /// `every K COMMAND`: a periodic debugger event that hands COMMAND to the front end
    /// ([`Observer::run_commands`]) every K events of the replay; returns its id.
    pub fn every(&mut self, k: u64, command: &str) -> anyhow::Result<u32> {
        travel::every(self, k, command)
    }

    /// `every K ticks [thread M] COMMAND`: a periodic debugger event in the instruction
    /// counter's time — COMMAND goes to the front end ([`Observer::run_commands`]) whenever
    /// thread M (gdb's number; default the selected one) has counted a multiple of K ticks, at
    /// the same instruction instances in every replay. Returns its id and the thread's number.
    pub fn every_ticks(
        &mut self,
        k: u64,
        thread: Option<u32>,
        command: &str,
    ) -> anyhow::Result<(u32, u32)> {
        travel::every_ticks(self, k, thread, command)
    }

    /// `goto tick N [thread M]`: to the instant thread M (gdb's number; default the selected
    /// one) has counted N ticks, from anywhere (silently: nothing stops or acts on the way).
    pub fn goto_tick(&mut self, ticks: u64, thread: Option<u32>) -> anyhow::Result<Stop> {
        self.motion(|s| {
            s.can_travel()?;
            travel::goto_tick(s, ticks, thread)
        })
    }

    /// `era NAME from BOUND [to BOUND]`: names a span of the replay (see
    /// [`travel::eras`]); bounds named by ticks are found by running there and back.
    pub fn define_era(&mut self, args: &str) -> anyhow::Result<travel::eras::NamedEra> {
        self.can_travel()?;
        let r = travel::define_era(self, args);
        self.interrupt.forget();
        r
    }

    /// The eras, by name.
    pub fn eras(&self) -> Vec<travel::eras::NamedEra> {
        self.travel.eras.values().cloned().collect()
    }

    /// Forgets era `name` (what it bounds keeps its bounds).
    pub fn delete_era(&mut self, name: &str) -> anyhow::Result<()> {
        travel::delete_era(self, name)
    }

    /// `goto era NAME [end]`: to the start (or the end) of an era.
    pub fn goto_era(&mut self, name: &str, end: bool) -> anyhow::Result<Stop> {
        self.motion(|s| {
            s.can_travel()?;
            travel::goto_era(s, name, end)
        })
    }

    /// The bounds of era `name`, to bound a breakpoint by ([`Session::add_breakpoint`]).
    pub fn era_bounds(&self, name: &str) -> anyhow::Result<crate::breakpoints::Era> {
        travel::era_bounds(self, name)
    }

    /// Every debugger event (breakpoints' eras and dprintfs, periodic and quantum events,
    /// bookmarks) and its life-cycle state.
    pub fn debugger_events(&self) -> Vec<hindsight_timeline::engine::DebuggerEvent> {
        self.travel.engine.iter().cloned().collect()
    }

    /// The number of recorded events (None in a live session or an incomplete trace).
    pub fn recorded_events(&self) -> Option<u64> {
        self.replay
            .as_ref()
            .and_then(|r| r.reader().summary().map(|x| x.events))
    }

    /// Events replayed so far (None in a live session).
    pub fn events_replayed(&self) -> Option<u64> {
        self.replay.as_ref().map(|r| r.events_replayed())
    }
}

impl Stop {
    /// A stop that ended a motion the user interrupted.
    pub fn was_interrupted(&self) -> bool {
        self.reason == StopReason::Interrupted
    }
}
