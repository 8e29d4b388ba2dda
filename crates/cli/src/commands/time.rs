//! Time-travel commands (replay only): gdb's reverse execution commands, and hindsight's
//! `when`, `goto`, `bookmark`, `checkpoint`, `every`, `era`, `info events`, `info eras`,
//! plus `dprintf` and `printf`.

use anyhow::bail;
use hindsight_engine::{LineStep, Session, Stop};
use hindsight_timeline::{Action, Spec};

use crate::console::{say, Console};
use crate::printf::split_args;

use super::running::show;

/// A repeat count (`reverse-step 3`).
fn count(args: &str) -> anyhow::Result<u64> {
    match args.trim() {
        "" => Ok(1),
        a => a
            .parse::<u64>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| anyhow::anyhow!("Invalid number \"{a}\".")),
    }
}

/// Repeats a reverse motion while the previous one ended cleanly.
fn repeat(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    mut once: impl FnMut(&mut Session) -> anyhow::Result<Stop>,
) -> anyhow::Result<()> {
    s.can_travel()?;
    let n = count(args)?;
    for _ in 0..n {
        let stop = once(s)?;
        let clean = stop.is_clean_step() && s.stepped_cleanly();
        report_stop(s, c, &stop)?;
        if !clean {
            break;
        }
    }
    Ok(())
}

fn report_stop(s: &mut Session, c: &mut Console, stop: &Stop) -> anyhow::Result<()> {
    crate::report::show_inferior_changes(s, c, stop);
    crate::report::show_stop(s, c, stop)?;
    if !stop.ended() && s.pid().is_some() && !c.displays.is_empty() {
        super::display::show_all(s, c);
    }
    Ok(())
}

pub(crate) fn reverse_continue(
    s: &mut Session,
    c: &mut Console,
    _: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    s.can_travel()?;
    say!(c, "Continuing.");
    let stop = s.reverse_continue(c);
    show(s, c, stop)
}

pub(crate) fn reverse_step(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    repeat(s, c, args, |s| s.reverse_step_line(LineStep::Step))
}

pub(crate) fn reverse_next(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    repeat(s, c, args, |s| s.reverse_step_line(LineStep::Next))
}

pub(crate) fn reverse_stepi(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    repeat(s, c, args, |s| s.reverse_step_instruction(false))
}

pub(crate) fn reverse_nexti(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    repeat(s, c, args, |s| s.reverse_step_instruction(true))
}

pub(crate) fn reverse_finish(
    s: &mut Session,
    c: &mut Console,
    _: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    let stop = s.reverse_finish(c);
    show(s, c, stop)
}

pub(crate) fn when(
    s: &mut Session,
    c: &mut Console,
    _: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    let p = s.position()?;
    say!(c, "Current event: {}", p.event);
    say!(c, "Current position: {p}");
    Ok(())
}

pub(crate) fn goto(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    let words: Vec<&str> = args.split_whitespace().collect();
    let stop = match words[..] {
        // `goto tick N [thread M]`.
        ["tick", n, ref rest @ ..] => {
            let ticks: u64 = n
                .parse()
                .map_err(|_| anyhow::anyhow!("Invalid tick count \"{n}\"."))?;
            let thread = match rest {
                [] => None,
                ["thread", m] => Some(
                    m.parse::<u32>()
                        .map_err(|_| anyhow::anyhow!("Invalid thread ID: {m}"))?,
                ),
                _ => bail!("Usage: goto tick N [thread M]"),
            };
            s.goto_tick(ticks, thread)
        }
        // `goto era NAME [end]`.
        ["era", name] => s.goto_era(name, false),
        ["era", name, "end"] => s.goto_era(name, true),
        ["era", ..] => bail!("Usage: goto era NAME [end]"),
        _ => s.goto_text(args),
    };
    show(s, c, stop)
}

pub(crate) fn bookmark(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    let (name, p) = s.bookmark(args)?;
    say!(c, "Bookmark {name} at {p}.");
    Ok(())
}

/// `info messages`: where every recorded process stands in the consistent state around the
/// stop, what each has sent and received by then, and what is in flight.
pub(crate) fn info_messages(s: &mut Session, c: &mut Console) -> anyhow::Result<()> {
    let stop = s.consistent_stop()?;
    for line in crate::messages::at_cut(&stop.causality, &stop.cut, stop.stopped) {
        say!(c, "{line}");
    }
    Ok(())
}

/// `info bookmarks`.
pub(crate) fn info_bookmarks(s: &mut Session, c: &mut Console) -> anyhow::Result<()> {
    let list = s.bookmarks();
    if list.is_empty() {
        say!(c, "No bookmarks.");
        return Ok(());
    }
    say!(c, "Name       Position");
    for (name, p) in list {
        say!(c, "{name:<10} {p}");
    }
    Ok(())
}

pub(crate) fn checkpoint(
    s: &mut Session,
    c: &mut Console,
    _: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    let (n, p) = s.checkpoint()?;
    say!(c, "checkpoint {n}: {p}");
    Ok(())
}

/// `info checkpoints`.
pub(crate) fn info_checkpoints(s: &mut Session, c: &mut Console) -> anyhow::Result<()> {
    let list = s.checkpoints()?;
    say!(c, "  0 start of the recording");
    for (n, p) in list {
        say!(c, "  {n} {p}");
    }
    let auto = s.automatic_checkpoints();
    if let (Some(first), Some(last)) = (auto.first(), auto.last()) {
        say!(
            c,
            "({} automatic checkpoints, kept at events {first} to {last})",
            auto.len()
        );
    }
    Ok(())
}

