//! Line tables: DWARF line programs read once into address-sorted sequences, and the line
//! questions the debugger asks (`line_at` at every stop, `line_range` for stepping,
//! `resolve_line` for `break FILE:LINE`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::error::SymbolsError;
use crate::module::R;
use crate::program::Program;

/// One line-table row, as [`Program::line_at`] answers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineInfo {
    /// The source file (compilation directory joined with the file's directory and name).
    pub file: PathBuf,
    /// The file's name as the line table spells it, which is what gdb shows.
    pub name: String,
    /// 1-based line (0: code that belongs to no line).
    pub line: u32,
    /// Runtime address where the row starts.
    pub address: u64,
    /// A recommended breakpoint position.
    pub is_stmt: bool,
}

/// One row of a sequence (file addresses).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Row {
    pub addr: u64,
    /// Index into [`LineTables::files`].
    pub file: u32,
    pub line: u32,
    pub is_stmt: bool,
}

/// A contiguous run of rows covering `[start, end)`, rows sorted by address.
#[derive(Debug, Clone)]
pub(crate) struct Sequence {
    pub start: u64,
    pub end: u64,
    pub rows: Vec<Row>,
}

/// Every line table of one module, with its source files interned module-wide.
#[derive(Debug, Default)]
pub(crate) struct LineTables {
    /// Sorted by start address (after [`LineTables::finish`]).
    pub seqs: Vec<Sequence>,
    /// Full path of each file.
    pub files: Vec<PathBuf>,
    /// Per file: its name as the line table spells it (`t.c`, `src/t.c`, `/tmp/t.c`).
    pub file_names: Vec<String>,
    /// Per unit: the module file id of each file-table index (what DW_AT_decl_file and the
    /// rows' file register hold).
    pub unit_files: Vec<HashMap<u64, u32>>,
    ids: HashMap<PathBuf, u32>,
}

impl LineTables {
    /// Reads the line program of `unit`. Units must be read in order, all of them (with or
    /// without a line program): `unit_files` is indexed by unit.
    pub fn read_unit(&mut self, dwarf: &gimli::Dwarf<R>, unit: &gimli::Unit<R>) {
        let mut files = HashMap::new();
        let Some(program) = unit.line_program.clone() else {
            self.unit_files.push(files);
            return;
        };
        let comp_dir = unit
            .comp_dir
            .as_ref()
            .map(|d| PathBuf::from(String::from_utf8_lossy(d).into_owned()))
            .unwrap_or_default();
        let header = program.header();
        // DWARF 5 numbers files from 0, earlier versions from 1.
        let first = if header.version() >= 5 { 0 } else { 1 };
        for (i, entry) in header.file_names().iter().enumerate() {
            let string = |v| {
                dwarf
                    .attr_string(unit, v)
                    .map(|s| String::from_utf8_lossy(&s).into_owned())
                    .unwrap_or_default()
            };
            let name = string(entry.path_name());
            let dir = entry.directory(header).map(string).unwrap_or_default();
            // Directory 0 is the compilation directory: gdb shows the name alone then,
            // unless that directory is relative (`./libio/fileops.c`, as glibc's debug info
            // has it; a name leading out of it, `../sysdeps/…`, stays alone).
            let relative_dir0 = entry.directory_index() == 0
                && !dir.is_empty()
                && !Path::new(&dir).is_absolute()
                && !name.starts_with("..");
            let shown = if relative_dir0 {
                format!("{dir}/{name}")
            } else if entry.directory_index() == 0
                || dir.is_empty()
                || Path::new(&name).is_absolute()
            {
                name.clone()
            } else {
                format!("{dir}/{name}")
            };
            // Joining an absolute directory or name replaces what came before.
            let mut path = comp_dir.clone();
            path.push(dir);
            path.push(name);
            let id = self.intern(path, shown);
            files.insert(first + i as u64, id);
        }
        let mut rows = program.rows();
        let mut current: Vec<Row> = Vec::new();
        let mut line_has_discriminator = false;
        while let Ok(Some((_, row))) = rows.next_row() {
            if row.end_sequence() {
                if let Some(first) = current.first() {
                    self.seqs.push(Sequence {
                        start: first.addr,
                        end: row.address(),
                        rows: std::mem::take(&mut current),
                    });
                }
                current.clear();
                continue;
            }
            let Some(&file) = files.get(&row.file_index()) else {
                continue;
            };
            let line = row.line().map(|l| l.get() as u32).unwrap_or(0);
            // gdb's rule for rows that repeat the previous row's line: once the line has had
            // a non-zero discriminator (loop bodies do), they add nothing and the line goes
            // on — which is what makes a return address into a loop body "mid-line".
            let same = current
                .last()
                .map(|p| p.line == line && p.file == file)
                .unwrap_or(false);
            if same {
                line_has_discriminator |= row.discriminator() != 0;
                if line_has_discriminator {
                    continue;
                }
            } else {
                line_has_discriminator = row.discriminator() != 0;
            }
            current.push(Row {
                addr: row.address(),
                file,
                line,
                is_stmt: row.is_stmt(),
            });
        }
        self.unit_files.push(files);
    }

