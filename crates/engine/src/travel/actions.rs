//! What debugger events do when they hold (dprintf, periodic commands, quantum stops), and
//! the calls that install them.

use super::*;

/// A `dprintf` hit: formats its text with its arguments evaluated in the stopped thread and
/// tells the observer.
pub(crate) fn run_dprintf(s: &mut Session, obs: &mut dyn Observer, number: u32, stop: &StopEvent) {
    let Some((format, args)) = s
        .travel
        .engine
        .print_of(number)
        .map(|(f, a)| (f.to_string(), a.to_vec()))
    else {
        return;
    };
    if let StopEvent::Breakpoint { tid, .. } = stop {
        s.thread = Some(*tid);
        s.frame = 0;
    }
    let notice = match crate::printf::format(s, &format, &args) {
        Ok(text) => Notice::Dprintf {
            breakpoint: number,
            text,
        },
        Err(e) => Notice::DprintfError {
            breakpoint: number,
            error: e.to_string(),
        },
    };
    // When (a replayed tree orders the processes' texts by it).
    let at = s.replay.as_ref().map(|r| {
        r.batch_progress()
            .unwrap_or_else(|| (r.events_replayed(), 0))
    });
    match at {
        Some(at) => obs.notice_at(notice, at),
        None => obs.notice(notice),
    }
}

/// Debugger events due at `time`: periodic commands run (by the front end); returns true if a
/// quantum event stops the replay here.
pub(crate) fn run_due_events(
    s: &mut Session,
    obs: &mut dyn Observer,
    time: u64,
    tid: Tid,
) -> anyhow::Result<bool> {
    let actions = s.travel.engine.match_time(time);
    // The replay is exactly at the event: its position is known without replaying.
    if let Ok(regs) = s
        .live()
        .and_then(|i| i.regs(tid).map_err(|e| anyhow::anyhow!("{e}")))
    {
        let ticks = s.replay.as_mut().and_then(|r| {
            let t = r.recorded_tid_of(tid);
            r.ticks_of(t)
        });
        s.travel.here = Some(Position::at_event(time, ticks, regs.pc()));
    }
    let mut stop = false;
    for (_, action) in actions {
        match action {
            Action::Stop => stop = true,
            Action::Commands(cmds) => {
                s.thread = Some(tid);
                s.frame = 0;
                obs.run_commands(s, &cmds);
            }
            Action::Print { .. } | Action::Mark(_) => {}
        }
    }
    Ok(stop)
}

/// `every K COMMAND`: run COMMAND every K events of the replay; returns the event's id.
pub(crate) fn every(s: &mut Session, k: u64, cmd: &str) -> anyhow::Result<u32> {
    if s.replay.is_none() {
        bail!(NEEDS_RECORDING);
    }
    if k == 0 || cmd.trim().is_empty() {
        bail!("usage: every K COMMAND (K events, K > 0)");
    }
    let cmd = cmd.trim();
    let start = s.replay.as_ref().map(|r| r.events_replayed()).unwrap_or(0);
    let start = start - start % k;
    let id = s.travel.engine.add(
        Spec::Periodic { every: k, start },
        Action::Commands(vec![cmd.to_string()]),
        false,
    );
    Ok(id)
}

/// Periodic tick events are due: thread `tid` has counted `ticks`; their commands run (by the
/// front end) with that thread selected, at a position known without replaying.
pub(crate) fn run_tick_commands(
    s: &mut Session,
    obs: &mut dyn Observer,
    tid: Tid,
    ticks: u64,
    commands: &[String],
) {
    let event = s.replay.as_ref().map(|r| r.events_replayed()).unwrap_or(0);
    if let Ok(regs) = s
        .live()
        .and_then(|i| i.regs(tid).map_err(|e| anyhow::anyhow!("{e}")))
    {
        // The tick trap stops the thread where its count became `ticks`: instance 0 of that
        // quantum (as a seek to this position finds it).
        s.travel.here = Some(Position::at_event(event, Some(ticks), regs.pc()));
    }
    s.thread = Some(tid);
    s.frame = 0;
    obs.run_commands(s, commands);
}

/// `every K ticks [thread M] COMMAND`: run COMMAND whenever thread M (gdb's number; default
/// the selected thread) has counted a multiple of K ticks. Returns the event's id and the
/// thread's number.
pub(crate) fn every_ticks(
    s: &mut Session,
    k: u64,
    thread: Option<u32>,
    cmd: &str,
) -> anyhow::Result<(u32, u32)> {
    let Some(replay) = s.replay.as_ref() else {
        bail!(NEEDS_RECORDING);
    };
    if !replay.counts_ticks() {
        bail!("This recording has no tick counts (it was made without the instruction counter).");
    }
    let cmd = cmd.trim();
    if k == 0 || cmd.is_empty() {
        bail!("usage: every K ticks [thread M] COMMAND (K > 0)");
    }
    let (recorded, num) = super::eras::recorded_thread(s, thread)?;
    let id = s.travel.engine.add(
        Spec::PeriodicTicks {
            thread: recorded,
            every: k,
        },
        Action::Commands(vec![cmd.to_string()]),
        false,
    );
    Ok((id, num))
}

/// `break tick N [thread M]`: a quantum event in the instruction counter's time — stop when
/// thread M (gdb's number; default the selected thread) has counted N ticks. Returns the
/// event's id and the thread's number.
pub(crate) fn break_at_tick(
    s: &mut Session,
    ticks: u64,
    thread: Option<u32>,
) -> anyhow::Result<(u32, u32)> {
    let Some(replay) = s.replay.as_ref() else {
        bail!(NEEDS_RECORDING);
    };
    if !replay.counts_ticks() {
        bail!("This recording has no tick counts (it was made without the instruction counter).");
    }
    let (recorded, num) = super::eras::recorded_thread(s, thread)?;
    if let Some(now) = s.replay.as_mut().and_then(|r| r.ticks_of(recorded)) {
        if now >= ticks {
            bail!(
                "Thread {num} has counted {now} ticks already: a tick event stops only going forward."
            );
        }
    }
    let id = s.travel.engine.add(
        Spec::Tick {
            thread: recorded,
            ticks,
        },
        Action::Stop,
        true,
    );
    Ok((id, num))
}

/// `break event N` (a quantum event): stop when the replay reaches event N; returns the
/// event's id.
pub(crate) fn break_at_event(s: &mut Session, n: u64) -> anyhow::Result<u32> {
    if s.replay.is_none() {
        bail!(NEEDS_RECORDING);
    }
    Ok(s.travel
        .engine
        .add(Spec::Quantum { time: n }, Action::Stop, true))
}
