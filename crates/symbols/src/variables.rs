//! Variables in scope and where their values live (DWARF location expressions).

use gimli::{Reader as _, UnitOffset};

use crate::error::SymbolsError;
use crate::module::{attr_str, pc_range, type_ref, R};
use crate::program::{ModuleId, Program, TypeRef};
use crate::target::{DwarfRegs, ReadMemory};
use crate::unwind::Frame;

/// A variable or parameter that a name can refer to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable {
    /// Its name.
    pub name: String,
    /// Its type.
    pub ty: TypeRef,
    /// True for a function parameter.
    pub is_param: bool,
    module: usize,
    unit: usize,
    die: UnitOffset,
    /// The subprogram DIE whose frame base applies (None for globals).
    func: Option<UnitOffset>,
}

/// Where a variable's value is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// In memory at this address.
    Address(u64),
    /// In a register (DWARF number).
    Register(u16),
    /// Not stored anywhere: this is the value (DW_OP_stack_value, DW_OP_implicit_value).
    Value(Vec<u8>),
    /// Optimized out.
    Unavailable,
}

/// A lexical scope's variables, innermost scopes first.
struct ScopeVars {
    params: Vec<Variable>,
    /// Innermost block first; declaration order inside a block.
    blocks: Vec<Vec<Variable>>,
}

fn lookup_pc(frame: &Frame, index_hint_outer: bool) -> u64 {
    let pc = frame.regs.pc().unwrap_or(0);
    if index_hint_outer {
        pc.wrapping_sub(1)
    } else {
        pc
    }
}

impl Program {
    /// The variables visible at `frame`'s pc, by scope.
    fn scope_vars(&self, frame: &Frame) -> Option<ScopeVars> {
        // A frame of an inlined copy: the copy's parameters and blocks.
        if let Some(site) = frame.inline.as_ref().and_then(|i| i.site) {
            let lookup = frame.inline.as_ref().map(|i| i.lookup_pc)?;
            let (mi, si) = site;
            let m = self.module(mi);
            let s = &m.inlines[si];
            let unit = &m.units[s.unit];
            let a = lookup.wrapping_sub(m.bias);
            let mut params = Vec::new();
            let mut levels = Vec::new();
            let mut tree = unit.entries_tree(Some(s.die)).ok()?;
            let root = tree.root().ok()?;
            walk(
                m,
                mi,
                s.unit,
                s.func,
                unit,
                root,
                a,
                &mut params,
                &mut levels,
                true,
            )
            .ok()?;
            levels.reverse();
            return Some(ScopeVars {
                params,
                blocks: levels,
            });
        }
        let pc = frame
            .inline
            .as_ref()
            .map(|i| i.lookup_pc)
            .or(frame.regs.pc())?;
        // A return address may be the first byte of the next line or function: an outer
        // frame's pc is looked up one byte back. Frame 0 is exact (we cannot tell here which
        // frame this is, so try exact first and fall back).
        let (mi, f) = self
            .func_at(pc)
            .or_else(|| self.func_at(lookup_pc(frame, true)))?;
        let m = self.module(mi);
        let a = pc.wrapping_sub(m.bias);
        let unit = &m.units[f.unit];
        let mut tree = unit.entries_tree(Some(f.die)).ok()?;
        let root = tree.root().ok()?;
        let mut out = ScopeVars {
            params: Vec::new(),
            blocks: Vec::new(),
        };
        let mut stack = vec![(root, true)];
        let _ = &mut stack;
        // Iterative walk: collect (depth, block vars) for blocks containing the pc.
        let mut levels: Vec<Vec<Variable>> = Vec::new();
        collect(m, mi, f.unit, f.die, unit, a, &mut out.params, &mut levels).ok()?;
        levels.reverse();
        out.blocks = levels;
        Some(out)
    }

    /// Local variables in scope at the frame's pc, innermost block first.
    pub fn locals(&self, frame: &Frame) -> Vec<Variable> {
        self.scope_vars(frame)
            .map(|s| s.blocks.into_iter().flatten().collect())
            .unwrap_or_default()
    }

