//! The processes of a multi-process replay as gdb's inferiors (seed 001, Ariadne): `info
//! inferiors`, `inferior N`, and every process placed at the latest global state consistent
//! with the current stop.
//!
//! Design: each recorded process has its own event stream, and its replay is deterministic on
//! its own (`--process PID` replays one alone, its ancestors silently up to its creation). So
//! the session replaying a tree holds one replay per process — a whole [`Session`] each, with
//! its own breakpoints, checkpoints and time travel — started lazily, the first time the user
//! looks at that process. The process the user is in is the outer session itself; the others
//! wait in [`Inferiors`], and `inferior N` swaps them.
//!
//! Invariants:
//! - The *anchor* is the stop every other process is placed around: the process and the event
//!   it stood before when the last motion ended. A motion in any process makes that process's
//!   new place the anchor; switching inferiors and looking at them does not (the process
//!   switched to stands where the anchor's cut put it, and asking the cut around it again
//!   could move the others).
//! - Every other process is placed at the anchor's latest consistent cut, computed by
//!   `hindsight-causal` from the trace's links (vector clocks): nobody has received what was
//!   not sent yet. A process's replay is moved there (a `goto event`) only when the user
//!   switches to it; until then the cut alone says where it stands.
//! - A process not created yet at the cut (its parent has not run the fork) is shown at its
//!   creation, and said to be so.
//! - Every session of the tree shares the outer one's interrupter (^C stops whichever runs).

use std::path::PathBuf;

use anyhow::{anyhow, bail, Context as _};
use hindsight_causal::{Causality, Cut};
use hindsight_trace::TraceReader;

use crate::motion::Place;
use crate::session::Session;

/// One recorded process of the tree.
struct Slot {
    pid: i32,
    parent: Option<i32>,
    fork_event: Option<u64>,
    program: PathBuf,
    /// Its replay, once started, while another process is the current one (the current one's
    /// is the outer session).
    session: Option<Box<Session>>,
    /// The event its replay was moved to by the last placement.
    placed: Option<u64>,
}

/// The processes of a replayed tree (held by the outer [`Session`]).
pub(crate) struct Inferiors {
    slots: Vec<Slot>,
    /// Index (in `slots`) of the process the outer session replays.
    current: usize,
    /// (slot, event) of the stop the others are placed around.
    anchor: Option<(usize, u64)>,
    causality: Option<Causality>,
}

/// Where an inferior stands in the consistent state around the current stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InferiorPlace {
    /// Its parent has not created it yet.
    NotCreated,
    /// It has executed its events `0..event` (of `total`) and not `event`.
    Before {
        /// The event it stands before.
        event: u64,
        /// Its stream's events.
        total: u64,
    },
    /// It has run to its end.
    End {
        /// Its stream's events.
        total: u64,
    },
}

/// One inferior as `info inferiors` lists it.
#[derive(Debug, Clone)]
pub struct InferiorInfo {
    /// gdb's inferior number (1: the first process of the trace).
    pub num: u32,
    /// Recorded pid.
    pub pid: i32,
    /// The program it runs (the last one, after execs).
    pub program: PathBuf,
    /// It is the inferior commands act on.
    pub current: bool,
    /// Its process made the stop the others are placed around.
    pub stopped: bool,
    /// Where it stands.
    pub place: InferiorPlace,
}

impl Inferiors {
    /// The processes of the trace at `trace`, when it has several; the outer session replays
    /// `current` (a recorded pid).
    pub(crate) fn of_trace(trace: &std::path::Path, current: i32) -> anyhow::Result<Option<Self>> {
        let r = TraceReader::open(trace)?;
        let procs = r.processes();
        if procs.len() < 2 {
            return Ok(None);
        }
        let slots: Vec<Slot> = procs
            .iter()
            .map(|p| Slot {
                pid: p.pid,
                parent: p.parent,
                fork_event: p.fork_event,
                program: PathBuf::from(std::ffi::OsStr::new(
                    std::str::from_utf8(&p.program).unwrap_or("?"),
                )),
                session: None,
                placed: None,
            })
            .collect();
        let current = slots.iter().position(|s| s.pid == current).unwrap_or(0);
        Ok(Some(Inferiors {
            slots,
            current,
            anchor: None,
            causality: None,
        }))
    }
}

impl Session {
    /// Whether this session replays several processes (gdb's inferiors).
    pub fn has_inferiors(&self) -> bool {
        self.inferiors.is_some()
    }

    /// The current inferior's number when the replay has several (threads are then named
    /// `N.M`), None otherwise.
    pub fn inferior_number(&self) -> Option<u32> {
        self.inferiors.as_ref().map(|i| i.current as u32 + 1)
    }

    /// Happens-before of the recording (built once per session).
    pub(crate) fn causality(&mut self) -> anyhow::Result<Causality> {
        if let Some(c) = self.inferiors.as_ref().and_then(|i| i.causality.clone()) {
            return Ok(c);
        }
        let Some(opts) = self.replay_opts.as_ref() else {
            bail!("Messages between processes are known only in a replay.");
        };
        let r = TraceReader::open(&opts.trace)?;
        let links = r.links()?.ok_or_else(|| {
            anyhow!("This trace was recorded before hindsight followed messages between processes.")
        })?;
        let c = Causality::build(&links, r.processes()).context("reading the trace's messages")?;
        if let Some(i) = self.inferiors.as_mut() {
            i.causality = Some(c.clone());
        }
        Ok(c)
    }

