//! The step-over protocol: how threads stopped at planted breakpoints get past them.
//!
//! [`Protocol`] is a pure state machine. The tracer feeds it one [`Event`] at a time and
//! executes the [`Command`]s that come back, in order; the protocol never touches a process.
//! The model checker in [`crate::model`] drives the very same code through every interleaving
//! of a small multi-threaded world, so what is checked is what runs.
//!
//! Invariant (seed 000): exactly one breakpoint action ([`Command::ReportHit`]) per successful
//! execution of the breakpoint's instruction, per thread. A thread is *in the breakpoint* from
//! its trap (the hit is reported) until it is past the site; a second trap of a thread that is
//! in the breakpoint is an error ([`ProtocolError::TrapInBreakpoint`]).
//!
//! The three strategies:
//! - [`Strategy::Naive`] lifts the trap, single-steps the thread *while the others run*, and
//!   re-plants. Another thread can run through the lifted site unseen: the model checker finds
//!   that trace. It exists only to be refuted; never drive a live process with it.
//! - [`Strategy::NoSwitch`] (seed 000's fix) lifts the trap and single-steps the thread while
//!   every other thread stays stopped, one thread after another, re-plants, then resumes all.
//! - [`Strategy::Displaced`] leaves the trap planted: the thread executes a relocated copy of
//!   the instruction ([`crate::displaced`]) and the others run freely. Sites whose instruction
//!   cannot be relocated fall back to `NoSwitch`.
//!
//! The tracer's side of the contract:
//! - When a thread executes a planted int3, rewind its pc to the site and send
//!   [`Event::Trapped`]; the [`Command::ReportHit`] that comes back is the breakpoint action
//!   (evaluate conditions, count the hit, decide whether to stop).
//! - After an all-stop, when the program is to run again, send [`Event::Resume`] listing every
//!   thread whose pc is at a planted site. Threads that trapped there are stepped over;
//!   threads that stopped there *without* trapping (interrupted just before the int3) are simply
//!   resumed: they will trap and be reported like any other hit.
//! - For a hit that does not stop the program (false condition, ignore count), send
//!   [`Event::PassOn`] for the trapping thread alone, with the other threads still running.
//!   The answer is either a displaced step and a resume of that thread, or [`Command::StopAll`]:
//!   stop every thread (delivering [`Event::Trapped`] for any that trap meanwhile), then send
//!   [`Event::Resume`].
//! - [`Command::SingleStep`] asks for exactly one instruction of that thread; report
//!   [`Event::StepDone`] once it has executed. Under `NoSwitch` and `Displaced` nothing else is
//!   running then, so the tracer may wait for it on the spot.
//! - [`Event::Gone`] for a thread that exited.

use std::collections::VecDeque;
use std::fmt;

use thiserror::Error;

/// A thread, as the protocol sees it: an opaque id chosen by the tracer (the kernel's tid).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tid(pub u32);

impl fmt::Display for Tid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// How threads step over a planted site.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// Seed 000's broken candidate: lift, step this thread while the others run, re-plant.
    /// Kept for the model checker only.
    Naive,
    /// Seed 000's fix: lift, step this thread with every other thread stopped, re-plant.
    NoSwitch,
    /// Execute a relocated copy of the instruction; the trap stays planted. Sites that cannot
    /// be relocated fall back to `NoSwitch`.
    Displaced,
}

/// A thread stopped with its pc at a planted site.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AtSite {
    /// The thread.
    pub tid: Tid,
    /// The site's address (the thread's pc).
    pub site: u64,
    /// A relocated copy of the site's instruction exists ([`crate::displaced::Plan`] is not
    /// `Inline`). Only `Displaced` looks at it.
    pub displaceable: bool,
}

