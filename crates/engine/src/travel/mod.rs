//! Time travel in a replay (DESIGN.md, "Checkpoints and reverse execution"): the position of
//! a stop (`when`), going to a position (`goto`, bookmarks, checkpoints) and the reverse
//! commands (`reverse-continue`, `reverse-step`, `reverse-next`, `reverse-stepi`,
//! `reverse-nexti`, `reverse-finish`).
//!
//! Method: a replay is deterministic, so any earlier instant is reached again by replaying
//! from a checkpoint before it. A reverse command is a *scan* — a silent replay from the
//! checkpoint to now with the relevant traps armed, writing down as positions where they
//! fired — followed by a *seek*: a replay again, to the position it chose (the last firing for
//! `reverse-continue`, a statement start for `reverse-step`…).
//!
//! "Now" is recognised on the way by its event, pc, registers and stack top: the first
//! instance that matches all of them. Instances that match are indistinguishable to the
//! program's registers and stack, and the replay checks every later event against the
//! recording, so a wrong match cannot pass unnoticed.
//!
//! Checkpoints: the start of the recording (a new replay), and automatic ones — forked copies
//! of the replay taken at events every [`CHECKPOINT_INTERVAL`] of replay, thinned to O(log n)
//! ([`hindsight_timeline::thinning`]). A scan starts from the latest checkpoint before its
//! goal and, when that window holds nothing, from the one before (`scan::scan_back`).
//! Positions are counted from events, so they mean the same whatever checkpoint a seek
//! starts from.
//!
//! Modules: `scan` (the scan and seek machinery), `reverse` (the reverse commands), `places`
//! (`goto`, `when`, bookmarks, checkpoints by hand), `eras` (named spans, `goto tick`),
//! `actions` (what debugger events do).

use std::collections::{BTreeMap, HashMap};

use anyhow::{bail, Context as _};
use hindsight_breakpoints::table::BreakpointTable;
use hindsight_control::{Inferior, Notification, Resume, StopEvent, StopHook};
use hindsight_ptrace::Tid;
use hindsight_replay::ReplayStop;
use hindsight_symbols::Program;
use hindsight_timeline::stepper::Motion;
use hindsight_timeline::{Action, Engine, Position, Spec};

use crate::hook::{Hook, Reason};
use crate::observer::{Notice, Observer};
use crate::session::Session;
use crate::stop::{arrive, Stop};

mod actions;
pub mod eras;
mod places;
mod reverse;
mod scan;
mod walk;

pub(crate) use actions::*;
pub(crate) use eras::{define_era, delete_era, era_bounds, goto_era, goto_tick};
pub(crate) use places::*;
pub(crate) use reverse::*;
use scan::*;
pub(crate) use scan::{arrived, here};

/// What reverse commands say on a live session.
pub const NEEDS_RECORDING: &str =
    "Target native does not support this command: reverse execution needs a recording (use 'hindsight record', then 'hindsight replay').";

/// Index of rip in the register words ([`hindsight_ptrace::Regs::to_words`]).
const RIP: usize = 16;
/// Index of rsp.
const RSP: usize = 19;
/// Index of fs_base: it tells threads apart (each has its own TLS block).
const FS_BASE: usize = 21;

/// Single-steps allowed between an anchor and now when going back one instruction.
const MAX_STEPS: u64 = 5_000_000;

