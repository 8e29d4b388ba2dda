//! DWARF type DIEs converted into the owned [`crate::types`] model.
//!
//! Conversion is memoized by DIE; a placeholder is inserted before a type's children are
//! converted, so self-referential types (`struct node { struct node *next; }`) terminate.
//! C++ and Rust names are qualified with the scopes around their DIE (`geo::Circle`), which
//! [`scope_prefixes`] computes once per unit, since DIEs do not point to their parents.

use std::collections::HashMap;

use gimli::UnitOffset;

use crate::module::{attr_str, type_ref, R};
use crate::types::{
    Access, AggregateInfo, AggregateKind, Encoding, Member, MemberKind, Method, Qualifier,
    TemplateArg, Type, TypeId, TypeTable, Variant, VariantPart,
};

/// `ns::Class::` for every DIE of a unit that sits inside a namespace or an aggregate (C++
/// and Rust units only): the prefix its name takes. Keys are DIE offsets.
pub(crate) fn scope_prefixes(
    dwarf: &gimli::Dwarf<R>,
    unit: &gimli::Unit<R>,
) -> HashMap<UnitOffset, String> {
    let mut out = HashMap::new();
    let mut entries = unit.entries();
    // (depth, prefix for children)
    let mut stack: Vec<(isize, String)> = Vec::new();
    while let Ok(Some(entry)) = entries.next_dfs() {
        let depth = entry.depth();
        while stack.last().is_some_and(|s| s.0 >= depth) {
            stack.pop();
        }
        let prefix = stack.last().map(|s| s.1.clone()).unwrap_or_default();
        if !prefix.is_empty() {
            out.insert(entry.offset(), prefix.clone());
        }
        let scope = match entry.tag() {
            gimli::DW_TAG_namespace => Some(
                attr_str(dwarf, unit, entry, gimli::DW_AT_name)
                    .unwrap_or_else(|| "(anonymous namespace)".into()),
            ),
            gimli::DW_TAG_structure_type
            | gimli::DW_TAG_class_type
            | gimli::DW_TAG_union_type
            | gimli::DW_TAG_enumeration_type => attr_str(dwarf, unit, entry, gimli::DW_AT_name),
            _ => None,
        };
        if entry.has_children() {
            match scope {
                Some(n) => stack.push((depth, format!("{prefix}{n}::"))),
                // A function's local types and variables are named plainly, as gdb does.
                None if entry.tag() == gimli::DW_TAG_subprogram
                    || entry.tag() == gimli::DW_TAG_lexical_block =>
                {
                    stack.push((depth, String::new()))
                }
                None => stack.push((depth, prefix)),
            }
        }
    }
    out
}

/// A C++ type name as gdb's canonicaliser spells it: GCC's `short int`, `long unsigned int`
/// become `short`, `unsigned long` (inside template arguments too).
pub(crate) fn canonical_cxx(name: &str) -> String {
    const SPELLINGS: [(&str, &str); 8] = [
        ("long long unsigned int", "unsigned long long"),
        ("long long int", "long long"),
        ("long unsigned int", "unsigned long"),
        ("short unsigned int", "unsigned short"),
        ("long int", "long"),
        ("short int", "short"),
        ("__int128 unsigned", "unsigned __int128"),
        ("long double", "long double"),
    ];
    let mut out = name.to_string();
    for (gcc, gdb) in SPELLINGS {
        if !out.contains(gcc) {
            continue;
        }
        // Whole words only (`long int` inside `long long int` is handled first).
        let mut res = String::new();
        let mut rest = out.as_str();
        while let Some(i) = rest.find(gcc) {
            let before_ok = i == 0 || !rest.as_bytes()[i - 1].is_ascii_alphanumeric();
            let after = i + gcc.len();
            let after_ok = after == rest.len() || !rest.as_bytes()[after].is_ascii_alphanumeric();
            res.push_str(&rest[..i]);
            res.push_str(if before_ok && after_ok { gdb } else { gcc });
            rest = &rest[after..];
        }
        res.push_str(rest);
        out = res;
    }
    out
}

