//! The agent's image: the shared object that `build.rs` compiled, read once into what a
//! process needs (the bytes of its loadable segments at their place under
//! [`hindsight_agent::abi::BASE`], relocated, with their protections) and the addresses of
//! its entry points.
//!
//! hindsight loads it itself rather than through the dynamic loader (`LD_PRELOAD`): the
//! seccomp filter, installed before the program starts, must know the address of the
//! agent's untraced syscall instruction, so the agent's place cannot be left to `ld.so`;
//! and loading it at every exec, from the tracer, serves every program alike, whether it
//! clears its environment before an exec, is linked statically, or checks `LD_PRELOAD`
//! (sanitizers do). The agent is position-independent code with relative relocations only
//! (`-z defs`, `-Bsymbolic`): relocating it is adding [`BASE`] to a few words.

use std::sync::OnceLock;

use hindsight_agent::abi::{symbols, BASE, MAX_SPAN};
use object::elf;
use object::read::elf::{ElfFile64, FileHeader, ProgramHeader};
use object::{LittleEndian as LE, Object, ObjectSymbol, ObjectSymbolTable};

use crate::AgentError;

/// The image as compiled (see `build.rs`).
pub static IMAGE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/hindsight-agent.so"));

/// One loadable piece: its bytes at `BASE + offset` (the rest of its pages are zeros).
#[derive(Debug, Clone)]
pub struct Segment {
    /// Offset from [`BASE`] of its first byte.
    pub offset: u64,
    /// Its initialised bytes (relocated).
    pub bytes: Vec<u8>,
    /// Bytes it takes in memory (its `.bss` included).
    pub mem_len: u64,
    /// `PROT_*` bits.
    pub prot: u64,
}

/// Where the things hindsight needs are, once the image is at [`BASE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Addresses {
    /// The agent's first and one past its last byte (whole pages).
    pub range: (u64, u64),
    /// Its code: `[start, end)`.
    pub code: (u64, u64),
    /// What the stubs call.
    pub entry: u64,
    /// Its `ret` to the stub.
    pub ret: u64,
    /// `[start, end)` of the code up to the entry's saving of the stack pointer (its check
    /// of the mode, its way back when off, and that save): the return address is at the
    /// stack pointer.
    pub prologue: (u64, u64),
    /// The untraced syscall instruction.
    pub untraced: u64,
    /// The untraced syscall instruction of a call that blocked (see
    /// [`hindsight_agent::abi::symbols::BLOCKED`]).
    pub blocked: u64,
    /// The traced syscall after it, where such a call's thread stops when it returns.
    pub blocked_done: u64,
    /// The report syscall instruction.
    pub report: u64,
    /// The shared state ([`hindsight_agent::abi::Globals`]).
    pub globals: u64,
    /// The syscall buffer.
    pub buffer: u64,
}

impl Addresses {
    /// The pcs after the syscall instructions whose calls the seccomp filter lets through.
    pub fn untraced_ips(&self) -> Vec<u64> {
        use hindsight_agent::abi::SYSCALL_LEN;
        vec![self.untraced + SYSCALL_LEN, self.blocked + SYSCALL_LEN]
    }

    /// Whether `pc` is in the agent's code.
    pub fn in_code(&self, pc: u64) -> bool {
        pc >= self.code.0 && pc < self.code.1
    }

    /// Whether `[addr, addr + len)` overlaps the agent's memory.
    pub fn overlaps(&self, addr: u64, len: u64) -> bool {
        addr < self.range.1 && addr.saturating_add(len) > self.range.0
    }
}

/// The image, ready to load.
#[derive(Debug, Clone)]
pub struct Image {
    /// Its pieces, by offset.
    pub segments: Vec<Segment>,
    /// Where things are.
    pub addrs: Addresses,
}

/// The image, read once per hindsight process.
pub fn image() -> Result<&'static Image, AgentError> {
    static ONCE: OnceLock<Result<Image, String>> = OnceLock::new();
    ONCE.get_or_init(|| parse(IMAGE))
        .as_ref()
        .map_err(|e| AgentError::Image(e.clone()))
}

fn page_up(v: u64) -> u64 {
    (v + 0xfff) & !0xfff
}

