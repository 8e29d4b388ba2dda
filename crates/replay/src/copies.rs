//! The trace's copies of mapped files, kept open in the replayed process: one descriptor per
//! copy, shared by every mapping of that file, as the program's mappings shared its one open
//! file. The kernel merges adjacent mappings of one open file only: with a descriptor per
//! mapping, two mappings that were one area when recorded stay two, and an `mremap` across
//! them fails in replay where it succeeded.
//!
//! Invariant: a descriptor is used only after checking, in `/proc`, that it is still open on
//! that copy in the process at hand (a checkpoint restored, an exec, a fork into another
//! replayer all change what a number means); otherwise the copy is opened again.

use std::collections::HashMap;
use std::path::Path;

use hindsight_trace::FileId;

/// Descriptors of copies open in the replayed process.
#[derive(Debug, Default, Clone)]
pub struct OpenCopies {
    fds: HashMap<FileId, i32>,
}

impl OpenCopies {
    /// The descriptor of `copy` (file `file`) in process `pid`, if one is open there.
    pub fn fd(&self, pid: i32, file: FileId, copy: &Path) -> Option<i32> {
        let fd = *self.fds.get(&file)?;
        let target = std::fs::read_link(format!("/proc/{pid}/fd/{fd}")).ok()?;
        (target == copy).then_some(fd)
    }

    /// Remembers that `fd` is open on file `file`'s copy.
    pub fn insert(&mut self, file: FileId, fd: i32) {
        self.fds.insert(file, fd);
    }
}