pub(crate) fn restart(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    s.can_travel()?;
    s.live()?;
    let n: u32 = args
        .trim()
        .parse()
        .map_err(|_| anyhow::anyhow!("Argument required (checkpoint id to restore)."))?;
    let stop = s.restore_checkpoint(n);
    show(s, c, stop)
}

/// `every K [ticks [thread M]] COMMAND`: K events, or K ticks of one thread.
pub(crate) fn every(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    const USAGE: &str =
        "usage: every K [ticks [thread M]] COMMAND (K events, or K ticks of thread M; K > 0)";
    if !s.is_replay() {
        bail!(hindsight_engine::motion::NEEDS_RECORDING);
    }
    let a = args.trim();
    let (k, rest) = a.split_once(char::is_whitespace).unwrap_or((a, ""));
    let k: u64 = k
        .parse()
        .ok()
        .filter(|&k| k > 0)
        .ok_or_else(|| anyhow::anyhow!(USAGE))?;
    let rest = rest.trim();
    if let Some(rest) = rest
        .strip_prefix("ticks ")
        .or_else(|| rest.strip_prefix("tick "))
    {
        let rest = rest.trim();
        let (thread, cmd) = match rest.strip_prefix("thread ") {
            Some(t) => {
                let t = t.trim_start();
                let (m, cmd) = t.split_once(char::is_whitespace).unwrap_or((t, ""));
                let m = m
                    .parse::<u32>()
                    .map_err(|_| anyhow::anyhow!("Invalid thread ID: {m}"))?;
                (Some(m), cmd.trim())
            }
            None => (None, rest),
        };
        if cmd.is_empty() {
            bail!(USAGE);
        }
        let (id, num) = s.every_ticks(k, thread, cmd)?;
        say!(
            c,
            "Periodic event {id}: every {k} ticks of thread {num}, {cmd}"
        );
        return Ok(());
    }
    if rest.is_empty() {
        bail!(USAGE);
    }
    let id = s.every(k, rest)?;
    say!(c, "Periodic event {id}: every {k} events, {rest}");
    Ok(())
}

/// `era NAME from BOUND [to BOUND]`: names a span of the replay.
pub(crate) fn era(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    let e = s.define_era(args)?;
    match &e.to {
        Some(to) => say!(
            c,
            "Era {}: from {} ({}) to {} ({})",
            e.name,
            e.from.moment,
            e.from.named,
            to.moment,
            to.named
        ),
        None => say!(
            c,
            "Era {}: from {} ({}) to the end",
            e.name,
            e.from.moment,
            e.from.named
        ),
    }
    Ok(())
}

/// `info eras`.
pub(crate) fn info_eras(s: &mut Session, c: &mut Console) -> anyhow::Result<()> {
    let list = s.eras();
    if list.is_empty() {
        say!(c, "No eras.");
        return Ok(());
    }
    say!(c, "Name       From                          To");
    for e in list {
        let to =
            e.to.map(|t| t.moment.to_string())
                .unwrap_or_else(|| "the end".into());
        say!(c, "{:<10} {:<29} {to}", e.name, e.from.moment.to_string());
    }
    Ok(())
}

/// `info events`: every debugger event and its life-cycle state.
pub(crate) fn info_events(s: &mut Session, c: &mut Console) -> anyhow::Result<()> {
    let list = s.debugger_events();
    if list.is_empty() {
        say!(c, "No debugger events.");
        return Ok(());
    }
    say!(c, "Num  State      What");
    for e in list {
        let what = match &e.spec {
            Spec::Pc { breakpoint } => format!("breakpoint {breakpoint}"),
            Spec::Era {
                breakpoint,
                from,
                to,
            } => match to {
                Some(t) => format!("breakpoint {breakpoint} from {from} to {t}"),
                None => format!("breakpoint {breakpoint} from {from}"),
            },
            Spec::Quantum { time } => format!("stop at event {time}"),
            Spec::Tick { thread, ticks } => {
                format!("stop at tick {ticks} of LWP {thread} (as recorded)")
            }
            Spec::ControlPoint { position } => format!("position {position}"),
            Spec::Periodic { every, .. } => format!("every {every} events"),
            Spec::PeriodicTicks { thread, every } => {
                format!("every {every} ticks of LWP {thread} (as recorded)")
            }
        };
        let action = match &e.action {
            Action::Stop => "stop".to_string(),
            Action::Print { format, .. } => format!("printf {format:?}"),
            Action::Commands(cmds) => cmds.join("; "),
            Action::Mark(name) => format!("bookmark {name}"),
        };
        say!(
            c,
            "{:<4} {:<10} {what}: {action}",
            e.id,
            format!("{:?}", e.life).to_lowercase()
        );
    }
    Ok(())
}

/// `printf "FORMAT", ARGS…`.
pub(crate) fn printf(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    let (format, args) = split_args(args)?;
    let text = s.printf(&format, &args)?;
    c.print(&text);
    Ok(())
}

/// `dprintf LOCATION,"FORMAT",ARGS…`: a breakpoint that prints and goes on.
pub(crate) fn dprintf(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    let Some((location, rest)) = args.split_once(',') else {
        bail!("Format string required");
    };
    let location = location.trim();
    if location.is_empty() {
        bail!("Location required");
    }
    let (format, fargs) = split_args(rest)?;
    super::breakpoints::dprintf(s, c, location, format, fargs)
}
