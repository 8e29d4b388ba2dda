//! An exhaustive model checker for the step-over protocol: seed 000's abstract machine, with
//! the real [`Protocol`] state machine as the debugger's brain.
//!
//! The world has N threads and one breakpoint site, planted or lifted. Each thread has an
//! abstract pc: `Outside`, `Break` (the breakpoint's instruction), `Follow` (what follows it)
//! or `Copy` (the relocated copy of `Break`, under displaced stepping). The CPU executes one
//! instruction of one running thread at a time, in every possible order:
//! - `Break` while planted traps: the thread stops, the protocol hears
//!   [`Event::Trapped`] and reports the hit (the *breakpoint action*, counted per thread);
//! - `Break` while lifted, or `Copy`, is a *successful execution* of the breakpoint's
//!   instruction (counted per thread) and leads to `Follow`;
//! - from `Outside` or `Follow` a thread may go anywhere.
//!
//! The debugger is all-stop. After a trap it either stops the program for the user
//! (every other thread stops, one at a time, and may trap first) and then sends
//! [`Event::Resume`] with the threads at the site, or passes the hit on without stopping
//! ([`Event::PassOn`]: a false condition). The user may also interrupt the program at any time
//! the protocol is idle, which can leave a thread stopped at `Break` without having trapped.
//! Every [`Command`] the protocol returns is executed on the world.
//!
//! Checked in every reachable state:
//! - seed 000's invariant: a thread that is `Outside` has had as many breakpoint actions as
//!   successful executions of `Break` (both counted modulo 4, as in the seed);
//! - the protocol accepts every event (no [`crate::stepover::ProtocolError`]: in particular no
//!   trap of a thread that is already in the breakpoint, seed 000's strengthened assertion),
//!   and its commands make sense (no lift of a lifted site, no step of a running thread...);
//! - some move is always possible (no deadlock);
//! - except for `Naive`: while the trap is lifted, no thread but the stepping one runs.

use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

use crate::stepover::{AtSite, Command, Event, Protocol, Strategy, Tid};

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
    /// At the relocated copy of the breakpoint's instruction.
    Copy,
}

/// What a thread is allowed to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Run {
    Running,
    Stopped,
    /// Executes one instruction, then the step completes.
    Stepping,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Thread {
    pc: Pc,
    run: Run,
    /// Successful executions of `Break`, modulo 4.
    executions: u8,
    /// Breakpoint actions, modulo 4.
    actions: u8,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct World {
    threads: Vec<Thread>,
    planted: bool,
    /// An all-stop is in progress: running threads stop one by one.
    stopping: bool,
    protocol: Protocol,
}

/// How the debugger handles a trap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    /// Report it to the user: stop every thread.
    StopAll,
    /// Do not stop (false condition): [`Event::PassOn`].
    PassOn,
    /// An all-stop is already under way: the thread just stays stopped.
    Pending,
}

/// One transition of the world.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Move {
    /// Thread executes its instruction (not a trap) and goes to `to`.
    Exec { tid: usize, to: Pc },
    /// Thread executes the planted trap.
    Trap { tid: usize, choice: Choice },
    /// Thread stops for the all-stop under way.
    Stop { tid: usize },
    /// The user interrupts the program.
    Interrupt,
    /// Every thread is stopped: the debugger resumes the program.
    Resume,
}

/// What to explore.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// The protocol's strategy.
    pub strategy: Strategy,
    /// Number of threads.
    pub threads: usize,
    /// The breakpoint's instruction can be relocated (only `Displaced` looks at it).
    pub displaceable: bool,
    /// The debugger may pass hits on without stopping ([`Event::PassOn`]); otherwise every
    /// trap stops the program.
    pub pass_on: bool,
    /// The user may interrupt the program whenever the protocol is idle.
    pub interrupts: bool,
}

impl Config {
    /// Every behaviour of the debugger on.
    pub fn new(strategy: Strategy, threads: usize, displaceable: bool) -> Config {
        Config {
            strategy,
            threads,
            displaceable,
            pass_on: true,
            interrupts: true,
        }
    }
}

