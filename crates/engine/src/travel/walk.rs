//! Reverse steps as gdb takes them ([`hindsight_timeline::stepper`] decides, one instruction at
//! a time going back, where `reverse-step`, `reverse-next`, `reverse-nexti` and the last step of
//! `reverse-finish` end).
//!
//! The instructions before a point are found by a *pass*: a seek to an anchor shortly before
//! it (where the thread's tick count became the point's, or a few ticks less, reached at full
//! speed; without ticks, or before the point's stretch of execution, the last statement start
//! that the thread reached in a function of its stack), then single-steps of the thread up to
//! the point. Calls on the way run at full speed to their
//! `ret` (their first instruction and their `ret` are kept, what ran between them is not) and
//! are stepped through only when the stepper goes inside. Each instruction is kept with the
//! user's stop met when going back to it — a breakpoint at its address, or a watched value it
//! changed — and, for calls that ran at full speed, the stops that fired inside them: gdb's
//! reverse steps stop there too.
//!
//! Invariant: an instruction instance is named by the state just before it runs (an
//! [`Instant`]: event, ticks, registers, stack digest); a motion ends by seeking to one.

use hindsight_timeline::stepper::{CannotStep, Decision, Entry, FrameId, Insn, Motion, Stepper};

use super::*;

/// A stop of the user's that fired inside a call that ran at full speed.
#[derive(Debug, Clone)]
struct Fired {
    /// Where: a breakpoint's arrival; for a watchpoint, the state just after the writing
    /// instruction (the motion stops at that instruction).
    at: Instant,
    reason: Reason,
    writer: bool,
}

/// One instruction instance of the stepping thread.
#[derive(Debug, Clone)]
struct Item {
    insn: Insn,
    /// The state just before it runs.
    at: Instant,
    /// The user's stop met going back to it: a breakpoint at its address (checked when it is
    /// arrived at), or a watched value it changed.
    stop: Option<Reason>,
    /// A callee's `ret` reached at full speed from its first instruction (the item before):
    /// what ran between them is not kept, only the user's stops that fired there (in order).
    inside: Option<Vec<Fired>>,
}

/// The instructions known before a point, in time order.
struct Walk {
    items: Vec<Item>,
    /// The state after the last item (where the motion started).
    end: Instant,
    /// Functions whose statement starts anchor the pass before the first item.
    anchor_functions: Vec<(u64, u64)>,
    /// The `ret` instructions of functions, by start (decoded once).
    rets: HashMap<u64, Vec<u64>>,
    /// The last pass started at an event boundary (not inside a stretch).
    started_at_event: bool,
}

/// How far back (in ticks) a pass may start before the point it loads instructions for: the
/// anchors tried are 0, 1, 2, 4… ticks back, then statement starts and events.
const MAX_TICKS_BACK: u64 = 64;

/// How going back over a [`Decision::RunBackTo`] ended.
enum RunBack {
    /// At this item (the target, or one whose own stop ends the motion).
    At(usize),
    /// A stop of the user's fired in a call run back over.
    Fired(Fired),
    /// The start of the recording.
    Start,
}