    /// The function's parameters, in declaration order.
    pub fn params(&self, frame: &Frame) -> Vec<Variable> {
        self.scope_vars(frame).map(|s| s.params).unwrap_or_default()
    }

    /// C's name lookup: innermost local or parameter at `frame`, then a global (the frame's
    /// module first).
    pub fn lookup_variable(&self, name: &str, frame: Option<&Frame>) -> Option<Variable> {
        let key = (
            frame.and_then(|f| f.regs.pc()).unwrap_or(0),
            name.to_string(),
        );
        if let Some(v) = self.lookups.borrow().get(&key) {
            return v.clone();
        }
        let found = self.lookup_variable_uncached(name, frame);
        let mut cache = self.lookups.borrow_mut();
        if cache.len() > 4096 {
            cache.clear();
        }
        cache.insert(key, found.clone());
        found
    }

    fn lookup_variable_uncached(&self, name: &str, frame: Option<&Frame>) -> Option<Variable> {
        if let Some(fr) = frame {
            if let Some(s) = self.scope_vars(fr) {
                for block in &s.blocks {
                    if let Some(v) = block.iter().find(|v| v.name == name) {
                        return Some(v.clone());
                    }
                }
                if let Some(v) = s.params.iter().find(|v| v.name == name) {
                    return Some(v.clone());
                }
            }
        }
        let first = frame
            .and_then(|f| f.regs.pc())
            .and_then(|pc| self.module_at(pc))
            .map(|(mi, _)| mi);
        let order = first.into_iter().chain(0..self.modules.len());
        for mi in order {
            let m = self.module(mi);
            if let Some(globals) = m.globals.get(name) {
                // Prefer the definition that has a type.
                if let Some(g) = globals.iter().find(|g| g.ty.is_some()) {
                    return Some(Variable {
                        name: name.to_string(),
                        ty: TypeRef {
                            module: ModuleId(mi),
                            id: g.ty?,
                        },
                        is_param: false,
                        module: mi,
                        unit: g.unit,
                        die: g.die,
                        func: None,
                    });
                }
            }
        }
        None
    }

    /// Evaluates the variable's DWARF location at `frame`.
    pub fn variable_location(
        &self,
        var: &Variable,
        frame: Option<&Frame>,
        mem: &dyn ReadMemory,
    ) -> Result<Location, SymbolsError> {
        let m = self.module(var.module);
        let unit = &m.units[var.unit];
        let entry = unit
            .entry(var.die)
            .map_err(|e| SymbolsError::Location(e.to_string()))?;
        // A location list is looked up at the call for an outer frame.
        let pc = frame
            .and_then(|f| {
                let pc = f.regs.pc()?;
                Some(if f.return_address {
                    pc.wrapping_sub(1)
                } else {
                    pc
                })
            })
            .unwrap_or(0);
        let expr = match entry.attr_value(gimli::DW_AT_location) {
            Some(gimli::AttributeValue::Exprloc(e)) => e,
            Some(
                v @ (gimli::AttributeValue::LocationListsRef(_)
                | gimli::AttributeValue::SecOffset(_)
                | gimli::AttributeValue::DebugLocListsIndex(_)),
            ) => {
                let offset = match m.dwarf.attr_locations_offset(unit, v) {
                    Ok(Some(o)) => o,
                    _ => return Ok(Location::Unavailable),
                };
                let mut iter = m
                    .dwarf
                    .locations(unit, offset)
                    .map_err(|e| SymbolsError::Location(e.to_string()))?;
                let a = pc.wrapping_sub(m.bias);
                let mut found = None;
                while let Ok(Some(l)) = iter.next() {
                    if a >= l.range.begin && a < l.range.end {
                        found = Some(l.data);
                        break;
                    }
                }
                match found {
                    Some(e) => e,
                    None => return Ok(Location::Unavailable),
                }
            }
            Some(gimli::AttributeValue::Block(_)) | None => {
                if let Some(v) = entry.attr_value(gimli::DW_AT_const_value) {
                    let bytes = match v {
                        gimli::AttributeValue::Block(b) => {
                            b.to_slice().map(|s| s.to_vec()).unwrap_or_default()
                        }
                        other => other
                            .sdata_value()
                            .or_else(|| other.udata_value().map(|u| u as i64))
                            .map(|x| x.to_le_bytes().to_vec())
                            .unwrap_or_default(),
                    };
                    return Ok(Location::Value(bytes));
                }
                return Ok(Location::Unavailable);
            }
            _ => return Ok(Location::Unavailable),
        };
        let frame_base = match var.func {
            Some(func) => self.frame_base(var.module, var.unit, func, frame, mem)?,
            None => None,
        };
        self.eval_location(var.module, var.unit, expr, frame, frame_base, mem)
    }

