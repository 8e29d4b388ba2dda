//! The step-over protocol: how a thread that stopped at a planted breakpoint gets past it.
//!
//! The tracer feeds events in (`on_trap`, `on_resume`, `on_step_done`) and executes the
//! [`Action`]s that come back, in order. The machine does no I/O, so the model checker in
//! [`crate::model`] can run the very same code against every interleaving of threads.
//!
//! Invariant (seed 000): exactly one breakpoint action ([`Action::ReportHit`]) per successful
//! execution of the breakpoint instruction, per thread. The naive protocol breaks it: while
//! one thread single-steps over the lifted trap, another runs through the address unseen.
//! `NoSwitch` keeps every other thread stopped during that step; `Displaced` never lifts the
//! trap at all.

use thiserror::Error;

/// A thread, as the protocol sees it.
pub type ThreadId = u32;

/// How threads step over a planted site.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// The broken candidate of seed 000: lift, step this thread while the others run, re-plant.
    Naive,
    /// Seed 000's fix: lift, step this thread with every other thread stopped, re-plant.
    NoSwitch,
    /// Execute a relocated copy of the instruction; the trap stays planted. Falls back to
    /// `NoSwitch` for instructions that cannot be relocated.
    Displaced,
}

/// What the tracer must do, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// The breakpoint action: report (or count, or evaluate the condition of) a hit.
    ReportHit {
        /// The thread that hit.
        tid: ThreadId,
        /// The site.
        site: u64,
    },
    /// Stop every other running thread and keep them stopped.
    StopOthers,
    /// Write the original byte back at the site.
    Lift(u64),
    /// Write the trap at the site again.
    Plant(u64),
    /// Single-step this thread; report [`StepOver::on_step_done`] when the step completes.
    SingleStep(ThreadId),
    /// Let the threads stopped by `StopOthers` run again.
    ResumeOthers,
    /// Let this thread run.
    ResumeThread(ThreadId),
    /// Let this thread run the relocated copy of the site's instruction (it continues by itself).
    RunDisplaced(ThreadId, u64),
}

/// An event the protocol did not expect: a bug in the tracer or a broken invariant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum ProtocolError {
    /// A thread trapped at the site while it was stepping over it (it was "in the breakpoint").
    #[error("thread {0} trapped while stepping over the breakpoint")]
    TrapWhileStepping(ThreadId),
    /// A resume while another thread is still stepping over a lifted site.
    #[error("thread {0} asked to step over while thread {1} is stepping")]
    Busy(ThreadId, ThreadId),
    /// A step completion for a thread that was not stepping.
    #[error("unexpected step completion of thread {0}")]
    UnexpectedStep(ThreadId),
}

/// The protocol's state: which thread, if any, is stepping over which lifted site.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StepOver {
    strategy: Strategy,
    stepping: Option<(ThreadId, u64)>,
}

impl StepOver {
    /// An idle protocol.
    pub fn new(strategy: Strategy) -> StepOver {
        StepOver {
            strategy,
            stepping: None,
        }
    }

    /// The strategy.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// The thread currently stepping over a lifted site.
    pub fn stepping(&self) -> Option<(ThreadId, u64)> {
        self.stepping
    }

    /// Thread `tid` executed the trap planted at `site`.
    pub fn on_trap(&mut self, tid: ThreadId, site: u64) -> Result<Vec<Action>, ProtocolError> {
        if let Some((t, _)) = self.stepping {
            if t == tid {
                return Err(ProtocolError::TrapWhileStepping(tid));
            }
        }
        Ok(vec![Action::ReportHit { tid, site }])
    }

    /// Thread `tid`, stopped at `site` (pc rewound), is to run on. `displaceable`: a relocated
    /// copy of the site's instruction exists.
    pub fn on_resume(
        &mut self,
        tid: ThreadId,
        site: u64,
        displaceable: bool,
    ) -> Result<Vec<Action>, ProtocolError> {
        if let Some((t, _)) = self.stepping {
            return Err(ProtocolError::Busy(tid, t));
        }
        Ok(match self.strategy {
            Strategy::Displaced if displaceable => vec![Action::RunDisplaced(tid, site)],
            Strategy::Naive => {
                self.stepping = Some((tid, site));
                vec![
                    Action::Lift(site),
                    Action::SingleStep(tid),
                    Action::ResumeOthers,
                ]
            }
            Strategy::NoSwitch | Strategy::Displaced => {
                self.stepping = Some((tid, site));
                vec![
                    Action::StopOthers,
                    Action::Lift(site),
                    Action::SingleStep(tid),
                ]
            }
        })
    }

    /// The single-step of `tid` completed (the instruction ran, or the thread left).
    pub fn on_step_done(&mut self, tid: ThreadId) -> Result<Vec<Action>, ProtocolError> {
        match self.stepping {
            Some((t, site)) if t == tid => {
                self.stepping = None;
                Ok(match self.strategy {
                    Strategy::Naive => vec![Action::Plant(site), Action::ResumeThread(tid)],
                    _ => vec![
                        Action::Plant(site),
                        Action::ResumeOthers,
                        Action::ResumeThread(tid),
                    ],
                })
            }
            _ => Err(ProtocolError::UnexpectedStep(tid)),
        }
    }
}
