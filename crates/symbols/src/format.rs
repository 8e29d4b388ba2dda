//! Values printed exactly as gdb prints them (`print`, `info locals`, stop lines, `x`).

use crate::expr::{EvalContext, ExprError, TablesOf};
use crate::types::{Language, Type};
use crate::value::{Shape, Ty, Value};

/// gdb's `repeat-count-threshold`: runs longer than this print as `<repeats N times>`.
const REPEAT_THRESHOLD: usize = 10;
/// gdb's `print elements` limit.
const ELEMENT_LIMIT: usize = 200;

/// Formats a value as `print` shows it; `fmt` is print's `/x`, `/d`, `/u`, `/o`, `/t`, `/c`,
/// `/a`, `/f`, `/z`. A pointer at top level shows its type: `(int *) 0x…`.
pub fn format_value(v: &Value, ctx: &dyn EvalContext, fmt: Option<char>) -> String {
    let f = Formatter {
        ctx,
        fmt,
        rust: ctx.language() == Language::Rust,
        prefix: true,
    };
    f.value(&v.ty, &v.bytes, true)
}

/// Formats a value as frame lines and `info locals` show it: pointers without their type.
pub fn format_value_bare(v: &Value, ctx: &dyn EvalContext) -> String {
    let f = Formatter {
        ctx,
        fmt: None,
        rust: ctx.language() == Language::Rust,
        prefix: false,
    };
    f.value(&v.ty, &v.bytes, true)
}

struct Formatter<'a> {
    ctx: &'a dyn EvalContext,
    fmt: Option<char>,
    rust: bool,
    /// Show a top-level pointer's type.
    prefix: bool,
}

fn uint(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = bytes.len().min(8);
    b[..n].copy_from_slice(&bytes[..n]);
    u64::from_le_bytes(b)
}

fn sint(bytes: &[u8]) -> i64 {
    let size = bytes.len().clamp(1, 8) as u32;
    let v = uint(bytes);
    if size == 8 {
        v as i64
    } else {
        ((v << (64 - size * 8)) as i64) >> (64 - size * 8)
    }
}

