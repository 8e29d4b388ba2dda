//! One loaded ELF file: its DWARF parsed once into address-sorted indexes.
//!
//! All addresses inside a module are *file* addresses (as in the ELF); [`crate::Program`]
//! converts to and from runtime addresses with the module's load bias.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use gimli::{EndianRcSlice, LittleEndian, UnitOffset};
use object::{Object, ObjectSection, ObjectSegment, ObjectSymbol, SymbolKind};

use crate::dwarf_types::{scope_prefixes, TypeBuilder};
use crate::error::SymbolsError;
use crate::lines::LineTables;
use crate::types::{AggregateKind, Language, MemberKind, Type, TypeId, TypeTable};

/// The DWARF reader type: sections are reference-counted owned bytes.
pub type R = EndianRcSlice<LittleEndian>;

/// A function with an address range, from DWARF.
#[derive(Debug, Clone)]
pub(crate) struct Func {
    pub name: String,
    pub low: u64,
    pub high: u64,
    pub unit: usize,
    pub die: UnitOffset,
    /// File-table index of DW_AT_decl_file in the function's unit.
    pub decl_file: Option<u64>,
    pub decl_line: Option<u32>,
    pub ret: Option<TypeId>,
    pub fn_type: TypeId,
    /// C++: the demangled linkage name with parameters (`scale(int)`).
    pub signature: Option<String>,
    /// The range where the function is entered (false for the other ranges of a function
    /// split in parts, e.g. `main` and its cold part).
    pub entry: bool,
}

/// One inlined copy of a function (DWARF `DW_TAG_inlined_subroutine`).
#[derive(Debug, Clone)]
pub(crate) struct InlineSite {
    /// The inlined function's name, qualified.
    pub name: String,
    pub unit: usize,
    /// The inlined_subroutine DIE (its parameters and locals are children).
    pub die: UnitOffset,
    /// The subprogram it was inlined into (whose frame base its variables use).
    pub func: UnitOffset,
    /// Nesting: 1 directly in the subprogram, 2 inside another inlined copy…
    pub depth: u32,
    /// Its code, file addresses `[begin, end)`.
    pub ranges: Vec<(u64, u64)>,
    /// Where its code starts: its first range.
    pub entry: u64,
    /// The call it stands for: file-table index and line.
    pub call_file: Option<u64>,
    pub call_line: u32,
}

/// What the debugger needs to know of a compile unit as a whole.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct UnitInfo {
    /// Source language.
    pub lang: Language,
    /// Produced by LLVM (clang, rustc): its line rows mark the prologue's end.
    pub llvm: bool,
    /// Optimized code (gcc emits location lists only then): gdb trusts its entry points.
    pub optimized: bool,
}

/// A global or static variable (or a function-static one found at load).
#[derive(Debug, Clone)]
pub(crate) struct Global {
    pub name: String,
    pub unit: usize,
    pub die: UnitOffset,
    pub ty: Option<TypeId>,
}

/// An ELF symbol of a function.
#[derive(Debug, Clone)]
pub(crate) struct ElfSym {
    pub addr: u64,
    pub size: u64,
    pub name: String,
    /// C++: the demangled name with parameters.
    pub signature: Option<String>,
}

