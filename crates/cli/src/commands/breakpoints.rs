//! Breakpoint and watchpoint commands: break, tbreak, watch, rwatch, awatch, delete, disable,
//! enable, condition, ignore, info breakpoints — gdb's syntax (`LOCATION if COND`, an era
//! `from T1 to T2`, number lists `1 3 5-7`) over the engine's breakpoints.

use anyhow::bail;
use hindsight_engine::breakpoints::{Era, NewBreakpoint};
use hindsight_engine::inferiors::BreakpointRow;
use hindsight_engine::{BreakpointKind, Session, WatchAccess};
use hindsight_timeline::Moment;

use crate::console::{say, Console};

/// Splits `LOCATION if COND`.
fn split_condition(args: &str) -> (&str, Option<&str>) {
    let a = args.trim();
    if let Some(c) = a.strip_prefix("if ").or_else(|| a.strip_prefix("if(")) {
        let c = if a.starts_with("if(") { &a[2..] } else { c };
        return ("", Some(c.trim()));
    }
    match a.find(" if ").or_else(|| a.find(" if(")) {
        Some(i) => (a[..i].trim(), Some(a[i + 3..].trim())),
        None => (a, None),
    }
}

/// `Breakpoint 1 at 0x401136: file t.c, line 5.` (or `… (2 locations)`, or without a line).
fn announce(c: &mut Console, what: &str, location: &str, b: &NewBreakpoint) {
    let n = b.number;
    let first = b.addresses[0];
    if b.addresses.len() > 1 {
        say!(
            c,
            "{what} {n} at {first:#x}: {location}. ({} locations)",
            b.addresses.len()
        );
    } else {
        match &b.line {
            Some(l) => say!(
                c,
                "{what} {n} at {first:#x}: file {}, line {}.",
                l.name,
                l.line
            ),
            None => say!(c, "{what} {n} at {first:#x}"),
        }
    }
}

/// Whether an unresolved location becomes a pending breakpoint: `set breakpoint pending`,
/// or gdb's question (answered no when the input is not a terminal).
fn pending_wanted(c: &mut Console, e: &anyhow::Error) -> bool {
    let text = e.to_string();
    if !(text.starts_with("Function \"") || text.starts_with("No source file named")) {
        return false;
    }
    match c.breakpoint_pending {
        Some(on) => on,
        None => {
            use std::io::IsTerminal;
            let q = "Make breakpoint pending on future shared library load? (y or [n])";
            if !std::io::stdin().is_terminal() {
                say!(c, "{q} [answered N; input not from terminal]");
                return false;
            }
            c.print(&format!("{q} "));
            let mut answer = String::new();
            let _ = std::io::stdin().read_line(&mut answer);
            matches!(answer.trim(), "y" | "Y" | "yes")
        }
    }
}

/// Sets a breakpoint: in a replayed tree, in every inferior.
fn set_breakpoint(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    temporary: bool,
) -> anyhow::Result<u32> {
    set_breakpoint_in(s, c, args, temporary, true)
}

/// Sets a breakpoint (`everywhere`: in every inferior of a replayed tree, as gdb's `break`
/// without `inferior N`).
fn set_breakpoint_in(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    temporary: bool,
    everywhere: bool,
) -> anyhow::Result<u32> {
    let (loc_text, cond) = split_condition(args);
    let (loc_text, era) = split_era(s, loc_text)?;
    let default_file = c.default_file().map(|p| p.to_path_buf());
    let what = if temporary {
        "Temporary breakpoint"
    } else {
        "Breakpoint"
    };
    let everywhere = everywhere && era.is_none() && s.has_inferiors();
    let added = if everywhere {
        s.add_breakpoint_everywhere(loc_text, default_file.as_deref(), temporary, cond)
    } else {
        s.add_breakpoint(loc_text, default_file.as_deref(), temporary, cond, era)
    };
    let b = match added {
        Ok(b) => b,
        // A function or file that a library loaded later may bring: gdb's pending
        // breakpoint, resolved when the loader reports a new library.
        Err(e) if era.is_none() && !loc_text.starts_with('*') && pending_wanted(c, &e) => {
            say!(c, "{e}");
            let n = if everywhere {
                s.add_pending_breakpoint_everywhere(loc_text, temporary, cond)?
            } else {
                s.add_pending_breakpoint(loc_text, temporary, cond)?
            };
            say!(c, "{what} {n} ({loc_text}) pending.");
            return Ok(n);
        }
        Err(e) => return Err(e),
    };
    announce(c, what, loc_text, &b);
    Ok(b.number)
}

