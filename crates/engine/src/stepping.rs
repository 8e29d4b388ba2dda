//! Source-level stepping built from single-steps and step-resume traps: `step`, `next`,
//! `until`, `finish`, `stepi`, `nexti`, `until LOCATION`, `advance LOCATION`.
//!
//! Only the stepping thread single-steps (the others stay stopped); calls that are stepped
//! over, and `finish`, run every thread to a step-resume trap at the return address, armed for
//! the stepping thread only and only above the current stack pointer (recursion).

use anyhow::Context as _;
use hindsight_control::{Resume, StopEvent};
use hindsight_ptrace::Tid;

use crate::hook::{self, Reason, StepResume};
pub(crate) use crate::motion::LineStep;
use crate::observer::{Notice, Observer};
use crate::session::Session;
use crate::stop::{arrive, Stop};

/// What a stepping primitive ended with.
enum Outcome {
    /// The step did what it should; the thread is where the caller wanted.
    Done,
    /// Something else stopped the program (a breakpoint, a signal, the end, the user): the
    /// command ends with this stop.
    Interrupted(Box<Stop>),
}

/// Ends a command whose primitive was interrupted.
macro_rules! or_stop {
    ($e:expr) => {
        match $e? {
            Outcome::Done => {}
            Outcome::Interrupted(stop) => return Ok(*stop),
        }
    };
}

/// Single-steps `tid` (one instruction of the program: a replay steps through the agent's
/// stubs, see `Replayer::resume`); anything but a plain step end ends the command. The
/// user's interrupt is heard between two steps.
///
/// A signal that reaches the program during the step without stopping it (`handle SIG
/// nostop pass`) has its handler run to its end at full speed, and the step goes on from
/// where the signal came, as gdb does ("GDB steps over the signal handler"). A signal the
/// program stopped with is stepped into: the step ends at its handler's first instruction.
fn stepi_raw(s: &mut Session, obs: &mut dyn Observer, tid: Tid) -> anyhow::Result<Outcome> {
    // Handlers of signals arriving one after another, each stepped over.
    const MAX_HANDLERS: usize = 64;
    let into_handler =
        matches!(s.last_stop, Some((StopEvent::Signal { tid: t, .. }, _)) if t == tid);
    for _ in 0..MAX_HANDLERS {
        if s.in_motion && s.interrupt.requested() {
            let stop = StopEvent::Stepped { tid };
            return Ok(Outcome::Interrupted(Box::new(arrive(
                s,
                &stop,
                Some(&Reason::Interrupted),
                true,
            )?)));
        }
        s.live_mut()?.take_stepped_into_handler(tid);
        let (stop, reason) = hook::resume_raw(s, obs, Resume::Step(tid), None)?;
        if !matches!(stop, StopEvent::Stepped { .. }) {
            return Ok(Outcome::Interrupted(Box::new(arrive(
                s,
                &stop,
                reason.as_ref(),
                true,
            )?)));
        }
        if !s.live_mut()?.take_stepped_into_handler(tid) || into_handler {
            return Ok(Outcome::Done);
        }
        let (ret, sp) = handler_return(s, tid)?;
        if let Outcome::Interrupted(stop) = run_to(s, obs, tid, ret, sp)? {
            return Ok(Outcome::Interrupted(stop));
        }
    }
    Ok(Outcome::Done)
}

/// Where the handler `tid` stands at the start of returns to (the interrupted code's
/// program address, from the kernel's frame), and the stack pointer the handler runs below.
fn handler_return(s: &Session, tid: Tid) -> anyhow::Result<(u64, u64)> {
    let inf = s.live()?;
    let sp = inf.regs(tid).map_err(|e| anyhow::anyhow!("{e}"))?.sp();
    let saved_rip = hindsight_control::saved_register_in_handler_frame(sp, libc::REG_RIP);
    let mut word = [0u8; 8];
    inf.read_memory(saved_rip, &mut word)
        .map_err(|e| anyhow::anyhow!("cannot read the signal frame at {saved_rip:#x}: {e}"))?;
    Ok((inf.logical_pc(u64::from_le_bytes(word)), sp))
}

