//! Functions: DWARF subprograms and, where DWARF is silent, ELF symbols; looked up by address
//! (every stop) and by name (`break FUNCTION`), with gdb's choice of breakpoint address.

use std::path::PathBuf;

use crate::module::{Func, Module};
use crate::program::{ModuleId, Program, TypeRef};
use crate::unwind::{Frame, InlineFrame};

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
    /// Where `break FUNCTION` goes: past the prologue, as gdb picks it.
    pub breakpoint_addr: u64,
    /// Declaration file (full path).
    pub decl_file: Option<PathBuf>,
    /// Declaration line.
    pub decl_line: Option<u32>,
    /// Return type (None for void or unknown).
    pub return_type: Option<TypeRef>,
    /// The function's type (`int (int)`), when DWARF describes it.
    pub fn_type: Option<TypeRef>,
    /// An inlined copy (its breakpoint address is where the copy starts).
    pub inlined: bool,
    /// C++: the demangled linkage name with its parameters (`scale(int)`), as gdb lists
    /// breakpoint locations.
    pub signature: Option<String>,
}

/// How many functions before a pc's insertion point may still contain it: functions are
/// sorted by start, and only nested ones (C++ lambdas' outlined bodies, say) overlap.
const OVERLAP_WINDOW: usize = 8;

impl Program {
    /// The innermost DWARF function of module `mi` containing file address `a`.
    pub(crate) fn dwarf_func(&self, mi: usize, a: u64) -> Option<&Func> {
        let funcs = &self.module(mi).funcs;
        let i = funcs.partition_point(|f| f.low <= a);
        funcs[..i]
            .iter()
            .rev()
            .take(OVERLAP_WINDOW)
            .find(|f| a < f.high)
    }

    /// The innermost DWARF function containing runtime address pc: (module, function).
    pub(crate) fn func_at(&self, pc: u64) -> Option<(usize, &Func)> {
        let (mi, a) = self.module_at(pc)?;
        self.dwarf_func(mi, a).map(|f| (mi, f))
    }

    fn info_of(&self, mi: usize, f: &Func) -> FunctionInfo {
        let m = self.module(mi);
        let tref = |id| TypeRef {
            module: ModuleId(mi),
            id,
        };
        FunctionInfo {
            name: f.name.clone(),
            low: f.low + m.bias,
            high: f.high + m.bias,
            module: ModuleId(mi),
            has_debug_info: true,
            breakpoint_addr: self.after_prologue(mi, f).unwrap_or(f.low) + m.bias,
            decl_file: f
                .decl_file
                .and_then(|i| m.lines.unit_file(f.unit, i))
                .map(PathBuf::from),
            decl_line: f.decl_line,
            return_type: f.ret.map(tref),
            fn_type: Some(tref(f.fn_type)),
            inlined: false,
            signature: f.signature.clone().or_else(|| {
                let syms = &m.elf_syms;
                let i = syms.partition_point(|s| s.addr < f.low);
                syms.get(i)
                    .filter(|s| s.addr == f.low)
                    .and_then(|s| s.signature.clone())
            }),
        }
    }

