//! Scans and seeks: replaying from a checkpoint, silently, with traps armed, to a goal
//! (now, a position, an event…), writing down what fired on the way.

use super::*;

/// The state of a stop, as it is recognised when replaying again.
#[derive(Debug, Clone)]
pub(super) struct Instant {
    pub(super) event: u64,
    /// The thread's tick count (None: the trace counts none).
    pub(super) ticks: Option<u64>,
    pub(super) regs: Box<[u64; 27]>,
    pub(super) digest: u64,
    /// A signal stop: (time, which signal since then). It is recognised by that count (the
    /// registers were the same just before the signal came).
    pub(super) signal: Option<(u64, u64)>,
}

impl Instant {
    pub(super) fn pc(&self) -> u64 {
        self.regs[RIP]
    }

    /// Whether thread `tid` of `inf`, having counted `ticks`, is in this state now.
    pub(super) fn matches(&self, inf: &Inferior, tid: Tid, ticks: Option<u64>) -> bool {
        if self.signal.is_some() || (self.ticks.is_some() && ticks != self.ticks) {
            return false;
        }
        let Ok(regs) = inf.regs(tid) else {
            return false;
        };
        hindsight_record::point::same_registers(&self.regs, &regs.to_words())
            && digest(inf, regs.sp()) == self.digest
    }
}

impl Instant {
    /// Whether two states captured at stops are the same instant (see [`Instant::matches`]).
    pub(super) fn same(&self, other: &Instant) -> bool {
        self.signal.is_none()
            && other.signal.is_none()
            && self.event == other.event
            && self.ticks == other.ticks
            && self.digest == other.digest
            && hindsight_record::point::same_registers(&self.regs, &other.regs)
    }
}

pub(super) fn digest(inf: &Inferior, sp: u64) -> u64 {
    hindsight_record::point::stack_digest_with(|a, b| inf.read_memory(a, b).is_ok(), sp)
}

/// Where a scan or seek ends.
#[derive(Debug, Clone)]
pub(super) enum Goal {
    /// A state seen before (now, when going back).
    Instant(Instant),
    /// A position.
    Position(Position),
    /// The `n`-th watchpoint trap after `event`.
    WatchTrap { event: u64, n: u64 },
    /// The first event boundary at or after this time.
    Event(u64),
    /// The end of the replay (the program exited or the recording ends).
    End,
    /// The `n`-th signal that reached the program after `event`.
    Signal { event: u64, n: u64 },
    /// The instant when, `event` events replayed, the running thread has counted `ticks`
    /// (at the event itself if it had counted them then).
    Tick { event: u64, ticks: u64 },
}

impl Goal {
    /// The latest event at which the goal can be (a scan must start at or before it).
    fn event(&self) -> u64 {
        match self {
            Goal::Instant(i) => i.event,
            Goal::Position(p) => p.event,
            Goal::WatchTrap { event, .. } => *event,
            Goal::Event(e) => *e,
            Goal::End => u64::MAX,
            Goal::Signal { event, .. } => *event,
            Goal::Tick { event, .. } => *event,
        }
    }

    /// The goal's event and, for goals named by ticks, its tick count.
    pub(super) fn time(&self) -> (u64, Option<u64>) {
        let ticks = match self {
            Goal::Instant(i) => i.ticks,
            Goal::Position(p) => p.ticks,
            Goal::Tick { ticks, .. } => Some(*ticks),
            _ => None,
        };
        (self.event(), ticks)
    }
}

/// Where one of the user's stops fired during a scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mark {
    /// A breakpoint: the position of the trap.
    At(Position),
    /// A watchpoint: its trap (the thread is just past the writing instruction).
    WatchTrap { event: u64, n: u64 },
    /// A signal that stops the program (`handle`): the `n`-th signal after `event`.
    Signal { event: u64, n: u64, signal: i32 },
}

/// An armed address reached by the stepping thread, with its position and its order among
/// everything the scan wrote down.
#[derive(Debug, Clone, Copy)]
pub(super) struct Seen {
    pub(super) position: Position,
    pub(super) seq: u64,
}