    fn frame_base(
        &self,
        mi: usize,
        ui: usize,
        func: UnitOffset,
        frame: Option<&Frame>,
        mem: &dyn ReadMemory,
    ) -> Result<Option<u64>, SymbolsError> {
        let m = self.module(mi);
        let unit = &m.units[ui];
        let entry = unit
            .entry(func)
            .map_err(|e| SymbolsError::Location(e.to_string()))?;
        let Some(gimli::AttributeValue::Exprloc(e)) = entry.attr_value(gimli::DW_AT_frame_base)
        else {
            return Ok(None);
        };
        match self.eval_location(mi, ui, e, frame, None, mem)? {
            Location::Address(a) => Ok(Some(a)),
            Location::Register(r) => Ok(frame.and_then(|f| f.regs.get(r))),
            _ => Ok(None),
        }
    }

    fn eval_location(
        &self,
        mi: usize,
        ui: usize,
        expr: gimli::Expression<R>,
        frame: Option<&Frame>,
        frame_base: Option<u64>,
        mem: &dyn ReadMemory,
    ) -> Result<Location, SymbolsError> {
        let m = self.module(mi);
        let unit = &m.units[ui];
        let err = |e: gimli::Error| SymbolsError::Location(e.to_string());
        let mut eval = expr.evaluation(unit.encoding());
        let mut state = eval.evaluate().map_err(err)?;
        loop {
            use gimli::EvaluationResult as E;
            state = match state {
                E::Complete => break,
                E::RequiresMemory { address, size, .. } => {
                    let mut b = [0u8; 8];
                    let n = (size as usize).min(8);
                    mem.read_memory(address, &mut b[..n])?;
                    eval.resume_with_memory(gimli::Value::Generic(u64::from_le_bytes(b)))
                        .map_err(err)?
                }
                E::RequiresRegister { register, .. } => {
                    let Some(v) = frame.and_then(|f| f.regs.get(register.0)) else {
                        return Ok(Location::Unavailable);
                    };
                    eval.resume_with_register(gimli::Value::Generic(v))
                        .map_err(err)?
                }
                E::RequiresFrameBase => {
                    let Some(fb) = frame_base else {
                        return Ok(Location::Unavailable);
                    };
                    eval.resume_with_frame_base(fb).map_err(err)?
                }
                E::RequiresCallFrameCfa => {
                    let Some(cfa) = frame.and_then(|f| self.cfa_of(f, mem)) else {
                        return Ok(Location::Unavailable);
                    };
                    eval.resume_with_call_frame_cfa(cfa).map_err(err)?
                }
                E::RequiresRelocatedAddress(a) => eval
                    .resume_with_relocated_address(a.wrapping_add(m.bias))
                    .map_err(err)?,
                _ => return Ok(Location::Unavailable),
            };
        }
        let pieces = eval.result();
        let Some(p) = pieces.first() else {
            return Ok(Location::Unavailable);
        };
        Ok(match &p.location {
            gimli::Location::Address { address } => Location::Address(*address),
            gimli::Location::Register { register } => Location::Register(register.0),
            gimli::Location::Value { value } => {
                let v = match value {
                    gimli::Value::Generic(x) | gimli::Value::U64(x) => *x,
                    gimli::Value::I64(x) => *x as u64,
                    gimli::Value::U32(x) => *x as u64,
                    gimli::Value::I32(x) => *x as i64 as u64,
                    _ => 0,
                };
                Location::Value(v.to_le_bytes().to_vec())
            }
            gimli::Location::Bytes { value } => {
                Location::Value(value.to_slice().map(|s| s.to_vec()).unwrap_or_default())
            }
            _ => Location::Unavailable,
        })
    }

