//! Breakpoint and watchpoint commands: break, tbreak, watch, rwatch, awatch, delete, disable,
//! enable, condition, ignore, info breakpoints; and locations (`FUNCTION`, `FILE:LINE`,
//! `LINE`, `*ADDRESS`).

use anyhow::{bail, Context as _};
use hindsight_breakpoints::debugreg;
use hindsight_breakpoints::table::{Breakpoint, BreakpointKind, WatchAccess};
use hindsight_control::DebugRegs;

use crate::context;
use crate::report;
use crate::session::Session;

/// What a location argument resolved to.
pub(crate) struct Location {
    /// Where the int3s go.
    pub addresses: Vec<u64>,
}

/// Resolves a gdb location: `FUNCTION`, `FILE:LINE`, `FILE:FUNCTION`, `LINE`, `*EXPR`.
pub(crate) fn resolve_location(s: &mut Session, text: &str) -> anyhow::Result<Location> {
    let text = text.trim();
    if let Some(expr) = text.strip_prefix('*') {
        let addr = context::evaluate_address(s, expr.trim())?;
        return Ok(Location {
            addresses: vec![addr],
        });
    }
    if let Ok(line) = text.parse::<u32>() {
        let file =
            default_file(s).context("No symbol table is loaded.  Use the \"file\" command.")?;
        let addresses = s
            .symbols
            .resolve_line(&file.to_string_lossy(), line)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        return Ok(Location { addresses });
    }
    // FILE:LINE or FILE:FUNCTION (a Rust path `a::b` is a function name, not a file).
    if let Some(i) = text.rfind(':') {
        let is_path_sep = text[..i].ends_with(':') || text[i + 1..].starts_with(':');
        if !is_path_sep {
            let (file, what) = (&text[..i], &text[i + 1..]);
            if let Ok(line) = what.trim().parse::<u32>() {
                let addresses = s
                    .symbols
                    .resolve_line(file.trim(), line)
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                return Ok(Location { addresses });
            }
            return function_location(s, what.trim());
        }
    }
    function_location(s, text)
}

fn function_location(s: &Session, name: &str) -> anyhow::Result<Location> {
    let funcs = s.symbols.lookup_functions(name);
    if funcs.is_empty() {
        bail!("Function \"{name}\" not defined.");
    }
    let mut addresses: Vec<u64> = funcs.iter().map(|f| f.breakpoint_addr).collect();
    addresses.sort_unstable();
    addresses.dedup();
    Ok(Location { addresses })
}

/// The file a bare line number refers to: where the program last stopped, else main's file.
fn default_file(s: &Session) -> Option<std::path::PathBuf> {
    if let Some((f, _)) = &s.list_center {
        return Some(f.clone());
    }
    let main = s.symbols.lookup_functions("main").into_iter().next()?;
    s.symbols.line_at(main.low).map(|l| l.file)
}

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

fn set_breakpoint(
    s: &mut Session,
    args: &str,
    temporary: bool,
    title: Option<&str>,
) -> anyhow::Result<u32> {
    let (loc_text, cond) = split_condition(args);
    let (loc_text, era) = split_era(loc_text)?;
    if era.is_some() && s.replay.is_none() {
        bail!("An era breakpoint (from/to) needs a recording: times are replay events.");
    }
    let addresses = if loc_text.is_empty() {
        let f = s.selected_frame()?;
        vec![report::lookup_pc(&f, s.frame)]
    } else {
        match resolve_location(s, loc_text) {
            Ok(loc) => loc.addresses,
            // A function or file that a library loaded later may bring: gdb's pending
            // breakpoint, resolved when the loader reports a new library.
            Err(e) if !loc_text.starts_with('*') && pending_wanted(s, &e)? => {
                println!("{e}");
                Vec::new()
            }
            Err(e) => return Err(e),
        }
    };
    if let Some(c) = cond {
        // A condition that does not parse is refused up front, as gdb does.
        context::check_syntax(c)?;
    }
    if let Some(inf) = s.inferior.as_mut().filter(|i| i.is_alive()) {
        for (i, &a) in addresses.iter().enumerate() {
            if let Err(e) = inf.insert_site(a) {
                for &b in &addresses[..i] {
                    let _ = inf.remove_site(b);
                }
                bail!("{e}");
            }
        }
    }
    let n = s.breakpoints.add_breakpoint(
        loc_text.to_string(),
        addresses.clone(),
        temporary,
        cond.map(str::to_string),
    );
    if let Some((from, to)) = era {
        s.travel.engine.add(
            hindsight_timeline::Spec::Era {
                breakpoint: n,
                from,
                to,
            },
            hindsight_timeline::Action::Stop,
            false,
        );
    }
    let what = match title {
        Some(t) => t,
        None if temporary => "Temporary breakpoint",
        None => "Breakpoint",
    };
    let Some(&first) = addresses.first() else {
        println!("{what} {n} ({loc_text}) pending.");
        watch_library_loads(s);
        return Ok(n);
    };
    if addresses.len() > 1 {
        println!(
            "{what} {n} at {first:#x}: {loc_text}. ({} locations)",
            addresses.len()
        );
    } else {
        match s.symbols.line_at(first) {
            Some(l)
                if s.symbols
                    .function_at(first)
                    .map(|f| f.has_debug_info)
                    .unwrap_or(false) =>
            {
                println!(
                    "{what} {n} at {first:#x}: file {}, line {}.",
                    l.name.clone(),
                    l.line
                )
            }
            _ => println!("{what} {n} at {first:#x}"),
        }
    }
    Ok(n)
}

