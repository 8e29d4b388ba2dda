//! Thread-local storage addresses, as gdb asks for them (`qGetTLSAddr`): where a module's
//! thread-local variable lives in a given thread.
//!
//! glibc on x86-64 puts the TLS blocks of the objects loaded at startup below the thread
//! pointer (fs_base), in load order, each at `l_tls_offset` below it — computed as glibc's
//! `_dl_determine_tlsoffset` does: the offset grows by each block's size, rounded up to its
//! alignment (keeping the block's first byte at its alignment phase). Objects loaded later by
//! dlopen live in dynamic TLS, which this does not find.

use std::path::Path;

use hindsight_ptrace::Tid;

use crate::session::Session;

/// (p_memsz, p_align, p_vaddr) of a PT_TLS segment.
type TlsSegment = (u64, u64, u64);

/// An ELF file's PT_TLS segment (files are read once).
fn pt_tls(path: &Path) -> Option<TlsSegment> {
    thread_local! {
        static CACHE: std::cell::RefCell<std::collections::HashMap<std::path::PathBuf, Option<TlsSegment>>> =
            Default::default();
    }
    if let Some(hit) = CACHE.with(|c| c.borrow().get(path).copied()) {
        return hit;
    }
    let found = read_pt_tls(path);
    CACHE.with(|c| c.borrow_mut().insert(path.to_path_buf(), found));
    found
}

fn read_pt_tls(path: &Path) -> Option<(u64, u64, u64)> {
    use hindsight_symbols::elf_headers::{file_program_headers, PT_TLS};
    let tls = file_program_headers(path)?
        .into_iter()
        .find(|h| h.kind == PT_TLS)?;
    Some((tls.memsz, tls.align.max(1), tls.vaddr))
}

/// (address of the object's `struct link_map`, offset of its TLS block below the thread
/// pointer) of every object loaded with a TLS segment.
pub(crate) fn offsets(s: &Session) -> Vec<(u64, u64)> {
    let (Ok(inf), Some(dynamic)) = (s.live(), s.dynamic) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut tls_offset = 0u64;
    for (map, _, name) in crate::linkmap::link_maps(inf, dynamic) {
        let path = if name.is_empty() {
            s.program.clone()
        } else {
            std::path::PathBuf::from(&name)
        };
        let Some((memsz, align, vaddr)) = pt_tls(&path) else {
            continue;
        };
        let firstbyte = vaddr.wrapping_neg() & (align - 1);
        let off = (tls_offset + memsz)
            .saturating_sub(firstbyte)
            .div_ceil(align)
            * align
            + firstbyte;
        tls_offset = off;
        out.push((map, off));
    }
    out
}

/// The address of the thread-local variable at `offset` in the TLS block of the object whose
/// `struct link_map` is at `lm`, in thread `tid`.
pub(crate) fn address(s: &Session, tid: Tid, offset: u64, lm: u64) -> Option<u64> {
    let fs_base = s.live().ok()?.regs(tid).ok()?.0.fs_base;
    let (_, off) = offsets(s).into_iter().find(|(map, _)| *map == lm)?;
    Some(fs_base.wrapping_sub(off).wrapping_add(offset))
}