/// One ELF file and what its DWARF says.
pub struct Module {
    pub(crate) path: PathBuf,
    pub(crate) bias: u64,
    /// ELF entry point (file address).
    pub(crate) entry: u64,
    /// Its DWARF came from a separate debug file.
    pub(crate) separate_debug: bool,
    /// `[start, end)` of `.text` (file addresses).
    pub(crate) text: (u64, u64),
    /// File-address range covered by its loadable segments.
    pub(crate) lo: u64,
    pub(crate) hi: u64,
    pub(crate) data: Rc<[u8]>,
    /// (address, file offset, size) of sections with code.
    pub(crate) code: Vec<(u64, u64, u64)>,
    pub(crate) dwarf: gimli::Dwarf<R>,
    pub(crate) units: Vec<gimli::Unit<R>>,
    /// Per unit (same index as `units`).
    pub(crate) unit_info: Vec<UnitInfo>,
    /// Sorted by `low`.
    pub(crate) funcs: Vec<Func>,
    /// Inlined copies of functions.
    pub(crate) inlines: Vec<InlineSite>,
    /// (begin, end, index into `inlines`) of every range of every inlined copy, sorted.
    pub(crate) inline_ranges: Vec<(u64, u64, usize)>,
    pub(crate) lines: LineTables,
    pub(crate) globals: HashMap<String, Vec<Global>>,
    pub(crate) types: TypeTable,
    pub(crate) type_memo: HashMap<(usize, UnitOffset), TypeId>,
    pub(crate) type_names: HashMap<String, TypeId>,
    pub(crate) elf_syms: Vec<ElfSym>,
    /// Every ELF function name (aliases too) and its address.
    pub(crate) fn_names: HashMap<String, u64>,
    /// Data objects (ELF `OBJECT` symbols), sorted by address: `<grid+24>` in printed pointers.
    pub(crate) data_syms: Vec<ElfSym>,
    pub(crate) eh_frame: Option<(gimli::EhFrame<R>, gimli::BaseAddresses)>,
    /// The binary-search table of `.eh_frame_hdr`: FDE lookup without scanning.
    pub(crate) eh_frame_hdr: Option<gimli::ParsedEhFrameHdr<R>>,
    pub(crate) debug_frame: Option<(gimli::DebugFrame<R>, gimli::BaseAddresses)>,
}

fn load_err(path: &Path, reason: impl ToString) -> SymbolsError {
    SymbolsError::Load {
        path: path.display().to_string(),
        reason: reason.to_string(),
    }
}

/// Where gdb looks for a file's separate debug information: by build id under
/// `/usr/lib/debug/.build-id/`, then by `.gnu_debuglink` next to the file, in its `.debug`
/// directory and under `/usr/lib/debug` (the file's directory, then its real path's).
fn separate_debug_file(path: &Path, file: &object::File<'_>) -> Option<PathBuf> {
    const ROOT: &str = "/usr/lib/debug";
    if let Ok(Some(id)) = file.build_id() {
        if id.len() > 1 {
            let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
            let p = Path::new(ROOT)
                .join(".build-id")
                .join(&hex[..2])
                .join(format!("{}.debug", &hex[2..]));
            if p.is_file() {
                return Some(p);
            }
        }
    }
    let (name, _crc) = file.gnu_debuglink().ok()??;
    let name = std::str::from_utf8(name).ok()?;
    let mut dirs = vec![path.parent()?.to_path_buf()];
    if let Ok(real) = std::fs::canonicalize(path) {
        if let Some(d) = real.parent() {
            dirs.push(d.to_path_buf());
        }
    }
    for dir in dirs {
        let rel = dir.strip_prefix("/").unwrap_or(&dir).to_path_buf();
        for cand in [
            dir.join(name),
            dir.join(".debug").join(name),
            Path::new(ROOT).join(&rel).join(name),
        ] {
            if cand.is_file() && cand != path {
                return Some(cand);
            }
        }
    }
    None
}

/// A DIE attribute as a string.
pub(crate) fn attr_str(
    dwarf: &gimli::Dwarf<R>,
    unit: &gimli::Unit<R>,
    entry: &gimli::DebuggingInformationEntry<R>,
    at: gimli::DwAt,
) -> Option<String> {
    let v = entry.attr_value(at)?;
    let s = dwarf.attr_string(unit, v).ok()?;
    Some(String::from_utf8_lossy(&s).into_owned())
}

/// A C++ linkage name demangled whole, parameters included (`geo::Shape::id() const`).
pub(crate) fn cpp_signature(name: &str) -> Option<String> {
    let sym = cpp_demangle::Symbol::new(name).ok()?;
    sym.demangle().ok()
}

/// Demangles a linkage name (Rust v0/legacy, C++), without Rust's hash suffix.
pub(crate) fn demangle(name: &str) -> String {
    if let Ok(d) = rustc_demangle::try_demangle(name) {
        return format!("{d:#}");
    }
    if name.starts_with("_Z") {
        if let Ok(sym) = cpp_demangle::Symbol::new(name) {
            if let Ok(s) = sym.demangle() {
                // cpp_demangle spells special names `{vtable(T)}`; gdb `vtable for T`.
                for (ours, gdbs) in [
                    ("{vtable(", "vtable for "),
                    ("{typeinfo(", "typeinfo for "),
                    ("{typeinfo name(", "typeinfo name for "),
                    ("{vtt(", "VTT for "),
                ] {
                    if let Some(rest) = s.strip_prefix(ours) {
                        return format!("{gdbs}{}", rest.trim_end_matches(")}"));
                    }
                }
                // gdb shows C++ functions without their parameter list in frames.
                return s.split('(').next().unwrap_or(&s).to_string();
            }
        }
    }
    name.to_string()
}

