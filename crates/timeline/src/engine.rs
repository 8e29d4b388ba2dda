//! The debugger-event engine (seed 002, RDB): every kind of stop is a *specification* (when it
//! holds) plus an *action* (what happens then), with one life cycle.
//!
//! Life cycle: an installed event is *unmatched*; when its specification holds it is
//! *matched*, then *requeued* (it can match again: a breakpoint, a periodic event) or *spent*
//! (a one-shot event: a quantum event, a temporary breakpoint). When time goes back
//! ([`Engine::rewind`]) every event spent after the new time is unmatched again, and periodic
//! events count from there.
//!
//! Times are event numbers (recorded events replayed); where the trace counts ticks, tick
//! quanta, periodic tick events and era bounds take the running thread's tick count too.
//!
//! The engine decides *when* an event applies; the breakpoint table still decides conditions
//! and ignore counts of the breakpoints that PC and era events stand for.

use std::collections::BTreeMap;

use crate::{Position, TimelineError};

/// A debugger event's number (its own numbering, shown by `info events`).
pub type EventId = u32;

/// The start of a quantum (seed 002: the instructions a thread runs while its instruction
/// counter holds one value): `event` events replayed and the thread running towards the next
/// one at `ticks` (None: at the event itself, before any tick of that stretch).
///
/// Invariant: between two events one thread runs, so moments of one event compare by the
/// ticks of that one thread; the derived order (event, then ticks, None first) is time's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Moment {
    /// Events replayed.
    pub event: u64,
    /// The running thread's tick count (None: the event itself).
    pub ticks: Option<u64>,
}

impl Moment {
    /// The moment event `event` has been replayed.
    pub fn event(event: u64) -> Moment {
        Moment { event, ticks: None }
    }

    /// The moment of position `p` (the start of its quantum).
    pub fn of(p: &Position) -> Moment {
        Moment {
            event: p.event,
            ticks: p.ticks,
        }
    }
}

/// `event 12`, or `event 12 tick 5093`.
impl std::fmt::Display for Moment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.ticks {
            Some(t) => write!(f, "event {} tick {t}", self.event),
            None => write!(f, "event {}", self.event),
        }
    }
}

/// When an event holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Spec {
    /// User breakpoint `breakpoint` is hit (its locations are the table's).
    Pc {
        /// The breakpoint's number.
        breakpoint: u32,
    },
    /// User breakpoint (or watchpoint) `breakpoint` is hit at a moment in `from..to` (an era
    /// breakpoint: seed 002's era event, a PC event over a range of quanta).
    Era {
        /// The breakpoint's number.
        breakpoint: u32,
        /// First moment at which it applies.
        from: Moment,
        /// First moment at which it no longer applies (None: to the end).
        to: Option<Moment>,
    },
    /// The replay reaches time `time` (a quantum event).
    Quantum {
        /// The time.
        time: u64,
    },
    /// A thread has counted `ticks` ticks (a quantum event in instruction-counter time: ticks
    /// are counted per thread, so the thread is part of the time).
    Tick {
        /// The thread, by its recorded thread id.
        thread: i32,
        /// Its tick count.
        ticks: u64,
    },
    /// The replay passes one exact instant (a bookmark's control point).
    ControlPoint {
        /// The instant.
        position: Position,
    },
    /// Every `every` units of time, counted from `start` (a periodic event).
    Periodic {
        /// The period (at least 1).
        every: u64,
        /// The time it was installed at.
        start: u64,
    },
    /// Whenever thread `thread` has counted a multiple of `every` ticks (a periodic event in
    /// instruction-counter time, seed 002's `[s×k, (s+1)×k, …)`). Ticks are counted per
    /// thread, so the period is one thread's: its firings fall at the same instruction
    /// instances in every replay, whatever the other threads do meanwhile.
    PeriodicTicks {
        /// The thread, by its recorded thread id.
        thread: i32,
        /// The period in ticks (at least 1).
        every: u64,
    },
}

/// What happens when an event holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Stop the program (and report why).
    Stop,
    /// Print with this format and these argument expressions, then go on (`dprintf`).
    Print {
        /// The format, as `printf` takes it.
        format: String,
        /// The expressions.
        args: Vec<String>,
    },
    /// Run these commands, then go on (`every K COMMAND`).
    Commands(Vec<String>),
    /// Nothing happens; the instant is kept under this name (`bookmark`).
    Mark(String),
}

/// Where an event is in its life cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Life {
    /// Installed, its specification has not held yet (since the last rewind).
    Unmatched,
    /// Its specification holds now; its action runs.
    Matched,
    /// It matched and waits to match again.
    Requeued,
    /// It matched and will not again (unless time goes back).
    Spent,
}

