//! Values printed exactly as gdb 13 prints them (`print`, `print/FMT`, `info locals`, stop
//! lines) and memory as `x/NFU` shows it.
//!
//! gdb's defaults are built in: `print elements 200`, `repeats 10`, `print null-stop off`,
//! `print symbol on`.

use crate::expr::{EvalContext, ExprError};
use crate::target::AccessError;
use crate::types::{Language, Type};
use crate::value::{le_u64, sign_extend, Shape, TypeHandle, Value};

/// gdb's `repeat-count-threshold`: runs *longer* than this print as `<repeats N times>`.
const REPEAT_THRESHOLD: usize = 10;
/// gdb's `print elements` limit.
const ELEMENT_LIMIT: usize = 200;
/// The most bytes one `x` command reads.
const MAX_EXAMINE: usize = 1 << 24;

/// Formats a value as `print` shows it after `$N = `; `fmt` is print's `/x`, `/d`, `/u`,
/// `/o`, `/t`, `/c`, `/a`, `/f`, `/z`, `/s` letter, applied to every scalar inside.
pub fn format_value(v: &Value, ctx: &dyn EvalContext, fmt: Option<char>) -> String {
    let fmt = fmt.filter(|f| *f != 's');
    let f = Formatter {
        ctx,
        fmt,
        rust: ctx.language() == Language::Rust,
        depth: Default::default(),
    };
    f.value(&v.ty, &v.bytes, true)
}

struct Formatter<'a> {
    ctx: &'a dyn EvalContext,
    fmt: Option<char>,
    rust: bool,
    /// Nesting of the value being formatted: malformed DWARF can make a struct contain
    /// itself, which must not recurse without end.
    depth: std::cell::Cell<usize>,
}