/// What happened, as the tracer tells the protocol.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Event {
    /// `tid` executed the trap planted at `site`; the tracer has rewound its pc to `site`.
    Trapped {
        /// The thread.
        tid: Tid,
        /// The site.
        site: u64,
    },
    /// Every thread is stopped and the program is to run again. `at_sites` lists the threads
    /// whose pc is at a planted site, in the order they should be stepped.
    Resume {
        /// Threads at planted sites.
        at_sites: Vec<AtSite>,
    },
    /// A hit that does not stop the program: this thread alone is stopped at its site, the
    /// others may be running. Get it past the site and running again.
    PassOn(AtSite),
    /// The single-step asked for by [`Command::SingleStep`] completed.
    StepDone(Tid),
    /// The thread exited or vanished.
    Gone(Tid),
}

/// What the tracer must do, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Command {
    /// The breakpoint action: this thread hit this site. Evaluate conditions, count, decide
    /// whether to stop.
    ReportHit {
        /// The thread.
        tid: Tid,
        /// The site.
        site: u64,
    },
    /// Write the original byte back at the site.
    Lift(u64),
    /// Write the trap at the site again.
    Plant(u64),
    /// Let this thread execute exactly one instruction (leaving every other thread as it is);
    /// send [`Event::StepDone`] when it has.
    SingleStep(Tid),
    /// Point this thread at the relocated copy of the site's instruction (write the copy's
    /// address into its pc, or emulate the call). Do not resume it: a later command does.
    RunDisplaced(Tid, u64),
    /// Resume every stopped thread.
    ResumeAll,
    /// Resume every stopped thread but this one (`Naive` only).
    ResumeAllExcept(Tid),
    /// Resume this thread.
    Resume(Tid),
    /// Stop every running thread, delivering [`Event::Trapped`] for any that trap meanwhile,
    /// then send [`Event::Resume`].
    StopAll,
}

/// An event the protocol did not expect: a bug in the tracer, or a broken invariant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum ProtocolError {
    /// A thread trapped while it was single-stepping over the site.
    #[error("thread {0} trapped while stepping over a breakpoint")]
    TrapWhileStepping(Tid),
    /// A thread trapped while it was already in the breakpoint (its earlier hit not yet
    /// stepped over): seed 000's assertion.
    #[error("thread {tid} trapped at {site:#x} while still in the breakpoint it hit before")]
    TrapInBreakpoint {
        /// The thread.
        tid: Tid,
        /// Where it trapped.
        site: u64,
    },
    /// A resume or another step-over while this thread is still stepping over a lifted site
    /// (or waiting for its turn to).
    #[error("a step-over was asked for while thread {0} is stepping over a breakpoint")]
    Busy(Tid),
    /// A step completion for a thread that was not stepping.
    #[error("unexpected step completion of thread {0}")]
    UnexpectedStep(Tid),
}

/// What to do once the last inline step is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Finish {
    /// All-stop resume: everyone.
    All,
    /// A passed-on hit: only this thread (the others never stopped).
    Thread(Tid),
}

/// The step-over protocol's state.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Protocol {
    strategy: Strategy,
    /// Threads that trapped (hit reported) and are not past their site, sorted by thread.
    in_break: Vec<(Tid, u64)>,
    /// Threads waiting for their inline step, in order.
    queue: VecDeque<(Tid, u64)>,
    /// The thread single-stepping over a lifted site.
    stepping: Option<(Tid, u64)>,
    /// The site currently lifted, if any (several threads may step over it in turn).
    lifted: Option<u64>,
    finish: Finish,
}

impl Protocol {
    /// An idle protocol: no thread in a breakpoint, every site planted.
    pub fn new(strategy: Strategy) -> Protocol {
        Protocol {
            strategy,
            in_break: Vec::new(),
            queue: VecDeque::new(),
            stepping: None,
            lifted: None,
            finish: Finish::All,
        }
    }

    /// The strategy.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// The thread single-stepping over a lifted site, and the site.
    pub fn stepping(&self) -> Option<(Tid, u64)> {
        self.stepping
    }

    /// The site `tid` trapped at, if it is in that breakpoint (hit reported, not yet past).
    pub fn in_breakpoint(&self, tid: Tid) -> Option<u64> {
        self.find(tid).map(|i| self.in_break[i].1)
    }

    /// No step in progress, none queued, every site planted.
    pub fn is_idle(&self) -> bool {
        self.stepping.is_none() && self.queue.is_empty() && self.lifted.is_none()
    }