/// `LOCATION inferior N REST` split as (LOCATION, N, REST), when the words say so.
fn inferior_clause(args: &str) -> Option<(&str, &str, &str)> {
    // Before a condition only (`if` starts an expression, which may say anything).
    let head = args.find(" if ").map_or(args, |i| &args[..i]);
    let at = head.find(" inferior ")?;
    let (location, after) = (&args[..at], &args[at + " inferior ".len()..]);
    let after = after.trim_start();
    let end = after.find(char::is_whitespace).unwrap_or(after.len());
    Some((location.trim(), &after[..end], after[end..].trim()))
}

pub(crate) fn break_(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    // `break LOCATION inferior N [if COND]`: in process N of a replayed tree alone (each
    // process of a tree has its own breakpoints: a plain `break` sets one in the current).
    if let Some((location, n, rest)) = inferior_clause(args) {
        let Ok(n) = n.parse::<u32>() else {
            anyhow::bail!("Invalid inferior ID \"{n}\".");
        };
        let back = s.inferior_number();
        if back != Some(n) {
            s.switch_inferior(n)?;
        }
        let r = set_breakpoint_in(s, c, &format!("{location} {rest}"), false, false).map(|_| ());
        if let Some(back) = back.filter(|b| *b != n) {
            s.switch_inferior(back)?;
        }
        return r;
    }
    // `break message FROM TO [N]`: before process TO receives the N-th message from FROM.
    if let Some(rest) = args.trim().strip_prefix("message ") {
        let words: Vec<&str> = rest.split_whitespace().collect();
        let number = |w: &str| {
            w.parse::<i64>().map_err(|_| {
                anyhow::anyhow!("Invalid process \"{w}\" (a pid or an inferior number).")
            })
        };
        let (from, to, n) = match words.as_slice() {
            [from, to] => (number(from)?, number(to)?, 1),
            [from, to, n] => (
                number(from)?,
                number(to)?,
                n.parse::<u64>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| anyhow::anyhow!("Invalid message number \"{n}\"."))?,
            ),
            _ => anyhow::bail!("Usage: break message FROM TO [N]"),
        };
        let (Ok(from), Ok(to)) = (i32::try_from(from), i32::try_from(to)) else {
            anyhow::bail!("Invalid process number.");
        };
        let (id, m, to, event) = s.break_at_message(from, to, n)?;
        say!(
            c,
            "Quantum event {id}: stop before process {to} receives message {n} from process {} (its event {})",
            m.send.pid,
            event
        );
        return Ok(());
    }
    // `break event N`: a quantum event (stop when the replay reaches event N).
    if let Some(n) = args.trim().strip_prefix("event ") {
        let n: u64 = n
            .trim()
            .parse()
            .map_err(|_| anyhow::anyhow!("Invalid event number \"{}\".", n.trim()))?;
        let id = s.break_at_event(n)?;
        say!(c, "Quantum event {id}: stop at event {n}");
        return Ok(());
    }
    // `break tick N [thread M]`: a quantum event in the instruction counter's time.
    if let Some(rest) = args.trim().strip_prefix("tick ") {
        let mut words = rest.split_whitespace();
        let n = words.next().unwrap_or("");
        let ticks: u64 = n
            .parse()
            .map_err(|_| anyhow::anyhow!("Invalid tick count \"{n}\"."))?;
        let thread = match (words.next(), words.next(), words.next()) {
            (None, _, _) => None,
            (Some("thread"), Some(m), None) => Some(
                m.parse::<u32>()
                    .map_err(|_| anyhow::anyhow!("Invalid thread ID: {m}"))?,
            ),
            _ => anyhow::bail!("Usage: break tick N [thread M]"),
        };
        let (id, num) = s.break_at_tick(ticks, thread)?;
        say!(
            c,
            "Quantum event {id}: stop at tick {ticks} of thread {num}"
        );
        return Ok(());
    }
    set_breakpoint(s, c, args, false).map(|_| ())
}

pub(crate) fn tbreak(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    set_breakpoint(s, c, args, true).map(|_| ())
}

/// `dprintf LOCATION,"FORMAT",ARGS…`: a breakpoint that prints and goes on (LOCATION may
/// carry a condition and an era as `break`'s does).
pub(crate) fn dprintf(
    s: &mut Session,
    c: &mut Console,
    location: &str,
    format: String,
    args: Vec<String>,
) -> anyhow::Result<()> {
    let (loc_text, cond) = split_condition(location);
    let (loc_text, era) = split_era(s, loc_text)?;
    let default_file = c.default_file().map(|p| p.to_path_buf());
    // In a replayed tree, in every inferior, as `break` (an era is one process's times).
    let b = if era.is_none() && s.has_inferiors() {
        s.add_dprintf_everywhere(loc_text, default_file.as_deref(), cond, (format, args))?
    } else {
        s.add_dprintf(loc_text, default_file.as_deref(), cond, era, (format, args))?
    };
    announce(c, "Dprintf", loc_text, &b);
    Ok(())
}