/// One installed event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DebuggerEvent {
    /// Its number.
    pub id: EventId,
    /// When it holds.
    pub spec: Spec,
    /// What it does.
    pub action: Action,
    /// A one-shot event is spent after its first match.
    pub once: bool,
    /// Its life-cycle state.
    pub life: Life,
    /// The times it matched at (in order; rewinding forgets the later ones).
    pub matched_at: Vec<u64>,
}

/// All installed debugger events.
#[derive(Debug, Clone, Default)]
pub struct Engine {
    events: BTreeMap<EventId, DebuggerEvent>,
    next: EventId,
}

impl Engine {
    /// An engine with no events.
    pub fn new() -> Engine {
        Engine::default()
    }

    /// Installs an event; returns its number.
    pub fn add(&mut self, spec: Spec, action: Action, once: bool) -> EventId {
        self.next += 1;
        let id = self.next;
        self.events.insert(
            id,
            DebuggerEvent {
                id,
                spec,
                action,
                once,
                life: Life::Unmatched,
                matched_at: Vec::new(),
            },
        );
        id
    }

    /// Removes an event.
    pub fn remove(&mut self, id: EventId) -> Result<DebuggerEvent, TimelineError> {
        self.events
            .remove(&id)
            .ok_or(TimelineError::NoSuchEvent(id))
    }

    /// Removes every event that stands for user breakpoint `number`.
    pub fn forget_breakpoint(&mut self, number: u32) {
        self.events
            .retain(|_, e| breakpoint_of(&e.spec) != Some(number));
    }

    /// The event `id`.
    pub fn get(&self, id: EventId) -> Option<&DebuggerEvent> {
        self.events.get(&id)
    }

    /// Every event, by number.
    pub fn iter(&self) -> impl Iterator<Item = &DebuggerEvent> {
        self.events.values()
    }

    /// What user breakpoint `number` prints when it is a `dprintf`: (format, arguments).
    pub fn print_of(&self, number: u32) -> Option<(&str, &[String])> {
        self.events
            .values()
            .find_map(|e| match (&e.spec, &e.action) {
                (Spec::Pc { breakpoint }, Action::Print { format, args })
                    if *breakpoint == number =>
                {
                    Some((format.as_str(), args.as_slice()))
                }
                _ => None,
            })
    }

    /// The era of user breakpoint `number`, if it has one: (from, to).
    pub fn era_of(&self, number: u32) -> Option<(Moment, Option<Moment>)> {
        self.events.values().find_map(|e| match e.spec {
            Spec::Era {
                breakpoint,
                from,
                to,
            } if breakpoint == number => Some((from, to)),
            _ => None,
        })
    }

    /// Whether the hit of user breakpoint `number` at `now` is one: a breakpoint that an
    /// era event stands for applies only within its era; the others always do.
    pub fn admits(&self, number: u32, now: Moment) -> bool {
        self.events.values().all(|e| match e.spec {
            Spec::Era {
                breakpoint,
                from,
                to,
            } if breakpoint == number => now >= from && to.is_none_or(|t| now < t),
            _ => true,
        })
    }

    /// User breakpoint `number` was hit at `time` (and admitted): the PC and era events
    /// standing for it match; returns their actions (Stop when none has another action).
    pub fn match_breakpoint(&mut self, number: u32, time: u64) -> Vec<(EventId, Action)> {
        let hits: Vec<EventId> = self
            .events
            .values()
            .filter(|e| e.life != Life::Spent && breakpoint_of(&e.spec) == Some(number))
            .map(|e| e.id)
            .collect();
        let mut out: Vec<(EventId, Action)> = hits
            .into_iter()
            .filter_map(|id| self.fire(id, time))
            .collect();
        if out.is_empty() {
            out.push((0, Action::Stop));
        }
        out
    }

    /// The replay reached `time` (between two events): quantum and periodic events that
    /// hold match; returns their actions.
    pub fn match_time(&mut self, time: u64) -> Vec<(EventId, Action)> {
        let due: Vec<EventId> = self
            .events
            .values()
            .filter(|e| e.life != Life::Spent && time_holds(e, time))
            .map(|e| e.id)
            .collect();
        due.into_iter()
            .filter_map(|id| self.fire(id, time))
            .collect()
    }

    /// The control point at `position` was passed: bookmarks there match.
    pub fn match_position(&mut self, position: Position) -> Vec<(EventId, Action)> {
        let due: Vec<EventId> = self
            .events
            .values()
            .filter(|e| {
                e.life != Life::Spent
                    && matches!(e.spec, Spec::ControlPoint { position: p } if p == position)
            })
            .map(|e| e.id)
            .collect();
        due.into_iter()
            .filter_map(|id| self.fire(id, position.event))
            .collect()
    }