/// `reverse-step`, `reverse-next`, `reverse-nexti`, and `reverse-finish` from a function's
/// first instruction (`Motion::Finish`): goes back instruction by instruction until the
/// stepper says stop, or a stop of the user's is met.
pub(super) fn reverse_motion(s: &mut Session, motion: Motion) -> anyhow::Result<Stop> {
    let mut now = capture(s)?;
    // At a signal stop the registers are those before the signal: that state.
    if let Some((event, _)) = now.signal.take() {
        now.event = event;
    }
    let tid = s.tid()?;
    let start_func = s.symbols.function_at(now.pc()).map(|f| f.low);
    let now_insn = insn_of(s, tid)?;
    let mut stepper = match Stepper::new(motion, &now_insn) {
        Ok(stepper) => stepper,
        // At the start of the recording (the loader's first instruction, where nothing is
        // known of the code) there is nothing to go back to: that is what to say.
        Err(CannotStep::NoFunctionBounds) if at_recording_start(s, &now)? => {
            return go_to_start(s, true);
        }
        Err(CannotStep::NoFunctionBounds) => bail!("Cannot find bounds of current function"),
    };
    let chain: Vec<(u64, u64)> = s
        .frames(tid, 64)?
        .iter()
        .enumerate()
        .filter_map(|(i, f)| s.symbols.function_at(crate::frames::lookup_pc(f, i)))
        .map(|f| (f.low, f.high))
        .collect();
    let mut walk = Walk {
        items: Vec::new(),
        end: now,
        anchor_functions: chain,
        rets: HashMap::new(),
        started_at_event: false,
    };
    // The item arrived at (None: still at now).
    let mut at: Option<usize> = None;
    let mut arriving = false;
    let mut run_back_arrival = false;
    loop {
        if !arriving {
            match walk.back(s, at)? {
                Some(i) => at = Some(i),
                None => return go_to_start(s, true),
            }
        }
        let Some(at_index) = at else {
            bail!("reverse step lost its place");
        };
        arriving = false;
        let item = walk.items[at_index].clone();
        if let Some(reason) = &item.stop {
            return land(s, &item.at, Some(reason), start_func);
        }
        let decision = if std::mem::take(&mut run_back_arrival) {
            stepper.run_back_arrived(&item.insn)
        } else {
            stepper.arrived(&item.insn)
        };
        match decision {
            Decision::Stop => return land(s, &item.at, None, start_func),
            Decision::Back => {
                if item.inside.is_some() {
                    at = Some(walk.expand(s, at_index)?);
                }
            }
            Decision::RunBackTo { pc, frame } => match walk.run_back(s, at_index, pc, frame)? {
                RunBack::At(i) => {
                    at = Some(i);
                    arriving = true;
                    run_back_arrival = true;
                }
                RunBack::Fired(f) => return land_fired(s, &f, start_func),
                RunBack::Start => return go_to_start(s, true),
            },
        }
    }
}

/// Whether `now` is the start of the recording: no tick counted, and the state a new replay
/// starts in. (The replay is back at now after.)
fn at_recording_start(s: &mut Session, now: &Instant) -> anyhow::Result<bool> {
    if now.ticks.is_some_and(|t| t > 0) {
        return Ok(false);
    }
    restart(s)?;
    let start = match s.pid().map(Tid) {
        Some(t) => {
            let events = s.replay.as_ref().map(|r| r.events_replayed()).unwrap_or(0);
            let ticks = thread_ticks(s, t);
            events == now.event && now.matches(s.live()?, t, ticks)
        }
        None => false,
    };
    if !start {
        seek(s, Goal::Instant(now.clone()), &[])?
            .context("replay could not find the current position again")?;
    }
    Ok(start)
}

impl Walk {
    /// The index of the item before `from` (None: before the end), passing over the unknown
    /// inside of a call that ran at full speed only when the caller expands it. Loads earlier
    /// instructions when needed; None at the start of the recording.
    fn back(&mut self, s: &mut Session, from: Option<usize>) -> anyhow::Result<Option<usize>> {
        let from = from.unwrap_or(self.items.len());
        if from > 0 {
            return Ok(Some(from - 1));
        }
        let end = match self.items.first() {
            Some(first) => first.at.clone(),
            None => self.end.clone(),
        };
        let earlier = self.load_before(s, &end)?;
        if earlier.is_empty() {
            return Ok(None);
        }
        let n = earlier.len();
        // The next anchors: the first item's function and its caller's.
        let first = &earlier[0].insn;
        let mut funcs: Vec<(u64, u64)> = first.function.into_iter().collect();
        if let Some(f) = first.caller.and_then(|c| s.symbols.function_at(c.function)) {
            funcs.push((f.low, f.high));
        }
        self.anchor_functions = funcs;
        self.items.splice(0..0, earlier);
        Ok(Some(n - 1))
    }

