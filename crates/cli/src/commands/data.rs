//! Data commands: print, output, set var, x, info locals/args/registers/line/sharedlibrary,
//! list, echo.

use anyhow::bail;
use hindsight_ptrace::regs::GDB_ORDER;

use hindsight_control::StepOverMode;
use hindsight_symbols::value::TypeHandle;

use crate::context;
use crate::report;
use crate::session::Session;

pub(crate) fn print(s: &mut Session, args: &str, fmt: Option<&str>) -> anyhow::Result<()> {
    let text = args.trim();
    let value = if text.is_empty() {
        match s.history.last() {
            Some(v) => v.clone(),
            None => bail!("History is empty."),
        }
    } else {
        context::evaluate(s, text)?
    };
    let shown = context::format(s, &value, fmt)?;
    s.history.push(value);
    println!("${} = {shown}", s.history.len());
    Ok(())
}

/// `call EXPR`: as `print`, but a void result prints nothing.
pub(crate) fn call(s: &mut Session, args: &str, fmt: Option<&str>) -> anyhow::Result<()> {
    let value = context::evaluate(s, args.trim())?;
    if matches!(value.ty.shape(), hindsight_symbols::value::Shape::Void) {
        return Ok(());
    }
    let shown = context::format(s, &value, fmt)?;
    s.history.push(value);
    println!("${} = {shown}", s.history.len());
    Ok(())
}

pub(crate) fn output(s: &mut Session, args: &str, fmt: Option<&str>) -> anyhow::Result<()> {
    let value = context::evaluate(s, args.trim())?;
    print!("{}", context::format(s, &value, fmt)?);
    Ok(())
}

