//! Writing a trace.
//!
//! Invariants:
//! - The directory is created here, never an existing one (nothing is ever overwritten); if
//!   the trace cannot be started, the directory is removed again.
//! - The `incomplete` marker exists from before the header until `finish` has written the
//!   summary, so a recording cut off at any moment never looks complete. A writer dropped
//!   without `finish` or `abandon` writes out its buffers and leaves the trace incomplete.
//! - Every byte of a stream belongs to a whole frame, or to the last, cut-off one.
//! - The header and the copies of files are written under hidden names and renamed when
//!   whole: what bears their name is never partial.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write as _;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::encode::{Enc, ProcessRecord};
use crate::error::TraceError;
use crate::event::*;
use crate::{frame, FORMAT_VERSION, MAGIC};

/// Events are written out when this many bytes are buffered.
const FLUSH_AT: usize = 256 << 10;

struct Stream {
    path: PathBuf,
    file: File,
    buf: Enc,
    buffered: u32,
    total: u64,
}

impl Stream {
    fn create(path: PathBuf) -> Result<Stream, TraceError> {
        let file = File::create_new(&path).map_err(|e| TraceError::io(&path, "creating", e))?;
        Ok(Stream {
            path,
            file,
            buf: Enc::default(),
            buffered: 0,
            total: 0,
        })
    }

    fn flush(&mut self) -> Result<(), TraceError> {
        if self.buffered == 0 {
            return Ok(());
        }
        let f = frame::encode(&self.buf.0, self.buffered);
        self.file
            .write_all(&f)
            .map_err(|e| TraceError::io(&self.path, "writing", e))?;
        self.buf.0.clear();
        self.buffered = 0;
        Ok(())
    }

    fn pushed(&mut self) -> Result<(), TraceError> {
        self.buffered += 1;
        self.total += 1;
        if self.buf.0.len() >= FLUSH_AT {
            self.flush()?;
        }
        Ok(())
    }
}

/// A trace being recorded.
pub struct TraceWriter {
    dir: PathBuf,
    streams: HashMap<i32, Stream>,
    processes: Stream,
    files: HashMap<(u64, u64, u64, i64, i64), FileId>,
    next_file: FileId,
    /// Set once `finish` or `abandon` ran: dropping the writer then does nothing.
    ended: bool,
}