    /// The instructions that ran up to `end`, from an anchor before it (empty: nothing before
    /// `end` in the recording).
    fn load_before(&mut self, s: &mut Session, end: &Instant) -> anyhow::Result<Vec<Item>> {
        // Where the thread counts ticks: from the instant its count became end's, or a few
        // less (a loop body or a call or two before), reached at full speed.
        if let Some(t) = end.ticks {
            let mut back = 0;
            while back <= MAX_TICKS_BACK {
                let Some(k) = t.checked_sub(back) else { break };
                let from = Goal::Tick {
                    event: end.event,
                    ticks: k,
                };
                let items = self.pass(s, from, end)?;
                if !items.is_empty() {
                    return Ok(items);
                }
                if self.started_at_event {
                    // Nothing before end in its stretch: the stretch before, below.
                    break;
                }
                back = (back * 2).max(1);
            }
        }
        let starts: Vec<u64> = s
            .symbols
            .statement_starts()
            .into_iter()
            .filter(|&a| {
                self.anchor_functions
                    .iter()
                    .any(|&(lo, hi)| lo <= a && a < hi)
            })
            .collect();
        if !starts.is_empty() {
            let fs = end.regs[FS_BASE];
            let (notes, _) = scan_back(
                s,
                end,
                &starts,
                &mut |scan| scan.visit_thread = Some(fs),
                false,
                &|n| !n.seen.is_empty(),
            )?;
            if let Some(v) = notes.seen.last() {
                let items = self.pass(s, Goal::Position(v.position), end)?;
                if !items.is_empty() {
                    return Ok(items);
                }
            }
        }
        // No statement start before it: from the events before it, one at a time.
        let mut event = end.event;
        loop {
            let items = self.pass(s, Goal::Event(event), end)?;
            if !items.is_empty() {
                return Ok(items);
            }
            match event.checked_sub(1) {
                Some(e) => event = e,
                None => return Ok(Vec::new()),
            }
        }
    }

    /// Replaces the unknown inside of the call whose `ret` is item `ret` by its instructions;
    /// returns the `ret`'s new index.
    fn expand(&mut self, s: &mut Session, ret: usize) -> anyhow::Result<usize> {
        let entry = ret - 1;
        let from = Goal::Instant(self.items[entry].at.clone());
        let end = self.items[ret].at.clone();
        let inner = self.pass(s, from, &end)?;
        if inner.is_empty() {
            bail!("replay could not find the called function's instructions again");
        }
        let n = inner.len();
        self.items.splice(entry..ret, inner);
        self.items[entry + n].inside = None;
        Ok(entry + n)
    }

    /// Goes back from item `from` (already arrived at) to the latest arrival at `pc` (in
    /// `frame`, if given), through calls that ran at full speed; a stop of the user's on the
    /// way ends it first.
    fn run_back(
        &mut self,
        s: &mut Session,
        from: usize,
        pc: u64,
        frame: Option<FrameId>,
    ) -> anyhow::Result<RunBack> {
        let mut i = from;
        loop {
            if let Some(inside) = &self.items[i].inside {
                if let Some(f) = inside.last() {
                    return Ok(RunBack::Fired(f.clone()));
                }
            }
            let Some(j) = self.back(s, Some(i))? else {
                return Ok(RunBack::Start);
            };
            let item = &self.items[j];
            let in_frame = frame.is_none_or(|f| item.insn.frame == Some(f));
            if item.stop.is_some() || (item.insn.pc == pc && in_frame) {
                return Ok(RunBack::At(j));
            }
            i = j;
        }
    }