pub(crate) fn set(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
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
        s.step_over = mode;
        if let Some(inf) = s.inferior.as_mut() {
            inf.set_step_over_mode(mode);
        }
        return Ok(());
    }
    if let Some(setting) = a.strip_prefix("print ").or_else(|| a.strip_prefix("p ")) {
        return set_print(s, setting.trim());
    }
    if let Some(v) = a.strip_prefix("breakpoint pending") {
        s.breakpoint_pending = match v.trim() {
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
    context::evaluate(s, expr)?;
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
    match name {
        "pretty" => {
            s.print.pretty = match value {
                "" | "on" | "1" | "yes" | "enable" => true,
                "off" | "0" | "no" | "disable" => false,
                other => bail!("\"on\" or \"off\" expected, not \"{other}\"."),
            }
        }
        "elements" | "elem" | "limit" => s.print.elements = limit(value)?,
        "repeats" => s.print.repeats = limit(value)?.unwrap_or(u64::MAX),
        other => bail!("Undefined set print command: \"{other}\".  Try \"help set print\"."),
    }
    Ok(())
}

pub(crate) fn examine(s: &mut Session, args: &str, fmt: Option<&str>) -> anyhow::Result<()> {
    let text = args.trim();
    if text.is_empty() {
        bail!("Argument required (starting display address).");
    }
    let out = context::examine(s, text, fmt.unwrap_or(""))?;
    print!("{out}");
    Ok(())
}

pub(crate) fn echo(_: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
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
    print!("{out}");
    Ok(())
}

pub(crate) fn info_locals(s: &mut Session) -> anyhow::Result<()> {
    let lines = context::locals(s)?;
    if lines.is_empty() {
        println!("No locals.");
    }
    for l in lines {
        println!("{l}");
    }
    Ok(())
}

pub(crate) fn info_args(s: &mut Session) -> anyhow::Result<()> {
    let lines = context::args(s)?;
    if lines.is_empty() {
        println!("No arguments.");
    }
    for l in lines {
        println!("{l}");
    }
    Ok(())
}

pub(crate) fn info_registers(s: &mut Session, which: &str) -> anyhow::Result<()> {
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
        let value = if s.frame > 0 {
            frame_register(&frame, name).or_else(|| regs.by_name(name))
        } else {
            regs.by_name(name)
        };
        let Some(v) = value else {
            bail!("Invalid register `{name}'");
        };
        let natural = match name {
            "rip" | "pc" => match s.symbols.function_at(v) {
                Some(f) if v >= f.low => format!("{v:#x} <{}+{}>", f.name, v - f.low),
                _ => format!("{v:#x}"),
            },
            "eflags" => hindsight_symbols::format::eflags_text(v),
            "rbp" | "rsp" | "sp" | "fp" => format!("{v:#x}"),
            _ => format!("{}", v as i64),
        };
        println!("{name:<15}{:<20}{natural}", format!("{v:#x}"));
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
pub(crate) fn info_line(s: &mut Session, args: &str) -> anyhow::Result<()> {
    let a = args.trim();
    let pc = if a.is_empty() {
        let f = s.selected_frame()?;
        report::lookup_pc(&f, s.frame)
    } else if let Some(expr) = a.strip_prefix('*') {
        context::evaluate_address(s, expr.trim())?
    } else if let Some((file, line)) = line_spec(s, a) {
        // A line: its code, or where the code after it starts.
        let (found, addr) = s
            .symbols
            .line_address(&file, line)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        if found != line {
            let name = s
                .symbols
                .line_at(addr)
                .map(|l| l.name)
                .unwrap_or_else(|| file.clone());
            println!(
                "Line {line} of \"{name}\" is at address {addr:#x}{} but contains no code.",
                symbol_suffix(s, addr)
            );
            return Ok(());
        }
        addr
    } else {
        // A function: the line where its code starts.
        match s.symbols.lookup_functions(a).first() {
            Some(f) => f.low,
            None => bail!("Function \"{a}\" not defined."),
        }
    };
    let Some(line) = s.symbols.line_at(pc) else {
        bail!(
            "No line number information available for address {pc:#x}{}",
            symbol_suffix(s, pc)
        );
    };
    let (start, end) = s
        .symbols
        .line_range(pc)
        .unwrap_or((line.address, line.address));
    println!(
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
    s.symbols
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
fn line_spec(s: &Session, a: &str) -> Option<(String, u32)> {
    if let Ok(n) = a.parse::<u32>() {
        let file = s.list_center.as_ref().map(|(f, _)| f.clone()).or_else(|| {
            let main = s.symbols.lookup_functions("main").into_iter().next()?;
            s.symbols.line_at(main.low).map(|l| l.file)
        })?;
        return Some((file.to_string_lossy().into_owned(), n));
    }
    let (file, line) = a.rsplit_once(':')?;
    if file.ends_with(':') {
        return None;
    }
    Some((file.trim().to_string(), line.trim().parse().ok()?))
}

/// `disassemble [/r] [/s] [LOCATION | START,END | START,+LENGTH]`: gdb's dump of a
/// function (the selected frame's by default) or of a range, `=>` on the pc, raw bytes
/// with `/r`, source lines with `/s` (or `/m`).
pub(crate) fn disassemble(s: &mut Session, args: &str, fmt: Option<&str>) -> anyhow::Result<()> {
    let mut text = args.trim();
    let mut mods = fmt.unwrap_or("").to_string();
    while let Some(rest) = text.strip_prefix('/') {
        let (m, r) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        mods.push_str(m);
        text = r.trim();
    }
    if let Some(c) = mods.chars().find(|c| !"rsm".contains(*c)) {
        let _ = c;
        bail!("Invalid disassembly modifier.");
    }
    let (raw, source) = (mods.contains('r'), mods.contains('s') || mods.contains('m'));
    let pc = s
        .selected_frame()
        .ok()
        .map(|f| report::lookup_pc(&f, s.frame));
    let (start, end, func) = if text.is_empty() {
        let pc = pc.ok_or_else(|| anyhow::anyhow!("No frame selected."))?;
        let f = s.symbols.function_at(pc).ok_or_else(|| {
            anyhow::anyhow!("No function contains program counter for selected frame.")
        })?;
        (f.low, f.high, Some(f))
    } else if let Some((a, b)) = text.split_once(',') {
        let start = context::evaluate_address(s, a.trim())?;
        let end = match b.trim().strip_prefix('+') {
            Some(len) => start + context::evaluate_address(s, len.trim())?,
            None => context::evaluate_address(s, b.trim())?,
        };
        (start, end, None)
    } else {
        let a = context::evaluate_address(s, text)?;
        let f = s
            .symbols
            .function_at(a)
            .ok_or_else(|| anyhow::anyhow!("No function contains specified address."))?;
        (f.low, f.high, Some(f))
    };
    let insns = context::instructions(s, start, end)?;
    match &func {
        Some(f) => println!("Dump of assembler code for function {}:", f.name),
        None => println!("Dump of assembler code from {start:#x} to {end:#x}:"),
    }
    let mut last_line: Option<(std::path::PathBuf, u32)> = None;
    for (k, i) in insns.iter().enumerate() {
        if source {
            if let Some(l) = s.symbols.line_at(i.addr) {
                let key = (l.file.clone(), l.line);
                if last_line.as_ref() != Some(&key) {
                    if k == 0 {
                        println!("{}:", l.name);
                    } else {
                        println!();
                    }
                    match s.sources.line(&l.file, l.line) {
                        Some(t) => println!("{}\t{t}", l.line),
                        None => println!("{}\tin {}", l.line, l.name),
                    }
                    last_line = Some(key);
                }
            }
        }
        let mark = if Some(i.addr) == pc { "=> " } else { "   " };
        let label = match &func {
            Some(f) => format!("{:#018x} <+{}>:", i.addr, i.addr - f.low),
            None => match s.symbols.symbol_for(i.addr) {
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
        println!("{mark}{label}\t{bytes}{}", i.text);
    }
    println!("End of assembler dump.");
    Ok(())
}

/// `info source`: the current source file and its compile unit.
pub(crate) fn info_source(s: &mut Session) -> anyhow::Result<()> {
    let pc = s
        .selected_frame()
        .ok()
        .map(|f| report::lookup_pc(&f, s.frame));
    let line = pc.and_then(|pc| s.symbols.line_at(pc));
    let (Some(pc), Some(line)) = (pc, line) else {
        println!("No current source file.");
        return Ok(());
    };
    let facts = s.symbols.unit_facts(pc);
    println!("Current source file is {}", line.name);
    if let Some(dir) = facts.as_ref().and_then(|f| f.comp_dir.clone()) {
        println!("Compilation directory is {dir}");
    }
    if let Some(lines) = s.sources.lines(&line.file).map(|l| l.len()) {
        println!("Located in {}", line.file.display());
        println!("Contains {lines} lines.");
    }
    if let Some(f) = facts {
        let lang = match f.language {
            hindsight_symbols::types::Language::C => "c",
            hindsight_symbols::types::Language::Cpp => "c++",
            hindsight_symbols::types::Language::Rust => "rust",
        };
        println!("Source language is {lang}.");
        if let Some(p) = f.producer {
            println!("Producer is {p}.");
        }
        println!("Compiled with DWARF {} debugging format.", f.dwarf_version);
    }
    println!("Does not include preprocessor macro info.");
    Ok(())
}

pub(crate) fn info_sharedlibrary(s: &mut Session) -> anyhow::Result<()> {
    s.live()?;
    let mut modules: Vec<_> = s.symbols.modules().skip(1).collect();
    if modules.is_empty() {
        println!("No shared libraries loaded at this time.");
        return Ok(());
    }
    // The loader's order (its list), the dynamic loader itself first, as gdb lists them.
    let order: Vec<String> = match (s.dynamic, s.inferior.as_ref()) {
        (Some(d), Some(inf)) => crate::linkmap::loaded_objects(inf, d)
            .into_iter()
            .map(|(_, name)| name)
            .collect(),
        _ => Vec::new(),
    };
    modules.sort_by_key(|m| {
        let path = s.symbols.module_path(*m).to_string_lossy().into_owned();
        let pos = order.iter().position(|n| *n == path).unwrap_or(usize::MAX);
        (!path.contains("/ld-"), pos)
    });
    println!("From                To                  Syms Read   Shared Object Library");
    let mut missing = false;
    for m in modules {
        let (from, to) = match s.symbols.text_range(m) {
            Some((a, b)) => (format!("{a:#018x}"), format!("{b:#018x}")),
            None => (String::new(), String::new()),
        };
        let read = if s.symbols.has_debug_info(m) {
            "Yes"
        } else {
            missing = true;
            "Yes (*)"
        };
        println!(
            "{from:<20}{to:<20}{read:<12}{}",
            s.symbols.module_path(m).display()
        );
    }
    if missing {
        println!("(*): Shared library is missing debugging information.");
    }
    Ok(())
}

/// `list`, `list N`, `list FUNCTION`, `list FILE:N`, `list A,B`.
pub(crate) fn list(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    let a = args.trim();
    let (file, first, last) = if a.is_empty() {
        match (s.list_next.clone(), s.list_center.clone()) {
            (Some((f, n)), _) => (f, n, n + 9),
            (None, Some((f, c))) => {
                let first = c.saturating_sub(5).max(1);
                (f, first, first + 9)
            }
            (None, None) => {
                let Some(main) = s.symbols.lookup_functions("main").into_iter().next() else {
                    bail!("No symbol table is loaded.  Use the \"file\" command.");
                };
                let Some(l) = s.symbols.line_at(main.low) else {
                    bail!("No line number information available.");
                };
                let first = l.line.saturating_sub(4).max(1);
                (l.file, first, first + 9)
            }
        }
    } else if let Some((x, y)) = a.split_once(',') {
        let (f, n) = list_target(s, x.trim())?;
        let end = y.trim().parse::<u32>().unwrap_or(n + 9);
        (f, n, end)
    } else {
        let (f, c) = list_target(s, a)?;
        let first = c.saturating_sub(5).max(1);
        (f, first, first + 9)
    };
    let Some(lines) = s.sources.lines(&file).cloned() else {
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
        println!("{n}\t{}", lines[n - 1]);
    }
    s.list_next = Some((file, end as u32 + 1));
    Ok(())
}

/// The (file, line) a `list` argument names.
fn list_target(s: &mut Session, a: &str) -> anyhow::Result<(std::path::PathBuf, u32)> {
    let current_file = s.list_center.clone().map(|(f, _)| f).or_else(|| {
        let main = s.symbols.lookup_functions("main").into_iter().next()?;
        s.symbols.line_at(main.low).map(|l| l.file)
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
            let Some(f) = s.symbols.find_source(file.trim()) else {
                bail!("No source file named {}.", file.trim());
            };
            return Ok((f, n));
        }
    }
    // A function is listed around the line where its code starts (its opening brace),
    // not around the breakpoint position after the prologue.
    let funcs = s.symbols.lookup_functions(a);
    if let Some(l) = funcs.first().and_then(|f| s.symbols.line_at(f.low)) {
        return Ok((l.file, l.line));
    }
    let loc = super::breakpoints::resolve_location(s, a)?;
    match loc
        .addresses
        .first()
        .and_then(|&addr| s.symbols.line_at(addr))
    {
        Some(l) => Ok((l.file, l.line)),
        None => bail!("No line number known for {a}."),
    }
}

/// The type of an expression, or a type named directly (`whatis struct point`).
fn type_of(s: &mut Session, text: &str) -> anyhow::Result<TypeHandle> {
    match context::evaluate(s, text) {
        Ok(v) => Ok(v.ty),
        Err(e) => context::lookup_type(s, text).ok_or(e),
    }
}

pub(crate) fn whatis(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    let ty = type_of(s, args.trim())?;
    let lang = context::language(s);
    println!("type = {}", hindsight_symbols::ptype::whatis(&ty, lang));
    Ok(())
}

/// `ptype`: the type with typedefs resolved and structs, unions and enums spelled out (a
/// class with its methods, which values do not carry: its definition is looked up again).
pub(crate) fn ptype(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    let ty = type_of(s, args.trim())?;
    let ty = context::with_methods(s, &ty).unwrap_or(ty);
    let lang = context::language(s);
    println!("type = {}", hindsight_symbols::ptype::ptype(&ty, lang));
    Ok(())
}
