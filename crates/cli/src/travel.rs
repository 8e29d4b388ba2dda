//! Time travel in a replay (DESIGN.md, "Checkpoints and reverse execution"): the position of
//! a stop (`when`), going to a position (`goto`, bookmarks, checkpoints) and the reverse
//! commands (`reverse-continue`, `reverse-step`, `reverse-next`, `reverse-stepi`,
//! `reverse-nexti`, `reverse-finish`).
//!
//! Method: a replay is deterministic, so any earlier instant is reached again by replaying
//! from a checkpoint before it. A reverse command is a *scan* — a silent replay from the
//! checkpoint to now with the relevant traps armed, writing down as positions where they
//! fired — followed by a *seek*: a replay again, to the position it chose (the last firing for
//! `reverse-continue`, a statement start for `reverse-step`…).
//!
//! "Now" is recognised on the way by its event, pc, registers and stack top: the first
//! instance that matches all of them. Instances that match are indistinguishable to the
//! program's registers and stack, and the replay checks every later event against the
//! recording, so a wrong match cannot pass unnoticed.
//!
//! Checkpoints: the start of the recording (a new replay). Positions are counted from event
//! boundaries, so they stay valid whatever checkpoint a seek starts from.

use std::collections::{BTreeMap, HashMap};

use anyhow::{bail, Context as _};
use hindsight_breakpoints::table::BreakpointTable;
use hindsight_control::{Inferior, Notification, Resume, StopEvent, StopHook};
use hindsight_ptrace::Tid;
use hindsight_replay::ReplayStop;
use hindsight_symbols::Program;
use hindsight_timeline::visits::{self, LineStep, Visit};
use hindsight_timeline::{Action, Engine, Position, Spec};

use crate::hook::{Hook, Reason};
use crate::report;
use crate::session::Session;

/// What reverse commands say on a live session.
pub(crate) const NEEDS_RECORDING: &str =
    "Target native does not support this command: reverse execution needs a recording (use 'hindsight record', then 'hindsight replay').";

/// Index of rip in the register words ([`hindsight_ptrace::Regs::to_words`]).
const RIP: usize = 16;
/// Index of rsp.
const RSP: usize = 19;
/// Index of fs_base: it tells threads apart (each has its own TLS block).
const FS_BASE: usize = 21;

/// Single-steps allowed between an anchor and now when going back one instruction.
const MAX_STEPS: u64 = 5_000_000;

/// Time-travel state of a session.
#[derive(Default)]
pub(crate) struct Travel {
    /// The debugger events (eras, dprintf, periodic and quantum events, bookmarks).
    pub(crate) engine: Engine,
    /// The position of the current stop, once known (forgotten at every motion).
    pub(crate) here: Option<Position>,
    /// Bookmarks by name, in the order they were made.
    pub(crate) bookmarks: BTreeMap<String, (u32, Position)>,
    /// Checkpoints by number.
    pub(crate) checkpoints: BTreeMap<u32, Position>,
    next_checkpoint: u32,
    next_bookmark: u32,
    /// The recorded tid of the thread the user had selected before the replay was started
    /// again (live tids change with every replay).
    selected: Option<i32>,
    /// Checkpoints taken automatically, by event (with an id that stays while others go).
    pub(crate) auto: Vec<(u64, hindsight_replay::Checkpoint)>,
    next_auto: u64,
    /// When the last automatic checkpoint was taken (replay time between two is bounded).
    last_auto: Option<std::time::Instant>,
    /// (time, signals that reached the program since then), kept by the forward hook: the
    /// position of a signal stop.
    pub(crate) signal_count: (u64, u64),
}

/// Replay time between two automatic checkpoints: going back costs about this much replay.
const CHECKPOINT_INTERVAL: std::time::Duration = std::time::Duration::from_millis(50);

/// Automatic checkpoints younger than this many intervals are all kept; older ones are
/// thinned so that their number grows with the logarithm of the recording's length.
const KEEP_RECENT: usize = 8;

impl Travel {
    /// Forgets the thread remembered across replays (at the start of a command).
    pub(crate) fn forget_selection(&mut self) {
        self.selected = None;
    }

    /// When the next automatic checkpoint is due.
    pub(crate) fn checkpoint_deadline(&self) -> std::time::Instant {
        let now = std::time::Instant::now();
        match self.last_auto {
            Some(t) => (t + CHECKPOINT_INTERVAL).max(now),
            None => now + CHECKPOINT_INTERVAL,
        }
    }

    /// Takes an automatic checkpoint of the replay where it is (between two events), if the
    /// process allows one and none is there yet; thins the old ones.
    pub(crate) fn take_checkpoint(
        &mut self,
        replay: &hindsight_replay::Replayer,
        inf: &mut Inferior,
    ) {
        self.last_auto = Some(std::time::Instant::now());
        let event = replay.events_replayed();
        if !replay.can_checkpoint(inf) || self.auto.iter().any(|(_, c)| c.event() == event) {
            return;
        }
        let Ok(cp) = replay.checkpoint(inf) else {
            return;
        };
        self.next_auto += 1;
        let at = self.auto.partition_point(|(_, c)| c.event() < event);
        self.auto.insert(at, (self.next_auto, cp));
        self.thin();
    }

    /// Drops old checkpoints (see [`hindsight_timeline::thinning`]).
    fn thin(&mut self) {
        let events: Vec<u64> = self.auto.iter().map(|(_, c)| c.event()).collect();
        let keep = hindsight_timeline::thinning::keep(&events, KEEP_RECENT);
        let mut i = 0;
        self.auto.retain(|_| {
            i += 1;
            keep[i - 1]
        });
    }

    /// The latest automatic checkpoint at or before `event` (its id).
    fn latest_at_or_before(&self, event: u64) -> Option<u64> {
        self.auto
            .iter()
            .rev()
            .find(|(_, c)| c.event() <= event)
            .map(|(id, _)| *id)
    }

    /// The automatic checkpoint before checkpoint `id` (its id).
    fn before(&self, id: u64) -> Option<u64> {
        let i = self.auto.iter().position(|(k, _)| *k == id)?;
        i.checked_sub(1).map(|j| self.auto[j].0)
    }

    fn event_of(&self, id: u64) -> Option<u64> {
        self.auto
            .iter()
            .find(|(k, _)| *k == id)
            .map(|(_, c)| c.event())
    }
}