/// Reads an image (the shared object's bytes).
pub fn parse(bytes: &[u8]) -> Result<Image, String> {
    let file = ElfFile64::<LE>::parse(bytes).map_err(|e| format!("not an ELF file: {e}"))?;
    let header = file.elf_header();
    let e = LE;
    let phdrs = header
        .program_headers(e, bytes)
        .map_err(|err| format!("bad program headers: {err}"))?;
    let mut segments = Vec::new();
    let mut end = 0u64;
    let mut code = (u64::MAX, 0u64);
    for ph in phdrs.iter().filter(|p| p.p_type(e) == elf::PT_LOAD) {
        let vaddr = ph.p_vaddr(e);
        let filesz = ph.p_filesz(e);
        let memsz = ph.p_memsz(e);
        let flags = ph.p_flags(e).0;
        let data = ph
            .data(e, bytes)
            .map_err(|_| "a segment lies outside the file".to_string())?;
        let mut prot = 0;
        if flags & elf::PF_R.0 != 0 {
            prot |= libc::PROT_READ as u64;
        }
        if flags & elf::PF_W.0 != 0 {
            prot |= libc::PROT_WRITE as u64;
        }
        if flags & elf::PF_X.0 != 0 {
            prot |= libc::PROT_EXEC as u64;
            code = (code.0.min(vaddr), code.1.max(vaddr + memsz));
        }
        end = end.max(vaddr + memsz);
        segments.push(Segment {
            offset: vaddr,
            bytes: data[..filesz as usize].to_vec(),
            mem_len: memsz,
            prot,
        });
    }
    let span = page_up(end);
    if span == 0 || span > MAX_SPAN {
        return Err(format!("it spans {span:#x} bytes"));
    }
    // Relocations: relative ones (add BASE), and symbol ones against the image's own
    // symbols (the object refers to nothing outside itself).
    let dynsym = |i: object::SymbolIndex| {
        file.dynamic_symbol_table()
            .and_then(|t| t.symbol_by_index(i).ok())
            .map(|s| s.address())
            .filter(|v| *v != 0)
    };
    for (at, r) in file.dynamic_relocations().into_iter().flatten() {
        let object::RelocationFlags::Elf { r_type } = r.flags() else {
            return Err(format!("relocation at {at:#x} of an unknown kind"));
        };
        let value = match (r_type, r.target()) {
            (elf::R_X86_64_RELATIVE, _) => BASE.wrapping_add(r.addend() as u64),
            (
                elf::R_X86_64_GLOB_DAT | elf::R_X86_64_JUMP_SLOT | elf::R_X86_64_64,
                object::RelocationTarget::Symbol(i),
            ) => {
                let v = dynsym(i)
                    .ok_or_else(|| format!("relocation at {at:#x} to an undefined symbol"))?;
                BASE.wrapping_add(v).wrapping_add(r.addend() as u64)
            }
            (other, _) => return Err(format!("relocation of type {other} at {at:#x}")),
        };
        let seg = segments
            .iter_mut()
            .find(|s| at >= s.offset && at + 8 <= s.offset + s.bytes.len() as u64)
            .ok_or_else(|| format!("relocation at {at:#x} outside the initialised data"))?;
        let i = (at - seg.offset) as usize;
        seg.bytes[i..i + 8].copy_from_slice(&value.to_le_bytes());
    }
    let sym = |name: &str| -> Result<u64, String> {
        file.symbols()
            .find(|s| s.name() == Ok(name))
            .map(|s| BASE + s.address())
            .ok_or_else(|| format!("it has no symbol {name}"))
    };
    let addrs = Addresses {
        range: (BASE, BASE + span),
        code: (BASE + code.0, BASE + code.1),
        entry: sym(symbols::ENTRY)?,
        ret: sym(symbols::RETURN)?,
        prologue: (sym(symbols::OFF)?, sym(symbols::BODY)?),
        untraced: sym(symbols::UNTRACED)?,
        blocked: sym(symbols::BLOCKED)?,
        blocked_done: sym(symbols::BLOCKED_DONE)?,
        report: sym(symbols::REPORT)?,
        globals: sym(symbols::GLOBALS)?,
        buffer: sym(symbols::BUFFER)?,
    };
    Ok(Image { segments, addrs })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_image_has_everything_hindsight_needs() {
        let img = image().expect("the built image reads");
        let a = img.addrs;
        for addr in [
            a.entry,
            a.ret,
            a.untraced,
            a.blocked,
            a.blocked_done,
            a.report,
            a.prologue.0,
            a.prologue.1,
        ] {
            assert!(a.in_code(addr), "{addr:#x} in the code {:x?}", a.code);
        }
        assert!(a.globals >= a.code.1 && a.buffer >= a.code.1);
        assert!(a.range.1 - a.range.0 <= MAX_SPAN);
        // The syscall instructions are where their symbols say.
        let text = |addr: u64| {
            img.segments
                .iter()
                .find(|s| addr >= BASE + s.offset && addr < BASE + s.offset + s.bytes.len() as u64)
                .map(|s| &s.bytes[(addr - BASE - s.offset) as usize..])
                .expect("in a segment")
        };
        assert_eq!(&text(a.untraced)[..2], &[0x0f, 0x05]);
        assert_eq!(&text(a.report)[..2], &[0x0f, 0x05]);
        assert_eq!(&text(a.blocked)[..2], &[0x0f, 0x05]);
        assert_eq!(&text(a.blocked_done)[..2], &[0x0f, 0x05]);
        // The filter compares the upper halves of the untraced pcs once.
        assert!(a
            .untraced_ips()
            .iter()
            .all(|ip| ip >> 32 == a.untraced >> 32));
        assert_eq!(text(a.ret)[0], 0xc3);
        // The way back when off is just before the entry, whose check ends at the body.
        assert!(a.prologue.0 < a.entry && a.entry < a.prologue.1);
    }
}