/// Splits `LOCATION from T1 to T2` (an era given by events: the breakpoint applies from event
/// T1, up to but not including event T2; either bound may be left out) or `LOCATION era NAME`
/// (a named era, see `era`).
fn split_era<'a>(s: &Session, loc: &'a str) -> anyhow::Result<(&'a str, Option<Era>)> {
    let words: Vec<&str> = loc.split_whitespace().collect();
    if let Some(i) = words.iter().position(|w| *w == "era") {
        let [name] = words[i + 1..] else {
            bail!("usage: break LOCATION era NAME");
        };
        let cut = loc.rfind(" era ").unwrap_or(0);
        return Ok((loc[..cut].trim(), Some(s.era_bounds(name)?)));
    }
    let Some(i) = words.iter().position(|w| *w == "from" || *w == "to") else {
        return Ok((loc, None));
    };
    let cut = loc
        .find(&format!(" {} ", words[i]))
        .or_else(|| loc.find(&format!(" {}", words[i])))
        .unwrap_or(0);
    let (mut from, mut to) = (0u64, None);
    let mut rest = words[i..].iter();
    while let Some(w) = rest.next() {
        let v = rest
            .next()
            .and_then(|t| t.parse::<u64>().ok())
            .ok_or_else(|| anyhow::anyhow!("usage: break LOCATION from EVENT to EVENT"))?;
        match *w {
            "from" => from = v,
            "to" => to = Some(v),
            _ => bail!("usage: break LOCATION from EVENT to EVENT"),
        }
    }
    if to.is_some_and(|t| t <= from) {
        bail!(
            "An era must end after it starts (from {from} to {}).",
            to.unwrap_or(0)
        );
    }
    Ok((
        loc[..cut].trim(),
        Some((Moment::event(from), to.map(Moment::event))),
    ))
}

fn set_watchpoint(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    access: WatchAccess,
) -> anyhow::Result<()> {
    let (expr, cond) = split_condition(args);
    // `watch EXPR era NAME`: an era watchpoint (only `era`: `from`/`to` may be names in EXPR).
    let (expr, era) = match expr.rsplit_once(" era ") {
        Some((e, name)) if !name.trim().contains(char::is_whitespace) => {
            (e.trim(), Some(s.era_bounds(name.trim())?))
        }
        _ => (expr, None),
    };
    let n = s.add_watchpoint(expr, access, cond)?;
    if let Some(era) = era {
        s.set_era(n, era)?;
    }
    say!(c, "{} {n}: {expr}", crate::report::watch_title(access));
    Ok(())
}

pub(crate) fn watch(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    set_watchpoint(s, c, args, WatchAccess::Write)
}

pub(crate) fn rwatch(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    set_watchpoint(s, c, args, WatchAccess::Read)
}

pub(crate) fn awatch(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    set_watchpoint(s, c, args, WatchAccess::Access)
}

/// Parses breakpoint numbers (`1 3`, `2-4`); none means all.
fn numbers(s: &Session, args: &str) -> anyhow::Result<Vec<u32>> {
    let a = args.trim();
    let a = a.strip_prefix("breakpoints").unwrap_or(a).trim();
    if a.is_empty() {
        return Ok(s.breakpoint_table().iter().map(|b| b.number).collect());
    }
    let mut out = Vec::new();
    for word in a.split_whitespace() {
        if let Some((x, y)) = word.split_once('-') {
            let (Ok(x), Ok(y)) = (x.parse::<u32>(), y.parse::<u32>()) else {
                bail!("Convenience variable must have integer value.\nArgs must be numbers or '$' variables.");
            };
            out.extend(x..=y);
        } else {
            match word.parse::<u32>() {
                Ok(n) => out.push(n),
                Err(_) => bail!("Convenience variable must have integer value.\nArgs must be numbers or '$' variables."),
            }
        }
    }
    Ok(out)
}