    /// One pass: from `from`, the stepping thread single-stepped (calls run at full speed to
    /// their `ret`) until it is at `end`. Returns the instructions, in time order.
    fn pass(&mut self, s: &mut Session, from: Goal, end: &Instant) -> anyhow::Result<Vec<Item>> {
        let (mut tid, _) = seek(s, from, &[])?.context("replay could not go back")?;
        // (Unknown at the end of a recording cut short: an event boundary too.)
        self.started_at_event = s
            .replay
            .as_mut()
            .and_then(|r| r.ticks_since_event())
            .unwrap_or(0)
            == 0;
        let mut user = user_copy_here(s);
        let mut items: Vec<Item> = Vec::new();
        // The call just stepped into: (its return address, the stack pointer before it).
        let mut called: Option<(u64, u64)> = None;
        let mut steps = 0u64;
        loop {
            if s.in_motion && s.interrupt.requested() {
                return Err(crate::Interrupted { tid: Some(tid) }.into());
            }
            let at = state_of(s, tid)?;
            if at.event > end.event {
                bail!("replay could not find the current position again (stepped past it)");
            }
            // (Events that need no execution — the program's output — may still be ahead
            // of the replay here: the same registers, stack and ticks are the same instant.)
            if at.event <= end.event && at.pc() == end.pc() && end.matches(s.live()?, tid, at.ticks)
            {
                return Ok(items);
            }
            steps += 1;
            if steps > MAX_STEPS {
                bail!("the previous instruction is too far from the last statement start ({MAX_STEPS} instructions)");
            }
            let insn = insn_of(s, tid)?;
            let stop = breakpoint_stop(s, &mut user, tid, insn.pc);
            if let Some((ret_addr, sp)) = called.take() {
                // At a callee's first instruction: run it at full speed to its `ret`.
                let rets = self.rets_of(s, insn.pc);
                let before = user.clone();
                match run_over(s, tid, &rets, sp - 8, ret_addr, sp, end, &mut user)? {
                    Over::Ret {
                        at: ret_at,
                        stop: ret_stop,
                        inside,
                    } => {
                        items.push(Item {
                            insn,
                            at,
                            stop,
                            inside: None,
                        });
                        let ret_insn = insn_of(s, tid)?;
                        let fired = step_watched(s, tid, &mut user)?;
                        items.push(Item {
                            insn: ret_insn,
                            at: *ret_at,
                            stop: ret_stop.or(fired),
                            inside: Some(inside),
                        });
                        continue;
                    }
                    Over::Elsewhere => {
                        // The end is inside the call, or its `ret` was not found: step
                        // through it from its first instruction.
                        user = before;
                        let (t, _) = seek(s, Goal::Instant(at.clone()), &[])?
                            .context("replay could not find the called function again")?;
                        tid = t;
                    }
                }
            }
            let call = call_at(s, insn.pc);
            let sp = s.live()?.regs(tid).map(|r| r.sp()).unwrap_or(0);
            let fired = step_watched(s, tid, &mut user)?;
            items.push(Item {
                insn,
                at,
                stop: stop.or(fired),
                inside: None,
            });
            if let Some(ret_addr) = call {
                let now_sp = s.live()?.regs(tid).map(|r| r.sp()).unwrap_or(0);
                let mut pushed = [0u8; 8];
                let ok = now_sp == sp.wrapping_sub(8)
                    && s.live()?.read_memory(now_sp, &mut pushed).is_ok()
                    && u64::from_le_bytes(pushed) == ret_addr;
                if ok {
                    called = Some((ret_addr, sp));
                }
            }
        }
    }

    /// The `ret` instructions of the function that starts at `start` (none when `start` is not
    /// a known function's start).
    fn rets_of(&mut self, s: &Session, start: u64) -> Vec<u64> {
        if let Some(r) = self.rets.get(&start) {
            return r.clone();
        }
        let rets = s
            .symbols
            .function_at(start)
            .filter(|f| f.low == start && f.high > f.low && f.high - f.low < 1 << 20)
            .and_then(|f| {
                let mut code = vec![0u8; (f.high - f.low) as usize];
                s.live().ok()?.read_memory(f.low, &mut code).ok()?;
                let mut dec =
                    iced_x86::Decoder::with_ip(64, &code, f.low, iced_x86::DecoderOptions::NONE);
                let mut out = Vec::new();
                for insn in &mut dec {
                    if insn.flow_control() == iced_x86::FlowControl::Return {
                        out.push(insn.ip());
                    }
                }
                Some(out)
            })
            .unwrap_or_default();
        self.rets.insert(start, rets.clone());
        rets
    }
}

