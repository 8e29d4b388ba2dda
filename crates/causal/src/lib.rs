//! Happens-before between the processes of a recording (DESIGN.md, "Multi-process"; seed 001,
//! Ariadne): the transfers of the trace's `links` matched into [`Message`]s, vector clocks
//! built from them, the latest consistent global state ([`Cut`]) around a stop of one
//! process, and ranks of events in one order of them all that extends happens-before
//! ([`Causality::recorded_rank`]: how stops of different processes are ordered).
//!
//! An event is named by its process and its *step* ([`EventId`]): a process's steps are its
//! events in stream order, except that a batch of calls the in-process agent buffered (one
//! event of the stream) that moved data between processes is one step per call, for those
//! calls happen at different moments (a producer's batch may hold its sends and its reads of
//! the acknowledgements of them). Without such batches a step is the event's index;
//! [`Causality::step`] and [`Causality::point`] convert. A process "stands before step `s`"
//! when it has executed its steps `0..s` and not `s`.
//!
//! Happens-before is made of three kinds of edges, besides each process's own order:
//! - a message: the send's event happens before the event of every receive that took any of
//!   its units (a read that takes parts of two writes depends on both);
//! - a fork: the parent's event of the syscall that created a child happens before the
//!   child's first event;
//! - the one-shot channels the recorder writes (a child's end and the wait that reaped it, a
//!   vfork child's release of its parent), which are messages like the others.
//!
//! Messages through shared memory are not seen (no event marks them): two processes that
//! talk only through a shared mapping are concurrent here.
//!
//! Invariants:
//! - The vector clock of event `(p, e)` counts, for each process `q`, how many of `q`'s events
//!   happen before it or are it: its own entry is `e + 1`; it changes along a process only
//!   at events with incoming edges (receives, a child's first event), so only those are kept.
//! - [`Causality::cut`] is downward closed (consistent): an event in the cut has all the
//!   events that happen before it in the cut, so no process has received what was not sent.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use hindsight_trace::{Channel, ChannelKind, Direction, Links, ProcessInfo, Transfer};

/// One event of one process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventId {
    /// Recorded pid.
    pub pid: i32,
    /// Its step (see the module's header; the event's index in its stream when the process
    /// has no batches of buffered calls that moved data).
    pub event: u64,
}

/// Where a step is in a process's stream: an event, and for a batch of buffered calls the
/// call in it (0 for any other event; the batch's call count: after its last call).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Point {
    /// Index of the event in the process's stream.
    pub event: u64,
    /// Index of the call in the batch (0 otherwise).
    pub call: u32,
}

/// The steps of one process: its batches of buffered calls that moved data, each with the
/// step of its first call, in stream order.
#[derive(Debug, Clone, Default)]
struct Steps {
    /// (event, its first step, calls).
    batches: Vec<(u64, u64, u32)>,
}

impl Steps {
    fn new(mut listed: Vec<(u64, u32)>) -> Steps {
        listed.sort_unstable();
        listed.dedup_by_key(|b| b.0);
        let mut extra = 0u64;
        let batches = listed
            .into_iter()
            .map(|(event, calls)| {
                let first = event + extra;
                extra += u64::from(calls.max(1)) - 1;
                (event, first, calls.max(1))
            })
            .collect();
        Steps { batches }
    }

    /// The step of `point` (a call past a batch's last is the step after it; a call in an
    /// event that is not a listed batch is the event's step).
    fn step(&self, p: Point) -> u64 {
        let k = self.batches.partition_point(|b| b.0 < p.event);
        let base = match k.checked_sub(1).map(|k| self.batches[k]) {
            Some((event, first, calls)) => first + u64::from(calls) + (p.event - event - 1),
            None => p.event,
        };
        match self.batches.get(k) {
            Some(&(event, _, calls)) if event == p.event => base + u64::from(p.call.min(calls)),
            _ => base,
        }
    }

