//! Memory files behind file mappings in replay.
//!
//! Every shared mapping of one recorded file (its `MappedFile::identity`) is a shared mapping
//! of one memory file (memfd) that hindsight creates and holds: two mappings of a file alias
//! in replay as they did when recorded, and the bytes written into the file behind them
//! (the recording's `KernelWrite`s) reach every mapping. A private mapping that reaches
//! past the end of its copy is mapped from it too. The memory file is as long as the copy;
//! when the recorded file grew under a mapping, the recording wrote the new bytes down, and
//! writing them into the memory file makes it grow as the file did: pages past the file's
//! end fault (SIGBUS) in replay exactly when they did when recorded.
//!
//! Invariants: a memory file holds the copy its identity was last mapped with (the file as it
//! was at that mmap), and the changes made since through its mappings; a mapping of a newer
//! copy loads that copy first (what the file held then, changes through mappings included).
//! Checkpoints (forks of the replayed process) share the memory files with the replay that
//! goes on: a checkpoint keeps a [`Snapshot`] of them and puts it back when restored.

use std::collections::HashMap;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use hindsight_trace::FileId;

use crate::ReplayError;

/// The name of every memory file.
const NAME: &std::ffi::CStr = c"hindsight-replay";
/// How a mapping of a memory file is named in `/proc/PID/maps`.
pub const NAME_IN_MAPS: &str = "/memfd:hindsight-replay";

/// One recorded file's memory file.
#[derive(Debug, Clone)]
struct MemFile {
    file: Arc<File>,
    /// The copy loaded last.
    loaded: FileId,
    /// Its descriptor in the replayed process, if one was opened there.
    tracee_fd: Option<i32>,
}

/// The memory files of a replay, by recorded file identity.
#[derive(Debug, Clone, Default)]
pub struct MemFiles {
    files: HashMap<FileId, MemFile>,
}

/// One memory file as it was: its length and the stretches that held data.
#[derive(Debug)]
struct Saved {
    file: Arc<File>,
    len: u64,
    data: Vec<(u64, Vec<u8>)>,
}

/// What the memory files held at a checkpoint.
#[derive(Debug, Default)]
pub struct Snapshot {
    files: Vec<Saved>,
}

fn io(what: &str, e: std::io::Error) -> ReplayError {
    ReplayError::Unsupported(format!("replay's memory file: {what}: {e}"))
}

/// The `[start, end)` stretches of `f` (of length `len`) that hold data; holes read zeros.
fn data_ranges(f: &File, len: u64) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut pos = 0i64;
    let fd = f.as_raw_fd();
    while (pos as u64) < len {
        // SAFETY: lseek on a descriptor we own.
        let start = unsafe { libc::lseek(fd, pos, libc::SEEK_DATA) };
        if start < 0 {
            break;
        }
        // SAFETY: as above.
        let end = unsafe { libc::lseek(fd, start, libc::SEEK_HOLE) };
        let end = if end < 0 { len as i64 } else { end };
        out.push((start as u64, end as u64));
        pos = end;
    }
    out
}

/// Copies `[from, to)` of `src` into `dst` at the same offsets.
fn copy_range(src: &File, dst: &File, from: u64, to: u64) -> std::io::Result<()> {
    let mut buf = vec![0u8; 1 << 20];
    let mut pos = from;
    while pos < to {
        let n = ((to - pos) as usize).min(buf.len());
        let got = src.read_at(&mut buf[..n], pos)?;
        if got == 0 {
            break;
        }
        dst.write_all_at(&buf[..got], pos)?;
        pos += got as u64;
    }
    Ok(())
}