impl Module {
    /// Reads `path`, mapped with load bias `bias`.
    pub fn load(path: &Path, bias: u64) -> Result<Module, SymbolsError> {
        let bytes = std::fs::read(path).map_err(|e| load_err(path, e))?;
        let data: Rc<[u8]> = Rc::from(bytes);
        let file = object::File::parse(&*data).map_err(|e| load_err(path, e))?;
        let section = |name: &str| -> R {
            let bytes: Rc<[u8]> = file
                .section_by_name(name)
                .and_then(|s| s.uncompressed_data().ok())
                .map(|d| Rc::from(d.as_ref()))
                .unwrap_or_else(|| Rc::from(&[][..]));
            EndianRcSlice::new(bytes, LittleEndian)
        };
        // A stripped library's DWARF and full symbol table may be in a separate file
        // (Debian's -dbg packages), found as gdb finds it.
        let debug_data = if file.section_by_name(".debug_info").is_none() {
            separate_debug_file(path, &file).and_then(|p| std::fs::read(p).ok())
        } else {
            None
        };
        let debug_file = debug_data
            .as_deref()
            .and_then(|d| object::File::parse(d).ok());
        let debug_section = |name: &str| -> R {
            match &debug_file {
                Some(f) => {
                    let bytes: Rc<[u8]> = f
                        .section_by_name(name)
                        .and_then(|s| s.uncompressed_data().ok())
                        .map(|d| Rc::from(d.as_ref()))
                        .unwrap_or_else(|| Rc::from(&[][..]));
                    EndianRcSlice::new(bytes, LittleEndian)
                }
                None => section(name),
            }
        };
        let dwarf =
            gimli::Dwarf::load(|id| -> Result<R, gimli::Error> { Ok(debug_section(id.name())) })
                .map_err(|e| load_err(path, e))?;

        let (mut lo, mut hi) = (u64::MAX, 0u64);
        for seg in file.segments() {
            if seg.size() > 0 {
                lo = lo.min(seg.address());
                hi = hi.max(seg.address() + seg.size());
            }
        }
        let mut code = Vec::new();
        for s in file.sections() {
            if s.kind() == object::SectionKind::Text {
                if let Some((off, size)) = s.file_range() {
                    code.push((s.address(), off, size));
                }
            }
        }
        let mut elf_syms = Vec::new();
        let mut data_syms = Vec::new();
        let debug_symbols = debug_file.iter().flat_map(|f| f.symbols());
        for sym in file
            .symbols()
            .chain(file.dynamic_symbols())
            .chain(debug_symbols)
        {
            let list = match sym.kind() {
                SymbolKind::Text => &mut elf_syms,
                SymbolKind::Data => &mut data_syms,
                _ => continue,
            };
            if sym.address() != 0 {
                if let Ok(name) = sym.name() {
                    list.push(ElfSym {
                        addr: sym.address(),
                        size: sym.size(),
                        name: demangle(name),
                        signature: name
                            .starts_with("_Z")
                            .then(|| cpp_signature(name))
                            .flatten(),
                    });
                }
            }
        }
        data_syms.sort_by_key(|s| s.addr);
        data_syms.dedup_by_key(|s| s.addr);
        // Every name of a function, aliases included (`write` is a weak alias of
        // `__libc_write`): what `break NAME` looks up.
        let mut fn_names: HashMap<String, u64> = HashMap::new();
        for s in &elf_syms {
            fn_names.entry(s.name.clone()).or_insert(s.addr);
        }
        elf_syms.sort_by(|a, b| a.addr.cmp(&b.addr).then(b.size.cmp(&a.size)));
        elf_syms.dedup_by_key(|s| s.addr);

        let frame_bases = |name: &str| {
            let mut b = gimli::BaseAddresses::default();
            if let Some(s) = file.section_by_name(".eh_frame_hdr") {
                b = b.set_eh_frame_hdr(s.address());
            }
            if let Some(s) = file.section_by_name(name) {
                b = b.set_eh_frame(s.address());
            }
            if let Some(s) = file.section_by_name(".text") {
                b = b.set_text(s.address());
            }
            if let Some(s) = file.section_by_name(".got") {
                b = b.set_got(s.address());
            }
            b
        };
        let eh_frame = file.section_by_name(".eh_frame").map(|_| {
            let mut f = gimli::EhFrame::from(section(".eh_frame"));
            f.set_address_size(8);
            (f, frame_bases(".eh_frame"))
        });
        let eh_frame_hdr = match (&eh_frame, file.section_by_name(".eh_frame_hdr")) {
            (Some((_, bases)), Some(_)) => gimli::EhFrameHdr::from(section(".eh_frame_hdr"))
                .parse(bases, 8)
                .ok(),
            _ => None,
        };
        let debug_frame = file.section_by_name(".debug_frame").map(|_| {
            let mut f = gimli::DebugFrame::from(section(".debug_frame"));
            f.set_address_size(8);
            (f, frame_bases(".debug_frame"))
        });

        let mut m = Module {
            path: path.to_path_buf(),
            bias,
            entry: file.entry(),
            separate_debug: debug_file.is_some(),
            text: file
                .section_by_name(".text")
                .map(|t| (t.address(), t.address() + t.size()))
                .unwrap_or((0, 0)),
            lo,
            hi,
            data: data.clone(),
            code,
            dwarf,
            units: Vec::new(),
            unit_info: Vec::new(),
            funcs: Vec::new(),
            inlines: Vec::new(),
            inline_ranges: Vec::new(),
            lines: LineTables::default(),
            globals: HashMap::new(),
            types: TypeTable::new(),
            type_memo: HashMap::new(),
            type_names: HashMap::new(),
            elf_syms,
            fn_names,
            data_syms,
            eh_frame,
            eh_frame_hdr,
            debug_frame,
        };
        m.read_units();
        m.funcs.sort_by_key(|f| f.low);
        for (i, site) in m.inlines.iter().enumerate() {
            for &(b, e) in &site.ranges {
                m.inline_ranges.push((b, e, i));
            }
        }
        m.inline_ranges.sort_unstable();
        m.lines.finish();
        Ok(m)
    }