    /// The tick counts to stop at next: (recorded thread id, tick count) for each tick
    /// quantum still to come and, for each periodic tick event, the next multiple of its
    /// period after its thread's count now (`now` tells it; None: unknown, no stop).
    pub fn tick_goals(&self, now: &mut dyn FnMut(i32) -> Option<u64>) -> Vec<(i32, u64)> {
        self.events
            .values()
            .filter(|e| e.life != Life::Spent)
            .filter_map(|e| match e.spec {
                Spec::Tick { thread, ticks } => Some((thread, ticks)),
                Spec::PeriodicTicks { thread, every } => {
                    let every = every.max(1);
                    now(thread).map(|t| (thread, (t / every + 1) * every))
                }
                _ => None,
            })
            .collect()
    }

    /// Thread `thread` has counted `ticks` ticks, `time` events replayed: the tick quanta
    /// for that instant and the periodic tick events due there match; returns their actions.
    pub fn match_tick(&mut self, thread: i32, ticks: u64, time: u64) -> Vec<(EventId, Action)> {
        let due: Vec<EventId> = self
            .events
            .values()
            .filter(|e| {
                e.life != Life::Spent
                    && match e.spec {
                        Spec::Tick { .. } => e.spec == Spec::Tick { thread, ticks },
                        Spec::PeriodicTicks { thread: t, every } => {
                            t == thread && ticks > 0 && ticks.is_multiple_of(every.max(1))
                        }
                        _ => false,
                    }
            })
            .map(|e| e.id)
            .collect();
        due.into_iter()
            .filter_map(|id| self.fire(id, time))
            .collect()
    }

    /// Whether some quantum or periodic event wants the replay stopped at `time`, without
    /// matching it (the replay asks this at every event).
    pub fn wants_time(&self, time: u64) -> bool {
        self.events
            .values()
            .any(|e| e.life != Life::Spent && time_holds(e, time))
    }

    /// Time went back to `time`: what matched later is undone — spent events come back,
    /// and periodic events count again from there.
    pub fn rewind(&mut self, time: u64) {
        for e in self.events.values_mut() {
            e.matched_at.retain(|&t| t <= time);
            e.life = match e.matched_at.last() {
                None => Life::Unmatched,
                Some(_) if e.once => Life::Spent,
                Some(_) => Life::Requeued,
            };
        }
    }

    fn fire(&mut self, id: EventId, time: u64) -> Option<(EventId, Action)> {
        let e = self.events.get_mut(&id)?;
        e.life = Life::Matched;
        e.matched_at.push(time);
        let action = e.action.clone();
        e.life = if e.once { Life::Spent } else { Life::Requeued };
        Some((id, action))
    }
}

/// The user breakpoint an event stands for.
fn breakpoint_of(spec: &Spec) -> Option<u32> {
    match spec {
        Spec::Pc { breakpoint } | Spec::Era { breakpoint, .. } => Some(*breakpoint),
        _ => None,
    }
}