impl MemFiles {
    /// The memory file of `identity`, holding copy `file` (at `copy`): loaded now unless it
    /// was the last one loaded.
    pub fn prepare(
        &mut self,
        identity: FileId,
        file: FileId,
        copy: &Path,
    ) -> Result<(), ReplayError> {
        let m = match self.files.entry(identity) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                let name = NAME;
                // SAFETY: memfd_create with a valid name; the descriptor is owned at once.
                let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
                if fd < 0 {
                    return Err(io("creating", std::io::Error::last_os_error()));
                }
                // SAFETY: a fresh descriptor nothing else owns.
                let f = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
                e.insert(MemFile {
                    file: Arc::new(f),
                    loaded: FileId::MAX,
                    tracee_fd: None,
                })
            }
        };
        if m.loaded != file {
            let src = File::open(copy).map_err(|e| io(&copy.display().to_string(), e))?;
            let len = src
                .metadata()
                .map_err(|e| io(&copy.display().to_string(), e))?
                .len();
            // Emptied first: what the previous copy held goes.
            m.file.set_len(0).map_err(|e| io("truncating", e))?;
            m.file.set_len(len).map_err(|e| io("sizing", e))?;
            for (from, to) in data_ranges(&src, len) {
                copy_range(&src, &m.file, from, to).map_err(|e| io("loading", e))?;
            }
            m.loaded = file;
        }
        Ok(())
    }

    /// Whether `identity` has a memory file.
    pub fn has(&self, identity: FileId) -> bool {
        self.files.contains_key(&identity)
    }

    /// The path through which the replayed process opens `identity`'s memory file.
    pub fn path(&self, identity: FileId) -> Option<PathBuf> {
        let m = self.files.get(&identity)?;
        Some(PathBuf::from(format!(
            "/proc/{}/fd/{}",
            std::process::id(),
            m.file.as_raw_fd()
        )))
    }

    /// `identity`'s memory file's descriptor in process `pid`, if one is open there (checked
    /// in `/proc`: a checkpoint restored or an exec changes what a number means).
    pub fn tracee_fd(&self, pid: i32, identity: FileId) -> Option<i32> {
        let m = self.files.get(&identity)?;
        let fd = m.tracee_fd?;
        let there = std::fs::metadata(format!("/proc/{pid}/fd/{fd}")).ok()?;
        let ours = m.file.metadata().ok()?;
        (there.ino() == ours.ino() && there.dev() == ours.dev()).then_some(fd)
    }

    /// Remembers that `fd` is open on `identity`'s memory file in the replayed process.
    pub fn set_tracee_fd(&mut self, identity: FileId, fd: i32) {
        if let Some(m) = self.files.get_mut(&identity) {
            m.tracee_fd = Some(fd);
        }
    }

    /// Writes `data` at `offset` into `identity`'s memory file.
    pub fn write(&self, identity: FileId, offset: u64, data: &[u8]) -> Result<(), ReplayError> {
        if let Some(m) = self.files.get(&identity) {
            m.file
                .write_all_at(data, offset)
                .map_err(|e| io("writing", e))?;
        }
        Ok(())
    }

    /// The identity whose memory file has inode `ino` (a line of `/proc/PID/maps`).
    pub fn by_inode(&self, ino: u64) -> Option<FileId> {
        self.files.iter().find_map(|(id, m)| {
            let md = m.file.metadata().ok()?;
            (md.ino() == ino).then_some(*id)
        })
    }

    /// What every memory file holds now.
    pub fn snapshot(&self) -> Result<Snapshot, ReplayError> {
        let mut files = Vec::new();
        for m in self.files.values() {
            let len = m.file.metadata().map_err(|e| io("size", e))?.len();
            let mut ranges = Vec::new();
            for (from, to) in data_ranges(&m.file, len) {
                let mut data = vec![0u8; (to - from) as usize];
                m.file
                    .read_exact_at(&mut data, from)
                    .map_err(|e| io("saving", e))?;
                ranges.push((from, data));
            }
            files.push(Saved {
                file: m.file.clone(),
                len,
                data: ranges,
            });
        }
        Ok(Snapshot { files })
    }
}

impl Snapshot {
    /// Puts the memory files back as they were when the snapshot was taken.
    pub fn restore(&self) -> Result<(), ReplayError> {
        for s in &self.files {
            s.file.set_len(0).map_err(|e| io("truncating", e))?;
            s.file.set_len(s.len).map_err(|e| io("sizing", e))?;
            for (from, data) in &s.data {
                s.file
                    .write_all_at(data, *from)
                    .map_err(|e| io("restoring", e))?;
            }
        }
        Ok(())
    }
}
