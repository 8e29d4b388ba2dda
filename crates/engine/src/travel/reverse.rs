//! The reverse commands, each a scan back from now and a seek to what it chose.

use super::*;

/// The user's stops that fired before now (the latest window that has any).
pub(super) fn firings_before_now(
    s: &mut Session,
    now: &Instant,
) -> anyhow::Result<Vec<(Mark, Reason, u64)>> {
    let (notes, _) = scan_back(s, now, &[], &mut |_| {}, true, &|n| !n.firings.is_empty())?;
    Ok(notes.firings)
}

/// `reverse-continue`: back to the last breakpoint hit or watched change before now (from
/// the end, when the program has exited).
pub(crate) fn reverse_continue(s: &mut Session) -> anyhow::Result<Stop> {
    s.check_not_held()?;
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
        return go_to_start(s, true);
    };
    go_to_firing(s, mark, reason)
}

/// Goes to where a user stop fired and reports it as gdb does in reverse.
pub(super) fn go_to_firing(s: &mut Session, mark: Mark, reason: Reason) -> anyhow::Result<Stop> {
    match mark {
        Mark::At(p) => {
            let (tid, _) = seek(s, Goal::Position(p), &[])?
                .context("replay could not find the breakpoint hit again")?;
            // The hit is reported: going on steps over the breakpoint.
            let _ = s.live_mut()?.note_hit_reported(tid);
            let stop = StopEvent::Breakpoint { tid, addr: p.pc };
            s.last_breakpoint = None;
            arrive(s, &stop, Some(&reason), true)
        }
        Mark::Signal { event, n, signal } => {
            let (tid, _) = seek(s, Goal::Signal { event, n }, &[])?
                .context("replay could not find the signal again")?;
            // The forward hook counts on from here.
            s.travel.signal_count = (event, n);
            let stop = StopEvent::Signal { tid, signal };
            arrive(s, &stop, Some(&reason), true)
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
            arrive(s, &stop, Some(&reason), true)
        }
    }
}

/// Reads every watched value again (after time moved).
pub(super) fn refresh_watch_values(s: &mut Session) {
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
pub(super) fn seek_writer(s: &mut Session, event: u64, n: u64) -> anyhow::Result<Tid> {
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
        ticks: r.ticks,
        pc: writer,
        instance: k,
    };
    let (tid, _) = seek(s, Goal::Position(p), &[])?
        .context("replay could not find the instruction that wrote the watched value")?;
    Ok(tid)
}