pub(crate) fn delete(
    s: &mut Session,
    _: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    if let Some(rest) = args.trim().strip_prefix("checkpoint") {
        let n: u32 = rest
            .trim()
            .parse()
            .map_err(|_| anyhow::anyhow!("Argument required (checkpoint id to delete)."))?;
        return s.delete_checkpoint(n);
    }
    if let Some(rest) = args.trim().strip_prefix("era ") {
        return s.delete_era(rest);
    }
    if let Some(rest) = args.trim().strip_prefix("bookmark") {
        return s.delete_bookmark(rest);
    }
    let mut failed = None;
    for n in numbers(s, args)? {
        if let Err(e) = s.delete_breakpoint(n) {
            failed = Some(e);
        }
    }
    failed.map_or(Ok(()), Err)
}

fn set_enabled(s: &mut Session, args: &str, enabled: bool) -> anyhow::Result<()> {
    let a = args.trim();
    if ["once", "count", "delete"].iter().any(|w| a.starts_with(w)) {
        bail!("\"enable {a}\" is not supported yet: use tbreak or ignore.");
    }
    let list = numbers(s, a)?;
    s.set_breakpoints_enabled(&list, enabled)
}

pub(crate) fn enable(
    s: &mut Session,
    _: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    set_enabled(s, args, true)
}

pub(crate) fn disable(
    s: &mut Session,
    _: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    set_enabled(s, args, false)
}

pub(crate) fn condition(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    let a = args.trim();
    if a.is_empty() {
        bail!("Argument required (breakpoint number).");
    }
    let (num, cond) = a.split_once(char::is_whitespace).unwrap_or((a, ""));
    let Ok(n) = num.parse::<u32>() else {
        bail!("Bad breakpoint argument: '{num}'");
    };
    let cond = cond.trim();
    s.set_condition(n, (!cond.is_empty()).then_some(cond))?;
    if cond.is_empty() {
        say!(c, "Breakpoint {n} now unconditional.");
    }
    Ok(())
}

pub(crate) fn ignore(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    let mut it = args.split_whitespace();
    let (Some(num), Some(count)) = (it.next(), it.next()) else {
        bail!("Argument required (a breakpoint number).");
    };
    let Ok(n) = num.parse::<u32>() else {
        bail!("Bad breakpoint argument: '{num}'");
    };
    let Ok(count) = count.parse::<u32>() else {
        bail!("Invalid number \"{count}\".");
    };
    s.set_ignore_count(n, count)?;
    match count {
        0 => say!(c, "Will stop next time breakpoint {n} is reached."),
        1 => say!(c, "Will ignore next crossing of breakpoint {n}."),
        k => say!(c, "Will ignore next {k} crossings of breakpoint {n}."),
    }
    Ok(())
}