/// Runs every thread until `tid` reaches `addr` with its stack pointer above `min_sp`.
fn run_to(
    s: &mut Session,
    obs: &mut dyn Observer,
    tid: Tid,
    addr: u64,
    min_sp: u64,
) -> anyhow::Result<Outcome> {
    run_to_any(s, obs, tid, &[(addr, min_sp)])
}

/// Runs every thread until `tid` reaches one of the (address, stack pointer floor) targets.
fn run_to_any(
    s: &mut Session,
    obs: &mut dyn Observer,
    tid: Tid,
    targets: &[(u64, u64)],
) -> anyhow::Result<Outcome> {
    let inf = s.live_mut()?;
    for (i, &(addr, _)) in targets.iter().enumerate() {
        if let Err(e) = inf.insert_site(addr) {
            for &(a, _) in &targets[..i] {
                let _ = inf.remove_site(a);
            }
            anyhow::bail!("{e}");
        }
    }
    let sr = StepResume {
        targets: targets.to_vec(),
        tid,
    };
    let r = hook::resume_raw(s, obs, Resume::Continue, Some(sr));
    if let Some(inf) = s.inferior.as_mut().filter(|i| i.is_alive()) {
        for &(a, _) in targets {
            let _ = inf.remove_site(a);
        }
    }
    let (stop, reason) = r?;
    match (&stop, &reason) {
        (StopEvent::Breakpoint { .. }, Some(Reason::StepResume)) => Ok(Outcome::Done),
        _ => Ok(Outcome::Interrupted(Box::new(arrive(
            s,
            &stop,
            reason.as_ref(),
            true,
        )?))),
    }
}

fn pc_sp(s: &Session, tid: Tid) -> anyhow::Result<(u64, u64)> {
    let r = s.live()?.regs(tid).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok((r.pc(), r.sp()))
}

/// If the single-step from (`pc`, `sp`) executed a call, the return address.
fn call_return(s: &Session, before: (u64, u64), after_sp: u64) -> Option<u64> {
    if after_sp != before.1.wrapping_sub(8) {
        return None;
    }
    let mut b = [0u8; 8];
    s.live().ok()?.read_memory(after_sp, &mut b).ok()?;
    let ret = u64::from_le_bytes(b);
    (ret > before.0 && ret <= before.0 + 16).then_some(ret)
}

/// `step`, `next`, `until`: run to the start of another line.
pub(crate) fn line_step(
    s: &mut Session,
    obs: &mut dyn Observer,
    kind: LineStep,
) -> anyhow::Result<Stop> {
    let tid = s.tid()?;
    s.frame = 0;
    let (start_pc, _) = pc_sp(s, tid)?;
    let start_func = s.symbols.function_at(start_pc);
    let has_lines = start_func
        .as_ref()
        .map(|f| f.has_debug_info)
        .unwrap_or(false)
        && s.symbols.line_at(start_pc).is_some();
    if !has_lines {
        let name = start_func
            .as_ref()
            .map(|f| f.name.clone())
            .unwrap_or_else(|| "??".into());
        obs.notice(Notice::SteppingOutOf { function: name });
        or_stop!(step_out(s, obs, tid));
    }
    let start_line = s.symbols.line_at(start_pc).map(|l| (l.file, l.line));
    let mut range = current_range(s, tid)?;
    loop {
        let before = pc_sp(s, tid)?;
        or_stop!(stepi_raw(s, obs, tid));
        let (mut pc, sp) = pc_sp(s, tid)?;
        // A user breakpoint met on the way stops the step, as in gdb.
        if crate::breakpoints::user_breakpoint_at(s, pc).is_some() {
            return report_line(s, tid, true);
        }
        if range.0 <= pc && pc < range.1 {
            continue;
        }
        if let Some(ret) = call_return(s, before, sp) {
            let callee = s.symbols.function_at(pc);
            let into = kind == LineStep::Step
                && callee.as_ref().map(|f| f.has_debug_info).unwrap_or(false);
            if into {
                let Some(f) = callee else { break };
                if f.breakpoint_addr != pc {
                    or_stop!(run_to(s, obs, tid, f.breakpoint_addr, 0));
                }
                return report_line(s, tid, true);
            }
            or_stop!(run_to(s, obs, tid, ret, sp));
            pc = ret;
            if range.0 <= pc && pc < range.1 {
                continue;
            }
        }
        let func = s.symbols.function_at(pc);
        let line = func
            .as_ref()
            .filter(|f| f.has_debug_info)
            .and_then(|_| s.symbols.line_at(pc));
        let Some(line) = line else {
            // Code without line information (returned into libc, jumped into a stub): leave it.
            or_stop!(step_out(s, obs, tid));
            range = current_range(s, tid)?;
            continue;
        };
        if line.address != pc || !line.is_stmt || line.line == 0 {
            // The middle of a statement (a return into the caller): finish that statement.
            range = s.symbols.line_range(pc).unwrap_or((pc, pc + 1));
            continue;
        }
        let same_function = match (&func, &start_func) {
            (Some(a), Some(b)) => a.low == b.low,
            _ => false,
        };
        // Another part of the starting line (a loop's condition after its initialisation):
        // gdb keeps stepping until the line changes.
        if same_function && start_line.as_ref() == Some(&(line.file.clone(), line.line)) {
            range = s.symbols.line_range(pc).unwrap_or((pc, pc + 1));
            continue;
        }
        if kind == LineStep::Until && same_function && pc < start_pc {
            range = s.symbols.line_range(pc).unwrap_or((pc, pc + 1));
            continue;
        }
        return report_line(s, tid, !same_function);
    }
    // (A call into nothing known: where the thread is.)
    report_line(s, tid, true)
}