/// Whether an unresolved location becomes a pending breakpoint: `set breakpoint pending`,
/// or gdb's question (answered no when the input is not a terminal).
fn pending_wanted(s: &Session, e: &anyhow::Error) -> anyhow::Result<bool> {
    let text = e.to_string();
    if !(text.starts_with("Function \"") || text.starts_with("No source file named")) {
        return Ok(false);
    }
    match s.breakpoint_pending {
        Some(on) => Ok(on),
        None => {
            use std::io::IsTerminal;
            let q = "Make breakpoint pending on future shared library load? (y or [n])";
            if !std::io::stdin().is_terminal() {
                println!("{q} [answered N; input not from terminal]");
                return Ok(false);
            }
            print!("{q} ");
            let _ = std::io::Write::flush(&mut std::io::stdout());
            let mut answer = String::new();
            let _ = std::io::stdin().read_line(&mut answer);
            Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
        }
    }
}

/// Plants the trap where the dynamic loader reports library loads (its `_dl_debug_state`,
/// as gdb does through `r_brk`), while pending breakpoints wait for a library.
pub(crate) fn watch_library_loads(s: &mut Session) {
    let pending = s
        .breakpoints
        .iter()
        .any(|b| b.kind == BreakpointKind::Breakpoint && b.locations.is_empty());
    if !pending {
        return;
    }
    let Some(addr) = s
        .symbols
        .lookup_functions("_dl_debug_state")
        .first()
        .map(|f| f.low)
    else {
        return;
    };
    if let Some(inf) = s.inferior.as_mut().filter(|i| i.is_alive()) {
        if s.library_event != Some(addr) && inf.insert_site(addr).is_ok() {
            s.library_event = Some(addr);
        }
    }
}

/// Resolves the pending breakpoints that the libraries loaded now define, and plants them.
pub(crate) fn resolve_pending(s: &mut Session) {
    let pending: Vec<(u32, String)> = s
        .breakpoints
        .iter()
        .filter(|b| b.kind == BreakpointKind::Breakpoint && b.locations.is_empty())
        .map(|b| (b.number, b.spec.clone()))
        .collect();
    for (n, spec) in pending {
        let (loc, _) = split_condition(&spec);
        let Ok(found) = resolve_location(s, loc) else {
            continue;
        };
        let enabled = s.breakpoints.get(n).map(|b| b.enabled).unwrap_or(false);
        if let Some(b) = s.breakpoints.get_mut(n) {
            b.locations = found.addresses.clone();
        }
        if enabled {
            if let Some(inf) = s.inferior.as_mut().filter(|i| i.is_alive()) {
                let left = inf.insert_sites_in_code(&found.addresses);
                s.pending_sites.extend(left);
            }
        }
    }
}

pub(crate) fn break_(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    // `break event N`: a quantum event (stop when the replay reaches event N).
    if let Some(n) = args.trim().strip_prefix("event ") {
        let n: u64 = n
            .trim()
            .parse()
            .map_err(|_| anyhow::anyhow!("Invalid event number \"{}\".", n.trim()))?;
        return crate::travel::break_at_event(s, n);
    }
    set_breakpoint(s, args, false, None).map(|_| ())
}

pub(crate) fn tbreak(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    set_breakpoint(s, args, true, None).map(|_| ())
}

