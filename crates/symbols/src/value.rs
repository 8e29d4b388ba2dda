//! Values as the evaluator computes them: a type, the bytes, and where they came from.

use crate::types::{Encoding, Type, TypeId, TypeTable};

/// A type as values carry it: a type of a module's table, or one the evaluator made up
/// (`int` for `1 + 2`, `T *` for `&x`, `char [4]` for `"abc"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ty {
    /// A type of module `module`'s table.
    Table {
        /// Module index.
        module: usize,
        /// Type id.
        id: TypeId,
    },
    /// An integer type of the evaluator's.
    Int {
        /// Size in bytes.
        size: u8,
        /// Signedness.
        signed: bool,
    },
    /// `float` (4) or `double` (8).
    Float(u8),
    /// `char`.
    Char,
    /// `bool`.
    Bool,
    /// `void`.
    Void,
    /// A pointer to a type.
    PointerTo(Box<Ty>),
    /// A code address (`$pc`).
    Code,
    /// An array.
    ArrayOf(Box<Ty>, u64),
}

/// Where a value lives, for `&`, assignment and watchpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lval {
    /// At this address.
    Memory(u64),
    /// In a register (DWARF number).
    Register(u16),
}

/// A value.
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    /// Its type.
    pub ty: Ty,
    /// Its bytes, little-endian (for big arrays: possibly only a prefix).
    pub bytes: Vec<u8>,
    /// Where it lives, if anywhere.
    pub lval: Option<Lval>,
}

/// The shape of a type, with typedefs and qualifiers stripped: what evaluation and formatting
/// dispatch on.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// Integer (also enums and chars, which format differently).
    Int {
        /// Size.
        size: u64,
        /// Signedness.
        signed: bool,
    },
    /// Character.
    Char {
        /// Size.
        size: u64,
        /// Signedness.
        signed: bool,
    },
    /// Boolean.
    Bool(u64),
    /// Floating point.
    Float(u64),
    /// Unicode scalar (Rust char).
    Utf(u64),
    /// Enumeration.
    Enum(u64),
    /// Pointer to `pointee`.
    Pointer(Ty),
    /// Array of `count` `elem`s.
    Array(Ty, Option<u64>),
    /// Struct or union.
    Struct(u64),
    /// A function (or code).
    Function,
    /// void.
    Void,
    /// Unknown.
    Unknown,
}

/// Gives the evaluator the type tables of the program.
pub trait Tables {
    /// The type table of module `module`.
    fn table(&self, module: usize) -> Option<&TypeTable>;
}

impl Ty {
    /// `int`.
    pub const INT: Ty = Ty::Int {
        size: 4,
        signed: true,
    };
    /// `long`.
    pub const LONG: Ty = Ty::Int {
        size: 8,
        signed: true,
    };
    /// `unsigned long`.
    pub const ULONG: Ty = Ty::Int {
        size: 8,
        signed: false,
    };

