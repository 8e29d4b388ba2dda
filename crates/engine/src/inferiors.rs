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
//!   creation, and said to be so; one at its end has no process (gdb's exited inferior).
//! - A process is placed at the latest instant of the cut: at the instruction that makes its
//!   next event. A replay that went past an exec cannot travel back: it starts again from the
//!   process's creation (and stands right after its previous event when an exec lies
//!   between).
//! - Places are `hindsight-causal`'s steps: a batch of calls that the in-process agent
//!   buffered and that moved data is one step per call, and a stop between two of them is
//!   known by the agent's count of answered calls. A process placed inside a batch is run
//!   to the call its place names (the replay holds the batch's later answers back from the
//!   agent, so that the thread makes that call traced, and stops there).
//! - Every session of the tree shares the outer one's interrupter (^C stops whichever runs).

use std::path::PathBuf;

use anyhow::{anyhow, bail, Context as _};
use hindsight_causal::{Causality, Cut, Point};
use hindsight_trace::TraceReader;

use crate::motion::Place;
use crate::observer::{Notice, Observer};
use crate::session::Session;
use crate::stop::{Stop, StopReason};

/// One recorded process of the tree.
struct Slot {
    pid: i32,
    parent: Option<i32>,
    fork_event: Option<u64>,
    program: PathBuf,
    /// Its replay, once started, while another process is the current one (the current one's
    /// is the outer session).
    session: Option<Box<Session>>,
    /// The step its replay was moved to by the last placement.
    placed: Option<u64>,
    /// Whether it existed and had ended at the last stop reported
    /// ([`Session::inferior_changes`]).
    known: Lifetime,
}

/// Where a process is in its life at a stop (what gdb announces changes of).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lifetime {
    NotCreated,
    Alive,
    Ended,
}

/// A process that appeared or ended in the replay since the last stop reported, as gdb
/// announces them: `[New inferior N (process P)]`, `[Inferior N (process P) exited …]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InferiorChange {
    /// Its parent created it.
    New {
        /// gdb's inferior number.
        num: u32,
        /// Recorded pid.
        pid: i32,
    },
    /// It exited.
    Exited {
        /// gdb's inferior number.
        num: u32,
        /// Recorded pid.
        pid: i32,
        /// Its exit code (None when its recording has no end: it was cut off).
        code: Option<i32>,
    },
    /// A signal killed it.
    Killed {
        /// gdb's inferior number.
        num: u32,
        /// Recorded pid.
        pid: i32,
        /// The signal.
        signal: i32,
    },
}

/// A breakpoint of every inferior (`break LOCATION` in a replayed tree, as gdb's): set in
/// each process's replay with the same number, where its location is found (pending
/// elsewhere), in the replays started later too.
#[derive(Debug, Clone)]
struct Everywhere {
    number: u32,
    location: String,
    default_file: Option<PathBuf>,
    temporary: bool,
    condition: Option<String>,
    enabled: bool,
    /// A dprintf's format and arguments.
    print: Option<(String, Vec<String>)>,
    /// Hits still to pass, in any inferior (gdb's `ignore` counts a breakpoint's hits at
    /// every location together); the inferiors' own tables keep none.
    ignore: u32,
}

/// One thread of a replayed tree, as `info threads` lists it.
#[derive(Debug, Clone)]
pub struct TreeThread {
    /// Its inferior's number (gdb's thread id is `inferior.thread.num`).
    pub inferior: u32,
    /// Its number in its inferior, tid and pthread id.
    pub thread: hindsight_control::ThreadInfo,
    /// Its name (what `/proc/…/comm` says).
    pub name: Option<String>,
    /// Where it stands (None when its stack cannot be read).
    pub frame: Option<crate::frames::FrameInfo>,
    /// It is the thread commands act on.
    pub current: bool,
}

/// One row of `info breakpoints`: a breakpoint or watchpoint, and in a replayed tree, whose.
#[derive(Debug, Clone)]
pub struct BreakpointRow {
    /// As its inferior's table holds it; for a breakpoint of every inferior, the hit and
    /// ignore counts are every inferior's together.
    pub breakpoint: hindsight_breakpoints::table::Breakpoint,
    /// The inferior whose table holds it (for a breakpoint of every inferior, the current
    /// one); None in a replay of one process.
    pub inferior: Option<u32>,
    /// A breakpoint of every inferior: its locations, inferior by inferior, as (inferior,
    /// address) — gdb's locations `N.1`, `N.2`… of a breakpoint with several.
    pub shared: Option<Vec<(u32, u64)>>,
}

/// The processes of a replayed tree (held by the outer [`Session`]).
pub(crate) struct Inferiors {
    slots: Vec<Slot>,
    /// Index (in `slots`) of the process the outer session replays.
    current: usize,
    /// (slot, step) of the stop the others are placed around.
    anchor: Option<(usize, u64)>,
    /// (Shared: it holds every message of the trace, and each query at a stop uses it.)
    causality: Option<std::rc::Rc<Causality>>,
    /// Where each process's output that an ancestor's stream holds is in the writer's own
    /// stream (built when first needed).
    outputs: Option<std::rc::Rc<OutputMap>>,
    /// Output of a process that another one's replay (whose stream holds it) ran past, but
    /// that the writer had not written yet at the last stop's consistent state: told at
    /// the first forward stop whose state has it, as (writer, its step, output).
    pending_output: Vec<(i32, u64, Notice)>,
    /// The breakpoints of every inferior.
    everywhere: Vec<Everywhere>,
    /// The number the next breakpoint or watchpoint of any inferior gets (one numbering
    /// across inferiors, as gdb's).
    next_number: u32,
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
        /// When `event` is a batch of buffered calls that moved data: (how many of its calls
        /// it has made, how many it holds).
        calls: Option<(u32, u32)>,
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
                known: match p.parent {
                    Some(parent) if procs.iter().any(|q| q.pid == parent) => Lifetime::NotCreated,
                    _ => Lifetime::Alive,
                },
            })
            .collect();
        let current = slots.iter().position(|s| s.pid == current).unwrap_or(0);
        Ok(Some(Inferiors {
            slots,
            current,
            anchor: None,
            causality: None,
            outputs: None,
            pending_output: Vec::new(),
            everywhere: Vec::new(),
            next_number: 1,
        }))
    }
}

impl Session {
    /// Before a breakpoint or watchpoint is added: its number follows every inferior's.
    pub(crate) fn shared_numbering_before(&mut self) {
        if let Some(n) = self.inferiors.as_ref().map(|i| i.next_number) {
            self.breakpoints.number_from(n);
        }
    }

    /// After a breakpoint or watchpoint was added: the next number of every inferior.
    pub(crate) fn shared_numbering_after(&mut self) {
        let n = self.breakpoints.next_number();
        if let Some(i) = self.inferiors.as_mut() {
            i.next_number = i.next_number.max(n);
        }
    }