/// A breakpoint announced as `what` (`Dprintf 3 at …`); returns its number.
pub(crate) fn add_plain_breakpoint(
    s: &mut Session,
    location: &str,
    what: &str,
) -> anyhow::Result<u32> {
    set_breakpoint(s, location, false, Some(what))
}

/// An era: from this event, up to that one (None: to the end).
type Era = (u64, Option<u64>);

/// Splits `LOCATION from T1 to T2` (an era: the breakpoint applies from event T1, up to but
/// not including event T2; either bound may be left out).
fn split_era(loc: &str) -> anyhow::Result<(&str, Option<Era>)> {
    let words: Vec<&str> = loc.split_whitespace().collect();
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
    Ok((loc[..cut].trim(), Some((from, to))))
}

fn set_watchpoint(s: &mut Session, args: &str, access: WatchAccess) -> anyhow::Result<()> {
    let (expr, cond) = split_condition(args);
    if expr.is_empty() {
        bail!("Argument required (expression to compute).");
    }
    s.live()?;
    let (address, len, bytes, ty) = context::watch_target(s, expr)?;
    // Everything already watched plus this one must fit in DR0–DR3.
    let mut ranges = watched_ranges(s);
    ranges.push((address, len, access));
    debugreg::allocate(&ranges).map_err(|e| anyhow::anyhow!("{e}"))?;
    let n = s.breakpoints.add_watchpoint(
        expr.to_string(),
        access,
        address,
        len,
        cond.map(str::to_string),
    );
    s.watch_values.insert(n, bytes);
    s.watch_types.insert(n, ty);
    apply_watchpoints(s)?;
    let title = match access {
        WatchAccess::Write => "Hardware watchpoint",
        WatchAccess::Read => "Hardware read watchpoint",
        WatchAccess::Access => "Hardware access (read/write) watchpoint",
    };
    println!("{title} {n}: {expr}");
    Ok(())
}

/// (address, length, access) of every enabled watchpoint, in number order.
fn watched_ranges(s: &Session) -> Vec<(u64, u64, WatchAccess)> {
    s.breakpoints
        .iter()
        .filter(|b| b.enabled)
        .filter_map(|b| match &b.kind {
            BreakpointKind::Watchpoint {
                access,
                address,
                len,
                ..
            } => Some((*address, *len, *access)),
            _ => None,
        })
        .collect()
}