/// The hook of a scan or a seek: counts arrivals at every armed address since the last event
/// (they make positions), recognises the goal, and writes down what the caller asked for.
pub(super) struct Scan<'a> {
    /// The user's stops (a copy of the table: scans must not change hit counts).
    pub(super) user: Option<Hook<'a>>,
    pub(super) goal: Goal,
    pub(super) event: u64,
    /// The running thread's tick count, as the replay last told it.
    pub(super) ticks: Option<u64>,
    /// Arrivals at each armed address since the current tick interval (or event) began.
    pub(super) counts: HashMap<u64, u64>,
    pub(super) watch_traps: u64,
    /// Signals that reached the program since the last event.
    pub(super) signals: u64,
    pub(super) reached: bool,
    /// The goal's time went by without it.
    pub(super) passed: bool,
    pub(super) stop_tid: Option<Tid>,
    /// Where the user's stops fired, with why, in order (and their order number).
    pub(super) firings: Vec<(Mark, Reason, u64)>,
    /// Arrivals at armed addresses to write down (as `seen`) for the thread whose fs_base is
    /// this.
    pub(super) visit_thread: Option<u64>,
    pub(super) seen: Vec<Seen>,
    /// Arrivals at these addresses are written down as `arrivals` (address → wanted stack
    /// pointer, or any).
    pub(super) watch_arrivals: HashMap<u64, Option<u64>>,
    /// (position, order number among everything written down).
    pub(super) arrivals: Vec<(Position, u64)>,
    pub(super) seq: u64,
    /// When to stop at an event for an automatic checkpoint.
    pub(super) checkpoint_at: std::time::Instant,
    /// The scan stopped at an event for a checkpoint (or to plant pending sites).
    pub(super) wants_checkpoint: bool,
    /// Breakpoint sites wait for their code to be mapped: stop at every event to try.
    pub(super) sites_pending: bool,
    /// The user's interrupt, heard at every event.
    pub(super) interrupt: Option<crate::session::Interrupter>,
    /// The user interrupted the scan (at an event; `stop_tid` is the thread about to run).
    pub(super) interrupted: bool,
}

impl<'a> Scan<'a> {
    fn new(goal: Goal) -> Scan<'a> {
        Scan {
            user: None,
            goal,
            event: u64::MAX,
            ticks: None,
            counts: HashMap::new(),
            watch_traps: 0,
            signals: 0,
            reached: false,
            passed: false,
            stop_tid: None,
            firings: Vec::new(),
            visit_thread: None,
            seen: Vec::new(),
            watch_arrivals: HashMap::new(),
            arrivals: Vec::new(),
            seq: 0,
            checkpoint_at: std::time::Instant::now() + CHECKPOINT_INTERVAL,
            wants_checkpoint: false,
            sites_pending: false,
            interrupt: None,
            interrupted: false,
        }
    }

    fn reach(&mut self, tid: Tid) -> bool {
        self.reached = true;
        self.stop_tid = Some(tid);
        true
    }

    fn note_visit(&mut self, inf: &Inferior, tid: Tid, position: Position) {
        let Some(fs) = self.visit_thread else { return };
        let Ok(regs) = inf.regs(tid) else { return };
        if regs.to_words()[FS_BASE] != fs {
            return;
        }
        self.seq += 1;
        self.seen.push(Seen {
            position,
            seq: self.seq,
        });
    }
}

pub(super) fn file_key(path: &std::path::Path) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    path.hash(&mut h);
    h.finish()
}