/// Time-travel state of a session.
#[derive(Default)]
pub(crate) struct Travel {
    /// The debugger events (eras, dprintf, periodic and quantum events, bookmarks).
    pub(crate) engine: Engine,
    /// The position of the current stop, once known (forgotten at every motion).
    pub(crate) here: Option<Position>,
    /// Bookmarks by name, with the order they were made in.
    pub(crate) bookmarks: BTreeMap<String, (u32, Position)>,
    /// Checkpoints by number.
    pub(crate) checkpoints: BTreeMap<u32, Position>,
    next_checkpoint: u32,
    next_bookmark: u32,
    /// The recorded tid of the thread the user had selected before the replay was started
    /// again (live tids change with every replay).
    selected: Option<i32>,
    /// Checkpoints taken automatically, by event (with an id that stays while others go).
    pub(crate) auto: Vec<(u64, hindsight_replay::Checkpoint)>,
    next_auto: u64,
    /// When the last automatic checkpoint was taken (replay time between two is bounded).
    last_auto: Option<std::time::Instant>,
    /// What an automatic checkpoint costs the tracer (the fork, and the copies it drops),
    /// smoothed over the last ones: their spacing grows with it
    /// ([`Travel::checkpoint_spacing`]).
    checkpoint_cost: std::time::Duration,
    /// (time, signals that reached the program since then), kept by the forward hook: the
    /// position of a signal stop.
    pub(crate) signal_count: (u64, u64),
    /// The replay went through an exec (at this event): time travel cannot go back across it.
    pub(crate) exec_at: Option<u64>,
    /// Stops inside long stretches without events, where checkpoints can be taken.
    pub(crate) alarm: TickAlarm,
    /// A silent run's goal (`goto tick`): (recorded thread, ticks).
    pub(crate) run_to: Option<(i32, u64)>,
    /// The user's eras, by name.
    pub(crate) eras: BTreeMap<String, eras::NamedEra>,
    /// Checkpoints a short replay behind the places reverse steps went to (at most
    /// [`NEAR_KEEP`], the latest taken kept), so that the next steps back replay a short
    /// distance, not a whole checkpoint interval (see [`Travel::near_distance`]).
    pub(crate) near: Vec<(u64, hindsight_replay::Checkpoint)>,
    /// A checkpoint at the anchor of the last reverse step (the instant its tick count
    /// began): the steps back within that tick interval restore it and single-step.
    pub(crate) anchor: Option<(u64, hindsight_replay::Checkpoint)>,
    /// Where the last step back by ticks left the session, so that the next one, from there,
    /// knows its anchor and distance without counting them again.
    pub(crate) stepped_back: Option<reverse::StepBack>,
    /// Seeks take checkpoints near their goal ([`Travel::near`]): set while a reverse step
    /// seeks.
    pub(crate) keep_near: bool,
}

/// Checkpoints kept behind reverse steps ([`Travel::near`]): the current one and the one
/// before (a step back past the current one lands between them).
const NEAR_KEEP: usize = 2;

/// A tick stop set ahead of the running thread now and then, so that a replay running through
/// a long stretch without events stops where a checkpoint can be taken (checkpoints otherwise
/// come at events only: going back inside such a stretch would replay it from its start).
/// Its spacing follows the replay's pace: about a quarter of the checkpoint interval.
#[derive(Debug, Clone)]
pub(crate) struct TickAlarm {
    every: u64,
    set_at: Option<std::time::Instant>,
}

impl Default for TickAlarm {
    fn default() -> TickAlarm {
        TickAlarm {
            every: 1 << 20,
            set_at: None,
        }
    }
}

impl TickAlarm {
    /// The tick stop to set before the replay runs on: (thread, ticks), whatever the event
    /// (events without code between them, such as a buffer of the agent's calls, may be
    /// consumed before the thread runs); None without ticks.
    pub(crate) fn next(&mut self, replay: &mut hindsight_replay::Replayer) -> Option<(i32, u64)> {
        let (_, ticks, _) = replay.time();
        let t = ticks?;
        let runner = replay.runner()?;
        self.set_at = Some(std::time::Instant::now());
        Some((runner, t.saturating_add(self.every)))
    }

    /// The alarm went off: the next one comes after as many ticks as a quarter of the
    /// checkpoint spacing (`spacing`) takes at the pace just seen.
    pub(crate) fn rang(&mut self, spacing: std::time::Duration) {
        let Some(at) = self.set_at.take() else { return };
        let took = at.elapsed().as_secs_f64().max(1e-6);
        let want = (spacing.as_secs_f64() / 4.0).max(0.001);
        let every = (self.every as f64 * want / took).clamp(4096.0, (1u64 << 40) as f64);
        self.every = every as u64;
    }
}

/// Replay time between two automatic checkpoints: going back costs about this much replay.
const CHECKPOINT_INTERVAL: std::time::Duration = std::time::Duration::from_millis(50);

/// Automatic checkpoints are spaced by at least this many times what the last one cost the
/// tracer, so that they take a bounded share of the replay (a few percent). The tracer's time
/// (forking the copy, killing the ones thinned away) is only part of a checkpoint's cost: the
/// program then takes a copy-on-write fault at the first write to every page it shares with a
/// copy, which costs about as much again for a program that writes its whole memory between
/// two checkpoints (`xz -T2`, ~130 MB: a fork took 5–15 ms, and checkpoints every 50 ms made
/// its replay spend most of its time copying page tables and pages).
const CHECKPOINT_COST_RATIO: u32 = 40;

/// [`CHECKPOINT_INTERVAL`] (then spaced by cost, see [`CHECKPOINT_COST_RATIO`]), or
/// `$HINDSIGHT_CHECKPOINT_MS` taken as is (tests use 0: a checkpoint at every event, to
/// exercise restoring them everywhere). The second member says whether it was given.
fn checkpoint_interval() -> (std::time::Duration, bool) {
    static INTERVAL: std::sync::OnceLock<(std::time::Duration, bool)> = std::sync::OnceLock::new();
    *INTERVAL.get_or_init(|| {
        match std::env::var("HINDSIGHT_CHECKPOINT_MS")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
        {
            Some(ms) => (std::time::Duration::from_millis(ms), true),
            None => (CHECKPOINT_INTERVAL, false),
        }
    })
}