    /// Parses every compile unit: functions, globals, types, line tables. A unit that fails to
    /// parse is skipped (the rest of the program stays debuggable).
    fn read_units(&mut self) {
        let mut headers = self.dwarf.units();
        while let Ok(Some(h)) = headers.next() {
            if let Ok(unit) = self.dwarf.unit(h) {
                self.units.push(unit);
            }
        }
        let mut statics = Vec::new();
        let mut defined = HashMap::new();
        for u in 0..self.units.len() {
            let info = self.unit_info_of(u);
            self.unit_info.push(info);
            self.lines.read_unit(&self.dwarf, &self.units[u]);
            if let Ok(optimized) = self.read_dies(u, info.lang, &mut statics, &mut defined) {
                self.unit_info[u].optimized = optimized;
            }
        }
        self.place_statics(&statics, &defined);
        self.complete_declarations();
    }

    /// Gives each static member the address of its definition (a variable elsewhere in the
    /// unit whose DW_AT_specification is the member's declaration).
    fn place_statics(
        &mut self,
        statics: &[(TypeId, usize, usize, UnitOffset)],
        defined: &HashMap<(usize, UnitOffset), u64>,
    ) {
        for &(ty, i, u, decl) in statics {
            let Some(&addr) = defined.get(&(u, decl)) else {
                continue;
            };
            let mut t = self.types.get(ty).clone();
            if let Type::Struct { members, .. } = &mut t {
                if let Some(m) = members.get_mut(i) {
                    m.kind = MemberKind::Static {
                        address: Some(addr.wrapping_add(self.bias)),
                    };
                }
            }
            self.types.set(ty, t);
        }
    }

    /// Replaces every declared-only aggregate (`struct S;`) with its definition when the
    /// module has one of that name (gdb looks opaque types up the same way).
    fn complete_declarations(&mut self) {
        for i in 0..self.types.len() {
            let id = TypeId(i);
            let Type::Struct {
                name: Some(n),
                kind,
                info,
                ..
            } = self.types.get(id)
            else {
                continue;
            };
            if !info.declaration {
                continue;
            }
            let key = match kind {
                AggregateKind::Union => format!("union {n}"),
                _ => format!("struct {n}"),
            };
            if let Some(&def) = self.type_names.get(&key) {
                if def != id {
                    let full = self.types.get(def).clone();
                    self.types.set(id, full);
                }
            }
        }
    }