/// gdb's `%g` with `digits` significant digits (9 for float, 17 for double).
pub fn format_float(x: f64, digits: usize) -> String {
    if x.is_nan() {
        return if x.is_sign_negative() {
            "-nan(0x8000000000000)".into()
        } else {
            "nan(0x8000000000000)".into()
        };
    }
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

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// A character as gdb quotes it inside '' or "".
fn escape_char(c: u8, quote: char) -> String {
    match c {
        0 => "\\000".into(),
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

/// Bytes as gdb prints a char array: quoted runs, long runs as `'c' <repeats N times>`.
fn char_run_string(bytes: &[u8], limit_hit: bool) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut quoted = String::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let mut run = 1;
        while i + run < bytes.len() && bytes[i + run] == c {
            run += 1;
        }
        if run > REPEAT_THRESHOLD {
            if !quoted.is_empty() {
                parts.push(format!("\"{quoted}\""));
                quoted.clear();
            }
            parts.push(format!("'{}' <repeats {run} times>", escape_char(c, '\'')));
            i += run;
        } else {
            quoted.push_str(&escape_char(c, '"'));
            i += 1;
        }
    }
    if !quoted.is_empty() || parts.is_empty() {
        parts.push(format!("\"{quoted}\""));
    }
    let mut s = parts.join(", ");
    if limit_hit {
        s.push_str("...");
    }
    s
}

impl Formatter<'_> {
    fn t(&self) -> TablesOf<'_> {
        TablesOf(self.ctx)
    }

    fn int_with_fmt(&self, bytes: &[u8], signed: bool) -> Option<String> {
        let size = bytes.len().max(1);
        let u = uint(bytes)
            & if size >= 8 {
                u64::MAX
            } else {
                (1u64 << (size * 8)) - 1
            };
        Some(match self.fmt? {
            'x' => format!("{u:#x}"),
            'z' => format!("0x{u:0width$x}", width = size * 2),
            'o' => {
                if u == 0 {
                    "0".into()
                } else {
                    format!("0{u:o}")
                }
            }
            't' => format!("{u:b}"),
            'd' => sint(bytes).to_string(),
            'u' => u.to_string(),
            'c' => {
                let c = u as u8;
                format!("{} '{}'", c as i8, escape_char(c, '\''))
            }
            'a' => self.address(u),
            'f' => {
                if signed {
                    sint(bytes).to_string()
                } else {
                    u.to_string()
                }
            }
            _ => return None,
        })
    }

    /// `0x401136 <main+4>`.
    fn address(&self, a: u64) -> String {
        match self.ctx.symbol_for(a) {
            Some(s) => format!("{a:#x} <{s}>"),
            None => format!("{a:#x}"),
        }
    }

    fn value(&self, ty: &Ty, bytes: &[u8], top: bool) -> String {
        let t = self.t();
        match ty.shape(&t) {
            Shape::Int { signed, .. } => {
                if let Some(s) = self.int_with_fmt(bytes, signed) {
                    return s;
                }
                if signed {
                    sint(bytes).to_string()
                } else {
                    uint(bytes).to_string()
                }
            }
            Shape::Char { signed, .. } => {
                if let Some(s) = self.int_with_fmt(bytes, signed) {
                    if self.fmt != Some('c') {
                        return s;
                    }
                }
                let c = uint(bytes) as u8;
                let n = if signed { c as i8 as i64 } else { c as i64 };
                format!("{n} '{}'", escape_char(c, '\''))
            }
            Shape::Utf(_) => {
                let u = uint(bytes) as u32;
                let c = char::from_u32(u).unwrap_or('?');
                format!("{u} '{c}'")
            }
            Shape::Bool(_) => {
                if let Some(s) = self.int_with_fmt(bytes, false) {
                    return s;
                }
                match uint(bytes) {
                    0 => "false".into(),
                    1 => "true".into(),
                    n => n.to_string(),
                }
            }
            Shape::Float(size) => {
                if self.fmt.is_some_and(|f| f != 'f') {
                    if let Some(s) = self.int_with_fmt(bytes, true) {
                        return s;
                    }
                }
                if size == 4 && bytes.len() >= 4 {
                    let f = f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
                    format_float(f as f64, 9)
                } else if bytes.len() >= 8 {
                    let mut b = [0u8; 8];
                    b.copy_from_slice(&bytes[..8]);
                    format_float(f64::from_le_bytes(b), 17)
                } else {
                    "<invalid float>".into()
                }
            }
            Shape::Enum(_) => {
                if let Some(s) = self.int_with_fmt(bytes, true) {
                    return s;
                }
                let v = sint(bytes);
                if let Some((Type::Enum { values, .. }, ..)) = ty.resolve(&t) {
                    if let Some((n, _)) = values.iter().find(|(_, x)| *x == v) {
                        return n.clone();
                    }
                }
                v.to_string()
            }
            Shape::Pointer(p) => self.pointer(ty, &p, uint(bytes), top),
            Shape::Function => {
                let a = uint(bytes);
                format!("{{{}}} {}", ty.name(&t), self.address(a))
            }
            Shape::Array(elem, count) => self.array(&elem, count, bytes),
            Shape::Struct(_) => self.aggregate(ty, bytes),
            Shape::Void => "void".into(),
            Shape::Unknown => "<unknown type>".into(),
        }
    }

    fn pointer(&self, ty: &Ty, pointee: &Ty, a: u64, top: bool) -> String {
        let t = self.t();
        if let Some(s) = self.int_with_fmt(&a.to_le_bytes(), false) {
            return s;
        }
        if *ty == Ty::Code {
            return format!("(void (*)()) {}", self.address(a));
        }
        match pointee.shape(&t) {
            Shape::Char { size: 1, .. } => {
                if a == 0 {
                    return "0x0".into();
                }
                match self.c_string(a) {
                    Ok((s, more)) => format!("{a:#x} {}", char_run_string(&s, more)),
                    Err(_) => format!("{a:#x} <error: Cannot access memory at address {a:#x}>"),
                }
            }
            Shape::Function => format!("{{{}}} {}", pointee.name(&t), self.address(a)),
            _ if top && self.prefix => format!("({}) {a:#x}", ty.name(&t)),
            _ => format!("{a:#x}"),
        }
    }

    /// Reads a NUL-terminated string (up to gdb's element limit).
    fn c_string(&self, a: u64) -> Result<(Vec<u8>, bool), ExprError> {
        let mut out = Vec::new();
        let mut chunk = [0u8; 64];
        let mut addr = a;
        while out.len() < ELEMENT_LIMIT {
            if self.ctx.read_memory(addr, &mut chunk).is_err() {
                // Near the end of a mapping: byte by byte.
                let mut b = [0u8; 1];
                self.ctx.read_memory(addr, &mut b)?;
                if b[0] == 0 {
                    return Ok((out, false));
                }
                out.push(b[0]);
                addr += 1;
                continue;
            }
            for &c in chunk.iter() {
                if c == 0 {
                    return Ok((out, false));
                }
                out.push(c);
                if out.len() == ELEMENT_LIMIT {
                    return Ok((out, true));
                }
            }
            addr += chunk.len() as u64;
        }
        Ok((out, true))
    }

    fn array(&self, elem: &Ty, count: Option<u64>, bytes: &[u8]) -> String {
        let t = self.t();
        let es = elem.size(&t).unwrap_or(1).max(1) as usize;
        let n = count
            .map(|c| c as usize)
            .unwrap_or(bytes.len() / es)
            .min(bytes.len() / es);
        if matches!(elem.shape(&t), Shape::Char { size: 1, .. }) && self.fmt.is_none() {
            let mut s = &bytes[..n];
            // A trailing NUL is the terminator, not content (print null-stop off).
            if s.last() == Some(&0) {
                s = &s[..s.len() - 1];
            }
            let limit = s.len() > ELEMENT_LIMIT;
            let s = &s[..s.len().min(ELEMENT_LIMIT)];
            // A run of NULs to the end of the array is shown as repeats.
            return char_run_string(s, limit);
        }
        let elems: Vec<String> = (0..n.min(ELEMENT_LIMIT))
            .map(|i| self.value(elem, &bytes[i * es..(i + 1) * es], false))
            .collect();
        let mut parts = Vec::new();
        let mut i = 0;
        while i < elems.len() {
            let mut run = 1;
            while i + run < elems.len() && elems[i + run] == elems[i] {
                run += 1;
            }
            if run > REPEAT_THRESHOLD {
                parts.push(format!("{} <repeats {run} times>", elems[i]));
                i += run;
            } else {
                parts.push(elems[i].clone());
                i += 1;
            }
        }
        let more = if n > ELEMENT_LIMIT { "..." } else { "" };
        if self.rust {
            format!("[{}{more}]", parts.join(", "))
        } else {
            format!("{{{}{more}}}", parts.join(", "))
        }
    }

    fn aggregate(&self, ty: &Ty, bytes: &[u8]) -> String {
        let t = self.t();
        let Some((Type::Struct { name, members, .. }, module, _)) = ty.resolve(&t) else {
            return "{...}".into();
        };
        // Rust's &str and slices: {data_ptr, length}.
        if self.rust {
            if let (Some(n), 2) = (name.as_deref(), members.len()) {
                if n == "&str" {
                    let ptr = uint(&bytes[..8.min(bytes.len())]);
                    let len = bytes.get(8..16).map(uint).unwrap_or(0) as usize;
                    let mut b = vec![0u8; len.min(4096)];
                    return match self.ctx.read_memory(ptr, &mut b) {
                        Ok(()) => char_run_string(&b, len > 4096),
                        Err(_) => format!("<error: Cannot access memory at address {ptr:#x}>"),
                    };
                }
            }
        }
        let mut fields = Vec::new();
        let tuple = self.rust
            && members.iter().all(|m| {
                m.name
                    .as_deref()
                    .map(|n| n.starts_with("__"))
                    .unwrap_or(false)
            });
        for m in members {
            let mty = Ty::Table { module, id: m.ty };
            let size = mty.size(&t).unwrap_or(0) as usize;
            let off = m.offset as usize;
            let text = if let Some((bit, bits)) =
                m.bits.filter(|(b, n)| *n > 0 && *n <= 64 && *b < 1024)
            {
                let mut raw = 0u128;
                for (i, b) in bytes.iter().enumerate().take(16) {
                    raw |= (*b as u128) << (8 * i);
                }
                let start = (off as u64 * 8 + bit).min(127);
                let mut x = (raw >> start) & ((1u128 << bits) - 1);
                if matches!(mty.shape(&t), Shape::Int { signed: true, .. })
                    && bits > 0
                    && (x >> (bits - 1)) & 1 == 1
                {
                    x |= !((1u128 << bits) - 1);
                }
                let b = (x as i128).to_le_bytes();
                self.value(&mty, &b[..size.max(1)], false)
            } else {
                match bytes.get(off..off + size) {
                    Some(b) => self.value(&mty, b, false),
                    None => "<unavailable>".into(),
                }
            };
            let mname = m.name.clone().unwrap_or_default();
            if tuple {
                fields.push(text);
            } else if self.rust {
                fields.push(format!("{mname}: {text}"));
            } else if m.name.is_none() {
                fields.push(text);
            } else {
                fields.push(format!("{mname} = {text}"));
            }
        }
        if self.rust {
            let n = name.clone().unwrap_or_default();
            if tuple {
                return format!("({})", fields.join(", "));
            }
            return format!("{n} {{{}}}", fields.join(", "));
        }
        format!("{{{}}}", fields.join(", "))
    }
}