/// Automatic checkpoints younger than this many intervals are all kept; older ones are
/// thinned so that their number grows with the logarithm of the recording's length.
const KEEP_RECENT: usize = 8;

impl Travel {
    /// Refuses to travel once the program executed another one (its symbols and memory are
    /// those of the new program; replays start with the old one).
    pub(crate) fn check_no_exec(&self) -> anyhow::Result<()> {
        match self.exec_at {
            Some(e) => bail!(
                "going back across an exec is not supported yet (the program executed a new one at event {e}); 'run' starts the replay again"
            ),
            None => Ok(()),
        }
    }

    /// Forgets the thread remembered across replays (at the start of a command).
    pub(crate) fn forget_selection(&mut self) {
        self.selected = None;
    }

    /// Replay time between two automatic checkpoints: the interval, or more for a process
    /// whose checkpoints are expensive (a large memory to fork and copy on write).
    pub(crate) fn checkpoint_spacing(&self) -> std::time::Duration {
        match checkpoint_interval() {
            (interval, true) => interval,
            (interval, false) => interval.max(self.checkpoint_cost * CHECKPOINT_COST_RATIO),
        }
    }

    /// When the next automatic checkpoint is due.
    pub(crate) fn checkpoint_deadline(&self) -> std::time::Instant {
        let now = std::time::Instant::now();
        let interval = self.checkpoint_spacing();
        match self.last_auto {
            Some(t) => (t + interval).max(now),
            None => now + interval,
        }
    }

    /// Takes an automatic checkpoint of the replay where it is (between two events), if the
    /// process allows one and none is there yet; thins the old ones.
    pub(crate) fn take_checkpoint(
        &mut self,
        replay: &mut hindsight_replay::Replayer,
        inf: &mut Inferior,
    ) {
        let started = std::time::Instant::now();
        self.last_auto = Some(started);
        let event = replay.events_replayed();
        let order = (event, replay.ticks_since_event().unwrap_or(0));
        if !replay.can_checkpoint(inf) || self.all().iter().any(|(_, c)| c.order() == order) {
            return;
        }
        let cp = match replay.checkpoint(inf) {
            Ok(cp) => cp,
            Err(e) => {
                if std::env::var_os("HINDSIGHT_TRACE_REPLAY").is_some() {
                    eprintln!("replay: no checkpoint at event {event}: {e}");
                }
                return;
            }
        };
        self.next_auto += 1;
        let at = self.auto.partition_point(|(_, c)| c.order() < order);
        self.auto.insert(at, (self.next_auto, cp));
        self.thin();
        // The spacing counts from the end of this one: its cost is not replay time.
        let now = std::time::Instant::now();
        // Smoothed: one fork slowed down by the machine's load does not space the next ones
        // far apart on its own.
        let took = now - started;
        self.checkpoint_cost = if self.checkpoint_cost.is_zero() {
            took
        } else {
            (self.checkpoint_cost + took) / 2
        };
        self.last_auto = Some(now);
        if std::env::var_os("HINDSIGHT_TRACE_TRAVEL").is_some() {
            eprintln!(
                "travel: checkpoint at event {event} (+{} ticks) took {:?}, {} kept, next in {:?}",
                order.1,
                self.checkpoint_cost,
                self.auto.len(),
                self.checkpoint_spacing()
            );
        }
    }

    /// Every checkpoint kept (automatic ones, those near reverse steps), in time order.
    fn all(&self) -> Vec<&(u64, hindsight_replay::Checkpoint)> {
        let mut all: Vec<_> = self
            .auto
            .iter()
            .chain(self.near.iter())
            .chain(self.anchor.iter())
            .collect();
        all.sort_by_key(|(_, c)| c.order());
        all
    }

    /// The checkpoint with id `id`, if it is still kept.
    pub(crate) fn checkpoint_by_id(&self, id: u64) -> Option<&hindsight_replay::Checkpoint> {
        self.all()
            .into_iter()
            .find(|(k, _)| *k == id)
            .map(|(_, c)| c)
    }

    /// Forgets the checkpoint with id `id` (it could not be restored).
    pub(crate) fn drop_checkpoint(&mut self, id: u64) {
        self.auto.retain(|(k, _)| *k != id);
        self.near.retain(|(k, _)| *k != id);
        if self.anchor.as_ref().is_some_and(|(k, _)| *k == id) {
            self.anchor = None;
        }
    }