/// The instruction that ends at `addr`, found by decoding its function from the start.
pub(super) fn instruction_before(s: &Session, addr: u64) -> Option<u64> {
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

/// `reverse-stepi` (`over_calls`: `reverse-nexti`, which runs back over a call as gdb does:
/// to the callee's start, stopping at the user's breakpoints and watchpoints inside it, then
/// to the call).
pub(crate) fn reverse_stepi(s: &mut Session, over_calls: bool) -> anyhow::Result<Stop> {
    if over_calls {
        return walk::reverse_motion(s, Motion::Nexti);
    }
    let mut now = capture(s)?;
    // At a signal stop (a fault) the faulting instruction has not run: the state is the one
    // before it, which its registers name (the previous instruction is the one before).
    if let Some((event, _)) = now.signal.take() {
        now.event = event;
    }
    let before = watched_now(s);
    let (tid, _) = match previous_instruction(s, &now)? {
        Some(b) => b,
        None => return go_to_start(s, true),
    };
    if let Some(reason) = undone_write(s, tid, &before) {
        refresh_watch_values(s);
        let stop = StopEvent::Watchpoint { tid, slots: 0 };
        return arrive(s, &stop, Some(&reason), true);
    }
    let new_func = s.symbols.function_at(now.pc()).map(|f| f.low)
        != s.symbols
            .function_at(s.live()?.regs(tid).map(|r| r.pc()).unwrap_or(0))
            .map(|f| f.low);
    let stop = StopEvent::Stepped { tid };
    arrive(s, &stop, None, new_func)
}

/// The bytes of every enabled watchpoint that watches writes, read now.
fn watched_now(s: &Session) -> HashMap<u32, Vec<u8>> {
    let mut values = HashMap::new();
    let Ok(inf) = s.live() else { return values };
    for b in s.breakpoints.iter().filter(|b| b.enabled) {
        if let hindsight_breakpoints::table::BreakpointKind::Watchpoint {
            address,
            len,
            access,
            ..
        } = b.kind
        {
            if access == hindsight_breakpoints::table::WatchAccess::Read {
                continue;
            }
            let mut bytes = vec![0u8; len as usize];
            if inf.read_memory(address, &mut bytes).is_ok() {
                values.insert(b.number, bytes);
            }
        }
    }
    values
}

/// The watchpoint stop of an instruction just undone (one step back): a watched value it had
/// written is back to what it was. gdb reports it in reverse with the values swapped: the one
/// it had written is "old".
fn undone_write(s: &mut Session, tid: Tid, before: &HashMap<u32, Vec<u8>>) -> Option<Reason> {
    let after = watched_now(s);
    let mut numbers: Vec<u32> = before.keys().copied().collect();
    numbers.sort_unstable();
    for n in numbers {
        let (Some(old), Some(new)) = (before.get(&n), after.get(&n)) else {
            continue;
        };
        if old == new {
            continue;
        }
        let condition = s.breakpoints.get(n).and_then(|b| b.condition.clone());
        if let Some(cond) = condition {
            let inf = s.live().ok()?;
            if !crate::context::eval_condition(&s.symbols, inf, tid, &cond).unwrap_or(true) {
                continue;
            }
        }
        let stops = matches!(
            s.breakpoints.record_hit(n, Ok(true)).map(|o| o.verdict),
            Ok(hindsight_breakpoints::table::Verdict::Stop { .. })
        );
        if !stops {
            continue;
        }
        let ty = s
            .watch_types
            .get(&n)
            .cloned()
            .unwrap_or(hindsight_symbols::value::TypeHandle::long());
        return Some(Reason::Watch {
            number: n,
            old: Some(hindsight_symbols::value::Value::from_bytes(
                ty.clone(),
                old.clone(),
            )),
            new: hindsight_symbols::value::Value::from_bytes(ty, new.clone()),
        });
    }
    None
}

/// The last arrival at `addr` (with stack pointer `sp`, if given) before `now`.
pub(super) fn last_arrival(
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
pub(super) fn previous_instruction(
    s: &mut Session,
    now: &Instant,
) -> anyhow::Result<Option<(Tid, Position)>> {
    if let Some(ticks) = now.ticks {
        return previous_by_ticks(s, now, ticks);
    }
    // An anchor shortly before now: the last statement start of now's function reached in
    // now's stretch of execution (else the event that starts it). Single-steps cover the rest
    // (calls made since included). Other functions' lines are not armed: in a hot loop
    // elsewhere they would trap at every iteration.
    let here = s.symbols.function_at(now.pc());
    let starts: Vec<u64> = line_starts(s)
        .into_iter()
        .filter(|&a| here.as_ref().is_none_or(|f| f.low <= a && a < f.high))
        .collect();
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
    Ok(Some((tid, Position::at_event(now.event, now.ticks, pc))))
}

/// [`previous_instruction`] where the thread counts ticks: the anchor is the instant its tick
/// count became now's (or one less, when now is that instant), reached at full speed; the
/// few instructions from there to now are single-stepped twice — to count them, then to stop
/// one short. Tick counts name instants only within an event's stretch: when the anchor is
/// the event itself and now is there, the previous instruction ran before the event.
///
/// Consecutive steps back are cheap: the seeks take checkpoints a short replay before their
/// goal and at the anchor ([`Travel::near`], [`Travel::anchor`]), and where a step back left
/// the session is remembered ([`StepBack`]): the next one restores the anchor's checkpoint
/// and single-steps one instruction less, without counting again.
fn previous_by_ticks(
    s: &mut Session,
    now: &Instant,
    ticks: u64,
) -> anyhow::Result<Option<(Tid, Position)>> {
    let back = s.travel.stepped_back.take().filter(|b| b.at.same(now));
    let mut k = ticks;
    if let Some(b) = back {
        if b.steps > 0 {
            return step_back(s, now.event, b.ticks, b.steps - 1, b.at_event);
        }
        // Now is the anchor of its tick count: the previous instruction counted one less.
        if b.at_event || k == 0 {
            return previous_stretch_end(s, now);
        }
        k -= 1;
    }
    s.travel.keep_near = true;
    let r = previous_by_ticks_from(s, now, k);
    s.travel.keep_near = false;
    r
}

/// [`previous_by_ticks`] from the anchor of tick count `k` down.
fn previous_by_ticks_from(
    s: &mut Session,
    now: &Instant,
    mut k: u64,
) -> anyhow::Result<Option<(Tid, Position)>> {
    loop {
        let anchor = Goal::Tick {
            event: now.event,
            ticks: k,
        };
        let (tid, _) = seek(s, anchor, &[])?.context("replay could not go back")?;
        // (Unknown at the end of a recording cut short: that is an event boundary too.)
        let at_event = s
            .replay
            .as_mut()
            .and_then(|r| r.ticks_since_event())
            .unwrap_or(0)
            == 0;
        if !here_is(s, tid, now)? {
            // The seek back after counting restores this checkpoint instead of replaying.
            {
                let Session {
                    inferior,
                    replay,
                    travel,
                    ..
                } = &mut *s;
                let (inf, replay) = crate::session::live_replay(inferior, replay)?;
                travel.take_near_checkpoint(replay, inf, true);
            }
            let steps = steps_to(s, tid, now)?;
            return step_back(s, now.event, k, steps - 1, at_event);
        }
        if at_event || k == 0 {
            return previous_stretch_end(s, now);
        }
        k -= 1;
    }
}

/// Goes to the instruction `steps` single-steps after the anchor of tick count `ticks` (at
/// `event`; `at_event`: the anchor is the event itself) and remembers that it is there.
fn step_back(
    s: &mut Session,
    event: u64,
    ticks: u64,
    steps: u64,
    at_event: bool,
) -> anyhow::Result<Option<(Tid, Position)>> {
    // A new replay: its threads have new tids.
    let (tid, _) =
        seek(s, Goal::Tick { event, ticks }, &[])?.context("replay could not go back")?;
    for _ in 0..steps {
        step_once(s, tid)?;
    }
    let at = state_of(s, tid)?;
    let pc = at.pc();
    s.travel.here = None;
    s.travel.stepped_back = Some(StepBack {
        at: at.clone(),
        ticks,
        steps,
        at_event,
    });
    Ok(Some((tid, Position::at_event(event, at.ticks, pc))))
}

/// Where a step back by ticks left the session: at `at`, `steps` single-steps after the
/// instant its thread's tick count became `ticks` (`at_event`: that instant is the event).
#[derive(Debug, Clone)]
pub(crate) struct StepBack {
    at: Instant,
    ticks: u64,
    steps: u64,
    at_event: bool,
}

/// Whether thread `tid` is at `now`.
fn here_is(s: &mut Session, tid: Tid, now: &Instant) -> anyhow::Result<bool> {
    let events = s.replay.as_ref().map(|r| r.events_replayed()).unwrap_or(0);
    let ticks = thread_ticks(s, tid);
    Ok(events == now.event && now.matches(s.live()?, tid, ticks))
}

/// Now is right after an event (a syscall returned): the previous instruction is the one
/// that made it, the last instant before the event.
pub(super) fn previous_stretch_end(
    s: &mut Session,
    now: &Instant,
) -> anyhow::Result<Option<(Tid, Position)>> {
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
pub(super) fn steps_to(s: &mut Session, tid: Tid, now: &Instant) -> anyhow::Result<u64> {
    let mut n = 0;
    loop {
        if n >= MAX_STEPS {
            bail!("the previous instruction is too far from the last statement start ({MAX_STEPS} instructions)");
        }
        if s.in_motion && s.interrupt.requested() {
            return Err(crate::Interrupted { tid: Some(tid) }.into());
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
        let ticks = thread_ticks(s, tid);
        if events == now.event && now.matches(s.live()?, tid, ticks) {
            return Ok(n);
        }
        if events > now.event {
            bail!("replay could not find the current position again (stepped past it)");
        }
    }
}

/// One instruction of `tid`, in the replay, silently.
pub(super) fn step_once(s: &mut Session, tid: Tid) -> anyhow::Result<()> {
    let Session {
        inferior, replay, ..
    } = s;
    let (inf, replay) = crate::session::live_replay(inferior, replay)?;
    match replay
        .resume(inf, Resume::Step(tid), &mut hindsight_replay::Silent)
        .map_err(|e| anyhow::anyhow!("{e}"))?
    {
        // (The end of a recording cut short, after the step: its last syscall ran.)
        ReplayStop::Program(StopEvent::Stepped { .. }) | ReplayStop::EndOfRecording(_) => Ok(()),
        ReplayStop::Divergence(d) => bail!("{d}"),
        other => {
            let pc = s
                .live()
                .ok()
                .and_then(|l| l.regs(tid).ok())
                .map(|r| r.pc())
                .unwrap_or(0);
            bail!("replay stopped while stepping: {other:?} at {pc:#x}")
        }
    }
}

/// `reverse-step` / `reverse-next`: gdb's stepping rules, backwards (see [`walk`]).
pub(crate) fn reverse_line_step(s: &mut Session, kind: Motion) -> anyhow::Result<Stop> {
    walk::reverse_motion(s, kind)
}

/// `reverse-finish`: back to the call of the function, as gdb goes there: back to the latest
/// arrival at the function's first instruction (gdb's step-resume breakpoint there is not tied
/// to a frame: in a recursion, a deeper call's start comes first), stopping at the user's
/// breakpoints and watchpoints on the way, then one instruction more.
pub(crate) fn reverse_finish(s: &mut Session, obs: &mut dyn Observer) -> anyhow::Result<Stop> {
    let now = capture(s)?;
    let tid = s.tid()?;
    let frames = s.frames(tid, s.frame + 2)?;
    let frame = frames.get(s.frame).cloned().context("No stack.")?;
    if frames.get(s.frame + 1).is_none() {
        bail!("\"finish\" not meaningful in the outermost frame.");
    }
    // (gdb finishes frame 0's function, whatever frame is selected.)
    let entry = s
        .symbols
        .function_at(now.pc())
        .map(|f| f.low)
        .context("Cannot find bounds of current function")?;
    obs.notice(Notice::Finishing {
        frame: Box::new(s.frame_info(&frame, s.frame)),
        backward: true,
    });
    if now.pc() != entry || now.signal.is_some() {
        let (notes, _) = scan_back(
            s,
            &now,
            &[entry],
            &mut |scan| {
                scan.watch_arrivals.insert(entry, None);
            },
            true,
            &|n| !n.arrivals.is_empty() || !n.firings.is_empty(),
        )?;
        let arrival = notes.arrivals.last().copied();
        if let Some((mark, reason, seq)) = notes.firings.last().cloned() {
            if arrival.is_none_or(|(_, a)| seq > a) {
                return go_to_firing(s, mark, reason);
            }
        }
        let Some((target, _)) = arrival else {
            return go_to_start(s, true);
        };
        seek(s, Goal::Position(target), &[])?
            .context("replay could not find the function's start again")?;
    }
    // At the function's first instruction: back to the call that returns where the return
    // address on the stack says (a lazily bound call came through the PLT and the dynamic
    // linker's resolver: gdb goes back through them to the call too).
    let tid = s.tid()?;
    let regs = s.live()?.regs(tid).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut word = [0u8; 8];
    let call = s
        .live()?
        .read_memory(regs.sp(), &mut word)
        .ok()
        .and_then(|_| call_before(s, u64::from_le_bytes(word)));
    let Some(call) = call else {
        return walk::reverse_motion(s, Motion::Finish);
    };
    let at_entry = capture(s)?;
    // At the call, the stack pointer is the one above the return address.
    let Some((_, target)) = last_arrival(s, &at_entry, call, Some(regs.sp() + 8))? else {
        return go_to_start(s, true);
    };
    let (tid, _) =
        seek(s, Goal::Position(target), &[])?.context("replay could not find the call again")?;
    let _ = s.live_mut()?.note_hit_reported(tid);
    let stop = StopEvent::Stepped { tid };
    arrive(s, &stop, None, true)
}

/// The call instruction that returns to `ret`: decoded from its function's start, or, in code
/// without symbols, the one call instruction that ends exactly at `ret` (x86 calls are 2 to 7
/// bytes long).
fn call_before(s: &Session, ret: u64) -> Option<u64> {
    if let Some(a) = instruction_before(s, ret) {
        let mut code = [0u8; 15];
        s.live().ok()?.read_memory(a, &mut code).ok()?;
        let insn =
            iced_x86::Decoder::with_ip(64, &code, a, iced_x86::DecoderOptions::NONE).decode();
        return (insn.is_call_near() || insn.is_call_near_indirect()).then_some(a);
    }
    let inf = s.live().ok()?;
    let mut code = [0u8; 7];
    let base = ret.checked_sub(7)?;
    inf.read_memory(base, &mut code).ok()?;
    [5usize, 2, 3, 6, 7, 4].into_iter().find_map(|len| {
        let start = 7 - len;
        let mut dec = iced_x86::Decoder::with_ip(
            64,
            &code[start..],
            base + start as u64,
            iced_x86::DecoderOptions::NONE,
        );
        let insn = dec.decode();
        (insn.len() == len && (insn.is_call_near() || insn.is_call_near_indirect()))
            .then_some(insn.ip())
    })
}

/// The statement starts where a line step can end: every one of the program's, except those
/// inside a function's prologue (a forward `step` into a function stops after it, so a
/// reverse step leaves the function from its first line, as gdb does).
pub(super) fn line_starts(s: &Session) -> Vec<u64> {
    let mut starts = s.symbols.statement_starts();
    starts.retain(|&a| {
        s.symbols
            .function_at(a)
            .is_none_or(|f| !(f.low <= a && a < f.breakpoint_addr))
    });
    starts
}
