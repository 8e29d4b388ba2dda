//! Every module of one process, and the debugger's questions answered over all of them in
//! runtime addresses.

use std::path::{Path, PathBuf};

use crate::error::SymbolsError;
pub use crate::functions::FunctionInfo;
pub use crate::lines::LineInfo;
use crate::module::Module;
use crate::types::{Language, TypeId, TypeTable};

/// Index of a loaded module in its [`Program`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ModuleId(pub usize);

/// A type of one module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TypeRef {
    /// The module whose table holds it.
    pub module: ModuleId,
    /// Its id in that table.
    pub id: TypeId,
}

/// A compile unit as `info source` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitFacts {
    /// DW_AT_comp_dir.
    pub comp_dir: Option<String>,
    /// DW_AT_producer (the compiler and its options).
    pub producer: Option<String>,
    /// The DWARF version.
    pub dwarf_version: u16,
    /// The source language.
    pub language: Language,
}

/// All loaded modules of one process.
#[derive(Default)]
pub struct Program {
    /// Shared with every other program of the thread that loaded the same file at the same
    /// bias (see `module_cache`).
    pub(crate) modules: Vec<std::rc::Rc<Module>>,
    /// Per module (same index): the name the dynamic loader knows the file by (its link
    /// map), which is what gdb shows: `/lib/x86_64-linux-gnu/libc.so.6` for what /proc
    /// calls `/usr/lib/…`.
    loader_names: Vec<Option<PathBuf>>,
    /// Name lookups by (pc, name): a breakpoint condition asks the same question at every
    /// hit, and the answer depends only on the pc's scope.
    pub(crate) lookups:
        std::cell::RefCell<std::collections::HashMap<(u64, String), Option<crate::Variable>>>,
}

impl Program {
    /// No modules.
    pub fn new() -> Program {
        Program::default()
    }

    /// Loads an ELF file whose file address A is at runtime address A + `bias`.
    pub fn load_module(&mut self, path: &Path, bias: u64) -> Result<ModuleId, SymbolsError> {
        let m = crate::module_cache::load(path, bias)?;
        self.modules.push(m);
        self.loader_names.push(None);
        self.lookups.borrow_mut().clear();
        Ok(ModuleId(self.modules.len() - 1))
    }

    /// The executable's entry point (runtime address): where `start` stops in a program
    /// without `main`.
    pub fn entry_point(&self) -> Option<u64> {
        let m = self.modules.first()?;
        (m.entry != 0).then(|| m.entry.wrapping_add(m.bias))
    }

    /// `[start, end)` of the module's `.text` (runtime addresses), as `info sharedlibrary`
    /// shows it.
    pub fn text_range(&self, m: ModuleId) -> Option<(u64, u64)> {
        let m = self.modules.get(m.0)?;
        Some((m.text.0 + m.bias, m.text.1 + m.bias)).filter(|r| r.1 > r.0)
    }

    /// The module's file.
    pub fn module_path(&self, m: ModuleId) -> &Path {
        let name = self.loader_names.get(m.0).and_then(|n| n.as_deref());
        self.modules
            .get(m.0)
            .map(|m| name.unwrap_or(m.path.as_path()))
            .unwrap_or(Path::new("??"))
    }

    /// True while a library (any module but the executable) has no loader name yet.
    pub fn has_unnamed_libraries(&self) -> bool {
        self.loader_names.iter().skip(1).any(|n| n.is_none())
    }

    /// Records the name the dynamic loader uses for the module loaded with this bias
    /// (shown instead of the /proc path, as gdb does).
    pub fn set_loader_name(&mut self, bias: u64, name: PathBuf) {
        if let Some(i) = self.modules.iter().position(|m| m.bias == bias) {
            self.loader_names[i] = Some(name);
        }
    }

    /// Loaded modules, in load order (the executable first).
    pub fn modules(&self) -> impl Iterator<Item = ModuleId> + '_ {
        (0..self.modules.len()).map(ModuleId)
    }

    /// Whether a module has DWARF line information.
    pub fn has_debug_info(&self, m: ModuleId) -> bool {
        self.modules
            .get(m.0)
            .map(|m| !m.lines.seqs.is_empty())
            .unwrap_or(false)
    }

    /// A module's type table.
    pub fn types(&self, m: ModuleId) -> &TypeTable {
        static EMPTY: std::sync::OnceLock<TypeTable> = std::sync::OnceLock::new();
        match self.modules.get(m.0) {
            Some(m) => &m.types,
            None => EMPTY.get_or_init(TypeTable::new),
        }
    }

    /// The module mapped at runtime address `pc`.
    pub fn module_containing(&self, pc: u64) -> Option<ModuleId> {
        self.module_at(pc).map(|(i, _)| ModuleId(i))
    }

    /// The module whose segments contain runtime address `pc`, with the file address.
    pub(crate) fn module_at(&self, pc: u64) -> Option<(usize, u64)> {
        self.modules.iter().enumerate().find_map(|(i, m)| {
            let a = pc.wrapping_sub(m.bias);
            (a >= m.lo && a < m.hi).then_some((i, a))
        })
    }

    pub(crate) fn module_count(&self) -> usize {
        self.modules.len()
    }

    pub(crate) fn module(&self, i: usize) -> &Module {
        &self.modules[i]
    }

    /// A named type: "int", "struct point", "point_t", "Point".
    pub fn lookup_type(&self, name: &str) -> Option<TypeRef> {
        let norm = name.split_whitespace().collect::<Vec<_>>().join(" ");
        for (mi, m) in self.modules.iter().enumerate() {
            if let Some(id) = m.type_names.get(&norm) {
                return Some(TypeRef {
                    module: ModuleId(mi),
                    id: *id,
                });
            }
        }
        None
    }

    /// What `info source` tells of the compile unit containing `pc`.
    pub fn unit_facts(&self, pc: u64) -> Option<UnitFacts> {
        let (mi, f) = self.func_at(pc)?;
        let m = &self.modules[mi];
        let unit = &m.units[f.unit];
        let mut entries = unit.entries();
        let root = entries.next_dfs().ok()??;
        let get = |at| crate::module::attr_str(&m.dwarf, unit, root, at);
        Some(UnitFacts {
            comp_dir: get(gimli::DW_AT_comp_dir),
            producer: get(gimli::DW_AT_producer),
            dwarf_version: unit.header.version(),
            language: m.unit_info.get(f.unit).map(|u| u.lang).unwrap_or_default(),
        })
    }

    /// The language of the compile unit containing pc.
    pub fn language_at(&self, pc: u64) -> Language {
        self.func_at(pc)
            .and_then(|(mi, f)| self.modules[mi].unit_info.get(f.unit).map(|u| u.lang))
            .unwrap_or_default()
    }
}