/// The address range of the line at the thread's pc (a one-byte range without line info).
fn current_range(s: &Session, tid: Tid) -> anyhow::Result<(u64, u64)> {
    let (pc, _) = pc_sp(s, tid)?;
    Ok(s.symbols.line_range(pc).unwrap_or((pc, pc + 1)))
}

/// Runs until the selected thread's current function returns (to frame 1's pc).
fn step_out(s: &mut Session, obs: &mut dyn Observer, tid: Tid) -> anyhow::Result<Outcome> {
    let frames = s.frames(tid, 2)?;
    let (_, sp) = pc_sp(s, tid)?;
    // The machine frame's caller: frames of inlined code share frame 0's pc and CFA.
    let first = frames.first().map(|f| (f.regs.pc(), f.cfa));
    let caller = frames.iter().find(|f| Some((f.regs.pc(), f.cfa)) != first);
    match caller.and_then(|f| f.regs.pc()) {
        Some(ret) if ret != 0 => run_to(s, obs, tid, ret, sp),
        _ => {
            // Nowhere to return to: let the program run, as gdb does.
            let (stop, reason) = hook::resume_raw(s, obs, Resume::Continue, None)?;
            Ok(Outcome::Interrupted(Box::new(arrive(
                s,
                &stop,
                reason.as_ref(),
                true,
            )?)))
        }
    }
}

/// The end of a step at a new line; a user breakpoint there is reported as hit.
fn report_line(s: &mut Session, tid: Tid, new_frame: bool) -> anyhow::Result<Stop> {
    let (pc, _) = pc_sp(s, tid)?;
    if let Some(n) = crate::breakpoints::user_breakpoint_at(s, pc) {
        let reason = Reason::Breakpoint(n);
        if let Some(bp) = s.breakpoints.get_mut(n) {
            bp.hit_count += 1;
        }
        // The hit is reported now: continuing steps over the site instead of hitting again.
        s.live_mut()?
            .note_hit_reported(tid)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let stop = StopEvent::Breakpoint { tid, addr: pc };
        return arrive(s, &stop, Some(&reason), true);
    }
    let stop = StopEvent::Stepped { tid };
    arrive(s, &stop, None, new_frame)
}

