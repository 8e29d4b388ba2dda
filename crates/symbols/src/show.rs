//! Builds the [`Shown`] tree of a value: its raw structure as DWARF describes it, or what a
//! built-in formatter makes of it (libstdc++ containers, Rust std types; see
//! [`crate::formatters`]), with gdb's rules for formats (`/x`), `print elements`, repeats,
//! strings, references and symbols.

use std::cell::Cell;

use crate::expr::EvalContext;
use crate::format::{char_text, escape_char, float_text, string_text};
use crate::shown::{Child, Kind, Label, Shown};
use crate::types::{Language, Member, MemberKind, Type};
use crate::value::{le_u64, sign_extend, Shape, TypeHandle};

/// gdb's `print` settings that change what is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrintOptions {
    /// `/x`, `/d`…: applied to every scalar inside.
    pub fmt: Option<char>,
    /// `/r`: no formatter, the raw structure.
    pub raw: bool,
    /// `set print elements` (`None`: unlimited).
    pub elements: Option<u64>,
    /// `set print repeats`.
    pub repeats: u64,
    /// `set print pretty`.
    pub pretty: bool,
}

impl Default for PrintOptions {
    fn default() -> Self {
        PrintOptions {
            fmt: None,
            raw: false,
            elements: Some(200),
            repeats: 10,
            pretty: false,
        }
    }
}

/// How a value appears: after `$N = ` (pointers with their type), in a frame line or `info
/// locals` (bare), or inside another value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    /// `print`: `(int *) 0x…`, `(int &) @0x…: 5`.
    Top,
    /// Frame lines and `info locals`: `0x…`, `@0x…: 5`.
    Bare,
    /// Inside an aggregate: `0x…`, `@0x…`.
    Inner,
}

/// Deeper aggregates than this show as `{...}` (malformed DWARF can nest without end).
const MAX_NESTING: usize = 64;

/// The most bytes read for one element sequence.
const MAX_READ: u64 = 1 << 20;

/// Builds shown values for one context.
pub struct Builder<'a> {
    /// The program.
    pub ctx: &'a dyn EvalContext,
    /// The settings.
    pub opts: PrintOptions,
    pub(crate) rust: bool,
    depth: Cell<usize>,
}

