//! Values printed exactly as gdb 13 prints them (`print`, `print/FMT`, `info locals`, stop
//! lines) and memory as `x/NFU` shows it: the text pieces (numbers, characters, strings) and
//! the entry points that build a value's [`Shown`](crate::shown::Shown) tree
//! ([`crate::show`]) and render it.
//!
//! gdb's defaults are built in: `print elements 200`, `repeats 10`, `print null-stop off`,
//! `print symbol on`.

use crate::expr::{EvalContext, ExprError};
use crate::show::{At, Builder, PrintOptions};
use crate::shown::{render, Shown, Style};
use crate::target::AccessError;
use crate::value::{le_u64, sign_extend, Value};

/// gdb's `repeat-count-threshold`: runs *longer* than this print as `<repeats N times>`.
const REPEAT_THRESHOLD: u64 = 10;
/// gdb's `print elements` limit.
const ELEMENT_LIMIT: u64 = 200;
/// The most bytes one `x` command reads.
const MAX_EXAMINE: usize = 1 << 24;

/// Formats a value as `print` shows it after `$N = `; `fmt` is print's `/x`, `/d`, `/u`,
/// `/o`, `/t`, `/c`, `/a`, `/f`, `/z`, `/s` letter, applied to every scalar inside.
pub fn format_value(v: &Value, ctx: &dyn EvalContext, fmt: Option<char>) -> String {
    let opts = PrintOptions {
        fmt: fmt.filter(|f| *f != 's'),
        ..PrintOptions::default()
    };
    render_value(v, ctx, &opts, At::Top)
}

/// The tree of a value with these settings.
pub fn show_value(v: &Value, ctx: &dyn EvalContext, opts: &PrintOptions, place: At) -> Shown {
    Builder::new(ctx, *opts).value(&v.ty, &v.bytes, place)
}

/// A value's text with these settings.
pub fn render_value(v: &Value, ctx: &dyn EvalContext, opts: &PrintOptions, place: At) -> String {
    let shown = show_value(v, ctx, opts, place);
    render(&shown, &style(ctx, opts))
}

/// The rendering style of a context with these settings.
pub fn style(ctx: &dyn EvalContext, opts: &PrintOptions) -> Style {
    Style {
        language: ctx.language(),
        pretty: opts.pretty,
        repeats: opts.repeats,
    }
}

