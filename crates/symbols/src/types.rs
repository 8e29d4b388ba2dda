//! The owned type model: what the DWARF reader builds and the expression evaluator consumes.
//!
//! Types live in one [`TypeTable`] per loaded module and refer to each other by [`TypeId`]
//! (DWARF types are graphs: a struct may point to itself). The model keeps what `print`,
//! `ptype`, `whatis`, watchpoints and the built-in formatters need: C++ classes with their
//! bases, static members, methods and template arguments, scoped enums, and Rust enums with
//! their variant parts. Names are qualified as gdb shows them (`geo::Circle`,
//! `core::option::Option<i32>`), enumerators too (`geo::Color::Red`).

/// Index of a type in its [`TypeTable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct TypeId(pub usize);

/// The source language of a compile unit; it decides how values are formatted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Language {
    /// C and anything else formatted as C.
    #[default]
    C,
    /// C++ (formatted as C, with classes, references and the libstdc++ formatters).
    Cpp,
    /// Rust.
    Rust,
}

/// How the bits of a base type are to be read (DWARF `DW_ATE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Two's-complement integer.
    Signed,
    /// Unsigned integer.
    Unsigned,
    /// `char`/`signed char`: printed as number and character.
    SignedChar,
    /// `unsigned char`.
    UnsignedChar,
    /// Boolean.
    Bool,
    /// IEEE float of the type's size.
    Float,
    /// A Unicode scalar (Rust `char`, C `char32_t`).
    Utf,
}

/// What a member of an aggregate is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MemberKind {
    /// A data member stored in the object.
    #[default]
    Field,
    /// A base-class subobject (C++ inheritance); its name is the base's type name.
    Base {
        /// `virtual` inheritance (its offset is found at run time; the one recorded is a guess).
        virtual_base: bool,
    },
    /// A static data member: not in the object, at this runtime address when the module
    /// defines it (`None`: declared only, gdb's `<optimized out>`).
    Static {
        /// Runtime address of its definition.
        address: Option<u64>,
    },
}

/// C++ member access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Access {
    /// `public` (and everything in C and Rust).
    #[default]
    Public,
    /// `protected`.
    Protected,
    /// `private`.
    Private,
}

/// One member of a struct, union or class: a field, a base class or a static member, in
/// declaration order (DWARF lists bases first, as gdb prints them).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Member {
    /// Its name (`None` for an anonymous member).
    pub name: Option<String>,
    /// Its type.
    pub ty: TypeId,
    /// Byte offset from the start of the aggregate.
    pub offset: u64,
    /// For bit fields: (bit offset from `offset`, bit size).
    pub bits: Option<(u64, u64)>,
    /// Field, base class or static member.
    pub kind: MemberKind,
    /// Its access.
    pub access: Access,
    /// Made up by the compiler (`_vptr.Shape`).
    pub artificial: bool,
}

impl Member {
    /// A plain public field.
    pub fn field(name: Option<&str>, ty: TypeId, offset: u64) -> Member {
        Member {
            name: name.map(str::to_string),
            ty,
            offset,
            ..Member::default()
        }
    }

    /// True for a base-class subobject.
    pub fn is_base(&self) -> bool {
        matches!(self.kind, MemberKind::Base { .. })
    }

    /// True for a static member.
    pub fn is_static(&self) -> bool {
        matches!(self.kind, MemberKind::Static { .. })
    }
}

/// A member function, as `ptype` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Method {
    /// Its name (`Circle`, `~Shape`, `area`, `operator[]`).
    pub name: String,
    /// Return type (`None`: void, or a constructor).
    pub ret: Option<TypeId>,
    /// Parameter types, without `this`.
    pub params: Vec<TypeId>,
    /// `virtual`.
    pub is_virtual: bool,
    /// A `const` member function (its `this` points to const).
    pub is_const: bool,
    /// A `static` member function (no `this`).
    pub is_static: bool,
    /// Made up by the compiler (implicit constructors and operators).
    pub artificial: bool,
    /// Its access.
    pub access: Access,
}

/// A template argument of a class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplateArg {
    /// `typename T = int`.
    Type(TypeId),
    /// `int N = 3`: the value and its type.
    Value(i64, Option<TypeId>),
}

/// One variant of a Rust enum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variant {
    /// The discriminant value that selects it (`None`: the default variant, e.g. the one a
    /// niche-optimised enum uses for every other value).
    pub discr_value: Option<u64>,
    /// The member holding the variant: named as the variant, of its struct type.
    pub member: Member,
}

/// A Rust enum's variant part (DWARF `DW_TAG_variant_part`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VariantPart {
    /// Where the discriminant is: (byte offset, type). `None`: a single-variant enum.
    pub discr: Option<(u64, TypeId)>,
    /// The variants in declaration order.
    pub variants: Vec<Variant>,
}

/// What a struct, union or class has beyond its members.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AggregateInfo {
    /// Member functions (dropped from the copies values carry; kept for `ptype`).
    pub methods: Vec<Method>,
    /// Template arguments, by parameter name.
    pub templates: Vec<(String, TemplateArg)>,
    /// A Rust enum's variants.
    pub variants: Option<VariantPart>,
    /// Only declared here (`struct S;`): the definition is elsewhere.
    pub declaration: bool,
    /// Declared in C++ (named without `struct`, printed with bases and statics).
    pub cpp: bool,
}