    fn unit_info_of(&self, u: usize) -> UnitInfo {
        let unit = &self.units[u];
        let mut info = UnitInfo::default();
        let mut entries = unit.entries();
        if let Ok(Some(root)) = entries.next_dfs() {
            if let Some(gimli::AttributeValue::Language(l)) = root.attr_value(gimli::DW_AT_language)
            {
                info.lang = match l {
                    gimli::DW_LANG_Rust => Language::Rust,
                    gimli::DW_LANG_C_plus_plus
                    | gimli::DW_LANG_C_plus_plus_03
                    | gimli::DW_LANG_C_plus_plus_11
                    | gimli::DW_LANG_C_plus_plus_14 => Language::Cpp,
                    _ => Language::C,
                };
            }
            if let Some(p) = attr_str(&self.dwarf, unit, root, gimli::DW_AT_producer) {
                // rustc says "clang LLVM (rustc version …)".
                info.llvm = p.contains("clang") || p.contains("LLVM") || p.contains("rustc");
            }
        }
        info
    }

    /// Walks the unit's DIEs: functions, globals and named types. Returns whether the unit
    /// is optimized code (some variable has a location list).
    fn read_dies(
        &mut self,
        u: usize,
        lang: Language,
        statics: &mut Vec<(TypeId, usize, usize, UnitOffset)>,
        defined: &mut HashMap<(usize, UnitOffset), u64>,
    ) -> Result<bool, gimli::Error> {
        let mut optimized = false;
        let unit = &self.units[u];
        let prefixes = match lang {
            Language::C => HashMap::new(),
            Language::Cpp | Language::Rust => scope_prefixes(&self.dwarf, unit),
        };
        let mut builder = TypeBuilder {
            dwarf: &self.dwarf,
            units: &self.units,
            table: &mut self.types,
            memo: &mut self.type_memo,
            names: &mut self.type_names,
            prefixes: &prefixes,
            statics,
            cpp: lang == Language::Cpp,
        };
        let mut entries = unit.entries();
        // (depth, inside a function, the subprogram, inlined copies around)
        let mut scopes: Vec<(isize, bool, Option<UnitOffset>, u32)> = Vec::new();
        while let Some(entry) = entries.next_dfs()? {
            let depth = entry.depth();
            while scopes.last().map(|s| s.0 >= depth).unwrap_or(false) {
                scopes.pop();
            }
            let in_function = scopes.iter().any(|s| s.1);
            let (subprogram, inline_depth) = scopes.last().map(|s| (s.2, s.3)).unwrap_or((None, 0));
            // A name with the scopes around its DIE, or around the declaration a definition
            // completes (`int Shape::count = 0;`, a method defined outside its class).
            let spec = spec_offset(entry);
            let qualify = |name: &str| {
                let at = spec.unwrap_or(entry.offset());
                match prefixes.get(&at) {
                    Some(p) => format!("{p}{name}"),
                    None => name.to_string(),
                }
            };
            let tag = entry.tag();
            let name = attr_str(&self.dwarf, unit, entry, gimli::DW_AT_name);
            match tag {
                gimli::DW_TAG_namespace => {
                    scopes.push((depth, false, None, 0));
                    continue;
                }
                gimli::DW_TAG_subprogram => {
                    scopes.push((depth, true, Some(entry.offset()), 0));
                    let ranges = die_ranges(&self.dwarf, unit, entry);
                    let (low, high) = ranges.first().copied().unwrap_or((0, 0));
                    if high > low {
                        let decl_name =
                            name.clone().or_else(|| spec_name(&self.dwarf, unit, entry));
                        // gdb names a C function by its DW_AT_linkage_name when it has one
                        // (glibc's `__GI___libc_write` for `__libc_write`).
                        let decl_name = match lang {
                            Language::C => c_linkage_name(&self.dwarf, unit, entry).or(decl_name),
                            _ => decl_name,
                        };
                        let fname = match decl_name {
                            Some(n) => qualify(&n),
                            None => attr_str(&self.dwarf, unit, entry, gimli::DW_AT_linkage_name)
                                .map(|l| demangle(&l))
                                .unwrap_or_else(|| "??".into()),
                        };
                        let ret = type_ref(entry).map(|off| builder.convert(u, off));
                        // The function's own type (`int (int)`), for `print FUNCTION`.
                        let mut params = Vec::new();
                        if let Ok(mut tree) = unit.entries_tree(Some(entry.offset())) {
                            if let Ok(root) = tree.root() {
                                let mut children = root.children();
                                while let Ok(Some(child)) = children.next() {
                                    let e = child.entry();
                                    if e.tag() == gimli::DW_TAG_formal_parameter {
                                        if let Some(t) = type_ref(e) {
                                            params.push(t);
                                        }
                                    }
                                }
                            }
                        }
                        let params: Vec<TypeId> =
                            params.into_iter().map(|t| builder.convert(u, t)).collect();
                        let fn_type = builder
                            .table
                            .add(crate::types::Type::Function { ret, params });
                        let decl_file = match entry.attr_value(gimli::DW_AT_decl_file) {
                            Some(gimli::AttributeValue::FileIndex(i)) => Some(i),
                            Some(v) => v.udata_value(),
                            None => None,
                        };
                        let decl_line = entry
                            .attr_value(gimli::DW_AT_decl_line)
                            .and_then(|v| v.udata_value())
                            .map(|l| l as u32);
                        // A function in several parts (hot and cold) is one function; it
                        // is entered where DW_AT_low_pc (or its first range) says.
                        let entry_pc = match entry.attr_value(gimli::DW_AT_low_pc) {
                            Some(gimli::AttributeValue::Addr(a)) => a,
                            _ => entry_pc(entry).unwrap_or(low),
                        };
                        let signature = match lang {
                            Language::Cpp => {
                                attr_str(&self.dwarf, unit, entry, gimli::DW_AT_linkage_name)
                                    .or_else(|| {
                                        let d = spec_die(unit, entry)?;
                                        attr_str(&self.dwarf, unit, &d, gimli::DW_AT_linkage_name)
                                    })
                                    .and_then(|l| cpp_signature(&l))
                            }
                            _ => None,
                        };
                        for &(low, high) in &ranges {
                            self.funcs.push(Func {
                                signature: signature.clone(),
                                name: fname.clone(),
                                low,
                                high,
                                unit: u,
                                die: entry.offset(),
                                decl_file,
                                decl_line,
                                ret,
                                fn_type,
                                entry: low <= entry_pc && entry_pc < high,
                            });
                        }
                    }
                }
                gimli::DW_TAG_lexical_block => {
                    scopes.push((depth, true, subprogram, inline_depth));
                }
                gimli::DW_TAG_inlined_subroutine => {
                    scopes.push((depth, true, subprogram, inline_depth + 1));
                    let ranges = die_ranges(&self.dwarf, unit, entry);
                    let origin = spec_offset(entry);
                    let name = origin.and_then(|o| {
                        let d = unit.entry(o).ok()?;
                        let linkage = match lang {
                            Language::C => c_linkage_name(&self.dwarf, unit, &d),
                            _ => None,
                        };
                        let n = linkage
                            .or_else(|| attr_str(&self.dwarf, unit, &d, gimli::DW_AT_name))
                            .or_else(|| spec_name(&self.dwarf, unit, &d))?;
                        let at = spec_offset(&d).unwrap_or(o);
                        Some(match prefixes.get(&at) {
                            Some(p) => format!("{p}{n}"),
                            None => n,
                        })
                    });
                    if let (Some(name), Some(func), false) = (name, subprogram, ranges.is_empty()) {
                        // gdb 13 enters a copy at the start of its first range (GCC's
                        // DW_AT_entry_pc may lie outside the copy's ranges).
                        let first = ranges[0].0;
                        self.inlines.push(InlineSite {
                            name,
                            unit: u,
                            die: entry.offset(),
                            func,
                            depth: inline_depth + 1,
                            entry: first,
                            ranges,
                            call_file: match entry.attr_value(gimli::DW_AT_call_file) {
                                Some(gimli::AttributeValue::FileIndex(i)) => Some(i),
                                Some(v) => v.udata_value(),
                                None => None,
                            },
                            call_line: entry
                                .attr_value(gimli::DW_AT_call_line)
                                .and_then(|v| v.udata_value())
                                .unwrap_or(0) as u32,
                        });
                    }
                }
                gimli::DW_TAG_variable | gimli::DW_TAG_formal_parameter => {
                    let ty = type_ref(entry).map(|off| builder.convert(u, off));
                    let location = entry.attr_value(gimli::DW_AT_location);
                    let has_location = location.is_some();
                    optimized |= matches!(
                        location,
                        Some(
                            gimli::AttributeValue::LocationListsRef(_)
                                | gimli::AttributeValue::SecOffset(_)
                                | gimli::AttributeValue::DebugLocListsIndex(_)
                        )
                    );
                    let static_in_fn = in_function
                        && matches!(
                            entry.attr_value(gimli::DW_AT_location),
                            Some(gimli::AttributeValue::Exprloc(ref e)) if first_op_is_addr(e)
                        );
                    if let (Some(decl), Some(gimli::AttributeValue::Exprloc(e))) = (spec, &location)
                    {
                        if let Some(a) = first_op_addr(e) {
                            defined.insert((u, decl), a);
                        }
                    }
                    if tag == gimli::DW_TAG_variable && (!in_function || static_in_fn) {
                        let n = name.clone().or_else(|| spec_name(&self.dwarf, unit, entry));
                        if let (Some(n), true) = (n, has_location) {
                            let g = Global {
                                name: qualify(&n),
                                unit: u,
                                die: entry.offset(),
                                ty: ty.or_else(|| {
                                    spec_type(unit, entry).map(|off| builder.convert(u, off))
                                }),
                            };
                            if g.name != n {
                                self.globals
                                    .entry(g.name.clone())
                                    .or_default()
                                    .push(g.clone());
                            }
                            self.globals.entry(n).or_default().push(g);
                        }
                    }
                }
                gimli::DW_TAG_base_type
                | gimli::DW_TAG_structure_type
                | gimli::DW_TAG_class_type
                | gimli::DW_TAG_union_type
                | gimli::DW_TAG_enumeration_type
                | gimli::DW_TAG_typedef => {
                    if let Some(n) = &name {
                        let id = builder.convert(u, entry.offset());
                        // Short names find qualified types too (`ptype Circle`), after
                        // any type that really has that name.
                        if prefixes.contains_key(&entry.offset()) {
                            builder.names.entry(n.clone()).or_insert(id);
                        }
                    }
                }
                _ => {}
            }
            if entry.has_children()
                && !matches!(
                    tag,
                    gimli::DW_TAG_subprogram
                        | gimli::DW_TAG_lexical_block
                        | gimli::DW_TAG_inlined_subroutine
                        | gimli::DW_TAG_namespace
                )
            {
                scopes.push((depth, in_function, subprogram, inline_depth));
            }
        }
        Ok(optimized)
    }

