//! Resuming the program on the user's behalf: what stops it (breakpoint conditions, ignore
//! counts, watchpoint value changes, step-resume traps, the user's interrupt), and what the
//! debugger events whose action is not a stop do on the way (dprintf, periodic commands,
//! automatic checkpoints).
//!
//! Invariant: [`resume_raw`] returns only stops the user is told about; everything else that
//! stops the process on the way is handled and the program resumed.

use std::collections::HashMap;

use hindsight_breakpoints::table::{BreakpointKind, BreakpointTable, Verdict, WatchAccess};
use hindsight_control::{Inferior, Notification, Resume, StopEvent, StopHook};
use hindsight_ptrace::Tid;
use hindsight_symbols::Program;

use hindsight_symbols::value::Value;

use crate::context;
use crate::observer::{Notice, Observer};
use crate::session::Session;

/// Internal traps used by `next`, `finish`, `until` and `advance`: stop when `tid` reaches
/// one of `targets` — (address, stack pointer floor) — with its stack pointer above the floor
/// (so that a recursive call does not stop too early).
#[derive(Debug, Clone)]
pub(crate) struct StepResume {
    pub targets: Vec<(u64, u64)>,
    pub tid: Tid,
}

/// Why the hook said "stop", for the report.
#[derive(Debug, Clone)]
pub(crate) enum Reason {
    /// User breakpoints that stopped (lowest number first).
    Breakpoint(u32),
    /// A condition could not be evaluated: gdb stops and says why.
    ConditionError(u32, String),
    /// The step-resume trap.
    StepResume,
    /// A watchpoint: number, old value (None for reads), new value.
    Watch {
        number: u32,
        old: Option<Value>,
        new: Value,
    },
    /// A replay reached the end of its recording (why, in words).
    EndOfHistory(String),
    /// Going back reached the start of the recording.
    StartOfHistory,
    /// Only `dprintf` breakpoints were hit (their numbers are in [`Hook::prints`]): print,
    /// then go on.
    Dprintf,
    /// The replay reached a time where debugger events are due (quantum, periodic): the
    /// time, and the thread about to run.
    Time(u64, Tid),
    /// A quantum event stopped the replay at this time.
    Quantum(u64),
    /// A tick quantum (`break tick`) stopped the replay: the thread's tick count.
    Tick(u64),
    /// Periodic tick events are due (`every K ticks`): the thread that counted them, its
    /// count, and their commands (run, then the replay goes on).
    TickCommands(Tid, u64, Vec<String>),
    /// The replay stopped at an event for an automatic checkpoint (or to plant breakpoints
    /// whose code is mapped now).
    Checkpoint,
    /// A signal that stops the program (found going back).
    Signal,
    /// The dynamic loader reported a library load: resolve pending breakpoints, go on.
    LibraryEvent,
    /// The user interrupted the motion (^C, a front end's pause).
    Interrupted,
}

/// How often a running live program is checked for the user's interrupt.
const POLL_INTERRUPT: std::time::Duration = std::time::Duration::from_millis(50);

