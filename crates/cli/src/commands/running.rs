//! Commands that move the program: run, start, continue, step, next, stepi, nexti, finish,
//! until, advance, kill, quit.

use anyhow::bail;
use hindsight_control::Resume;

use crate::session::Session;
use crate::stepping::{self, LineStep};

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

pub(crate) fn run(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    // `run ARGS` replaces the program's arguments (for this and later runs), as in gdb.
    let new_args: Vec<std::ffi::OsString> = args.split_whitespace().map(Into::into).collect();
    if !new_args.is_empty() && new_args != s.args {
        s.args = new_args;
        s.kill();
        s.spawn()?;
    }
    if s.started || !alive(s) {
        // Like gdb's `run` on a program that already ran: start it again.
        s.kill();
        s.spawn()?;
    }
    let args: Vec<String> = s
        .args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    println!(
        "Starting program: {} {}",
        s.program.display(),
        args.join(" ")
    );
    s.resume(Resume::Continue)?;
    Ok(())
}

pub(crate) fn start(s: &mut Session, args: &str, f: Option<&str>) -> anyhow::Result<()> {
    // A program without `main` (stripped, or not C) starts at its entry point.
    match s.symbols.entry_point() {
        Some(entry) if s.symbols.lookup_functions("main").is_empty() => {
            super::breakpoints::tbreak(s, &format!("*{entry:#x}"), None)?
        }
        _ => super::breakpoints::tbreak(s, "main", None)?,
    }
    run(s, args, f)
}

pub(crate) fn continue_(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    s.live()?;
    // `continue N`: ignore the breakpoint that stopped us N-1 more times.
    let n = count(args)?;
    if n > 1 {
        if let Some(num) = s.last_breakpoint() {
            if let Some(bp) = s.breakpoints.get_mut(num) {
                bp.ignore_count = (n - 1) as u32;
                println!(
                    "Will ignore next {} crossings of breakpoint {num}.  Continuing.",
                    n - 1
                );
            }
        }
    } else {
        println!("Continuing.");
    }
    s.resume(Resume::Continue)?;
    Ok(())
}

fn repeat(
    s: &mut Session,
    args: &str,
    mut one: impl FnMut(&mut Session) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    s.live()?;
    // `next 3`: gdb shows only where the last step ends; a breakpoint, a signal or the end
    // of the program on the way is reported and ends the count.
    let n = count(args)?;
    let mut result = Ok(());
    for i in 0..n {
        s.quiet_steps = i + 1 < n;
        result = one(s);
        if result.is_err() || !alive(s) || !s.stepped_cleanly {
            break;
        }
    }
    s.quiet_steps = false;
    result
}

pub(crate) fn step(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    repeat(s, args, |s| stepping::line_step(s, LineStep::Step))
}

pub(crate) fn next(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    repeat(s, args, |s| stepping::line_step(s, LineStep::Next))
}

pub(crate) fn stepi(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    repeat(s, args, |s| stepping::instruction_step(s, false))
}

pub(crate) fn nexti(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    repeat(s, args, |s| stepping::instruction_step(s, true))
}

pub(crate) fn finish(s: &mut Session, _args: &str, _: Option<&str>) -> anyhow::Result<()> {
    stepping::finish(s)
}

pub(crate) fn until(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    if args.trim().is_empty() {
        s.live()?;
        return stepping::line_step(s, LineStep::Until);
    }
    advance(s, args, None)
}

pub(crate) fn advance(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    s.live()?;
    if args.trim().is_empty() {
        bail!("Argument required (a location).");
    }
    let loc = super::breakpoints::resolve_location(s, args.trim())?;
    stepping::run_to_location(s, &loc.addresses)
}

pub(crate) fn kill(s: &mut Session, _args: &str, _: Option<&str>) -> anyhow::Result<()> {
    let pid = s.live()?.pid();
    s.kill();
    println!("[Inferior 1 (process {pid}) killed]");
    Ok(())
}

pub(crate) fn quit(s: &mut Session, _args: &str, _: Option<&str>) -> anyhow::Result<()> {
    s.kill();
    s.quit = true;
    Ok(())
}

/// `handle SIGNAL... [no]stop|[no]print|[no]pass`: whether the signal stops the program, as
/// gdb's command (print follows stop; a signal is always passed to the program).
pub(crate) fn handle(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
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
            w => match crate::report::signal_number(w) {
                Some(n) => signals.push(n),
                None => anyhow::bail!("Unrecognized or ambiguous flag word: \"{w}\"."),
            },
        }
    }
    if signals.is_empty() {
        anyhow::bail!("Argument required (signal for which to change handling).");
    }
    for n in &signals {
        let mut h = signal_handling(s, *n);
        if let Some(v) = stop {
            h.stop = v;
            // Stopping means saying so.
            h.print |= v;
        }
        if let Some(v) = print {
            h.print = v;
        }
        if let Some(v) = pass {
            h.pass = v;
        }
        s.signal_stops.insert(*n, h.stop);
        s.signal_print.insert(*n, h.print);
        s.signal_pass.insert(*n, h.pass);
    }
    print_signal_table(s, &signals);
    Ok(())
}

/// How a signal is handled (gdb's table, as changed by `handle`).
pub(crate) struct Handling {
    pub stop: bool,
    pub print: bool,
    pub pass: bool,
}

pub(crate) fn signal_handling(s: &Session, n: i32) -> Handling {
    let stop = s
        .signal_stops
        .get(&n)
        .copied()
        .unwrap_or_else(|| hindsight_control::stops_by_default(n));
    Handling {
        stop,
        print: s.signal_print.get(&n).copied().unwrap_or(stop),
        // gdb keeps SIGTRAP and SIGINT from the program by default.
        pass: s
            .signal_pass
            .get(&n)
            .copied()
            .unwrap_or(n != libc::SIGTRAP && n != libc::SIGINT),
    }
}

fn print_signal_table(s: &Session, signals: &[i32]) {
    println!("Signal        Stop\tPrint\tPass to program\tDescription");
    let yes = |b: bool| if b { "Yes" } else { "No" };
    for &n in signals {
        let h = signal_handling(s, n);
        let (name, desc) = crate::report::signal_name(n);
        println!(
            "{name:<14}{}\t{}\t{}\t\t{desc}",
            yes(h.stop),
            yes(h.print),
            yes(h.pass)
        );
    }
}

/// `info signals [SIG]` (also `info handle`): the table of what each signal does.
pub(crate) fn info_signals(s: &mut Session, args: &str) -> anyhow::Result<()> {
    let a = args.trim();
    if !a.is_empty() {
        let Some(n) = crate::report::signal_number(a) else {
            anyhow::bail!("Only signals 1-15 are valid as numeric signals.\nUse \"info signals\" for a list of symbolic signals.");
        };
        print_signal_table(s, &[n]);
        return Ok(());
    }
    let all: Vec<i32> = (1..=31).collect();
    print_signal_table(s, &all);
    println!();
    println!("Use the \"handle\" command to change these tables.");
    Ok(())
}