/// How often the explored transitions met the situations that make the protocol hard.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Resumes with several threads in the breakpoint at once.
    pub resumes_with_several_in_break: usize,
    /// Resumes with a thread stopped at the site without having trapped there.
    pub resumes_with_untrapped_at_site: usize,
    /// Inline single-steps started.
    pub inline_steps: usize,
    /// Displaced steps started.
    pub displaced_steps: usize,
}

/// What the explorer found.
#[derive(Debug, Clone)]
pub struct Report {
    /// Distinct states visited.
    pub states: usize,
    /// What the transitions explored went through.
    pub coverage: Coverage,
    /// A shortest trace to a violation, one move per line, the violation last.
    pub counterexample: Option<Vec<String>>,
}

fn tid(i: usize) -> Tid {
    Tid(i as u32)
}

impl World {
    fn start(strategy: Strategy, threads: usize) -> World {
        World {
            threads: vec![
                Thread {
                    pc: Pc::Outside,
                    run: Run::Running,
                    executions: 0,
                    actions: 0,
                };
                threads
            ],
            planted: true,
            stopping: false,
            protocol: Protocol::new(strategy),
        }
    }

    /// Every move possible from here.
    fn moves(&self, cfg: &Config) -> Vec<Move> {
        let mut out = Vec::new();
        for (i, t) in self.threads.iter().enumerate() {
            if t.run == Run::Stopped {
                continue;
            }
            if self.stopping && t.run == Run::Running {
                out.push(Move::Stop { tid: i });
            }
            if t.pc == Pc::Break && self.planted {
                if self.stopping {
                    out.push(Move::Trap {
                        tid: i,
                        choice: Choice::Pending,
                    });
                } else {
                    out.push(Move::Trap {
                        tid: i,
                        choice: Choice::StopAll,
                    });
                    if cfg.pass_on {
                        out.push(Move::Trap {
                            tid: i,
                            choice: Choice::PassOn,
                        });
                    }
                }
                continue;
            }
            let targets: &[Pc] = match t.pc {
                Pc::Break | Pc::Copy => &[Pc::Follow],
                Pc::Outside | Pc::Follow => &[Pc::Outside, Pc::Break, Pc::Follow],
            };
            out.extend(targets.iter().map(|&to| Move::Exec { tid: i, to }));
        }
        let all_stopped = self.threads.iter().all(|t| t.run == Run::Stopped);
        if self.stopping && all_stopped {
            out.push(Move::Resume);
        }
        if cfg.interrupts && !self.stopping && self.protocol.is_idle() && !all_stopped {
            out.push(Move::Interrupt);
        }
        out
    }