/// Decides, at each trap, whether the user's breakpoints and watchpoints stop the program.
pub(crate) struct Hook<'a> {
    pub(crate) symbols: &'a Program,
    pub(crate) table: &'a mut BreakpointTable,
    pub(crate) watch_values: &'a mut HashMap<u32, Vec<u8>>,
    pub(crate) watch_types: &'a HashMap<u32, hindsight_symbols::value::TypeHandle>,
    pub(crate) step_resume: Option<StepResume>,
    pub(crate) reason: Option<Reason>,
    /// `handle SIG stop|nostop`, where the user said.
    pub(crate) signal_stops: &'a HashMap<i32, bool>,
    /// `handle SIG print|noprint`, where the user said.
    pub(crate) signal_print: &'a HashMap<i32, bool>,
    /// `handle SIG pass|nopass`, where the user said.
    pub(crate) signal_pass: &'a HashMap<i32, bool>,
    /// The debugger events: when breakpoints apply (eras), what they do (dprintf), and the
    /// events due at times (quantum, periodic).
    pub(crate) engine: &'a mut hindsight_timeline::Engine,
    /// Replay time (events replayed), as last told by the replayer.
    pub(crate) time: u64,
    /// The running thread's tick count, as last told by the replayer (None: not counted).
    pub(crate) ticks: Option<u64>,
    /// A silent run (`goto tick`): the user's breakpoints, watchpoints and debugger events
    /// neither stop nor act.
    pub(crate) silent: bool,
    /// Replay: when to stop at an event for an automatic checkpoint.
    pub(crate) checkpoint_at: Option<std::time::Instant>,
    /// Replay: breakpoint sites wait for their code to be mapped (tried at every event).
    pub(crate) sites_pending: bool,
    /// Replay: (time, signals that reached the program since then), which names a signal
    /// stop's position.
    pub(crate) signals: Option<&'a mut (u64, u64)>,
    /// The loader's library-event trap, while pending breakpoints wait.
    pub(crate) library_event: Option<u64>,
    /// Who hears about threads and forks (None: nobody, in scans).
    pub(crate) observer: Option<&'a mut dyn Observer>,
    /// The user's interrupt (replay: checked at every event).
    pub(crate) interrupt: Option<&'a crate::session::Interrupter>,
    /// dprintf breakpoints hit at the stop, to print before anything else happens.
    pub(crate) prints: Vec<u32>,
}

impl Hook<'_> {
    /// The moment the replay stands at (what era bounds are compared with).
    fn now(&self) -> hindsight_timeline::Moment {
        hindsight_timeline::Moment {
            event: self.time,
            ticks: self.ticks,
        }
    }
}

