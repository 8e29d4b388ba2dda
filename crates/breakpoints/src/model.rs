//! An exhaustive model checker for the step-over protocol: seed 000's abstract machine with
//! the real [`StepOver`] state machine as its debugger.
//!
//! The world: N threads, each with an abstract pc — `Outside`, `Break` (the breakpoint's
//! instruction) or `Follow` (what follows it) — and one site that is planted or lifted. The
//! CPU runs one instruction of one runnable thread at a time, in every possible order.
//! Executing `Break` while it is planted traps to the debugger; executing it otherwise is a
//! *successful execution* (counted per thread), after which the thread is at `Follow`. From
//! `Outside` and `Follow` a thread may go anywhere. The debugger handles a trap at once: the
//! hit (the *breakpoint action*, counted per thread), then the protocol's resume. All-stop
//! reporting is left out: stopping and resuming every thread around a report does not change
//! which instructions execute, only when.
//!
//! Invariant (seed 000): a thread that is `Outside` has as many breakpoint actions as
//! successful executions. Counters are kept modulo 4, as in the seed, to keep the state space
//! finite. Protocol errors and deadlocks (no thread can move) are violations too.

use std::collections::{HashMap, VecDeque};

use crate::stepover::{Action, StepOver, Strategy, ThreadId};

const SITE: u64 = 0x1000;

/// Abstract program counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pc {
    /// Anywhere else.
    Outside,
    /// At the breakpoint's instruction.
    Break,
    /// In the breakpoint's follow set.
    Follow,
}