    /// The world after `mv`; `log` collects the protocol's commands.
    fn step(&self, mv: Move, displaceable: bool, log: &mut Vec<Command>) -> Result<World, String> {
        let mut w = self.clone();
        match mv {
            Move::Exec { tid: i, to } => {
                let th = &mut w.threads[i];
                if matches!(th.pc, Pc::Break | Pc::Copy) {
                    th.executions = (th.executions + 1) % 4;
                }
                th.pc = to;
                if th.run == Run::Stepping {
                    th.run = Run::Stopped;
                    w.feed(Event::StepDone(tid(i)), log)?;
                }
            }
            Move::Trap { tid: i, choice } => {
                w.threads[i].run = Run::Stopped;
                w.feed(
                    Event::Trapped {
                        tid: tid(i),
                        site: SITE,
                    },
                    log,
                )?;
                match choice {
                    Choice::StopAll => w.stopping = true,
                    Choice::PassOn => w.feed(
                        Event::PassOn(AtSite {
                            tid: tid(i),
                            site: SITE,
                            displaceable,
                        }),
                        log,
                    )?,
                    Choice::Pending => {}
                }
            }
            Move::Stop { tid: i } => w.threads[i].run = Run::Stopped,
            Move::Interrupt => w.stopping = true,
            Move::Resume => {
                w.stopping = false;
                let at_sites = w
                    .threads
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| t.pc == Pc::Break && w.planted)
                    .map(|(i, _)| AtSite {
                        tid: tid(i),
                        site: SITE,
                        displaceable,
                    })
                    .collect();
                w.feed(Event::Resume { at_sites }, log)?;
            }
        }
        Ok(w)
    }

    /// Hands `event` to the protocol and executes its commands.
    fn feed(&mut self, event: Event, log: &mut Vec<Command>) -> Result<(), String> {
        let cmds = self
            .protocol
            .handle(event)
            .map_err(|e| format!("protocol error: {e}"))?;
        for c in cmds {
            log.push(c);
            self.apply(c)?;
        }
        Ok(())
    }

    fn apply(&mut self, c: Command) -> Result<(), String> {
        fn thread(w: &mut World, t: Tid) -> Result<&mut Thread, String> {
            w.threads
                .get_mut(t.0 as usize)
                .ok_or_else(|| format!("no thread {t}"))
        }
        match c {
            Command::ReportHit { tid: t, .. } => {
                let th = thread(self, t)?;
                th.actions = (th.actions + 1) % 4;
            }
            Command::Lift(_) if !self.planted => return Err(format!("{c:?}: already lifted")),
            Command::Lift(_) => self.planted = false,
            Command::Plant(_) if self.planted => return Err(format!("{c:?}: already planted")),
            Command::Plant(_) => self.planted = true,
            Command::SingleStep(t) => {
                let th = thread(self, t)?;
                if th.run != Run::Stopped {
                    return Err(format!("{c:?}: the thread is not stopped"));
                }
                th.run = Run::Stepping;
            }
            Command::RunDisplaced(t, _) => {
                let th = thread(self, t)?;
                if th.pc != Pc::Break || th.run != Run::Stopped {
                    return Err(format!("{c:?}: the thread is not stopped at the site"));
                }
                th.pc = Pc::Copy;
            }
            Command::ResumeAll | Command::ResumeAllExcept(_) => {
                let except = match c {
                    Command::ResumeAllExcept(t) => Some(t.0 as usize),
                    _ => None,
                };
                for (i, th) in self.threads.iter_mut().enumerate() {
                    if th.run == Run::Stopped && Some(i) != except {
                        th.run = Run::Running;
                    }
                }
            }
            Command::Resume(t) => {
                let th = thread(self, t)?;
                if th.run == Run::Stopped {
                    th.run = Run::Running;
                }
            }
            Command::StopAll => self.stopping = true,
        }
        Ok(())
    }

    fn violation(&self) -> Option<String> {
        for (i, t) in self.threads.iter().enumerate() {
            if t.pc == Pc::Outside && t.executions != t.actions {
                return Some(format!(
                    "VIOLATION: thread {i} is Outside after {} successful executions of Break but {} breakpoint actions (mod 4)",
                    t.executions, t.actions
                ));
            }
        }
        if self.protocol.strategy() != Strategy::Naive && !self.planted {
            if let Some(i) = self.threads.iter().position(|t| t.run == Run::Running) {
                return Some(format!(
                    "VIOLATION: thread {i} runs while the trap is lifted"
                ));
            }
        }
        None
    }

    /// Adds what transition `mv` (which issued `log`) went through to `c`.
    fn count(&self, mv: Move, log: &[Command], c: &mut Coverage) {
        if mv == Move::Resume {
            let trapped = |i: usize| self.protocol.in_breakpoint(tid(i)).is_some();
            let sites = self
                .threads
                .iter()
                .enumerate()
                .filter(|(_, t)| t.pc == Pc::Break && self.planted);
            if sites.clone().filter(|(i, _)| trapped(*i)).count() > 1 {
                c.resumes_with_several_in_break += 1;
            }
            if sites.clone().any(|(i, _)| !trapped(i)) {
                c.resumes_with_untrapped_at_site += 1;
            }
        }
        for cmd in log {
            match cmd {
                Command::SingleStep(_) => c.inline_steps += 1,
                Command::RunDisplaced(..) => c.displaced_steps += 1,
                _ => {}
            }
        }
    }

    fn describe(&self, mv: Move, log: &[Command]) -> String {
        let mut s = match mv {
            Move::Exec { tid: i, to } => {
                let from = self.threads[i].pc;
                match from {
                    Pc::Break => format!("thread {i} executes Break (trap lifted) -> {to:?}"),
                    Pc::Copy => {
                        format!("thread {i} executes the relocated copy of Break -> {to:?}")
                    }
                    _ => format!("thread {i}: {from:?} -> {to:?}"),
                }
            }
            Move::Trap { tid: i, choice } => format!(
                "thread {i} traps at Break; {}",
                match choice {
                    Choice::StopAll => "the debugger stops the program",
                    Choice::PassOn => "the hit does not stop the program",
                    Choice::Pending => "the all-stop under way keeps it stopped",
                }
            ),
            Move::Stop { tid: i } => format!("thread {i} stops (all-stop)"),
            Move::Interrupt => "the user interrupts the program".to_string(),
            Move::Resume => "every thread is stopped; the debugger resumes".to_string(),
        };
        if let Move::Exec { tid: i, .. } = mv {
            if self.threads[i].run == Run::Stepping {
                s.push_str("; its single-step completes");
            }
        }
        if !log.is_empty() {
            s.push_str(&format!("  => {log:?}"));
        }
        s
    }
}