    /// The code bytes at file address `addr` (for prologue analysis), if in a code section.
    pub(crate) fn code_at(&self, addr: u64, len: usize) -> Option<&[u8]> {
        let (a, off, size) = self
            .code
            .iter()
            .find(|(a, _, size)| addr >= *a && addr < a + size)?;
        let start = (off + (addr - a)) as usize;
        let end = (off + size) as usize;
        self.data.get(start..end.min(start + len))
    }
}

/// `[low, high)` of a DIE with DW_AT_low_pc/high_pc (file addresses), or (0, 0).
pub(crate) fn pc_range(
    dwarf: &gimli::Dwarf<R>,
    unit: &gimli::Unit<R>,
    entry: &gimli::DebuggingInformationEntry<R>,
) -> (u64, u64) {
    let low = match entry.attr_value(gimli::DW_AT_low_pc) {
        Some(gimli::AttributeValue::Addr(a)) => a,
        Some(v @ gimli::AttributeValue::DebugAddrIndex(_)) => match dwarf.attr_address(unit, v) {
            Ok(Some(a)) => a,
            _ => return (0, 0),
        },
        _ => return (0, 0),
    };
    let high = match entry.attr_value(gimli::DW_AT_high_pc) {
        Some(gimli::AttributeValue::Addr(a)) => a,
        Some(v) => match v.udata_value() {
            Some(len) => low + len,
            None => low,
        },
        None => low,
    };
    (low, high)
}

