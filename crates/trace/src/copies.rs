//! Copies of the files a program mapped: how they get into a trace, and how traces share them.
//!
//! A copy is what replay maps (`mmap` of the file in the trace, or loaded into a memory file),
//! so it is kept as plain bytes: compressing it would make every replay decompress the program,
//! libc and the rest before it could map them (and lose the page cache that successive replays
//! share). What makes copies cheap instead is that they rarely change: the same libc is mapped
//! by every recording. A *store* of copies named by their contents (next to the traces,
//! `$HINDSIGHT_DIR/.copies/<xxh3-128 of the contents>-<size>`) holds one copy of each file, and
//! each trace holds a hard link to it: a second recording of a program writes no byte for the
//! files that have not changed. Where the store cannot be linked (another file system, too
//! many links) the trace gets its own copy, cloned (`FICLONE`, copy-on-write on btrfs or xfs)
//! when the file system can, else copied sparse (holes and whole blocks of zeros stay holes).
//!
//! Invariants:
//! - A store entry is always a whole copy: it is made by linking a trace's finished copy.
//! - A store entry holds what its name says: its modification time is set to [`MARK`] when it
//!   is made, and an entry whose size or time differ (written to since, i.e. damaged) is never
//!   linked into a trace; a new copy replaces it. Damage that keeps both is still caught where
//!   every copy's damage is: replay verifies each copy's checksum before mapping it.
//! - An entry that no trace links any more (a link count of 1: the trace was deleted) is
//!   removed when the next recording starts ([`Store::prune`]).
//! - Sharing is an optimisation only: any failure of the store leaves the trace with its own
//!   copy, never without one.
//!
//! The key is xxh3-128 over the xxh3-128 digests of the file's 1 MiB blocks (as
//! [`crate::checksum`] sums them, so a hole is never read): an accidental collision of two
//! different files is out of reach (2^-64 for billions of files); the patched-code cache of
//! the instruction counter names file contents the same way.

use std::fs::File;
use std::io::Read as _;
use std::os::fd::AsRawFd as _;
use std::os::unix::fs::{FileExt as _, MetadataExt as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;
use std::time::SystemTime;

use twox_hash::XxHash3_128;

use crate::checksum::{self, Sum, Summer, BLOCK};
use crate::error::TraceError;

/// The store's directory under the directory of traces.
pub const STORE: &str = ".copies";

/// The modification time of every store entry (see the module's invariants).
pub const MARK: SystemTime = SystemTime::UNIX_EPOCH;

/// What a copy's contents are: its listed sum and its store key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Digest {
    pub sum: Sum,
    pub key: u128,
}

impl Digest {
    /// The store entry's name.
    fn name(&self) -> String {
        format!("{:032x}-{}", self.key, self.sum.size)
    }
}

/// Digests whole blocks (a short last one allowed).
#[derive(Default)]
struct Digester {
    summer: Summer,
    outer: XxHash3_128,
}

fn zero_key() -> u128 {
    static Z: OnceLock<u128> = OnceLock::new();
    *Z.get_or_init(|| XxHash3_128::oneshot(&vec![0u8; BLOCK]))
}

impl Digester {
    fn block(&mut self, data: &[u8]) {
        self.summer.update(data);
        self.outer.write(&XxHash3_128::oneshot(data).to_le_bytes());
    }

    fn zero_block(&mut self) {
        self.summer.zero_block();
        self.outer.write(&zero_key().to_le_bytes());
    }

    fn digest(&self) -> Digest {
        Digest {
            sum: self.summer.sum(),
            key: self.outer.finish_128(),
        }
    }
}