    fn find(&self, tid: Tid) -> Option<usize> {
        self.in_break.binary_search_by_key(&tid, |e| e.0).ok()
    }

    fn take(&mut self, tid: Tid, site: u64) -> bool {
        match self.find(tid) {
            Some(i) if self.in_break[i].1 == site => {
                self.in_break.remove(i);
                true
            }
            Some(i) => {
                // In a breakpoint elsewhere: it left that one by other means (`jump`...).
                self.in_break.remove(i);
                false
            }
            None => false,
        }
    }

    fn busy(&self) -> Result<(), ProtocolError> {
        match self.stepping.or_else(|| self.queue.front().copied()) {
            Some((t, _)) => Err(ProtocolError::Busy(t)),
            None => Ok(()),
        }
    }

    /// Feeds one event in; returns the commands to execute, in order.
    pub fn handle(&mut self, event: Event) -> Result<Vec<Command>, ProtocolError> {
        match event {
            Event::Trapped { tid, site } => self.trapped(tid, site),
            Event::Resume { at_sites } => self.resume(&at_sites),
            Event::PassOn(at) => self.pass_on(at),
            Event::StepDone(tid) => match self.stepping {
                Some((t, _)) if t == tid => Ok(self.step_done()),
                _ => Err(ProtocolError::UnexpectedStep(tid)),
            },
            Event::Gone(tid) => {
                if let Some(i) = self.find(tid) {
                    self.in_break.remove(i);
                }
                self.queue.retain(|e| e.0 != tid);
                match self.stepping {
                    Some((t, _)) if t == tid => Ok(self.step_done()),
                    _ => Ok(Vec::new()),
                }
            }
        }
    }

    fn trapped(&mut self, tid: Tid, site: u64) -> Result<Vec<Command>, ProtocolError> {
        if matches!(self.stepping, Some((t, _)) if t == tid) {
            return Err(ProtocolError::TrapWhileStepping(tid));
        }
        if self.queue.iter().any(|e| e.0 == tid) {
            return Err(ProtocolError::TrapInBreakpoint { tid, site });
        }
        match self.in_break.binary_search_by_key(&tid, |e| e.0) {
            Ok(_) => Err(ProtocolError::TrapInBreakpoint { tid, site }),
            Err(i) => {
                self.in_break.insert(i, (tid, site));
                Ok(vec![Command::ReportHit { tid, site }])
            }
        }
    }

    fn resume(&mut self, at_sites: &[AtSite]) -> Result<Vec<Command>, ProtocolError> {
        self.busy()?;
        // Only threads that trapped where they stand are stepped over; the rest are resumed
        // and trap (and are reported) when they execute the int3.
        let mut over = Vec::new();
        for at in at_sites {
            if self.take(at.tid, at.site) {
                over.push(*at);
            }
        }
        // Threads still listed as in a breakpoint are no longer at it (a `jump`, a removed
        // site): they run on as they are.
        self.in_break.clear();
        let mut cmds = Vec::new();
        match self.strategy {
            Strategy::Naive => match over.first() {
                Some(at) => {
                    self.stepping = Some((at.tid, at.site));
                    self.lifted = Some(at.site);
                    self.finish = Finish::Thread(at.tid);
                    cmds.extend([
                        Command::Lift(at.site),
                        Command::SingleStep(at.tid),
                        Command::ResumeAllExcept(at.tid),
                    ]);
                }
                None => cmds.push(Command::ResumeAll),
            },
            Strategy::NoSwitch | Strategy::Displaced => {
                for at in over {
                    if self.strategy == Strategy::Displaced && at.displaceable {
                        cmds.push(Command::RunDisplaced(at.tid, at.site));
                    } else {
                        self.queue.push_back((at.tid, at.site));
                    }
                }
                self.finish = Finish::All;
                self.next_step(&mut cmds);
            }
        }
        Ok(cmds)
    }