    /// The point of step `s`.
    fn point(&self, s: u64) -> Point {
        let k = self.batches.partition_point(|b| b.1 <= s);
        match k.checked_sub(1).map(|k| self.batches[k]) {
            Some((event, first, calls)) if s < first + u64::from(calls) => Point {
                event,
                call: (s - first) as u32,
            },
            Some((event, first, calls)) => Point {
                event: event + 1 + (s - first - u64::from(calls)),
                call: 0,
            },
            None => Point { event: s, call: 0 },
        }
    }

    /// Calls of the batch at `event`, if it is a listed one.
    fn calls(&self, event: u64) -> Option<u32> {
        let k = self.batches.partition_point(|b| b.0 < event);
        self.batches.get(k).filter(|b| b.0 == event).map(|b| b.2)
    }
}

/// Units of a channel that went from one send to one receive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The channel's id (see [`Causality::channel`]).
    pub channel: u32,
    /// The event where they were sent.
    pub send: EventId,
    /// The event where they were received.
    pub receive: EventId,
    /// Which units of the channel's stream (bytes, or datagrams); a one-shot channel's
    /// single unit is `0..1`.
    pub units: Range<u64>,
}

/// What cannot be made of a trace's links.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CausalError {
    /// The edges make a cycle: the links contradict themselves.
    #[error(
        "the links of the trace contradict themselves: process {pid}'s event {event} would \
         happen before itself"
    )]
    Cycle {
        /// A process on the cycle.
        pid: i32,
        /// Its event there.
        event: u64,
    },
    /// A transfer names a process that the trace does not list.
    #[error("the links of the trace name process {0}, which the trace does not list")]
    UnknownProcess(i32),
    /// A transfer names a channel that was not listed before.
    #[error("the links of the trace name channel {0}, which they do not list")]
    UnknownChannel(u32),
}

/// An event with incoming edges and its vector clock.
#[derive(Debug, Clone)]
struct Stamp {
    event: u64,
    clock: Vec<u64>,
}

/// Where every process stands in a consistent global state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    /// Each process (in the trace's order) and the event it stands before (its event count
    /// when it has run to its end).
    pub frontier: Vec<(i32, u64)>,
}

impl Cut {
    /// The event process `pid` stands before.
    pub fn before(&self, pid: i32) -> Option<u64> {
        self.frontier
            .iter()
            .find(|(p, _)| *p == pid)
            .map(|(_, e)| *e)
    }

    /// Whether event `e` has happened in this state.
    pub fn contains(&self, e: EventId) -> bool {
        self.before(e.pid).is_some_and(|b| e.event < b)
    }
}

/// How much one process sent and received through one channel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Send syscalls (transfers).
    pub sends: u64,
    /// Units sent.
    pub units_sent: u64,
    /// Receive syscalls (transfers).
    pub receives: u64,
    /// Units received.
    pub units_received: u64,
}

/// Happens-before of one recording.
#[derive(Debug, Clone)]
pub struct Causality {
    /// Processes in the trace's order; a vector clock's entries follow it.
    pids: Vec<i32>,
    /// Events of each process (by index in `pids`).
    events: Vec<u64>,
    channels: Vec<Channel>,
    transfers: Vec<Transfer>,
    messages: Vec<Message>,
    /// Events with incoming edges, per process, in stream order.
    stamps: Vec<Vec<Stamp>>,
    /// A linear extension of happens-before close to the recorder's order, per process:
    /// (first event of a run, its index among all the events of the recording), in stream
    /// order.
    turns: Vec<Vec<(u64, u64)>>,
    /// Each process's steps.
    steps: Vec<Steps>,
}

