//! What debugger events do when they hold (dprintf, periodic commands, quantum stops), and
//! the commands that install them.

use super::*;

/// A `dprintf` hit: prints its format with its arguments evaluated in the stopped thread.
pub(crate) fn run_dprintf(s: &mut Session, number: u32, stop: &StopEvent) {
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