/// `stepi` / `nexti`.
pub(crate) fn instruction_step(
    s: &mut Session,
    obs: &mut dyn Observer,
    over_calls: bool,
) -> anyhow::Result<Stop> {
    let tid = s.tid()?;
    s.frame = 0;
    let before = pc_sp(s, tid)?;
    let start_func = s.symbols.function_at(before.0).map(|f| f.low);
    or_stop!(stepi_raw(s, obs, tid));
    let (_, sp) = pc_sp(s, tid)?;
    if over_calls {
        if let Some(ret) = call_return(s, before, sp) {
            or_stop!(run_to(s, obs, tid, ret, sp));
        }
    }
    let (pc2, _) = pc_sp(s, tid)?;
    let new_func = s.symbols.function_at(pc2).map(|f| f.low) != start_func;
    let stop = StopEvent::Stepped { tid };
    arrive(s, &stop, None, new_func)
}

/// `finish`: run until the selected frame returns; the stop carries the value it returned.
pub(crate) fn finish(s: &mut Session, obs: &mut dyn Observer) -> anyhow::Result<Stop> {
    let tid = s.tid()?;
    let frames = s.frames(tid, s.frame + 2)?;
    let frame = frames.get(s.frame).cloned().context("No stack.")?;
    let Some(caller) = frames.get(s.frame + 1).cloned() else {
        anyhow::bail!("\"finish\" not meaningful in the outermost frame.");
    };
    let func = s
        .symbols
        .function_at(crate::frames::lookup_pc(&frame, s.frame));
    obs.notice(Notice::Finishing {
        frame: Box::new(s.frame_info(&frame, s.frame)),
        backward: false,
    });
    // Out of an inlined copy: step until the pc leaves the copy's code (calls stepped
    // over), as gdb does; an inlined function has no return value to show.
    if let Some(ranges) = frame
        .inline
        .as_ref()
        .and_then(|i| s.symbols.inline_ranges(i))
    {
        if s.frame == 0 {
            let inside = |pc: u64| ranges.iter().any(|&(b, e)| b <= pc && pc < e);
            loop {
                let before = pc_sp(s, tid)?;
                or_stop!(stepi_raw(s, obs, tid));
                let (pc, sp) = pc_sp(s, tid)?;
                if let Some(ret) = call_return(s, before, sp) {
                    or_stop!(run_to(s, obs, tid, ret, sp));
                    if inside(ret) {
                        continue;
                    }
                } else if inside(pc) {
                    continue;
                }
                break;
            }
            s.frame = 0;
            let stop = StopEvent::Stepped { tid };
            return arrive(s, &stop, None, true);
        }
    }
    // The machine frame's caller (frames of inlined code share the machine frame).
    let caller = frames
        .iter()
        .skip(s.frame + 1)
        .find(|f| f.cfa != frame.cfa || f.regs.pc() != frame.regs.pc())
        .cloned()
        .unwrap_or(caller);
    let ret = caller.regs.pc().context("No stack.")?;
    let cfa = frame.cfa.unwrap_or(0);
    or_stop!(run_to(s, obs, tid, ret, cfa.saturating_sub(1)));
    s.frame = 0;
    let stop = StopEvent::Stepped { tid };
    let mut stop = arrive(s, &stop, None, true)?;
    if let Some(rt) = func.and_then(|f| f.return_type) {
        stop.returned = Some(crate::context::returned_value(s, tid, rt)?);
        s.last_report = Some(stop.clone());
    }
    Ok(stop)
}

/// `until LOCATION` / `advance LOCATION`: run until the location is reached.
/// gdb's `until LOCATION` and `advance LOCATION`: run until the location is reached or the
/// current frame returns, whichever comes first.
pub(crate) fn run_to_location(
    s: &mut Session,
    obs: &mut dyn Observer,
    addrs: &[u64],
) -> anyhow::Result<Stop> {
    let tid = s.tid()?;
    if addrs.is_empty() {
        anyhow::bail!("No location.");
    }
    let mut targets: Vec<(u64, u64)> = addrs.iter().map(|&a| (a, 0)).collect();
    let frames = s.frames(tid, 2)?;
    if let (Some(f0), Some(ret)) = (frames.first(), frames.get(1).and_then(|f| f.regs.pc())) {
        targets.push((ret, f0.cfa.unwrap_or(0).saturating_sub(1)));
    }
    or_stop!(run_to_any(s, obs, tid, &targets));
    s.frame = 0;
    let stop = StopEvent::Stepped { tid };
    arrive(s, &stop, None, true)
}