impl Causality {
    /// Matches the transfers of `links` into messages and builds the vector clocks.
    /// `processes` are the trace's processes (their forks are edges too).
    pub fn build(links: &Links, processes: &[ProcessInfo]) -> Result<Causality, CausalError> {
        let pids: Vec<i32> = processes.iter().map(|p| p.pid).collect();
        let index: HashMap<i32, usize> = pids.iter().enumerate().map(|(i, p)| (*p, i)).collect();
        let mut listed = vec![Vec::new(); pids.len()];
        for b in &links.batches {
            let i = *index
                .get(&b.pid)
                .ok_or(CausalError::UnknownProcess(b.pid))?;
            listed[i].push((b.event, b.calls));
        }
        let steps: Vec<Steps> = listed.into_iter().map(Steps::new).collect();
        let step_of = |i: usize, event: u64| steps[i].step(Point { event, call: 0 });
        // Everything from here on counts steps.
        let mut turns = Vec::with_capacity(links.turns.len());
        let mut done = vec![0u64; pids.len()];
        for (pid, n) in &links.turns {
            let i = *index.get(pid).ok_or(CausalError::UnknownProcess(*pid))?;
            let (from, to) = (step_of(i, done[i]), step_of(i, done[i] + n));
            done[i] += n;
            turns.push((*pid, to - from));
        }
        let mut events: Vec<u64> = (0..pids.len()).map(|i| step_of(i, done[i])).collect();
        let mut transfers = Vec::with_capacity(links.transfers.len());
        for t in &links.transfers {
            if !index.contains_key(&t.pid) {
                return Err(CausalError::UnknownProcess(t.pid));
            }
            if links.channel(t.channel).is_none() {
                return Err(CausalError::UnknownChannel(t.channel));
            }
            let i = index[&t.pid];
            let mut t = t.clone();
            t.event = steps[i].step(Point {
                event: t.event,
                call: t.call,
            });
            // A transfer past the end of a stream cut off by a crash still counts as an event.
            events[i] = events[i].max(t.event + 1);
            transfers.push(t);
        }
        let links = Links {
            turns,
            channels: links.channels.clone(),
            transfers,
            batches: Vec::new(),
        };
        let links = &links;
        let messages = match_transfers(links);
        // Incoming edges per receiving event.
        let mut incoming: Vec<BTreeMap<u64, Vec<EventId>>> = vec![BTreeMap::new(); pids.len()];
        for m in &messages {
            incoming[index[&m.receive.pid]]
                .entry(m.receive.event)
                .or_default()
                .push(m.send);
        }
        for p in processes {
            if let (Some(parent), Some(at)) = (p.parent, p.fork_event) {
                if let Some(&q) = index.get(&parent) {
                    let at = step_of(q, at);
                    // A vfork parent's one event is both where the child was made and where
                    // the child's exec or end released it: the child runs after the parent's
                    // events before it (the release is the edge into it).
                    let released_by_child = incoming[q]
                        .get(&at)
                        .is_some_and(|d| d.iter().any(|e| e.pid == p.pid));
                    let from = match released_by_child {
                        true => at.checked_sub(1),
                        false => Some(at),
                    };
                    if let Some(event) = from {
                        incoming[index[&p.pid]]
                            .entry(0)
                            .or_default()
                            .push(EventId { pid: parent, event });
                    }
                }
            }
        }
        let stamps = clocks(&pids, &index, &incoming)?;
        let turns = linear_order(&pids, &index, &events, &incoming, &links.turns);
        Ok(Causality {
            pids,
            events,
            channels: links.channels.clone(),
            transfers: links.transfers.clone(),
            messages,
            stamps,
            turns,
            steps,
        })
    }

    /// The step of `point` of process `pid` (see the module's header): the event's index
    /// when the process has no listed batches.
    pub fn step(&self, pid: i32, point: Point) -> u64 {
        match self.slot(pid) {
            Some(i) => self.steps[i].step(point),
            None => point.event,
        }
    }

    /// The point of step `step` of process `pid`.
    pub fn point(&self, pid: i32, step: u64) -> Point {
        match self.slot(pid) {
            Some(i) => self.steps[i].point(step),
            None => Point {
                event: step,
                call: 0,
            },
        }
    }

    /// How many calls the batch of buffered calls at event `event` of `pid` holds, when it
    /// is one whose calls are steps of their own.
    pub fn batch_calls(&self, pid: i32, event: u64) -> Option<u32> {
        self.slot(pid).and_then(|i| self.steps[i].calls(event))
    }

