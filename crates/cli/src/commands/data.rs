//! Data commands: print, output, set var, x, info locals/args/registers/line/sharedlibrary,
//! list, echo.

use anyhow::bail;
use hindsight_ptrace::regs::GDB_ORDER;

use hindsight_engine::{Session, StepOverMode};
use hindsight_symbols::types::{AggregateKind, Type};
use hindsight_symbols::value::TypeHandle;

use crate::console::{say, Console};
use crate::report;

pub(crate) fn print(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    fmt: Option<&str>,
) -> anyhow::Result<()> {
    let text = args.trim();
    let value = if text.is_empty() {
        match s.last_value() {
            Some(v) => v.clone(),
            None => bail!("History is empty."),
        }
    } else {
        s.evaluate(text)?
    };
    let shown = s.format_value(&value, fmt)?;
    let n = s.record_value(value);
    say!(c, "${n} = {shown}");
    Ok(())
}

pub(crate) fn output(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    fmt: Option<&str>,
) -> anyhow::Result<()> {
    let value = s.evaluate(args.trim())?;
    c.print(&s.format_value(&value, fmt)?);
    Ok(())
}

pub(crate) fn set(
    s: &mut Session,
    _: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    let a = args.trim();
    // gdb's name for how threads get past breakpoints: `on`/`auto` run a relocated copy of
    // the instruction (the trap stays planted); `off` lifts the trap and single-steps with
    // every other thread stopped.
    if let Some(v) = a.strip_prefix("displaced-stepping") {
        let mode = match v.trim() {
            "on" | "auto" | "" => StepOverMode::Displaced,
            "off" => StepOverMode::NoSwitch,
            other => bail!("\"on\", \"off\" or \"auto\" expected, not \"{other}\"."),
        };
        s.set_step_over_mode(mode);
        return Ok(());
    }
    let expr = a
        .strip_prefix("variable ")
        .or_else(|| a.strip_prefix("var "))
        .unwrap_or(a)
        .trim();
    if expr.is_empty() || a == "var" || a == "variable" {
        bail!("Argument required (expression to compute).");
    }
    if !expr.contains('=') {
        bail!("Undefined set command: \"{expr}\".  Try \"help set\".");
    }
    s.evaluate(expr)?;
    Ok(())
}

pub(crate) fn examine(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    fmt: Option<&str>,
) -> anyhow::Result<()> {
    let text = args.trim();
    if text.is_empty() {
        bail!("Argument required (starting display address).");
    }
    let out = s.examine(text, fmt.unwrap_or(""))?;
    c.print(&out);
    Ok(())
}

pub(crate) fn echo(
    _: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    let mut out = String::new();
    let mut chars = args.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    c.print(&out);
    Ok(())
}

pub(crate) fn info_locals(s: &mut Session, c: &mut Console) -> anyhow::Result<()> {
    let vars = s.locals()?;
    if vars.is_empty() {
        say!(c, "No locals.");
    }
    for v in vars {
        say!(c, "{} = {}", v.name, v.text);
    }
    Ok(())
}

pub(crate) fn info_args(s: &mut Session, c: &mut Console) -> anyhow::Result<()> {
    let vars = s.frame_parameters()?;
    if vars.is_empty() {
        say!(c, "No arguments.");
    }
    for v in vars {
        say!(c, "{} = {}", v.name, v.text);
    }
    Ok(())
}

pub(crate) fn info_registers(s: &mut Session, c: &mut Console, which: &str) -> anyhow::Result<()> {
    let tid = s
        .tid()
        .map_err(|_| anyhow::anyhow!("The program has no registers now."))?;
    let frame = s.selected_frame()?;
    let regs = s.live()?.regs(tid).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut names: Vec<&str> = GDB_ORDER.to_vec();
    names.extend(["fs_base", "gs_base"]);
    let wanted: Vec<&str> = if which.is_empty() {
        names
    } else {
        which
            .split_whitespace()
            .map(|w| w.trim_start_matches('$'))
            .collect()
    };
    for name in wanted {
        // Outer frames show what unwinding recovered (rip, rsp, rbp and callee-saved ones).
        let value = if s.selected_frame_index() > 0 {
            frame_register(&frame, name).or_else(|| regs.by_name(name))
        } else {
            regs.by_name(name)
        };
        let Some(v) = value else {
            bail!("Invalid register `{name}'");
        };
        let natural = match name {
            "rip" | "pc" => match s.symbols().function_at(v) {
                Some(f) if v >= f.low => format!("{v:#x} <{}+{}>", f.name, v - f.low),
                _ => format!("{v:#x}"),
            },
            "eflags" => hindsight_symbols::format::eflags_text(v),
            "rbp" | "rsp" | "sp" | "fp" => format!("{v:#x}"),
            _ => format!("{}", v as i64),
        };
        say!(c, "{name:<15}{:<20}{natural}", format!("{v:#x}"));
    }
    Ok(())
}

