//! Time-travel commands (replay only): gdb's reverse execution commands, and hindsight's
//! `when`, `goto`, `bookmark`, `checkpoint`, `every`, plus `dprintf` and `printf`.

use anyhow::bail;
use hindsight_timeline::visits::LineStep;

use crate::session::Session;
use crate::travel;

/// The refusal of a reverse command on a live session (gdb: "Target native does not support
/// this command.").
fn needs_recording(s: &mut Session) -> anyhow::Result<()> {
    // A command starts afresh (a failed one may have left a selection behind).
    s.travel.forget_selection();
    if s.replay.is_none() {
        bail!(travel::NEEDS_RECORDING);
    }
    s.travel.check_no_exec()?;
    s.live()?;
    Ok(())
}

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
    args: &str,
    mut once: impl FnMut(&mut Session) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    needs_recording(s)?;
    let n = count(args)?;
    for _ in 0..n {
        once(s)?;
        let clean = matches!(
            s.last_stop,
            Some((hindsight_control::StopEvent::Stepped { .. }, None))
        );
        if !clean {
            break;
        }
    }
    Ok(())
}

pub(crate) fn reverse_continue(s: &mut Session, _: &str, _: Option<&str>) -> anyhow::Result<()> {
    // From the end of a replay too (the program exited): back to its last stop.
    s.travel.forget_selection();
    if s.replay.is_none() {
        bail!(travel::NEEDS_RECORDING);
    }
    s.travel.check_no_exec()?;
    println!("Continuing.");
    travel::reverse_continue(s)
}

pub(crate) fn reverse_step(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    repeat(s, args, |s| travel::reverse_line_step(s, LineStep::Step))
}

pub(crate) fn reverse_next(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    repeat(s, args, |s| travel::reverse_line_step(s, LineStep::Next))
}

pub(crate) fn reverse_stepi(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    repeat(s, args, |s| travel::reverse_stepi(s, false))
}

pub(crate) fn reverse_nexti(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    repeat(s, args, |s| travel::reverse_stepi(s, true))
}

pub(crate) fn reverse_finish(s: &mut Session, _: &str, _: Option<&str>) -> anyhow::Result<()> {
    needs_recording(s)?;
    travel::reverse_finish(s)
}

pub(crate) fn when(s: &mut Session, _: &str, _: Option<&str>) -> anyhow::Result<()> {
    needs_recording(s)?;
    travel::when(s)
}

pub(crate) fn goto(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    // From anywhere in a replay, the end included.
    s.travel.forget_selection();
    if s.replay.is_none() {
        bail!(travel::NEEDS_RECORDING);
    }
    s.travel.check_no_exec()?;
    travel::goto(s, args)
}

pub(crate) fn bookmark(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    needs_recording(s)?;
    travel::bookmark(s, args)
}

pub(crate) fn checkpoint(s: &mut Session, _: &str, _: Option<&str>) -> anyhow::Result<()> {
    needs_recording(s)?;
    travel::checkpoint(s)
}

pub(crate) fn restart(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    needs_recording(s)?;
    travel::restart_checkpoint(s, args)
}

pub(crate) fn every(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    travel::every(s, args)
}

/// `printf "FORMAT", ARGS…`.
pub(crate) fn printf(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    let (format, args) = crate::printf::split_args(args)?;
    let text = crate::printf::format(s, &format, &args)?;
    print!("{text}");
    Ok(())
}

/// `dprintf LOCATION,"FORMAT",ARGS…`: a breakpoint that prints and goes on.
pub(crate) fn dprintf(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    let Some((location, rest)) = args.split_once(',') else {
        bail!("Format string required");
    };
    let location = location.trim();
    if location.is_empty() {
        bail!("Location required");
    }
    let (format, fargs) = crate::printf::split_args(rest)?;
    let n = super::breakpoints::add_plain_breakpoint(s, location, "Dprintf")?;
    s.travel.engine.add(
        hindsight_timeline::Spec::Pc { breakpoint: n },
        hindsight_timeline::Action::Print {
            format,
            args: fargs,
        },
        false,
    );
    Ok(())
}