    fn elf_info(&self, mi: usize, i: usize) -> FunctionInfo {
        let m = self.module(mi);
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
            breakpoint_addr: skip_frame_setup(m, s.addr).unwrap_or(s.addr) + m.bias,
            decl_file: None,
            decl_line: None,
            return_type: None,
            fn_type: None,
            inlined: false,
            signature: None,
        }
    }

    /// gdb's prologue skip for a function with line information (file address).
    ///
    /// - LLVM (clang, rustc) marks the prologue's end with a line row: the first row past
    ///   the entry.
    /// - gcc's optimized units (those with location lists) are trusted as they are: the entry.
    /// - Otherwise the frame setup (`push %rbp; mov %rsp,%rbp`) is skipped and, if that
    ///   lands inside a row, the breakpoint goes to the next row. No frame setup: the entry.
    ///
    /// `None` when the result would leave the function.
    pub(crate) fn after_prologue(&self, mi: usize, f: &Func) -> Option<u64> {
        let m = self.module(mi);
        let unit = m.unit_info.get(f.unit).copied().unwrap_or_default();
        let next_row = |after: u64| -> Option<u64> {
            let (si, ri) = m.lines.row_at(after)?;
            let seq = &m.lines.seqs[si];
            seq.rows[ri + 1..]
                .iter()
                .find(|r| r.addr > after && r.line != 0)
                .map(|r| r.addr)
                .or(Some(seq.end))
        };
        let pc = if unit.llvm {
            next_row(f.low)?
        } else if unit.optimized {
            f.low
        } else {
            match skip_frame_setup(m, f.low) {
                None => f.low,
                Some(pc) => match m.lines.row_at(pc) {
                    Some((si, ri)) if m.lines.seqs[si].rows[ri].addr == pc => pc,
                    Some(_) => next_row(pc)?,
                    None => pc,
                },
            }
        };
        (pc < f.high).then_some(pc)
    }

    /// The function containing pc: its DWARF subprogram, else the ELF symbol.
    pub fn function_at(&self, pc: u64) -> Option<FunctionInfo> {
        let (mi, a) = self.module_at(pc)?;
        if let Some(f) = self.dwarf_func(mi, a) {
            return Some(self.info_of(mi, f));
        }
        let syms = &self.module(mi).elf_syms;
        let i = syms.partition_point(|s| s.addr <= a).checked_sub(1)?;
        let info = self.elf_info(mi, i);
        (pc < info.high || syms[i].size == 0).then_some(info)
    }

    /// `name` or `name+off` for an address inside a function or a data object, as gdb shows
    /// it in `<…>` after a printed address.
    pub fn symbol_for(&self, addr: u64) -> Option<String> {
        let (mi, a) = self.module_at(addr)?;
        let m = self.module(mi);
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

    /// Functions named `name`: a full name (`hello::main`) or, for Rust and C++ paths, the
    /// last component (`main`). DWARF first; a module without a DWARF match contributes its
    /// ELF symbol of that name. Every module contributes its matches, as in gdb: `mmap` is
    /// the loader's and libc's (one breakpoint, two locations).
    pub fn lookup_functions(&self, name: &str) -> Vec<FunctionInfo> {
        let mut out = Vec::new();
        let matches = |n: &str| n == name || n.rsplit("::").next() == Some(name);
        for (mi, m) in self.modules.iter().enumerate() {
            let before = out.len();
            for f in m.funcs.iter().filter(|f| f.entry) {
                if matches(&f.name) {
                    out.push(self.info_of(mi, f));
                }
            }
            // Every inlined copy is a location of its own, where the copy starts.
            for site in m.inlines.iter().filter(|s| matches(&s.name)) {
                let (low, high) = site
                    .ranges
                    .first()
                    .copied()
                    .unwrap_or((site.entry, site.entry));
                out.push(FunctionInfo {
                    name: site.name.clone(),
                    low: low + m.bias,
                    high: high + m.bias,
                    module: ModuleId(mi),
                    has_debug_info: true,
                    breakpoint_addr: site.entry + m.bias,
                    decl_file: None,
                    decl_line: None,
                    return_type: None,
                    fn_type: None,
                    inlined: true,
                    signature: None,
                });
            }
            if out.len() == before {
                // An ELF name, aliases included: the function at its address (with its
                // DWARF when there is some, e.g. `write` is libc's `__libc_write`).
                if let Some(&addr) = m.fn_names.get(name) {
                    match self.dwarf_func(mi, addr).filter(|f| f.low == addr) {
                        Some(f) => out.push(self.info_of(mi, f)),
                        None => {
                            if let Some(i) = m.elf_syms.iter().position(|s| s.addr == addr) {
                                out.push(self.elf_info(mi, i));
                            }
                        }
                    }
                }
            }
        }
        out
    }
}

impl Program {
    /// The inlined copies containing runtime address `pc`, innermost first: (module, index).
    pub(crate) fn inline_sites(&self, pc: u64) -> Vec<(usize, usize)> {
        let Some((mi, a)) = self.module_at(pc) else {
            return Vec::new();
        };
        let m = self.module(mi);
        let Some(func) = self.dwarf_func(mi, a) else {
            return Vec::new();
        };
        let end = m.inline_ranges.partition_point(|r| r.0 <= a);
        let mut found: Vec<usize> = m.inline_ranges[..end]
            .iter()
            .rev()
            .take_while(|r| r.0 >= func.low)
            .filter(|r| a < r.1)
            .map(|r| r.2)
            .collect();
        found.sort_unstable_by_key(|&i| std::cmp::Reverse(m.inlines[i].depth));
        found.dedup();
        found.into_iter().map(|i| (mi, i)).collect()
    }