/// How a call run at full speed ended.
enum Over {
    /// At its `ret` (the state there, the user's stop at the `ret` itself, and those that
    /// fired before it inside the call, in order).
    Ret {
        at: Box<Instant>,
        stop: Option<Reason>,
        inside: Vec<Fired>,
    },
    /// The end of the pass came first, or the call returned by another way than its `ret`s.
    Elsewhere,
}

/// The hook of a call run at full speed: stops at a `ret` of the callee's frame (or at the
/// return address, or at the end of the pass), writing down the user's stops on the way.
struct OverHook<'a> {
    user: Hook<'a>,
    tid: Tid,
    event: u64,
    ticks: Option<u64>,
    /// `ret`s of the callee, and the stack pointer they run with in its frame.
    rets: &'a [u64],
    ret_sp: u64,
    /// The return address and the stack pointer there.
    back: (u64, u64),
    end: &'a Instant,
    reached: Option<bool>,
    ret_stop: Option<Reason>,
    fired: Vec<Fired>,
    interrupt: Option<crate::session::Interrupter>,
    interrupted: bool,
}

impl OverHook<'_> {
    fn instant(&self, inf: &Inferior, tid: Tid) -> Option<Instant> {
        let regs = inf.regs(tid).ok()?;
        Some(Instant {
            event: self.event,
            ticks: self.ticks,
            regs: Box::new(regs.to_words()),
            digest: digest(inf, regs.sp()),
            signal: None,
        })
    }
}

impl StopHook for OverHook<'_> {
    fn breakpoint_hit(&mut self, inf: &Inferior, tid: Tid, addr: u64) -> bool {
        if self.end.event == self.event
            && self.end.pc() == addr
            && self.end.matches(inf, tid, self.ticks)
        {
            self.reached = Some(false);
            return true;
        }
        let stop = self.user.breakpoint_hit(inf, tid, addr);
        self.user.prints.clear();
        let reason = self.user.reason.take();
        let reason = reason
            .filter(|r| stop && matches!(r, Reason::Breakpoint(_) | Reason::ConditionError(..)));
        if tid == self.tid {
            let sp = inf.regs(tid).map(|r| r.sp()).unwrap_or(0);
            if self.rets.contains(&addr) && sp == self.ret_sp {
                self.ret_stop = reason;
                self.reached = Some(true);
                return true;
            }
            if (addr, sp) == self.back {
                self.reached = Some(false);
                return true;
            }
        }
        if let Some(reason) = reason {
            if let Some(at) = self.instant(inf, tid) {
                self.fired.push(Fired {
                    at,
                    reason,
                    writer: false,
                });
            }
        }
        false
    }

    fn watchpoint_hit(&mut self, inf: &Inferior, tid: Tid, slots: u8) -> bool {
        if self.end.event == self.event && self.end.matches(inf, tid, self.ticks) {
            self.reached = Some(false);
            return true;
        }
        if self.user.watchpoint_hit(inf, tid, slots) {
            if let Some(r @ Reason::Watch { .. }) = self.user.reason.take() {
                if let Some(at) = self.instant(inf, tid) {
                    self.fired.push(Fired {
                        at,
                        reason: r,
                        writer: true,
                    });
                }
            }
        }
        false
    }

    fn notify(&mut self, _: Notification) {}

    fn stops_on_signal(&mut self, _: i32) -> bool {
        false
    }

    fn at_event(&mut self, _: &Inferior, events: u64, _: Tid) -> bool {
        self.event = events;
        self.user.time = events;
        if self.interrupt.as_ref().is_some_and(|i| i.requested()) {
            self.interrupted = true;
            return true;
        }
        false
    }

    fn clock(&mut self, ticks: Option<u64>) {
        self.ticks = ticks;
        self.user.ticks = ticks;
    }
}

