//! Values as the evaluator computes them: a type, the bytes, and where they came from.
//!
//! A value's type is a [`TypeHandle`]: a self-contained copy of the part of a module's
//! [`TypeTable`] reachable from one type. Values therefore outlive the program's tables (the
//! value history survives a re-run) and the evaluator can make up types of its own (`int` for
//! `1 + 2`, `T *` for `&x`, `char [4]` for `"abc"`) by appending to that small copy.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use crate::expr::ExprError;
use crate::types::{AggregateKind, Encoding, Qualifier, TemplateArg, Type, TypeId, TypeTable};

/// How deep type spellings and copies nest before the type is taken as malformed.
const MAX_DEPTH: usize = 64;

/// A type that values carry: one type of a private table holding everything it refers to.
#[derive(Clone)]
pub struct TypeHandle {
    table: Arc<TypeTable>,
    id: TypeId,
}

impl fmt::Debug for TypeHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TypeHandle({})", self.name())
    }
}

impl PartialEq for TypeHandle {
    /// Two handles are equal when they spell the same type.
    fn eq(&self, other: &Self) -> bool {
        (Arc::ptr_eq(&self.table, &other.table) && self.id == other.id)
            || self.name() == other.name()
    }
}

/// The representation of a type with typedefs and qualifiers stripped: what evaluation and
/// formatting dispatch on.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// Integer.
    Int {
        /// Size in bytes.
        size: u64,
        /// Signedness.
        signed: bool,
    },
    /// A C character type (printed as number and character).
    Char {
        /// Size in bytes.
        size: u64,
        /// Signedness.
        signed: bool,
    },
    /// Boolean of this size.
    Bool(u64),
    /// IEEE float of this size.
    Float(u64),
    /// Unicode scalar (Rust `char`) of this size.
    Utf(u64),
    /// Enumeration of this size.
    Enum(u64),
    /// Pointer (or reference) to a type; `None` for `void *`.
    Pointer(Option<TypeHandle>),
    /// Array of `count` elements.
    Array(TypeHandle, Option<u64>),
    /// Struct, union or class of this size.
    Struct(u64),
    /// A function (its value is its code address).
    Function,
    /// `void`.
    Void,
    /// Something not modelled.
    Unknown,
}

/// Copies the types reachable from one type into a fresh table. Iterative, with a map from
/// old to new ids: cycles (a struct that points to itself) and deep chains are both fine.
struct Copier<'a> {
    src: &'a TypeTable,
    out: TypeTable,
    map: HashMap<TypeId, TypeId>,
    pending: Vec<TypeId>,
    /// Copy member functions too (`ptype`); values do without them, which keeps the copy
    /// small (a class's methods reach much of the library's types).
    methods: bool,
}