impl StopHook for Scan<'_> {
    fn breakpoint_hit(&mut self, inf: &Inferior, tid: Tid, addr: u64) -> bool {
        let k = {
            let c = self.counts.entry(addr).or_insert(0);
            *c += 1;
            *c
        };
        let position = Position {
            event: self.event,
            ticks: self.ticks,
            pc: addr,
            instance: k,
        };
        match &self.goal {
            Goal::Instant(i)
                if i.event == self.event && i.pc() == addr && i.matches(inf, tid, self.ticks) =>
            {
                return self.reach(tid);
            }
            Goal::Position(p) if *p == position => return self.reach(tid),
            _ => {}
        }
        self.note_visit(inf, tid, position);
        if let Some(want) = self.watch_arrivals.get(&addr) {
            let sp = inf.regs(tid).map(|r| r.sp()).unwrap_or(0);
            if want.is_none_or(|w| w == sp) {
                self.seq += 1;
                self.arrivals.push((position, self.seq));
            }
        }
        if let Some(user) = self.user.as_mut() {
            if user.breakpoint_hit(inf, tid, addr) {
                // (Scans print nothing: the dprintfs hit on the way are not of now.)
                user.prints.clear();
                if let Some(r @ (Reason::Breakpoint(_) | Reason::ConditionError(..))) =
                    user.reason.take()
                {
                    self.seq += 1;
                    self.firings.push((Mark::At(position), r, self.seq));
                }
            }
        }
        false
    }

    fn watchpoint_hit(&mut self, inf: &Inferior, tid: Tid, slots: u8) -> bool {
        self.watch_traps += 1;
        let n = self.watch_traps;
        if let Goal::WatchTrap { event, n: want } = &self.goal {
            if *event == self.event && *want == n {
                return self.reach(tid);
            }
        }
        // Now reached by a watchpoint trap: the write just before it is the first thing
        // undone going back (a reverse motion from a watchpoint stop stops at that write).
        let at_now = matches!(&self.goal, Goal::Instant(i) if i.event == self.event && i.matches(inf, tid, self.ticks));
        if let Some(user) = self.user.as_mut() {
            if user.watchpoint_hit(inf, tid, slots) {
                if let Some(r @ Reason::Watch { .. }) = user.reason.take() {
                    self.seq += 1;
                    let mark = Mark::WatchTrap {
                        event: self.event,
                        n,
                    };
                    self.firings.push((mark, r, self.seq));
                }
            }
        }
        if at_now {
            return self.reach(tid);
        }
        false
    }

    fn notify(&mut self, _: Notification) {}

    fn stops_on_signal(&mut self, signal: i32) -> bool {
        self.signals += 1;
        let n = self.signals;
        let wanted = match &self.goal {
            Goal::Signal { event, n } => Some((*event, *n)),
            Goal::Instant(i) => i.signal,
            _ => None,
        };
        if wanted == Some((self.event, n)) {
            self.reached = true;
            return true;
        }
        if let Some(user) = self.user.as_mut() {
            if user.stops_on_signal(signal) {
                self.seq += 1;
                let mark = Mark::Signal {
                    event: self.event,
                    n,
                    signal,
                };
                self.firings.push((mark, Reason::Signal, self.seq));
            }
        }
        false
    }

    fn clock(&mut self, ticks: Option<u64>) {
        // Arrivals count from the start of the tick interval.
        if ticks != self.ticks {
            self.counts.clear();
        }
        self.ticks = ticks;
        if let Some(user) = self.user.as_mut() {
            user.ticks = ticks;
        }
    }

    fn at_event(&mut self, inf: &Inferior, events: u64, tid: Tid) -> bool {
        if events != self.event {
            self.event = events;
            self.counts.clear();
            self.watch_traps = 0;
            self.signals = 0;
        }
        if let Some(user) = self.user.as_mut() {
            user.time = events;
        }
        if self.interrupt.as_ref().is_some_and(|i| i.requested()) {
            self.interrupted = true;
            self.stop_tid = Some(tid);
            return true;
        }
        let ticks = self.ticks;
        // A goal named by ticks later in this event's stretch: the replay stops here so that
        // the scan sets its tick stop (it then runs there at full speed).
        let goal_ticks = match &self.goal {
            Goal::Position(p) if p.event == events => p.ticks,
            Goal::Instant(i) if i.event == events => i.ticks,
            Goal::Tick { event, ticks } if *event == events => Some(*ticks),
            _ => None,
        };
        if let (Some(want), Some(now)) = (goal_ticks, ticks) {
            if now < want {
                return true;
            }
        }
        match &self.goal {
            Goal::Instant(i) if i.event == events && i.matches(inf, tid, ticks) => self.reach(tid),
            // (A signal stop is announced with the next event: it may be one later.)
            Goal::Instant(i) if events > i.event + u64::from(i.signal.is_some()) => {
                self.passed = true;
                true
            }
            // A position later in the stretch (in a later tick interval) is reached by the
            // replay's tick stop.
            Goal::Position(p)
                if p.event == events
                    && p.instance == 0
                    && (p.ticks.is_none() || p.ticks == ticks) =>
            {
                let pc = inf.regs(tid).map(|r| r.pc()).unwrap_or(0);
                if pc == p.pc {
                    self.reach(tid)
                } else {
                    self.passed = true;
                    true
                }
            }
            Goal::Position(p) if events > p.event => {
                self.passed = true;
                true
            }
            Goal::WatchTrap { event, .. } | Goal::Signal { event, .. } if events > *event => {
                self.passed = true;
                true
            }
            Goal::Event(e) if events >= *e => self.reach(tid),
            Goal::Tick { event, ticks: t } if *event == events && ticks >= Some(*t) => {
                self.reach(tid)
            }
            Goal::Tick { event, .. } if events > *event => {
                self.passed = true;
                true
            }
            _ => {
                if self.sites_pending || std::time::Instant::now() >= self.checkpoint_at {
                    self.wants_checkpoint = true;
                    return true;
                }
                // A goal named by ticks later in this stretch: the replay stops here so that
                // its tick stop is set (it is set for the current event only).
                matches!(self.goal.time(), (e, Some(_)) if e == events)
            }
        }
    }
}

/// Where a scan ended.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Ended {
    /// At its goal.
    Reached,
    /// Not at its goal: the recording or the program ended, or the goal does not exist.
    Missed,
}

