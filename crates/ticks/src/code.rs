//! What the counter needs to know of a module's code, read from its ELF file: the bytes of
//! its executable sections and the ranges of its functions (the FDEs of `.eh_frame`).
//!
//! Everything is in the file's own virtual addresses; a mapping adds its load bias later. The
//! result depends on the file's bytes only, so recording and replay (which maps the trace's
//! copy of the same file) see the same code.

use gimli::UnwindSection;
use object::{Object, ObjectSection, SectionKind};

use crate::TicksError;

/// One executable section: its file virtual address and bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// Virtual address of its first byte (before the load bias).
    pub addr: u64,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

impl Section {
    /// One past its last byte.
    pub fn end(&self) -> u64 {
        self.addr + self.bytes.len() as u64
    }
}

/// A module's code as the planner reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModuleCode {
    /// Executable sections, sorted by address.
    pub sections: Vec<Section>,
    /// `[start, end)` of every function that has an FDE, sorted by start, overlaps removed.
    pub functions: Vec<(u64, u64)>,
}

impl ModuleCode {
    /// Reads the code of an ELF file (its bytes).
    pub fn from_elf(bytes: &[u8]) -> Result<ModuleCode, TicksError> {
        let file = object::File::parse(bytes).map_err(|e| TicksError::Elf(e.to_string()))?;
        let mut sections = Vec::new();
        for s in file.sections() {
            if s.kind() != SectionKind::Text || s.size() == 0 {
                continue;
            }
            // NOBITS sections have no bytes to patch.
            let Ok(data) = s.data() else { continue };
            if data.len() as u64 != s.size() {
                continue;
            }
            sections.push(Section {
                addr: s.address(),
                bytes: data.to_vec(),
            });
        }
        sections.sort_by_key(|s| s.addr);
        let functions = match file.section_by_name(".eh_frame") {
            Some(eh) => fde_ranges(&file, &eh)?,
            None => Vec::new(),
        };
        Ok(ModuleCode {
            sections,
            functions,
        })
    }

    /// The section holding `addr`.
    pub fn section_of(&self, addr: u64) -> Option<&Section> {
        let i = self.sections.partition_point(|s| s.addr <= addr);
        self.sections
            .get(i.checked_sub(1)?)
            .filter(|s| addr < s.end())
    }

    /// The bytes from `addr` to the end of its section.
    pub fn bytes_from(&self, addr: u64) -> Option<&[u8]> {
        let s = self.section_of(addr)?;
        Some(&s.bytes[(addr - s.addr) as usize..])
    }
}

/// The `[start, end)` ranges of the FDEs of `.eh_frame`, sorted, overlaps removed (a range
/// that starts inside the previous one is dropped: FDEs of one function never overlap).
fn fde_ranges(
    file: &object::File<'_>,
    eh: &object::Section<'_, '_>,
) -> Result<Vec<(u64, u64)>, TicksError> {
    let data = eh
        .uncompressed_data()
        .map_err(|e| TicksError::Elf(e.to_string()))?;
    let mut frame = gimli::EhFrame::new(&data, gimli::LittleEndian);
    frame.set_address_size(8);
    let mut bases = gimli::BaseAddresses::default().set_eh_frame(eh.address());
    if let Some(s) = file.section_by_name(".text") {
        bases = bases.set_text(s.address());
    }
    if let Some(s) = file.section_by_name(".got") {
        bases = bases.set_got(s.address());
    }
    let mut out = Vec::new();
    let mut entries = frame.entries(&bases);
    loop {
        let entry = match entries.next() {
            Ok(Some(e)) => e,
            Ok(None) => break,
            // A damaged table: what was read so far stands (fewer functions, fewer sites).
            Err(_) => break,
        };
        if let gimli::CieOrFde::Fde(partial) = entry {
            if let Ok(fde) = partial.parse(gimli::EhFrame::cie_from_offset) {
                let (s, len) = (fde.initial_address(), fde.len());
                // A signal trampoline's FDE starts one byte before its code (unwinders look
                // up return address - 1): it is not a function start to decode from, and
                // the kernel jumps to the byte after it.
                if len > 0 && !fde.cie().is_signal_trampoline() {
                    out.push((s, s + len));
                }
            }
        }
    }
    out.sort_unstable();
    let mut kept: Vec<(u64, u64)> = Vec::with_capacity(out.len());
    for r in out {
        match kept.last() {
            Some(&(_, e)) if r.0 < e => {}
            _ => kept.push(r),
        }
    }
    Ok(kept)
}
