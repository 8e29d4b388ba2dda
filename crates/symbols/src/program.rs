//! Every module of one process, and the debugger's questions answered over all of them in
//! runtime addresses.

use std::path::{Path, PathBuf};

use crate::error::SymbolsError;
use crate::module::{Func, Module};
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

/// A function, as the debugger shows and breaks on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionInfo {
    /// Demangled name as gdb shows it in frames (`main`, `hello::main`).
    pub name: String,
    /// Runtime start address.
    pub low: u64,
    /// Runtime end address (exclusive).
    pub high: u64,
    /// The module.
    pub module: ModuleId,
    /// Whether DWARF describes it (false: only an ELF symbol).
    pub has_debug_info: bool,
    /// Where `break FUNCTION` goes: after the prologue.
    pub breakpoint_addr: u64,
    /// Declaration line.
    pub decl_line: Option<u32>,
    /// Return type (None for void or unknown).
    pub return_type: Option<TypeRef>,
    /// The function's type (`int (int)`), when DWARF describes it.
    pub fn_type: Option<TypeRef>,
}

/// One line-table row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineInfo {
    /// The source file (compilation directory joined with the file's path).
    pub file: PathBuf,
    /// The file's name as the line table spells it, which is what gdb shows.
    pub name: String,
    /// 1-based line (0: no line).
    pub line: u32,
    /// Runtime address where the row starts.
    pub address: u64,
    /// A recommended breakpoint position.
    pub is_stmt: bool,
}

