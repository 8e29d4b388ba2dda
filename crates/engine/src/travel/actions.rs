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
    match crate::printf::format(s, &format, &args) {
        Ok(text) => obs.notice(Notice::Dprintf {
            breakpoint: number,
            text,
        }),
        Err(e) => obs.notice(Notice::DprintfError {
            breakpoint: number,
            error: e.to_string(),
        }),
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