    fn intern(&mut self, path: PathBuf, shown: String) -> u32 {
        if let Some(id) = self.ids.get(&path) {
            return *id;
        }
        let id = self.files.len() as u32;
        self.files.push(path.clone());
        self.file_names.push(shown);
        self.ids.insert(path, id);
        id
    }

    /// Sorts the sequences by address; call once every unit is read.
    pub fn finish(&mut self) {
        // Sequences of functions discarded at link time start at 0 and would shadow real
        // code; empty ones answer nothing.
        self.seqs.retain(|s| s.end > s.start && s.start != 0);
        self.seqs.sort_by_key(|s| s.start);
    }

    /// The path of file-table index `index` of unit `unit`.
    pub fn unit_file(&self, unit: usize, index: u64) -> Option<&Path> {
        let id = *self.unit_files.get(unit)?.get(&index)?;
        self.files.get(id as usize).map(PathBuf::as_path)
    }

    /// (sequence, row) of the row covering file address `a`: the last row at or before it.
    pub fn row_at(&self, a: u64) -> Option<(usize, usize)> {
        let si = self.seqs.partition_point(|s| s.start <= a).checked_sub(1)?;
        let seq = &self.seqs[si];
        if a >= seq.end {
            return None;
        }
        let ri = seq.rows.partition_point(|r| r.addr <= a).checked_sub(1)?;
        Some((si, ri))
    }

    /// Ids of the files that `file` names as gdb matches a `break FILE:LINE` argument: the
    /// full path, a suffix on a '/' boundary, or the base name.
    fn matching_files(&self, file: &str) -> Vec<u32> {
        let suffix = format!("/{}", file.trim_start_matches("./"));
        // `gcc ../src/f.c` records `BUILD/../src/f.c`; an editor names it `SRC/f.c`.
        let normal = normalize(Path::new(file));
        (0..self.files.len() as u32)
            .filter(|&i| {
                let p = &self.files[i as usize];
                let ps = p.to_string_lossy();
                ps == file
                    || ps.ends_with(&suffix)
                    || self.file_names[i as usize] == file
                    || p.file_name().is_some_and(|n| n.to_string_lossy() == file)
                    || (normal.is_absolute() && normalize(p) == normal)
            })
            .collect()
    }
}