    /// The frames a stack shows with inlined code: each machine frame whose pc is in
    /// inlined copies becomes one frame per copy (innermost first) and one for the function
    /// they were inlined into, each showing the line of the call inlined into it. The
    /// frames keep the machine frame's registers and CFA.
    pub fn expand_inline(&self, frames: Vec<Frame>) -> Vec<Frame> {
        let mut out = Vec::with_capacity(frames.len());
        for (i, f) in frames.into_iter().enumerate() {
            let pc = f.regs.pc().unwrap_or(0);
            let lookup = if i > 0 { pc.saturating_sub(1) } else { pc };
            let sites = self.inline_sites(lookup);
            if sites.is_empty() {
                out.push(f);
                continue;
            }
            let outer = self
                .function_at(lookup)
                .map(|f| f.name)
                .unwrap_or_else(|| "??".into());
            for k in 0..=sites.len() {
                let call_site = k
                    .checked_sub(1)
                    .and_then(|j| self.call_line(sites[j].0, sites[j].1));
                let (site, name) = match sites.get(k) {
                    Some(&(mi, si)) => (Some((mi, si)), self.module(mi).inlines[si].name.clone()),
                    None => (None, outer.clone()),
                };
                out.push(Frame {
                    inline: Some(InlineFrame {
                        lookup_pc: lookup,
                        name,
                        site,
                        call_site,
                    }),
                    ..f.clone()
                });
            }
        }
        out
    }

    /// The code of the inlined copy a frame is in (runtime ranges); `None` for a frame that is
    /// not in an inlined copy.
    pub fn inline_ranges(&self, frame: &InlineFrame) -> Option<Vec<(u64, u64)>> {
        let (mi, si) = frame.site?;
        let m = self.module(mi);
        Some(
            m.inlines[si]
                .ranges
                .iter()
                .map(|&(b, e)| (b + m.bias, e + m.bias))
                .collect(),
        )
    }

    /// The inlined functions whose code holds `pc`, innermost first.
    pub fn inline_names(&self, pc: u64) -> Vec<String> {
        self.inline_sites(pc)
            .into_iter()
            .map(|(mi, si)| self.module(mi).inlines[si].name.clone())
            .collect()
    }

    /// The line an inlined copy was called from.
    fn call_line(&self, mi: usize, si: usize) -> Option<crate::LineInfo> {
        let m = self.module(mi);
        let site = &m.inlines[si];
        let file_id = *m.lines.unit_files.get(site.unit)?.get(&site.call_file?)?;
        Some(crate::LineInfo {
            file: m.lines.files.get(file_id as usize)?.clone(),
            name: m.lines.file_names.get(file_id as usize)?.clone(),
            line: site.call_line,
            address: site.entry + m.bias,
            is_stmt: true,
        })
    }
}

/// gdb's analysis of a function's frame setup: skip `endbr64`, `push %rbp` and
/// `mov %rsp,%rbp` (file address after them), or `None` when the function does not set up a
/// frame pointer that way.
fn skip_frame_setup(m: &Module, addr: u64) -> Option<u64> {
    const ENDBR64: [u8; 4] = [0xf3, 0x0f, 0x1e, 0xfa];
    const PUSH_RBP: u8 = 0x55;
    // The two encodings of `mov %rsp,%rbp`.
    const MOV_RSP_RBP: [[u8; 3]; 2] = [[0x48, 0x89, 0xe5], [0x48, 0x8b, 0xec]];
    let code = m.code_at(addr, 12)?;
    let mut i = 0;
    if code.starts_with(&ENDBR64) {
        i += 4;
    }
    if code.get(i) != Some(&PUSH_RBP) {
        return None;
    }
    i += 1;
    let mov = code.get(i..i + 3)?;
    MOV_RSP_RBP
        .iter()
        .any(|m| m == mov)
        .then_some(addr + i as u64 + 3)
}