/// Runs the program at full speed from a callee's first instruction until thread `tid`
/// reaches one of `rets` with stack pointer `ret_sp` (or `back` = (return address, stack
/// pointer), or `end`).
#[allow(clippy::too_many_arguments)]
fn run_over(
    s: &mut Session,
    tid: Tid,
    rets: &[u64],
    ret_sp: u64,
    ret_addr: u64,
    sp: u64,
    end: &Instant,
    user: &mut UserCopy,
) -> anyhow::Result<Over> {
    let mut sites: Vec<u64> = rets.to_vec();
    sites.push(ret_addr);
    sites.push(end.pc());
    sites.sort_unstable();
    sites.dedup();
    // (Sites in code not mapped are left out: nothing runs there.)
    let left = s.live_mut()?.insert_sites_in_code(&sites);
    let event = s.replay.as_ref().map(|r| r.events_replayed()).unwrap_or(0);
    let ticks = thread_ticks(s, tid);
    let result = {
        let Session {
            symbols,
            inferior,
            replay,
            watch_types,
            signal_stops,
            signal_print,
            signal_pass,
            interrupt,
            in_motion,
            ..
        } = s;
        let (inf, replay) = crate::session::live_replay(inferior, replay)?;
        let mut hook = OverHook {
            user: user_hook(
                symbols,
                watch_types,
                signal_stops,
                signal_print,
                signal_pass,
                user,
                event,
            ),
            tid,
            event,
            ticks,
            rets,
            ret_sp,
            back: (ret_addr, sp),
            end,
            reached: None,
            ret_stop: None,
            fired: Vec::new(),
            interrupt: in_motion.then(|| interrupt.clone()),
            interrupted: false,
        };
        loop {
            let stop = replay
                .resume(inf, Resume::Continue, &mut hook)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            if hook.interrupted {
                break Err(crate::Interrupted { tid: Some(tid) }.into());
            }
            if let Some(at_ret) = hook.reached {
                if !at_ret {
                    break Ok(Over::Elsewhere);
                }
                let Some(at) = hook.instant(inf, tid) else {
                    break Ok(Over::Elsewhere);
                };
                break Ok(Over::Ret {
                    at: Box::new(at),
                    stop: hook.ret_stop.take(),
                    inside: std::mem::take(&mut hook.fired),
                });
            }
            match stop {
                ReplayStop::AtEvent(_) | ReplayStop::AtTick(_) | ReplayStop::AtBufferedCall(_) => {}
                ReplayStop::Divergence(d) => break Err(anyhow::anyhow!("{d}")),
                // The end of a recording cut short, reached inside the call: when that is
                // where the pass ends, the call is stepped through.
                ReplayStop::EndOfRecording(_)
                    if replay.events_replayed() == end.event
                        && end.matches(inf, tid, replay.ticks_of(replay.recorded_tid_of(tid))) =>
                {
                    break Ok(Over::Elsewhere)
                }
                ReplayStop::EndOfRecording(_)
                | ReplayStop::Program(StopEvent::Exited(_) | StopEvent::Killed(_)) => {
                    break Err(anyhow::anyhow!(
                        "replay could not find the current position again (the replay ended)"
                    ))
                }
                ReplayStop::Program(StopEvent::Exec { .. }) => {
                    break Err(anyhow::anyhow!(
                        "going back across an exec is not supported yet"
                    ))
                }
                ReplayStop::Program(_) => {}
            }
        }
    };
    if let Some(inf) = s.inferior.as_mut().filter(|i| i.is_alive()) {
        for a in sites.iter().filter(|a| !left.contains(a)) {
            let _ = inf.remove_site(*a);
        }
    }
    result
}

/// A hook over the user's stops as they are in `user` (a copy: passes leave the session's
/// table, hit counts and watched values as they are).
fn user_hook<'a>(
    symbols: &'a Program,
    watch_types: &'a HashMap<u32, hindsight_symbols::value::TypeHandle>,
    signal_stops: &'a HashMap<i32, bool>,
    signal_print: &'a HashMap<i32, bool>,
    signal_pass: &'a HashMap<i32, bool>,
    user: &'a mut UserCopy,
    time: u64,
) -> Hook<'a> {
    Hook {
        symbols,
        table: &mut user.table,
        watch_values: &mut user.watch_values,
        watch_types,
        step_resume: None,
        reason: None,
        signal_stops,
        signal_print,
        signal_pass,
        engine: &mut user.engine,
        time,
        ticks: None,
        silent: false,
        checkpoint_at: None,
        sites_pending: false,
        signals: None,
        library_event: None,
        observer: None,
        interrupt: None,
        prints: Vec::new(),
    }
}