    /// The type a `Ty::Table` refers to, with typedefs and qualifiers stripped.
    pub fn resolve<'t>(&self, t: &'t dyn Tables) -> Option<(&'t Type, usize, TypeId)> {
        let Ty::Table { module, id } = self else {
            return None;
        };
        let table = t.table(*module)?;
        let id = table.strip(*id)?;
        Some((table.get(id), *module, id))
    }

    /// The shape of this type.
    pub fn shape(&self, t: &dyn Tables) -> Shape {
        match self {
            Ty::Int { size, signed } => Shape::Int {
                size: *size as u64,
                signed: *signed,
            },
            Ty::Float(s) => Shape::Float(*s as u64),
            Ty::Char => Shape::Char {
                size: 1,
                signed: true,
            },
            Ty::Bool => Shape::Bool(1),
            Ty::Void => Shape::Void,
            Ty::PointerTo(p) => Shape::Pointer((**p).clone()),
            Ty::Code => Shape::Pointer(Ty::Void),
            Ty::ArrayOf(e, n) => Shape::Array((**e).clone(), Some(*n)),
            Ty::Table { module, id } => {
                let Some(table) = t.table(*module) else {
                    return Shape::Unknown;
                };
                let Some(sid) = table.strip(*id) else {
                    return Shape::Void;
                };
                let tab = |id: TypeId| Ty::Table {
                    module: *module,
                    id,
                };
                match table.get(sid) {
                    Type::Void => Shape::Void,
                    Type::Base { size, encoding, .. } => match encoding {
                        Encoding::Signed => Shape::Int {
                            size: *size,
                            signed: true,
                        },
                        Encoding::Unsigned => Shape::Int {
                            size: *size,
                            signed: false,
                        },
                        Encoding::SignedChar => Shape::Char {
                            size: *size,
                            signed: true,
                        },
                        Encoding::UnsignedChar => Shape::Char {
                            size: *size,
                            signed: false,
                        },
                        Encoding::Bool => Shape::Bool(*size),
                        Encoding::Float => Shape::Float(*size),
                        Encoding::Utf => Shape::Utf(*size),
                    },
                    Type::Pointer { pointee, .. } => {
                        Shape::Pointer(pointee.map(tab).unwrap_or(Ty::Void))
                    }
                    Type::Array { elem, count } => Shape::Array(tab(*elem), *count),
                    Type::Struct { size, .. } => Shape::Struct(*size),
                    Type::Enum { size, .. } => Shape::Enum(*size),
                    Type::Function { .. } => Shape::Function,
                    _ => Shape::Unknown,
                }
            }
        }
    }

    /// Size in bytes.
    pub fn size(&self, t: &dyn Tables) -> Option<u64> {
        match self {
            Ty::Int { size, .. } => Some(*size as u64),
            Ty::Float(s) => Some(*s as u64),
            Ty::Char | Ty::Bool | Ty::Void => Some(1),
            Ty::PointerTo(_) | Ty::Code => Some(8),
            Ty::ArrayOf(e, n) => Some(e.size(t)? * n),
            Ty::Table { module, id } => t.table(*module)?.size_of(*id),
        }
    }

    /// True for floating-point types.
    pub fn is_float(&self, t: &dyn Tables) -> bool {
        matches!(self.shape(t), Shape::Float(_))
    }

    /// The C spelling of the type: `int`, `struct point *`, `char [6]`, `unsigned long`.
    pub fn name(&self, t: &dyn Tables) -> String {
        match self {
            Ty::Int { size, signed } => match (size, signed) {
                (1, true) => "signed char".into(),
                (1, false) => "unsigned char".into(),
                (2, true) => "short".into(),
                (2, false) => "unsigned short".into(),
                (4, true) => "int".into(),
                (4, false) => "unsigned int".into(),
                (_, true) => "long".into(),
                (_, false) => "unsigned long".into(),
            },
            Ty::Float(4) => "float".into(),
            Ty::Float(_) => "double".into(),
            Ty::Char => "char".into(),
            Ty::Bool => "bool".into(),
            Ty::Void => "void".into(),
            Ty::Code => "void (*)()".into(),
            Ty::PointerTo(p) => pointer_name(&p.name(t)),
            Ty::ArrayOf(e, n) => format!("{} [{n}]", e.name(t)),
            Ty::Table { module, id } => match t.table(*module) {
                Some(table) => table_name(table, *module, *id, t),
                None => "?".into(),
            },
        }
    }
}

fn pointer_name(inner: &str) -> String {
    if inner.ends_with('*') {
        format!("{inner}*")
    } else {
        format!("{inner} *")
    }
}