fn flag(entry: &gimli::DebuggingInformationEntry<R>, at: gimli::DwAt) -> bool {
    matches!(
        entry.attr_value(at),
        Some(gimli::AttributeValue::Flag(true))
    )
}

fn access(entry: &gimli::DebuggingInformationEntry<R>, default: Access) -> Access {
    match entry.attr_value(gimli::DW_AT_accessibility) {
        Some(gimli::AttributeValue::Accessibility(gimli::DW_ACCESS_private)) => Access::Private,
        Some(gimli::AttributeValue::Accessibility(gimli::DW_ACCESS_protected)) => Access::Protected,
        Some(gimli::AttributeValue::Accessibility(_)) => Access::Public,
        _ => default,
    }
}

fn member_offset(e: &gimli::DebuggingInformationEntry<R>) -> u64 {
    match e.attr_value(gimli::DW_AT_data_member_location) {
        Some(v) => v.udata_value().unwrap_or(0),
        None => 0,
    }
}

/// A DIE's children as (tag, offset), without holding the tree.
fn children(unit: &gimli::Unit<R>, off: UnitOffset) -> Vec<(gimli::DwTag, UnitOffset)> {
    let mut out = Vec::new();
    let Ok(mut tree) = unit.entries_tree(Some(off)) else {
        return out;
    };
    let Ok(root) = tree.root() else { return out };
    let mut it = root.children();
    while let Ok(Some(child)) = it.next() {
        out.push((child.entry().tag(), child.entry().offset()));
    }
    out
}

/// Converts type DIEs of one module.
pub(crate) struct TypeBuilder<'a> {
    pub dwarf: &'a gimli::Dwarf<R>,
    pub units: &'a [gimli::Unit<R>],
    pub table: &'a mut TypeTable,
    pub memo: &'a mut HashMap<(usize, UnitOffset), TypeId>,
    pub names: &'a mut HashMap<String, TypeId>,
    /// [`scope_prefixes`] of the unit being converted (empty for C).
    pub prefixes: &'a HashMap<UnitOffset, String>,
    /// Static members seen: (struct, member index, unit, declaration DIE), for the module to
    /// fill in the address of their definitions.
    pub statics: &'a mut Vec<(TypeId, usize, usize, UnitOffset)>,
    /// The unit is C++.
    pub cpp: bool,
}

fn udata(entry: &gimli::DebuggingInformationEntry<R>, at: gimli::DwAt) -> Option<u64> {
    entry.attr_value(at).and_then(|v| v.udata_value())
}