impl TraceWriter {
    /// Creates the trace directory `dir` (which must not exist), writes the header with `exe`
    /// copied in as file 0, and marks the trace incomplete.
    pub fn create(dir: &Path, header: Header, exe: &Path) -> Result<TraceWriter, TraceError> {
        match std::fs::create_dir(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(TraceError::Exists(dir.to_path_buf()))
            }
            Err(e) => return Err(TraceError::io(dir, "creating the trace directory", e)),
        }
        // The directory is ours: if the trace cannot be started, none of it is left behind.
        Self::start(dir, header, exe).inspect_err(|_| {
            let _ = std::fs::remove_dir_all(dir);
        })
    }

    /// Fills the new directory `dir`: the marker first, then the streams, the executable's
    /// copy, and the header last (written under another name and renamed, so that a header
    /// is always whole).
    fn start(dir: &Path, mut header: Header, exe: &Path) -> Result<TraceWriter, TraceError> {
        let marker = dir.join("incomplete");
        std::fs::write(&marker, b"").map_err(|e| TraceError::io(&marker, "writing", e))?;
        for sub in ["events", "files"] {
            let p = dir.join(sub);
            std::fs::create_dir(&p).map_err(|e| TraceError::io(&p, "creating", e))?;
        }
        let mut w = TraceWriter {
            dir: dir.to_path_buf(),
            streams: HashMap::new(),
            processes: Stream::create(dir.join("processes"))?,
            files: HashMap::new(),
            next_file: 0,
            ended: false,
        };
        header.executable = w.add_file(exe)?;
        header.format_version = FORMAT_VERSION;
        let mut enc = Enc::default();
        enc.header(&header);
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        bytes.extend_from_slice(&frame::encode(&enc.0, 1));
        let partial = dir.join(".header.partial");
        let p = dir.join("header");
        std::fs::write(&partial, bytes).map_err(|e| TraceError::io(&partial, "writing", e))?;
        std::fs::rename(&partial, &p).map_err(|e| TraceError::io(&p, "renaming", e))?;
        Ok(w)
    }

    /// The trace directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Copies a file into the trace; the same file (device, inode, size, mtime) is copied once
    /// and keeps its id. The copy is made under a hidden name and renamed when whole, so a
    /// copy cut off by a crash never passes for the file.
    pub fn add_file(&mut self, path: &Path) -> Result<FileId, TraceError> {
        let m = std::fs::metadata(path).map_err(|e| TraceError::io(path, "reading", e))?;
        let key = (m.dev(), m.ino(), m.size(), m.mtime(), m.mtime_nsec());
        if let Some(id) = self.files.get(&key) {
            return Ok(*id);
        }
        let id = self.next_file;
        let name = file_name(id, path);
        let dest = self.dir.join("files").join(&name);
        let partial = self.dir.join("files").join(format!(".{name}.partial"));
        if let Err(e) = std::fs::copy(path, &partial) {
            let _ = std::fs::remove_file(&partial);
            return Err(TraceError::io(path, "copying into the trace", e));
        }
        std::fs::rename(&partial, &dest).map_err(|e| TraceError::io(&dest, "renaming", e))?;
        self.next_file += 1;
        self.files.insert(key, id);
        Ok(id)
    }

    /// Registers a process (in creation order; the first is the root).
    pub fn add_process(&mut self, info: ProcessInfo) -> Result<(), TraceError> {
        self.processes
            .buf
            .process_record(&ProcessRecord::Started(info));
        self.processes.pushed()?;
        self.processes.flush()
    }

    /// Records that process `pid` executed a new program.
    pub fn note_exec(
        &mut self,
        pid: i32,
        program: &[u8],
        args: Vec<Vec<u8>>,
    ) -> Result<(), TraceError> {
        self.processes.buf.process_record(&ProcessRecord::Exec {
            pid,
            program: program.to_vec(),
            args,
        });
        self.processes.pushed()?;
        self.processes.flush()
    }

    /// Records how process `pid` ended.
    pub fn note_process_end(&mut self, pid: i32, status: ExitStatus) -> Result<(), TraceError> {
        self.processes
            .buf
            .process_record(&ProcessRecord::Ended { pid, status });
        self.processes.pushed()?;
        self.processes.flush()
    }

    /// Appends an event to process `pid`'s stream; returns its index there.
    pub fn append(&mut self, pid: i32, event: &Event) -> Result<u64, TraceError> {
        let s = match self.streams.entry(pid) {
            std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => v.insert(Stream::create(
                self.dir.join("events").join(pid.to_string()),
            )?),
        };
        s.buf.event(event);
        let index = s.total;
        s.pushed()?;
        Ok(index)
    }

    /// Number of events appended to `pid`'s stream so far.
    pub fn event_count(&self, pid: i32) -> u64 {
        self.streams.get(&pid).map(|s| s.total).unwrap_or(0)
    }

    /// Writes every buffered event out.
    pub fn flush(&mut self) -> Result<(), TraceError> {
        for s in self.streams.values_mut() {
            s.flush()?;
        }
        self.processes.flush()
    }

    /// Ends a normal recording: everything written, the summary, then the marker removed.
    pub fn finish(mut self, summary: &Summary) -> Result<PathBuf, TraceError> {
        self.ended = true;
        self.flush()?;
        let mut enc = Enc::default();
        enc.summary(summary);
        let p = self.dir.join("summary");
        std::fs::write(&p, frame::encode(&enc.0, 1))
            .map_err(|e| TraceError::io(&p, "writing", e))?;
        let m = self.dir.join("incomplete");
        std::fs::remove_file(&m).map_err(|e| TraceError::io(&m, "removing", e))?;
        Ok(std::mem::take(&mut self.dir))
    }

    /// Ends a recording cut short: everything written, left incomplete with `reason`.
    pub fn abandon(mut self, reason: &str) -> Result<PathBuf, TraceError> {
        self.ended = true;
        let flushed = self.flush();
        self.mark(reason)?;
        flushed?;
        Ok(std::mem::take(&mut self.dir))
    }

    /// Stores `reason` (made one line) in the `incomplete` marker.
    fn mark(&self, reason: &str) -> Result<(), TraceError> {
        let m = self.dir.join("incomplete");
        let line = reason.replace(['\n', '\r'], " ");
        std::fs::write(&m, line.trim().as_bytes()).map_err(|e| TraceError::io(&m, "writing", e))
    }
}

impl Drop for TraceWriter {
    /// A writer dropped without `finish` or `abandon` (the recorder failed or panicked):
    /// writes out what it can and leaves the trace incomplete.
    fn drop(&mut self) {
        if !self.ended {
            let _ = self.flush();
            let _ = self.mark("the recorder stopped without ending the recording");
        }
    }
}

/// `<id>-<basename>` of a copied file.
pub(crate) fn file_name(id: FileId, path: &Path) -> String {
    let base = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    format!("{id}-{base}")
}