    /// A rank of "process `pid` stands before its event `next`" in one order of all the
    /// recording's events that extends happens-before (the recorder's order of the events,
    /// where it agrees: processes run at the same time, and the recorder may see a receive
    /// before the send that fed it): comparing ranks orders stops of different processes
    /// consistently with happens-before. Standing at its end (`next` past its last event)
    /// ranks right after its last event. None for a process the trace does not list.
    pub fn recorded_rank(&self, pid: i32, next: u64) -> Option<u64> {
        let i = self.slot(pid)?;
        let runs = &self.turns[i];
        let index = |e: u64| {
            let k = runs.partition_point(|(first, _)| *first <= e);
            k.checked_sub(1).map(|k| runs[k].1 + (e - runs[k].0))
        };
        if next < self.events[i] {
            if let Some(g) = index(next) {
                return Some(2 * g);
            }
        }
        // At its end: right after its last event.
        Some(match self.events[i].checked_sub(1).and_then(index) {
            Some(g) => 2 * g + 1,
            None => 0,
        })
    }

    /// The processes, in the trace's order.
    pub fn pids(&self) -> &[i32] {
        &self.pids
    }

    /// How many steps process `pid` has (its events when it has no listed batches).
    pub fn events(&self, pid: i32) -> u64 {
        self.slot(pid).map(|i| self.events[i]).unwrap_or(0)
    }

    /// The channels, by id.
    pub fn channels(&self) -> &[Channel] {
        &self.channels
    }

    /// Channel `id`.
    pub fn channel(&self, id: u32) -> Option<&Channel> {
        self.channels.get(id as usize).filter(|c| c.id == id)
    }

    /// Every matched message, by channel then units.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Every send and receive as the recorder wrote it.
    pub fn transfers(&self) -> &[Transfer] {
        &self.transfers
    }

    fn slot(&self, pid: i32) -> Option<usize> {
        self.pids.iter().position(|p| *p == pid)
    }

    /// The vector clock of event `e` (entries in [`Causality::pids`] order).
    pub fn clock(&self, e: EventId) -> Option<Vec<u64>> {
        let i = self.slot(e.pid)?;
        let stamps = &self.stamps[i];
        let k = stamps.partition_point(|s| s.event <= e.event);
        let mut c = match k {
            0 => vec![0; self.pids.len()],
            _ => stamps[k - 1].clock.clone(),
        };
        c[i] = e.event + 1;
        Some(c)
    }

    /// Whether `a` happens before `b` (a different event).
    pub fn happens_before(&self, a: EventId, b: EventId) -> bool {
        if a == b {
            return false;
        }
        let (Some(i), Some(c)) = (self.slot(a.pid), self.clock(b)) else {
            return false;
        };
        c[i] > a.event
    }

    /// The latest consistent global state in which process `pid` stands before its event
    /// `next` (seed 001): every other process stands before its first event that `pid`'s
    /// event `next` happens before (or at its end when there is none), so that nobody has
    /// received what `pid` has not sent yet, and everyone else is as far on as it can be.
    pub fn cut(&self, pid: i32, next: u64) -> Option<Cut> {
        let i = self.slot(pid)?;
        let frontier = self
            .pids
            .iter()
            .enumerate()
            .map(|(q, p)| {
                if q == i {
                    return (*p, next.min(self.events[q]));
                }
                // Clocks only grow along a process: the first stamp that has seen `next`.
                let stamps = &self.stamps[q];
                let k = stamps.partition_point(|s| s.clock[i] <= next);
                (*p, stamps.get(k).map_or(self.events[q], |s| s.event))
            })
            .collect();
        Some(Cut { frontier })
    }

    /// What process `pid` sent and received through each channel before `cut`.
    pub fn traffic(&self, cut: &Cut, pid: i32) -> BTreeMap<u32, Traffic> {
        let mut out: BTreeMap<u32, Traffic> = BTreeMap::new();
        let Some(before) = cut.before(pid) else {
            return out;
        };
        for t in self
            .transfers
            .iter()
            .filter(|t| t.pid == pid && t.event < before)
        {
            let e = out.entry(t.channel).or_default();
            match t.direction {
                Direction::Send => {
                    e.sends += 1;
                    e.units_sent += t.len;
                }
                Direction::Receive => {
                    e.receives += 1;
                    e.units_received += t.len;
                }
            }
        }
        out
    }

    /// The messages in flight across `cut`: sent in it, received after it.
    pub fn in_flight(&self, cut: &Cut) -> Vec<&Message> {
        self.messages
            .iter()
            .filter(|m| cut.contains(m.send) && !cut.contains(m.receive))
            .collect()
    }
}