/// `x/NFU ADDRESS`: gdb's rows of `ADDRESS <sym+off>:\tv\tv…`.
pub fn format_examine(ctx: &dyn EvalContext, addr: u64, fmt: &str) -> Result<String, ExprError> {
    let digits: String = fmt.chars().take_while(|c| c.is_ascii_digit()).collect();
    let count: usize = if digits.is_empty() {
        1
    } else {
        digits.parse().unwrap_or(1)
    };
    let mut letter = 'x';
    let mut unit = 'w';
    for c in fmt[digits.len()..].chars() {
        match c {
            'b' | 'h' | 'w' | 'g' => unit = c,
            'x' | 'd' | 'u' | 'o' | 't' | 'c' | 'a' | 's' | 'f' | 'z' => letter = c,
            'i' => {
                return Err(ExprError::Other(
                    "The x/i format (disassembly) is not supported yet.".into(),
                ))
            }
            other => {
                return Err(ExprError::Other(format!(
                    "Undefined output format \"{other}\"."
                )))
            }
        }
    }
    let label = |a: u64| match ctx.symbol_for(a) {
        Some(s) => format!("{a:#x} <{s}>:"),
        None => format!("{a:#x}:"),
    };
    let mut out = String::new();
    if letter == 's' {
        let mut a = addr;
        for _ in 0..count {
            let f = Formatter {
                ctx,
                fmt: None,
                rust: false,
                prefix: false,
            };
            let (s, more) = f.c_string(a)?;
            out.push_str(&format!("{}\t{}\n", label(a), char_run_string(&s, more)));
            a += s.len() as u64 + 1;
        }
        return Ok(out);
    }
    if letter == 'c' {
        unit = 'b';
    }
    if letter == 'a' {
        unit = 'g';
    }
    let size = match unit {
        'b' => 1,
        'h' => 2,
        'w' => 4,
        _ => 8,
    };
    let per_line = match (letter, size) {
        ('c', _) => 8,
        (_, 1) => 8,
        (_, 2) => 8,
        (_, 4) => 4,
        _ => 2,
    };
    let mut bytes = vec![0u8; count * size];
    ctx.read_memory(addr, &mut bytes)?;
    for (i, chunk) in bytes.chunks(size).enumerate() {
        if i % per_line == 0 {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&label(addr + (i * size) as u64));
        }
        let u = uint(chunk);
        let text = match letter {
            'x' => format!("0x{u:0width$x}", width = size * 2),
            'z' => format!("0x{u:0width$x}", width = size * 2),
            'd' => sint(chunk).to_string(),
            'u' => u.to_string(),
            'o' => format!("0{u:o}"),
            't' => format!("{u:0width$b}", width = size * 8),
            'c' => format!("{} '{}'", u as u8 as i8, escape_char(u as u8, '\'')),
            'a' => match ctx.symbol_for(u) {
                Some(s) => format!("{u:#x} <{s}>"),
                None => format!("{u:#x}"),
            },
            'f' => {
                if size == 4 {
                    format_float(
                        f32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]) as f64,
                        9,
                    )
                } else if size == 8 {
                    format_float(f64::from_le_bytes(chunk.try_into().unwrap_or([0; 8])), 17)
                } else {
                    sint(chunk).to_string()
                }
            }
            _ => u.to_string(),
        };
        out.push('\t');
        out.push_str(&text);
    }
    out.push('\n');
    Ok(out)
}