/// gdb's `%g` with `digits` significant digits (9 for float, 17 for double), enough to
/// round-trip.
pub fn format_float(x: f64, digits: usize) -> String {
    if x.is_infinite() {
        return if x < 0.0 { "-inf".into() } else { "inf".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let e = format!("{:.*e}", digits - 1, x);
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= digits as i32 {
        let mant = trim_zeros(mant);
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mant}e{sign}{:02}", exp.abs());
    }
    let decimals = (digits as i32 - 1 - exp).max(0) as usize;
    trim_zeros(&format!("{:.*}", decimals, x)).to_string()
}

/// A float or double from its bytes, as gdb prints it (NaNs with their payload).
pub(crate) fn float_text(bytes: &[u8]) -> String {
    match bytes.len() {
        4 => {
            let bits = le_u64(bytes) as u32;
            let f = f32::from_bits(bits);
            if f.is_nan() {
                let sign = if bits >> 31 == 1 { "-" } else { "" };
                return format!("{sign}nan({:#x})", bits & 0x7f_ffff);
            }
            format_float(f as f64, 9)
        }
        8 => {
            let bits = le_u64(bytes);
            let f = f64::from_bits(bits);
            if f.is_nan() {
                let sign = if bits >> 63 == 1 { "-" } else { "" };
                return format!("{sign}nan({:#x})", bits & 0xf_ffff_ffff_ffff);
            }
            format_float(f, 17)
        }
        _ => "<invalid float value>".into(),
    }
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// A byte as gdb shows it inside `'…'` or `"…"`.
pub(crate) fn escape_char(c: u8, quote: char) -> String {
    match c {
        7 => "\\a".into(),
        8 => "\\b".into(),
        9 => "\\t".into(),
        10 => "\\n".into(),
        11 => "\\v".into(),
        12 => "\\f".into(),
        13 => "\\r".into(),
        27 => "\\033".into(),
        b'\\' => "\\\\".into(),
        c if c as char == quote => format!("\\{quote}"),
        c if (32..127).contains(&c) => (c as char).to_string(),
        c => format!("\\{c:03o}"),
    }
}

/// A character value: `97 'a'`.
pub(crate) fn char_text(c: u8, signed: bool) -> String {
    let n = if signed { c as i8 as i64 } else { c as i64 };
    format!("{n} '{}'", escape_char(c, '\''))
}

/// Bytes as gdb prints a string: quoted runs, runs of one byte longer than `threshold` as
/// `'c' <repeats N times>`. At most `limit` characters are shown (a repeat block counts as
/// the threshold), then `...`; `more` forces the `...` (the source went on).
pub(crate) fn string_text(bytes: &[u8], more: bool, limit: u64, threshold: u64) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut quoted = String::new();
    let mut printed = 0u64;
    let mut i = 0;
    while i < bytes.len() && printed < limit {
        let c = bytes[i];
        let run = bytes[i..].iter().take_while(|b| **b == c).count();
        if run as u64 > threshold {
            if !quoted.is_empty() {
                parts.push(format!("\"{quoted}\""));
                quoted.clear();
            }
            parts.push(format!("'{}' <repeats {run} times>", escape_char(c, '\'')));
            i += run;
            printed += threshold;
        } else {
            quoted.push_str(&escape_char(c, '"'));
            i += 1;
            printed += 1;
        }
    }
    if !quoted.is_empty() || parts.is_empty() {
        parts.push(format!("\"{quoted}\""));
    }
    let mut s = parts.join(", ");
    if more || i < bytes.len() {
        s.push_str("...");
    }
    s
}

/// Names of the x86 EFLAGS bits gdb shows, by bit number.
const EFLAGS: &[(u32, &str)] = &[
    (0, "CF"),
    (2, "PF"),
    (4, "AF"),
    (6, "ZF"),
    (7, "SF"),
    (8, "TF"),
    (9, "IF"),
    (10, "DF"),
    (11, "OF"),
    (14, "NT"),
    (16, "RF"),
    (17, "VM"),
    (18, "AC"),
    (19, "VIF"),
    (20, "VIP"),
    (21, "ID"),
];

/// `[ PF ZF IF ]`: the flags set in an EFLAGS value, as `info registers` and `print $eflags`
/// show them.
pub fn eflags_text(v: u64) -> String {
    let mut s = String::from("[ ");
    for (bit, name) in EFLAGS {
        if v >> bit & 1 == 1 {
            s.push_str(name);
            s.push(' ');
        }
    }
    s.push(']');
    s
}

/// Reads a NUL-terminated string from `a`, up to the element limit; true when cut there.
pub(crate) fn read_c_string(
    ctx: &dyn EvalContext,
    a: u64,
    limit: u64,
) -> Result<(Vec<u8>, bool), ExprError> {
    let limit = limit.min(1 << 20) as usize;
    let mut out = Vec::new();
    let mut chunk = [0u8; 64];
    let mut addr = a;
    while out.len() < limit {
        // A chunk may cross into an unmapped page: fall back to single bytes there.
        let got: &[u8] = if ctx.read_memory(addr, &mut chunk).is_ok() {
            &chunk
        } else {
            ctx.read_memory(addr, &mut chunk[..1])?;
            &chunk[..1]
        };
        for &c in got {
            if c == 0 {
                return Ok((out, false));
            }
            out.push(c);
            if out.len() == limit {
                break;
            }
        }
        addr = addr.wrapping_add(got.len() as u64);
    }
    // Cut at the limit, unless the string ends exactly there.
    let mut next = [0u8; 1];
    let ends = ctx.read_memory(addr, &mut next).is_ok() && next[0] == 0;
    Ok((out, !ends))
}

/// Parsed `x/NFU`: count, format letter, unit size.
fn parse_examine_format(fmt: &str) -> Result<(usize, char, Option<usize>), ExprError> {
    let fmt = fmt.trim_start_matches('/');
    let digits: String = fmt.chars().take_while(|c| c.is_ascii_digit()).collect();
    let count = if digits.is_empty() {
        1
    } else {
        digits
            .parse()
            .map_err(|_| ExprError::Other(format!("Invalid number \"{digits}\".")))?
    };
    let mut letter = 'x';
    let mut unit = None;
    for c in fmt[digits.len()..].chars() {
        match c {
            'b' => unit = Some(1),
            'h' => unit = Some(2),
            'w' => unit = Some(4),
            'g' => unit = Some(8),
            'x' | 'd' | 'u' | 'o' | 't' | 'c' | 'a' | 's' | 'f' | 'z' | 'i' => letter = c,
            other => {
                return Err(ExprError::Other(format!(
                    "Undefined output format \"{other}\"."
                )))
            }
        }
    }
    Ok((count, letter, unit))
}

/// `x/NFU ADDR` (`fmt` is the `NFU` part, possibly empty: one word in hex): gdb's rows
/// `ADDRESS <sym+off>:\tv\tv…`, each row ending in a newline; `i` disassembles.
pub fn format_examine(ctx: &dyn EvalContext, addr: u64, fmt: &str) -> Result<String, ExprError> {
    let (count, letter, unit) = parse_examine_format(fmt)?;
    if letter == 'i' {
        let pc = ctx.register("pc");
        return crate::disasm::disassemble(ctx, addr, count, pc);
    }
    let label = |a: u64| match ctx.symbol_for(a) {
        Some(s) => format!("{a:#x} <{s}>:"),
        None => format!("{a:#x}:"),
    };
    let mut out = String::new();
    if letter == 's' {
        let mut a = addr;
        for _ in 0..count {
            let (s, cut) = read_c_string(ctx, a, ELEMENT_LIMIT)?;
            let text = string_text(&s, cut, ELEMENT_LIMIT, REPEAT_THRESHOLD);
            out.push_str(&format!("{}\t{text}\n", label(a)));
            a = a.wrapping_add(s.len() as u64 + if cut { 0 } else { 1 });
        }
        return Ok(out);
    }
    let size = match (letter, unit) {
        ('c', None) => 1,
        ('a', _) => 8,
        ('f', None) => 8,
        (_, Some(u)) => u,
        (_, None) => 4,
    };
    let per_line = match (letter, size) {
        ('c', _) | (_, 1) | (_, 2) => 8,
        (_, 4) => 4,
        _ => 2,
    };
    // Refuse what could not be shown anyway rather than allocate without bound.
    if count.saturating_mul(size) > MAX_EXAMINE {
        return Err(ExprError::other("Too many units requested."));
    }
    let mut bytes = vec![0u8; count * size];
    // Which units are readable: all at once, else one by one up to the first failure.
    let mut readable = count;
    if ctx.read_memory(addr, &mut bytes).is_err() {
        readable = 0;
        while readable < count {
            let a = addr.wrapping_add((readable * size) as u64);
            if ctx
                .read_memory(a, &mut bytes[readable * size..(readable + 1) * size])
                .is_err()
            {
                break;
            }
            readable += 1;
        }
    }
    for (i, chunk) in bytes.chunks(size).enumerate() {
        if i % per_line == 0 {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&label(addr.wrapping_add((i * size) as u64)));
        }
        out.push('\t');
        if i == readable {
            // gdb reports the failure in place of the first unreadable unit.
            let a = addr.wrapping_add((i * size) as u64);
            out.push_str(&AccessError::Memory(a).to_string());
            return Err(ExprError::Other(out));
        }
        out.push_str(&examine_unit(ctx, letter, chunk));
    }
    out.push('\n');
    Ok(out)
}

/// One unit of `x` output in format `letter`.
fn examine_unit(ctx: &dyn EvalContext, letter: char, chunk: &[u8]) -> String {
    let size = chunk.len();
    let u = le_u64(chunk);
    match letter {
        'x' | 'z' => format!("0x{u:0width$x}", width = size * 2),
        'd' => sign_extend(u, size as u64).to_string(),
        'u' => u.to_string(),
        'o' if u == 0 => "0".into(),
        'o' => format!("0{u:o}"),
        't' => format!("{u:0width$b}", width = size * 8),
        'c' => char_text(u as u8, true),
        'a' => match ctx.symbol_for(u) {
            Some(s) => format!("{u:#x} <{s}>"),
            None => format!("{u:#x}"),
        },
        'f' if size == 4 || size == 8 => float_text(chunk),
        _ => sign_extend(u, size as u64).to_string(),
    }
}

/// Formats a value as frame lines and `info locals` show it: a pointer without its type
/// (`p=0x7ffe…`), a reference as `@0x7ffe…: value`, everything else as [`format_value`].
pub fn format_value_bare(v: &Value, ctx: &dyn EvalContext) -> String {
    render_value(v, ctx, &PrintOptions::default(), At::Bare)
}