/// The user's stops as they are now, with the watched values read here.
fn user_copy_here(s: &Session) -> UserCopy {
    let mut user = UserCopy::of(s);
    if let Ok(inf) = s.live() {
        for b in user.table.iter() {
            if let hindsight_breakpoints::table::BreakpointKind::Watchpoint {
                address, len, ..
            } = b.kind
            {
                let mut now = vec![0u8; len as usize];
                if inf.read_memory(address, &mut now).is_ok() {
                    user.watch_values.insert(b.number, now);
                }
            }
        }
    }
    user
}

/// The user's breakpoint that stops a motion arriving at `pc` (conditions evaluated here).
fn breakpoint_stop(s: &Session, user: &mut UserCopy, tid: Tid, pc: u64) -> Option<Reason> {
    if user.table.breakpoints_at(pc).is_empty() {
        return None;
    }
    let inf = s.live().ok()?;
    let time = s.replay.as_ref().map(|r| r.events_replayed()).unwrap_or(0);
    let mut hook = user_hook(
        &s.symbols,
        &s.watch_types,
        &s.signal_stops,
        &s.signal_print,
        &s.signal_pass,
        user,
        time,
    );
    let stop = hook.breakpoint_hit(inf, tid, pc);
    let reason = hook.reason.take();
    reason.filter(|r| stop && matches!(r, Reason::Breakpoint(_) | Reason::ConditionError(..)))
}

/// Single-steps `tid` with the user's watchpoints armed; the watchpoint stop the instruction
/// made (it changed a watched value), if any.
fn step_watched(s: &mut Session, tid: Tid, user: &mut UserCopy) -> anyhow::Result<Option<Reason>> {
    let event = s.replay.as_ref().map(|r| r.events_replayed()).unwrap_or(0);
    let ticks = thread_ticks(s, tid);
    let Session {
        symbols,
        inferior,
        replay,
        watch_types,
        signal_stops,
        signal_print,
        signal_pass,
        ..
    } = s;
    let (inf, replay) = crate::session::live_replay(inferior, replay)?;
    let never = Instant {
        event: u64::MAX,
        ticks: None,
        regs: Box::new([0; 27]),
        digest: 0,
        signal: None,
    };
    let mut hook = OverHook {
        user: user_hook(
            symbols,
            watch_types,
            signal_stops,
            signal_print,
            signal_pass,
            user,
            event,
        ),
        tid,
        event,
        ticks,
        rets: &[],
        ret_sp: 0,
        back: (0, 0),
        end: &never,
        reached: None,
        ret_stop: None,
        fired: Vec::new(),
        interrupt: None,
        interrupted: false,
    };
    match replay
        .resume(inf, Resume::Step(tid), &mut hook)
        .map_err(|e| anyhow::anyhow!("{e}"))?
    {
        // (The end of a recording cut short, after the step: its last syscall ran.)
        ReplayStop::Program(StopEvent::Stepped { .. } | StopEvent::Watchpoint { .. })
        | ReplayStop::EndOfRecording(_) => {}
        ReplayStop::Divergence(d) => bail!("{d}"),
        other => bail!("replay stopped while stepping: {other:?}"),
    }
    Ok(hook.fired.pop().map(|f| f.reason))
}

/// The return address of the call instruction at `pc`, if it is one.
fn call_at(s: &Session, pc: u64) -> Option<u64> {
    let mut code = [0u8; 15];
    let inf = s.live().ok()?;
    let mut n = code.len();
    while n > 0 && inf.read_memory(pc, &mut code[..n]).is_err() {
        n -= 1;
    }
    let insn =
        iced_x86::Decoder::with_ip(64, &code[..n], pc, iced_x86::DecoderOptions::NONE).decode();
    (insn.is_call_near() || insn.is_call_near_indirect()).then(|| insn.next_ip())
}