    /// How many ticks behind a reverse step's goal a checkpoint is taken on the way there
    /// ([`Travel::near`]): what under half a millisecond of replay counts at the pace the
    /// tick alarm measured (its spacing is a quarter of the checkpoint interval). A step back
    /// to an earlier tick count replays at most that far; one past that checkpoint replays
    /// from an automatic one (a checkpoint interval) and takes the next.
    pub(crate) fn near_distance(&self) -> u64 {
        (self.alarm.every / 32).max(1024)
    }

    /// A checkpoint of the replay where it is, taken on the way to a reverse step's goal
    /// (`anchor`: at the goal itself, the instant its tick count began); false if none could
    /// be taken there.
    pub(crate) fn take_near_checkpoint(
        &mut self,
        replay: &mut hindsight_replay::Replayer,
        inf: &mut Inferior,
        anchor: bool,
    ) -> bool {
        let order = (
            replay.events_replayed(),
            replay.ticks_since_event().unwrap_or(0),
        );
        if self.all().iter().any(|(_, c)| c.order() == order) {
            return true;
        }
        if !replay.can_checkpoint(inf) {
            return false;
        }
        let Ok(cp) = replay.checkpoint(inf) else {
            return false;
        };
        self.next_auto += 1;
        if anchor {
            self.anchor = Some((self.next_auto, cp));
        } else {
            self.near.push((self.next_auto, cp));
            if self.near.len() > NEAR_KEEP {
                self.near.remove(0);
            }
        }
        true
    }

    /// Drops old checkpoints (see [`hindsight_timeline::thinning`]): their age counts events,
    /// and within an event the ticks counted since it (a long stretch without syscalls).
    fn thin(&mut self) {
        let events: Vec<u64> = self
            .auto
            .iter()
            .map(|(_, c)| {
                let (e, off) = c.order();
                e.saturating_mul(1 << 32) | off.min(u32::MAX.into())
            })
            .collect();
        let keep = hindsight_timeline::thinning::keep(&events, KEEP_RECENT);
        let mut i = 0;
        self.auto.retain(|_| {
            i += 1;
            keep[i - 1]
        });
    }

    /// The latest automatic checkpoint from which `goal` can be reached (its id): one at an
    /// earlier event, or at the goal's event itself — at the event, or (`mid_ok`) inside its
    /// stretch if the goal is named by ticks that come later (a tick goal: no sooner). A
    /// checkpoint inside a stretch knows nothing of what happened in the stretch before it
    /// (arrivals in its tick interval, watchpoint traps and signals counted from the event):
    /// scans that write such counts down start from events only.
    fn latest_for(&self, goal: &scan::Goal, mid_ok: bool) -> Option<u64> {
        let (event, ticks) = goal.time();
        let tick_goal = matches!(goal, scan::Goal::Tick { .. });
        self.all()
            .into_iter()
            .rev()
            .find(|(_, c)| {
                c.event() < event
                    || (c.event() == event
                        && (!c.mid()
                            || (mid_ok
                                && matches!((c.ticks(), ticks),
                                    (Some(a), Some(b)) if a < b || (tick_goal && a == b)))))
            })
            .map(|(id, _)| *id)
    }

    /// The latest automatic checkpoint strictly before `place` (a checkpoint's place); one
    /// inside a stretch only if `mid_ok` (see [`Travel::latest_for`]).
    fn latest_before(&self, place: &scan::Goal, mid_ok: bool) -> Option<u64> {
        let (event, ticks) = place.time();
        let mid_place = matches!(place, scan::Goal::Tick { .. });
        self.all()
            .into_iter()
            .rev()
            .find(|(_, c)| {
                if c.mid() {
                    mid_ok
                        && (c.event() < event
                            || (c.event() == event
                                && matches!((c.ticks(), ticks), (Some(a), Some(b)) if a < b)))
                } else {
                    c.event() < event || (c.event() == event && mid_place)
                }
            })
            .map(|(id, _)| *id)
    }

    /// Where automatic checkpoint `id` is, as a goal (the end of the window before it), if it
    /// is still kept.
    fn place_of(&self, id: u64) -> Option<scan::Goal> {
        self.all()
            .into_iter()
            .find(|(k, _)| *k == id)
            .map(|(_, c)| match (c.mid(), c.ticks()) {
                (true, Some(t)) => scan::Goal::Tick {
                    event: c.event(),
                    ticks: t,
                },
                _ => scan::Goal::Event(c.event()),
            })
    }
}

/// Where a scan starts: an automatic checkpoint (by id), or the start of the recording.
type Start = Option<u64>;