impl Copier<'_> {
    /// The new id of `old`, reserving a slot (filled later) on first sight.
    fn id(&mut self, old: TypeId) -> TypeId {
        if let Some(id) = self.map.get(&old) {
            return *id;
        }
        let new = self.out.add(Type::Unknown);
        self.map.insert(old, new);
        self.pending.push(old);
        new
    }

    /// `ty` with its references renumbered.
    fn remap(&mut self, ty: Type) -> Type {
        match ty {
            Type::Pointer {
                pointee,
                name,
                is_reference,
                rvalue,
            } => Type::Pointer {
                pointee: pointee.map(|p| self.id(p)),
                name,
                is_reference,
                rvalue,
            },
            Type::Array { elem, count } => Type::Array {
                elem: self.id(elem),
                count,
            },
            Type::Struct {
                name,
                kind,
                size,
                mut members,
                mut info,
            } => {
                for m in &mut members {
                    m.ty = self.id(m.ty);
                }
                if self.methods {
                    for f in &mut info.methods {
                        f.ret = f.ret.map(|r| self.id(r));
                        for p in &mut f.params {
                            *p = self.id(*p);
                        }
                    }
                } else {
                    info.methods.clear();
                }
                for (_, arg) in &mut info.templates {
                    match arg {
                        TemplateArg::Type(t) => *t = self.id(*t),
                        TemplateArg::Value(_, t) => *t = t.map(|t| self.id(t)),
                    }
                }
                if let Some(v) = &mut info.variants {
                    if let Some((_, t)) = &mut v.discr {
                        *t = self.id(*t);
                    }
                    for var in &mut v.variants {
                        var.member.ty = self.id(var.member.ty);
                    }
                }
                Type::Struct {
                    name,
                    kind,
                    size,
                    members,
                    info,
                }
            }
            Type::Enum {
                name,
                size,
                signed,
                values,
                scoped,
                cpp,
                underlying,
            } => Type::Enum {
                name,
                size,
                signed,
                values,
                scoped,
                cpp,
                underlying: underlying.map(|t| self.id(t)),
            },
            Type::Typedef { name, target } => Type::Typedef {
                name,
                target: target.map(|t| self.id(t)),
            },
            Type::Qualified { qualifier, target } => Type::Qualified {
                qualifier,
                target: target.map(|t| self.id(t)),
            },
            Type::Function { ret, params } => Type::Function {
                ret: ret.map(|r| self.id(r)),
                params: params.into_iter().map(|p| self.id(p)).collect(),
            },
            other => other,
        }
    }

    fn copy(src: &TypeTable, root: TypeId, methods: bool) -> (TypeTable, TypeId) {
        let mut c = Copier {
            src,
            out: TypeTable::new(),
            map: HashMap::new(),
            pending: Vec::new(),
            methods,
        };
        let new_root = c.id(root);
        while let Some(old) = c.pending.pop() {
            let ty = c.remap(c.src.get(old).clone());
            // Every pending id was given a slot when first seen.
            if let Some(&new) = c.map.get(&old) {
                c.out.set(new, ty);
            }
        }
        (c.out, new_root)
    }
}

impl TypeHandle {
    /// The type `id` of `table` (typically a module's table): copies what it refers to.
    pub fn new(table: &TypeTable, id: TypeId) -> TypeHandle {
        let (out, id) = Copier::copy(table, id, false);
        TypeHandle {
            table: Arc::new(out),
            id,
        }
    }

    /// Like [`TypeHandle::new`], with the member functions of every class (for `ptype`).
    pub fn with_methods(table: &TypeTable, id: TypeId) -> TypeHandle {
        let (out, id) = Copier::copy(table, id, true);
        TypeHandle {
            table: Arc::new(out),
            id,
        }
    }

    /// A type made of one standalone [`Type`] that refers to no other type.
    pub fn single(ty: Type) -> TypeHandle {
        let mut table = TypeTable::new();
        let id = table.add(ty);
        TypeHandle {
            table: Arc::new(table),
            id,
        }
    }

    /// A base type.
    pub fn base(name: &str, size: u64, encoding: Encoding) -> TypeHandle {
        Self::single(Type::Base {
            name: name.to_string(),
            size,
            encoding,
        })
    }

    /// `int`.
    pub fn int() -> TypeHandle {
        Self::base("int", 4, Encoding::Signed)
    }

    /// `long`.
    pub fn long() -> TypeHandle {
        Self::base("long", 8, Encoding::Signed)
    }

    /// `unsigned long`.
    pub fn ulong() -> TypeHandle {
        Self::base("unsigned long", 8, Encoding::Unsigned)
    }

    /// `double`.
    pub fn double() -> TypeHandle {
        Self::base("double", 8, Encoding::Float)
    }

    /// `char`.
    pub fn char() -> TypeHandle {
        Self::base("char", 1, Encoding::SignedChar)
    }

    /// `void`.
    pub fn void() -> TypeHandle {
        Self::single(Type::Void)
    }

    /// The C integer type of this size and signedness (`int`, `unsigned long`…).
    pub fn c_int(size: u64, signed: bool) -> TypeHandle {
        let name = match (size, signed) {
            (1, true) => "signed char",
            (1, false) => "unsigned char",
            (2, true) => "short",
            (2, false) => "unsigned short",
            (4, true) => "int",
            (4, false) => "unsigned int",
            (_, true) => "long",
            (_, false) => "unsigned long",
        };
        let encoding = match (size, signed) {
            (1, true) => Encoding::SignedChar,
            (1, false) => Encoding::UnsignedChar,
            (_, true) => Encoding::Signed,
            (_, false) => Encoding::Unsigned,
        };
        Self::base(name, size, encoding)
    }