/// What the stepper needs to know about thread `tid`'s current instruction.
fn insn_of(s: &Session, tid: Tid) -> anyhow::Result<Insn> {
    let regs = s.dwarf_regs(tid)?;
    let pc = regs.pc().unwrap_or(0);
    let mem = crate::context::Memory(s.live()?);
    let frames = s.symbols.unwind(&regs, &mem, 2);
    let func = s.symbols.function_at(pc);
    let frame = frames.first().and_then(|f| f.cfa).map(|cfa| FrameId {
        cfa,
        function: func.as_ref().map(|f| f.low).unwrap_or(0),
    });
    let caller = frames.get(1).and_then(|f| {
        let lookup = crate::frames::lookup_pc(f, 1);
        Some(FrameId {
            cfa: f.cfa?,
            function: s.symbols.function_at(lookup).map(|f| f.low).unwrap_or(0),
        })
    });
    let entry = entry_at(&s.symbols, pc);
    let function_has_lines = func
        .as_ref()
        .is_some_and(|f| f.has_debug_info && entry_at(&s.symbols, f.low).is_some());
    Ok(Insn {
        pc,
        frame,
        caller,
        function: func.map(|f| (f.low, f.high)),
        entry,
        function_has_lines,
    })
}

/// The line-table entry covering `pc`, as the stepper sees it.
fn entry_at(symbols: &Program, pc: u64) -> Option<Entry> {
    let (line, end) = symbols.line_entry(pc)?;
    Some(Entry {
        start: line.address,
        end,
        file: file_key(&line.file),
        line: line.line,
        is_stmt: line.is_stmt,
    })
}

/// Ends a reverse motion at the instruction whose state is `at`, reporting the user's stop
/// that ended it (a breakpoint, or a watchpoint whose values swap going backward).
fn land(
    s: &mut Session,
    at: &Instant,
    reason: Option<&Reason>,
    start_func: Option<u64>,
) -> anyhow::Result<Stop> {
    let (tid, _) = seek(s, Goal::Instant(at.clone()), &[])?
        .context("replay could not find that instruction again")?;
    let pc = s.live()?.regs(tid).map(|r| r.pc()).unwrap_or(0);
    match reason {
        Some(r @ (Reason::Breakpoint(_) | Reason::ConditionError(..))) => {
            // The hit is reported: going on steps over the breakpoint.
            let _ = s.live_mut()?.note_hit_reported(tid);
            s.last_breakpoint = None;
            let stop = StopEvent::Breakpoint { tid, addr: pc };
            arrive(s, &stop, Some(r), true)
        }
        Some(Reason::Watch { number, old, new }) => {
            // Going back the values swap: the later one was "old".
            let reason = Reason::Watch {
                number: *number,
                old: Some(new.clone()),
                new: old.clone().unwrap_or_else(|| new.clone()),
            };
            refresh_watch_values(s);
            let stop = StopEvent::Watchpoint { tid, slots: 0 };
            arrive(s, &stop, Some(&reason), true)
        }
        _ => {
            let new_func = s.symbols.function_at(pc).map(|f| f.low) != start_func;
            let stop = StopEvent::Stepped { tid };
            arrive(s, &stop, None, new_func)
        }
    }
}

/// Ends a reverse motion at a stop of the user's that fired inside a call run back over.
fn land_fired(s: &mut Session, f: &Fired, start_func: Option<u64>) -> anyhow::Result<Stop> {
    if !f.writer {
        return land(s, &f.at, Some(&f.reason), start_func);
    }
    // The writing instruction is the one before the trap.
    let func: Vec<(u64, u64)> = s
        .symbols
        .function_at(f.at.pc())
        .map(|f| (f.low, f.high))
        .into_iter()
        .collect();
    let mut walk = Walk {
        items: Vec::new(),
        end: f.at.clone(),
        anchor_functions: func,
        rets: HashMap::new(),
        started_at_event: false,
    };
    match walk.back(s, None)? {
        Some(i) => {
            let at = walk.items[i].at.clone();
            land(s, &at, Some(&f.reason), start_func)
        }
        None => go_to_start(s, true),
    }
}