/// One order of every event that extends happens-before, as close to the recorder's
/// (`turns`) as it allows: repeatedly, of the processes whose next event has every event it
/// depends on done, the one whose next event the recorder wrote first goes on. Returns, per
/// process, runs of (first event, index in that order).
fn linear_order(
    pids: &[i32],
    index: &HashMap<i32, usize>,
    events: &[u64],
    incoming: &[BTreeMap<u64, Vec<EventId>>],
    turns: &[(i32, u64)],
) -> Vec<Vec<(u64, u64)>> {
    let n = pids.len();
    // The recorder's index of each process's events, as runs.
    let mut recorded: Vec<Vec<(u64, u64)>> = vec![Vec::new(); n];
    let mut done = vec![0u64; n];
    let mut global = 0u64;
    for (pid, k) in turns {
        if let Some(&i) = index.get(pid) {
            recorded[i].push((done[i], global));
            done[i] += k;
        }
        global += k;
    }
    let recorded_index = |i: usize, e: u64| -> u64 {
        let runs = &recorded[i];
        let k = runs.partition_point(|(first, _)| *first <= e);
        match k.checked_sub(1) {
            // Past what the turns list (a stream cut short): last.
            Some(k) if e < done[i] => runs[k].1 + (e - runs[k].0),
            _ => u64::MAX,
        }
    };
    let mut next = vec![0u64; n];
    let mut out: Vec<Vec<(u64, u64)>> = vec![Vec::new(); n];
    let mut at = 0u64;
    loop {
        let ready = |i: usize, next: &[u64]| {
            next[i] < events[i]
                && incoming[i].get(&next[i]).is_none_or(|deps| {
                    deps.iter().all(|d| {
                        index
                            .get(&d.pid)
                            .is_none_or(|&q| q == i || next[q] > d.event)
                    })
                })
        };
        let Some(i) = (0..n)
            .filter(|&i| ready(i, &next))
            .min_by_key(|&i| recorded_index(i, next[i]))
        else {
            break;
        };
        // This process goes on while nothing the recorder wrote earlier is ready elsewhere.
        let others = (0..n)
            .filter(|&q| q != i && ready(q, &next))
            .map(|q| recorded_index(q, next[q]))
            .min()
            .unwrap_or(u64::MAX);
        let first = next[i];
        loop {
            next[i] += 1;
            if !ready(i, &next) || recorded_index(i, next[i]) > others {
                break;
            }
        }
        let len = next[i] - first;
        match out[i].last() {
            Some((f, g)) if g + (first - f) == at => {}
            _ => out[i].push((first, at)),
        }
        at += len;
    }
    // Events left (a cycle, which `clocks` reports): after everything, in stream order.
    for i in 0..n {
        if next[i] < events[i] {
            out[i].push((next[i], at));
            at += events[i] - next[i];
        }
    }
    out
}

/// Matches each channel's receives to the sends whose units they took.
fn match_transfers(links: &Links) -> Vec<Message> {
    let mut by_channel: BTreeMap<u32, (Vec<&Transfer>, Vec<&Transfer>)> = BTreeMap::new();
    for t in &links.transfers {
        let e = by_channel.entry(t.channel).or_default();
        match t.direction {
            Direction::Send => e.0.push(t),
            Direction::Receive => e.1.push(t),
        }
    }
    let mut out = Vec::new();
    for (channel, (mut sends, mut receives)) in by_channel {
        let one_shot = links
            .channel(channel)
            .is_some_and(|c| matches!(c.kind, ChannelKind::Exit | ChannelKind::VforkDone));
        sends.sort_by_key(|t| t.start);
        receives.sort_by_key(|t| t.start);
        if one_shot {
            // Every wait for one end takes the same unit.
            for s in &sends {
                for r in &receives {
                    out.push(message(channel, s, r, 0..1));
                }
            }
            continue;
        }
        // Both sides are sorted by start: walk them together, one message per overlap.
        let mut k = 0;
        for r in &receives {
            let (r0, r1) = (r.start, r.start + r.len);
            while k < sends.len() && sends[k].start + sends[k].len <= r0 {
                k += 1;
            }
            let mut j = k;
            while j < sends.len() && sends[j].start < r1 {
                let s = sends[j];
                let units = s.start.max(r0)..(s.start + s.len).min(r1);
                if !units.is_empty() {
                    out.push(message(channel, s, r, units));
                }
                j += 1;
            }
        }
    }
    out
}