/// All loaded modules of one process.
#[derive(Default)]
pub struct Program {
    pub(crate) modules: Vec<Module>,
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
        let m = Module::load(path, bias)?;
        self.modules.push(m);
        self.lookups.borrow_mut().clear();
        Ok(ModuleId(self.modules.len() - 1))
    }

    /// The module's file.
    pub fn module_path(&self, m: ModuleId) -> &Path {
        self.modules
            .get(m.0)
            .map(|m| m.path.as_path())
            .unwrap_or(Path::new("??"))
    }

    /// Loaded modules, in load order (the executable first).
    pub fn modules(&self) -> impl Iterator<Item = ModuleId> + '_ {
        (0..self.modules.len()).map(ModuleId)
    }

    /// Whether a module has DWARF line information.
    pub fn has_debug_info(&self, m: ModuleId) -> bool {
        self.modules
            .get(m.0)
            .map(|m| !m.seqs.is_empty())
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

    pub(crate) fn module(&self, i: usize) -> &Module {
        &self.modules[i]
    }

    fn dwarf_func(&self, mi: usize, a: u64) -> Option<&Func> {
        let funcs = &self.modules[mi].funcs;
        let i = funcs.partition_point(|f| f.low <= a);
        funcs[..i].iter().rev().take(8).find(|f| a < f.high)
    }

    /// The innermost DWARF function containing pc: (module, function).
    pub(crate) fn func_at(&self, pc: u64) -> Option<(usize, &Func)> {
        let (mi, a) = self.module_at(pc)?;
        self.dwarf_func(mi, a).map(|f| (mi, f))
    }

    fn info_of(&self, mi: usize, f: &Func) -> FunctionInfo {
        let m = &self.modules[mi];
        FunctionInfo {
            name: f.name.clone(),
            low: f.low + m.bias,
            high: f.high + m.bias,
            module: ModuleId(mi),
            has_debug_info: true,
            breakpoint_addr: self.after_prologue(mi, f) + m.bias,
            decl_line: f.decl_line,
            return_type: f.ret.map(|id| TypeRef {
                module: ModuleId(mi),
                id,
            }),
            fn_type: Some(TypeRef {
                module: ModuleId(mi),
                id: f.fn_type,
            }),
        }
    }

    fn elf_info(&self, mi: usize, i: usize) -> FunctionInfo {
        let m = &self.modules[mi];
        let s = &m.elf_syms[i];
        let high = if s.size > 0 {
            s.addr + s.size
        } else {
            m.elf_syms.get(i + 1).map(|n| n.addr).unwrap_or(s.addr + 1)
        };
        FunctionInfo {
            name: s.name.clone(),
            low: s.addr + m.bias,
            high: high + m.bias,
            module: ModuleId(mi),
            has_debug_info: false,
            breakpoint_addr: skip_frame_setup(m, s.addr) + m.bias,
            decl_line: None,
            return_type: None,
            fn_type: None,
        }
    }

    /// gdb's prologue skip: the address of the function's second line-table row (the first
    /// row past its start), if it is still inside the function.
    fn after_prologue(&self, mi: usize, f: &Func) -> u64 {
        let m = &self.modules[mi];
        let si = m.seqs.partition_point(|s| s.start <= f.low);
        if si > 0 {
            let seq = &m.seqs[si - 1];
            if f.low < seq.end {
                let ri = seq.rows.partition_point(|r| r.addr <= f.low);
                if let Some(r) = seq.rows[ri..].iter().find(|r| r.line != 0) {
                    if r.addr < f.high {
                        return r.addr;
                    }
                }
            }
        }
        f.low
    }

    /// The function containing pc: its DWARF subprogram, else the ELF symbol.
    pub fn function_at(&self, pc: u64) -> Option<FunctionInfo> {
        let (mi, a) = self.module_at(pc)?;
        if let Some(f) = self.dwarf_func(mi, a) {
            return Some(self.info_of(mi, f));
        }
        let syms = &self.modules[mi].elf_syms;
        let i = syms.partition_point(|s| s.addr <= a);
        if i == 0 {
            return None;
        }
        let info = self.elf_info(mi, i - 1);
        (pc < info.high || syms[i - 1].size == 0).then_some(info)
    }

    /// `name` or `name+off` for an address inside a function or a data object, as gdb shows
    /// it in `<…>` after a printed address.
    pub fn symbol_for(&self, addr: u64) -> Option<String> {
        let (mi, a) = self.module_at(addr)?;
        let m = &self.modules[mi];
        let in_code = m
            .code
            .iter()
            .any(|(start, _, size)| a >= *start && a < start + size);
        let (name, base) = if in_code {
            let f = self.function_at(addr)?;
            (f.name, f.low)
        } else {
            let i = m.data_syms.partition_point(|s| s.addr <= a);
            let s = m.data_syms.get(i.checked_sub(1)?)?;
            if a >= s.addr + s.size.max(1) {
                return None;
            }
            (s.name.clone(), s.addr + m.bias)
        };
        Some(if addr == base {
            name
        } else {
            format!("{name}+{}", addr - base)
        })
    }

    /// Functions named `name` (a full name, or a Rust path's last component). DWARF first,
    /// ELF symbols of the modules without a DWARF match next.
    pub fn lookup_functions(&self, name: &str) -> Vec<FunctionInfo> {
        let mut out = Vec::new();
        for (mi, m) in self.modules.iter().enumerate() {
            let mut found = false;
            for f in &m.funcs {
                if f.name == name || f.name.rsplit("::").next() == Some(name) {
                    out.push(self.info_of(mi, f));
                    found = true;
                }
            }
            if !found {
                for (i, s) in m.elf_syms.iter().enumerate() {
                    if s.name == name {
                        out.push(self.elf_info(mi, i));
                        break;
                    }
                }
            }
            if !out.is_empty() {
                break;
            }
        }
        out
    }

    fn row_at(&self, pc: u64) -> Option<(usize, usize, usize)> {
        let (mi, a) = self.module_at(pc)?;
        let seqs = &self.modules[mi].seqs;
        let si = seqs.partition_point(|s| s.start <= a);
        if si == 0 {
            return None;
        }
        let seq = &seqs[si - 1];
        if a >= seq.end {
            return None;
        }
        let ri = seq.rows.partition_point(|r| r.addr <= a);
        if ri == 0 {
            return None;
        }
        // Several rows may share an address: the last one is the one that applies.
        Some((mi, si - 1, ri - 1))
    }

    /// The line-table row covering pc.
    pub fn line_at(&self, pc: u64) -> Option<LineInfo> {
        let (mi, si, ri) = self.row_at(pc)?;
        let m = &self.modules[mi];
        let seq = &m.seqs[si];
        // gdb maps a pc to the last *statement* row at or before it: a non-statement row
        // (the rest of a line after a call, say) belongs to the statement before it.
        let mut ri = ri;
        while !seq.rows[ri].is_stmt && ri > 0 && seq.rows[ri - 1].line != 0 {
            ri -= 1;
        }
        let r = seq.rows[ri];
        let mut first = ri;
        while first > 0 && seq.rows[first - 1].addr == r.addr {
            first -= 1;
        }
        let is_stmt = seq.rows[first..=ri].iter().any(|x| x.is_stmt);
        Some(LineInfo {
            file: m.files.get(r.file as usize).cloned().unwrap_or_default(),
            name: m
                .file_names
                .get(r.file as usize)
                .cloned()
                .unwrap_or_default(),
            line: r.line,
            address: r.addr + m.bias,
            is_stmt,
        })
    }

    /// `[start, end)` of the contiguous rows of pc's line: what `step`/`next` must leave.
    pub fn line_range(&self, pc: u64) -> Option<(u64, u64)> {
        let (mi, si, ri) = self.row_at(pc)?;
        let m = &self.modules[mi];
        let seq = &m.seqs[si];
        let line = seq.rows[ri].line;
        let file = seq.rows[ri].file;
        let mut lo = ri;
        while lo > 0 && seq.rows[lo - 1].line == line && seq.rows[lo - 1].file == file {
            lo -= 1;
        }
        let mut hi = ri + 1;
        while hi < seq.rows.len()
            && (seq.rows[hi].line == line && seq.rows[hi].file == file
                || seq.rows[hi].addr == seq.rows[ri].addr)
        {
            hi += 1;
        }
        let end = seq.rows.get(hi).map(|r| r.addr).unwrap_or(seq.end);
        Some((seq.rows[lo].addr + m.bias, end + m.bias))
    }

    /// The source file that `name` designates (full path, path suffix or base name), as
    /// `list FILE:LINE` needs it.
    pub fn find_source(&self, name: &str) -> Option<PathBuf> {
        self.modules
            .iter()
            .flat_map(|m| m.files.iter())
            .find_map(|p| {
                let ps = p.to_string_lossy();
                let hit = ps == name
                    || ps.ends_with(&format!("/{name}"))
                    || p.file_name()
                        .map(|n| n.to_string_lossy() == name)
                        .unwrap_or(false);
                hit.then(|| p.clone())
            })
    }

    /// Where `break FILE:LINE` goes: one address per function that has code for the line
    /// (or for the next line that has code).
    pub fn resolve_line(&self, file: &str, line: u32) -> Result<Vec<u64>, SymbolsError> {
        let matches_file = |p: &Path| {
            let ps = p.to_string_lossy();
            ps == file
                || ps.ends_with(&format!("/{file}"))
                || p.file_name()
                    .map(|n| n.to_string_lossy() == file)
                    .unwrap_or(false)
        };
        let mut known = false;
        // The smallest line >= `line` that has is_stmt code in a matching file.
        let mut best: Option<u32> = None;
        for m in &self.modules {
            let ids: Vec<u32> = (0..m.files.len() as u32)
                .filter(|&i| matches_file(&m.files[i as usize]))
                .collect();
            if ids.is_empty() {
                continue;
            }
            known = true;
            for seq in &m.seqs {
                for r in &seq.rows {
                    if r.is_stmt && r.line >= line && ids.contains(&r.file) {
                        best = Some(best.map_or(r.line, |b| b.min(r.line)));
                    }
                }
            }
        }
        if !known {
            return Err(SymbolsError::NoSourceFile(file.to_string()));
        }
        let Some(target) = best else {
            return Err(SymbolsError::LineOutOfRange {
                file: file.to_string(),
                line,
            });
        };
        let mut out: Vec<u64> = Vec::new();
        let mut per_func: Vec<(u64, u64)> = Vec::new();
        for (mi, m) in self.modules.iter().enumerate() {
            let ids: Vec<u32> = (0..m.files.len() as u32)
                .filter(|&i| matches_file(&m.files[i as usize]))
                .collect();
            for seq in &m.seqs {
                for r in &seq.rows {
                    if r.is_stmt && r.line == target && ids.contains(&r.file) {
                        let func = self
                            .dwarf_func(mi, r.addr)
                            .map(|f| f.low + m.bias)
                            .unwrap_or(0);
                        let addr = r.addr + m.bias;
                        match per_func.iter_mut().find(|(f, _)| *f == func) {
                            Some((_, a)) => *a = (*a).min(addr),
                            None => per_func.push((func, addr)),
                        }
                    }
                }
            }
        }
        for (func, addr) in per_func {
            // A line that is a function's opening line breaks after the prologue, as gdb does.
            let addr = match self.function_at(addr) {
                Some(f) if f.low == addr && func == f.low => f.breakpoint_addr,
                _ => addr,
            };
            out.push(addr);
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
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

    /// The language of the compile unit containing pc.
    pub fn language_at(&self, pc: u64) -> Language {
        self.func_at(pc)
            .and_then(|(mi, f)| self.modules[mi].unit_lang.get(f.unit).copied())
            .unwrap_or_default()
    }
}

/// gdb's analysis of functions without line info: skip `endbr64`, `push %rbp` and
/// `mov %rsp,%rbp` when the function starts with them.
fn skip_frame_setup(m: &Module, addr: u64) -> u64 {
    let Some(code) = m.code_at(addr, 12) else {
        return addr;
    };
    let mut i = 0;
    if code.starts_with(&[0xf3, 0x0f, 0x1e, 0xfa]) {
        i += 4;
    }
    if code.get(i) == Some(&0x55) {
        i += 1;
        if code.get(i..i + 3) == Some(&[0x48, 0x89, 0xe5])
            || code.get(i..i + 3) == Some(&[0x48, 0x8b, 0xec])
        {
            return addr + i as u64 + 3;
        }
    }
    addr
}