fn table_name(table: &TypeTable, module: usize, id: TypeId, t: &dyn Tables) -> String {
    let tab = |id: TypeId| Ty::Table { module, id };
    match table.get(id) {
        Type::Void => "void".into(),
        Type::Base { name, .. } => name.clone(),
        Type::Pointer { pointee, name, .. } => {
            if let Some(n) = name {
                return n.clone();
            }
            match pointee.map(|p| (p, table.get(p))) {
                Some((p, Type::Function { ret, params })) => {
                    let _ = p;
                    let r = ret.map(|r| tab(r).name(t)).unwrap_or_else(|| "void".into());
                    let ps: Vec<String> = params.iter().map(|p| tab(*p).name(t)).collect();
                    let ps = if ps.is_empty() {
                        "void".to_string()
                    } else {
                        ps.join(", ")
                    };
                    format!("{r} (*)({ps})")
                }
                Some((p, _)) => pointer_name(&table_name(table, module, p, t)),
                None => "void *".into(),
            }
        }
        Type::Array { elem, count } => match count {
            Some(n) => format!("{} [{n}]", table_name(table, module, *elem, t)),
            None => format!("{} []", table_name(table, module, *elem, t)),
        },
        Type::Struct { name, kind, .. } => {
            let n = name.clone().unwrap_or_else(|| "{...}".into());
            match kind {
                crate::types::AggregateKind::Union => format!("union {n}"),
                _ if n.contains("::") => n,
                _ => format!("struct {n}"),
            }
        }
        Type::Enum { name, .. } => {
            format!("enum {}", name.clone().unwrap_or_else(|| "{...}".into()))
        }
        Type::Typedef { name, .. } => name.clone(),
        Type::Qualified { qualifier, target } => {
            let q = match qualifier {
                crate::types::Qualifier::Const => "const",
                crate::types::Qualifier::Volatile => "volatile",
            };
            match target {
                Some(t2) => format!("{q} {}", table_name(table, module, *t2, t)),
                None => format!("{q} void"),
            }
        }
        Type::Function { ret, params } => {
            let r = ret.map(|r| tab(r).name(t)).unwrap_or_else(|| "void".into());
            let ps: Vec<String> = params.iter().map(|p| tab(*p).name(t)).collect();
            let ps = if ps.is_empty() {
                "void".to_string()
            } else {
                ps.join(", ")
            };
            format!("{r} ({ps})")
        }
        Type::Unknown => "<unknown type>".into(),
    }
}

impl Value {
    /// A value of type `ty` made of `bytes`, living nowhere.
    pub fn from_bytes(ty: Ty, bytes: Vec<u8>) -> Value {
        Value {
            ty,
            bytes,
            lval: None,
        }
    }

    /// An integer of type `ty`.
    pub fn int(ty: Ty, v: i128, size: u64) -> Value {
        let b = v.to_le_bytes();
        Value::from_bytes(ty, b[..(size as usize).min(16)].to_vec())
    }

    /// The address it lives at, if in memory.
    pub fn address(&self) -> Option<u64> {
        match self.lval {
            Some(Lval::Memory(a)) => Some(a),
            _ => None,
        }
    }

    /// Its size in bytes.
    pub fn size(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// The bytes as an unsigned integer (little-endian, up to 8 bytes).
    pub fn raw_u64(&self) -> u64 {
        let mut b = [0u8; 8];
        let n = self.bytes.len().min(8);
        b[..n].copy_from_slice(&self.bytes[..n]);
        u64::from_le_bytes(b)
    }

    /// The bytes as a signed integer of `size` bytes.
    pub fn raw_i64(&self, size: u64) -> i64 {
        let v = self.raw_u64();
        let bits = (size.clamp(1, 8) * 8) as u32;
        if bits == 64 {
            v as i64
        } else {
            ((v << (64 - bits)) as i64) >> (64 - bits)
        }
    }

    /// The value as an address or integer (for `x ADDR`, `break *ADDR`).
    pub fn as_u64(&self) -> Result<u64, crate::expr::ExprError> {
        if self.bytes.is_empty() {
            return Err(crate::expr::ExprError::Other(
                "Value is not an integer.".into(),
            ));
        }
        Ok(self.raw_u64())
    }
}