impl StopHook for Hook<'_> {
    fn breakpoint_hit(&mut self, inf: &Inferior, tid: Tid, addr: u64) -> bool {
        if let Some(sr) = &self.step_resume {
            if sr.tid == tid {
                if let Some(&(_, floor)) = sr.targets.iter().find(|(a, _)| *a == addr) {
                    let sp = inf.regs(tid).map(|r| r.sp()).unwrap_or(0);
                    if sp > floor {
                        self.reason = Some(Reason::StepResume);
                        return true;
                    }
                }
            }
        }
        if self.library_event == Some(addr)
            && (self.silent || self.table.breakpoints_at(addr).is_empty())
        {
            self.reason = Some(Reason::LibraryEvent);
            return true;
        }
        if self.silent {
            return false;
        }
        let now = self.now();
        // Conditions are evaluated in the trapping thread; counting follows gdb (the table's
        // rules): a false condition is no hit, an ignored hit still counts.
        let symbols = self.symbols;
        let outcomes = self.table.process_hit(addr, |_, cond| {
            context::eval_condition(symbols, inf, tid, cond)
        });
        let mut stop = None;
        let mut prints = Vec::new();
        for o in outcomes {
            if !self.engine.admits(o.number, now) {
                // An era breakpoint outside its era.
                continue;
            }
            if let Some(e) = o.condition_error {
                // gdb stops and says why when a condition cannot be evaluated.
                stop.get_or_insert(Reason::ConditionError(o.number, e));
            } else if matches!(o.verdict, Verdict::Stop { .. }) {
                let actions = self.engine.match_breakpoint(o.number, self.time);
                let is_dprintf = actions
                    .iter()
                    .any(|(_, a)| matches!(a, hindsight_timeline::Action::Print { .. }));
                if is_dprintf {
                    prints.push(o.number);
                } else {
                    stop.get_or_insert(Reason::Breakpoint(o.number));
                }
            }
        }
        // A dprintf prints even where another breakpoint stops the program (gdb does both).
        let printing = !prints.is_empty();
        self.prints.extend(prints);
        match stop {
            Some(r) => {
                self.reason = Some(r);
                true
            }
            None if printing => {
                self.reason = Some(Reason::Dprintf);
                true
            }
            None => false,
        }
    }

    fn watchpoint_hit(&mut self, inf: &Inferior, tid: Tid, slots: u8) -> bool {
        if self.silent {
            return false;
        }
        let fired = self.table.watchpoints_for_slots(slots);
        for n in fired {
            let Some(bp) = self.table.get(n) else {
                continue;
            };
            let BreakpointKind::Watchpoint {
                access,
                address,
                len,
                ..
            } = bp.kind.clone()
            else {
                continue;
            };
            let mut now = vec![0u8; len as usize];
            if inf.read_memory(address, &mut now).is_err() {
                continue;
            }
            let before = self.watch_values.get(&n).cloned();
            let changed = before.as_ref() != Some(&now);
            // Write watchpoints fire on every write; gdb reports only changes. x86 cannot
            // watch reads alone: a read watchpoint that saw its value change saw a write.
            if (access == WatchAccess::Write && !changed)
                || (access == WatchAccess::Read && changed)
            {
                self.watch_values.insert(n, now);
                continue;
            }
            if !self.engine.admits(n, self.now()) {
                self.watch_values.insert(n, now);
                continue;
            }
            if let Some(cond) = bp.condition.clone() {
                if !context::eval_condition(self.symbols, inf, tid, &cond).unwrap_or(true) {
                    self.watch_values.insert(n, now);
                    continue;
                }
            }
            let stops = matches!(
                self.table.record_hit(n, Ok(true)).map(|o| o.verdict),
                Ok(Verdict::Stop { .. })
            );
            if !stops {
                self.watch_values.insert(n, now);
                continue;
            }
            let ty = self
                .watch_types
                .get(&n)
                .cloned()
                .unwrap_or(hindsight_symbols::value::TypeHandle::long());
            let new = Value::from_bytes(ty.clone(), now.clone());
            let old = match access {
                WatchAccess::Read => None,
                WatchAccess::Access if !changed => None,
                _ => before.map(|b| Value::from_bytes(ty.clone(), b)),
            };
            self.watch_values.insert(n, now);
            self.reason = Some(Reason::Watch {
                number: n,
                old,
                new,
            });
            return true;
        }
        false
    }

    fn stops_on_signal(&mut self, signal: i32) -> bool {
        if let Some(count) = self.signals.as_deref_mut() {
            if count.0 != self.time {
                *count = (self.time, 0);
            }
            count.1 += 1;
        }
        match self.signal_stops.get(&signal) {
            Some(stop) => *stop,
            None => hindsight_control::stops_by_default(signal),
        }
    }

    fn passes_signal(&mut self, signal: i32) -> bool {
        self.signal_pass
            .get(&signal)
            .copied()
            .unwrap_or(signal != libc::SIGINT && signal != libc::SIGTRAP)
    }

    fn signal_arrived(&mut self, inf: &Inferior, tid: Tid, signal: i32) {
        // `handle SIG nostop` (print stays on unless `noprint`): gdb says so and goes on.
        let print = self
            .signal_print
            .get(&signal)
            .copied()
            .unwrap_or_else(|| hindsight_control::stops_by_default(signal));
        if !print {
            return;
        }
        let threads = inf.threads();
        let thread = threads
            .iter()
            .find(|t| t.tid == tid)
            .filter(|_| threads.len() > 1)
            .map(|t| (t.num, inf.thread_name(tid).unwrap_or_default()));
        if let Some(obs) = self.observer.as_mut() {
            obs.notice(Notice::SignalReceived { thread, signal });
        }
    }

    fn at_event(&mut self, _: &Inferior, events: u64, tid: Tid) -> bool {
        self.time = events;
        if self.interrupt.is_some_and(|i| i.requested()) {
            self.reason = Some(Reason::Interrupted);
            return true;
        }
        if !self.silent && self.engine.wants_time(events) {
            self.reason = Some(Reason::Time(events, tid));
            return true;
        }
        if self.sites_pending
            || self
                .checkpoint_at
                .is_some_and(|t| std::time::Instant::now() >= t)
        {
            self.reason = Some(Reason::Checkpoint);
            return true;
        }
        false
    }

    fn clock(&mut self, ticks: Option<u64>) {
        self.ticks = ticks;
    }

    fn notify(&mut self, note: Notification) {
        let Some(obs) = self.observer.as_mut() else {
            return;
        };
        obs.notice(match note {
            Notification::NewThread { num, tid, pthread } => {
                Notice::NewThread { num, tid, pthread }
            }
            Notification::ThreadExited { num, tid, pthread } => {
                Notice::ThreadExited { num, tid, pthread }
            }
            Notification::Detached { pid } => Notice::Detached { pid },
        });
    }
}