    fn pass_on(&mut self, at: AtSite) -> Result<Vec<Command>, ProtocolError> {
        self.busy()?;
        if self.in_breakpoint(at.tid) != Some(at.site) {
            // Not in this breakpoint: resumed, it executes the int3 and is reported.
            self.take(at.tid, at.site);
            return Ok(vec![Command::Resume(at.tid)]);
        }
        Ok(match self.strategy {
            Strategy::Displaced if at.displaceable => {
                self.take(at.tid, at.site);
                vec![
                    Command::RunDisplaced(at.tid, at.site),
                    Command::Resume(at.tid),
                ]
            }
            Strategy::Naive => {
                self.take(at.tid, at.site);
                self.stepping = Some((at.tid, at.site));
                self.lifted = Some(at.site);
                self.finish = Finish::Thread(at.tid);
                vec![Command::Lift(at.site), Command::SingleStep(at.tid)]
            }
            // The others must not run while the trap is lifted: stop them all first; the
            // thread stays in the breakpoint until the `Resume` that follows.
            Strategy::NoSwitch | Strategy::Displaced => vec![Command::StopAll],
        })
    }

    fn step_done(&mut self) -> Vec<Command> {
        self.stepping = None;
        let mut cmds = Vec::new();
        self.next_step(&mut cmds);
        cmds
    }