pub(crate) fn info_breakpoints(
    s: &mut Session,
    c: &mut Console,
    watch_only: bool,
) -> anyhow::Result<()> {
    let rows: Vec<BreakpointRow> = s
        .breakpoint_rows()?
        .into_iter()
        .filter(|r| !watch_only || matches!(r.breakpoint.kind, BreakpointKind::Watchpoint { .. }))
        .collect();
    if rows.is_empty() {
        if watch_only {
            say!(c, "No watchpoints.");
        } else {
            say!(c, "No breakpoints or watchpoints.");
        }
        return Ok(());
    }
    // The Type column grows to its longest entry ("read watchpoint"), as gdb's table does.
    let type_width = rows
        .iter()
        .map(|r| match &r.breakpoint.kind {
            BreakpointKind::Breakpoint => "breakpoint".len(),
            BreakpointKind::Watchpoint { access, .. } => type_name(*access).len(),
        })
        .max()
        .unwrap_or(0)
        .max(14);
    // The Address column is as wide as its widest entry (`<PENDING>` alone: narrow).
    let addr_width = if rows.iter().all(|r| {
        r.breakpoint.kind == BreakpointKind::Breakpoint
            && r.breakpoint.locations.is_empty()
            && r.shared.as_ref().is_none_or(|l| l.is_empty())
    }) {
        11
    } else {
        19
    };
    say!(
        c,
        "Num     {:<w$} Disp Enb {:<aw$}What",
        "Type",
        "Address",
        w = type_width,
        aw = addr_width
    );
    for row in rows {
        // The replay that holds it: its symbols name its addresses.
        let owner = row
            .inferior
            .and_then(|n| s.inferior_session(n))
            .unwrap_or(s);
        // With several inferiors gdb says whose a location is.
        let whose = |n: Option<u32>| n.map(|n| format!(" inf {n}")).unwrap_or_default();
        let b = &row.breakpoint;
        let disp = if b.temporary { "del" } else { "keep" };
        let enb = if b.enabled { "y" } else { "n" };
        // A breakpoint of every inferior: gdb's breakpoint with a location in each.
        let locations: Vec<(Option<u32>, u64)> = match &row.shared {
            Some(l) => l.iter().map(|(n, a)| (Some(*n), *a)).collect(),
            None => b.locations.iter().map(|a| (row.inferior, *a)).collect(),
        };
        match &b.kind {
            BreakpointKind::Breakpoint => {
                let dprintf = owner
                    .dprintf_of(b.number)
                    .map(|(f, a)| (f.to_string(), a.to_vec()));
                let (address, what) = match locations.as_slice() {
                    [] => ("<PENDING>".to_string(), b.spec.clone()),
                    [(n, addr)] => {
                        let at = n.and_then(|n| s.inferior_session(n)).unwrap_or(owner);
                        (
                            format!("{addr:#018x}"),
                            format!("{}{}", describe(at, *addr), whose(*n)),
                        )
                    }
                    _ => ("<MULTIPLE>".to_string(), String::new()),
                };
                say!(
                    c,
                    "{:<8}{:<w$} {disp:<5}{enb:<4}{:<aw$}{}",
                    b.number,
                    if dprintf.is_some() {
                        "dprintf"
                    } else {
                        "breakpoint"
                    },
                    address,
                    what,
                    w = type_width,
                    aw = addr_width
                );
                // gdb lists what a dprintf prints, and when an era breakpoint applies.
                if let Some((format, args)) = dprintf {
                    let mut line = format!("{format:?}");
                    for a in args {
                        line.push(',');
                        line.push_str(&a);
                    }
                    say!(c, "        printf {line}");
                }
                match owner.era_of(b.number) {
                    Some((from, Some(to))) => say!(c, "\tonly from {from} to {to}"),
                    Some((from, None)) => say!(c, "\tonly from {from}"),
                    None => {}
                }
            }
            BreakpointKind::Watchpoint { access, expr, .. } => {
                // (A watchpoint watches one inferior's memory, as gdb's.)
                say!(
                    c,
                    "{:<8}{:<w$} {disp:<5}{enb:<4}{:<19}{expr}{}",
                    b.number,
                    type_name(*access),
                    "",
                    whose(row.inferior),
                    w = type_width
                );
                match owner.era_of(b.number) {
                    Some((from, Some(to))) => say!(c, "\tonly from {from} to {to}"),
                    Some((from, None)) => say!(c, "\tonly from {from}"),
                    None => {}
                }
            }
        }
        if let Some(cond) = &b.condition {
            say!(c, "\tstop only if {cond}");
        }
        match b.hit_count {
            0 => {}
            1 => say!(c, "\tbreakpoint already hit 1 time"),
            n => say!(c, "\tbreakpoint already hit {n} times"),
        }
        if b.ignore_count > 0 {
            say!(c, "\tignore next {} hits", b.ignore_count);
        }
        // One row per location of a breakpoint with several (inlined copies, a line in
        // several functions, every inferior of a replayed tree).
        if locations.len() > 1 && matches!(b.kind, BreakpointKind::Breakpoint) {
            for (k, (n, a)) in locations.iter().enumerate() {
                let at = n.and_then(|n| s.inferior_session(n)).unwrap_or(owner);
                let num = format!("{}.{}", b.number, k + 1);
                say!(
                    c,
                    "{num:<8}{:<w$} {:<5}{enb:<4}{:<19}{}{}",
                    "",
                    "",
                    format!("{a:#018x}"),
                    describe(at, *a),
                    whose(*n),
                    w = type_width
                );
            }
        }
    }
    Ok(())
}

/// The Type column of a watchpoint.
fn type_name(access: WatchAccess) -> &'static str {
    match access {
        WatchAccess::Write => "hw watchpoint",
        WatchAccess::Read => "read watchpoint",
        WatchAccess::Access => "acc watchpoint",
    }
}

/// `in f at t.c:5`, or `<f+4>` without line information.
fn describe(s: &Session, addr: u64) -> String {
    let symbols = s.symbols();
    let f = symbols.function_at(addr);
    // Inside inlined code, the inlined function; C++ functions by their full signature.
    let inlined = symbols.inline_names(addr).into_iter().next();
    match (&f, symbols.line_at(addr)) {
        (Some(func), Some(l)) if func.has_debug_info => {
            let name = inlined
                .unwrap_or_else(|| func.signature.clone().unwrap_or_else(|| func.name.clone()));
            format!("in {name} at {}:{}", l.name.clone(), l.line)
        }
        (Some(func), _) => format!("<{}+{}>", func.name, addr - func.low),
        _ => String::new(),
    }
}