fn frame_register(frame: &hindsight_symbols::Frame, name: &str) -> Option<u64> {
    let n = match name {
        "rax" => 0,
        "rdx" => 1,
        "rcx" => 2,
        "rbx" => 3,
        "rsi" => 4,
        "rdi" => 5,
        "rbp" | "fp" => 6,
        "rsp" | "sp" => 7,
        "rip" | "pc" => 16,
        _ => {
            let r = name.strip_prefix('r')?.parse::<u16>().ok()?;
            if (8..=15).contains(&r) {
                r
            } else {
                return None;
            }
        }
    };
    frame.regs.get(n)
}

pub(crate) fn info_line(s: &mut Session, c: &mut Console) -> anyhow::Result<()> {
    let f = s.selected_frame()?;
    let pc = hindsight_engine::frames::lookup_pc(&f, s.selected_frame_index());
    let symbols = s.symbols();
    let Some(line) = symbols.line_at(pc) else {
        bail!("No line number information available for address {pc:#x}");
    };
    let (start, end) = symbols
        .line_range(pc)
        .unwrap_or((line.address, line.address));
    let sym = |a: u64| {
        symbols
            .function_at(a)
            .map(|f| format!(" <{}+{}>", f.name, a - f.low))
            .unwrap_or_default()
    };
    say!(
        c,
        "Line {} of \"{}\" starts at address {start:#x}{} and ends at {end:#x}{}.",
        line.line,
        line.name.clone(),
        sym(start),
        sym(end)
    );
    Ok(())
}

pub(crate) fn info_sharedlibrary(s: &mut Session, c: &mut Console) -> anyhow::Result<()> {
    s.live()?;
    let symbols = s.symbols();
    let modules: Vec<_> = symbols.modules().skip(1).collect();
    if modules.is_empty() {
        say!(c, "No shared libraries loaded at this time.");
        return Ok(());
    }
    say!(c, "Shared Object Library");
    for m in modules {
        say!(c, "{}", symbols.module_path(m).display());
    }
    Ok(())
}

/// `list`, `list N`, `list FUNCTION`, `list FILE:N`, `list A,B`.
pub(crate) fn list(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    let a = args.trim();
    let (file, first, last) = if a.is_empty() {
        match (c.list_next.clone(), c.list_center.clone()) {
            (Some((f, n)), _) => (f, n, n + 9),
            (None, Some((f, c))) => {
                let first = c.saturating_sub(5).max(1);
                (f, first, first + 9)
            }
            (None, None) => {
                let Some(main) = s.symbols().lookup_functions("main").into_iter().next() else {
                    bail!("No symbol table is loaded.  Use the \"file\" command.");
                };
                let Some(l) = s.symbols().line_at(main.low) else {
                    bail!("No line number information available.");
                };
                let first = l.line.saturating_sub(4).max(1);
                (l.file, first, first + 9)
            }
        }
    } else if let Some((x, y)) = a.split_once(',') {
        let (f, n) = list_target(s, c, x.trim())?;
        let end = y.trim().parse::<u32>().unwrap_or(n + 9);
        (f, n, end)
    } else {
        let (f, center) = list_target(s, c, a)?;
        let first = center.saturating_sub(5).max(1);
        (f, first, first + 9)
    };
    let Some(lines) = c.sources.lines(&file).cloned() else {
        bail!(
            "{}: No such file or directory.",
            report::display_file(&file)
        );
    };
    if first as usize > lines.len() {
        bail!(
            "Line number {first} out of range; \"{}\" has {} lines.",
            report::display_file(&file),
            lines.len()
        );
    }
    let end = (last as usize).min(lines.len());
    for n in first as usize..=end {
        say!(c, "{n}\t{}", lines[n - 1]);
    }
    c.list_next = Some((file, end as u32 + 1));
    Ok(())
}