/// Which kind of aggregate a [`Type::Struct`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggregateKind {
    /// `struct`.
    Struct,
    /// `union`.
    Union,
    /// `class` (C++).
    Class,
}

/// A type qualifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Qualifier {
    /// `const`.
    Const,
    /// `volatile`.
    Volatile,
}

/// One type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Type {
    /// `void` (also what a pointer without a pointee type points to).
    Void,
    /// A base type: `int`, `unsigned long`, `double`, `bool`, Rust `u8`, `f64`, `char`…
    Base {
        /// Its name as the language spells it.
        name: String,
        /// Size in bytes.
        size: u64,
        /// How to read its bits.
        encoding: Encoding,
    },
    /// A pointer or reference (Rust `&T`, `*const T`; C++ `T&`, `T&&`).
    Pointer {
        /// What it points to; `None` for `void *`.
        pointee: Option<TypeId>,
        /// The name DWARF gives it, if any (Rust names its pointer types, e.g. `&i32`).
        name: Option<String>,
        /// True for C++ references (printed as `@0x…: value`).
        is_reference: bool,
        /// True for a C++ rvalue reference (`T &&`).
        rvalue: bool,
    },
    /// A fixed-size array. Multi-dimensional arrays are arrays of arrays.
    Array {
        /// Element type.
        elem: TypeId,
        /// Number of elements, if known.
        count: Option<u64>,
    },
    /// A struct, union or class.
    Struct {
        /// Its name, if any.
        name: Option<String>,
        /// Which kind.
        kind: AggregateKind,
        /// Size in bytes.
        size: u64,
        /// Members in declaration order.
        members: Vec<Member>,
        /// Methods, template arguments, variants.
        info: Box<AggregateInfo>,
    },
    /// An enumeration.
    Enum {
        /// Its name, if any.
        name: Option<String>,
        /// Size in bytes.
        size: u64,
        /// Whether the underlying integer is signed.
        signed: bool,
        /// Enumerators in declaration order, named as gdb prints them (C++: qualified).
        values: Vec<(String, i64)>,
        /// C++ `enum class`.
        scoped: bool,
        /// Declared in C++ (named without `enum`).
        cpp: bool,
        /// The underlying type DWARF names (C++ `: unsigned char`).
        underlying: Option<TypeId>,
    },
    /// A typedef.
    Typedef {
        /// The new name.
        name: String,
        /// The aliased type (`None` for an incomplete typedef of void).
        target: Option<TypeId>,
    },
    /// `const T` / `volatile T`.
    Qualified {
        /// The qualifier.
        qualifier: Qualifier,
        /// The qualified type (`None` for `const void`).
        target: Option<TypeId>,
    },
    /// A function type (what a function pointer points to).
    Function {
        /// Return type (`None` for void).
        ret: Option<TypeId>,
        /// Parameter types.
        params: Vec<TypeId>,
    },
    /// Something the reader did not model (printed as `<unknown type>`).
    Unknown,
}

/// All types of one module, indexed by [`TypeId`].
#[derive(Debug, Clone, Default)]
pub struct TypeTable {
    types: Vec<Type>,
}

impl TypeTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a type and returns its id.
    pub fn add(&mut self, ty: Type) -> TypeId {
        self.types.push(ty);
        TypeId(self.types.len() - 1)
    }

    /// Replaces a type (used to fill in placeholders for recursive types).
    pub fn set(&mut self, id: TypeId, ty: Type) {
        if let Some(slot) = self.types.get_mut(id.0) {
            *slot = ty;
        }
    }

    /// The type with this id ([`Type::Unknown`] for an id from another table).
    pub fn get(&self, id: TypeId) -> &Type {
        self.types.get(id.0).unwrap_or(&Type::Unknown)
    }

    /// Number of types.
    pub fn len(&self) -> usize {
        self.types.len()
    }

    /// True when the table holds no type.
    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }

    /// Follows typedefs and qualifiers to the type that decides the representation.
    pub fn strip(&self, mut id: TypeId) -> Option<TypeId> {
        for _ in 0..64 {
            match self.get(id) {
                Type::Typedef { target, .. } | Type::Qualified { target, .. } => id = (*target)?,
                _ => return Some(id),
            }
        }
        Some(id)
    }

    /// Size in bytes of a type (pointers are 8; `None` when unknown, e.g. an incomplete array).
    pub fn size_of(&self, id: TypeId) -> Option<u64> {
        match self.get(self.strip(id)?) {
            Type::Void => Some(1),
            Type::Base { size, .. } | Type::Struct { size, .. } | Type::Enum { size, .. } => {
                Some(*size)
            }
            Type::Pointer { .. } => Some(8),
            Type::Array { elem, count } => Some(self.size_of(*elem)? * (*count)?),
            Type::Function { .. } => Some(1),
            Type::Typedef { .. } | Type::Qualified { .. } | Type::Unknown => None,
        }
    }
}