/// The address ranges of a DIE (DW_AT_low_pc/high_pc or DW_AT_ranges), file addresses,
/// empty ones left out.
pub(crate) fn die_ranges(
    dwarf: &gimli::Dwarf<R>,
    unit: &gimli::Unit<R>,
    entry: &gimli::DebuggingInformationEntry<R>,
) -> Vec<(u64, u64)> {
    let (low, high) = pc_range(dwarf, unit, entry);
    if high > low {
        return vec![(low, high)];
    }
    let mut out = Vec::new();
    if let Ok(mut rs) = dwarf.die_ranges(unit, entry) {
        while let Ok(Some(r)) = rs.next() {
            if r.end > r.begin && r.begin != 0 {
                out.push((r.begin, r.end));
            }
        }
    }
    out
}

/// DW_AT_entry_pc as a file address (an address, or an offset from DW_AT_low_pc).
fn entry_pc(entry: &gimli::DebuggingInformationEntry<R>) -> Option<u64> {
    match entry.attr_value(gimli::DW_AT_entry_pc)? {
        gimli::AttributeValue::Addr(a) => Some(a),
        v => {
            let off = v.udata_value()?;
            match entry.attr_value(gimli::DW_AT_low_pc) {
                Some(gimli::AttributeValue::Addr(a)) => Some(a + off),
                _ => None,
            }
        }
    }
}