/// The (file, line) a `list` argument names.
fn list_target(s: &mut Session, c: &Console, a: &str) -> anyhow::Result<(std::path::PathBuf, u32)> {
    let current_file = c.list_center.clone().map(|(f, _)| f).or_else(|| {
        let main = s.symbols().lookup_functions("main").into_iter().next()?;
        s.symbols().line_at(main.low).map(|l| l.file)
    });
    if let Ok(n) = a.parse::<u32>() {
        let Some(f) = current_file else {
            bail!("No symbol table is loaded.");
        };
        return Ok((f, n));
    }
    // FILE:LINE names a line of text, with or without code.
    if let Some((file, line)) = a.rsplit_once(':') {
        if let Ok(n) = line.trim().parse::<u32>() {
            let Some(f) = s.symbols().find_source(file.trim()) else {
                bail!("No source file named {}.", file.trim());
            };
            return Ok((f, n));
        }
    }
    // A function is listed around the line where its code starts (its opening brace),
    // not around the breakpoint position after the prologue.
    let funcs = s.symbols().lookup_functions(a);
    if let Some(l) = funcs.first().and_then(|f| s.symbols().line_at(f.low)) {
        return Ok((l.file, l.line));
    }
    let addresses = s.resolve_location(a, c.default_file())?;
    match addresses
        .first()
        .and_then(|&addr| s.symbols().line_at(addr))
    {
        Some(l) => Ok((l.file, l.line)),
        None => bail!("No line number known for {a}."),
    }
}

/// The type of an expression, or a type named directly (`whatis struct point`).
fn type_of(s: &mut Session, text: &str) -> anyhow::Result<TypeHandle> {
    match s.evaluate(text) {
        Ok(v) => Ok(v.ty),
        Err(e) => s.lookup_type(text).ok_or(e),
    }
}

pub(crate) fn whatis(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    let ty = type_of(s, args.trim())?;
    say!(c, "type = {}", ty.name());
    Ok(())
}

/// `ptype`: the type with typedefs resolved and structs, unions and enums spelled out.
pub(crate) fn ptype(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    let ty = type_of(s, args.trim())?;
    // Pointers and arrays keep their declarator around the expanded aggregate: `} *`.
    let mut suffix = String::new();
    let mut t = ty.strip().unwrap_or(ty.clone());
    while let Type::Pointer {
        pointee: Some(p), ..
    } = t.get().clone()
    {
        let inner = t.child(p);
        let inner = inner.strip().unwrap_or(inner);
        if !matches!(inner.get(), Type::Struct { .. } | Type::Enum { .. }) {
            break;
        }
        suffix.insert_str(0, " *");
        t = inner;
    }
    say!(c, "type = {}{suffix}", expand(&t));
    Ok(())
}

/// `int x` from a member's type and name, in C declarator syntax.
fn declaration(ty: &TypeHandle, name: &str) -> String {
    let tn = ty.name();
    if let Some(i) = tn.find(" [") {
        format!("{} {name}{}", &tn[..i], &tn[i + 1..])
    } else if tn.contains("(*)") {
        tn.replacen("(*)", &format!("(*{name})"), 1)
    } else if tn.ends_with('*') {
        format!("{tn}{name}")
    } else {
        format!("{tn} {name}")
    }
}

fn expand(t: &TypeHandle) -> String {
    match t.get().clone() {
        Type::Struct {
            name,
            kind,
            members,
            ..
        } => {
            let kw = match kind {
                AggregateKind::Union => "union",
                AggregateKind::Class => "class",
                AggregateKind::Struct => "struct",
            };
            let mut out = match name {
                Some(n) => format!("{kw} {n} {{\n"),
                None => format!("{kw} {{\n"),
            };
            for m in members {
                let mty = t.child(m.ty);
                let decl = declaration(&mty, m.name.as_deref().unwrap_or(""));
                match m.bits {
                    Some((_, bits)) => out.push_str(&format!("    {decl} : {bits};\n")),
                    None => out.push_str(&format!("    {decl};\n")),
                }
            }
            out.push('}');
            out
        }
        Type::Enum { name, values, .. } => {
            let vals: Vec<String> = values.iter().map(|(n, _)| n.clone()).collect();
            match name {
                Some(n) => format!("enum {n} {{{}}}", vals.join(", ")),
                None => format!("enum {{{}}}", vals.join(", ")),
            }
        }
        _ => t.name(),
    }
}