/// Recomputes DR0–DR3/DR7 from the enabled watchpoints and loads them into every thread.
pub(crate) fn apply_watchpoints(s: &mut Session) -> anyhow::Result<()> {
    let numbers: Vec<u32> = s
        .breakpoints
        .iter()
        .filter(|b| b.enabled && matches!(b.kind, BreakpointKind::Watchpoint { .. }))
        .map(|b| b.number)
        .collect();
    let ranges = watched_ranges(s);
    let alloc = debugreg::allocate(&ranges).map_err(|e| anyhow::anyhow!("{e}"))?;
    s.breakpoints.set_watch_slots(
        alloc
            .slots
            .iter()
            .enumerate()
            .filter_map(|(slot, a)| a.map(|a| (slot as u8, numbers[a.range])))
            .collect(),
    );
    if let Some(inf) = s.inferior.as_mut().filter(|i| i.is_alive()) {
        inf.set_debug_registers(DebugRegs {
            addr: alloc.addresses(),
            dr7: alloc.dr7(),
        })
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    Ok(())
}

pub(crate) fn watch(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    set_watchpoint(s, args, WatchAccess::Write)
}

pub(crate) fn rwatch(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    set_watchpoint(s, args, WatchAccess::Read)
}

pub(crate) fn awatch(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    set_watchpoint(s, args, WatchAccess::Access)
}

/// Parses breakpoint numbers (`1 3`, `2-4`); none means all.
fn numbers(s: &Session, args: &str) -> anyhow::Result<Vec<u32>> {
    let a = args.trim();
    let a = a.strip_prefix("breakpoints").unwrap_or(a).trim();
    if a.is_empty() {
        return Ok(s.breakpoints.iter().map(|b| b.number).collect());
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

fn set_sites(s: &mut Session, bp: &Breakpoint, planted: bool) -> anyhow::Result<()> {
    if let Some(inf) = s.inferior.as_mut().filter(|i| i.is_alive()) {
        if let BreakpointKind::Breakpoint = bp.kind {
            for &a in &bp.locations {
                // A site still waiting for its code to be mapped has nothing to remove.
                if !planted {
                    if let Some(i) = s.pending_sites.iter().position(|&p| p == a) {
                        s.pending_sites.swap_remove(i);
                        continue;
                    }
                }
                let r = if planted {
                    inf.insert_site(a)
                } else {
                    inf.remove_site(a)
                };
                r.map_err(|e| anyhow::anyhow!("{e}"))?;
            }
        }
    }
    Ok(())
}

/// Deletes breakpoint `n`: its int3s leave memory before it leaves the table (seed 004).
pub(crate) fn delete_one(s: &mut Session, n: u32) -> anyhow::Result<()> {
    let Some(bp) = s.breakpoints.get(n).cloned() else {
        bail!("No breakpoint number {n}.");
    };
    if bp.enabled {
        set_sites(s, &bp, false)?;
    }
    s.breakpoints.delete(n);
    s.travel.engine.forget_breakpoint(n);
    s.watch_values.remove(&n);
    if matches!(bp.kind, BreakpointKind::Watchpoint { .. }) {
        apply_watchpoints(s)?;
    }
    Ok(())
}

pub(crate) fn delete(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    if let Some(rest) = args.trim().strip_prefix("checkpoint") {
        return crate::travel::delete_checkpoint(s, rest);
    }
    if let Some(rest) = args.trim().strip_prefix("bookmark") {
        return crate::travel::delete_bookmark(s, rest);
    }
    let mut failed = None;
    for n in numbers(s, args)? {
        if let Err(e) = delete_one(s, n) {
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
    let mut touched_watch = false;
    for n in numbers(s, a)? {
        let Some(bp) = s.breakpoints.get(n).cloned() else {
            bail!("No breakpoint number {n}.");
        };
        if bp.enabled != enabled {
            set_sites(s, &bp, enabled)?;
            if let Some(b) = s.breakpoints.get_mut(n) {
                b.enabled = enabled;
            }
            touched_watch |= matches!(bp.kind, BreakpointKind::Watchpoint { .. });
        }
    }
    if touched_watch {
        apply_watchpoints(s)?;
    }
    Ok(())
}

pub(crate) fn enable(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    set_enabled(s, args, true)
}

pub(crate) fn disable(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    set_enabled(s, args, false)
}

pub(crate) fn condition(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    let a = args.trim();
    if a.is_empty() {
        bail!("Argument required (breakpoint number).");
    }
    let (num, cond) = a.split_once(char::is_whitespace).unwrap_or((a, ""));
    let Ok(n) = num.parse::<u32>() else {
        bail!("Bad breakpoint argument: '{num}'");
    };
    let cond = cond.trim();
    if !cond.is_empty() {
        context::check_syntax(cond)?;
    }
    let Some(bp) = s.breakpoints.get_mut(n) else {
        bail!("No breakpoint number {n}.");
    };
    if cond.is_empty() {
        bp.condition = None;
        println!("Breakpoint {n} now unconditional.");
    } else {
        bp.condition = Some(cond.to_string());
    }
    Ok(())
}

pub(crate) fn ignore(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
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
    let Some(bp) = s.breakpoints.get_mut(n) else {
        bail!("No breakpoint number {n}.");
    };
    bp.ignore_count = count;
    match count {
        0 => println!("Will stop next time breakpoint {n} is reached."),
        1 => println!("Will ignore next crossing of breakpoint {n}."),
        c => println!("Will ignore next {c} crossings of breakpoint {n}."),
    }
    Ok(())
}

pub(crate) fn info_breakpoints(s: &mut Session, watch_only: bool) -> anyhow::Result<()> {
    let list: Vec<Breakpoint> = s
        .breakpoints
        .iter()
        .filter(|b| !watch_only || matches!(b.kind, BreakpointKind::Watchpoint { .. }))
        .cloned()
        .collect();
    if list.is_empty() {
        if watch_only {
            println!("No watchpoints.");
        } else {
            println!("No breakpoints or watchpoints.");
        }
        return Ok(());
    }
    // The Type column grows to its longest entry ("read watchpoint"), as gdb's table does.
    let type_width = list
        .iter()
        .map(|b| match &b.kind {
            BreakpointKind::Breakpoint => "breakpoint".len(),
            BreakpointKind::Watchpoint { access, .. } => type_name(*access).len(),
        })
        .max()
        .unwrap_or(0)
        .max(14);
    // The Address column is as wide as its widest entry (`<PENDING>` alone: narrow).
    let addr_width = if list
        .iter()
        .all(|b| b.kind == BreakpointKind::Breakpoint && b.locations.is_empty())
    {
        11
    } else {
        19
    };
    println!(
        "Num     {:<w$} Disp Enb {:<aw$}What",
        "Type",
        "Address",
        w = type_width,
        aw = addr_width
    );
    for b in list {
        let disp = if b.temporary { "del" } else { "keep" };
        let enb = if b.enabled { "y" } else { "n" };
        match &b.kind {
            BreakpointKind::Breakpoint => {
                let addr = b.locations.first().copied().unwrap_or(0);
                let dprintf = s.travel.engine.print_of(b.number);
                let (address, what) = if b.locations.is_empty() {
                    ("<PENDING>".to_string(), b.spec.clone())
                } else if b.locations.len() > 1 {
                    ("<MULTIPLE>".to_string(), String::new())
                } else {
                    (format!("{addr:#018x}"), describe(s, addr))
                };
                println!(
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
                        line.push_str(a);
                    }
                    println!("        printf {line}");
                }
                match s.travel.engine.era_of(b.number) {
                    Some((from, Some(to))) => println!("\tonly from event {from} to event {to}"),
                    Some((from, None)) => println!("\tonly from event {from}"),
                    None => {}
                }
            }
            BreakpointKind::Watchpoint { access, expr, .. } => {
                println!(
                    "{:<8}{:<w$} {disp:<5}{enb:<4}{:<19}{expr}",
                    b.number,
                    type_name(*access),
                    "",
                    w = type_width
                );
            }
        }
        if let Some(c) = &b.condition {
            println!("\tstop only if {c}");
        }
        match b.hit_count {
            0 => {}
            1 => println!("\tbreakpoint already hit 1 time"),
            n => println!("\tbreakpoint already hit {n} times"),
        }
        if b.ignore_count > 0 {
            println!("\tignore next {} hits", b.ignore_count);
        }
        // One row per location of a breakpoint with several (inlined copies, a line in
        // several functions).
        if b.locations.len() > 1 && matches!(b.kind, BreakpointKind::Breakpoint) {
            let enb = if b.enabled { "y" } else { "n" };
            for (k, a) in b.locations.iter().enumerate() {
                let num = format!("{}.{}", b.number, k + 1);
                println!(
                    "{num:<8}{:<w$} {:<5}{enb:<4}{:<19}{}",
                    "",
                    "",
                    format!("{a:#018x}"),
                    describe(s, *a),
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
    let f = s.symbols.function_at(addr);
    // Inside inlined code, the inlined function; C++ functions by their full signature.
    let inlined = s.symbols.inline_names(addr).into_iter().next();
    match (&f, s.symbols.line_at(addr)) {
        (Some(func), Some(l)) if func.has_debug_info => {
            let name = inlined
                .unwrap_or_else(|| func.signature.clone().unwrap_or_else(|| func.name.clone()));
            format!("in {name} at {}:{}", l.name.clone(), l.line)
        }
        (Some(func), _) => format!("<{}+{}>", func.name, addr - func.low),
        _ => String::new(),
    }
}

/// Number of an enabled user breakpoint located at `addr`, if any.
pub(crate) fn user_breakpoint_at(s: &Session, addr: u64) -> Option<u32> {
    s.breakpoints.breakpoints_at(addr).into_iter().next()
}

/// After a restart: plant every enabled breakpoint and load the watchpoints again.
pub(crate) fn replant_all(s: &mut Session) -> anyhow::Result<()> {
    let list: Vec<Breakpoint> = s
        .breakpoints
        .iter()
        .filter(|b| b.enabled)
        .cloned()
        .collect();
    // Sites whose code is not mapped yet (a library loaded later) wait for
    // `Session::plant_pending`.
    let sites: Vec<u64> = list
        .iter()
        .filter(|b| b.kind == BreakpointKind::Breakpoint)
        .flat_map(|b| b.locations.iter().copied())
        .collect();
    s.pending_sites = match s.inferior.as_mut().filter(|i| i.is_alive()) {
        Some(inf) => inf.insert_sites_in_code(&sites),
        None => Vec::new(),
    };
    if !s.breakpoints.is_empty() {
        apply_watchpoints(s)?;
    }
    // A new process: the loader's trap is planted again for what is still pending.
    s.library_event = None;
    watch_library_loads(s);
    Ok(())
}