/// What a thread is doing, as the debugger arranged it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Status {
    Running,
    /// Stopped by `StopOthers`.
    Held,
    /// Executes one instruction, then the step completes.
    Stepping,
    /// Executes the relocated copy next.
    Displaced,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Thread {
    pc: Pc,
    status: Status,
    executions: u8,
    actions: u8,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct World {
    threads: Vec<Thread>,
    planted: bool,
    protocol: StepOver,
}

/// What the explorer found.
#[derive(Debug, Clone)]
pub struct Report {
    /// Distinct states visited.
    pub states: usize,
    /// The shortest trace to a violation, one step per line, if there is one.
    pub counterexample: Option<Vec<String>>,
}

impl World {
    fn apply(&mut self, actions: Vec<Action>) -> Result<(), String> {
        for a in actions {
            match a {
                Action::ReportHit { tid, .. } => {
                    let t = &mut self.threads[tid as usize];
                    t.actions = (t.actions + 1) % 4;
                }
                Action::StopOthers => {
                    for t in &mut self.threads {
                        if t.status == Status::Running {
                            t.status = Status::Held;
                        }
                    }
                }
                Action::Lift(_) => self.planted = false,
                Action::Plant(_) => self.planted = true,
                Action::SingleStep(tid) => self.threads[tid as usize].status = Status::Stepping,
                Action::ResumeOthers => {
                    for t in &mut self.threads {
                        if t.status == Status::Held {
                            t.status = Status::Running;
                        }
                    }
                }
                Action::ResumeThread(tid) => self.threads[tid as usize].status = Status::Running,
                Action::RunDisplaced(tid, _) => {
                    self.threads[tid as usize].status = Status::Displaced
                }
            }
        }
        Ok(())
    }

    /// Every successor of this state, with a description of the move.
    fn successors(&self, displaceable: bool) -> Vec<(String, Result<World, String>)> {
        let mut out = Vec::new();
        for (i, t) in self.threads.iter().enumerate() {
            let tid = i as ThreadId;
            match t.status {
                Status::Held => {}
                Status::Displaced => {
                    let mut w = self.clone();
                    let th = &mut w.threads[i];
                    th.executions = (th.executions + 1) % 4;
                    th.pc = Pc::Follow;
                    th.status = Status::Running;
                    out.push((
                        format!("thread {i} executes the relocated copy of Break"),
                        Ok(w),
                    ));
                }
                Status::Running | Status::Stepping => {
                    let stepping = t.status == Status::Stepping;
                    if t.pc == Pc::Break && self.planted {
                        let mut w = self.clone();
                        let r = w
                            .protocol
                            .on_trap(tid, SITE)
                            .map_err(|e| e.to_string())
                            .and_then(|a| w.apply(a))
                            .and_then(|_| {
                                w.protocol
                                    .on_resume(tid, SITE, displaceable)
                                    .map_err(|e| e.to_string())
                            })
                            .and_then(|a| w.apply(a))
                            .map(|_| w);
                        out.push((format!("thread {i} traps at Break; the debugger reports the hit and resumes it"), r));
                        continue;
                    }
                    let nexts: &[Pc] = if t.pc == Pc::Break {
                        &[Pc::Follow]
                    } else {
                        &[Pc::Outside, Pc::Break, Pc::Follow]
                    };
                    for &next in nexts {
                        let mut w = self.clone();
                        let th = &mut w.threads[i];
                        let desc = if t.pc == Pc::Break {
                            th.executions = (th.executions + 1) % 4;
                            format!("thread {i} executes Break (not planted)")
                        } else {
                            format!("thread {i} moves {:?} -> {next:?}", t.pc)
                        };
                        th.pc = next;
                        let r = if stepping {
                            w.protocol
                                .on_step_done(tid)
                                .map_err(|e| e.to_string())
                                .and_then(|a| w.apply(a))
                                .map(|_| w)
                        } else {
                            Ok(w)
                        };
                        let desc = if stepping {
                            format!("{desc}; its single-step completes")
                        } else {
                            desc
                        };
                        out.push((desc, r));
                    }
                }
            }
        }
        out
    }

    fn violation(&self) -> Option<String> {
        for (i, t) in self.threads.iter().enumerate() {
            if t.pc == Pc::Outside && t.executions != t.actions {
                return Some(format!(
                    "thread {i} is Outside after {} successful executions of Break but {} breakpoint actions (mod 4)",
                    t.executions, t.actions
                ));
            }
        }
        None
    }
}

/// Explores every interleaving of `threads` threads under `strategy`. `displaceable`: the
/// breakpoint's instruction can be relocated (only matters for `Displaced`).
pub fn check(strategy: Strategy, threads: usize, displaceable: bool) -> Report {
    let start = World {
        threads: vec![
            Thread {
                pc: Pc::Outside,
                status: Status::Running,
                executions: 0,
                actions: 0,
            };
            threads
        ],
        planted: true,
        protocol: StepOver::new(strategy),
    };
    // Breadth-first, so the counterexample found is a shortest one.
    let mut parent: HashMap<World, Option<(World, String)>> = HashMap::new();
    parent.insert(start.clone(), None);
    let mut queue = VecDeque::from([start]);
    let trace = |parent: &HashMap<World, Option<(World, String)>>, mut w: World, last: String| {
        let mut steps = vec![last];
        while let Some(Some((p, d))) = parent.get(&w) {
            steps.push(d.clone());
            w = p.clone();
        }
        steps.reverse();
        steps
    };
    while let Some(w) = queue.pop_front() {
        let succ = w.successors(displaceable);
        if succ.is_empty() {
            return Report {
                states: parent.len(),
                counterexample: Some(trace(&parent, w, "deadlock: no thread can move".into())),
            };
        }
        for (desc, next) in succ {
            let next = match next {
                Ok(n) => n,
                Err(e) => {
                    return Report {
                        states: parent.len(),
                        counterexample: Some(trace(
                            &parent,
                            w,
                            format!("{desc}: protocol error: {e}"),
                        )),
                    }
                }
            };
            if parent.contains_key(&next) {
                continue;
            }
            let bad = next.violation();
            parent.insert(next.clone(), Some((w.clone(), desc.clone())));
            if let Some(v) = bad {
                let mut steps = trace(&parent, next, v);
                // `trace` put the final move in already through the parent link.
                steps.dedup();
                return Report {
                    states: parent.len(),
                    counterexample: Some(steps),
                };
            }
            queue.push_back(next);
        }
    }
    Report {
        states: parent.len(),
        counterexample: None,
    }
}