impl TypeBuilder<'_> {
    /// The type id of the DIE at `off` in unit `u`, converting it on first use.
    pub fn convert(&mut self, u: usize, off: UnitOffset) -> TypeId {
        if let Some(id) = self.memo.get(&(u, off)) {
            return *id;
        }
        let id = self.table.add(Type::Unknown);
        self.memo.insert((u, off), id);
        let ty = self.build(u, off).unwrap_or(Type::Unknown);
        self.table.set(id, ty);
        id
    }

    fn target(&mut self, u: usize, entry: &gimli::DebuggingInformationEntry<R>) -> Option<TypeId> {
        type_ref(entry).map(|o| self.convert(u, o))
    }

    fn build(&mut self, u: usize, off: UnitOffset) -> Option<Type> {
        let unit = &self.units[u];
        let entry = unit.entry(off).ok()?;
        let name = attr_str(self.dwarf, unit, &entry, gimli::DW_AT_name).map(|n| {
            match (entry.tag(), self.prefixes.get(&off)) {
                (
                    gimli::DW_TAG_structure_type
                    | gimli::DW_TAG_class_type
                    | gimli::DW_TAG_union_type
                    | gimli::DW_TAG_enumeration_type
                    | gimli::DW_TAG_typedef,
                    Some(p),
                ) => format!("{p}{n}"),
                _ => n,
            }
        });
        // gdb writes C++ names in their canonical spelling (`short`, `unsigned long`).
        let name = match (self.cpp, name) {
            (true, Some(n)) => Some(canonical_cxx(&n)),
            (_, n) => n,
        };
        let size = udata(&entry, gimli::DW_AT_byte_size).unwrap_or(0);
        let ty = match entry.tag() {
            gimli::DW_TAG_base_type => {
                let enc = match entry.attr_value(gimli::DW_AT_encoding) {
                    Some(gimli::AttributeValue::Encoding(e)) => e,
                    _ => gimli::DW_ATE_signed,
                };
                let encoding = match enc {
                    gimli::DW_ATE_unsigned => Encoding::Unsigned,
                    gimli::DW_ATE_signed_char => Encoding::SignedChar,
                    gimli::DW_ATE_unsigned_char => Encoding::UnsignedChar,
                    gimli::DW_ATE_boolean => Encoding::Bool,
                    gimli::DW_ATE_float => Encoding::Float,
                    gimli::DW_ATE_UTF => Encoding::Utf,
                    _ => Encoding::Signed,
                };
                let name = name.clone().unwrap_or_default();
                // Rust's u8 is DW_ATE_unsigned_char, but prints as a number.
                let encoding = if encoding == Encoding::UnsignedChar && name == "u8" {
                    Encoding::Unsigned
                } else if encoding == Encoding::SignedChar && name == "i8" {
                    Encoding::Signed
                } else {
                    encoding
                };
                Type::Base {
                    name,
                    size,
                    encoding,
                }
            }
            gimli::DW_TAG_pointer_type
            | gimli::DW_TAG_reference_type
            | gimli::DW_TAG_rvalue_reference_type => Type::Pointer {
                pointee: self.target(u, &entry),
                name: name.clone(),
                is_reference: entry.tag() != gimli::DW_TAG_pointer_type,
                rvalue: entry.tag() == gimli::DW_TAG_rvalue_reference_type,
            },
            gimli::DW_TAG_const_type => Type::Qualified {
                qualifier: Qualifier::Const,
                target: self.target(u, &entry),
            },
            gimli::DW_TAG_volatile_type => Type::Qualified {
                qualifier: Qualifier::Volatile,
                target: self.target(u, &entry),
            },
            gimli::DW_TAG_restrict_type | gimli::DW_TAG_atomic_type => Type::Typedef {
                name: String::new(),
                target: self.target(u, &entry),
            },
            gimli::DW_TAG_typedef => Type::Typedef {
                name: name.clone().unwrap_or_default(),
                target: self.target(u, &entry),
            },
            gimli::DW_TAG_unspecified_type => Type::Void,
            gimli::DW_TAG_array_type => {
                let elem = self.target(u, &entry)?;
                // One subrange per dimension; the innermost is the last.
                let mut dims = Vec::new();
                let mut tree = unit.entries_tree(Some(off)).ok()?;
                let root = tree.root().ok()?;
                let mut children = root.children();
                while let Ok(Some(child)) = children.next() {
                    let e = child.entry();
                    if e.tag() == gimli::DW_TAG_subrange_type {
                        let count = udata(e, gimli::DW_AT_count).or_else(|| {
                            match e.attr_value(gimli::DW_AT_upper_bound) {
                                Some(v) => v
                                    .udata_value()
                                    .or_else(|| v.sdata_value().map(|s| s as u64))
                                    .map(|ub| ub.wrapping_add(1)),
                                None => None,
                            }
                        });
                        dims.push(count);
                    }
                }
                if dims.is_empty() {
                    dims.push(None);
                }
                let mut t = elem;
                for (i, count) in dims.iter().enumerate().rev() {
                    if i == 0 {
                        return Some(Type::Array {
                            elem: t,
                            count: *count,
                        });
                    }
                    t = self.table.add(Type::Array {
                        elem: t,
                        count: *count,
                    });
                }
                Type::Unknown
            }
            gimli::DW_TAG_structure_type | gimli::DW_TAG_class_type | gimli::DW_TAG_union_type => {
                let kind = match entry.tag() {
                    gimli::DW_TAG_union_type => AggregateKind::Union,
                    gimli::DW_TAG_class_type => AggregateKind::Class,
                    _ => AggregateKind::Struct,
                };
                let id = self.memo.get(&(u, off)).copied().unwrap_or_default();
                let (members, info) = self.aggregate(u, off, kind, id);
                let info = AggregateInfo {
                    declaration: flag(&entry, gimli::DW_AT_declaration),
                    cpp: self.cpp,
                    ..info
                };
                Type::Struct {
                    name: name.clone(),
                    kind,
                    size,
                    members,
                    info: Box::new(info),
                }
            }
            gimli::DW_TAG_enumeration_type => {
                let mut values = Vec::new();
                let mut tree = unit.entries_tree(Some(off)).ok()?;
                let root = tree.root().ok()?;
                let mut children = root.children();
                while let Ok(Some(child)) = children.next() {
                    let e = child.entry();
                    if e.tag() == gimli::DW_TAG_enumerator {
                        let n =
                            attr_str(self.dwarf, unit, e, gimli::DW_AT_name).unwrap_or_default();
                        let v = e
                            .attr_value(gimli::DW_AT_const_value)
                            .and_then(|v| {
                                v.sdata_value()
                                    .or_else(|| v.udata_value().map(|u| u as i64))
                            })
                            .unwrap_or(0);
                        values.push((n, v));
                    }
                }
                let underlying = self.target(u, &entry);
                let signed = match underlying.and_then(|t| self.table.strip(t)) {
                    Some(t) => matches!(
                        self.table.get(t),
                        Type::Base {
                            encoding: Encoding::Signed | Encoding::SignedChar,
                            ..
                        }
                    ),
                    None => values.iter().any(|(_, v)| *v < 0),
                };
                let scoped = flag(&entry, gimli::DW_AT_enum_class);
                // gdb qualifies C++ enumerators with the scope they are visible in.
                let scope = match (scoped, &name, self.prefixes.get(&off)) {
                    (true, Some(n), _) => format!("{n}::"),
                    (false, _, Some(p)) => p.clone(),
                    _ => String::new(),
                };
                let values = values
                    .into_iter()
                    .map(|(n, v)| (format!("{scope}{n}"), v))
                    .collect();
                Type::Enum {
                    name: name.clone(),
                    size,
                    signed,
                    values,
                    scoped,
                    cpp: self.cpp,
                    underlying,
                }
            }
            gimli::DW_TAG_subroutine_type => {
                let ret = self.target(u, &entry);
                let mut params = Vec::new();
                let mut tree = unit.entries_tree(Some(off)).ok()?;
                let root = tree.root().ok()?;
                let mut children = root.children();
                let mut refs = Vec::new();
                while let Ok(Some(child)) = children.next() {
                    let e = child.entry();
                    if e.tag() == gimli::DW_TAG_formal_parameter {
                        refs.push(type_ref(e));
                    }
                }
                for r in refs.into_iter().flatten() {
                    params.push(self.convert(u, r));
                }
                Type::Function { ret, params }
            }
            _ => Type::Unknown,
        };
        let declaration = flag(&entry, gimli::DW_AT_declaration);
        if let (Some(n), false) = (&name, declaration) {
            let keys: &[&str] = match entry.tag() {
                // C++ lets a class be named with either keyword.
                gimli::DW_TAG_structure_type | gimli::DW_TAG_class_type => &["struct", "class"],
                gimli::DW_TAG_union_type => &["union"],
                gimli::DW_TAG_enumeration_type => &["enum"],
                _ => &[],
            };
            let id = self.memo.get(&(u, off)).copied();
            if let Some(id) = id {
                for k in keys {
                    self.names.entry(format!("{k} {n}")).or_insert(id);
                }
                // Typedefs, base types, and tags in languages without a tag namespace.
                self.names.entry(n.clone()).or_insert(id);
            }
        }
        Some(ty)
    }

    /// The members (fields, bases, statics) and the rest of an aggregate DIE. `id` is the
    /// type's own id (static members are remembered by it).
    fn aggregate(
        &mut self,
        u: usize,
        off: UnitOffset,
        kind: AggregateKind,
        id: TypeId,
    ) -> (Vec<Member>, AggregateInfo) {
        let unit = &self.units[u];
        let default_access = if kind == AggregateKind::Class {
            Access::Private
        } else {
            Access::Public
        };
        let mut members = Vec::new();
        let mut info = AggregateInfo::default();
        for (tag, coff) in children(unit, off) {
            let Ok(e) = unit.entry(coff) else { continue };
            let mname = attr_str(self.dwarf, unit, &e, gimli::DW_AT_name);
            let acc = access(&e, default_access);
            match tag {
                gimli::DW_TAG_inheritance => {
                    let Some(t) = type_ref(&e) else { continue };
                    let ty = self.convert(u, t);
                    let virtual_base = matches!(
                        e.attr_value(gimli::DW_AT_virtuality),
                        Some(gimli::AttributeValue::Virtuality(v)) if v != gimli::DW_VIRTUALITY_none
                    );
                    members.push(Member {
                        name: None,
                        ty,
                        offset: member_offset(&e),
                        bits: None,
                        kind: MemberKind::Base { virtual_base },
                        access: acc,
                        artificial: false,
                    });
                }
                // DWARF 4 marks static members as external declarations; DWARF 5 makes
                // them variables.
                gimli::DW_TAG_member | gimli::DW_TAG_variable => {
                    let Some(t) = type_ref(&e) else { continue };
                    let is_static = tag == gimli::DW_TAG_variable
                        || e.attr_value(gimli::DW_AT_external).is_some()
                        || flag(&e, gimli::DW_AT_declaration);
                    let ty = self.convert(u, t);
                    let artificial = flag(&e, gimli::DW_AT_artificial);
                    if is_static {
                        self.statics.push((id, members.len(), u, coff));
                        members.push(Member {
                            name: mname,
                            ty,
                            offset: 0,
                            bits: None,
                            kind: MemberKind::Static { address: None },
                            access: acc,
                            artificial,
                        });
                        continue;
                    }
                    let offset = member_offset(&e);
                    let bit_size = udata(&e, gimli::DW_AT_bit_size);
                    let data_bit = udata(&e, gimli::DW_AT_data_bit_offset);
                    // DWARF 2/3 style (gcc's -gdwarf-4 still): DW_AT_bit_offset counts from
                    // the most significant bit of a storage unit of DW_AT_byte_size bytes.
                    let msb_bit = udata(&e, gimli::DW_AT_bit_offset)
                        .map(|b| (b, udata(&e, gimli::DW_AT_byte_size)));
                    let (offset, bits) = match (bit_size, data_bit, msb_bit) {
                        (Some(bs), Some(db), _) => (0, Some((db, bs))),
                        (Some(bs), None, Some((bo, storage))) => {
                            let storage = storage.or_else(|| self.table.size_of(ty)).unwrap_or(0);
                            // Little-endian: bits from the storage unit's least significant.
                            let lsb = (storage * 8).saturating_sub(bo).saturating_sub(bs);
                            (offset, Some((lsb, bs)))
                        }
                        (Some(bs), None, None) => (offset, Some((0, bs))),
                        _ => (offset, None),
                    };
                    members.push(Member {
                        name: mname,
                        ty,
                        offset,
                        bits,
                        kind: MemberKind::Field,
                        access: acc,
                        artificial,
                    });
                }
                gimli::DW_TAG_subprogram => {
                    if let Some(m) = self.method(u, coff, mname, acc) {
                        info.methods.push(m);
                    }
                }
                gimli::DW_TAG_template_type_parameter => {
                    if let (Some(n), Some(t)) = (mname, type_ref(&e)) {
                        let ty = self.convert(u, t);
                        info.templates.push((n, TemplateArg::Type(ty)));
                    }
                }
                gimli::DW_TAG_template_value_parameter => {
                    let v = e.attr_value(gimli::DW_AT_const_value).and_then(|v| {
                        v.sdata_value()
                            .or_else(|| v.udata_value().map(|x| x as i64))
                    });
                    if let (Some(n), Some(v)) = (mname, v) {
                        let ty = type_ref(&e).map(|t| self.convert(u, t));
                        info.templates.push((n, TemplateArg::Value(v, ty)));
                    }
                }
                gimli::DW_TAG_variant_part => {
                    info.variants = Some(self.variant_part(u, &e));
                }
                // `typename... _Types`: one argument per child.
                gimli::DW_TAG_GNU_template_parameter_pack => {
                    let pack = mname.unwrap_or_default();
                    for (ptag, poff) in children(unit, coff) {
                        if ptag != gimli::DW_TAG_template_type_parameter {
                            continue;
                        }
                        let Some(t) = unit.entry(poff).ok().and_then(|p| type_ref(&p)) else {
                            continue;
                        };
                        let ty = self.convert(u, t);
                        info.templates.push((pack.clone(), TemplateArg::Type(ty)));
                    }
                }
                _ => {}
            }
        }
        (members, info)
    }

    /// A member function DIE as `ptype` lists it.
    fn method(
        &mut self,
        u: usize,
        off: UnitOffset,
        name: Option<String>,
        acc: Access,
    ) -> Option<Method> {
        let unit = &self.units[u];
        let e = unit.entry(off).ok()?;
        let name = name?;
        let ret = self.target(u, &e);
        // gdb calls a method virtual when it has a vtable slot.
        let is_virtual = e.attr_value(gimli::DW_AT_vtable_elem_location).is_some();
        let artificial = flag(&e, gimli::DW_AT_artificial);
        let mut params = Vec::new();
        let mut this = None;
        for (tag, coff) in children(unit, off) {
            if tag != gimli::DW_TAG_formal_parameter {
                continue;
            }
            let Ok(p) = unit.entry(coff) else { continue };
            let Some(t) = type_ref(&p) else { continue };
            // `this`, and the artificial `__in_chrg` and `__vtt_parm` of structors.
            if flag(&p, gimli::DW_AT_artificial) {
                if this.is_none() && params.is_empty() {
                    this = Some(t);
                }
                continue;
            }
            params.push(t);
        }
        // `this` pointing to const: a const member function.
        let is_const = this.is_some_and(|t| {
            let ty = self.convert(u, t);
            match self.table.get(ty) {
                Type::Pointer {
                    pointee: Some(p), ..
                } => matches!(
                    self.table.get(*p),
                    Type::Qualified {
                        qualifier: Qualifier::Const,
                        ..
                    }
                ),
                _ => false,
            }
        });
        let params = params.into_iter().map(|t| self.convert(u, t)).collect();
        Some(Method {
            name,
            ret,
            params,
            is_virtual,
            is_const,
            is_static: this.is_none(),
            artificial,
            access: acc,
        })
    }

    /// A Rust enum's `DW_TAG_variant_part`.
    fn variant_part(&mut self, u: usize, e: &gimli::DebuggingInformationEntry<R>) -> VariantPart {
        let unit = &self.units[u];
        let discr_die = match e.attr_value(gimli::DW_AT_discr) {
            Some(gimli::AttributeValue::UnitRef(o)) => Some(o),
            _ => None,
        };
        let mut part = VariantPart::default();
        if let Some(d) = discr_die {
            if let Ok(de) = unit.entry(d) {
                if let Some(t) = type_ref(&de) {
                    let ty = self.convert(u, t);
                    part.discr = Some((member_offset(&de), ty));
                }
            }
        }
        for (tag, voff) in children(unit, e.offset()) {
            if tag != gimli::DW_TAG_variant {
                continue;
            }
            let Ok(v) = unit.entry(voff) else { continue };
            let discr_value = v.attr_value(gimli::DW_AT_discr_value).and_then(|x| {
                x.udata_value()
                    .or_else(|| x.sdata_value().map(|s| s as u64))
            });
            for (mtag, moff) in children(unit, voff) {
                if mtag != gimli::DW_TAG_member {
                    continue;
                }
                let Ok(m) = unit.entry(moff) else { continue };
                let Some(t) = type_ref(&m) else { continue };
                let name = attr_str(self.dwarf, unit, &m, gimli::DW_AT_name);
                let ty = self.convert(u, t);
                part.variants.push(Variant {
                    discr_value,
                    member: Member {
                        name,
                        ty,
                        offset: member_offset(&m),
                        ..Member::default()
                    },
                });
            }
        }
        part
    }
}