/// Whether a time-specified event holds at `time`. A periodic event holds at the first
/// time at or after each multiple of its period (the replay does not stop at every event:
/// several recorded events can pass with no code run between them).
fn time_holds(e: &DebuggerEvent, time: u64) -> bool {
    match e.spec {
        Spec::Quantum { time: t } => time >= t && e.matched_at.is_empty(),
        Spec::Periodic { every, start } => {
            let every = every.max(1);
            if time <= start {
                return false;
            }
            let due = start + (time - start) / every * every;
            due > start && e.matched_at.last().is_none_or(|&last| last < due)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn era_admits_only_within_its_range() {
        let mut g = Engine::new();
        g.add(
            Spec::Era {
                breakpoint: 2,
                from: Moment::event(10),
                to: Some(Moment::event(20)),
            },
            Action::Stop,
            false,
        );
        assert!(!g.admits(2, Moment::event(9)));
        assert!(g.admits(2, Moment::event(10)));
        assert!(g.admits(2, Moment::event(19)));
        assert!(!g.admits(
            2,
            Moment {
                event: 20,
                ticks: Some(0)
            }
        ));
        assert!(
            g.admits(3, Moment::event(0)),
            "other breakpoints are not concerned"
        );
    }

    #[test]
    fn an_era_bounded_by_ticks_starts_and_ends_inside_an_event_stretch() {
        let at = |event, ticks| Moment {
            event,
            ticks: Some(ticks),
        };
        let mut g = Engine::new();
        g.add(
            Spec::Era {
                breakpoint: 1,
                from: at(5, 1000),
                to: Some(at(7, 20)),
            },
            Action::Stop,
            false,
        );
        assert!(!g.admits(1, at(5, 999)));
        assert!(!g.admits(1, Moment::event(5)));
        assert!(g.admits(1, at(5, 1000)));
        assert!(g.admits(1, at(6, 3)), "a later event, any thread");
        assert!(g.admits(1, at(7, 19)));
        assert!(!g.admits(1, at(7, 20)));
        assert!(!g.admits(1, at(8, 0)));
    }

    #[test]
    fn periodic_ticks_stop_at_each_multiple_of_their_threads_count() {
        let mut g = Engine::new();
        let id = g.add(
            Spec::PeriodicTicks {
                thread: 7,
                every: 1000,
            },
            Action::Commands(vec!["print i".into()]),
            false,
        );
        let mut now = |t: i32| (t == 7).then_some(2500);
        assert_eq!(g.tick_goals(&mut now), vec![(7, 3000)]);
        let mut exact = |_: i32| Some(3000);
        assert_eq!(
            g.tick_goals(&mut exact),
            vec![(7, 4000)],
            "past the one it stands at"
        );
        let mut unknown = |_: i32| None;
        assert!(g.tick_goals(&mut unknown).is_empty());
        assert!(
            g.match_tick(8, 3000, 1).is_empty(),
            "another thread's ticks"
        );
        assert!(g.match_tick(7, 3001, 1).is_empty(), "not a multiple");
        assert_eq!(g.match_tick(7, 3000, 1).len(), 1);
        assert_eq!(g.get(id).map(|e| e.life), Some(Life::Requeued));
        assert_eq!(g.match_tick(7, 4000, 1).len(), 1);
    }

    #[test]
    fn a_tick_quantum_matches_its_thread_once_until_time_goes_back() {
        let mut g = Engine::new();
        let id = g.add(
            Spec::Tick {
                thread: 7,
                ticks: 500,
            },
            Action::Stop,
            true,
        );
        let mut now = |_: i32| Some(0);
        assert_eq!(g.tick_goals(&mut now), vec![(7, 500)]);
        assert!(g.match_tick(8, 500, 3).is_empty(), "another thread's ticks");
        assert_eq!(g.match_tick(7, 500, 3), vec![(id, Action::Stop)]);
        assert!(g.tick_goals(&mut now).is_empty(), "spent");
        g.rewind(2);
        assert_eq!(
            g.tick_goals(&mut now),
            vec![(7, 500)],
            "back before it matched"
        );
    }

    #[test]
    fn periodic_fires_once_per_period_and_again_after_rewind() {
        let mut g = Engine::new();
        let id = g.add(
            Spec::Periodic {
                every: 10,
                start: 0,
            },
            Action::Commands(vec!["print x".into()]),
            false,
        );
        let fired: Vec<u64> = (0..=35).filter(|&t| !g.match_time(t).is_empty()).collect();
        assert_eq!(fired, vec![10, 20, 30]);
        // Several events can pass at once: the next stop after a multiple fires.
        let mut h = Engine::new();
        h.add(
            Spec::Periodic {
                every: 10,
                start: 0,
            },
            Action::Stop,
            false,
        );
        assert!(h.match_time(7).is_empty());
        assert_eq!(h.match_time(13).len(), 1);
        assert!(h.match_time(15).is_empty());
        g.rewind(15);
        assert_eq!(g.get(id).map(|e| e.matched_at.clone()), Some(vec![10]));
        assert_eq!(g.get(id).map(|e| e.life), Some(Life::Requeued));
        assert!(!g.match_time(20).is_empty());
    }

    #[test]
    fn quantum_is_spent_then_comes_back_when_time_goes_back() {
        let mut g = Engine::new();
        let id = g.add(Spec::Quantum { time: 5 }, Action::Stop, true);
        assert!(!g.wants_time(4));
        assert!(g.wants_time(5));
        assert_eq!(g.match_time(6).len(), 1);
        assert_eq!(g.get(id).map(|e| e.life), Some(Life::Spent));
        assert!(g.match_time(7).is_empty());
        g.rewind(3);
        assert_eq!(g.get(id).map(|e| e.life), Some(Life::Unmatched));
        assert_eq!(g.match_time(5).len(), 1);
    }

    #[test]
    fn dprintf_acts_and_plain_breakpoints_stop() {
        let mut g = Engine::new();
        g.add(
            Spec::Pc { breakpoint: 4 },
            Action::Print {
                format: "x=%d\n".into(),
                args: vec!["x".into()],
            },
            false,
        );
        assert!(matches!(
            g.match_breakpoint(4, 1)[0].1,
            Action::Print { .. }
        ));
        assert_eq!(g.match_breakpoint(5, 1), vec![(0, Action::Stop)]);
        g.forget_breakpoint(4);
        assert_eq!(g.match_breakpoint(4, 1), vec![(0, Action::Stop)]);
    }
}