    /// `void (*)()`: the type of `$pc`.
    pub fn code_pointer() -> TypeHandle {
        let mut table = TypeTable::new();
        let f = table.add(Type::Function {
            ret: None,
            params: Vec::new(),
        });
        let id = table.add(Type::Pointer {
            pointee: Some(f),
            name: Some("void (*)()".into()),
            is_reference: false,
            rvalue: false,
        });
        TypeHandle {
            table: Arc::new(table),
            id,
        }
    }

    /// The type of a function without debug information: `{<text variable, no debug info>}`.
    pub fn nodebug_function() -> TypeHandle {
        Self::single(Type::Function {
            ret: None,
            params: Vec::new(),
        })
        .derive(|id| Type::Typedef {
            name: "<text variable, no debug info>".into(),
            target: Some(id),
        })
    }

    /// Adds a type referring to `self` to a copy of this handle's table.
    fn derive(&self, make: impl FnOnce(TypeId) -> Type) -> TypeHandle {
        let mut table = (*self.table).clone();
        let id = table.add(make(self.id));
        TypeHandle {
            table: Arc::new(table),
            id,
        }
    }

    /// `T *` for this `T`.
    pub fn pointer_to(&self) -> TypeHandle {
        self.derive(|id| Type::Pointer {
            pointee: Some(id),
            name: None,
            is_reference: false,
            rvalue: false,
        })
    }

    /// `T *`, `T &` or `T &&` for this `T`.
    pub fn derive_pointer(&self, is_reference: bool, rvalue: bool) -> TypeHandle {
        self.derive(|id| Type::Pointer {
            pointee: Some(id),
            name: None,
            is_reference,
            rvalue,
        })
    }

    /// `T [count]` for this `T`.
    pub fn array_of(&self, count: u64) -> TypeHandle {
        self.derive(|id| Type::Array {
            elem: id,
            count: Some(count),
        })
    }

    /// This type as its table stores it (typedefs and qualifiers not stripped).
    pub fn get(&self) -> &Type {
        self.table.get(self.id)
    }

    /// Another type of the same table (a member's, the pointee's…).
    pub fn child(&self, id: TypeId) -> TypeHandle {
        TypeHandle {
            table: Arc::clone(&self.table),
            id,
        }
    }

    /// The type with typedefs and qualifiers stripped (`None`: `void` behind a typedef).
    pub fn strip(&self) -> Option<TypeHandle> {
        self.table.strip(self.id).map(|id| self.child(id))
    }

    /// Size in bytes, if known.
    pub fn size(&self) -> Option<u64> {
        self.table.size_of(self.id)
    }

    /// True for a C++ reference (`T &`), which expressions follow implicitly.
    pub fn is_reference(&self) -> bool {
        matches!(
            self.strip().map(|s| s.get().clone()),
            Some(Type::Pointer {
                is_reference: true,
                ..
            })
        )
    }

    /// True for floating-point types (returned in xmm0).
    pub fn is_float(&self) -> bool {
        matches!(self.shape(), Shape::Float(_))
    }

    /// The shape of this type.
    pub fn shape(&self) -> Shape {
        let Some(s) = self.strip() else {
            return Shape::Void;
        };
        match s.get() {
            Type::Void => Shape::Void,
            Type::Base { size, encoding, .. } => {
                let size = *size;
                match encoding {
                    Encoding::Signed => Shape::Int { size, signed: true },
                    Encoding::Unsigned => Shape::Int {
                        size,
                        signed: false,
                    },
                    Encoding::SignedChar => Shape::Char { size, signed: true },
                    Encoding::UnsignedChar => Shape::Char {
                        size,
                        signed: false,
                    },
                    Encoding::Bool => Shape::Bool(size),
                    Encoding::Float => Shape::Float(size),
                    Encoding::Utf => Shape::Utf(size),
                }
            }
            Type::Pointer { pointee, .. } => Shape::Pointer(pointee.map(|p| s.child(p))),
            Type::Array { elem, count } => Shape::Array(s.child(*elem), *count),
            Type::Struct { size, .. } => Shape::Struct(*size),
            Type::Enum { size, .. } => Shape::Enum(*size),
            Type::Function { .. } => Shape::Function,
            Type::Typedef { .. } | Type::Qualified { .. } | Type::Unknown => Shape::Unknown,
        }
    }

