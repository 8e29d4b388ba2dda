//! Commands that move the program: run, start, continue, step, next, stepi, nexti, finish,
//! until, advance, kill, quit, and handle (which signals stop it).

use anyhow::bail;
use hindsight_engine::{LineStep, Session, Stop};

use crate::console::{say, Console};
use crate::report;

/// A repeat count argument (`next 3`).
fn count(args: &str) -> anyhow::Result<u64> {
    let a = args.trim();
    if a.is_empty() {
        return Ok(1);
    }
    match a.parse::<u64>() {
        Ok(n) => Ok(n),
        Err(_) => bail!("Invalid number \"{a}\"."),
    }
}

/// True while the program can be stepped again (it did not end or hit something else).
fn alive(s: &Session) -> bool {
    s.pid().is_some()
}

/// Shows a motion's stop.
pub(crate) fn show(
    s: &mut Session,
    c: &mut Console,
    stop: anyhow::Result<Stop>,
) -> anyhow::Result<()> {
    let stop = stop?;
    report::show_inferior_changes(s, c, &stop);
    report::show_stop(s, c, &stop)?;
    // `display` expressions follow every stop of a program that is still there.
    if !stop.ended() && s.pid().is_some() && !c.displays.is_empty() {
        super::display::show_all(s, c);
    }
    Ok(())
}

pub(crate) fn run(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    // `run ARGS` replaces the program's arguments (for this and later runs), as in gdb.
    let new_args: Vec<std::ffi::OsString> = args.split_whitespace().map(Into::into).collect();
    if !new_args.is_empty() && new_args != s.args() {
        s.set_args(new_args);
        s.restart()?;
    }
    if s.started() || !alive(s) {
        // Like gdb's `run` on a program that already ran: start it again.
        s.restart()?;
    }
    let args: Vec<String> = s
        .args()
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    say!(
        c,
        "Starting program: {} {}",
        s.program().display(),
        args.join(" ")
    );
    let stop = s.resume(c);
    show(s, c, stop)
}

pub(crate) fn start(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    f: Option<&str>,
) -> anyhow::Result<()> {
    // A program without `main` (stripped, or not C) starts at its entry point.
    match s.symbols().entry_point() {
        Some(entry) if s.symbols().lookup_functions("main").is_empty() => {
            super::breakpoints::tbreak(s, c, &format!("*{entry:#x}"), None)?
        }
        _ => super::breakpoints::tbreak(s, c, "main", None)?,
    }
    run(s, c, args, f)
}

pub(crate) fn continue_(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    s.live()?;
    // `continue N`: ignore the breakpoint that stopped us N-1 more times.
    let n = count(args)?;
    if n > 1 {
        if let Some(num) = s.last_breakpoint() {
            if s.set_ignore_count(num, (n - 1) as u32).is_ok() {
                say!(
                    c,
                    "Will ignore next {} crossings of breakpoint {num}.  Continuing.",
                    n - 1
                );
            }
        }
    } else {
        say!(c, "Continuing.");
    }
    let stop = s.resume(c);
    show(s, c, stop)
}

fn repeat(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    mut one: impl FnMut(&mut Session, &mut Console) -> anyhow::Result<Stop>,
) -> anyhow::Result<()> {
    s.live()?;
    // `next 3`: gdb shows only where the last step ends; a breakpoint, a signal or the end
    // of the program on the way is reported and ends the count.
    let n = count(args)?;
    let mut result = Ok(());
    for i in 0..n {
        c.quiet_steps = i + 1 < n;
        let stop = one(s, c);
        result = show(s, c, stop);
        if result.is_err() || !alive(s) || !s.stepped_cleanly() {
            break;
        }
    }
    c.quiet_steps = false;
    result
}

pub(crate) fn step(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    repeat(s, c, args, |s, c| s.step_line(c, LineStep::Step))
}

pub(crate) fn next(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    repeat(s, c, args, |s, c| s.step_line(c, LineStep::Next))
}

pub(crate) fn stepi(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    repeat(s, c, args, |s, c| s.step_instruction(c, false))
}

