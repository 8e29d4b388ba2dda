//! Resuming the program on the user's behalf: what stops it (breakpoint conditions, ignore
//! counts, watchpoint value changes, step-resume traps) and how the stop is reported.

use std::collections::HashMap;

use hindsight_breakpoints::table::{BreakpointKind, BreakpointTable, Verdict, WatchAccess};
use hindsight_control::{Inferior, Notification, Resume, StopEvent, StopHook};
use hindsight_ptrace::Tid;
use hindsight_symbols::Program;

use crate::context;
use crate::report;
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
    /// A watchpoint: number, old value text (None for reads), new value text.
    Watch {
        number: u32,
        old: Option<String>,
        new: String,
    },
    /// A replay reached the end of its recording (why, in words).
    EndOfHistory(String),
    /// Going back reached the start of the recording.
    StartOfHistory,
    /// A `dprintf` breakpoint was hit: print, then go on.
    Dprintf(u32),
    /// The replay reached a time where debugger events are due (quantum, periodic): the
    /// time, and the thread about to run.
    Time(u64, Tid),
    /// A quantum event stopped the replay at this time.
    Quantum(u64),
    /// The replay stopped at an event for an automatic checkpoint (or to plant breakpoints
    /// whose code is mapped now).
    Checkpoint,
    /// A signal that stops the program (found going back).
    Signal,
    /// The dynamic loader reported a library load: resolve pending breakpoints, go on.
    LibraryEvent,
}

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
    /// Replay: when to stop at an event for an automatic checkpoint.
    pub(crate) checkpoint_at: Option<std::time::Instant>,
    /// Replay: breakpoint sites wait for their code to be mapped (tried at every event).
    pub(crate) sites_pending: bool,
    /// Replay: (time, signals that reached the program since then), which names a signal
    /// stop's position.
    pub(crate) signals: Option<&'a mut (u64, u64)>,
    /// The loader's library-event trap, while pending breakpoints wait.
    pub(crate) library_event: Option<u64>,
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
        if self.library_event == Some(addr) && self.table.breakpoints_at(addr).is_empty() {
            self.reason = Some(Reason::LibraryEvent);
            return true;
        }
        // Conditions are evaluated in the trapping thread; counting follows gdb (the table's
        // rules): a false condition is no hit, an ignored hit still counts.
        let symbols = self.symbols;
        let outcomes = self.table.process_hit(addr, |_, cond| {
            context::eval_condition(symbols, inf, tid, cond)
        });
        let mut stop = None;
        for o in outcomes {
            if !self.engine.admits(o.number, self.time) {
                // An era breakpoint outside its era.
                continue;
            }
            if let Some(e) = o.condition_error {
                // gdb stops and says why when a condition cannot be evaluated.
                stop.get_or_insert(Reason::ConditionError(o.number, e));
            } else if matches!(o.verdict, Verdict::Stop { .. }) {
                let actions = self.engine.match_breakpoint(o.number, self.time);
                let prints = actions
                    .iter()
                    .any(|(_, a)| matches!(a, hindsight_timeline::Action::Print { .. }));
                if prints {
                    stop.get_or_insert(Reason::Dprintf(o.number));
                } else {
                    stop.get_or_insert(Reason::Breakpoint(o.number));
                }
            }
        }
        match stop {
            Some(r) => {
                self.reason = Some(r);
                true
            }
            None => false,
        }
    }

    fn watchpoint_hit(&mut self, inf: &Inferior, tid: Tid, slots: u8) -> bool {
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
            if !self.engine.admits(n, self.time) {
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
            let new = context::format_watch_bytes(self.symbols, &ty, &now, inf);
            let old = match access {
                WatchAccess::Read => None,
                WatchAccess::Access if !changed => None,
                _ => before.map(|b| context::format_watch_bytes(self.symbols, &ty, &b, inf)),
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
        let (name, desc) = report::signal_name(signal);
        let threads = inf.threads();
        match threads.iter().find(|t| t.tid == tid) {
            Some(t) if threads.len() > 1 => {
                let tname = inf.thread_name(tid).unwrap_or_default();
                println!(
                    "\nThread {} \"{tname}\" received signal {name}, {desc}.",
                    t.num
                );
            }
            _ => println!("\nProgram received signal {name}, {desc}."),
        }
    }

    fn at_event(&mut self, _: &Inferior, events: u64, tid: Tid) -> bool {
        self.time = events;
        if self.engine.wants_time(events) {
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

    fn notify(&mut self, note: Notification) {
        match note {
            Notification::NewThread { tid, pthread, .. } => {
                println!("[New Thread {pthread:#x} (LWP {tid})]");
            }
            Notification::ThreadExited { tid, pthread, .. } => {
                println!("[Thread {pthread:#x} (LWP {tid}) exited]");
            }
            Notification::Detached { pid } => {
                println!("[Detaching after fork from child process {pid}]");
            }
        }
    }
}

/// Resumes with `step_resume` armed and returns the stop and its reason, without printing it.
pub(crate) fn resume_raw(
    s: &mut Session,
    how: Resume,
    step_resume: Option<StepResume>,
) -> anyhow::Result<(StopEvent, Option<Reason>)> {
    // Any motion leaves the position that was known.
    s.travel.here = None;
    loop {
        let fallback_tid = s.thread.or(s.pid().map(Tid)).unwrap_or(Tid(0));
        let inf = s
            .inferior
            .as_mut()
            .filter(|i| i.is_alive())
            .ok_or_else(|| anyhow::anyhow!("The program is not being run."))?;
        let checkpoint_at = s.replay.as_ref().map(|_| s.travel.checkpoint_deadline());
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
            checkpoint_at,
            sites_pending: s.replay.is_some() && !s.pending_sites.is_empty(),
            signals: Some(&mut s.travel.signal_count),
            library_event: s.library_event,
        };
        let (stop, mut reason) = match s.replay.as_mut() {
            None => {
                let stop = inf
                    .resume(how, &mut hook)
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                (stop, None)
            }
            Some(replay) => match replay
                .resume(inf, how, &mut hook)
                .map_err(|e| anyhow::anyhow!("{e}"))?
            {
                hindsight_replay::ReplayStop::Program(stop) => (stop, None),
                hindsight_replay::ReplayStop::EndOfRecording(why) => (
                    StopEvent::Stepped { tid: fallback_tid },
                    Some(Reason::EndOfHistory(why)),
                ),
                hindsight_replay::ReplayStop::Divergence(d) => anyhow::bail!("{d}"),
                hindsight_replay::ReplayStop::AtEvent(_) => (StopEvent::Interrupted, None),
            },
        };
        if reason.is_none() {
            reason = hook.reason.take();
        }
        s.started = true;
        // Debugger events whose action is not a stop: act, then go on.
        match reason {
            Some(Reason::Checkpoint) => {
                s.plant_pending();
                let due = checkpoint_at.is_some_and(|t| std::time::Instant::now() >= t);
                if let (true, Some(r), Some(i)) = (due, s.replay.as_ref(), s.inferior.as_mut()) {
                    s.travel.take_checkpoint(r, i);
                }
                continue;
            }
            Some(Reason::LibraryEvent) => {
                s.refresh_modules();
                crate::commands::breakpoints::resolve_pending(s);
                s.travel.here = None;
                continue;
            }
            Some(Reason::Dprintf(n)) => {
                crate::travel::run_dprintf(s, n, &stop);
                s.travel.here = None;
                continue;
            }
            Some(Reason::Time(time, tid)) => {
                let stops = crate::travel::run_due_events(s, time, tid)?;
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
            println!(
                "process {} is executing new program: {path}",
                s.pid().unwrap_or(0)
            );
            s.reload_after_exec();
            continue;
        }
        return Ok((stop, reason));
    }
}

/// Resumes, then prints the stop as gdb does.
pub(crate) fn resume(s: &mut Session, how: Resume) -> anyhow::Result<StopEvent> {
    let (stop, reason) = resume_raw(s, how, None)?;
    report_stop(s, &stop, reason.as_ref(), true)?;
    Ok(stop)
}

/// Prints a stop. `with_frame`: the frame line is printed (gdb omits it when a `step`/`next`
/// stays in the same function).
pub(crate) fn report_stop(
    s: &mut Session,
    stop: &StopEvent,
    reason: Option<&Reason>,
    with_frame: bool,
) -> anyhow::Result<()> {
    report_stop_only(s, stop, reason, with_frame)?;
    // `display` expressions follow every stop of a program that is still there.
    let ended = matches!(stop, StopEvent::Exited(_) | StopEvent::Killed(_));
    if !ended && s.pid().is_some() && !s.displays.is_empty() {
        crate::commands::display::show_all(s);
    }
    Ok(())
}

/// Prints a stop, without the displays.
fn report_stop_only(
    s: &mut Session,
    stop: &StopEvent,
    reason: Option<&Reason>,
    with_frame: bool,
) -> anyhow::Result<()> {
    // A replay is named by the pid the program had when it was recorded (what getpid()
    // returns in it), as gdb on rr does.
    let pid = match &s.replay {
        Some(r) => r.recorded_pid(),
        None => s.inferior.as_ref().map(|i| i.pid()).unwrap_or(0),
    };
    s.stepped_cleanly = matches!(stop, StopEvent::Stepped { .. }) && reason.is_none();
    s.last_stop = Some((stop.clone(), reason.cloned()));
    let tid = match stop {
        StopEvent::Breakpoint { tid, .. }
        | StopEvent::Watchpoint { tid, .. }
        | StopEvent::Stepped { tid }
        | StopEvent::Signal { tid, .. }
        | StopEvent::Syscall { tid }
        | StopEvent::Exec { tid, .. } => *tid,
        StopEvent::Interrupted => match s.thread {
            Some(t) => t,
            None => return Ok(()),
        },
        StopEvent::Exited(code) => {
            if *code == 0 {
                println!("[Inferior 1 (process {pid}) exited normally]");
            } else {
                // gdb prints the status in octal with a leading zero: 3 is 03, 10 is 012.
                println!("[Inferior 1 (process {pid}) exited with code 0{code:o}]");
            }
            delete_temporaries(s, reason);
            s.thread = None;
            return Ok(());
        }
        StopEvent::Killed(sig) => {
            let (name, desc) = report::signal_name(*sig);
            println!("\nProgram terminated with signal {name}, {desc}.");
            println!("The program no longer exists.");
            s.thread = None;
            return Ok(());
        }
    };
    // gdb announces a stop in another thread than the selected one.
    if s.thread.is_some() && s.thread != Some(tid) {
        let pthread = s
            .inferior
            .as_ref()
            .and_then(|i| i.threads().into_iter().find(|t| t.tid == tid))
            .map(|t| t.pthread)
            .unwrap_or(0);
        println!("[Switching to Thread {pthread:#x} (LWP {tid})]");
    }
    s.thread = Some(tid);
    s.frame = 0;
    s.list_next = None;
    s.last_breakpoint = match reason {
        Some(Reason::Breakpoint(n)) => Some(*n),
        _ => None,
    };
    s.refresh_modules();
    let multi = s.live()?.threads().len() > 1;
    let thread_prefix = |s: &Session| -> String {
        let inf = s.inferior.as_ref();
        let num = inf
            .and_then(|i| i.threads().into_iter().find(|t| t.tid == tid))
            .map(|t| t.num)
            .unwrap_or(1);
        let name = inf.and_then(|i| i.thread_name(tid)).unwrap_or_default();
        format!("Thread {num} \"{name}\" ")
    };
    match (stop, reason) {
        (StopEvent::Breakpoint { addr, .. }, Some(Reason::Breakpoint(n))) => {
            let temporary = s.breakpoints.get(*n).map(|b| b.temporary).unwrap_or(false);
            // A breakpoint with several locations names the one hit: `Breakpoint 1.2`.
            let n = match s.breakpoints.get(*n) {
                Some(b) if b.locations.len() > 1 => {
                    match b.locations.iter().position(|a| a == addr) {
                        Some(k) => format!("{n}.{}", k + 1),
                        None => n.to_string(),
                    }
                }
                _ => n.to_string(),
            };
            let what = if temporary {
                "Temporary breakpoint"
            } else {
                "Breakpoint"
            };
            let frame = s.selected_frame()?;
            let line = report::frame_line(s, &frame, 0, report::PcShown::IfMidLine);
            if multi {
                println!("\n{}hit {what} {n}, {line}", thread_prefix(s));
            } else {
                println!("\n{what} {n}, {line}");
            }
            if let Some(src) = report::source_line(s, &frame, 0) {
                println!("{src}");
            }
        }
        (StopEvent::Breakpoint { .. }, Some(Reason::ConditionError(n, e))) => {
            eprintln!("Error in testing condition for breakpoint {n}:");
            eprintln!("{e}");
            let frame = s.selected_frame()?;
            report::print_stop_location(s, &frame, true);
        }
        (StopEvent::Watchpoint { .. }, Some(Reason::Watch { number, old, new })) => {
            let (kind, expr) = match s.breakpoints.get(*number).map(|b| b.kind.clone()) {
                Some(BreakpointKind::Watchpoint { access, expr, .. }) => (access, expr),
                _ => (WatchAccess::Write, String::new()),
            };
            let title = match kind {
                WatchAccess::Write => "Hardware watchpoint",
                WatchAccess::Read => "Hardware read watchpoint",
                WatchAccess::Access => "Hardware access (read/write) watchpoint",
            };
            if multi {
                println!("\n{}hit {title} {number}: {expr}\n", thread_prefix(s));
            } else {
                println!("\n{title} {number}: {expr}\n");
            }
            match old {
                Some(o) => {
                    println!("Old value = {o}");
                    println!("New value = {new}");
                }
                None => println!("Value = {new}"),
            }
            let frame = s.selected_frame()?;
            report::print_stop_location(s, &frame, true);
        }
        (_, Some(Reason::EndOfHistory(why))) => {
            println!("\nNo more reverse-execution history ({why}).");
            let frame = s.selected_frame()?;
            report::print_stop_location(s, &frame, true);
        }
        (_, Some(Reason::StartOfHistory)) => {
            println!("\nNo more reverse-execution history.");
            let frame = s.selected_frame()?;
            report::print_stop_location(s, &frame, true);
        }
        (_, Some(Reason::Quantum(time))) => {
            println!("\nStopped at event {time}.");
            let frame = s.selected_frame()?;
            report::print_stop_location(s, &frame, true);
        }
        (StopEvent::Signal { signal, .. }, _) => {
            let (name, desc) = report::signal_name(*signal);
            if multi {
                println!("\n{}received signal {name}, {desc}.", thread_prefix(s));
            } else {
                println!("\nProgram received signal {name}, {desc}.");
            }
            let frame = s.selected_frame()?;
            report::print_stop_location(s, &frame, true);
        }
        _ => {
            let frame = s.selected_frame()?;
            if !s.quiet_steps {
                report::print_stop_location(s, &frame, with_frame);
            }
        }
    }
    delete_temporaries(s, reason);
    Ok(())
}

/// A temporary breakpoint is deleted once it stopped the program.
fn delete_temporaries(s: &mut Session, reason: Option<&Reason>) {
    if let Some(Reason::Breakpoint(n)) = reason {
        if s.breakpoints.get(*n).map(|b| b.temporary).unwrap_or(false) {
            let _ = crate::commands::breakpoints::delete_one(s, *n);
        }
    }
}
