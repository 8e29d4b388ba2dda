//! Checksums of a trace's files: xxh3-64 of each 1 MiB block, then xxh3-64 of those digests.
//!
//! Blocks make two things cheap: a writer sums a stream as it grows (the digest of a prefix is
//! known at any moment), and the sum of a sparse file is verified without reading its holes
//! (a block that lies in a hole has the digest of zeros, computed once). The sum depends only
//! on the bytes, never on how the file system stores them.

use std::hash::Hasher as _;
use std::io::Read as _;
use std::os::unix::io::AsRawFd as _;
use std::path::Path;
use std::sync::OnceLock;

use twox_hash::XxHash3_64;

/// Size of a block.
pub const BLOCK: usize = 1 << 20;

/// The size and checksum of some bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sum {
    /// Their number.
    pub size: u64,
    /// Their checksum.
    pub hash: u64,
}

/// Sums bytes given in pieces.
#[derive(Clone, Default)]
pub struct Summer {
    outer: XxHash3_64,
    block: XxHash3_64,
    in_block: usize,
    size: u64,
}

fn zero_digest() -> u64 {
    static Z: OnceLock<u64> = OnceLock::new();
    *Z.get_or_init(|| XxHash3_64::oneshot(&vec![0u8; BLOCK]))
}

impl Summer {
    /// Adds bytes.
    pub fn update(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            let n = (BLOCK - self.in_block).min(data.len());
            self.block.write(&data[..n]);
            self.in_block += n;
            self.size += n as u64;
            data = &data[n..];
            if self.in_block == BLOCK {
                let d = std::mem::take(&mut self.block).finish();
                self.outer.write_u64(d);
                self.in_block = 0;
            }
        }
    }

    /// Adds a whole block of zeros; the sum so far must end at a block boundary.
    pub(crate) fn zero_block(&mut self) {
        debug_assert_eq!(self.in_block, 0);
        self.outer.write_u64(zero_digest());
        self.size += BLOCK as u64;
    }

    /// The sum of everything added so far (more may be added after).
    pub fn sum(&self) -> Sum {
        let mut outer = self.outer.clone();
        if self.in_block > 0 {
            outer.write_u64(self.block.finish());
        }
        Sum {
            size: self.size,
            hash: outer.finish(),
        }
    }
}

/// The sum of the first `len` bytes of the file at `path` (None: all of it). Blocks inside a
/// hole of a sparse file are not read. Fewer bytes than `len` is an `UnexpectedEof` error.
pub fn sum_file(path: &Path, len: Option<u64>) -> std::io::Result<Sum> {
    let mut f = std::fs::File::open(path)?;
    let size = f.metadata()?.len();
    let len = len.unwrap_or(size);
    if len > size {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    let mut s = Summer::default();
    let mut buf = vec![0u8; BLOCK];
    let mut at = 0u64;
    while at < len {
        let n = (len - at).min(BLOCK as u64) as usize;
        if n == BLOCK && hole_covers(&f, at, n) {
            s.zero_block();
        } else {
            std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(at))?;
            f.read_exact(&mut buf[..n])?;
            s.update(&buf[..n]);
        }
        at += n as u64;
    }
    Ok(s.sum())
}

/// True when the `n` bytes at `at` lie in a hole (SEEK_DATA finds no data before their end).
pub(crate) fn hole_covers(f: &std::fs::File, at: u64, n: usize) -> bool {
    // SAFETY: lseek on an open descriptor; it only moves the file offset.
    let data = unsafe { libc::lseek(f.as_raw_fd(), at as libc::off_t, libc::SEEK_DATA) };
    // -1 with ENXIO: no data after `at` at all.
    data == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENXIO)
        || data >= 0 && data as u64 >= at + n as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sum_does_not_depend_on_the_pieces() {
        let data: Vec<u8> = (0..3 * BLOCK + 17).map(|i| (i * 31 % 251) as u8).collect();
        let mut whole = Summer::default();
        whole.update(&data);
        let mut pieces = Summer::default();
        for c in data.chunks(4099) {
            pieces.update(c);
        }
        assert_eq!(whole.sum(), pieces.sum());
        assert_eq!(whole.sum().size, data.len() as u64);
        // A prefix's sum, taken on the way, is the sum of the prefix.
        let mut p = Summer::default();
        p.update(&data[..BLOCK + 5]);
        let mid = p.sum();
        p.update(&data[BLOCK + 5..]);
        let mut q = Summer::default();
        q.update(&data[..BLOCK + 5]);
        assert_eq!(mid, q.sum());
        assert_eq!(p.sum(), whole.sum());
        // One byte changed, anywhere: another sum.
        let mut d2 = data.clone();
        d2[2 * BLOCK + 3] ^= 1;
        let mut other = Summer::default();
        other.update(&d2);
        assert_ne!(other.sum(), whole.sum());
    }

    #[test]
    fn a_sparse_file_sums_like_its_bytes() {
        let dir = std::env::temp_dir().join(format!("hindsight-sum-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("sparse");
        let f = std::fs::File::create(&p).unwrap();
        // 5 blocks and a bit, data only in the second block and at the very end.
        let len = 5 * BLOCK as u64 + 100;
        f.set_len(len).unwrap();
        use std::os::unix::fs::FileExt as _;
        f.write_all_at(b"middle", BLOCK as u64 + 10).unwrap();
        f.write_all_at(b"end", len - 3).unwrap();
        let mut bytes = vec![0u8; len as usize];
        bytes[BLOCK + 10..BLOCK + 16].copy_from_slice(b"middle");
        bytes[len as usize - 3..].copy_from_slice(b"end");
        let mut s = Summer::default();
        s.update(&bytes);
        assert_eq!(sum_file(&p, None).unwrap(), s.sum());
        let mut s = Summer::default();
        s.update(&bytes[..2 * BLOCK + 1]);
        assert_eq!(sum_file(&p, Some(2 * BLOCK as u64 + 1)).unwrap(), s.sum());
        assert!(sum_file(&p, Some(len + 1)).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