    /// `break LOCATION` in a replayed tree: a breakpoint of every inferior, as gdb's (one
    /// number; `break LOCATION inferior N` is one of inferior N alone). Set in the current
    /// inferior as [`Session::add_breakpoint`] does (returned), and in every other one with
    /// the same number (pending where its location is not found). Without inferiors: the
    /// current process's.
    pub fn add_breakpoint_everywhere(
        &mut self,
        location: &str,
        default_file: Option<&std::path::Path>,
        temporary: bool,
        condition: Option<&str>,
    ) -> anyhow::Result<crate::breakpoints::NewBreakpoint> {
        let b = self.add_breakpoint(location, default_file, temporary, condition, None)?;
        self.spread(b.number, location, default_file, temporary, condition, None);
        Ok(b)
    }

    /// [`Session::add_breakpoint_everywhere`] for a location no inferior has yet (pending in
    /// every one).
    pub fn add_pending_breakpoint_everywhere(
        &mut self,
        location: &str,
        temporary: bool,
        condition: Option<&str>,
    ) -> anyhow::Result<u32> {
        let n = self.add_pending_breakpoint(location, temporary, condition)?;
        self.spread(n, location, None, temporary, condition, None);
        Ok(n)
    }

    /// `dprintf LOCATION,FORMAT,ARGS…` in a replayed tree: a dprintf of every inferior, as
    /// gdb's (its locations are a breakpoint's); set as [`Session::add_dprintf`] does here.
    pub fn add_dprintf_everywhere(
        &mut self,
        location: &str,
        default_file: Option<&std::path::Path>,
        condition: Option<&str>,
        print: (String, Vec<String>),
    ) -> anyhow::Result<crate::breakpoints::NewBreakpoint> {
        let b = self.add_dprintf(location, default_file, condition, None, print.clone())?;
        self.spread(
            b.number,
            location,
            default_file,
            false,
            condition,
            Some(print),
        );
        Ok(b)
    }

    /// Sets breakpoint (`print`: dprintf) `number` of the current inferior in every other
    /// one.
    fn spread(
        &mut self,
        number: u32,
        location: &str,
        default_file: Option<&std::path::Path>,
        temporary: bool,
        condition: Option<&str>,
        print: Option<(String, Vec<String>)>,
    ) {
        let Some(inf) = self.inferiors.as_mut() else {
            return;
        };
        let e = Everywhere {
            number,
            location: location.to_string(),
            default_file: default_file.map(|p| p.to_path_buf()),
            temporary,
            condition: condition.map(str::to_string),
            enabled: true,
            print,
            ignore: 0,
        };
        let current = inf.current;
        for (j, slot) in inf.slots.iter_mut().enumerate() {
            if j != current {
                if let Some(s) = slot.session.as_deref_mut() {
                    apply_everywhere(s, &e);
                }
            }
        }
        inf.everywhere.push(e);
    }

    /// What `delete`, `enable`, `disable` and `condition` did to breakpoint `n` of the current
    /// inferior, done in every other one when it is a breakpoint of every inferior (`None`:
    /// deleted; else enabled and condition).
    pub(crate) fn update_everywhere(&mut self, n: u32, now: Option<(bool, Option<String>)>) {
        let Some(inf) = self.inferiors.as_mut() else {
            return;
        };
        let Some(k) = inf.everywhere.iter().position(|e| e.number == n) else {
            return;
        };
        let current = inf.current;
        match &now {
            None => {
                inf.everywhere.remove(k);
            }
            Some((enabled, condition)) => {
                inf.everywhere[k].enabled = *enabled;
                inf.everywhere[k].condition = condition.clone();
            }
        }
        for (j, slot) in inf.slots.iter_mut().enumerate() {
            let Some(s) = slot.session.as_deref_mut().filter(|_| j != current) else {
                continue;
            };
            // (A temporary breakpoint that hit there is gone there already.)
            let _ = match &now {
                None => crate::breakpoints::delete_one(s, n),
                Some((enabled, condition)) => s
                    .set_breakpoints_enabled(&[n], *enabled)
                    .and_then(|_| s.set_condition(n, condition.as_deref())),
            };
        }
    }

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
    pub(crate) fn causality(&mut self) -> anyhow::Result<std::rc::Rc<Causality>> {
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
        let c = std::rc::Rc::new(
            Causality::build(&links, r.processes()).context("reading the trace's messages")?,
        );
        if let Some(i) = self.inferiors.as_mut() {
            i.causality = Some(c.clone());
        }
        Ok(c)
    }

