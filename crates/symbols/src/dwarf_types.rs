//! DWARF type DIEs converted into the owned [`crate::types`] model.
//!
//! Conversion is memoized by DIE; a placeholder is inserted before a type's children are
//! converted, so self-referential types (`struct node { struct node *next; }`) terminate.

use std::collections::HashMap;

use gimli::UnitOffset;

use crate::module::{attr_str, type_ref, R};
use crate::types::{AggregateKind, Encoding, Member, Qualifier, Type, TypeId, TypeTable};

/// Converts type DIEs of one module.
pub(crate) struct TypeBuilder<'a> {
    pub dwarf: &'a gimli::Dwarf<R>,
    pub units: &'a [gimli::Unit<R>],
    pub table: &'a mut TypeTable,
    pub memo: &'a mut HashMap<(usize, UnitOffset), TypeId>,
    pub names: &'a mut HashMap<String, TypeId>,
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
        let name = attr_str(self.dwarf, unit, &entry, gimli::DW_AT_name);
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
                let mut members = Vec::new();
                let mut tree = unit.entries_tree(Some(off)).ok()?;
                let root = tree.root().ok()?;
                let mut children = root.children();
                let mut raw = Vec::new();
                while let Ok(Some(child)) = children.next() {
                    let e = child.entry();
                    if e.tag() != gimli::DW_TAG_member
                        || e.attr_value(gimli::DW_AT_external).is_some()
                    {
                        continue;
                    }
                    let mname = attr_str(self.dwarf, unit, e, gimli::DW_AT_name);
                    let offset = match e.attr_value(gimli::DW_AT_data_member_location) {
                        Some(v) => v.udata_value().unwrap_or(0),
                        None => 0,
                    };
                    let bit_size = udata(e, gimli::DW_AT_bit_size);
                    let data_bit = udata(e, gimli::DW_AT_data_bit_offset);
                    // DWARF 2/3 style (gcc's -gdwarf-4 still): DW_AT_bit_offset counts from
                    // the most significant bit of a storage unit of DW_AT_byte_size bytes.
                    let msb_bit = udata(e, gimli::DW_AT_bit_offset)
                        .map(|b| (b, udata(e, gimli::DW_AT_byte_size)));
                    raw.push((mname, type_ref(e), offset, bit_size, data_bit, msb_bit));
                }
                for (mname, tref, offset, bit_size, data_bit, msb_bit) in raw {
                    let Some(tref) = tref else { continue };
                    let ty = self.convert(u, tref);
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
                    });
                }
                Type::Struct {
                    name: name.clone(),
                    kind,
                    size,
                    members,
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
                let signed = values.iter().any(|(_, v)| *v < 0);
                Type::Enum {
                    name: name.clone(),
                    size,
                    signed,
                    values,
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
        if let Some(n) = &name {
            let key = match entry.tag() {
                gimli::DW_TAG_structure_type | gimli::DW_TAG_class_type => {
                    Some(format!("struct {n}"))
                }
                gimli::DW_TAG_union_type => Some(format!("union {n}")),
                gimli::DW_TAG_enumeration_type => Some(format!("enum {n}")),
                _ => None,
            };
            let id = self.memo.get(&(u, off)).copied();
            if let Some(id) = id {
                if let Some(k) = key {
                    self.names.entry(k).or_insert(id);
                }
                // Typedefs, base types, and tags in languages without a tag namespace.
                self.names.entry(n.clone()).or_insert(id);
            }
        }
        Some(ty)
    }
}