impl<'a> Builder<'a> {
    /// A builder for `ctx` with these settings.
    pub fn new(ctx: &'a dyn EvalContext, opts: PrintOptions) -> Builder<'a> {
        Builder {
            ctx,
            opts,
            rust: ctx.language() == Language::Rust,
            depth: Cell::new(0),
        }
    }

    /// The element limit as a count.
    pub(crate) fn limit(&self) -> u64 {
        self.opts.elements.unwrap_or(u64::MAX)
    }

    /// The tree of a value of type `ty` made of `bytes`.
    pub fn value(&self, ty: &TypeHandle, bytes: &[u8], place: At) -> Shown {
        let depth = self.depth.get();
        if depth > MAX_NESTING {
            return Shown::text("{...}");
        }
        self.depth.set(depth + 1);
        let shown = self.value_at_depth(ty, bytes, place);
        self.depth.set(depth);
        shown
    }

    fn value_at_depth(&self, ty: &TypeHandle, bytes: &[u8], place: At) -> Shown {
        let shape = ty.shape();
        if bytes.is_empty() && !matches!(shape, Shape::Void | Shape::Struct(0)) {
            return Shown::text("<optimized out>");
        }
        if !self.opts.raw && self.opts.fmt.is_none() {
            if let Some(s) = crate::formatters::format(self, ty, bytes) {
                return s;
            }
        }
        let text = |s: String| Shown::Text(s);
        match shape {
            Shape::Int { signed, size } => {
                if let Some(s) = self.int_with_fmt(bytes, false) {
                    return text(s);
                }
                if matches!(ty.get(), Type::Base { name, .. } if name == "i386_eflags") {
                    return text(crate::format::eflags_text(le_u64(bytes)));
                }
                text(if signed {
                    sign_extend(le_u64(bytes), size).to_string()
                } else {
                    le_u64(bytes).to_string()
                })
            }
            Shape::Char { signed, .. } => text(
                self.int_with_fmt(bytes, false)
                    .unwrap_or_else(|| char_text(bytes[0], signed)),
            ),
            Shape::Utf(_) => {
                if let Some(s) = self.int_with_fmt(bytes, false) {
                    return text(s);
                }
                let u = le_u64(bytes) as u32;
                text(match char::from_u32(u) {
                    Some(c) if u < 128 => format!("{u} '{}'", escape_char(c as u8, '\'')),
                    // gdb writes every non-ASCII scalar as an escape, six hex digits wide.
                    _ => format!("{u} '\\u{{{u:06x}}}'"),
                })
            }
            Shape::Bool(_) => {
                if let Some(s) = self.int_with_fmt(bytes, false) {
                    return text(s);
                }
                text(match le_u64(bytes) {
                    0 => "false".into(),
                    1 => "true".into(),
                    n => n.to_string(),
                })
            }
            Shape::Float(_) => text(
                self.int_with_fmt(bytes, true)
                    .unwrap_or_else(|| float_text(bytes)),
            ),
            Shape::Enum(_) => text(
                self.int_with_fmt(bytes, false)
                    .unwrap_or_else(|| enumerator(ty, bytes)),
            ),
            Shape::Pointer(p) => self.pointer(ty, p.as_ref(), le_u64(bytes), place),
            Shape::Function => {
                let a = le_u64(bytes);
                if self.opts.fmt.is_some() {
                    // A function's value under a format is its first code byte.
                    let mut code = [0u8; 1];
                    return text(match self.ctx.read_memory(a, &mut code) {
                        Ok(()) => self.int_with_fmt(&code, false).unwrap_or_default(),
                        Err(e) => format!("<error: {e}>"),
                    });
                }
                text(format!("{{{}}} {}", ty.name(), self.address(a)))
            }
            Shape::Array(elem, count) => self.array(&elem, count, bytes),
            Shape::Struct(_) => self.aggregate(ty, bytes),
            Shape::Void => text("void".into()),
            Shape::Unknown => text("<unknown type>".into()),
        }
    }

    /// A scalar under `/FMT`; `None` when there is no format letter.
    pub(crate) fn int_with_fmt(&self, bytes: &[u8], float: bool) -> Option<String> {
        let fmt = self.opts.fmt?;
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
    pub(crate) fn address(&self, a: u64) -> String {
        match self.ctx.symbol_for(a) {
            Some(s) => format!("{a:#x} <{s}>"),
            None => format!("{a:#x}"),
        }
    }

    fn pointer(&self, ty: &TypeHandle, pointee: Option<&TypeHandle>, a: u64, place: At) -> Shown {
        if ty.is_reference() {
            return self.reference(ty, pointee, a, place);
        }
        if let Some(s) = self.int_with_fmt(&a.to_le_bytes(), false) {
            return Shown::Text(s);
        }
        let shape = pointee.map(|p| p.shape());
        match shape {
            Some(Shape::Char { size: 1, .. }) if !self.rust => {
                if a == 0 {
                    return Shown::text("0x0");
                }
                Shown::Text(
                    match crate::format::read_c_string(self.ctx, a, self.limit()) {
                        Ok((s, cut)) => format!("{a:#x} {}", self.string(&s, cut)),
                        Err(_) => format!("{a:#x} <error: Cannot access memory at address {a:#x}>"),
                    },
                )
            }
            _ => {
                // `print symbol on`: functions and static data get their symbol.
                let shown = self.address(a);
                if place != At::Top {
                    return Shown::Text(shown);
                }
                if !self.rust {
                    return Shown::Text(format!("({}) {shown}", ty.name()));
                }
                let s = ty.strip().unwrap_or_else(|| ty.clone());
                let mut text = format!("({}) {shown}", s.rust_name());
                // A pointer to a byte array shows the bytes: `b"abc"`.
                if let Some(Shape::Array(elem, Some(n))) = shape {
                    if matches!(elem.get(), Type::Base { name, .. } if name == "u8") {
                        let mut b = vec![0u8; n.min(self.limit()).min(MAX_READ) as usize];
                        if self.ctx.read_memory(a, &mut b).is_ok() {
                            text.push_str(" b");
                            text.push_str(&self.string(&b, n as usize > b.len()));
                        }
                    }
                }
                Shown::Text(text)
            }
        }
    }

    /// Bytes as gdb prints a string, with this builder's limits.
    pub(crate) fn string(&self, bytes: &[u8], more: bool) -> String {
        string_text(bytes, more, self.limit(), self.opts.repeats)
    }

    /// A C++ reference: `(int &) @0x7ffe…: 5` at the top, `@0x7ffe…: 5` in frame lines,
    /// `@0x7ffe…` inside aggregates. A referent with a formatter shows as the formatter
    /// alone, as libstdc++'s printers see through references.
    fn reference(&self, ty: &TypeHandle, pointee: Option<&TypeHandle>, a: u64, place: At) -> Shown {
        let referent = pointee.map(|p| {
            let mut b = vec![0u8; p.size().unwrap_or(0).min(1 << 16) as usize];
            match self.ctx.read_memory(a, &mut b) {
                Ok(()) => Ok((p.clone(), b)),
                Err(e) => Err(format!("<error: {e}>")),
            }
        });
        if !self.opts.raw && self.opts.fmt.is_none() {
            if let Some(Ok((p, b))) = &referent {
                if let Some(s) = crate::formatters::format(self, p, b) {
                    return s;
                }
            }
        }
        if place == At::Inner {
            return Shown::Text(format!("@{a:#x}"));
        }
        let prefix = match place {
            At::Top => format!("({}) @{a:#x}:", ty.name()),
            _ => format!("@{a:#x}:"),
        };
        match referent {
            Some(Ok((p, b))) => match self.value(&p, &b, At::Inner) {
                Shown::Text(t) => Shown::Text(format!("{prefix} {t}")),
                Shown::Composite {
                    summary: None,
                    kind,
                    children,
                    more,
                } => Shown::Composite {
                    summary: Some(prefix),
                    kind,
                    children,
                    more,
                },
                Shown::Composite {
                    summary: Some(s),
                    kind,
                    children,
                    more,
                } => Shown::Composite {
                    summary: Some(format!("{prefix} {s}")),
                    kind,
                    children,
                    more,
                },
            },
            Some(Err(e)) => Shown::Text(format!("{prefix} {e}")),
            None => Shown::Text(prefix.trim_end_matches(':').to_string()),
        }
    }

    fn array(&self, elem: &TypeHandle, count: Option<u64>, bytes: &[u8]) -> Shown {
        let es = elem.size().unwrap_or(1).max(1) as usize;
        let n = count
            .map(|c| c as usize)
            .unwrap_or(bytes.len() / es)
            .min(bytes.len() / es);
        if matches!(elem.shape(), Shape::Char { size: 1, .. })
            && self.opts.fmt.is_none()
            && !self.rust
        {
            let mut s = &bytes[..n];
            // With `print null-stop off`, one trailing NUL is the terminator, not content.
            if s.last() == Some(&0) {
                s = &s[..s.len() - 1];
            }
            return Shown::Text(self.string(s, false));
        }
        let (children, more) = self.elements(elem, n as u64, false, |i, out| {
            let i = i as usize;
            out.extend_from_slice(&bytes[i * es..(i + 1) * es]);
            true
        });
        Shown::composite(Kind::Array, children, more)
    }

    /// The elements `0..count` of a sequence whose element `i` `fetch` appends (false: it
    /// could not be read), as gdb lists them: runs of equal elements collapsed, at most
    /// `print elements` of them (a run counting as the repeat threshold). Returns the
    /// children and whether `...` follows: for an array, when elements were left out; for a
    /// formatter's children (`printer`), as gdb does, whenever the limit was reached.
    pub(crate) fn elements(
        &self,
        elem: &TypeHandle,
        count: u64,
        printer: bool,
        mut fetch: impl FnMut(u64, &mut Vec<u8>) -> bool,
    ) -> (Vec<Child>, bool) {
        let limit = self.limit();
        let threshold = self.opts.repeats;
        let mut children = Vec::new();
        let mut printed = 0u64;
        let mut i = 0u64;
        let mut current = Vec::new();
        if count == 0 || !fetch(0, &mut current) {
            return (children, count > 0);
        }
        let mut next = Vec::new();
        while i < count && printed < limit {
            // `current` holds element i; find the run of elements equal to it.
            let mut run = 1u64;
            let mut next_read = false;
            while i + run < count {
                next.clear();
                if !fetch(i + run, &mut next) {
                    break;
                }
                if next != current {
                    next_read = true;
                    break;
                }
                run += 1;
            }
            let shown = self.value(elem, &current, At::Inner);
            if run > threshold {
                children.push(Child {
                    label: Label::Positional,
                    value: shown,
                    repeats: run,
                });
                printed += threshold;
                i += run;
            } else {
                // A short run lists its elements one by one.
                for _ in 0..run {
                    if printed >= limit {
                        break;
                    }
                    children.push(Child::new(Label::Positional, shown.clone()));
                    printed += 1;
                    i += 1;
                }
            }
            if next_read {
                std::mem::swap(&mut current, &mut next);
            } else if i < count {
                current.clear();
                if !fetch(i, &mut current) {
                    break;
                }
            }
        }
        (children, i < count || (printer && printed >= limit))
    }

    /// A member's value, read from the aggregate's bytes (a static member from memory).
    pub(crate) fn member(&self, st: &TypeHandle, m: &Member, bytes: &[u8]) -> Shown {
        let mty = st.child(m.ty);
        let size = mty.size().unwrap_or(0) as usize;
        if let MemberKind::Static { address } = m.kind {
            let Some(a) = address else {
                return Shown::text("<optimized out>");
            };
            let mut b = vec![0u8; size.min(1 << 16)];
            return match self.ctx.read_memory(a, &mut b) {
                Ok(()) => self.value(&mty, &b, At::Inner),
                Err(e) => Shown::Text(format!("<error: {e}>")),
            };
        }
        let off = m.offset as usize;
        if let Some((bit, bits)) = m.bits {
            let signed = matches!(
                mty.shape(),
                Shape::Int { signed: true, .. } | Shape::Char { signed: true, .. }
            );
            let x = crate::expr::eval::extract_bits(bytes, off as u64 * 8 + bit, bits, signed);
            let b = x.to_le_bytes();
            return self.value(&mty, &b[..size.clamp(1, 16)], At::Inner);
        }
        match bytes.get(off..off + size) {
            Some(b) => self.value(&mty, b, At::Inner),
            None => Shown::text("<optimized out>"),
        }
    }

    fn aggregate(&self, ty: &TypeHandle, bytes: &[u8]) -> Shown {
        let Some(st) = ty.strip() else {
            return Shown::text("{...}");
        };
        let Type::Struct {
            name,
            members,
            info,
            ..
        } = st.get()
        else {
            return Shown::text("{...}");
        };
        if self.rust {
            if let Some(v) = &info.variants {
                return self.rust_enum(&st, name.as_deref().unwrap_or(""), v, bytes);
            }
            return self.rust_aggregate(&st, name.as_deref().unwrap_or(""), members, bytes, true);
        }
        let mut children: Vec<Child> = Vec::new();
        let mut in_bases = false;
        for m in members.iter() {
            if m.is_base() {
                in_bases = true;
            } else if in_bases {
                in_bases = false;
                children.push(Child::new(
                    Label::Section(ty.strip().map(|t| t.name()).unwrap_or_default()),
                    Shown::text(""),
                ));
            }
            children.push({
                let value = self.member(&st, m, bytes);
                let label = match (&m.kind, &m.name) {
                    (MemberKind::Base { .. }, _) => Label::Base(st.child(m.ty).name()),
                    (MemberKind::Static { .. }, Some(n)) => Label::Static(n.clone()),
                    (_, Some(n)) => Label::Field(n.clone()),
                    (_, None) => Label::Positional,
                };
                Child::new(label, value)
            });
        }
        // gdb says so after the bases of a class without data members of its own.
        if !members.is_empty() && members.iter().all(|m| m.is_base()) {
            children.push(Child::new(
                Label::Positional,
                Shown::text("<No data fields>"),
            ));
        }
        Shown::composite(Kind::Struct, children, false)
    }

    /// A Rust enum: the variant its discriminant selects, as `path::E::V(…)`/`{…}`.
    fn rust_enum(
        &self,
        st: &TypeHandle,
        name: &str,
        part: &crate::types::VariantPart,
        bytes: &[u8],
    ) -> Shown {
        let discr = part.discr.map(|(off, t)| {
            let size = st.child(t).size().unwrap_or(0) as usize;
            le_u64(bytes.get(off as usize..off as usize + size).unwrap_or(&[]))
        });
        let chosen = part
            .variants
            .iter()
            .find(|v| discr.is_some() && v.discr_value == discr)
            .or_else(|| part.variants.iter().find(|v| v.discr_value.is_none()))
            .or_else(|| (part.variants.len() == 1).then(|| &part.variants[0]));
        let Some(v) = chosen else {
            return Shown::Text(format!("{name} {{<invalid discriminant>}}"));
        };
        let vty = st.child(v.member.ty);
        let vname = v.member.name.clone().unwrap_or_default();
        let off = v.member.offset as usize;
        let size = vty.size().unwrap_or(0) as usize;
        let vbytes = bytes.get(off..off + size).unwrap_or(&[]);
        let Some(vst) = vty.strip() else {
            return Shown::text(vname);
        };
        let Type::Struct { members, .. } = vst.get() else {
            return Shown::text(vname);
        };
        // Variants are written without a blank before their fields.
        self.rust_aggregate(&vst, &format!("{name}::{vname}"), members, vbytes, false)
    }

    /// A Rust struct, tuple struct, tuple, unit struct or (`gap` false) enum variant.
    pub(crate) fn rust_aggregate(
        &self,
        st: &TypeHandle,
        name: &str,
        members: &[Member],
        bytes: &[u8],
        gap: bool,
    ) -> Shown {
        // Slices are {data_ptr, length}: `&[i32] [1, 2, 3]`.
        if name.starts_with("&[") || name.starts_with("&mut [") {
            if let Some((elem, ptr, len)) = slice_parts(st, members, bytes) {
                let es = elem.size().unwrap_or(1).max(1);
                let (children, more) =
                    self.elements(&elem, len, false, contiguous(self.ctx, ptr, es));
                let mut arr = Shown::composite(Kind::Array, children, more);
                if let Shown::Composite { summary, .. } = &mut arr {
                    *summary = None;
                }
                let text = crate::shown::render(
                    &arr,
                    &crate::shown::Style {
                        language: Language::Rust,
                        pretty: false,
                        repeats: self.opts.repeats,
                    },
                );
                return Shown::Text(format!("{name} {text}"));
            }
        }
        // `&str` is {data_ptr, length}: print the text.
        if name == "&str" && self.opts.fmt.is_none() {
            let ptr = le_u64(bytes.get(..8).unwrap_or(&[]));
            let len = le_u64(bytes.get(8..16).unwrap_or(&[]));
            return Shown::Text(self.rust_str(ptr, len));
        }
        let tuple_like = !members.is_empty()
            && members
                .iter()
                .all(|m| m.name.as_deref().is_some_and(|n| n.starts_with("__")));
        let children: Vec<Child> = members
            .iter()
            .map(|m| {
                let value = self.member(st, m, bytes);
                match (&m.name, tuple_like) {
                    (Some(n), false) => Child::new(Label::Field(n.clone()), value),
                    _ => Child::new(Label::Positional, value),
                }
            })
            .collect();
        if name.starts_with('(') {
            // A tuple: `(1, 2.5)`; the unit type `()`.
            return Shown::composite(
                Kind::RustTuple {
                    name: String::new(),
                    paren_gap: false,
                },
                children,
                false,
            );
        }
        if tuple_like {
            return Shown::composite(
                Kind::RustTuple {
                    name: name.to_string(),
                    paren_gap: gap,
                },
                children,
                false,
            );
        }
        Shown::composite(
            Kind::RustStruct {
                name: name.to_string(),
                brace_gap: gap,
            },
            children,
            false,
        )
    }

    /// A Rust string slice at `ptr` of `len` bytes, quoted.
    pub(crate) fn rust_str(&self, ptr: u64, len: u64) -> String {
        let mut b = vec![0u8; len.min(self.limit()).min(MAX_READ) as usize];
        match self.ctx.read_memory(ptr, &mut b) {
            Ok(()) => self.string(&b, len > b.len() as u64),
            Err(_) => format!("<error: Cannot access memory at address {ptr:#x}>"),
        }
    }
}

/// A fetcher for [`Builder::elements`] over `count` elements of `es` bytes at `ptr`, read a
/// chunk at a time (one read per element would cost a system call each).
pub(crate) fn contiguous<'c>(
    ctx: &'c dyn EvalContext,
    ptr: u64,
    es: u64,
) -> impl FnMut(u64, &mut Vec<u8>) -> bool + 'c {
    const CHUNK: u64 = 1 << 14;
    let per = (CHUNK / es.max(1)).max(1);
    let mut cached: Option<(u64, Vec<u8>)> = None;
    move |i, out| {
        let first = i / per * per;
        if cached.as_ref().map(|c| c.0) != Some(first) {
            let mut b = vec![0u8; (per * es) as usize];
            let a = ptr.wrapping_add(first * es);
            if ctx.read_memory(a, &mut b).is_err() {
                // Near the end of a mapping: element by element.
                let mut v = Vec::new();
                if !read_into(ctx, ptr.wrapping_add(i * es), es, &mut v) {
                    return false;
                }
                out.extend_from_slice(&v);
                return true;
            }
            cached = Some((first, b));
        }
        let Some((_, b)) = &cached else { return false };
        let at = ((i - first) * es) as usize;
        out.extend_from_slice(&b[at..at + es as usize]);
        true
    }
}

/// Reads `n` bytes at `a` onto `out`; false when unreadable.
pub(crate) fn read_into(ctx: &dyn EvalContext, a: u64, n: u64, out: &mut Vec<u8>) -> bool {
    let start = out.len();
    out.resize(start + n.min(1 << 16) as usize, 0);
    if ctx.read_memory(a, &mut out[start..]).is_err() {
        out.truncate(start);
        return false;
    }
    true
}

/// An enum value: its enumerator, `(A | B)` for flag enums, or the number.
pub(crate) fn enumerator(ty: &TypeHandle, bytes: &[u8]) -> String {
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

/// A Rust slice's element type, data pointer and length, from its `{data_ptr, length}` struct.
pub(crate) fn slice_parts(
    st: &TypeHandle,
    members: &[Member],
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