impl Program {
    /// The line-table row covering pc.
    ///
    /// As gdb does, a pc in a non-statement row belongs to that row's line, unless a
    /// statement row starts at the same address.
    pub fn line_at(&self, pc: u64) -> Option<LineInfo> {
        let (mi, a) = self.module_at(pc)?;
        let m = self.module(mi);
        let (si, ri) = m.lines.row_at(a)?;
        let seq = &m.lines.seqs[si];
        // gdb's find_pc_line: a non-statement row stands, unless a statement row shares its
        // address.
        let mut ri = ri;
        while !seq.rows[ri].is_stmt
            && ri > 0
            && seq.rows[ri - 1].line != 0
            && seq.rows[ri - 1].addr == seq.rows[ri].addr
        {
            ri -= 1;
        }
        // A line-0 row (compiler-generated code) is answered too: steppers go on through it.
        let r = seq.rows[ri];
        let mut first = ri;
        while first > 0 && seq.rows[first - 1].addr == r.addr {
            first -= 1;
        }
        let is_stmt = seq.rows[first..=ri].iter().any(|x| x.is_stmt);
        Some(LineInfo {
            file: m
                .lines
                .files
                .get(r.file as usize)
                .cloned()
                .unwrap_or_default(),
            name: m
                .lines
                .file_names
                .get(r.file as usize)
                .cloned()
                .unwrap_or_default(),
            line: r.line,
            address: r.addr + m.bias,
            is_stmt,
        })
    }

    /// The line-table entry covering pc as gdb's `find_pc_line` answers it: the last row at
    /// or before pc that has a line, from its address to the next row's (`[start, end)`: one
    /// row, even when the next row has the same line). Rows of line 0 are not entries (gdb
    /// does not read them): the entry before goes on over them.
    pub fn line_entry(&self, pc: u64) -> Option<(LineInfo, u64)> {
        let (mi, a) = self.module_at(pc)?;
        let m = self.module(mi);
        let (si, ri) = m.lines.row_at(a)?;
        let seq = &m.lines.seqs[si];
        let mut ri = seq.rows[..=ri].iter().rposition(|r| r.line != 0)?;
        // A non-statement row stands, unless a statement row shares its address.
        while !seq.rows[ri].is_stmt
            && ri > 0
            && seq.rows[ri - 1].line != 0
            && seq.rows[ri - 1].addr == seq.rows[ri].addr
        {
            ri -= 1;
        }
        let r = seq.rows[ri];
        let end = seq.rows[ri + 1..]
            .iter()
            .find(|x| x.addr > a && x.line != 0)
            .map(|x| x.addr)
            .unwrap_or(seq.end);
        let info = LineInfo {
            file: m
                .lines
                .files
                .get(r.file as usize)
                .cloned()
                .unwrap_or_default(),
            name: m
                .lines
                .file_names
                .get(r.file as usize)
                .cloned()
                .unwrap_or_default(),
            line: r.line,
            address: r.addr + m.bias,
            is_stmt: r.is_stmt,
        };
        Some((info, end + m.bias))
    }