/// Where a scan starts: an automatic checkpoint (by id), or the start of the recording.
type Start = Option<u64>;

/// The state of a stop, as it is recognised when replaying again.
#[derive(Debug, Clone)]
struct Instant {
    event: u64,
    regs: Box<[u64; 27]>,
    digest: u64,
    /// A signal stop: (time, which signal since then). It is recognised by that count (the
    /// registers were the same just before the signal came).
    signal: Option<(u64, u64)>,
}

impl Instant {
    fn pc(&self) -> u64 {
        self.regs[RIP]
    }

    /// Whether thread `tid` of `inf` is in this state now.
    fn matches(&self, inf: &Inferior, tid: Tid) -> bool {
        if self.signal.is_some() {
            return false;
        }
        let Ok(regs) = inf.regs(tid) else {
            return false;
        };
        hindsight_record::point::same_registers(&self.regs, &regs.to_words())
            && digest(inf, regs.sp()) == self.digest
    }
}

fn digest(inf: &Inferior, sp: u64) -> u64 {
    hindsight_record::point::stack_digest_with(|a, b| inf.read_memory(a, b).is_ok(), sp)
}

/// Where a scan or seek ends.
#[derive(Debug, Clone)]
enum Goal {
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
        }
    }
}

/// Where one of the user's stops fired during a scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mark {
    /// A breakpoint: the position of the trap.
    At(Position),
    /// A watchpoint: its trap (the thread is just past the writing instruction).
    WatchTrap { event: u64, n: u64 },
    /// A signal that stops the program (`handle`): the `n`-th signal after `event`.
    Signal { event: u64, n: u64, signal: i32 },
}

/// A statement start reached by the stepping thread, with its position and its order among
/// everything the scan wrote down.
#[derive(Debug, Clone, Copy)]
struct Seen {
    visit: Visit,
    position: Position,
    seq: u64,
}

/// The hook of a scan or a seek: counts arrivals at every armed address since the last event
/// (they make positions), recognises the goal, and writes down what the caller asked for.
struct Scan<'a> {
    symbols: &'a Program,
    /// The user's stops (a copy of the table: scans must not change hit counts).
    user: Option<Hook<'a>>,
    goal: Goal,
    event: u64,
    counts: HashMap<u64, u64>,
    watch_traps: u64,
    /// Signals that reached the program since the last event.
    signals: u64,
    reached: bool,
    /// The goal's time went by without it.
    passed: bool,
    stop_tid: Option<Tid>,
    /// Where the user's stops fired, with why, in order (and their order number).
    firings: Vec<(Mark, Reason, u64)>,
    /// Statement starts to write down for the thread whose fs_base is this.
    visit_thread: Option<u64>,
    seen: Vec<Seen>,
    /// Arrivals at these addresses are written down as `arrivals` (address → wanted stack
    /// pointer, or any).
    watch_arrivals: HashMap<u64, Option<u64>>,
    arrivals: Vec<(Position, u64)>,
    seq: u64,
    /// When to stop at an event for an automatic checkpoint.
    checkpoint_at: std::time::Instant,
    /// The scan stopped at an event for a checkpoint.
    wants_checkpoint: bool,
}