    /// The stop the other processes are placed around, as (recorded pid, event): the current
    /// inferior's place, unless it still stands where the last placement put it (then the
    /// anchor stays).
    pub(crate) fn anchor(&mut self) -> anyhow::Result<(i32, u64)> {
        let here = self.position()?.event;
        let pid = self.user_pid();
        let Some(inf) = self.inferiors.as_mut() else {
            return Ok((pid, here));
        };
        let cur = inf.current;
        match inf.anchor {
            Some((slot, event)) if inf.slots[cur].placed == Some(here) => {
                Ok((inf.slots[slot].pid, event))
            }
            _ => {
                inf.anchor = Some((cur, here));
                inf.slots[cur].placed = Some(here);
                Ok((pid, here))
            }
        }
    }

    /// The latest consistent cut around the anchor.
    pub(crate) fn anchored_cut(&mut self) -> anyhow::Result<(Causality, Cut, i32)> {
        let causality = self.causality()?;
        let (pid, event) = self.anchor()?;
        let cut = causality
            .cut(pid, event)
            .ok_or_else(|| anyhow!("Process {pid} is not in the trace's links."))?;
        Ok((causality, cut, pid))
    }

    /// Every inferior, where it stands around the current stop (`info inferiors`).
    pub fn inferiors(&mut self) -> anyhow::Result<Vec<InferiorInfo>> {
        if self.inferiors.is_none() {
            bail!("This replay has one process.");
        }
        let (causality, cut, stopped) = self.anchored_cut()?;
        let Some(inf) = self.inferiors.as_ref() else {
            bail!("This replay has one process.");
        };
        Ok(inf
            .slots
            .iter()
            .enumerate()
            .map(|(i, s)| InferiorInfo {
                num: i as u32 + 1,
                pid: s.pid,
                program: s.program.clone(),
                current: i == inf.current,
                stopped: s.pid == stopped,
                place: place_of(&causality, &cut, s),
            })
            .collect())
    }

    /// `inferior N`: makes inferior `num` the one commands act on, its replay moved to where
    /// the consistent state around the current stop places it (started if it was not yet).
    /// Returns its description.
    pub fn switch_inferior(&mut self, num: u32) -> anyhow::Result<InferiorInfo> {
        let Some(n) = self.inferiors.as_ref().map(|i| i.slots.len()) else {
            bail!("Inferior ID {num} not known.");
        };
        let Some(target) = (num as usize).checked_sub(1).filter(|t| *t < n) else {
            bail!("Inferior ID {num} not known.");
        };
        let (causality, cut, _) = self.anchored_cut()?;
        let mut inf = self.inferiors.take().context("no inferiors")?;
        let place = place_of(&causality, &cut, &inf.slots[target]);
        let pid = inf.slots[target].pid;
        if target != inf.current {
            let next = match inf.slots[target].session.take() {
                Some(s) => *s,
                None => match self.start_inferior(pid) {
                    Ok(s) => s,
                    Err(e) => {
                        self.inferiors = Some(inf);
                        return Err(e);
                    }
                },
            };
            let mut next = next;
            self.share_settings(&mut next);
            let previous = std::mem::replace(self, next);
            inf.slots[inf.current].session = Some(Box::new(previous));
            inf.current = target;
        }
        self.inferiors = Some(inf);
        // Move it to its place (the anchor's own process is where the stop left it).
        let goal = match place {
            InferiorPlace::NotCreated => Some(0),
            InferiorPlace::Before { event, .. } => Some(event),
            InferiorPlace::End { total } => Some(total),
        };
        let stopped_here = self
            .inferiors
            .as_ref()
            .and_then(|i| i.anchor)
            .is_some_and(|(slot, _)| slot == target);
        if let (Some(goal), false) = (goal, stopped_here) {
            let already = self
                .inferiors
                .as_ref()
                .is_some_and(|i| i.slots[target].placed == Some(goal));
            if !already {
                if goal > 0 {
                    self.goto(&Place::Event(goal))?;
                } else if self.started {
                    self.goto(&Place::Start)?;
                }
                if let Some(i) = self.inferiors.as_mut() {
                    i.slots[target].placed = Some(goal);
                }
            }
        }
        let s = &self.inferiors.as_ref().context("no inferiors")?.slots[target];
        Ok(InferiorInfo {
            num,
            pid: s.pid,
            program: s.program.clone(),
            current: true,
            stopped: stopped_here,
            place,
        })
    }

    /// A replay of process `pid` alone, stopped before its first instruction.
    fn start_inferior(&self, pid: i32) -> anyhow::Result<Session> {
        let mut opts = self
            .replay_opts
            .clone()
            .context("inferiors exist only in a replay")?;
        opts.process = Some(pid);
        Session::start_replay(opts)
    }

    /// What the user set for the session, carried to the inferior switched to.
    fn share_settings(&self, next: &mut Session) {
        next.interrupt = self.interrupt.clone();
        next.live_pause = self.live_pause;
        next.print = self.print.clone();
        next.signal_stops = self.signal_stops.clone();
        next.signal_print = self.signal_print.clone();
        next.signal_pass = self.signal_pass.clone();
        next.set_step_over_mode(self.step_over);
    }
}

/// Where `slot`'s process stands in `cut`.
fn place_of(c: &Causality, cut: &Cut, slot: &Slot) -> InferiorPlace {
    let total = c.events(slot.pid);
    let created = match (slot.parent, slot.fork_event) {
        (Some(parent), Some(at)) if c.pids().contains(&parent) => {
            cut.contains(hindsight_causal::EventId {
                pid: parent,
                event: at,
            })
        }
        _ => true,
    };
    match cut.before(slot.pid) {
        _ if !created => InferiorPlace::NotCreated,
        Some(e) if e < total => InferiorPlace::Before { event: e, total },
        _ => InferiorPlace::End { total },
    }
}
