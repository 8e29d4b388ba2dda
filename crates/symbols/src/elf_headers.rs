//! The program headers of an ELF64 little-endian image, read through any reader: a file on
//! disk (only its first bytes are read, not the whole file), or process memory where the
//! image's first page is mapped.
//!
//! The debugger, the TLS lookup and replay's gates each want one or two segments (the load
//! bias, PT_DYNAMIC, PT_TLS, PT_GNU_EH_FRAME); [`module`](crate::module) parses whole files
//! with `object` when it wants their symbols.

use std::os::unix::fs::FileExt;
use std::path::Path;

/// `p_type` of a loadable segment.
pub const PT_LOAD: u32 = 1;
/// `p_type` of the dynamic section's segment.
pub const PT_DYNAMIC: u32 = 2;
/// `p_type` of the thread-local storage template.
pub const PT_TLS: u32 = 7;
/// `p_type` of `.eh_frame_hdr` (the sorted table of unwind entries).
pub const PT_GNU_EH_FRAME: u32 = 0x6474_e550;

/// One program header (the fields that hindsight uses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProgramHeader {
    /// `p_type`.
    pub kind: u32,
    /// `p_offset`: where the segment starts in the file.
    pub offset: u64,
    /// `p_vaddr`: its address before relocation.
    pub vaddr: u64,
    /// `p_memsz`.
    pub memsz: u64,
    /// `p_align`.
    pub align: u64,
}

/// The program headers of the image whose first byte is at offset 0 of `read` (`read(at,
/// buf)` fills `buf` from offset `at` or fails). None when it is not an ELF64 image or the
/// headers cannot be read.
pub fn program_headers(read: impl Fn(u64, &mut [u8]) -> bool) -> Option<Vec<ProgramHeader>> {
    let mut ehdr = [0u8; 64];
    // ELF64 header: magic, class 2 (64-bit); e_phoff at 0x20, e_phentsize at 0x36, e_phnum
    // at 0x38.
    if !read(0, &mut ehdr) || ehdr[..4] != *b"\x7fELF" || ehdr[4] != 2 {
        return None;
    }
    let phoff = u64_at(&ehdr, 0x20);
    let phentsize = u16::from_le_bytes([ehdr[0x36], ehdr[0x37]]) as usize;
    let phnum = u16::from_le_bytes([ehdr[0x38], ehdr[0x39]]) as usize;
    // Real images have a dozen 56-byte headers: anything far off is not one (and is not
    // allocated for).
    if !(56..=256).contains(&phentsize) || phnum == 0 || phnum > 256 {
        return None;
    }
    let mut table = vec![0u8; phentsize * phnum];
    if !read(phoff, &mut table) {
        return None;
    }
    Some(
        table
            .chunks_exact(phentsize)
            .map(|h| ProgramHeader {
                kind: u32::from_le_bytes([h[0], h[1], h[2], h[3]]),
                offset: u64_at(h, 8),
                vaddr: u64_at(h, 16),
                memsz: u64_at(h, 40),
                align: u64_at(h, 48),
            })
            .collect(),
    )
}

/// [`program_headers`] of the regular file at `path` (None for anything else: a device such
/// as `/dev/zero`, which a shared anonymous mapping names, would never end).
pub fn file_program_headers(path: &Path) -> Option<Vec<ProgramHeader>> {
    // Looked at before opening: opening some special files blocks.
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let file = std::fs::File::open(path).ok()?;
    program_headers(|at, buf| file.read_exact_at(buf, at).is_ok())
}

/// The load bias of an image whose offset-0 page is mapped at `start`: `start` minus the
/// page-aligned address of the PT_LOAD segment that holds file offset 0.
pub fn load_bias(headers: &[ProgramHeader], start: u64) -> Option<u64> {
    headers
        .iter()
        .find(|h| h.kind == PT_LOAD && h.offset == 0)
        .map(|h| start.wrapping_sub(h.vaddr & !0xfff))
}

fn u64_at(b: &[u8], o: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[o..o + 8]);
    u64::from_le_bytes(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_running_test_binary_has_a_first_load_segment_and_unwind_table() {
        let exe = std::env::current_exe().expect("current_exe");
        let headers = file_program_headers(&exe).expect("an ELF64 file");
        assert!(headers.iter().any(|h| h.kind == PT_LOAD && h.offset == 0));
        assert!(headers.iter().any(|h| h.kind == PT_GNU_EH_FRAME));
        assert_eq!(
            load_bias(&headers, 0x5555_5555_4000),
            Some(0x5555_5555_4000)
        );
        assert!(file_program_headers(Path::new("/dev/zero")).is_none());
        assert!(program_headers(|_, b: &mut [u8]| {
            b.fill(0);
            true
        })
        .is_none());
    }
}