    /// The stop the other processes are placed around, as (recorded pid, step): the current
    /// inferior's place, unless it still stands where the last placement put it (then the
    /// anchor stays).
    pub(crate) fn anchor(&mut self, c: &Causality) -> anyhow::Result<(i32, u64)> {
        let here = self.step_now(c)?;
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

    /// The step (see `hindsight-causal`) the replay stands before: its event's, or, when it
    /// stopped between two calls of a batch of buffered calls, the step of the next call.
    pub(crate) fn step_now(&mut self, c: &Causality) -> anyhow::Result<u64> {
        if self.pid().is_none() && self.replay.is_some() {
            // Its process is gone (it ran to its end, or was placed there): past its last
            // event, whatever its replay counted (its exit is known to whoever waits).
            return Ok(c.events(self.user_pid()));
        }
        // Inside a batch the replay has replayed the batch's event and no other (the
        // position is not asked for: it would be looked for again by replaying, and a
        // thread placed at a buffered call stands in its stub, where no position is named).
        let point = match self.replay.as_ref().and_then(|r| r.batch_progress()) {
            Some((event, call)) => Point { event, call },
            None => Point {
                event: self.event_now()?,
                call: 0,
            },
        };
        Ok(c.step(self.user_pid(), point))
    }

    /// The event the replay stands before: its position's, or (when the position cannot be
    /// named: after an exec, time travel is refused) the count of events it replayed.
    pub(crate) fn event_now(&mut self) -> anyhow::Result<u64> {
        if let Some(p) = self.travel.here {
            return Ok(p.event);
        }
        match self.position() {
            Ok(p) => Ok(p.event),
            Err(e) => self.replay.as_ref().map(|r| r.events_replayed()).ok_or(e),
        }
    }

    /// The latest consistent cut around the anchor.
    pub(crate) fn anchored_cut(&mut self) -> anyhow::Result<(std::rc::Rc<Causality>, Cut, i32)> {
        let causality = self.causality()?;
        let (pid, event) = self.anchor(&causality)?;
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

    /// The processes that appeared or ended in the consistent state around the current
    /// stop since the last call (gdb's announcements, in an order consistent with
    /// happens-before). Going back in time announces nothing (gdb has no words for
    /// a process un-created), but what it undoes is announced again going forward. Empty
    /// without inferiors.
    pub fn inferior_changes(&mut self) -> anyhow::Result<Vec<InferiorChange>> {
        if self.inferiors.is_none() {
            return Ok(Vec::new());
        }
        let (causality, cut, _) = self.anchored_cut()?;
        let trace = self.replay_opts.as_ref().map(|o| o.trace.clone());
        let Some(inf) = self.inferiors.as_mut() else {
            return Ok(Vec::new());
        };
        let mut changes = Vec::new();
        for (j, slot) in inf.slots.iter_mut().enumerate() {
            let now = match place_of(&causality, &cut, slot) {
                InferiorPlace::NotCreated => Lifetime::NotCreated,
                InferiorPlace::Before { .. } => Lifetime::Alive,
                InferiorPlace::End { .. } => Lifetime::Ended,
            };
            let (num, pid) = (j as u32 + 1, slot.pid);
            if slot.known == Lifetime::NotCreated && now != Lifetime::NotCreated {
                // Announced where its parent forked it (everything of its own ranks after).
                let rank = slot
                    .parent
                    .zip(slot.fork_event)
                    .and_then(|(parent, at)| {
                        let step = causality.step(parent, Point { event: at, call: 0 });
                        causality.recorded_rank(parent, step)
                    })
                    .unwrap_or(0);
                changes.push(((rank, 0), InferiorChange::New { num, pid }));
            }
            if slot.known != Lifetime::Ended && now == Lifetime::Ended {
                let status = trace
                    .as_deref()
                    .and_then(|t| exit_status(t, pid).ok().flatten());
                let rank = causality
                    .recorded_rank(pid, causality.events(pid))
                    .unwrap_or(u64::MAX);
                changes.push((
                    (rank, 1),
                    match status {
                        Some(hindsight_trace::ExitStatus::Killed(signal)) => {
                            InferiorChange::Killed { num, pid, signal }
                        }
                        Some(hindsight_trace::ExitStatus::Exited(code)) => InferiorChange::Exited {
                            num,
                            pid,
                            code: Some(code),
                        },
                        None => InferiorChange::Exited {
                            num,
                            pid,
                            code: None,
                        },
                    },
                ));
            }
            slot.known = now;
        }
        // In an order of the recording's events that extends happens-before (a process's
        // creation comes before its end: its rank is right after the fork's).
        changes.sort_by_key(|(rank, _)| *rank);
        Ok(changes.into_iter().map(|(_, c)| c).collect())
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
                    Ok(mut s) => {
                        for e in &inf.everywhere {
                            apply_everywhere(&mut s, e);
                        }
                        s
                    }
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
        // Move it to its place (the anchor's own process is where the stop left it).
        let stopped_here = inf.anchor.is_some_and(|(slot, _)| slot == target);
        let mut placed = inf.slots[target].placed;
        self.inferiors = Some(inf);
        let settled = settle(self, &mut placed, &causality, pid, place, stopped_here);
        if let Some(i) = self.inferiors.as_mut() {
            i.slots[target].placed = placed;
        }
        settled?;
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

    /// The threads of every inferior that has a process at the consistent state around the
    /// current stop (`info threads` in a replayed tree), in inferior order; each other
    /// inferior's replay is started and placed there first, as `inferior N` would. An
    /// inferior not created yet or at its end has none (gdb lists no threads of an exited
    /// inferior), unless it is the current one.
    pub fn threads_of_every_inferior(&mut self) -> anyhow::Result<Vec<TreeThread>> {
        if self.inferiors.is_none() {
            bail!("This replay has one process.");
        }
        let (causality, cut, _) = self.anchored_cut()?;
        let mut inf = self.inferiors.take().context("no inferiors")?;
        let r = self.collect_threads(&mut inf, &causality, &cut);
        self.inferiors = Some(inf);
        r
    }

    fn collect_threads(
        &mut self,
        inf: &mut Inferiors,
        causality: &Causality,
        cut: &Cut,
    ) -> anyhow::Result<Vec<TreeThread>> {
        let mut all = Vec::new();
        for j in 0..inf.slots.len() {
            let num = j as u32 + 1;
            if j == inf.current {
                all.extend(threads_of(self, num, true));
                continue;
            }
            let place = place_of(causality, cut, &inf.slots[j]);
            if !matches!(place, InferiorPlace::Before { .. }) {
                continue;
            }
            let pid = inf.slots[j].pid;
            if inf.slots[j].session.is_none() {
                let mut s = self.start_inferior(pid)?;
                for e in &inf.everywhere {
                    apply_everywhere(&mut s, e);
                }
                self.share_settings(&mut s);
                inf.slots[j].session = Some(Box::new(s));
            }
            let stopped_here = inf.anchor.is_some_and(|(slot, _)| slot == j);
            let slot = &mut inf.slots[j];
            let Some(s) = slot.session.as_deref_mut() else {
                continue;
            };
            settle(s, &mut slot.placed, causality, pid, place, stopped_here)?;
            all.extend(threads_of(s, num, false));
        }
        Ok(all)
    }

    /// Every breakpoint and watchpoint as `info breakpoints` lists them, by number: in a
    /// replayed tree, those of every inferior, a breakpoint of every inferior once with its
    /// locations in each (the replays of the inferiors not started yet are started, so that
    /// its location there is known) and its hits in all of them.
    pub fn breakpoint_rows(&mut self) -> anyhow::Result<Vec<BreakpointRow>> {
        let Some(mut inf) = self.inferiors.take() else {
            return Ok(self
                .breakpoints
                .iter()
                .map(|b| BreakpointRow {
                    breakpoint: b.clone(),
                    inferior: None,
                    shared: None,
                })
                .collect());
        };
        let r = self.rows_across(&mut inf);
        self.inferiors = Some(inf);
        r
    }

    fn rows_across(&mut self, inf: &mut Inferiors) -> anyhow::Result<Vec<BreakpointRow>> {
        if !inf.everywhere.is_empty() {
            for j in 0..inf.slots.len() {
                if j != inf.current && inf.slots[j].session.is_none() {
                    let mut s = self.start_inferior(inf.slots[j].pid)?;
                    for e in &inf.everywhere {
                        apply_everywhere(&mut s, e);
                    }
                    self.share_settings(&mut s);
                    inf.slots[j].session = Some(Box::new(s));
                }
            }
        }
        let mut rows: std::collections::BTreeMap<u32, BreakpointRow> = Default::default();
        for j in 0..inf.slots.len() {
            let num = j as u32 + 1;
            let s: &Session = match inf.slots[j].session.as_deref() {
                _ if j == inf.current => self,
                Some(s) => s,
                None => continue,
            };
            for b in s.breakpoints.iter() {
                let shared = inf.everywhere.iter().find(|e| e.number == b.number);
                let row = rows.entry(b.number).or_insert_with(|| BreakpointRow {
                    breakpoint: b.clone(),
                    inferior: Some(num),
                    shared: shared.map(|_| Vec::new()),
                });
                let Some(e) = shared else { continue };
                if row.inferior != Some(num) {
                    row.breakpoint.hit_count += b.hit_count;
                }
                row.breakpoint.ignore_count = e.ignore;
                if let Some(l) = row.shared.as_mut() {
                    l.extend(b.locations.iter().map(|a| (num, *a)));
                }
            }
        }
        // A breakpoint of every inferior is shown as the current inferior's.
        let cur = inf.current as u32 + 1;
        for b in self.breakpoints.iter() {
            if let Some(row) = rows.get_mut(&b.number).filter(|r| r.shared.is_some()) {
                let hits = row.breakpoint.hit_count;
                let ignore = row.breakpoint.ignore_count;
                row.breakpoint = b.clone();
                row.breakpoint.hit_count = hits;
                row.breakpoint.ignore_count = ignore;
                row.inferior = Some(cur);
            }
        }
        Ok(rows.into_values().collect())
    }

    /// The replay of inferior `num` (the session itself for the current one): for what a
    /// front end shows of another inferior (its symbols, its breakpoints' details).
    pub fn inferior_session(&self, num: u32) -> Option<&Session> {
        let Some(inf) = self.inferiors.as_ref() else {
            return (num == 1).then_some(self);
        };
        let j = (num as usize).checked_sub(1)?;
        match inf.slots.get(j)?.session.as_deref() {
            _ if j == inf.current => Some(self),
            s => s,
        }
    }

    /// The replay of the other inferior that breakpoint `n` is one of, when it is not the
    /// current one's (`break LOCATION inferior N`): `delete`, `enable`… act there.
    pub(crate) fn other_inferior_with(&mut self, n: u32) -> Option<&mut Session> {
        if self.breakpoints.get(n).is_some() {
            return None;
        }
        let inf = self.inferiors.as_mut()?;
        let current = inf.current;
        inf.slots
            .iter_mut()
            .enumerate()
            .filter(|(j, _)| *j != current)
            .filter_map(|(_, slot)| slot.session.as_deref_mut())
            .find(|s| s.breakpoints.get(n).is_some())
    }

    /// `ignore N COUNT` of a breakpoint of every inferior: its next `count` hits in any
    /// inferior pass. False when `n` is not one (it is then the current inferior's own).
    pub(crate) fn ignore_everywhere(&mut self, n: u32, count: u32) -> bool {
        let Some(e) = self
            .inferiors
            .as_mut()
            .and_then(|i| i.everywhere.iter_mut().find(|e| e.number == n))
        else {
            return false;
        };
        e.ignore = count;
        true
    }

    /// A replay of process `pid` alone, stopped before its first instruction.
    fn start_inferior(&self, pid: i32) -> anyhow::Result<Session> {
        let mut opts = self
            .replay_opts
            .clone()
            .context("inferiors exist only in a replay")?;
        opts.process = Some(pid);
        // The first process's stream holds the output of every process, in the order the
        // terminal got it: its replay tells it all (as it did alone), and the others' tell
        // none (their own streams repeat their part of it).
        opts.quiet = true;
        let mut s = Session::start_replay(opts)?;
        s.interrupt = self.interrupt.clone();
        Ok(s)
    }

    /// Whether something the user set stops this process: an enabled breakpoint or
    /// watchpoint, or a debugger event that stops (`break event N`, `break message`…).
    fn has_stops(&self) -> bool {
        self.breakpoints.iter().any(|b| b.enabled)
            || self
                .travel
                .engine
                .iter()
                .any(|e| matches!(e.action, hindsight_timeline::engine::Action::Stop))
    }

    /// `break message FROM TO [N]` (seed 001's BREAK AFTER on an abstract event): a stop
    /// at the latest consistent state before process `to` receives the `n`-th message (1:
    /// the first) that process `from` sent it — `to` stands before its receive (the message
    /// is in flight), everyone else as far on as that allows. Processes are named by their
    /// recorded pids or inferior numbers. Set as `break event E` in `to`'s replay (its
    /// receive's event); returns that debugger event's id, the message, `to`'s pid and the
    /// receive's event.
    pub fn break_at_message(
        &mut self,
        from: i32,
        to: i32,
        n: u64,
    ) -> anyhow::Result<(u32, hindsight_causal::Message, i32, u64)> {
        let causality = self.causality()?;
        let pid_of = |p: i32| -> anyhow::Result<i32> {
            let pids = causality.pids();
            if pids.contains(&p) {
                return Ok(p);
            }
            usize::try_from(p)
                .ok()
                .and_then(|i| i.checked_sub(1))
                .and_then(|i| pids.get(i).copied())
                .ok_or_else(|| anyhow!("The recording has no process {p}."))
        };
        let (from, to) = (pid_of(from)?, pid_of(to)?);
        let mut received: Vec<&hindsight_causal::Message> = causality
            .messages()
            .iter()
            .filter(|m| m.send.pid == from && m.receive.pid == to)
            .collect();
        received.sort_by_key(|m| (m.receive.event, m.channel, m.units.start));
        let Some(m) = n
            .checked_sub(1)
            .and_then(|i| received.get(i as usize))
            .map(|m| (*m).clone())
        else {
            bail!(
                "Process {to} received {} message{} from process {from}; there is no message {n}.",
                received.len(),
                if received.len() == 1 { "" } else { "s" }
            );
        };
        let receive = causality.point(to, m.receive.event);
        let event = receive.event;
        // A receive inside a batch: the quantum event stops before the batch, and the
        // replay is run on to the call (see `on_to_message_call`).
        let inside = (receive.call > 0).then_some((event, receive.call));
        if self.user_pid() == to {
            self.message_calls.extend(inside);
            return Ok((self.break_at_event(event)?, m, to, event));
        }
        let Some(slot) = self
            .inferiors
            .as_ref()
            .and_then(|i| i.slots.iter().position(|s| s.pid == to))
        else {
            bail!(
                "Process {to} is not replayed here (replay the trace without --process, or with --process {to})."
            );
        };
        let back = self.inferior_number();
        self.switch_inferior(slot as u32 + 1)?;
        self.message_calls.extend(inside);
        let id = self.break_at_event(event);
        if let Some(back) = back {
            self.switch_inferior(back)?;
        }
        Ok((id?, m, to, event))
    }

    /// After `stop`: when it is the quantum event of a `break message` whose receive is a
    /// call inside a batch of buffered calls (the replay stands before the batch), runs the
    /// replay on to that call.
    pub(crate) fn on_to_message_call(&mut self, stop: &Stop) -> anyhow::Result<()> {
        if !matches!(stop.reason, StopReason::EventReached { .. }) {
            return Ok(());
        }
        let Some((event, 0)) = self.replay.as_ref().and_then(|r| r.batch_progress()) else {
            return Ok(());
        };
        let Some(&(_, call)) = self.message_calls.iter().find(|(e, _)| *e == event) else {
            return Ok(());
        };
        run_to_buffered_call(self, event, call)
    }

    /// Whether a process other than the current one has a replay with breakpoints (then
    /// `continue` and `reverse-continue` go across processes).
    pub(crate) fn others_have_breakpoints(&self) -> bool {
        self.inferiors.as_ref().is_some_and(|i| {
            i.everywhere.iter().any(|e| e.enabled)
                || i.slots
                    .iter()
                    .any(|s| s.session.as_ref().is_some_and(|s| s.has_stops()))
        })
    }

    /// `continue` (`backward`: `reverse-continue`) across the processes: every process with
    /// breakpoints runs from where the consistent state around the current stop places it to
    /// its next (previous) hit, and the first (last) of those hits in the recorder's order of
    /// events — an order consistent with happens-before — is the stop. Its process becomes
    /// the current one; the others are placed around it. The current process's own stop
    /// (its end, a signal…) counts going forward as it does alone.
    pub(crate) fn continue_across(
        &mut self,
        obs: &mut dyn Observer,
        backward: bool,
    ) -> anyhow::Result<Stop> {
        let start = self.inferior_number();
        let r = loop {
            let stop = match self.continue_across_once(obs, backward) {
                Ok(stop) => stop,
                Err(e) => break Err(e),
            };
            // A hit of a breakpoint of every inferior that its ignore count passes: on from
            // there (its hit counted where it happened).
            if let StopReason::Breakpoint { number, .. } = stop.reason {
                if self.pass_shared_ignore(number) {
                    continue;
                }
            }
            break Ok(stop);
        };
        // A temporary breakpoint of every inferior is one breakpoint, as gdb's: its first
        // hit, in any process, deletes it in every one.
        if let Ok(Stop {
            reason: StopReason::Breakpoint { number, .. },
            ..
        }) = &r
        {
            let temporary = self.inferiors.as_ref().is_some_and(|i| {
                i.everywhere
                    .iter()
                    .any(|e| e.number == *number && e.temporary)
            });
            if temporary && self.breakpoints.get(*number).is_none() {
                self.update_everywhere(*number, None);
            }
        }
        if let (Ok(_), Some(inf)) = (&r, self.inferiors.as_ref()) {
            if start != Some(inf.current as u32 + 1) {
                let slot = &inf.slots[inf.current];
                obs.notice(Notice::SwitchedInferior {
                    num: inf.current as u32 + 1,
                    pid: slot.pid,
                    program: slot.program.display().to_string(),
                });
            }
        }
        r
    }

    /// Whether breakpoint `n` is one of every inferior with hits to pass (one passed now).
    fn pass_shared_ignore(&mut self, n: u32) -> bool {
        let Some(e) = self
            .inferiors
            .as_mut()
            .and_then(|i| i.everywhere.iter_mut().find(|e| e.number == n))
            .filter(|e| e.ignore > 0)
        else {
            return false;
        };
        e.ignore -= 1;
        true
    }

    /// One motion of [`Session::continue_across`]: to the next (previous) hit in any process.
    fn continue_across_once(
        &mut self,
        obs: &mut dyn Observer,
        backward: bool,
    ) -> anyhow::Result<Stop> {
        let (causality, cut, anchor_pid) = self.anchored_cut()?;
        let anchor_event = cut.before(anchor_pid).unwrap_or(0);
        let limit = causality
            .recorded_rank(anchor_pid, anchor_event)
            .unwrap_or(0);
        let mut inf = self.inferiors.take().context("no inferiors")?;
        let r = self.run_across(&mut inf, &causality, &cut, anchor_pid, limit, obs, backward);
        let r = match r {
            Ok((winner, event, stop)) => {
                if winner != inf.current {
                    let Some(next) = inf.slots[winner].session.take() else {
                        self.inferiors = Some(inf);
                        bail!("inferior {} has no replay", winner + 1);
                    };
                    let mut next = *next;
                    self.share_settings(&mut next);
                    let previous = std::mem::replace(self, next);
                    inf.slots[inf.current].session = Some(Box::new(previous));
                    inf.current = winner;
                }
                for s in inf.slots.iter_mut() {
                    s.placed = None;
                }
                inf.slots[winner].placed = Some(event);
                inf.anchor = Some((winner, event));
                Ok(stop)
            }
            Err(e) => {
                // Whoever ran is somewhere else now: placed again when looked at.
                for s in inf.slots.iter_mut() {
                    s.placed = None;
                }
                inf.anchor = None;
                Err(e)
            }
        };
        self.inferiors = Some(inf);
        r
    }

    /// The motion of [`Session::continue_across`] in every process: returns the slot of the
    /// stop, the event its process stands before, and the stop.
    #[allow(clippy::too_many_arguments)]
    fn run_across(
        &mut self,
        inf: &mut Inferiors,
        causality: &Causality,
        cut: &Cut,
        anchor_pid: i32,
        limit: u64,
        obs: &mut dyn Observer,
        backward: bool,
    ) -> anyhow::Result<(usize, u64, Stop)> {
        let cur = inf.current;
        let cur_pid = inf.slots[cur].pid;
        let outputs = outputs_of(inf, self.replay_opts.as_ref().map(|o| o.trace.as_path()));
        if backward {
            // (The replays that hold it go back before it: they tell it again.)
            inf.pending_output.clear();
        }
        let mut best: Option<(u64, usize, u64, Stop)> = None;
        // Each process's hit and ignore counts before it runs: only the stop's process
        // keeps what its run counted (the others' hits come later, or never, in the
        // replay's order; they are counted when a motion stops there).
        let mut counted = vec![(cur, counts(self))];
        let mut held = Vec::new();
        let first = if backward {
            if self.held_call.is_some() {
                // No way back from a buffered call yet: from the end of its batch (the hits
                // after the limit are passed over).
                let place = after_batch(self, place_of(causality, cut, &inf.slots[cur]))?;
                place_session(self, place)?;
            }
            back_to_hit(self, causality, cur_pid, limit, cur_pid == anchor_pid)?
        } else {
            let mut h = Held {
                outer: &mut *obs,
                notices: Vec::new(),
            };
            let stop = resume_holding_output(self, &mut h);
            held.push((cur, cur_pid, h.notices));
            let stop = match stop {
                Ok(stop) => stop,
                Err(e) => {
                    tell_held(
                        obs,
                        causality,
                        None,
                        cur,
                        held,
                        &outputs,
                        &mut inf.pending_output,
                    );
                    return Err(e);
                }
            };
            let event = self.step_now(causality).unwrap_or(u64::MAX);
            let rank = causality.recorded_rank(cur_pid, event).unwrap_or(u64::MAX);
            Some((rank, event, stop))
        };
        let fallback = match first {
            Some((rank, event, stop)) => {
                if matches!(stop.reason, StopReason::Interrupted) {
                    tell_held(
                        obs,
                        causality,
                        None,
                        cur,
                        held,
                        &outputs,
                        &mut inf.pending_output,
                    );
                    return Ok((cur, event, stop));
                }
                best = Some((rank, cur, event, stop));
                None
            }
            // Back at the start of this process: its stop, unless another has a hit.
            None => Some(self.last_report.clone()),
        };
        for j in 0..inf.slots.len() {
            if j == cur {
                continue;
            }
            let place = place_of(causality, cut, &inf.slots[j]);
            let pid = inf.slots[j].pid;
            let placed = inf.slots[j].placed;
            // A process whose replay has not started has the breakpoints of every inferior.
            if inf.slots[j].session.is_none() && inf.everywhere.iter().any(|e| e.enabled) {
                let mut s = self.start_inferior(pid)?;
                for e in &inf.everywhere {
                    apply_everywhere(&mut s, e);
                }
                inf.slots[j].session = Some(Box::new(s));
            }
            let Some(s) = inf.slots[j].session.as_deref_mut() else {
                continue;
            };
            if !s.has_stops() {
                continue;
            }
            // From where the consistent state places it (going back, from the end of a batch
            // its place is inside: no way back from a buffered call yet, and the hits after
            // the limit are passed over).
            let place = match backward {
                true => after_batch(s, place)?,
                false => place,
            };
            match (place, backward) {
                (InferiorPlace::NotCreated, true) | (InferiorPlace::End { .. }, false) => continue,
                _ if placed.is_some() && placed == goal_step(causality, pid, place) => {}
                _ => {
                    place_session(s, place)?;
                }
            }
            counted.push((j, counts(s)));
            let found = if backward {
                back_to_hit(s, causality, pid, limit, false)?
            } else {
                let mut h = Held {
                    outer: &mut *obs,
                    notices: Vec::new(),
                };
                let stop = resume_holding_output(s, &mut h);
                held.push((j, pid, h.notices));
                let stop = stop?;
                if is_hit(&stop) {
                    let event = s.step_now(causality)?;
                    let rank = causality.recorded_rank(pid, event).unwrap_or(u64::MAX);
                    Some((rank, event, stop))
                } else {
                    None
                }
            };
            if let Some((rank, event, stop)) = found {
                let better = match &best {
                    None => true,
                    Some((b, ..)) => (backward && rank > *b) || (!backward && rank < *b),
                };
                if better {
                    best = Some((rank, j, event, stop));
                }
            }
        }
        let winner = best.as_ref().map_or(cur, |b| b.1);
        if !held.is_empty() {
            let stop_place = match &best {
                Some((_, slot, event, _)) => Some((inf.slots[*slot].pid, *event)),
                None => self.step_now(causality).ok().map(|e| (cur_pid, e)),
            };
            let cut = stop_place.and_then(|(pid, event)| causality.cut(pid, event));
            tell_held(
                obs,
                causality,
                cut.as_ref(),
                winner,
                held,
                &outputs,
                &mut inf.pending_output,
            );
        }
        for (j, before) in counted {
            if j == winner {
                continue;
            }
            let s = match inf.slots[j].session.as_deref_mut() {
                _ if j == cur => &mut *self,
                Some(s) => s,
                None => continue,
            };
            restore_counts(s, &before);
            // A temporary breakpoint of every inferior that this process hit past the stop
            // was deleted there: its hit comes later (or never) in the replay's order.
            for e in inf.everywhere.iter().filter(|e| e.temporary) {
                let had = before.iter().any(|(n, ..)| *n == e.number);
                if had && s.breakpoints.get(e.number).is_none() {
                    apply_everywhere(s, e);
                }
            }
        }
        match (best, fallback) {
            (Some((_, slot, event, stop)), _) => Ok((slot, event, stop)),
            (None, Some(Some(stop))) => {
                let event = self.step_now(causality).unwrap_or(0);
                Ok((cur, event, stop))
            }
            (None, _) => bail!("No more reverse-execution history."),
        }
    }

    /// What the user set for the session, carried to the inferior switched to.
    fn share_settings(&self, next: &mut Session) {
        next.interrupt = self.interrupt.clone();
        next.live_pause = self.live_pause;
        next.print = self.print;
        next.signal_stops = self.signal_stops.clone();
        next.signal_print = self.signal_print.clone();
        next.signal_pass = self.signal_pass.clone();
        // (Setting it anew would forget a thread's step over the breakpoint it stopped at.)
        if next.step_over != self.step_over {
            next.set_step_over_mode(self.step_over);
        }
    }
}

/// The hit and ignore counts of `s`'s breakpoints, by number.
fn counts(s: &Session) -> Vec<(u32, u64, u32)> {
    s.breakpoints
        .iter()
        .map(|b| (b.number, b.hit_count, b.ignore_count))
        .collect()
}

/// Puts back the hit and ignore counts `before` ([`counts`]) of `s`'s breakpoints.
fn restore_counts(s: &mut Session, before: &[(u32, u64, u32)]) {
    for &(n, hits, ignore) in before {
        if let Some(b) = s.breakpoints.get_mut(n) {
            b.hit_count = hits;
            b.ignore_count = ignore;
        }
    }
}

/// How process `pid` of the trace at `trace` ended (None: its recording has no end).
fn exit_status(
    trace: &std::path::Path,
    pid: i32,
) -> anyhow::Result<Option<hindsight_trace::ExitStatus>> {
    let r = TraceReader::open(trace)?;
    let mut stream = r.events(pid)?;
    let mut status = None;
    while let Some(e) = stream.next_event()? {
        if let hindsight_trace::Event::ProcessExit { status: s, .. } = e {
            status = Some(s);
        }
    }
    Ok(status)
}

/// Moves `s` (the replay of process `pid`) to `place` unless it stands there already
/// (`placed`: the step the last placement left it at, updated) or made the stop the others
/// are placed around (`stopped_here`).
fn settle(
    s: &mut Session,
    placed: &mut Option<u64>,
    causality: &Causality,
    pid: i32,
    place: InferiorPlace,
    stopped_here: bool,
) -> anyhow::Result<()> {
    if stopped_here {
        return Ok(());
    }
    let goal = goal_step(causality, pid, place);
    if placed.is_some() && *placed == goal {
        return Ok(());
    }
    let placing = place_session(s, place);
    // Wherever it stands now, it is not a new stop (the anchor stays).
    *placed = s.step_now(causality).ok();
    placing
        .map(|_| ())
        .map_err(|e| anyhow!("Process {pid} could not be placed at this stop: {e}"))
}

/// The threads of `s` (inferior `inferior`), with their top frames; `selected` marks its
/// selected thread as the current one.
fn threads_of(s: &Session, inferior: u32, selected: bool) -> Vec<TreeThread> {
    let chosen = s.selected_thread().filter(|_| selected);
    s.threads()
        .into_iter()
        .map(|t| TreeThread {
            inferior,
            name: s.thread_name(t.tid),
            frame: s.top_frame(t.tid).ok(),
            current: Some(t.tid) == chosen,
            thread: t,
        })
        .collect()
}

/// What one process's run in a motion across processes told, held back until the stop is
/// known: only what happened within the consistent state around the stop is told (a
/// process that ran past it is placed back, and its run from there tells the rest later).
struct Held<'a> {
    outer: &'a mut dyn Observer,
    /// Each notice, with when it happened (see [`Observer::notice_at`]) if known.
    notices: Vec<(Option<(u64, u32)>, Notice)>,
}

impl Observer for Held<'_> {
    fn notice(&mut self, notice: Notice) {
        self.notices.push((None, notice));
    }

    fn notice_at(&mut self, notice: Notice, at: (u64, u32)) {
        self.notices.push((Some(at), notice));
    }

    fn run_commands(&mut self, session: &mut Session, commands: &[String]) {
        self.outer.run_commands(session, commands);
    }
}

/// `continue` in `s` alone, its program's output held with its notices in `h` (each piece
/// at its `Output` event), not shown as it runs.
fn resume_holding_output(s: &mut Session, h: &mut Held) -> anyhow::Result<Stop> {
    if let Some(r) = s.replay.as_mut() {
        r.hold_output(true);
    }
    let stop = s.resume_alone(h);
    if let Some(r) = s.replay.as_mut() {
        for o in r.take_held_output() {
            h.notices.push((
                Some((o.event, 0)),
                Notice::ProgramOutput {
                    pid: o.pid,
                    fd: o.fd,
                    data: o.data,
                },
            ));
        }
        r.hold_output(false);
    }
    stop
}

/// For each `Output` event of a process's stream written by another process (a descendant:
/// the recorder writes it to the writer's stream and every ancestor's), keyed by (stream's
/// pid, its index there): the writer and the place of the same output in the writer's own
/// stream (its k-th output of that writer is the writer's own k-th).
type OutputMap = std::collections::HashMap<(i32, u64), (i32, Option<(u64, u32)>)>;

/// Builds the [`OutputMap`] of the trace at `trace`.
fn output_map(trace: &std::path::Path) -> anyhow::Result<OutputMap> {
    let r = TraceReader::open(trace)?;
    let mut own: std::collections::HashMap<i32, Vec<u64>> = Default::default();
    let mut others: Vec<(i32, u64, i32, usize)> = Vec::new();
    for p in r.processes() {
        let mut stream = r.events(p.pid)?;
        let mut counts: std::collections::HashMap<i32, usize> = Default::default();
        let mut index = 0u64;
        while let Some(e) = stream.next_event()? {
            if let hindsight_trace::Event::Output { pid: w, .. } = e {
                if w == p.pid {
                    own.entry(w).or_default().push(index);
                } else {
                    let k = counts.entry(w).or_default();
                    others.push((p.pid, index, w, *k));
                    *k += 1;
                }
            }
            index += 1;
        }
    }
    Ok(others
        .into_iter()
        .map(|(stream, index, w, k)| {
            let at = own.get(&w).and_then(|l| l.get(k)).map(|&e| (e, 0));
            ((stream, index), (w, at))
        })
        .collect())
}

/// The [`OutputMap`] of the trace at `trace`, built once per session (empty when it cannot
/// be read: output is then placed by the stream that holds it).
fn outputs_of(inf: &mut Inferiors, trace: Option<&std::path::Path>) -> std::rc::Rc<OutputMap> {
    if let Some(m) = inf.outputs.clone() {
        return m;
    }
    let m = std::rc::Rc::new(trace.and_then(|t| output_map(t).ok()).unwrap_or_default());
    inf.outputs = Some(m.clone());
    m
}

/// What one run held back: its slot, its process and its notices with their times.
type HeldRun = (usize, i32, Vec<(Option<(u64, u32)>, Notice)>);

/// Tells `obs` what the runs of a motion across processes held back ((slot, pid, notices)),
/// in an order of the recording that extends happens-before: everything of the stop's
/// process (`winner`), and of the others what their timed notices place within `cut`.
#[allow(clippy::too_many_arguments)]
fn tell_held(
    obs: &mut dyn Observer,
    c: &Causality,
    cut: Option<&Cut>,
    winner: usize,
    held: Vec<HeldRun>,
    outputs: &OutputMap,
    pending: &mut Vec<(i32, u64, Notice)>,
) {
    let mut told: Vec<(u64, Notice)> = Vec::new();
    let past = |pid: i32, step: u64| {
        cut.and_then(|cut| cut.before(pid))
            .is_some_and(|b| step < b)
    };
    for (pid, step, notice) in std::mem::take(pending) {
        if past(pid, step) {
            told.push((c.recorded_rank(pid, step).unwrap_or(0), notice));
        } else {
            pending.push((pid, step, notice));
        }
    }
    for (slot, stream, notices) in held {
        let mut key = 0;
        for (at, notice) in notices {
            let at_in_stream = at;
            // Another process's output in this one's stream happened where the writer's own
            // stream has it.
            let (pid, at) = match (&notice, at) {
                (Notice::ProgramOutput { pid: w, .. }, Some((event, _))) if *w != stream => {
                    match outputs.get(&(stream, event)) {
                        Some(&(w, Some(own))) => (w, Some(own)),
                        _ => (stream, Some((event, 0))),
                    }
                }
                _ => (stream, at),
            };
            let step = at.map(|(event, call)| c.step(pid, Point { event, call }));
            if let Some(step) = step {
                key = c.recorded_rank(pid, step).unwrap_or(key);
            }
            // A notice at step k happened standing before it (events 0..k made); output is
            // its own event k, made only when the cut is past it.
            let output = matches!(notice, Notice::ProgramOutput { .. });
            let within = match (step, cut) {
                _ if slot == winner && pid == stream => true,
                (Some(step), Some(cut)) => cut
                    .before(pid)
                    .is_some_and(|b| step < b || (!output && step == b)),
                (_, None) => slot == winner,
                _ => false,
            };
            if within {
                told.push((key, notice));
            } else if let (Some(step), Some((event, _)), true) = (step, at_in_stream, pid != stream)
            {
                // Its stream's replay will not run it again when it stands past it.
                let kept = cut
                    .and_then(|cut| cut.before(stream))
                    .is_some_and(|b| c.step(stream, Point { event, call: 0 }) < b);
                if kept {
                    pending.push((pid, step, notice));
                }
            }
        }
    }
    told.sort_by_key(|(key, _)| *key);
    for (_, notice) in told {
        obs.notice(notice);
    }
}

/// `place`, or when it is inside a batch of buffered calls, the place right after the
/// batch's calls: before the next event that a thread of `s`'s process runs to (the events
/// in between need no execution: the batch's calls are made on the way to it).
fn after_batch(s: &Session, place: InferiorPlace) -> anyhow::Result<InferiorPlace> {
    let InferiorPlace::Before {
        event,
        total,
        calls: Some(_),
    } = place
    else {
        return Ok(place);
    };
    let replay = s.replay.as_ref().context("not a replay")?;
    let mut stream = replay.reader().events(s.user_pid())?;
    let mut index = 0u64;
    while let Some(e) = stream.next_event()? {
        if index > event && e.tid().is_some() {
            return Ok(InferiorPlace::Before {
                event: index,
                total,
                calls: None,
            });
        }
        index += 1;
    }
    Ok(InferiorPlace::End { total })
}

/// Sets breakpoint `e` of every inferior in `s` (another inferior's replay) with its number;
/// pending where its location is not found.
fn apply_everywhere(s: &mut Session, e: &Everywhere) {
    if s.breakpoints.get(e.number).is_some() {
        // (Numbers are shared: it is there already.)
        return;
    }
    let after = s.breakpoints.next_number();
    s.breakpoints.reuse_number(e.number);
    set_everywhere(s, e);
    s.breakpoints.number_from(after.max(e.number + 1));
}

/// [`apply_everywhere`] once its number is the table's next.
fn set_everywhere(s: &mut Session, e: &Everywhere) {
    let condition = e.condition.as_deref();
    let set = match &e.print {
        Some(print) => s.add_dprintf(
            &e.location,
            e.default_file.as_deref(),
            condition,
            None,
            print.clone(),
        ),
        None => s.add_breakpoint(
            &e.location,
            e.default_file.as_deref(),
            e.temporary,
            condition,
            None,
        ),
    };
    // (A dprintf whose location is not found there is not set there.)
    if set.is_err() && e.print.is_none() {
        let _ = s.add_pending_breakpoint(&e.location, e.temporary, condition);
    }
    if !e.enabled {
        let _ = s.set_breakpoints_enabled(&[e.number], false);
    }
}

/// The step process `pid` placed at `place` stands before (None: at its creation).
fn goal_step(c: &Causality, pid: i32, place: InferiorPlace) -> Option<u64> {
    match place {
        InferiorPlace::NotCreated => None,
        InferiorPlace::Before { event, calls, .. } => Some(c.step(
            pid,
            Point {
                event,
                call: calls.map_or(0, |c| c.0),
            },
        )),
        InferiorPlace::End { total } => Some(c.step(
            pid,
            Point {
                event: total,
                call: 0,
            },
        )),
    }
}

/// Moves `s`'s replay to `place`: at its creation; at its end; or before event `e` as late
/// as it gets — at the instruction that makes event `e` (the deterministic code after
/// event `e - 1` has run: it is part of the consistent state), reached by going to the end
/// of event `e` and one instruction back. In a batch of buffered calls it stands at the
/// call its place names (the first: before the batch). Returns the event it stands before.
fn place_session(s: &mut Session, place: InferiorPlace) -> anyhow::Result<u64> {
    // A replay that went past an exec cannot go back (time travel refuses): it starts again
    // from the process's creation.
    let fresh = |s: &mut Session| -> anyhow::Result<()> {
        if s.travel.exec_at.is_some() {
            s.restart()?;
        }
        Ok(())
    };
    match place {
        InferiorPlace::NotCreated => {
            if s.travel.exec_at.is_some() {
                s.restart()?;
            } else if s.started {
                s.goto(&Place::Start)?;
            }
        }
        InferiorPlace::Before {
            event,
            calls: Some((call, _)),
            ..
        } => {
            fresh(s)?;
            // Before the batch is handed to the agent, or just after, none of it answered: a
            // `goto` to a batch (which needs no execution) may land further on, at the next
            // event a thread runs to, so the event before it is tried then.
            let mut at = event;
            loop {
                s.goto(&Place::Event(at))?;
                let replay = s.replay.as_ref().context("not a replay")?;
                if replay.events_replayed() <= event || replay.batch_progress() == Some((event, 0))
                {
                    break;
                }
                at = at
                    .checked_sub(1)
                    .ok_or_else(|| anyhow!("no way to stand before event {event}"))?;
            }
            run_to_buffered_call(s, event, call)?;
            return Ok(event);
        }
        InferiorPlace::Before { event, .. } => {
            fresh(s)?;
            let latest = s
                .goto(&Place::Event(event + 1))
                .and_then(|_| s.reverse_step_instruction(false));
            if latest.is_err() {
                // An exec in between (no way back over it): right after the event before.
                fresh(s)?;
                s.goto(&Place::Event(event))?;
            }
        }
        InferiorPlace::End { .. } => {
            // Its process has ended there: none to show (gdb's exited inferior); going back
            // from it starts from the end of its replay.
            s.kill();
        }
    }
    s.event_now()
}

/// Runs `s`'s replay, standing before event `event` (a batch of buffered calls), to the
/// thread's call `call` of that batch: it stops at the program's `syscall` instruction of
/// that call, the calls before it made (what the user set does not stop it: the place was
/// computed, not hit).
fn run_to_buffered_call(s: &mut Session, event: u64, call: u32) -> anyhow::Result<()> {
    use hindsight_replay::ReplayStop;
    let Session {
        inferior, replay, ..
    } = s;
    let (inf, replay) = crate::session::live_replay(inferior, replay)?;
    replay.stop_at_buffered_call(event, call)?;
    let stop = replay.resume(
        inf,
        hindsight_control::Resume::Continue,
        &mut hindsight_replay::Silent,
    );
    s.travel.here = None;
    s.started = true;
    if !matches!(stop, Ok(ReplayStop::AtBufferedCall(_))) {
        if let Some(r) = s.replay.as_mut() {
            r.cancel_buffered_call_stop().map_err(|e| anyhow!("{e}"))?;
        }
    }
    match stop.map_err(|e| anyhow!("{e}"))? {
        ReplayStop::AtBufferedCall(tid) => {
            s.thread = Some(tid);
            s.held_call = Some((event, call));
            Ok(())
        }
        ReplayStop::Divergence(d) => bail!("{d}"),
        other => {
            bail!("the replay stopped before the buffered call {call} of event {event}: {other:?}")
        }
    }
}

/// Whether a stop of a process other than the current one is one a motion across processes
/// stops at (what the user asked to stop at, not its end).
fn is_hit(stop: &Stop) -> bool {
    matches!(
        stop.reason,
        StopReason::Breakpoint { .. }
            | StopReason::EventReached { .. }
            | StopReason::TickReached { .. }
            | StopReason::Watchpoint { .. }
            | StopReason::ConditionError { .. }
            | StopReason::Signal { .. }
    )
}

/// `reverse-continue` in `s` (process `pid`) until a hit that comes before `limit` in the
/// recorder's order (at it too when `inclusive`: the stop's own process, whose earlier hits
/// in the same stretch between two events rank the same): its rank, event and stop; None
/// when there is none.
fn back_to_hit(
    s: &mut Session,
    c: &Causality,
    pid: i32,
    limit: u64,
    inclusive: bool,
) -> anyhow::Result<Option<(u64, u64, Stop)>> {
    loop {
        let stop = s.reverse_continue_alone()?;
        if !is_hit(&stop) {
            return Ok(None);
        }
        let event = s.step_now(c)?;
        let rank = c.recorded_rank(pid, event).unwrap_or(u64::MAX);
        if rank < limit || (inclusive && rank == limit) {
            return Ok(Some((rank, event, stop)));
        }
    }
}

/// Where `slot`'s process stands in `cut`.
fn place_of(c: &Causality, cut: &Cut, slot: &Slot) -> InferiorPlace {
    let steps = c.events(slot.pid);
    let total = c.point(slot.pid, steps).event;
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
        Some(step) if step < steps => {
            let p = c.point(slot.pid, step);
            let calls = c.batch_calls(slot.pid, p.event).map(|n| (p.call, n));
            InferiorPlace::Before {
                event: p.event,
                total,
                calls,
            }
        }
        _ => InferiorPlace::End { total },
    }
}
