//! Built-in formatters (gdb's pretty-printers, in Rust): libstdc++'s containers and smart
//! pointers ([`libstdcxx`]) and Rust's std types ([`rust_std`]), in the output shapes of
//! gdb 13's libstdc++ printers and of rust-gdb. A formatter recognises a type by its
//! qualified name and reads the value's fields by name (searching base classes and nested
//! members), so that layout changes between library versions that keep the field names
//! keep working; anything it does not recognise falls back to the raw structure.

pub mod libstdcxx;
pub mod rust_std;

use crate::show::Builder;
use crate::shown::Shown;
use crate::types::{TemplateArg, Type};
use crate::value::{le_u64, Shape, TypeHandle};

/// What a formatter makes of a value of type `ty` made of `bytes`, if it knows the type.
pub(crate) fn format(b: &Builder<'_>, ty: &TypeHandle, bytes: &[u8]) -> Option<Shown> {
    let st = ty.strip()?;
    let Type::Struct {
        name: Some(name), ..
    } = st.get()
    else {
        return None;
    };
    let v = Agg {
        ty: st.clone(),
        bytes,
    };
    if b.rust {
        return rust_std::format(b, name, &v);
    }
    if name.starts_with("std::") {
        return libstdcxx::format(b, name, &v);
    }
    None
}

/// An aggregate value being formatted: its (stripped) type and bytes.
pub(crate) struct Agg<'a> {
    pub ty: TypeHandle,
    pub bytes: &'a [u8],
}

impl<'a> Agg<'a> {
    /// The first field named `name`, searched depth-first through members, base classes
    /// and nested aggregates: (its type, its offset in these bytes).
    pub fn find(&self, name: &str) -> Option<(TypeHandle, u64)> {
        find_in(&self.ty, name, 0, 0)
    }

    /// The field reached by following `path` (each step searched as [`Agg::find`] does).
    pub fn path(&self, path: &[&str]) -> Option<(TypeHandle, u64)> {
        let mut ty = self.ty.clone();
        let mut off = 0;
        for step in path {
            let (t, o) = find_in(&ty, step, 0, 0)?;
            ty = t;
            off += o;
        }
        Some((ty, off))
    }

    /// The sub-value at `path`.
    pub fn sub(&self, path: &[&str]) -> Option<Agg<'a>> {
        let (ty, off) = self.path(path)?;
        let size = ty.size().unwrap_or(0) as usize;
        let bytes = self.bytes.get(off as usize..off as usize + size)?;
        Some(Agg {
            ty: ty.strip().unwrap_or(ty),
            bytes,
        })
    }

    /// The 8 bytes at the field `path` (a pointer or a size).
    pub fn word(&self, path: &[&str]) -> Option<u64> {
        let (ty, off) = self.path(path)?;
        let size = ty.size().unwrap_or(8).min(8) as usize;
        Some(le_u64(self.bytes.get(off as usize..off as usize + size)?))
    }

    /// The first pointer found depth-first inside the field `path` (Rust wraps raw pointers
    /// in `Unique`, `NonNull`…): its value and pointee type.
    pub fn pointer_in(&self, path: &[&str]) -> Option<(u64, Option<TypeHandle>)> {
        let (ty, off) = if path.is_empty() {
            (self.ty.clone(), 0)
        } else {
            self.path(path)?
        };
        let (pty, poff) = first_pointer(&ty, 0)?;
        let at = (off + poff) as usize;
        let v = le_u64(self.bytes.get(at..at + 8)?);
        let pointee = match pty.shape() {
            Shape::Pointer(p) => p,
            _ => None,
        };
        Some((v, pointee))
    }

    /// Template argument `i` that is a type (`_Tp` of `std::vector<_Tp, _Alloc>`).
    pub fn template_type(&self, i: usize) -> Option<TypeHandle> {
        let Type::Struct { info, .. } = self.ty.get() else {
            return None;
        };
        info.templates
            .iter()
            .filter_map(|(_, a)| match a {
                TemplateArg::Type(t) => Some(*t),
                TemplateArg::Value(..) => None,
            })
            .nth(i)
            .map(|t| self.ty.child(t))
    }

    /// The template type argument named `name`.
    pub fn template_named(&self, name: &str) -> Option<TypeHandle> {
        let Type::Struct { info, .. } = self.ty.get() else {
            return None;
        };
        info.templates.iter().find_map(|(n, a)| match a {
            TemplateArg::Type(t) if n == name => Some(self.ty.child(*t)),
            _ => None,
        })
    }

    /// Every template type argument, in order (parameter packs included).
    pub fn template_types(&self) -> Vec<TypeHandle> {
        let Type::Struct { info, .. } = self.ty.get() else {
            return Vec::new();
        };
        info.templates
            .iter()
            .filter_map(|(_, a)| match a {
                TemplateArg::Type(t) => Some(self.ty.child(*t)),
                TemplateArg::Value(..) => None,
            })
            .collect()
    }
}