/// The user's stops for a scan: copies of the table, the watched values and the engine, so
/// that the scan leaves the session's as they are.
#[derive(Clone)]
pub(super) struct UserCopy {
    pub(super) table: BreakpointTable,
    pub(super) watch_values: HashMap<u32, Vec<u8>>,
    pub(super) engine: Engine,
}

impl UserCopy {
    pub(super) fn of(s: &Session) -> UserCopy {
        UserCopy {
            table: s.breakpoints.clone(),
            watch_values: s.watch_values.clone(),
            engine: s.travel.engine.clone(),
        }
    }
}

/// Replays from the start of the recording, silently, with `scan` as the hook and `extra`
/// addresses armed, until the goal (or the end). Returns how it ended and the scan's notes.
pub(super) fn run_scan(
    s: &mut Session,
    goal: Goal,
    extra: &[u64],
    setup: &mut dyn FnMut(&mut Scan<'_>),
    user: Option<&mut UserCopy>,
) -> anyhow::Result<ScanResult> {
    let start = s.travel.latest_for(&goal, true);
    run_scan_from(s, start, goal, extra, setup, user)
}

/// [`run_scan`] from a given start.
pub(super) fn run_scan_from(
    s: &mut Session,
    start: Start,
    goal: Goal,
    extra: &[u64],
    setup: &mut dyn FnMut(&mut Scan<'_>),
    mut user: Option<&mut UserCopy>,
) -> anyhow::Result<ScanResult> {
    restart_from(s, start)?;
    // Watched values at the start of the recording: a watchpoint compares against them.
    if let Some(u) = user.as_deref_mut() {
        let inf = s.live()?;
        for b in u.table.iter() {
            if let hindsight_breakpoints::table::BreakpointKind::Watchpoint {
                address, len, ..
            } = b.kind
            {
                let mut now = vec![0u8; len as usize];
                if inf.read_memory(address, &mut now).is_ok() {
                    u.watch_values.insert(b.number, now);
                }
            }
        }
    }
    // Sites in code not mapped yet wait with the user's pending ones.
    if let Some(inf) = s.inferior.as_mut() {
        let left = inf.insert_sites_in_code(extra);
        s.pending_sites.extend(left);
    }
    let result = drive(s, goal, setup, user);
    for &a in extra {
        match s.pending_sites.iter().position(|&p| p == a) {
            Some(i) => {
                s.pending_sites.swap_remove(i);
            }
            None => {
                if let Some(inf) = s.inferior.as_mut().filter(|i| i.is_alive()) {
                    let _ = inf.remove_site(a);
                }
            }
        }
    }
    result
}

/// What a scan wrote down.
pub(super) struct ScanResult {
    pub(super) ended: Ended,
    pub(super) stop_tid: Option<Tid>,
    /// The position of the goal, when it was reached at a counted address or an event.
    pub(super) at: Option<Position>,
    pub(super) firings: Vec<(Mark, Reason, u64)>,
    pub(super) seen: Vec<Seen>,
    pub(super) arrivals: Vec<(Position, u64)>,
    pub(super) counts: HashMap<u64, u64>,
    /// The last order number given to a firing or a visit.
    pub(super) seq: u64,
    /// The running thread's tick count where the scan ended.
    pub(super) ticks: Option<u64>,
}

pub(super) fn drive(
    s: &mut Session,
    goal: Goal,
    setup: &mut dyn FnMut(&mut Scan<'_>),
    user: Option<&mut UserCopy>,
) -> anyhow::Result<ScanResult> {
    let Session {
        symbols,
        inferior,
        replay,
        watch_types,
        signal_stops,
        signal_print,
        signal_pass,
        travel,
        pending_sites,
        interrupt,
        in_motion,
        ..
    } = s;
    let (inf, replay) = crate::session::live_replay(inferior, replay)?;
    let mut scan = Scan::new(goal);
    if let Some(u) = user {
        scan.user = Some(Hook {
            symbols,
            table: &mut u.table,
            watch_values: &mut u.watch_values,
            watch_types,
            step_resume: None,
            reason: None,
            signal_stops,
            signal_print,
            signal_pass,
            engine: &mut u.engine,
            time: 0,
            ticks: None,
            silent: false,
            checkpoint_at: None,
            sites_pending: false,
            signals: None,
            library_event: None,
            observer: None,
            interrupt: None,
            prints: Vec::new(),
        });
    }
    setup(&mut scan);
    scan.interrupt = in_motion.then(|| interrupt.clone());
    scan.checkpoint_at = travel.checkpoint_deadline();
    scan.sites_pending = !pending_sites.is_empty();
    // A goal named by ticks: the replay runs to its tick interval at full speed.
    let tick_goal = match &scan.goal {
        Goal::Position(p) => p.ticks.map(|t| (p.event, t)),
        Goal::Instant(i) => i.ticks.map(|t| (i.event, t)),
        Goal::Tick { event, ticks } => Some((*event, *ticks)),
        _ => None,
    };
    // A goal named by ticks and a pc beyond the trap: the breakpoint at its pc goes in once
    // the thread has counted the ticks, with a guard one tick further (then it was missed).
    let goal_pc = match &scan.goal {
        Goal::Position(p) if p.ticks.is_some() && p.instance > 0 => Some(p.pc),
        Goal::Instant(i) if i.ticks.is_some() => Some(i.pc()),
        _ => None,
    };
    let mut planted = false;
    let ended = loop {
        // The goal's tick stop, or an alarm before it for a checkpoint in a long stretch.
        let (now_event, now_ticks, _) = replay.time();
        if let (Some((e, t)), Some(pc), false) = (tick_goal, goal_pc, planted) {
            if e == now_event && now_ticks == Some(t) {
                inf.insert_site(pc).map_err(|e| anyhow::anyhow!("{e}"))?;
                planted = true;
            }
        }
        let goal_stop = tick_goal
            .filter(|(e, _)| *e == now_event)
            .map(|(e, t)| (e, if planted { t + 1 } else { t }));
        replay.set_tick_stop(goal_stop);
        let alarm = travel.alarm.next(replay);
        // For a reverse step, a checkpoint a short distance before a goal that lies far
        // ahead: the next steps back start from it.
        let near_stop = tick_goal
            .filter(|&(e, _)| travel.keep_near && e == now_event)
            .and_then(|(_, t)| {
                let at = t.checked_sub(travel.near_distance())?;
                let runner = replay.runner()?;
                (now_ticks? < at).then_some((runner, at))
            });
        replay.set_thread_tick_stops(alarm.into_iter().chain(near_stop).collect());
        let stop = replay
            .resume(inf, Resume::Continue, &mut scan)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        if let ReplayStop::AtTick(tid) = stop {
            let (event, ticks) = (scan.event, scan.ticks);
            let pc = inf.regs(tid).map(|r| r.pc()).unwrap_or(0);
            let at_goal = match &scan.goal {
                Goal::Position(p) => {
                    p.event == event && p.ticks == ticks && p.instance == 0 && p.pc == pc
                }
                Goal::Instant(i) => i.event == event && i.matches(inf, tid, ticks),
                Goal::Tick { event: e, ticks: t } => *e == event && ticks == Some(*t),
                _ => false,
            };
            let in_goal_interval = tick_goal.is_some_and(|(e, t)| e == event && ticks == Some(t));
            if scan.interrupt.as_ref().is_some_and(|i| i.requested()) {
                // The user's interrupt, seen in a stretch without events too.
                scan.interrupted = true;
                scan.stop_tid = Some(tid);
            } else if at_goal {
                scan.reach(tid);
            } else if in_goal_interval {
                // (The loop's next turn plants the breakpoint at the goal's pc.)
            } else if near_stop.is_some_and(|(_, t)| ticks == Some(t)) {
                travel.take_near_checkpoint(replay, inf, false);
            } else if planted && tick_goal.is_some_and(|(e, t)| e == event && ticks == Some(t + 1))
            {
                break Ended::Missed;
            } else {
                let spacing = travel.checkpoint_spacing();
                travel.alarm.rang(spacing);
                if std::time::Instant::now() >= scan.checkpoint_at {
                    travel.take_checkpoint(replay, inf);
                    scan.checkpoint_at = travel.checkpoint_deadline();
                }
            }
        }
        if scan.interrupted {
            return Err(crate::Interrupted { tid: scan.stop_tid }.into());
        }
        if scan.reached {
            if let ReplayStop::Program(StopEvent::Signal { tid, .. }) = stop {
                scan.stop_tid.get_or_insert(tid);
            }
            break Ended::Reached;
        }
        if scan.wants_checkpoint {
            scan.wants_checkpoint = false;
            // Code mapped since (a library): its breakpoint sites go in now.
            *pending_sites = inf.insert_sites_in_code(pending_sites);
            scan.sites_pending = !pending_sites.is_empty();
            if std::time::Instant::now() >= scan.checkpoint_at {
                travel.take_checkpoint(replay, inf);
                scan.checkpoint_at = travel.checkpoint_deadline();
            }
            continue;
        }
        match stop {
            ReplayStop::AtEvent(_) if scan.passed => break Ended::Missed,
            ReplayStop::AtEvent(_) | ReplayStop::AtTick(_) | ReplayStop::AtBufferedCall(_) => {}
            // A recording cut short ends at the boundary after its last event, which is never
            // announced (no event follows): a goal there is reached there.
            ReplayStop::EndOfRecording(_) => {
                let events = replay.events_replayed();
                // The thread the goal names (for a goal by ticks: one that has counted them).
                let mut found = None;
                for t in inf.threads() {
                    let ticks = replay.ticks_of(replay.recorded_tid_of(t.tid));
                    let here = match &scan.goal {
                        Goal::End => true,
                        Goal::Event(e) => *e <= events,
                        Goal::Tick { event, ticks: want } => {
                            *event == events && ticks >= Some(*want)
                        }
                        Goal::Instant(i) => i.event == events && i.matches(inf, t.tid, ticks),
                        _ => false,
                    };
                    if here {
                        found = Some((t.tid, ticks));
                        break;
                    }
                }
                let Some((tid, ticks)) = found else {
                    break Ended::Missed;
                };
                scan.event = events;
                scan.ticks = ticks;
                scan.reach(tid);
                break Ended::Reached;
            }
            ReplayStop::Program(StopEvent::Exited(_) | StopEvent::Killed(_)) => {
                break match scan.goal {
                    Goal::End => Ended::Reached,
                    _ => Ended::Missed,
                };
            }
            ReplayStop::Divergence(d) => bail!("{d}"),
            ReplayStop::Program(StopEvent::Exec { .. }) => {
                bail!("going back across an exec is not supported yet")
            }
            ReplayStop::Program(_) => {}
        }
    };
    replay.set_tick_stop(None);
    replay.set_thread_tick_stops(Vec::new());
    if let (true, Some(pc)) = (planted, goal_pc) {
        let _ = inf.remove_site(pc);
    }
    let at = match (&scan.goal, ended == Ended::Reached) {
        (Goal::Position(p), true) => Some(*p),
        (Goal::Event(_), true) | (Goal::Instant(_), true) | (Goal::Tick { .. }, true) => {
            let tid = scan.stop_tid;
            let pc = tid
                .and_then(|t| inf.regs(t).ok())
                .map(|r| r.pc())
                .unwrap_or(0);
            let instance = scan.counts.get(&pc).copied().unwrap_or(0);
            // Reached at the event itself (instance 0) unless it was reached by a trap at pc.
            let trapped = matches!(&scan.goal, Goal::Instant(i) if i.pc() == pc)
                && scan.counts.contains_key(&pc);
            Some(Position {
                event: scan.event,
                ticks: scan.ticks,
                pc,
                instance: if trapped { instance } else { 0 },
            })
        }
        _ => None,
    };
    Ok(ScanResult {
        ended,
        stop_tid: scan.stop_tid,
        at,
        firings: scan.firings,
        seen: scan.seen,
        arrivals: scan.arrivals,
        counts: scan.counts,
        seq: scan.seq,
        ticks: scan.ticks,
    })
}

/// Keeps the user's thread by its recorded tid before the replay starts again (its live tid
/// changes); the first restart of a command decides.
fn remember_selection(s: &mut Session) {
    if s.travel.selected.is_none() {
        if let (Some(r), Some(t)) = (s.replay.as_ref(), s.thread) {
            s.travel.selected = Some(r.recorded_tid_of(t));
        }
    }
}

/// Starts the replay again from a checkpoint (None: the start of the recording), silently,
/// with every user breakpoint planted.
pub(super) fn restart_from(s: &mut Session, start: Start) -> anyhow::Result<()> {
    let Some(id) = start else {
        return restart(s);
    };
    let restored = match s.travel.checkpoint_by_id(id) {
        Some(cp) => cp.restore(),
        None => return restart(s),
    };
    let (mut replay, inf) = match restored {
        Ok(r) => r,
        // A checkpoint that cannot be restored is dropped; the start always works.
        Err(_) => {
            s.travel.drop_checkpoint(id);
            return restart(s);
        }
    };
    remember_selection(s);
    s.kill();
    replay.set_quiet(true);
    s.inferior = Some(inf);
    s.replay = Some(replay);
    s.started = true;
    s.keep_symbols();
    crate::breakpoints::replant_all(s)?;
    Ok(())
}

/// Starts the replay again from the start of the recording, silently, with every user
/// breakpoint planted.
pub(super) fn restart(s: &mut Session) -> anyhow::Result<()> {
    let Some(opts) = s.replay_opts.as_mut() else {
        bail!(NEEDS_RECORDING);
    };
    let quiet = opts.quiet;
    opts.quiet = true;
    remember_selection(s);
    s.kill();
    let r = s.spawn_with(true);
    if let Some(opts) = s.replay_opts.as_mut() {
        opts.quiet = quiet;
    }
    r?;
    Ok(())
}

/// After a seek: the program's output shows again as the user asked, the session looks at
/// the thread that stopped, and the debugger events are as they were at that time.
pub(crate) fn arrived(s: &mut Session, tid: Option<Tid>, at: Option<Position>) {
    let quiet = s.replay_opts.as_ref().map(|o| o.quiet).unwrap_or(false);
    if let Some(r) = s.replay.as_mut() {
        r.set_quiet(quiet);
    }
    s.started = true;
    // The user's thread as it was (the stop report says when another one stopped).
    let selected = s
        .travel
        .selected
        .take()
        .and_then(|rec| s.replay.as_ref().and_then(|r| r.live_tid_of(rec)));
    if let Some(t) = selected.or(tid) {
        s.thread = Some(t);
    }
    s.frame = 0;
    if let Some(p) = at {
        s.travel.engine.rewind(p.event);
    }
    s.travel.here = at;
    // A watchpoint compares with the value at the last stop: the one here now.
    refresh_watch_values(s);
}

/// The state of the selected thread now.
pub(super) fn capture(s: &mut Session) -> anyhow::Result<Instant> {
    let tid = s.tid()?;
    let ticks = thread_ticks(s, tid);
    let replay = s.replay.as_ref().context(NEEDS_RECORDING)?;
    let inf = s.live()?;
    let regs = inf.regs(tid).map_err(|e| anyhow::anyhow!("{e}"))?;
    let signal = match s.last_stop {
        Some((StopEvent::Signal { .. }, _)) => Some(s.travel.signal_count),
        _ => None,
    };
    Ok(Instant {
        event: signal.map(|(e, _)| e).unwrap_or(replay.events_replayed()),
        ticks,
        regs: Box::new(regs.to_words()),
        digest: digest(inf, regs.sp()),
        signal,
    })
}

/// The state of thread `tid` now.
pub(super) fn state_of(s: &mut Session, tid: Tid) -> anyhow::Result<Instant> {
    let ticks = thread_ticks(s, tid);
    let event = s.replay.as_ref().map(|r| r.events_replayed()).unwrap_or(0);
    let inf = s.live()?;
    let regs = inf.regs(tid).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(Instant {
        event,
        ticks,
        regs: Box::new(regs.to_words()),
        digest: digest(inf, regs.sp()),
        signal: None,
    })
}

/// Goes to `goal` by replaying from the start. Returns the thread there and its position.
pub(super) fn seek(
    s: &mut Session,
    goal: Goal,
    extra: &[u64],
) -> anyhow::Result<Option<(Tid, Option<Position>)>> {
    // The goal's pc takes a breakpoint — from the start when the goal has no tick count,
    // else only once the replay has counted its ticks (drive plants it: a breakpoint in a hot
    // loop from the start would stop the replay at every iteration).
    let mut extra = extra.to_vec();
    match &goal {
        Goal::Instant(i) if i.ticks.is_none() => extra.push(i.pc()),
        Goal::Position(p) if p.instance > 0 && p.ticks.is_none() => extra.push(p.pc),
        _ => {}
    }
    let r = run_scan(s, goal, &extra, &mut |_| {}, None)?;
    if r.ended != Ended::Reached {
        return Ok(None);
    }
    let tid = r.stop_tid.context("no thread at the position")?;
    arrived(s, Some(tid), r.at);
    Ok(Some((tid, r.at)))
}

/// Comes back to `now` (after a scan, or when a goto fails): it must be there.
pub(super) fn back_to(s: &mut Session, now: &Instant) -> anyhow::Result<(Tid, Position)> {
    let (tid, at) = seek(s, Goal::Instant(now.clone()), &[])?
        .context("replay could not find the current position again (the replay diverged?)")?;
    Ok((tid, at.context("no position")?))
}

/// Goes to the start of the recording (the replay as it begins); the stop says
/// `StartOfHistory` when a reverse command ran into it.
pub(super) fn go_to_start(s: &mut Session, ran_into: bool) -> anyhow::Result<Stop> {
    restart(s)?;
    let tid = s.pid().map(Tid);
    let pos = start_position(s)?;
    arrived(s, tid, Some(pos));
    let stop = StopEvent::Stepped {
        tid: tid.unwrap_or(Tid(0)),
    };
    let reason = ran_into.then_some(Reason::StartOfHistory);
    arrive(s, &stop, reason.as_ref(), true)
}

pub(super) fn start_position(s: &mut Session) -> anyhow::Result<Position> {
    let tid = s.tid()?;
    let ticks = thread_ticks(s, tid);
    let replay = s.replay.as_ref().context(NEEDS_RECORDING)?;
    let pc = s.live()?.regs(tid).map(|r| r.pc()).unwrap_or(0);
    Ok(Position::at_event(replay.events_replayed(), ticks, pc))
}

/// The tick count of live thread `tid` of the replay (None without the counter).
pub(super) fn thread_ticks(s: &mut Session, tid: Tid) -> Option<u64> {
    let replay = s.replay.as_mut()?;
    let recorded = replay.recorded_tid_of(tid);
    replay.ticks_of(recorded)
}

/// The position of the current stop (replays to find it, the first time).
pub(crate) fn here(s: &mut Session) -> anyhow::Result<Position> {
    if s.replay.is_none() {
        bail!(NEEDS_RECORDING);
    }
    if let Some(p) = s.travel.here {
        return Ok(p);
    }
    if !s.started {
        let p = start_position(s)?;
        s.travel.here = Some(p);
        return Ok(p);
    }
    s.check_not_held()?;
    let now = capture(s)?;
    let (_, p) = back_to(s, &now)?;
    Ok(p)
}

/// What scans of the stretch before now wrote down, in time order.
#[derive(Default)]
pub(super) struct Notes {
    pub(super) firings: Vec<(Mark, Reason, u64)>,
    pub(super) seen: Vec<Seen>,
    /// (position, order number).
    pub(super) arrivals: Vec<(Position, u64)>,
    /// The thread at now.
    pub(super) stop_tid: Option<Tid>,
}

/// Scans back from now one checkpoint window at a time, latest first, until `enough` says the
/// notes (everything from the window's start to now) suffice, or the start of the recording
/// is reached (then the second value is true). `with_user`: the user's stops are armed.
pub(super) fn scan_back(
    s: &mut Session,
    now: &Instant,
    extra: &[u64],
    setup: &mut dyn FnMut(&mut Scan<'_>),
    with_user: bool,
    enough: &dyn Fn(&Notes) -> bool,
) -> anyhow::Result<(Notes, bool)> {
    scan_back_from(
        s,
        Goal::Instant(now.clone()),
        extra,
        setup,
        with_user,
        enough,
    )
}

/// [`scan_back`] from `goal` (now, or the end of the replay).
pub(super) fn scan_back_from(
    s: &mut Session,
    first: Goal,
    extra: &[u64],
    setup: &mut dyn FnMut(&mut Scan<'_>),
    with_user: bool,
    enough: &dyn Fn(&Notes) -> bool,
) -> anyhow::Result<(Notes, bool)> {
    // A checkpoint inside a stretch is taken where a tick count begins (the alarm's trap), so
    // arrivals counted per tick interval are right from it; watchpoint traps are counted from
    // the event: with a watchpoint, windows start at events.
    let mid_ok = !s.breakpoints.iter().any(|b| {
        matches!(
            b.kind,
            hindsight_breakpoints::table::BreakpointKind::Watchpoint { .. }
        )
    });
    let mut start = s.travel.latest_for(&first, mid_ok);
    let mut goal = first;
    let mut notes = Notes::default();
    loop {
        let mut user = with_user.then(|| UserCopy::of(s));
        let mut armed = extra.to_vec();
        if let Goal::Instant(now) = &goal {
            armed.push(now.pc());
        }
        // Where this window starts (None: the start of the recording, also for a checkpoint
        // thinned away meanwhile).
        let start_place = start.and_then(|id| s.travel.place_of(id));
        if start_place.is_none() {
            start = None;
        }
        let r = run_scan_from(s, start, goal.clone(), &armed, setup, user.as_mut())?;
        if r.ended != Ended::Reached {
            bail!("replay could not find the current position again (the replay diverged?)");
        }
        if notes.stop_tid.is_none() {
            notes.stop_tid = r.stop_tid;
        }
        // This window comes before what was noted so far.
        for f in &mut notes.firings {
            f.2 += r.seq;
        }
        for v in &mut notes.seen {
            v.seq += r.seq;
        }
        for a in &mut notes.arrivals {
            a.1 += r.seq;
        }
        notes.firings.splice(0..0, r.firings);
        notes.seen.splice(0..0, r.seen);
        notes.arrivals.splice(0..0, r.arrivals);
        if enough(&notes) {
            return Ok((notes, false));
        }
        // The next window ends where this one began, and starts at the checkpoint before
        // (checkpoints may have been thinned meanwhile: it is found by its place).
        let Some(place) = start_place else {
            return Ok((notes, true));
        };
        start = s.travel.latest_before(&place, mid_ok);
        goal = place;
    }
}