    /// Starts the next queued inline step, or re-plants and lets everyone go.
    fn next_step(&mut self, cmds: &mut Vec<Command>) {
        if let Some((tid, site)) = self.queue.pop_front() {
            if self.lifted != Some(site) {
                if let Some(old) = self.lifted.take() {
                    cmds.push(Command::Plant(old));
                }
                cmds.push(Command::Lift(site));
                self.lifted = Some(site);
            }
            self.stepping = Some((tid, site));
            cmds.push(Command::SingleStep(tid));
            return;
        }
        if let Some(old) = self.lifted.take() {
            cmds.push(Command::Plant(old));
        }
        cmds.push(match self.finish {
            Finish::All => Command::ResumeAll,
            Finish::Thread(t) => Command::Resume(t),
        });
        self.finish = Finish::All;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Tid = Tid(10);
    const B: Tid = Tid(11);
    const C: Tid = Tid(12);
    const S: u64 = 0x1000;
    const T: u64 = 0x2000;

    fn at(tid: Tid, site: u64, displaceable: bool) -> AtSite {
        AtSite {
            tid,
            site,
            displaceable,
        }
    }

    #[test]
    fn noswitch_steps_several_threads_one_after_another() {
        let mut p = Protocol::new(Strategy::NoSwitch);
        for (t, s) in [(A, S), (B, S), (C, T)] {
            assert_eq!(
                p.handle(Event::Trapped { tid: t, site: s }).unwrap(),
                vec![Command::ReportHit { tid: t, site: s }]
            );
        }
        let cmds = p
            .handle(Event::Resume {
                at_sites: vec![at(A, S, true), at(B, S, true), at(C, T, true)],
            })
            .unwrap();
        assert_eq!(cmds, vec![Command::Lift(S), Command::SingleStep(A)]);
        // Same site: stays lifted for the next thread.
        assert_eq!(
            p.handle(Event::StepDone(A)).unwrap(),
            vec![Command::SingleStep(B)]
        );
        assert_eq!(
            p.handle(Event::StepDone(B)).unwrap(),
            vec![Command::Plant(S), Command::Lift(T), Command::SingleStep(C)]
        );
        assert_eq!(
            p.handle(Event::StepDone(C)).unwrap(),
            vec![Command::Plant(T), Command::ResumeAll]
        );
        assert!(p.is_idle());
        assert_eq!(p.in_breakpoint(A), None);
    }

    #[test]
    fn threads_at_a_site_that_did_not_trap_are_just_resumed() {
        let mut p = Protocol::new(Strategy::NoSwitch);
        assert_eq!(
            p.handle(Event::Resume {
                at_sites: vec![at(A, S, false)]
            })
            .unwrap(),
            vec![Command::ResumeAll]
        );
        // A thread that trapped and then moved elsewhere (a `jump`) is not stepped either.
        p.handle(Event::Trapped { tid: B, site: S }).unwrap();
        assert_eq!(
            p.handle(Event::Resume { at_sites: vec![] }).unwrap(),
            vec![Command::ResumeAll]
        );
        assert_eq!(p.in_breakpoint(B), None);
    }

    #[test]
    fn displaced_moves_relocatable_sites_and_steps_the_rest_inline() {
        let mut p = Protocol::new(Strategy::Displaced);
        p.handle(Event::Trapped { tid: A, site: S }).unwrap();
        p.handle(Event::Trapped { tid: B, site: T }).unwrap();
        let cmds = p
            .handle(Event::Resume {
                at_sites: vec![at(A, S, true), at(B, T, false)],
            })
            .unwrap();
        assert_eq!(
            cmds,
            vec![
                Command::RunDisplaced(A, S),
                Command::Lift(T),
                Command::SingleStep(B)
            ]
        );
        assert_eq!(
            p.handle(Event::StepDone(B)).unwrap(),
            vec![Command::Plant(T), Command::ResumeAll]
        );
    }

    #[test]
    fn passing_on_a_hit() {
        let mut p = Protocol::new(Strategy::Displaced);
        p.handle(Event::Trapped { tid: A, site: S }).unwrap();
        assert_eq!(
            p.handle(Event::PassOn(at(A, S, true))).unwrap(),
            vec![Command::RunDisplaced(A, S), Command::Resume(A)]
        );
        // Not relocatable: stop everyone, then an all-stop resume steps it inline.
        p.handle(Event::Trapped { tid: A, site: S }).unwrap();
        assert_eq!(
            p.handle(Event::PassOn(at(A, S, false))).unwrap(),
            vec![Command::StopAll]
        );
        p.handle(Event::Trapped { tid: B, site: S }).unwrap();
        let cmds = p
            .handle(Event::Resume {
                at_sites: vec![at(A, S, false), at(B, S, false)],
            })
            .unwrap();
        assert_eq!(cmds, vec![Command::Lift(S), Command::SingleStep(A)]);
        let mut n = Protocol::new(Strategy::Naive);
        n.handle(Event::Trapped { tid: A, site: S }).unwrap();
        assert_eq!(
            n.handle(Event::PassOn(at(A, S, true))).unwrap(),
            vec![Command::Lift(S), Command::SingleStep(A)]
        );
        assert_eq!(
            n.handle(Event::StepDone(A)).unwrap(),
            vec![Command::Plant(S), Command::Resume(A)]
        );
    }

    #[test]
    fn broken_sequences_are_errors() {
        let mut p = Protocol::new(Strategy::NoSwitch);
        p.handle(Event::Trapped { tid: A, site: S }).unwrap();
        assert_eq!(
            p.handle(Event::Trapped { tid: A, site: S }),
            Err(ProtocolError::TrapInBreakpoint { tid: A, site: S })
        );
        p.handle(Event::Trapped { tid: B, site: S }).unwrap();
        p.handle(Event::Resume {
            at_sites: vec![at(A, S, false), at(B, S, false)],
        })
        .unwrap();
        assert_eq!(
            p.handle(Event::Trapped { tid: A, site: S }),
            Err(ProtocolError::TrapWhileStepping(A))
        );
        assert_eq!(
            p.handle(Event::Trapped { tid: B, site: S }),
            Err(ProtocolError::TrapInBreakpoint { tid: B, site: S })
        );
        assert_eq!(
            p.handle(Event::StepDone(B)),
            Err(ProtocolError::UnexpectedStep(B))
        );
        assert_eq!(
            p.handle(Event::Resume { at_sites: vec![] }),
            Err(ProtocolError::Busy(A))
        );
        // The stepping thread exits: B's turn comes anyway.
        assert_eq!(
            p.handle(Event::Gone(A)).unwrap(),
            vec![Command::SingleStep(B)]
        );
        assert_eq!(
            p.handle(Event::Gone(B)).unwrap(),
            vec![Command::Plant(S), Command::ResumeAll]
        );
        assert!(p.is_idle());
    }
}