/// Reads `src` (of `size` bytes) block by block, skipping blocks in holes; `each` gets every
/// block read (offset, bytes). A file that shrinks meanwhile ends where it ends. Returns the
/// digest and the length read.
fn scan(
    src: &mut File,
    size: u64,
    mut each: impl FnMut(u64, &[u8]) -> std::io::Result<()>,
) -> std::io::Result<(Digest, u64)> {
    let mut d = Digester::default();
    let mut buf = vec![0u8; BLOCK];
    let mut at = 0u64;
    while at < size {
        let want = (size - at).min(BLOCK as u64) as usize;
        if want == BLOCK && checksum::hole_covers(src, at, want) {
            d.zero_block();
            at += want as u64;
            continue;
        }
        std::io::Seek::seek(src, std::io::SeekFrom::Start(at))?;
        let mut n = 0;
        while n < want {
            match src.read(&mut buf[n..want]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        d.block(&buf[..n]);
        each(at, &buf[..n])?;
        at += n as u64;
        if n < want {
            break;
        }
    }
    Ok((d.digest(), at))
}

/// The digest of the file at `path`, as its copy would have.
pub(crate) fn digest_file(path: &Path) -> Result<Digest, TraceError> {
    let err = |e| TraceError::io(path, "reading", e);
    let mut f = File::open(path).map_err(err)?;
    let size = f.metadata().map_err(err)?.len();
    scan(&mut f, size, |_, _| Ok(()))
        .map(|(d, _)| d)
        .map_err(err)
}

/// Creates `to` (owner-only; `exec`: executable by the owner too) holding what `from` holds:
/// a clone where the file system shares extents, else a copy that leaves holes where `from`
/// has holes or whole blocks of zeros. Returns the copy's digest.
pub(crate) fn copy(from: &Path, to: &Path, exec: bool) -> Result<Digest, TraceError> {
    let read_err = |e| TraceError::io(from, "copying into the trace", e);
    let mut src = File::open(from).map_err(read_err)?;
    let size = src.metadata().map_err(read_err)?.len();
    let dst = crate::writer::create_private(to, exec)?;
    let write_err = |e| TraceError::io(to, "writing", e);
    // SAFETY: FICLONE on two descriptors we own; it changes only the new, empty `dst`.
    let cloned = unsafe { libc::ioctl(dst.as_raw_fd(), libc::FICLONE, src.as_raw_fd()) } == 0;
    let (digest, len) = if cloned {
        // What the clone holds is what is listed: digested from the clone itself.
        let mut c = File::open(to).map_err(write_err)?;
        let len = c.metadata().map_err(write_err)?.len();
        scan(&mut c, len, |_, _| Ok(())).map_err(write_err)?
    } else {
        scan(&mut src, size, |at, data| {
            if data.iter().any(|b| *b != 0) {
                dst.write_all_at(data, at)?;
            }
            Ok(())
        })
        .map_err(|e| TraceError::io(from, "copying into the trace", e))?
    };
    dst.set_len(len).map_err(write_err)?;
    Ok(digest)
}

/// The store of copies shared between traces (see the module's header).
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

impl Store {
    /// The store in directory `dir` (created, readable by its owner only, if missing; its
    /// parent too). None when it cannot be made: traces then get their own copies.
    pub fn open(dir: &Path) -> Option<Store> {
        if !dir.is_dir() {
            if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
                if !parent.is_dir() {
                    std::fs::create_dir_all(parent).ok()?;
                }
            }
            match crate::writer::create_private_dir(dir) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(_) => return None,
            }
        }
        Some(Store {
            dir: dir.to_path_buf(),
        })
    }

    /// The store's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Removes the entries no trace links any more; returns how many.
    pub fn prune(&self) -> usize {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return 0;
        };
        let mut n = 0;
        for e in entries.flatten() {
            let Ok(m) = e.metadata() else { continue };
            // Hidden names are links being made (see `insert`), never pruned here.
            let hidden = e.file_name().to_string_lossy().starts_with('.');
            if m.is_file() && m.nlink() == 1 && !hidden && std::fs::remove_file(e.path()).is_ok() {
                n += 1;
            }
        }
        n
    }

    /// Links the entry holding `d` as `dest` (which must not exist; `exec`: a program, which
    /// replay may execute); false if there is no such entry, it is damaged, it is not
    /// executable where it must be, or it cannot be linked there.
    pub(crate) fn link(&self, d: &Digest, dest: &Path, exec: bool) -> bool {
        let entry = self.dir.join(d.name());
        match std::fs::symlink_metadata(&entry) {
            Ok(m)
                if m.is_file()
                    && m.len() == d.sum.size
                    && m.modified().ok() == Some(MARK)
                    && (!exec || m.mode() & 0o100 != 0) => {}
            _ => return false,
        }
        std::fs::hard_link(&entry, dest).is_ok()
    }

    /// Makes `copy` (a trace's finished copy holding `d`) the store's entry for `d`,
    /// replacing a damaged one. When a sound entry exists (another recording made it since
    /// `link` looked: two first recordings of a program at once), `copy` becomes a link to
    /// it instead, so that both traces share one copy. Failures leave the copy as it is,
    /// unshared.
    pub(crate) fn insert(&self, d: &Digest, copy: &Path) {
        static SERIAL: AtomicU32 = AtomicU32::new(0);
        let Ok(f) = File::options().write(true).open(copy) else {
            return;
        };
        if f.set_modified(MARK).is_err() {
            return;
        }
        drop(f);
        let entry = self.dir.join(d.name());
        // A link, not a rename: it fails where the entry exists, so that of two recordings
        // inserting at once, the second finds the first's entry below.
        match std::fs::hard_link(copy, &entry) {
            Ok(()) => return,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(_) => return,
        }
        let tmp = self.dir.join(format!(
            ".{}-{}-{}",
            d.name(),
            std::process::id(),
            SERIAL.fetch_add(1, Ordering::Relaxed)
        ));
        let exec = std::fs::metadata(copy).is_ok_and(|m| m.mode() & 0o100 != 0);
        let done = if self.link(d, &tmp, exec) {
            // Same bytes (same digest): swapping the inode changes nothing a reader sees.
            std::fs::rename(&tmp, copy)
        } else {
            // Damaged (or not executable where this copy must be): replaced.
            std::fs::hard_link(copy, &tmp).and_then(|()| std::fs::rename(&tmp, &entry))
        };
        if done.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two recordings that both found no entry and made their own copies: the second one to
    /// insert keeps the first's entry and links its trace to it (it used to replace the
    /// entry, leaving the two traces with a copy each).
    #[test]
    fn a_copy_inserted_second_shares_the_entry_made_first() {
        let root = std::env::temp_dir().join(format!("hindsight-copies-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let original = root.join("lib.so");
        std::fs::write(&original, vec![7u8; 3 * BLOCK + 5]).unwrap();
        let store = Store::open(&root.join("store")).unwrap();
        let (a, b) = (root.join("a"), root.join("b"));
        let da = copy(&original, &a, false).unwrap();
        let db = copy(&original, &b, false).unwrap();
        assert_eq!(da, db);
        store.insert(&da, &a);
        store.insert(&db, &b);
        let ino = |p: &Path| std::fs::metadata(p).unwrap().ino();
        let entry = store.dir().join(da.name());
        assert_eq!(ino(&entry), ino(&a));
        assert_eq!(ino(&b), ino(&a));
        assert_eq!(
            std::fs::read(&b).unwrap(),
            std::fs::read(&original).unwrap()
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