    /// The C spelling of the type: `int`, `struct point *`, `char [6]`, `int (*)(int)`.
    pub fn name(&self) -> String {
        self.declarator("", 0)
    }

    /// The Rust spelling of a pointer's target as gdb shows pointers: `*mut i32`.
    pub fn rust_name(&self) -> String {
        self.rust_name_at(0)
    }

    fn rust_name_at(&self, depth: usize) -> String {
        if depth > MAX_DEPTH {
            return "<unknown type>".into();
        }
        match self.get() {
            Type::Pointer {
                pointee: Some(p), ..
            } => format!("*mut {}", self.child(*p).rust_name_at(depth + 1)),
            Type::Pointer { pointee: None, .. } => "*mut ()".into(),
            Type::Array { elem, count } => {
                format!(
                    "[{}; {}]",
                    self.child(*elem).rust_name_at(depth + 1),
                    count.unwrap_or(0)
                )
            }
            Type::Struct { name: Some(n), .. } => n.clone(),
            Type::Function { ret, params } => {
                let ps: Vec<String> = params
                    .iter()
                    .map(|p| self.child(*p).rust_name_at(depth + 1))
                    .collect();
                match ret {
                    Some(r) => format!(
                        "fn ({}) -> {}",
                        ps.join(", "),
                        self.child(*r).rust_name_at(depth + 1)
                    ),
                    None => format!("fn ({})", ps.join(", ")),
                }
            }
            Type::Typedef {
                target: Some(t), ..
            }
            | Type::Qualified {
                target: Some(t), ..
            } => self.child(*t).rust_name_at(depth + 1),
            _ => self.name(),
        }
    }

    /// C declarator syntax: the type's spelling around `inner` (a name or `*`s).
    fn declarator(&self, inner: &str, depth: usize) -> String {
        // Malformed DWARF may make a cycle without a name to stop at.
        if depth > MAX_DEPTH {
            return "<unknown type>".into();
        }
        let join = |base: &str, inner: &str| {
            if inner.is_empty() {
                base.to_string()
            } else if base.ends_with('*') && (inner.starts_with('*') || inner.starts_with('&')) {
                format!("{base}{inner}")
            } else {
                format!("{base} {inner}")
            }
        };
        match self.get() {
            Type::Void => join("void", inner),
            Type::Base { name, .. } | Type::Typedef { name, .. } => join(name, inner),
            Type::Pointer { name: Some(n), .. } if inner.is_empty() => n.clone(),
            Type::Pointer {
                pointee,
                is_reference,
                rvalue,
                ..
            } => {
                let sigil = match (is_reference, rvalue) {
                    (true, true) => "&&",
                    (true, false) => "&",
                    _ => "*",
                };
                let inner = format!("{sigil}{inner}");
                match pointee {
                    Some(p) => self.child(*p).declarator(&inner, depth + 1),
                    None => join("void", &inner),
                }
            }
            Type::Array { elem, count } => {
                let dims = match count {
                    Some(n) => format!("[{n}]"),
                    None => "[]".into(),
                };
                let inner = if inner.starts_with('*') || inner.starts_with('&') {
                    format!("({inner}){dims}")
                } else {
                    format!("{inner}{dims}")
                };
                self.child(*elem).declarator(&inner, depth + 1)
            }
            Type::Struct {
                name, kind, info, ..
            } => {
                let n = name.clone().unwrap_or_else(|| "{...}".into());
                let base = match kind {
                    _ if n.contains("::") || info.cpp => n,
                    AggregateKind::Union => format!("union {n}"),
                    AggregateKind::Class => n,
                    AggregateKind::Struct => format!("struct {n}"),
                };
                join(&base, inner)
            }
            Type::Enum {
                name, cpp: true, ..
            } => join(&name.clone().unwrap_or_else(|| "{...}".into()), inner),
            Type::Enum { name, .. } => join(
                &format!("enum {}", name.clone().unwrap_or_else(|| "{...}".into())),
                inner,
            ),
            Type::Qualified { qualifier, target } => {
                let q = match qualifier {
                    Qualifier::Const => "const",
                    Qualifier::Volatile => "volatile",
                };
                match target {
                    Some(t) => join(
                        &format!("{q} {}", self.child(*t).declarator("", depth + 1)),
                        inner,
                    ),
                    None => join(&format!("{q} void"), inner),
                }
            }
            Type::Function { ret, params } => {
                let ps: Vec<String> = params
                    .iter()
                    .map(|p| self.child(*p).declarator("", depth + 1))
                    .collect();
                let ps = if ps.is_empty() {
                    "void".to_string()
                } else {
                    ps.join(", ")
                };
                let inner = if inner.is_empty() {
                    format!("({ps})")
                } else {
                    format!("({inner})({ps})")
                };
                match ret {
                    Some(r) => self.child(*r).declarator(&inner, depth + 1),
                    None => join("void", &inner),
                }
            }
            Type::Unknown => "<unknown type>".into(),
        }
    }
}