/// Deeper aggregates than this print as `{...}`.
const MAX_NESTING: usize = 64;

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
fn float_text(bytes: &[u8]) -> String {
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
fn escape_char(c: u8, quote: char) -> String {
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
fn char_text(c: u8, signed: bool) -> String {
    let n = if signed { c as i8 as i64 } else { c as i64 };
    format!("{n} '{}'", escape_char(c, '\''))
}

/// Bytes as gdb prints a string: quoted runs, runs of one byte longer than the threshold as
/// `'c' <repeats N times>`. At most `print elements` characters are shown (a repeat block
/// counts as the threshold), then `...`; `more` forces the `...` (the source went on).
fn string_text(bytes: &[u8], more: bool) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut quoted = String::new();
    let mut printed = 0;
    let mut i = 0;
    while i < bytes.len() && printed < ELEMENT_LIMIT {
        let c = bytes[i];
        let run = bytes[i..].iter().take_while(|b| **b == c).count();
        if run > REPEAT_THRESHOLD {
            if !quoted.is_empty() {
                parts.push(format!("\"{quoted}\""));
                quoted.clear();
            }
            parts.push(format!("'{}' <repeats {run} times>", escape_char(c, '\'')));
            i += run;
            printed += REPEAT_THRESHOLD;
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
fn read_c_string(
    ctx: &dyn EvalContext,
    a: u64,
    limit: usize,
) -> Result<(Vec<u8>, bool), ExprError> {
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

impl Formatter<'_> {
    /// A scalar under `/FMT`; `None` when there is no format letter.
    fn int_with_fmt(&self, bytes: &[u8], float: bool) -> Option<String> {
        let fmt = self.fmt?;
        let size = bytes.len().clamp(1, 8);
        let u = le_u64(bytes)
            & if size >= 8 {
                u64::MAX
            } else {
                (1u64 << (size * 8)) - 1
            };
        Some(match fmt {
            'x' => format!("{u:#x}"),
            'z' => format!("0x{u:0width$x}", width = size * 2),
            'o' if u == 0 => "0".into(),
            'o' => format!("0{u:o}"),
            't' => format!("{u:b}"),
            'd' => sign_extend(u, size as u64).to_string(),
            'u' => u.to_string(),
            'c' => char_text(u as u8, true),
            'a' => self.address(u),
            'f' if float => float_text(bytes),
            // `/f` on an integer reinterprets its bytes as a float of that size.
            'f' if size == 4 || size == 8 => float_text(&bytes[..size]),
            'f' => sign_extend(u, size as u64).to_string(),
            _ => return None,
        })
    }

    /// `0x401136 <main+4>` (`print symbol on`).
    fn address(&self, a: u64) -> String {
        match self.ctx.symbol_for(a) {
            Some(s) => format!("{a:#x} <{s}>"),
            None => format!("{a:#x}"),
        }
    }

    fn value(&self, ty: &TypeHandle, bytes: &[u8], top: bool) -> String {
        let depth = self.depth.get();
        if depth > MAX_NESTING {
            return "{...}".into();
        }
        self.depth.set(depth + 1);
        let text = self.value_at_depth(ty, bytes, top);
        self.depth.set(depth);
        text
    }

    fn value_at_depth(&self, ty: &TypeHandle, bytes: &[u8], top: bool) -> String {
        let shape = ty.shape();
        if bytes.is_empty() && !matches!(shape, Shape::Void | Shape::Struct(0)) {
            return "<optimized out>".into();
        }
        match shape {
            Shape::Int { signed, size } => {
                if let Some(s) = self.int_with_fmt(bytes, false) {
                    return s;
                }
                if matches!(ty.get(), Type::Base { name, .. } if name == "i386_eflags") {
                    return eflags_text(le_u64(bytes));
                }
                if signed {
                    sign_extend(le_u64(bytes), size).to_string()
                } else {
                    le_u64(bytes).to_string()
                }
            }
            Shape::Char { signed, .. } => match self.int_with_fmt(bytes, false) {
                Some(s) => s,
                None => char_text(bytes[0], signed),
            },
            Shape::Utf(_) => {
                if let Some(s) = self.int_with_fmt(bytes, false) {
                    return s;
                }
                let u = le_u64(bytes) as u32;
                match char::from_u32(u) {
                    Some(c) if u < 128 => {
                        format!("{u} {}", format_args!("'{}'", escape_char(c as u8, '\'')))
                    }
                    // gdb writes every non-ASCII scalar as an escape, six hex digits wide.
                    _ => format!("{u} '\\u{{{u:06x}}}'"),
                }
            }
            Shape::Bool(_) => {
                if let Some(s) = self.int_with_fmt(bytes, false) {
                    return s;
                }
                match le_u64(bytes) {
                    0 => "false".into(),
                    1 => "true".into(),
                    n => n.to_string(),
                }
            }
            Shape::Float(_) => match self.int_with_fmt(bytes, true) {
                Some(s) => s,
                None => float_text(bytes),
            },
            Shape::Enum(_) => match self.int_with_fmt(bytes, false) {
                Some(s) => s,
                None => self.enumerator(ty, bytes),
            },
            Shape::Pointer(p) => self.pointer(ty, p.as_ref(), le_u64(bytes), top),
            Shape::Function => {
                let a = le_u64(bytes);
                if self.fmt.is_some() {
                    // A function's value under a format is its first code byte.
                    let mut code = [0u8; 1];
                    return match self.ctx.read_memory(a, &mut code) {
                        Ok(()) => self.int_with_fmt(&code, false).unwrap_or_default(),
                        Err(e) => format!("<error: {e}>"),
                    };
                }
                format!("{{{}}} {}", ty.name(), self.address(a))
            }
            Shape::Array(elem, count) => self.array(&elem, count, bytes),
            Shape::Struct(_) => self.aggregate(ty, bytes),
            Shape::Void => "void".into(),
            Shape::Unknown => "<unknown type>".into(),
        }
    }

    /// An enum value: its enumerator, `(A | B)` for flag enums, or the number.
    fn enumerator(&self, ty: &TypeHandle, bytes: &[u8]) -> String {
        let Some(Type::Enum {
            values,
            signed,
            size,
            ..
        }) = ty.strip().map(|t| t.get().clone())
        else {
            return le_u64(bytes).to_string();
        };
        let v = if signed {
            sign_extend(le_u64(bytes), size)
        } else {
            le_u64(bytes) as i64
        };
        if let Some((n, _)) = values.iter().find(|(_, x)| *x == v) {
            return n.clone();
        }
        // A flag enum: every enumerator is non-negative and no two share a bit.
        let mut seen = 0u64;
        let flag = values.iter().all(|(_, x)| {
            let ok = *x >= 0 && (*x as u64 & seen) == 0;
            seen |= *x as u64;
            ok
        });
        if !flag || v <= 0 {
            return v.to_string();
        }
        let mut rest = v as u64;
        let mut parts = Vec::new();
        for (n, x) in &values {
            let x = *x as u64;
            if x != 0 && rest & x == x {
                parts.push(n.clone());
                rest &= !x;
            }
        }
        if rest != 0 {
            parts.push(format!("unknown: {rest:#x}"));
        }
        format!("({})", parts.join(" | "))
    }

    fn pointer(&self, ty: &TypeHandle, pointee: Option<&TypeHandle>, a: u64, top: bool) -> String {
        if ty.is_reference() {
            return self.reference(ty, pointee, a, top);
        }
        if let Some(s) = self.int_with_fmt(&a.to_le_bytes(), false) {
            return s;
        }
        let shape = pointee.map(|p| p.shape());
        match shape {
            Some(Shape::Char { size: 1, .. }) if !self.rust => {
                if a == 0 {
                    return "0x0".into();
                }
                match read_c_string(self.ctx, a, ELEMENT_LIMIT) {
                    Ok((s, cut)) => format!("{a:#x} {}", string_text(&s, cut)),
                    Err(_) => format!("{a:#x} <error: Cannot access memory at address {a:#x}>"),
                }
            }
            _ => {
                // `print symbol on`: functions and static data get their symbol.
                let shown = self.address(a);
                if !top {
                    return shown;
                }
                if !self.rust {
                    return format!("({}) {shown}", ty.name());
                }
                let s = ty.strip().unwrap_or_else(|| ty.clone());
                let mut text = format!("({}) {shown}", s.rust_name());
                // A pointer to a byte array shows the bytes: `b"abc"`.
                if let Some(Shape::Array(elem, Some(n))) = shape {
                    if matches!(elem.get(), Type::Base { name, .. } if name == "u8") {
                        let mut b = vec![0u8; (n as usize).min(ELEMENT_LIMIT)];
                        if self.ctx.read_memory(a, &mut b).is_ok() {
                            text.push_str(" b");
                            text.push_str(&string_text(&b, n as usize > b.len()));
                        }
                    }
                }
                text
            }
        }
    }

    /// A C++ reference: `(int &) @0x7ffe…: 5`; inside aggregates only `@0x7ffe…`.
    fn reference(
        &self,
        ty: &TypeHandle,
        pointee: Option<&TypeHandle>,
        a: u64,
        top: bool,
    ) -> String {
        if !top {
            return format!("@{a:#x}");
        }
        let referent = pointee.map(|p| {
            let mut b = vec![0u8; p.size().unwrap_or(0).min(1 << 16) as usize];
            match self.ctx.read_memory(a, &mut b) {
                Ok(()) => self.value(p, &b, false),
                Err(e) => format!("<error: {e}>"),
            }
        });
        match referent {
            Some(r) => format!("({}) @{a:#x}: {r}", ty.name()),
            None => format!("({}) @{a:#x}", ty.name()),
        }
    }

    fn array(&self, elem: &TypeHandle, count: Option<u64>, bytes: &[u8]) -> String {
        let es = elem.size().unwrap_or(1).max(1) as usize;
        let n = count
            .map(|c| c as usize)
            .unwrap_or(bytes.len() / es)
            .min(bytes.len() / es);
        if matches!(elem.shape(), Shape::Char { size: 1, .. }) && self.fmt.is_none() && !self.rust {
            let mut s = &bytes[..n];
            // With `print null-stop off`, one trailing NUL is the terminator, not content.
            if s.last() == Some(&0) {
                s = &s[..s.len() - 1];
            }
            return string_text(s, false);
        }
        let mut parts = Vec::new();
        let mut printed = 0;
        let mut i = 0;
        while i < n && printed < ELEMENT_LIMIT {
            let text = self.value(elem, &bytes[i * es..(i + 1) * es], false);
            let elem_bytes = &bytes[i * es..(i + 1) * es];
            let run = (i..n)
                .take_while(|j| &bytes[j * es..(j + 1) * es] == elem_bytes)
                .count();
            if run > REPEAT_THRESHOLD {
                parts.push(format!("{text} <repeats {run} times>"));
                i += run;
                printed += REPEAT_THRESHOLD;
            } else {
                parts.push(text);
                i += 1;
                printed += 1;
            }
        }
        let more = if i < n { "..." } else { "" };
        if self.rust {
            format!("[{}{more}]", parts.join(", "))
        } else {
            format!("{{{}{more}}}", parts.join(", "))
        }
    }

    fn member_text(&self, st: &TypeHandle, m: &crate::types::Member, bytes: &[u8]) -> String {
        let mty = st.child(m.ty);
        let size = mty.size().unwrap_or(0) as usize;
        let off = m.offset as usize;
        if let Some((bit, bits)) = m.bits {
            let signed = matches!(
                mty.shape(),
                Shape::Int { signed: true, .. } | Shape::Char { signed: true, .. }
            );
            let x = crate::expr::eval::extract_bits(bytes, off as u64 * 8 + bit, bits, signed);
            let b = x.to_le_bytes();
            return self.value(&mty, &b[..size.clamp(1, 16)], false);
        }
        match bytes.get(off..off + size) {
            Some(b) => self.value(&mty, b, false),
            None => "<optimized out>".into(),
        }
    }

    fn aggregate(&self, ty: &TypeHandle, bytes: &[u8]) -> String {
        let Some(st) = ty.strip() else {
            return "{...}".into();
        };
        let Type::Struct { name, members, .. } = st.get() else {
            return "{...}".into();
        };
        if self.rust {
            return self.rust_aggregate(&st, name.as_deref().unwrap_or(""), members, bytes);
        }
        let fields: Vec<String> = members
            .iter()
            .map(|m| {
                let text = self.member_text(&st, m, bytes);
                match &m.name {
                    Some(n) => format!("{n} = {text}"),
                    None => text,
                }
            })
            .collect();
        format!("{{{}}}", fields.join(", "))
    }

    fn rust_aggregate(
        &self,
        st: &TypeHandle,
        name: &str,
        members: &[crate::types::Member],
        bytes: &[u8],
    ) -> String {
        // Slices are {data_ptr, length}: `&[i32] [1, 2, 3]`.
        if name.starts_with("&[") || name.starts_with("&mut [") {
            if let Some((elem, ptr, len)) = slice_parts(st, members, bytes) {
                let es = elem.size().unwrap_or(1).max(1);
                let n = len.min((ELEMENT_LIMIT as u64) * REPEAT_THRESHOLD as u64);
                let mut b = vec![0u8; (n * es).min(1 << 20) as usize];
                return match self.ctx.read_memory(ptr, &mut b) {
                    Ok(()) => {
                        let shown = b.len() as u64 / es;
                        let mut text = self.array(&elem, Some(shown), &b);
                        if shown < len && !text.ends_with("...]") {
                            // The slice goes on past what was read.
                            text.insert_str(text.len() - 1, "...");
                        }
                        format!("{name} {text}")
                    }
                    Err(e) => format!("{name} <error: {e}>"),
                };
            }
        }
        // `&str` is {data_ptr, length}: print the text.
        if name == "&str" && self.fmt.is_none() {
            let ptr = le_u64(bytes.get(..8).unwrap_or(&[]));
            let len = le_u64(bytes.get(8..16).unwrap_or(&[])) as usize;
            let mut b = vec![0u8; len.min(ELEMENT_LIMIT)];
            return match self.ctx.read_memory(ptr, &mut b) {
                Ok(()) => string_text(&b, len > b.len()),
                Err(_) => format!("<error: Cannot access memory at address {ptr:#x}>"),
            };
        }
        let tuple_like = !members.is_empty()
            && members
                .iter()
                .all(|m| m.name.as_deref().is_some_and(|n| n.starts_with("__")));
        let fields: Vec<String> = members
            .iter()
            .map(|m| {
                let text = self.member_text(st, m, bytes);
                match (&m.name, tuple_like) {
                    (Some(n), false) => format!("{n}: {text}"),
                    _ => text,
                }
            })
            .collect();
        if name.starts_with('(') {
            // A tuple: `(1, 2.5)`; the unit type `()`.
            return format!("({})", fields.join(", "));
        }
        if tuple_like {
            return format!("{name} ({})", fields.join(", "));
        }
        if members.is_empty() {
            return name.to_string();
        }
        format!("{name} {{{}}}", fields.join(", "))
    }
}

/// A Rust slice's element type, data pointer and length, from its `{data_ptr, length}` struct.
pub(crate) fn slice_parts(
    st: &TypeHandle,
    members: &[crate::types::Member],
    bytes: &[u8],
) -> Option<(TypeHandle, u64, u64)> {
    let field = |n: &str| members.iter().find(|m| m.name.as_deref() == Some(n));
    let (data, length) = (field("data_ptr")?, field("length")?);
    let Shape::Pointer(Some(elem)) = st.child(data.ty).shape() else {
        return None;
    };
    let at = |off: u64| bytes.get(off as usize..off as usize + 8).map(le_u64);
    Some((elem, at(data.offset)?, at(length.offset)?))
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
            out.push_str(&format!("{}\t{}\n", label(a), string_text(&s, cut)));
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
/// (`p=0x7ffe…`), everything else as [`format_value`].
pub fn format_value_bare(v: &Value, ctx: &dyn EvalContext) -> String {
    let f = Formatter {
        ctx,
        fmt: None,
        rust: ctx.language() == Language::Rust,
        depth: Default::default(),
    };
    f.value(&v.ty, &v.bytes, false)
}