impl<'a> Scan<'a> {
    fn new(symbols: &'a Program, goal: Goal) -> Scan<'a> {
        Scan {
            symbols,
            user: None,
            goal,
            event: u64::MAX,
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
        let Some(visit) = visit_of(self.symbols, inf, &regs) else {
            return;
        };
        self.seq += 1;
        self.seen.push(Seen {
            visit,
            position,
            seq: self.seq,
        });
    }
}

/// The visit a thread stopped with `regs` at a statement start makes.
fn visit_of(symbols: &Program, inf: &Inferior, regs: &hindsight_ptrace::Regs) -> Option<Visit> {
    let pc = regs.pc();
    let line = symbols.line_at(pc)?;
    let mut d = hindsight_symbols::target::DwarfRegs::default();
    for (i, v) in regs.dwarf().iter().enumerate() {
        d.0[i] = Some(*v);
    }
    let mem = crate::context::Memory(inf);
    let cfa = symbols.unwind(&d, &mem, 1).first()?.cfa?;
    Some(Visit {
        cfa,
        line: (file_key(&line.file), line.line),
    })
}

fn file_key(path: &std::path::Path) -> u64 {
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
            pc: addr,
            instance: k,
        };
        match &self.goal {
            Goal::Instant(i) if i.event == self.event && i.pc() == addr && i.matches(inf, tid) => {
                return self.reach(tid);
            }
            Goal::Position(p) if *p == position => return self.reach(tid),
            _ => {}
        }
        self.note_visit(inf, tid, position);
        if let Some(want) = self.watch_arrivals.get(&addr) {
            let sp = inf.regs(tid).map(|r| r.sp()).unwrap_or(0);
            if want.is_none_or(|w| w == sp) {
                self.arrivals.push((position, sp));
            }
        }
        if let Some(user) = self.user.as_mut() {
            if user.breakpoint_hit(inf, tid, addr) {
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
        match &self.goal {
            Goal::WatchTrap { event, n: want } if *event == self.event && *want == n => {
                return self.reach(tid);
            }
            Goal::Instant(i) if i.event == self.event && i.matches(inf, tid) => {
                return self.reach(tid);
            }
            _ => {}
        }
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
        match &self.goal {
            Goal::Instant(i) if i.event == events && i.matches(inf, tid) => self.reach(tid),
            // (A signal stop is announced with the next event: it may be one later.)
            Goal::Instant(i) if events > i.event + u64::from(i.signal.is_some()) => {
                self.passed = true;
                true
            }
            Goal::Position(p) if p.event == events && p.instance == 0 => {
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
            _ => {
                if std::time::Instant::now() >= self.checkpoint_at {
                    self.wants_checkpoint = true;
                    return true;
                }
                false
            }
        }
    }
}

/// Where a scan ended.
#[derive(Debug, PartialEq, Eq)]
enum Ended {
    /// At its goal.
    Reached,
    /// Not at its goal: the recording or the program ended, or the goal does not exist.
    Missed,
}

/// The user's stops for a scan: copies of the table, the watched values and the engine, so
/// that the scan leaves the session's as they are.
struct UserCopy {
    table: BreakpointTable,
    watch_values: HashMap<u32, Vec<u8>>,
    engine: Engine,
}

impl UserCopy {
    fn of(s: &Session) -> UserCopy {
        UserCopy {
            table: s.breakpoints.clone(),
            watch_values: s.watch_values.clone(),
            engine: s.travel.engine.clone(),
        }
    }
}

/// Replays from the start of the recording, silently, with `scan` as the hook and `extra`
/// addresses armed, until the goal (or the end). Returns how it ended and the scan's notes.
fn run_scan(
    s: &mut Session,
    goal: Goal,
    extra: &[u64],
    setup: &mut dyn FnMut(&mut Scan<'_>),
    user: Option<&mut UserCopy>,
) -> anyhow::Result<ScanResult> {
    let start = s.travel.latest_at_or_before(goal.event());
    run_scan_from(s, start, goal, extra, setup, user)
}

/// [`run_scan`] from a given start.
fn run_scan_from(
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
    let mut armed = Vec::new();
    if let Some(inf) = s.inferior.as_mut() {
        for &a in extra {
            if inf.insert_site(a).is_ok() {
                armed.push(a);
            }
        }
    }
    let result = drive(s, goal, setup, user);
    if let Some(inf) = s.inferior.as_mut().filter(|i| i.is_alive()) {
        for a in armed {
            let _ = inf.remove_site(a);
        }
    }
    result
}

/// What a scan wrote down.
struct ScanResult {
    ended: Ended,
    stop_tid: Option<Tid>,
    /// The position of the goal, when it was reached at a counted address or an event.
    at: Option<Position>,
    firings: Vec<(Mark, Reason, u64)>,
    seen: Vec<Seen>,
    arrivals: Vec<(Position, u64)>,
    counts: HashMap<u64, u64>,
    /// The last order number given to a firing or a visit.
    seq: u64,
}

fn drive(
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
        travel,
        ..
    } = s;
    let inf = inferior
        .as_mut()
        .filter(|i| i.is_alive())
        .context("The program is not being run.")?;
    let replay = replay.as_mut().context(NEEDS_RECORDING)?;
    let mut scan = Scan::new(symbols, goal);
    if let Some(u) = user {
        scan.user = Some(Hook {
            symbols,
            table: &mut u.table,
            watch_values: &mut u.watch_values,
            watch_types,
            step_resume: None,
            reason: None,
            signal_stops,
            engine: &mut u.engine,
            time: 0,
            checkpoint_at: None,
            signals: None,
        });
    }
    setup(&mut scan);
    scan.checkpoint_at = travel.checkpoint_deadline();
    let ended = loop {
        let stop = replay
            .resume(inf, Resume::Continue, &mut scan)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        if scan.reached {
            if let ReplayStop::Program(StopEvent::Signal { tid, .. }) = stop {
                scan.stop_tid.get_or_insert(tid);
            }
            break Ended::Reached;
        }
        if scan.wants_checkpoint {
            scan.wants_checkpoint = false;
            travel.take_checkpoint(replay, inf);
            scan.checkpoint_at = travel.checkpoint_deadline();
            continue;
        }
        match stop {
            ReplayStop::AtEvent(_) if scan.passed => break Ended::Missed,
            ReplayStop::AtEvent(_) => {}
            ReplayStop::EndOfRecording(_)
            | ReplayStop::Program(StopEvent::Exited(_) | StopEvent::Killed(_)) => {
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
    let at = match (&scan.goal, ended == Ended::Reached) {
        (Goal::Position(p), true) => Some(*p),
        (Goal::Event(_), true) | (Goal::Instant(_), true) => {
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
    })
}

/// Starts the replay again from a checkpoint (None: the start of the recording), silently,
/// with every user breakpoint planted.
fn restart_from(s: &mut Session, start: Start) -> anyhow::Result<()> {
    let Some(id) = start else {
        return restart(s);
    };
    let restored = match s.travel.auto.iter().find(|(k, _)| *k == id) {
        Some((_, cp)) => cp.restore(),
        None => return restart(s),
    };
    let (mut replay, inf) = match restored {
        Ok(r) => r,
        // A checkpoint that cannot be restored is dropped; the start always works.
        Err(_) => {
            s.travel.auto.retain(|(k, _)| *k != id);
            return restart(s);
        }
    };
    if s.travel.selected.is_none() {
        if let (Some(r), Some(t)) = (s.replay.as_ref(), s.thread) {
            s.travel.selected = Some(r.recorded_tid_of(t));
        }
    }
    s.kill();
    replay.set_quiet(true);
    s.inferior = Some(inf);
    s.replay = Some(replay);
    s.started = true;
    s.load_symbols();
    crate::commands::breakpoints::replant_all(s)?;
    Ok(())
}

/// Starts the replay again from the start of the recording, silently, with every user
/// breakpoint planted.
fn restart(s: &mut Session) -> anyhow::Result<()> {
    let Some(opts) = s.replay_opts.as_mut() else {
        bail!(NEEDS_RECORDING);
    };
    let quiet = opts.quiet;
    opts.quiet = true;
    if s.travel.selected.is_none() {
        if let (Some(r), Some(t)) = (s.replay.as_ref(), s.thread) {
            s.travel.selected = Some(r.recorded_tid_of(t));
        }
    }
    s.kill();
    let r = s.spawn();
    if let Some(opts) = s.replay_opts.as_mut() {
        opts.quiet = quiet;
    }
    r?;
    Ok(())
}

/// After a seek: the program's output shows again as the user asked, the session looks at
/// the thread that stopped, and the debugger events are as they were at that time.
fn arrived(s: &mut Session, tid: Option<Tid>, at: Option<Position>) {
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
}

/// The state of the selected thread now.
fn capture(s: &Session) -> anyhow::Result<Instant> {
    let replay = s.replay.as_ref().context(NEEDS_RECORDING)?;
    let tid = s.tid()?;
    let inf = s.live()?;
    let regs = inf.regs(tid).map_err(|e| anyhow::anyhow!("{e}"))?;
    let signal = match s.last_stop {
        Some((StopEvent::Signal { .. }, _)) => Some(s.travel.signal_count),
        _ => None,
    };
    Ok(Instant {
        event: signal.map(|(e, _)| e).unwrap_or(replay.events_replayed()),
        regs: Box::new(regs.to_words()),
        digest: digest(inf, regs.sp()),
        signal,
    })
}

/// Goes to `goal` by replaying from the start. Returns the thread there and its position.
fn seek(
    s: &mut Session,
    goal: Goal,
    extra: &[u64],
) -> anyhow::Result<Option<(Tid, Option<Position>)>> {
    let mut extra = extra.to_vec();
    match &goal {
        Goal::Instant(i) => extra.push(i.pc()),
        Goal::Position(p) if p.instance > 0 => extra.push(p.pc),
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
fn back_to(s: &mut Session, now: &Instant) -> anyhow::Result<(Tid, Position)> {
    let (tid, at) = seek(s, Goal::Instant(now.clone()), &[])?
        .context("replay could not find the current position again (the replay diverged?)")?;
    Ok((tid, at.context("no position")?))
}

/// The start of the recording: the replay as it begins.
fn go_to_start(s: &mut Session) -> anyhow::Result<()> {
    restart(s)?;
    let tid = s.pid().map(Tid);
    let pos = start_position(s)?;
    arrived(s, tid, Some(pos));
    let stop = StopEvent::Stepped {
        tid: tid.unwrap_or(Tid(0)),
    };
    crate::hook::report_stop(s, &stop, Some(&Reason::StartOfHistory), true)
}

fn start_position(s: &Session) -> anyhow::Result<Position> {
    let replay = s.replay.as_ref().context(NEEDS_RECORDING)?;
    let tid = s.tid()?;
    let pc = s.live()?.regs(tid).map(|r| r.pc()).unwrap_or(0);
    Ok(Position::at_event(replay.events_replayed(), pc))
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
    let now = capture(s)?;
    let (_, p) = back_to(s, &now)?;
    Ok(p)
}

/// What scans of the stretch before now wrote down, in time order.
#[derive(Default)]
struct Notes {
    firings: Vec<(Mark, Reason, u64)>,
    seen: Vec<Seen>,
    arrivals: Vec<(Position, u64)>,
    /// The thread at now.
    stop_tid: Option<Tid>,
}

/// Scans back from now one checkpoint window at a time, latest first, until `enough` says the
/// notes (everything from the window's start to now) suffice, or the start of the recording
/// is reached (then the second value is true). `with_user`: the user's stops are armed.
fn scan_back(
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
fn scan_back_from(
    s: &mut Session,
    first: Goal,
    extra: &[u64],
    setup: &mut dyn FnMut(&mut Scan<'_>),
    with_user: bool,
    enough: &dyn Fn(&Notes) -> bool,
) -> anyhow::Result<(Notes, bool)> {
    let mut start = s.travel.latest_at_or_before(first.event());
    let mut goal = first;
    let mut notes = Notes::default();
    loop {
        let mut user = with_user.then(|| UserCopy::of(s));
        let mut armed = extra.to_vec();
        if let Goal::Instant(now) = &goal {
            armed.push(now.pc());
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
        notes.firings.splice(0..0, r.firings);
        notes.seen.splice(0..0, r.seen);
        notes.arrivals.splice(0..0, r.arrivals);
        if enough(&notes) {
            return Ok((notes, false));
        }
        let Some(id) = start else {
            return Ok((notes, true));
        };
        let Some(event) = s.travel.event_of(id) else {
            return Ok((notes, true));
        };
        goal = Goal::Event(event);
        start = s.travel.before(id);
    }
}

/// The user's stops that fired before now (the latest window that has any).
fn firings_before_now(s: &mut Session, now: &Instant) -> anyhow::Result<Vec<(Mark, Reason, u64)>> {
    let (notes, _) = scan_back(s, now, &[], &mut |_| {}, true, &|n| !n.firings.is_empty())?;
    Ok(notes.firings)
}

/// `reverse-continue`: back to the last breakpoint hit or watched change before now (from
/// the end, when the program has exited).
pub(crate) fn reverse_continue(s: &mut Session) -> anyhow::Result<()> {
    let firings = if s.pid().is_some() {
        let now = capture(s)?;
        firings_before_now(s, &now)?
    } else {
        if s.replay.is_none() {
            bail!(NEEDS_RECORDING);
        }
        let (notes, _) = scan_back_from(s, Goal::End, &[], &mut |_| {}, true, &|n| {
            !n.firings.is_empty()
        })?;
        notes.firings
    };
    let Some((mark, reason, _)) = firings.last().cloned() else {
        return go_to_start(s);
    };
    go_to_firing(s, mark, reason)
}

/// Goes to where a user stop fired and reports it as gdb does in reverse.
fn go_to_firing(s: &mut Session, mark: Mark, reason: Reason) -> anyhow::Result<()> {
    match mark {
        Mark::At(p) => {
            let (tid, _) = seek(s, Goal::Position(p), &[])?
                .context("replay could not find the breakpoint hit again")?;
            // The hit is reported: going on steps over the breakpoint.
            let _ = s.live_mut()?.note_hit_reported(tid);
            let stop = StopEvent::Breakpoint { tid, addr: p.pc };
            s.last_breakpoint = None;
            crate::hook::report_stop(s, &stop, Some(&reason), true)
        }
        Mark::Signal { event, n, signal } => {
            let (tid, _) = seek(s, Goal::Signal { event, n }, &[])?
                .context("replay could not find the signal again")?;
            // The forward hook counts on from here.
            s.travel.signal_count = (event, n);
            let stop = StopEvent::Signal { tid, signal };
            crate::hook::report_stop(s, &stop, Some(&reason), true)
        }
        Mark::WatchTrap { event, n } => {
            let tid = seek_writer(s, event, n)?;
            // In reverse the values swap: the later one was "old" when going back.
            let reason = match reason {
                Reason::Watch {
                    number,
                    old: Some(old),
                    new,
                } => Reason::Watch {
                    number,
                    old: Some(new),
                    new: old,
                },
                other => other,
            };
            // The watched values are now those before the write.
            refresh_watch_values(s);
            let stop = StopEvent::Watchpoint { tid, slots: 0 };
            crate::hook::report_stop(s, &stop, Some(&reason), true)
        }
    }
}

/// Reads every watched value again (after time moved).
fn refresh_watch_values(s: &mut Session) {
    let Ok(inf) = s.live() else { return };
    let mut fresh = Vec::new();
    for b in s.breakpoints.iter() {
        if let hindsight_breakpoints::table::BreakpointKind::Watchpoint { address, len, .. } =
            b.kind
        {
            let mut now = vec![0u8; len as usize];
            if inf.read_memory(address, &mut now).is_ok() {
                fresh.push((b.number, now));
            }
        }
    }
    for (n, v) in fresh {
        s.watch_values.insert(n, v);
    }
}

/// Goes to the instruction that made the `n`-th watchpoint trap after `event`, before it
/// runs (where gdb stops when a watchpoint triggers in reverse).
fn seek_writer(s: &mut Session, event: u64, n: u64) -> anyhow::Result<Tid> {
    let (tid, _) = seek(s, Goal::WatchTrap { event, n }, &[])?
        .context("replay could not find the watchpoint trap again")?;
    let after = s.live()?.regs(tid).map(|r| r.pc()).unwrap_or(0);
    let Some(writer) = instruction_before(s, after) else {
        // Not in a function we can decode: stay just past the write.
        return Ok(tid);
    };
    let r = run_scan(
        s,
        Goal::WatchTrap { event, n },
        &[writer],
        &mut |_| {},
        None,
    )?;
    let k = r.counts.get(&writer).copied().unwrap_or(0);
    if r.ended != Ended::Reached || k == 0 {
        bail!("replay could not find the instruction that wrote the watched value");
    }
    let p = Position {
        event,
        pc: writer,
        instance: k,
    };
    let (tid, _) = seek(s, Goal::Position(p), &[])?
        .context("replay could not find the instruction that wrote the watched value")?;
    Ok(tid)
}

/// The instruction that ends at `addr`, found by decoding its function from the start.
fn instruction_before(s: &Session, addr: u64) -> Option<u64> {
    let f = s.symbols.function_at(addr.checked_sub(1)?)?;
    let inf = s.live().ok()?;
    let len = addr.checked_sub(f.low)? as usize;
    if len == 0 || len > 1 << 20 {
        return None;
    }
    let mut code = vec![0u8; len + 15];
    let mut n = code.len();
    while n > len && inf.read_memory(f.low, &mut code[..n]).is_err() {
        n -= 1;
    }
    if n < len {
        return None;
    }
    // (read_memory shows the bytes under our breakpoints.)
    let mut dec = iced_x86::Decoder::with_ip(64, &code[..n], f.low, iced_x86::DecoderOptions::NONE);
    let mut insn = iced_x86::Instruction::default();
    while dec.can_decode() {
        dec.decode_out(&mut insn);
        if insn.next_ip() == addr {
            return Some(insn.ip());
        }
        if insn.next_ip() > addr || insn.is_invalid() {
            return None;
        }
    }
    None
}

/// `reverse-stepi` (`over_calls`: `reverse-nexti`).
pub(crate) fn reverse_stepi(s: &mut Session, over_calls: bool) -> anyhow::Result<()> {
    let now = capture(s)?;
    let before = match previous_instruction(s, &now)? {
        Some(b) => b,
        None => return go_to_start(s),
    };
    let (mut tid, mut at) = before;
    if over_calls {
        // Stepped back into a function called by the previous instruction: back to the call.
        let sp = s.live()?.regs(tid).map(|r| r.sp()).unwrap_or(0);
        let now_sp = now.regs[RSP];
        if sp < now_sp {
            if let Some(call) = instruction_before(s, now.pc()) {
                if let Some((t, p)) = last_arrival(s, &now, call, Some(now_sp))? {
                    let (t2, _) = seek(s, Goal::Position(p), &[])?
                        .context("replay could not find the call again")?;
                    tid = t2;
                    let _ = t;
                    at = p;
                }
            }
        }
    }
    let _ = at;
    let new_func = s.symbols.function_at(now.pc()).map(|f| f.low)
        != s.symbols
            .function_at(s.live()?.regs(tid).map(|r| r.pc()).unwrap_or(0))
            .map(|f| f.low);
    let stop = StopEvent::Stepped { tid };
    crate::hook::report_stop(s, &stop, None, new_func)
}

/// The last arrival at `addr` (with stack pointer `sp`, if given) before `now`.
fn last_arrival(
    s: &mut Session,
    now: &Instant,
    addr: u64,
    sp: Option<u64>,
) -> anyhow::Result<Option<(Tid, Position)>> {
    let (notes, _) = scan_back(
        s,
        now,
        &[addr],
        &mut |scan| {
            scan.watch_arrivals.insert(addr, sp);
        },
        false,
        &|n| !n.arrivals.is_empty(),
    )?;
    Ok(notes
        .arrivals
        .last()
        .map(|(p, _)| (notes.stop_tid.unwrap_or(Tid(0)), *p)))
}

/// Goes to the instruction instance just before `now`; None at the start of the recording.
fn previous_instruction(s: &mut Session, now: &Instant) -> anyhow::Result<Option<(Tid, Position)>> {
    // An anchor shortly before now: the last statement start reached in now's stretch of
    // execution (else the event that starts it). Single-steps cover the rest.
    let starts = s.symbols.statement_starts();
    let fs = now.regs[FS_BASE];
    let mut extra = starts.clone();
    extra.push(now.pc());
    let r = run_scan(
        s,
        Goal::Instant(now.clone()),
        &extra,
        &mut |scan| {
            scan.visit_thread = Some(fs);
            for &a in &starts {
                scan.watch_arrivals.insert(a, None);
            }
        },
        None,
    )?;
    if r.ended != Ended::Reached {
        bail!("replay could not find the current position again (the replay diverged?)");
    }
    let at_now = r.at.context("no position")?;
    let anchor = match r.arrivals.iter().rev().find(|(p, _)| p.event == now.event) {
        Some((p, _)) => Goal::Position(*p),
        None if at_now.instance == 0 => {
            // Now is the start of its stretch: the previous instruction ran before the event
            // (a syscall, usually) — that is the last instant of the previous stretch.
            return previous_stretch_end(s, now);
        }
        None => Goal::Event(now.event),
    };
    let (tid, _) = seek(s, anchor.clone(), &[])?.context("replay could not go back")?;
    let steps = steps_to(s, tid, now)?;
    // A new replay: its threads have new tids.
    let (tid, _) = seek(s, anchor, &[])?.context("replay could not go back")?;
    for _ in 0..steps.saturating_sub(1) {
        step_once(s, tid)?;
    }
    let pc = s.live()?.regs(tid).map(|r| r.pc()).unwrap_or(0);
    s.travel.here = None;
    Ok(Some((tid, Position::at_event(now.event, pc))))
}

/// Now is right after an event (a syscall returned): the previous instruction is the one
/// that made it, the last instant before the event.
fn previous_stretch_end(s: &mut Session, now: &Instant) -> anyhow::Result<Option<(Tid, Position)>> {
    // The syscall instruction is just before pc (syscall is 2 bytes); go to its last
    // arrival before now.
    let pc = now.pc();
    let Some(call) = pc.checked_sub(2) else {
        return Ok(None);
    };
    let mut code = [0u8; 2];
    let is_syscall = s.live()?.read_memory(call, &mut code).is_ok() && code == [0x0f, 0x05];
    if !is_syscall {
        return Ok(None);
    }
    match last_arrival(s, now, call, Some(now.regs[RSP]))? {
        Some((_, p)) => Ok(seek(s, Goal::Position(p), &[])?.map(|(t, _)| (t, p))),
        None => Ok(None),
    }
}

/// Single-steps `tid` from here until the state is `now`; returns the number of steps.
fn steps_to(s: &mut Session, tid: Tid, now: &Instant) -> anyhow::Result<u64> {
    let mut n = 0;
    loop {
        if n >= MAX_STEPS {
            bail!("the previous instruction is too far from the last statement start ({MAX_STEPS} instructions)");
        }
        step_once(s, tid)?;
        n += 1;
        let events = s.replay.as_ref().map(|r| r.events_replayed()).unwrap_or(0);
        if std::env::var_os("HINDSIGHT_TRACE_TRAVEL").is_some() {
            if let Ok(r) = s.live()?.regs(tid) {
                if r.pc() == now.pc() {
                    eprintln!("travel: at now's pc, events {events} vs {}: regs {:x?} vs {:x?}, digest {:x} vs {:x}", now.event, r.to_words(), now.regs, digest(s.live()?, r.sp()), now.digest);
                }
            }
        }
        if events == now.event && now.matches(s.live()?, tid) {
            return Ok(n);
        }
        if events > now.event {
            bail!("replay could not find the current position again (stepped past it)");
        }
    }
}

/// One instruction of `tid`, in the replay, silently.
fn step_once(s: &mut Session, tid: Tid) -> anyhow::Result<()> {
    let Session {
        inferior, replay, ..
    } = s;
    let inf = inferior
        .as_mut()
        .filter(|i| i.is_alive())
        .context("The program is not being run.")?;
    let replay = replay.as_mut().context(NEEDS_RECORDING)?;
    struct Quiet;
    impl StopHook for Quiet {
        fn breakpoint_hit(&mut self, _: &Inferior, _: Tid, _: u64) -> bool {
            false
        }
        fn watchpoint_hit(&mut self, _: &Inferior, _: Tid, _: u8) -> bool {
            false
        }
        fn notify(&mut self, _: Notification) {}
        fn stops_on_signal(&mut self, _: i32) -> bool {
            false
        }
    }
    match replay
        .resume(inf, Resume::Step(tid), &mut Quiet)
        .map_err(|e| anyhow::anyhow!("{e}"))?
    {
        ReplayStop::Program(StopEvent::Stepped { .. }) => Ok(()),
        ReplayStop::Divergence(d) => bail!("{d}"),
        other => bail!("replay stopped while stepping: {other:?}"),
    }
}

/// `reverse-step` / `reverse-next`.
pub(crate) fn reverse_line_step(s: &mut Session, kind: LineStep) -> anyhow::Result<()> {
    let now = capture(s)?;
    let tid = s.tid()?;
    let inf = s.live()?;
    let regs = inf.regs(tid).map_err(|e| anyhow::anyhow!("{e}"))?;
    let Some(here) = visit_of(&s.symbols, inf, &regs) else {
        // No line information here: one instruction back, as gdb steps without lines.
        return reverse_stepi(s, kind == LineStep::Next);
    };
    let at_start = s
        .symbols
        .line_at(now.pc())
        .map(|l| l.address == now.pc() && l.is_stmt)
        .unwrap_or(false);
    let start_func = s.symbols.function_at(now.pc()).map(|f| f.low);
    let starts = s.symbols.statement_starts();
    let fs = now.regs[FS_BASE];
    let current = visits::Now {
        cfa: here.cfa,
        line: here.line,
        at_statement_start: at_start,
    };
    // Enough when a target is found that cannot lie further back (see visits::target), or a
    // breakpoint fired (the latest one stops the step if it comes after the target).
    let found = |n: &Notes| {
        let visits: Vec<Visit> = n.seen.iter().map(|v| v.visit).collect();
        matches!(visits::target(&visits, current, kind), Some(i) if i > 0) || !n.firings.is_empty()
    };
    let (notes, _) = scan_back(
        s,
        &now,
        &starts,
        &mut |scan| scan.visit_thread = Some(fs),
        true,
        &found,
    )?;
    let visits: Vec<Visit> = notes.seen.iter().map(|v| v.visit).collect();
    let target = visits::target(&visits, current, kind).map(|i| notes.seen[i]);
    // A breakpoint met on the way back stops the step there, as in gdb.
    if let Some((mark, reason, seq)) = notes.firings.last().cloned() {
        if target.is_none_or(|t| seq > t.seq) {
            return go_to_firing(s, mark, reason);
        }
    }
    let Some(target) = target else {
        return go_to_start(s);
    };
    let (tid, _) = seek(s, Goal::Position(target.position), &[])?
        .context("replay could not find the line again")?;
    let pc = s.live()?.regs(tid).map(|r| r.pc()).unwrap_or(0);
    let new_func = s.symbols.function_at(pc).map(|f| f.low) != start_func;
    let stop = StopEvent::Stepped { tid };
    crate::hook::report_stop(s, &stop, None, new_func)
}

/// `reverse-finish`: back to the call of the selected frame's function.
pub(crate) fn reverse_finish(s: &mut Session) -> anyhow::Result<()> {
    let now = capture(s)?;
    let tid = s.tid()?;
    let frames = s.frames(tid, s.frame + 2)?;
    let frame = frames.get(s.frame).cloned().context("No stack.")?;
    let Some(caller) = frames.get(s.frame + 1).cloned() else {
        bail!("\"finish\" not meaningful in the outermost frame.");
    };
    let ret = caller.regs.pc().context("No stack.")?;
    let cfa = frame.cfa.context("No stack.")?;
    let call = instruction_before(s, ret).context("Cannot find the call of this frame.")?;
    println!(
        "Run back to call of #{}  {}",
        s.frame,
        report::frame_line(s, &frame, s.frame, report::PcShown::IfMidLine)
    );
    // At the call, the stack pointer is the callee's CFA (the return address is not pushed yet).
    let (notes, _) = scan_back(
        s,
        &now,
        &[call],
        &mut |scan| {
            scan.watch_arrivals.insert(call, Some(cfa));
        },
        false,
        &|n| !n.arrivals.is_empty(),
    )?;
    let Some((target, _)) = notes.arrivals.last().copied() else {
        return go_to_start(s);
    };
    let (tid, _) =
        seek(s, Goal::Position(target), &[])?.context("replay could not find the call again")?;
    let _ = s.live_mut()?.note_hit_reported(tid);
    let stop = StopEvent::Stepped { tid };
    crate::hook::report_stop(s, &stop, None, true)
}

/// What `goto` accepts.
fn parse_goal(s: &Session, args: &str) -> anyhow::Result<(Goal, String)> {
    let a = args.trim();
    if a.is_empty() {
        bail!("Argument required (a position as 'when' prints it, 'event N', 'start', or a bookmark).");
    }
    if let Some(n) = a.strip_prefix("event") {
        let n = n.trim();
        let e: u64 = n
            .parse()
            .map_err(|_| anyhow::anyhow!("Invalid event number \"{n}\"."))?;
        return Ok((Goal::Event(e), format!("event {e}")));
    }
    if let Some((_, p)) = s.travel.bookmarks.get(a) {
        return Ok((Goal::Position(*p), format!("bookmark {a}")));
    }
    if a.contains(':') {
        let p: Position = a.parse().map_err(|e| anyhow::anyhow!("{e}"))?;
        return Ok((Goal::Position(p), format!("position {p}")));
    }
    bail!("No bookmark named \"{a}\"; a position looks like 12:0x401136:3 (see 'when').")
}

/// `goto POSITION | event N | BOOKMARK | start`.
pub(crate) fn goto(s: &mut Session, args: &str) -> anyhow::Result<()> {
    if s.replay.is_none() {
        bail!(NEEDS_RECORDING);
    }
    if args.trim() == "start" {
        restart(s)?;
        let tid = s.pid().map(Tid);
        let pos = start_position(s)?;
        arrived(s, tid, Some(pos));
        let stop = StopEvent::Stepped {
            tid: tid.unwrap_or(Tid(0)),
        };
        return crate::hook::report_stop(s, &stop, None, true);
    }
    let (goal, what) = parse_goal(s, args)?;
    if let Goal::Event(e) = goal {
        let total = s
            .replay
            .as_ref()
            .and_then(|r| r.reader().summary().map(|x| x.events))
            .unwrap_or(u64::MAX);
        if e > total {
            bail!("There is no event {e} in the recording (it has {total} events).");
        }
    }
    let now = if s.started && s.pid().is_some() {
        Some(capture(s)?)
    } else {
        None
    };
    match seek(s, goal, &[])? {
        Some((tid, _)) => {
            let stop = StopEvent::Stepped { tid };
            crate::hook::report_stop(s, &stop, None, true)
        }
        None => {
            // Stay where we were.
            match now {
                Some(now) => {
                    back_to(s, &now)?;
                }
                None => {
                    restart(s)?;
                    let tid = s.pid().map(Tid);
                    arrived(s, tid, None);
                    s.started = false;
                }
            }
            bail!("The recording has no {what}.")
        }
    }
}

/// `when`: the current position.
pub(crate) fn when(s: &mut Session) -> anyhow::Result<()> {
    let p = here(s)?;
    println!("Current event: {}", p.event);
    println!("Current position: {p}");
    Ok(())
}

/// `bookmark [NAME]`.
pub(crate) fn bookmark(s: &mut Session, args: &str) -> anyhow::Result<()> {
    let p = here(s)?;
    s.travel.next_bookmark += 1;
    let n = s.travel.next_bookmark;
    let name = match args.trim() {
        "" => n.to_string(),
        a if a.contains(char::is_whitespace) || a.contains(':') => {
            bail!("A bookmark name is one word without ':' (got \"{a}\").")
        }
        a => a.to_string(),
    };
    s.travel.engine.add(
        Spec::ControlPoint { position: p },
        Action::Mark(name.clone()),
        false,
    );
    s.travel.bookmarks.insert(name.clone(), (n, p));
    println!("Bookmark {name} at {p}.");
    Ok(())
}

/// `info bookmarks`.
pub(crate) fn info_bookmarks(s: &Session) -> anyhow::Result<()> {
    if s.travel.bookmarks.is_empty() {
        println!("No bookmarks.");
        return Ok(());
    }
    let mut list: Vec<(&String, &(u32, Position))> = s.travel.bookmarks.iter().collect();
    list.sort_by_key(|(_, (n, _))| *n);
    println!("Name       Position");
    for (name, (_, p)) in list {
        println!("{name:<10} {p}");
    }
    Ok(())
}

/// `checkpoint`.
pub(crate) fn checkpoint(s: &mut Session) -> anyhow::Result<()> {
    let p = here(s)?;
    s.travel.next_checkpoint += 1;
    let n = s.travel.next_checkpoint;
    s.travel.checkpoints.insert(n, p);
    println!("checkpoint {n}: {p}");
    Ok(())
}

/// `info checkpoints`.
pub(crate) fn info_checkpoints(s: &Session) -> anyhow::Result<()> {
    if s.replay.is_none() {
        bail!(NEEDS_RECORDING);
    }
    println!("  0 start of the recording");
    for (n, p) in &s.travel.checkpoints {
        println!("  {n} {p}");
    }
    let auto: Vec<u64> = s.travel.auto.iter().map(|(_, c)| c.event()).collect();
    if let (Some(first), Some(last)) = (auto.first(), auto.last()) {
        println!(
            "({} automatic checkpoints, kept at events {first} to {last})",
            auto.len()
        );
    }
    Ok(())
}

/// `restart N`: back to checkpoint N (0: the start).
pub(crate) fn restart_checkpoint(s: &mut Session, args: &str) -> anyhow::Result<()> {
    let a = args.trim();
    let n: u32 = a
        .parse()
        .map_err(|_| anyhow::anyhow!("Argument required (checkpoint id to restore)."))?;
    if n == 0 {
        return goto(s, "start");
    }
    let Some(p) = s.travel.checkpoints.get(&n).copied() else {
        bail!("Not found: checkpoint id {n}");
    };
    goto(s, &p.to_string())
}

/// `delete checkpoint N`.
pub(crate) fn delete_checkpoint(s: &mut Session, args: &str) -> anyhow::Result<()> {
    let a = args.trim();
    let n: u32 = a
        .parse()
        .map_err(|_| anyhow::anyhow!("Argument required (checkpoint id to delete)."))?;
    if s.travel.checkpoints.remove(&n).is_none() {
        bail!("Not found: checkpoint id {n}");
    }
    Ok(())
}

/// `delete bookmark NAME`.
pub(crate) fn delete_bookmark(s: &mut Session, args: &str) -> anyhow::Result<()> {
    let name = args.trim();
    let Some((_, p)) = s.travel.bookmarks.remove(name) else {
        bail!("No bookmark named \"{name}\".");
    };
    let ids: Vec<u32> = s
        .travel
        .engine
        .iter()
        .filter(|e| {
            e.spec == Spec::ControlPoint { position: p }
                && e.action == Action::Mark(name.to_string())
        })
        .map(|e| e.id)
        .collect();
    for id in ids {
        let _ = s.travel.engine.remove(id);
    }
    Ok(())
}

/// A `dprintf` hit: prints its format with its arguments evaluated in the stopped thread.
pub(crate) fn run_dprintf(s: &mut Session, number: u32, stop: &StopEvent) {
    let Some((format, args)) = s
        .travel
        .engine
        .iter()
        .find_map(|e| match (&e.spec, &e.action) {
            (Spec::Pc { breakpoint }, Action::Print { format, args }) if *breakpoint == number => {
                Some((format.clone(), args.clone()))
            }
            _ => None,
        })
    else {
        return;
    };
    if let StopEvent::Breakpoint { tid, .. } = stop {
        s.thread = Some(*tid);
        s.frame = 0;
    }
    match crate::printf::format(s, &format, &args) {
        Ok(text) => {
            print!("{text}");
            let _ = std::io::Write::flush(&mut std::io::stdout());
        }
        Err(e) => eprintln!("{e}"),
    }
}

/// Debugger events due at `time`: periodic commands run; returns true if a quantum event
/// stops the replay here.
pub(crate) fn run_due_events(s: &mut Session, time: u64, tid: Tid) -> anyhow::Result<bool> {
    let actions = s.travel.engine.match_time(time);
    // The replay is exactly at the event: its position is known without replaying.
    if let Ok(regs) = s
        .live()
        .and_then(|i| i.regs(tid).map_err(|e| anyhow::anyhow!("{e}")))
    {
        s.travel.here = Some(Position::at_event(time, regs.pc()));
    }
    let mut stop = false;
    for (_, action) in actions {
        match action {
            Action::Stop => stop = true,
            Action::Commands(cmds) => {
                s.thread = Some(tid);
                s.frame = 0;
                for c in cmds {
                    if let Err(e) = crate::commands::execute(s, &c) {
                        eprintln!("{e}");
                    }
                }
            }
            Action::Print { .. } | Action::Mark(_) => {}
        }
    }
    Ok(stop)
}

/// `every K COMMAND`: run COMMAND every K events of the replay.
pub(crate) fn every(s: &mut Session, args: &str) -> anyhow::Result<()> {
    if s.replay.is_none() {
        bail!(NEEDS_RECORDING);
    }
    let a = args.trim();
    let (k, cmd) = a.split_once(char::is_whitespace).unwrap_or((a, ""));
    let k: u64 = k
        .parse()
        .ok()
        .filter(|&k| k > 0)
        .ok_or_else(|| anyhow::anyhow!("usage: every K COMMAND (K events, K > 0)"))?;
    let cmd = cmd.trim();
    if cmd.is_empty() {
        bail!("usage: every K COMMAND (K events, K > 0)");
    }
    let start = s.replay.as_ref().map(|r| r.events_replayed()).unwrap_or(0);
    let start = start - start % k;
    let id = s.travel.engine.add(
        Spec::Periodic { every: k, start },
        Action::Commands(vec![cmd.to_string()]),
        false,
    );
    println!("Periodic event {id}: every {k} events, {cmd}");
    Ok(())
}

/// `break event N` (a quantum event): stop when the replay reaches event N.
pub(crate) fn break_at_event(s: &mut Session, n: u64) -> anyhow::Result<()> {
    if s.replay.is_none() {
        bail!(NEEDS_RECORDING);
    }
    let id = s
        .travel
        .engine
        .add(Spec::Quantum { time: n }, Action::Stop, true);
    println!("Quantum event {id}: stop at event {n}");
    Ok(())
}

/// `info events`: every debugger event and its life-cycle state.
pub(crate) fn info_events(s: &Session) -> anyhow::Result<()> {
    let list: Vec<_> = s.travel.engine.iter().collect();
    if list.is_empty() {
        println!("No debugger events.");
        return Ok(());
    }
    println!("Num  State      What");
    for e in list {
        let what = match &e.spec {
            Spec::Pc { breakpoint } => format!("breakpoint {breakpoint}"),
            Spec::Era {
                breakpoint,
                from,
                to,
            } => match to {
                Some(t) => format!("breakpoint {breakpoint} from event {from} to event {t}"),
                None => format!("breakpoint {breakpoint} from event {from}"),
            },
            Spec::Quantum { time } => format!("stop at event {time}"),
            Spec::ControlPoint { position } => format!("position {position}"),
            Spec::Periodic { every, .. } => format!("every {every} events"),
        };
        let action = match &e.action {
            Action::Stop => "stop".to_string(),
            Action::Print { format, .. } => format!("printf {format:?}"),
            Action::Commands(c) => c.join("; "),
            Action::Mark(name) => format!("bookmark {name}"),
        };
        println!(
            "{:<4} {:<10} {what}: {action}",
            e.id,
            format!("{:?}", e.life).to_lowercase()
        );
    }
    Ok(())
}