pub(crate) fn nexti(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    repeat(s, c, args, |s, c| s.step_instruction(c, true))
}

pub(crate) fn finish(
    s: &mut Session,
    c: &mut Console,
    _args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    let stop = s.finish(c);
    show(s, c, stop)
}

pub(crate) fn until(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    if args.trim().is_empty() {
        s.live()?;
        let stop = s.step_line(c, LineStep::Until);
        return show(s, c, stop);
    }
    advance(s, c, args, None)
}

pub(crate) fn advance(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    s.live()?;
    if args.trim().is_empty() {
        bail!("Argument required (a location).");
    }
    let addresses = s.resolve_location(args.trim(), c.default_file())?;
    if addresses.is_empty() {
        bail!("No location.");
    }
    let stop = s.run_to_location(c, &addresses);
    show(s, c, stop)
}

pub(crate) fn kill(
    s: &mut Session,
    c: &mut Console,
    _args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    let pid = s.kill_program()?;
    say!(c, "[Inferior 1 (process {pid}) killed]");
    Ok(())
}

pub(crate) fn quit(
    s: &mut Session,
    c: &mut Console,
    _args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    s.kill();
    c.quit = true;
    Ok(())
}

/// `handle SIGNAL... [no]stop|[no]print|[no]pass`: whether the signal stops the program, as
/// gdb's command (print follows stop; a signal is always passed to the program).
pub(crate) fn handle(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    let mut signals = Vec::new();
    // gdb's rules: stop implies print, noprint implies nostop.
    let (mut stop, mut print, mut pass) = (None, None, None);
    for word in args.split_whitespace() {
        match word {
            "stop" => (stop, print) = (Some(true), Some(true)),
            "nostop" => stop = Some(false),
            "print" => print = Some(true),
            "noprint" => (stop, print) = (Some(false), Some(false)),
            "pass" | "noignore" => pass = Some(true),
            "nopass" | "ignore" => pass = Some(false),
            "all" => signals.extend(1..=64),
            w => match hindsight_engine::signals::signal_number(w) {
                Some(n) => signals.push(n),
                None => anyhow::bail!("Unrecognized or ambiguous flag word: \"{w}\"."),
            },
        }
    }
    if signals.is_empty() {
        anyhow::bail!("Argument required (signal for which to change handling).");
    }
    for &n in &signals {
        if let Some(v) = stop {
            s.set_signal_stops(n, v);
            // Stopping means saying so.
            if v {
                s.set_signal_prints(n, true);
            }
        }
        if let Some(v) = print {
            s.set_signal_prints(n, v);
        }
        if let Some(v) = pass {
            s.set_signal_passes(n, v);
        }
    }
    print_signal_table(s, c, &signals);
    Ok(())
}

fn print_signal_table(s: &Session, c: &mut Console, signals: &[i32]) {
    say!(c, "Signal        Stop\tPrint\tPass to program\tDescription");
    let yes = |b: bool| if b { "Yes" } else { "No" };
    for &n in signals {
        let (name, desc) = hindsight_engine::signals::signal_name(n);
        say!(
            c,
            "{name:<14}{}\t{}\t{}\t\t{desc}",
            yes(s.signal_stops(n)),
            yes(s.signal_prints(n)),
            yes(s.signal_passes(n))
        );
    }
}

/// `info signals [SIG]` (also `info handle`): the table of what each signal does.
pub(crate) fn info_signals(s: &mut Session, c: &mut Console, args: &str) -> anyhow::Result<()> {
    let a = args.trim();
    if !a.is_empty() {
        let Some(n) = hindsight_engine::signals::signal_number(a) else {
            anyhow::bail!("Only signals 1-15 are valid as numeric signals.\nUse \"info signals\" for a list of symbolic signals.");
        };
        print_signal_table(s, c, &[n]);
        return Ok(());
    }
    let all: Vec<i32> = (1..=31).collect();
    print_signal_table(s, c, &all);
    say!(c, "");
    say!(c, "Use the \"handle\" command to change these tables.");
    Ok(())
}