/// Resumes the replay once; the tick stops set for it are forgotten after (other motions
/// resume the replay too).
fn resume_replay(
    replay: &mut hindsight_replay::Replayer,
    inf: &mut Inferior,
    how: Resume,
    hook: &mut Hook<'_>,
) -> anyhow::Result<hindsight_replay::ReplayStop> {
    let stop = replay.resume(inf, how, hook);
    replay.set_thread_tick_stops(Vec::new());
    stop.map_err(|e| anyhow::anyhow!("{e}"))
}

/// Resumes with `step_resume` armed and returns the stop and its reason.
pub(crate) fn resume_raw(
    s: &mut Session,
    obs: &mut dyn Observer,
    how: Resume,
    step_resume: Option<StepResume>,
) -> anyhow::Result<(StopEvent, Option<Reason>)> {
    // Any motion leaves the position that was known.
    s.travel.here = None;
    s.held_call = None;
    loop {
        let fallback_tid = s.thread.or(s.pid().map(Tid)).unwrap_or(Tid(0));
        let inf = s
            .inferior
            .as_mut()
            .filter(|i| i.is_alive())
            .ok_or_else(|| anyhow::anyhow!("The program is not being run."))?;
        let checkpoint_at = s.replay.as_ref().map(|_| s.travel.checkpoint_deadline());
        let spacing = s.travel.checkpoint_spacing();
        // Through a long stretch without events, stops now and then for checkpoints.
        if let Some(r) = s.replay.as_mut() {
            let alarm = if how == Resume::Continue {
                s.travel.alarm.next(r)
            } else {
                None
            };
            r.set_tick_stop(None);
            // A silent run stops at its goal only; else at the user's tick quanta and the
            // next firing of each periodic tick event.
            let mut stops = match s.travel.run_to {
                Some(goal) => vec![goal],
                None => s.travel.engine.tick_goals(&mut |t| r.ticks_of(t)),
            };
            stops.extend(alarm);
            r.set_thread_tick_stops(stops);
        }
        let mut hook = Hook {
            symbols: &s.symbols,
            table: &mut s.breakpoints,
            watch_values: &mut s.watch_values,
            watch_types: &s.watch_types,
            step_resume: step_resume.clone(),
            reason: None,
            signal_stops: &s.signal_stops,
            signal_print: &s.signal_print,
            signal_pass: &s.signal_pass,
            engine: &mut s.travel.engine,
            time: s.replay.as_ref().map(|r| r.events_replayed()).unwrap_or(0),
            ticks: None,
            silent: s.travel.run_to.is_some(),
            checkpoint_at,
            sites_pending: s.replay.is_some() && !s.pending_sites.is_empty(),
            signals: Some(&mut s.travel.signal_count),
            library_event: s.library_event,
            observer: Some(&mut *obs),
            interrupt: s.in_motion.then_some(&s.interrupt),
            prints: Vec::new(),
        };
        let (stop, mut reason) = match s.replay.as_mut() {
            // A live program runs until it stops or the user interrupts (every thread is then
            // stopped where it is). Without a front end that pauses, the terminal's ^C reaches
            // the program itself, which stops with SIGINT as under gdb.
            None if how == Resume::Continue && s.live_pause => {
                let interrupt = s.interrupt.clone();
                let stop = inf
                    .resume_polled(&mut hook, &mut || {
                        (!interrupt.requested()).then_some(POLL_INTERRUPT)
                    })
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                match stop {
                    StopEvent::Interrupted => (stop, Some(Reason::Interrupted)),
                    stop => (stop, None),
                }
            }
            None => {
                let stop = inf
                    .resume(how, &mut hook)
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                (stop, None)
            }
            Some(replay) => match resume_replay(replay, inf, how, &mut hook)? {
                hindsight_replay::ReplayStop::Program(stop) => (stop, None),
                hindsight_replay::ReplayStop::EndOfRecording(why) => (
                    StopEvent::Stepped { tid: fallback_tid },
                    Some(Reason::EndOfHistory(why)),
                ),
                hindsight_replay::ReplayStop::Divergence(d) => anyhow::bail!("{d}"),
                hindsight_replay::ReplayStop::AtEvent(_) => (StopEvent::Interrupted, None),
                // Only a placement between buffered calls asks for this stop, with its own
                // resume; one met here goes on.
                hindsight_replay::ReplayStop::AtBufferedCall(_) => {
                    (StopEvent::Interrupted, Some(Reason::Checkpoint))
                }
                // A tick stop: the user's tick quantum, a periodic tick event, the goal of a
                // silent run, or the alarm set for a checkpoint in a long stretch (go on).
                hindsight_replay::ReplayStop::AtTick(tid) => {
                    let thread = replay.recorded_tid_of(tid);
                    let time = replay.events_replayed();
                    let ticks = replay.ticks_of(thread);
                    let due = match ticks {
                        Some(t) if !hook.silent => hook.engine.match_tick(thread, t, time),
                        _ => Vec::new(),
                    };
                    let commands: Vec<String> = due
                        .iter()
                        .filter_map(|(_, a)| match a {
                            hindsight_timeline::Action::Commands(c) => Some(c.clone()),
                            _ => None,
                        })
                        .flatten()
                        .collect();
                    match ticks {
                        Some(t)
                            if s.travel.run_to == Some((thread, t))
                                || due
                                    .iter()
                                    .any(|(_, a)| *a == hindsight_timeline::Action::Stop) =>
                        {
                            s.thread = Some(tid);
                            (StopEvent::Interrupted, Some(Reason::Tick(t)))
                        }
                        Some(t) if !commands.is_empty() => (
                            StopEvent::Interrupted,
                            Some(Reason::TickCommands(tid, t, commands)),
                        ),
                        // The user's interrupt, seen in a stretch without events too.
                        _ if hook.interrupt.is_some_and(|i| i.requested()) => {
                            s.thread = Some(tid);
                            (StopEvent::Interrupted, Some(Reason::Interrupted))
                        }
                        _ => {
                            s.travel.alarm.rang(spacing);
                            (StopEvent::Interrupted, Some(Reason::Checkpoint))
                        }
                    }
                }
            },
        };
        if reason.is_none() {
            reason = hook.reason.take();
        }
        let prints = std::mem::take(&mut hook.prints);
        s.started = true;
        for n in prints {
            crate::travel::run_dprintf(s, obs, n, &stop);
        }
        // Debugger events whose action is not a stop: act, then go on.
        match reason {
            Some(Reason::Checkpoint) => {
                s.plant_pending();
                let due = checkpoint_at.is_some_and(|t| std::time::Instant::now() >= t);
                if let (true, Some(r), Some(i)) = (due, s.replay.as_mut(), s.inferior.as_mut()) {
                    s.travel.take_checkpoint(r, i);
                }
                continue;
            }
            Some(Reason::LibraryEvent) => {
                s.refresh_modules();
                crate::breakpoints::resolve_pending(s);
                s.travel.here = None;
                continue;
            }
            Some(Reason::Dprintf) => {
                s.travel.here = None;
                continue;
            }
            Some(Reason::TickCommands(tid, ticks, commands)) => {
                crate::travel::run_tick_commands(s, obs, tid, ticks, &commands);
                s.travel.here = None;
                continue;
            }
            Some(Reason::Time(time, tid)) => {
                let stops = crate::travel::run_due_events(s, obs, time, tid)?;
                if stops {
                    s.thread = Some(tid);
                    return Ok((StopEvent::Interrupted, Some(Reason::Quantum(time))));
                }
                s.travel.here = None;
                continue;
            }
            _ => {}
        }
        // An exec is not a stop for the user: gdb loads the new program and goes on.
        if let StopEvent::Exec { path, .. } = &stop {
            if let Some(r) = &s.replay {
                s.travel.exec_at.get_or_insert(r.events_replayed());
            }
            obs.notice(Notice::Exec {
                pid: s.pid().unwrap_or(0),
                path: path.clone(),
            });
            s.reload_after_exec();
            continue;
        }
        return Ok((stop, reason));
    }
}