/// Where a value lives, for `&`, assignment and watchpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lval {
    /// At this address.
    Memory(u64),
    /// In a register (DWARF number).
    Register(u16),
}

/// A value: a type, its bytes, and where it lives.
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    /// Its type.
    pub ty: TypeHandle,
    /// Its bytes, little-endian (for a huge array: only a prefix).
    pub bytes: Vec<u8>,
    /// Where it lives, if anywhere.
    pub lval: Option<Lval>,
}

impl Value {
    /// A value of type `ty` made of `bytes`, living nowhere.
    pub fn from_bytes(ty: TypeHandle, bytes: Vec<u8>) -> Value {
        Value {
            ty,
            bytes,
            lval: None,
        }
    }

    /// An integer of type `ty`, truncated to the type's size.
    pub fn int(ty: TypeHandle, v: i128) -> Value {
        let size = ty.size().unwrap_or(8).min(16) as usize;
        Value::from_bytes(ty, v.to_le_bytes()[..size].to_vec())
    }

    /// A `double`.
    pub fn double(v: f64) -> Value {
        Value::from_bytes(TypeHandle::double(), v.to_le_bytes().to_vec())
    }

    /// The address it lives at, if in memory (what `watch` watches).
    pub fn address(&self) -> Option<u64> {
        match self.lval {
            Some(Lval::Memory(a)) => Some(a),
            _ => None,
        }
    }

    /// Its size in bytes (its type's, else the bytes held).
    pub fn size(&self) -> u64 {
        self.ty.size().unwrap_or(self.bytes.len() as u64)
    }

    /// Its bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The first up to 8 bytes as an unsigned little-endian integer.
    pub fn raw_u64(&self) -> u64 {
        le_u64(&self.bytes)
    }

    /// The value as an address or integer (`x ADDR`, `break *ADDR`).
    pub fn as_u64(&self) -> Result<u64, ExprError> {
        match self.ty.shape() {
            Shape::Float(_) | Shape::Struct(_) | Shape::Void | Shape::Unknown => Err(
                ExprError::Other("Value can't be converted to integer.".into()),
            ),
            Shape::Int { signed: true, size } | Shape::Char { signed: true, size } => {
                Ok(sign_extend(self.raw_u64(), size) as u64)
            }
            Shape::Function | Shape::Array(..) => match self.lval {
                Some(Lval::Memory(a)) => Ok(a),
                _ => Ok(self.raw_u64()),
            },
            _ => Ok(self.raw_u64()),
        }
    }
}

/// Up to 8 bytes as an unsigned little-endian integer.
pub(crate) fn le_u64(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = bytes.len().min(8);
    b[..n].copy_from_slice(&bytes[..n]);
    u64::from_le_bytes(b)
}

/// `v`'s low `size` bytes, sign-extended.
pub(crate) fn sign_extend(v: u64, size: u64) -> i64 {
    let bits = (size.clamp(1, 8) * 8) as u32;
    if bits == 64 {
        v as i64
    } else {
        ((v << (64 - bits)) as i64) >> (64 - bits)
    }
}