    /// The frame's CFA: known from unwinding, or computed for frame 0.
    fn cfa_of(&self, frame: &Frame, mem: &dyn ReadMemory) -> Option<u64> {
        if frame.cfa.is_some() {
            return frame.cfa;
        }
        let regs: DwarfRegs = frame.regs;
        self.unwind(&regs, mem, 1).first().and_then(|f| f.cfa)
    }
}

/// Collects the parameters of the subprogram at `func` and the variables of every block
/// containing file address `a`, outermost block first.
#[allow(clippy::too_many_arguments)]
fn collect(
    m: &crate::module::Module,
    mi: usize,
    ui: usize,
    func: UnitOffset,
    unit: &gimli::Unit<R>,
    a: u64,
    params: &mut Vec<Variable>,
    levels: &mut Vec<Vec<Variable>>,
) -> Result<(), gimli::Error> {
    let mut tree = unit.entries_tree(Some(func))?;
    let root = tree.root()?;
    walk(m, mi, ui, func, unit, root, a, params, levels, true)
}

#[allow(clippy::too_many_arguments)]
fn walk(
    m: &crate::module::Module,
    mi: usize,
    ui: usize,
    func: UnitOffset,
    unit: &gimli::Unit<R>,
    node: gimli::EntriesTreeNode<R>,
    a: u64,
    params: &mut Vec<Variable>,
    levels: &mut Vec<Vec<Variable>>,
    is_function: bool,
) -> Result<(), gimli::Error> {
    let mut here = Vec::new();
    let mut children = node.children();
    let mut nested = Vec::new();
    while let Some(child) = children.next()? {
        let e = child.entry();
        match e.tag() {
            gimli::DW_TAG_formal_parameter | gimli::DW_TAG_variable => {
                // A concrete copy of an inline function names its variables through
                // DW_AT_abstract_origin.
                let origin = match e.attr_value(gimli::DW_AT_abstract_origin) {
                    Some(gimli::AttributeValue::UnitRef(o)) => unit.entry(o).ok(),
                    _ => None,
                };
                let Some(name) = attr_str(&m.dwarf, unit, e, gimli::DW_AT_name).or_else(|| {
                    origin
                        .as_ref()
                        .and_then(|o| attr_str(&m.dwarf, unit, o, gimli::DW_AT_name))
                }) else {
                    continue;
                };
                let Some(tref) = type_ref(e).or_else(|| origin.as_ref().and_then(type_ref)) else {
                    continue;
                };
                let Some(id) = m.type_memo.get(&(ui, tref)).copied() else {
                    continue;
                };
                let v = Variable {
                    name,
                    ty: TypeRef {
                        module: ModuleId(mi),
                        id,
                    },
                    is_param: e.tag() == gimli::DW_TAG_formal_parameter,
                    module: mi,
                    unit: ui,
                    die: e.offset(),
                    func: Some(func),
                };
                if v.is_param && is_function {
                    params.push(v);
                } else if !v.is_param {
                    here.push(v);
                }
            }
            gimli::DW_TAG_lexical_block => {
                let (lo, hi) = pc_range(&m.dwarf, unit, e);
                let _ = &lo;
                let inside = if hi > lo {
                    a >= lo && a < hi
                } else {
                    match m.dwarf.die_ranges(unit, e) {
                        Ok(mut rs) => {
                            let mut hit = false;
                            while let Ok(Some(r)) = rs.next() {
                                if a >= r.begin && a < r.end {
                                    hit = true;
                                }
                            }
                            hit
                        }
                        Err(_) => false,
                    }
                };
                if inside {
                    nested.push(e.offset());
                }
            }
            _ => {}
        }
    }
    levels.push(here);
    for off in nested {
        let mut tree = unit.entries_tree(Some(off))?;
        let root = tree.root()?;
        walk(m, mi, ui, func, unit, root, a, params, levels, false)?;
    }
    Ok(())
}