fn find_in(ty: &TypeHandle, name: &str, base: u64, depth: usize) -> Option<(TypeHandle, u64)> {
    if depth > 16 {
        return None;
    }
    let st = ty.strip()?;
    let Type::Struct { members, info, .. } = st.get() else {
        return None;
    };
    if let Some(m) = members
        .iter()
        .find(|m| m.name.as_deref() == Some(name) && !m.is_static())
    {
        return Some((st.child(m.ty), base + m.offset));
    }
    // A Rust enum's variants (`Option<NodeRef>`'s `Some`) are searched too.
    let variants = info
        .variants
        .iter()
        .flat_map(|v| v.variants.iter().map(|x| &x.member));
    members
        .iter()
        .filter(|m| !m.is_static())
        .chain(variants)
        .find_map(|m| find_in(&st.child(m.ty), name, base + m.offset, depth + 1))
}

fn first_pointer(ty: &TypeHandle, depth: usize) -> Option<(TypeHandle, u64)> {
    if depth > 16 {
        return None;
    }
    let st = ty.strip()?;
    match st.get() {
        Type::Pointer { .. } => Some((st, 0)),
        Type::Struct { members, .. } => members.iter().filter(|m| !m.is_static()).find_map(|m| {
            first_pointer(&st.child(m.ty), depth + 1).map(|(t, o)| (t, o + m.offset))
        }),
        _ => None,
    }
}

/// The alignment of a type as the x86-64 ABIs lay it out (scalars: their size).
pub(crate) fn align_of(ty: &TypeHandle) -> u64 {
    fn go(ty: &TypeHandle, depth: usize) -> u64 {
        if depth > 32 {
            return 8;
        }
        let Some(st) = ty.strip() else { return 1 };
        match st.get() {
            Type::Base { size, .. } => (*size).clamp(1, 16),
            Type::Pointer { .. } => 8,
            Type::Enum { size, .. } => (*size).clamp(1, 8),
            Type::Array { elem, .. } => go(&st.child(*elem), depth + 1),
            Type::Struct { members, .. } => members
                .iter()
                .filter(|m| !m.is_static())
                .map(|m| go(&st.child(m.ty), depth + 1))
                .max()
                .unwrap_or(1),
            _ => 1,
        }
    }
    go(ty, 0)
}

/// `n` rounded up to a multiple of `align`.
pub(crate) fn align_up(n: u64, align: u64) -> u64 {
    let a = align.max(1);
    n.div_ceil(a) * a
}

/// Reads a value of type `ty` at `addr` (capped at 64 KiB).
pub(crate) fn read(b: &Builder<'_>, ty: &TypeHandle, addr: u64) -> Option<Vec<u8>> {
    let mut v = vec![0u8; ty.size().unwrap_or(0).min(1 << 16) as usize];
    b.ctx.read_memory(addr, &mut v).ok()?;
    Some(v)
}

/// Reads one 8-byte word at `addr`.
pub(crate) fn read_word(b: &Builder<'_>, addr: u64) -> Option<u64> {
    let mut w = [0u8; 8];
    b.ctx.read_memory(addr, &mut w).ok()?;
    Some(u64::from_le_bytes(w))
}

/// The name of a template type without its arguments: `std::__cxx11::list`.
pub(crate) fn template_name(name: &str) -> &str {
    name.split('<').next().unwrap_or(name)
}