/// Explores every interleaving of `threads` threads under `strategy`, with every behaviour of
/// the debugger ([`Config::new`]).
pub fn check(strategy: Strategy, threads: usize, displaceable: bool) -> Report {
    check_config(&Config::new(strategy, threads, displaceable))
}

/// Explores every state reachable under `cfg`.
pub fn check_config(cfg: &Config) -> Report {
    let displaceable = cfg.displaceable;
    let start = Rc::new(World::start(cfg.strategy, cfg.threads));
    // Breadth-first, so a counterexample found is a shortest one. `nodes[i]` is a state, its
    // parent and the move from the parent.
    let mut nodes: Vec<(Rc<World>, usize, Option<Move>)> = vec![(start.clone(), 0, None)];
    let mut seen: HashMap<Rc<World>, usize> = HashMap::from([(start, 0)]);
    let mut queue = VecDeque::from([0usize]);
    let mut coverage = Coverage::default();
    let trace = |nodes: &[(Rc<World>, usize, Option<Move>)], mut i: usize, last: String| {
        let mut steps = vec![last];
        while let (w, parent, Some(mv)) = &nodes[i] {
            let _ = w;
            let p = &nodes[*parent].0;
            let mut log = Vec::new();
            let _ = p.step(*mv, displaceable, &mut log);
            steps.push(p.describe(*mv, &log));
            i = *parent;
        }
        steps.reverse();
        steps
    };
    while let Some(i) = queue.pop_front() {
        let w = nodes[i].0.clone();
        let moves = w.moves(cfg);
        if moves.is_empty() {
            return Report {
                states: nodes.len(),
                coverage,
                counterexample: Some(trace(
                    &nodes,
                    i,
                    "VIOLATION: deadlock, no move possible".into(),
                )),
            };
        }
        for mv in moves {
            let mut log = Vec::new();
            let next = match w.step(mv, displaceable, &mut log) {
                Ok(n) => n,
                Err(e) => {
                    let last = format!("{}  => VIOLATION: {e}", w.describe(mv, &log));
                    return Report {
                        states: nodes.len(),
                        coverage,
                        counterexample: Some(trace(&nodes, i, last)),
                    };
                }
            };
            w.count(mv, &log, &mut coverage);
            if seen.contains_key(&next) {
                continue;
            }
            let bad = next.violation();
            let next = Rc::new(next);
            nodes.push((next.clone(), i, Some(mv)));
            let n = nodes.len() - 1;
            seen.insert(next, n);
            if let Some(v) = bad {
                return Report {
                    states: nodes.len(),
                    coverage,
                    counterexample: Some(trace(&nodes, n, v)),
                };
            }
            queue.push_back(n);
        }
    }
    Report {
        states: nodes.len(),
        coverage,
        counterexample: None,
    }
}