    /// Every statement start of every module with line tables (runtime addresses, sorted):
    /// where a `step` or `next` can end. Reverse steps plant breakpoints on them. Libraries
    /// whose line tables come from a separate debug file (libc6-dbg's libc) are left out:
    /// their hundred thousand statements would be planted at every reverse step.
    pub fn statement_starts(&self) -> Vec<u64> {
        let mut out = Vec::new();
        for mi in 0..self.module_count() {
            let m = self.module(mi);
            if m.separate_debug {
                continue;
            }
            for seq in &m.lines.seqs {
                out.extend(
                    seq.rows
                        .iter()
                        .filter(|r| r.is_stmt && r.line != 0)
                        .map(|r| r.addr + m.bias),
                );
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// `[start, end)` of the contiguous rows of pc's line, clipped to pc's function: what
    /// `step`/`next` must leave before they stop.
    pub fn line_range(&self, pc: u64) -> Option<(u64, u64)> {
        let (mi, a) = self.module_at(pc)?;
        let m = self.module(mi);
        let (si, ri) = m.lines.row_at(a)?;
        let seq = &m.lines.seqs[si];
        let (line, file) = (seq.rows[ri].line, seq.rows[ri].file);
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
        let mut start = seq.rows[lo].addr;
        let mut end = seq.rows.get(hi).map(|r| r.addr).unwrap_or(seq.end);
        // A line never spans two functions, though the rows may say so (the next function
        // starting on the same line).
        if let Some(f) = self.dwarf_func(mi, a) {
            start = start.max(f.low);
            end = end.min(f.high);
        }
        Some((start + m.bias, end + m.bias))
    }

    /// The source file that `name` designates (full path, path suffix or base name), as
    /// `list FILE:LINE` needs it.
    pub fn find_source(&self, name: &str) -> Option<PathBuf> {
        self.modules.iter().find_map(|m| {
            let i = *m.lines.matching_files(name).first()?;
            m.lines.files.get(i as usize).cloned()
        })
    }

    /// The code of a source line as `info line FILE:LINE` shows it: the smallest line at or
    /// after `line` with statement code in a matching file, and its lowest address.
    pub fn line_address(&self, file: &str, line: u32) -> Result<(u32, u64), SymbolsError> {
        let mut best: Option<(u32, u64)> = None;
        let mut any_file = false;
        for m in &self.modules {
            let files = m.lines.matching_files(file);
            any_file |= !files.is_empty();
            for r in m.lines.seqs.iter().flat_map(|s| s.rows.iter()) {
                if r.is_stmt && r.line >= line && files.contains(&r.file) {
                    let cand = (r.line, r.addr + m.bias);
                    best = Some(match best {
                        Some(b) if b <= cand => b,
                        _ => cand,
                    });
                }
            }
        }
        if !any_file {
            return Err(SymbolsError::NoSourceFile(file.to_string()));
        }
        best.ok_or_else(|| SymbolsError::LineOutOfRange {
            file: file.to_string(),
            line,
        })
    }

    /// Where `break FILE:LINE` goes, as gdb chooses: the smallest line at or after `line`
    /// with statement code in a matching file, then one address per function (its lowest
    /// statement address of that line); an address at a function's entry moves past the
    /// prologue as `break FUNCTION` does.
    pub fn resolve_line(&self, file: &str, line: u32) -> Result<Vec<u64>, SymbolsError> {
        let matching: Vec<Vec<u32>> = self
            .modules
            .iter()
            .map(|m| m.lines.matching_files(file))
            .collect();
        if matching.iter().all(Vec::is_empty) {
            return Err(SymbolsError::NoSourceFile(file.to_string()));
        }
        let rows = || {
            self.modules
                .iter()
                .enumerate()
                .flat_map(|(mi, m)| {
                    m.lines
                        .seqs
                        .iter()
                        .flat_map(|s| s.rows.iter())
                        .map(move |r| (mi, r))
                })
                .filter(|(mi, r)| r.is_stmt && matching[*mi].contains(&r.file))
        };
        let target = rows()
            .filter(|(_, r)| r.line >= line)
            .map(|(_, r)| r.line)
            .min()
            .ok_or_else(|| SymbolsError::LineOutOfRange {
                file: file.to_string(),
                line,
            })?;
        // (module, function start — or the address itself outside any function) -> lowest.
        let mut per_func: HashMap<(usize, u64), u64> = HashMap::new();
        for (mi, r) in rows().filter(|(_, r)| r.line == target) {
            let func = self.dwarf_func(mi, r.addr).map(|f| f.low).unwrap_or(r.addr);
            let best = per_func.entry((mi, func)).or_insert(r.addr);
            *best = (*best).min(r.addr);
        }
        let mut out: Vec<u64> = per_func
            .into_iter()
            .map(|((mi, func), a)| {
                let bias = self.module(mi).bias;
                match self.dwarf_func(mi, a) {
                    Some(f) if f.low == a && func == a => {
                        self.after_prologue(mi, f).unwrap_or(a) + bias
                    }
                    _ => a + bias,
                }
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }
}

/// `path` with `.` and `name/..` taken out, without looking at the file system (a path that
/// goes through a symbolic link keeps its own spelling).
pub fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::normalize;
    use std::path::Path;

    #[test]
    fn paths_are_normalized_by_their_spelling() {
        assert_eq!(
            normalize(Path::new("/w/build/../src/./f.c")),
            Path::new("/w/src/f.c")
        );
        assert_eq!(normalize(Path::new("../a/../b.c")), Path::new("../b.c"));
        assert_eq!(normalize(Path::new("/w/src/f.c")), Path::new("/w/src/f.c"));
    }
}