/// The DIE offset of DW_AT_type within the same unit.
pub(crate) fn type_ref(entry: &gimli::DebuggingInformationEntry<R>) -> Option<UnitOffset> {
    match entry.attr_value(gimli::DW_AT_type)? {
        gimli::AttributeValue::UnitRef(off) => Some(off),
        _ => None,
    }
}

fn spec_die(
    unit: &gimli::Unit<R>,
    entry: &gimli::DebuggingInformationEntry<R>,
) -> Option<gimli::DebuggingInformationEntry<R>> {
    for at in [gimli::DW_AT_specification, gimli::DW_AT_abstract_origin] {
        if let Some(gimli::AttributeValue::UnitRef(off)) = entry.attr_value(at) {
            return unit.entry(off).ok();
        }
    }
    None
}

fn spec_name(
    dwarf: &gimli::Dwarf<R>,
    unit: &gimli::Unit<R>,
    entry: &gimli::DebuggingInformationEntry<R>,
) -> Option<String> {
    let d = spec_die(unit, entry)?;
    attr_str(dwarf, unit, &d, gimli::DW_AT_name)
}

fn spec_type(
    unit: &gimli::Unit<R>,
    entry: &gimli::DebuggingInformationEntry<R>,
) -> Option<UnitOffset> {
    type_ref(&spec_die(unit, entry)?)
}

fn first_op_is_addr(e: &gimli::Expression<R>) -> bool {
    first_op_addr(e).is_some()
}

/// The address of a location expression that starts with `DW_OP_addr` (file address).
fn first_op_addr(e: &gimli::Expression<R>) -> Option<u64> {
    let mut ops = e.clone().operations(gimli::Encoding {
        address_size: 8,
        format: gimli::Format::Dwarf32,
        version: 4,
    });
    match ops.next() {
        Ok(Some(gimli::Operation::Address { address })) => Some(address),
        _ => None,
    }
}

/// A C function's DW_AT_linkage_name, on its DIE or the declaration it completes.
fn c_linkage_name(
    dwarf: &gimli::Dwarf<R>,
    unit: &gimli::Unit<R>,
    entry: &gimli::DebuggingInformationEntry<R>,
) -> Option<String> {
    attr_str(dwarf, unit, entry, gimli::DW_AT_linkage_name).or_else(|| {
        let d = spec_die(unit, entry)?;
        attr_str(dwarf, unit, &d, gimli::DW_AT_linkage_name)
    })
}

/// The DIE a definition completes (DW_AT_specification, else DW_AT_abstract_origin), in the
/// same unit.
fn spec_offset(entry: &gimli::DebuggingInformationEntry<R>) -> Option<UnitOffset> {
    for at in [gimli::DW_AT_specification, gimli::DW_AT_abstract_origin] {
        if let Some(gimli::AttributeValue::UnitRef(off)) = entry.attr_value(at) {
            return Some(off);
        }
    }
    None
}