fn message(channel: u32, s: &Transfer, r: &Transfer, units: Range<u64>) -> Message {
    Message {
        channel,
        send: EventId {
            pid: s.pid,
            event: s.event,
        },
        receive: EventId {
            pid: r.pid,
            event: r.event,
        },
        units,
    }
}

/// Vector clocks at every event with incoming edges, in an order that respects them: a
/// process's next stamped event is done once every event it depends on has its clock (all
/// the stamps of that process up to that event are done).
fn clocks(
    pids: &[i32],
    index: &HashMap<i32, usize>,
    incoming: &[BTreeMap<u64, Vec<EventId>>],
) -> Result<Vec<Vec<Stamp>>, CausalError> {
    let n = pids.len();
    let todo: Vec<Vec<(u64, &Vec<EventId>)>> = incoming
        .iter()
        .map(|m| m.iter().map(|(e, d)| (*e, d)).collect())
        .collect();
    let mut stamps: Vec<Vec<Stamp>> = vec![Vec::new(); n];
    loop {
        let mut progress = false;
        let mut left = false;
        for p in 0..n {
            while let Some(&(event, deps)) = todo[p].get(stamps[p].len()) {
                // Every dependency's clock must be known: its process's stamps up to it done.
                let ready = deps.iter().all(|d| {
                    let q = index[&d.pid];
                    q == p
                        || todo[q]
                            .get(stamps[q].len())
                            .is_none_or(|(next, _)| *next > d.event)
                });
                if !ready {
                    left = true;
                    break;
                }
                let mut clock = stamps[p]
                    .last()
                    .map_or_else(|| vec![0; n], |s| s.clock.clone());
                for d in deps {
                    let q = index[&d.pid];
                    if q == p {
                        // A message to oneself adds nothing to one's own order.
                        continue;
                    }
                    let k = stamps[q].partition_point(|s| s.event <= d.event);
                    if let Some(s) = k.checked_sub(1).map(|k| &stamps[q][k]) {
                        for (c, v) in clock.iter_mut().zip(&s.clock) {
                            *c = (*c).max(*v);
                        }
                    }
                    clock[q] = clock[q].max(d.event + 1);
                }
                clock[p] = event + 1;
                stamps[p].push(Stamp { event, clock });
                progress = true;
            }
        }
        if !left {
            return Ok(stamps);
        }
        if !progress {
            let (p, event) = todo
                .iter()
                .enumerate()
                .find_map(|(p, t)| t.get(stamps[p].len()).map(|x| (p, x.0)))
                .unwrap_or((0, 0));
            return Err(CausalError::Cycle {
                pid: pids[p],
                event,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_calls_of_a_listed_batch_are_steps_of_their_own() {
        // Events 0..10; event 2 a batch of 3 calls, event 5 one of 4.
        let s = Steps::new(vec![(5, 4), (2, 3)]);
        let p = |event, call| Point { event, call };
        let want = [
            (p(0, 0), 0),
            (p(2, 0), 2),
            (p(2, 2), 4),
            (p(3, 0), 5),
            (p(4, 0), 6),
            (p(5, 0), 7),
            (p(5, 3), 10),
            (p(6, 0), 11),
            (p(9, 0), 14),
        ];
        for (point, step) in want {
            assert_eq!(s.step(point), step, "{point:?}");
            assert_eq!(s.point(step), point, "step {step}");
        }
        // After a batch's last call is the next event; a call of an event that is no
        // listed batch is the event.
        assert_eq!(s.step(p(2, 3)), s.step(p(3, 0)));
        assert_eq!(s.step(p(4, 7)), s.step(p(4, 0)));
        assert_eq!((s.calls(5), s.calls(4)), (Some(4), None));
    }
}
