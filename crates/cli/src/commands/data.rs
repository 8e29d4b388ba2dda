//! Data commands: print, output, set var, x, info locals/args/registers/line/sharedlibrary,
//! list, echo.

use anyhow::bail;
use hindsight_ptrace::regs::GDB_ORDER;

use hindsight_engine::{Session, StepOverMode};
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
    c: &mut Console,
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
    if let Some(setting) = a.strip_prefix("print ").or_else(|| a.strip_prefix("p ")) {
        return set_print(s, setting.trim());
    }
    if let Some(v) = a.strip_prefix("breakpoint pending") {
        c.breakpoint_pending = match v.trim() {
            "on" | "" => Some(true),
            "off" => Some(false),
            "auto" => None,
            other => bail!("\"on\", \"off\" or \"auto\" expected, not \"{other}\"."),
        };
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

/// `set print pretty on|off`, `set print elements N|unlimited`, `set print repeats N|unlimited`.
fn set_print(s: &mut Session, setting: &str) -> anyhow::Result<()> {
    let (name, value) = setting.split_once(' ').unwrap_or((setting, ""));
    let value = value.trim();
    let limit = |v: &str| -> anyhow::Result<Option<u64>> {
        match v {
            "unlimited" | "0" => Ok(None),
            "" => bail!("Argument required (integer to set it to, or \"unlimited\")."),
            _ => match v.parse::<u64>() {
                Ok(n) => Ok(Some(n)),
                Err(_) => bail!("No symbol \"{v}\" in current context."),
            },
        }
    };
    let mut opts = s.print_options();
    match name {
        "pretty" => {
            opts.pretty = match value {
                "" | "on" | "1" | "yes" | "enable" => true,
                "off" | "0" | "no" | "disable" => false,
                other => bail!("\"on\" or \"off\" expected, not \"{other}\"."),
            }
        }
        "elements" | "elem" | "limit" => opts.elements = limit(value)?,
        "repeats" => opts.repeats = limit(value)?.unwrap_or(u64::MAX),
        other => bail!("Undefined set print command: \"{other}\".  Try \"help set print\"."),
    }
    s.set_print_options(opts);
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

/// `info line [LOCATION]`: where a line's code is (the selected frame's line without one).
pub(crate) fn info_line(s: &mut Session, c: &mut Console, args: &str) -> anyhow::Result<()> {
    let a = args.trim();
    let pc = if a.is_empty() {
        let f = s.selected_frame()?;
        hindsight_engine::frames::lookup_pc(&f, s.selected_frame_index())
    } else if let Some(expr) = a.strip_prefix('*') {
        s.evaluate_address(expr.trim())?
    } else if let Some((file, line)) = line_spec(s, c, a) {
        // A line: its code, or where the code after it starts.
        let (found, addr) = s
            .symbols()
            .line_address(&file, line)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        if found != line {
            let name = s
                .symbols()
                .line_at(addr)
                .map(|l| l.name)
                .unwrap_or_else(|| file.clone());
            say!(
                c,
                "Line {line} of \"{name}\" is at address {addr:#x}{} but contains no code.",
                symbol_suffix(s, addr)
            );
            return Ok(());
        }
        addr
    } else {
        // A function: the line where its code starts.
        match s.symbols().lookup_functions(a).first() {
            Some(f) => f.low,
            None => bail!("Function \"{a}\" not defined."),
        }
    };
    let symbols = s.symbols();
    let Some(line) = symbols.line_at(pc) else {
        bail!(
            "No line number information available for address {pc:#x}{}",
            symbol_suffix(s, pc)
        );
    };
    let (start, end) = symbols
        .line_range(pc)
        .unwrap_or((line.address, line.address));
    say!(
        c,
        "Line {} of \"{}\" starts at address {start:#x}{} and ends at {end:#x}{}.",
        line.line,
        line.name.clone(),
        symbol_suffix(s, start),
        symbol_suffix(s, end)
    );
    Ok(())
}

/// ` <main+4>` for an address in a function, else nothing.
fn symbol_suffix(s: &Session, a: u64) -> String {
    s.symbols()
        .function_at(a)
        .filter(|f| a < f.high)
        .map(|f| {
            if a == f.low {
                format!(" <{}>", f.name)
            } else {
                format!(" <{}+{}>", f.name, a - f.low)
            }
        })
        .unwrap_or_default()
}

/// `FILE:LINE` or `LINE` (in the current source file) as (file, line).
fn line_spec(s: &Session, c: &Console, a: &str) -> Option<(String, u32)> {
    if let Ok(n) = a.parse::<u32>() {
        let file = c.list_center.as_ref().map(|(f, _)| f.clone()).or_else(|| {
            let main = s.symbols().lookup_functions("main").into_iter().next()?;
            s.symbols().line_at(main.low).map(|l| l.file)
        })?;
        return Some((file.to_string_lossy().into_owned(), n));
    }
    let (file, line) = a.rsplit_once(':')?;
    if file.ends_with(':') {
        return None;
    }
    Some((file.trim().to_string(), line.trim().parse().ok()?))
}

/// `info source`: the current source file and its compile unit.
pub(crate) fn info_source(s: &mut Session, c: &mut Console) -> anyhow::Result<()> {
    let pc = s
        .selected_frame()
        .ok()
        .map(|f| hindsight_engine::frames::lookup_pc(&f, s.selected_frame_index()));
    let line = pc.and_then(|pc| s.symbols().line_at(pc));
    let (Some(pc), Some(line)) = (pc, line) else {
        say!(c, "No current source file.");
        return Ok(());
    };
    let facts = s.symbols().unit_facts(pc);
    say!(c, "Current source file is {}", line.name);
    if let Some(dir) = facts.as_ref().and_then(|f| f.comp_dir.clone()) {
        say!(c, "Compilation directory is {dir}");
    }
    if let Some(lines) = c.sources.lines(&line.file).map(|l| l.len()) {
        say!(c, "Located in {}", line.file.display());
        say!(c, "Contains {lines} lines.");
    }
    if let Some(f) = facts {
        say!(c, "Source language is {}.", language_name(f.language));
        if let Some(p) = f.producer {
            say!(c, "Producer is {p}.");
        }
        say!(
            c,
            "Compiled with DWARF {} debugging format.",
            f.dwarf_version
        );
    }
    say!(c, "Does not include preprocessor macro info.");
    Ok(())
}

/// gdb's name of a language.
pub(crate) fn language_name(l: hindsight_symbols::types::Language) -> &'static str {
    match l {
        hindsight_symbols::types::Language::C => "c",
        hindsight_symbols::types::Language::Cpp => "c++",
        hindsight_symbols::types::Language::Rust => "rust",
    }
}

/// `disassemble [/r] [/s] [LOCATION | START,END | START,+LENGTH]`: gdb's dump of a
/// function (the selected frame's by default) or of a range, `=>` on the pc, raw bytes
/// with `/r`, source lines with `/s` (or `/m`).
pub(crate) fn disassemble(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    fmt: Option<&str>,
) -> anyhow::Result<()> {
    let mut text = args.trim();
    let mut mods = fmt.unwrap_or("").to_string();
    while let Some(rest) = text.strip_prefix('/') {
        let (m, r) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        mods.push_str(m);
        text = r.trim();
    }
    if mods.chars().any(|c| !"rsm".contains(c)) {
        bail!("Invalid disassembly modifier.");
    }
    let (raw, source) = (mods.contains('r'), mods.contains('s') || mods.contains('m'));
    let pc = s
        .selected_frame()
        .ok()
        .map(|f| hindsight_engine::frames::lookup_pc(&f, s.selected_frame_index()));
    let (start, end, func) = if text.is_empty() {
        let pc = pc.ok_or_else(|| anyhow::anyhow!("No frame selected."))?;
        let f = s.symbols().function_at(pc).ok_or_else(|| {
            anyhow::anyhow!("No function contains program counter for selected frame.")
        })?;
        (f.low, f.high, Some(f))
    } else if let Some((a, b)) = text.split_once(',') {
        let start = s.evaluate_address(a.trim())?;
        let end = match b.trim().strip_prefix('+') {
            Some(len) => start + s.evaluate_address(len.trim())?,
            None => s.evaluate_address(b.trim())?,
        };
        (start, end, None)
    } else {
        let a = s.evaluate_address(text)?;
        let f = s
            .symbols()
            .function_at(a)
            .ok_or_else(|| anyhow::anyhow!("No function contains specified address."))?;
        (f.low, f.high, Some(f))
    };
    let insns = s.instructions(start, end)?;
    match &func {
        Some(f) => say!(c, "Dump of assembler code for function {}:", f.name),
        None => say!(c, "Dump of assembler code from {start:#x} to {end:#x}:"),
    }
    let mut last_line: Option<(std::path::PathBuf, u32)> = None;
    for (k, i) in insns.iter().enumerate() {
        if source {
            if let Some(l) = s.symbols().line_at(i.addr) {
                let key = (l.file.clone(), l.line);
                if last_line.as_ref() != Some(&key) {
                    if k == 0 {
                        say!(c, "{}:", l.name);
                    } else {
                        say!(c, "");
                    }
                    match c.sources.line(&l.file, l.line) {
                        Some(t) => say!(c, "{}\t{t}", l.line),
                        None => say!(c, "{}\tin {}", l.line, l.name),
                    }
                    last_line = Some(key);
                }
            }
        }
        let mark = if Some(i.addr) == pc { "=> " } else { "   " };
        let label = match &func {
            Some(f) => format!("{:#018x} <+{}>:", i.addr, i.addr - f.low),
            None => match s.symbols().symbol_for(i.addr) {
                Some(sym) => format!("{:#018x} <{sym}>:", i.addr),
                None => format!("{:#018x}:", i.addr),
            },
        };
        let bytes = if raw {
            let b: Vec<String> = i.bytes.iter().map(|b| format!("{b:02x}")).collect();
            format!("{}\t", b.join(" "))
        } else {
            String::new()
        };
        say!(c, "{mark}{label}\t{bytes}{}", i.text);
    }
    say!(c, "End of assembler dump.");
    Ok(())
}

/// `call EXPR`: as `print`, but a void result prints nothing.
pub(crate) fn call(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    fmt: Option<&str>,
) -> anyhow::Result<()> {
    let value = s.evaluate(args.trim())?;
    if matches!(value.ty.shape(), hindsight_symbols::value::Shape::Void) {
        return Ok(());
    }
    let shown = s.format_value(&value, fmt)?;
    let n = s.record_value(value);
    say!(c, "${n} = {shown}");
    Ok(())
}

pub(crate) fn info_sharedlibrary(s: &mut Session, c: &mut Console) -> anyhow::Result<()> {
    s.live()?;
    let symbols = s.symbols();
    let mut modules: Vec<_> = symbols.modules().skip(1).collect();
    if modules.is_empty() {
        say!(c, "No shared libraries loaded at this time.");
        return Ok(());
    }
    // The loader's order (its list), the dynamic loader itself first, as gdb lists them.
    let order = s.library_order();
    modules.sort_by_key(|m| {
        let path = symbols.module_path(*m).to_string_lossy().into_owned();
        let pos = order.iter().position(|n| *n == path).unwrap_or(usize::MAX);
        (!path.contains("/ld-"), pos)
    });
    say!(
        c,
        "From                To                  Syms Read   Shared Object Library"
    );
    let mut missing = false;
    for m in modules {
        let (from, to) = match symbols.text_range(m) {
            Some((a, b)) => (format!("{a:#018x}"), format!("{b:#018x}")),
            None => (String::new(), String::new()),
        };
        let read = if symbols.has_debug_info(m) {
            "Yes"
        } else {
            missing = true;
            "Yes (*)"
        };
        say!(
            c,
            "{from:<20}{to:<20}{read:<12}{}",
            symbols.module_path(m).display()
        );
    }
    if missing {
        say!(c, "(*): Shared library is missing debugging information.");
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
    let lang = s.language();
    say!(c, "type = {}", hindsight_symbols::ptype::whatis(&ty, lang));
    Ok(())
}

/// `ptype`: the type with typedefs resolved and structs, unions and enums spelled out (a
/// class with its methods, which values do not carry: its definition is looked up again).
pub(crate) fn ptype(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    let ty = type_of(s, args.trim())?;
    let ty = s.type_with_methods(&ty).unwrap_or(ty);
    let lang = s.language();
    say!(c, "type = {}", hindsight_symbols::ptype::ptype(&ty, lang));
    Ok(())
}
