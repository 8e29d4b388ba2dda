//! Reading a trace. Nothing read from disk is trusted: lengths are bounded by the frame, a
//! frame's checksum is verified before its contents are decoded, and every failure is an
//! error naming the file and the byte offset.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use crate::encode::{Dec, ProcessRecord};
use crate::error::TraceError;
use crate::event::*;
use crate::frame::{self, Read};
use crate::{FORMAT_VERSION, MAGIC};

/// A trace opened for reading.
pub struct TraceReader {
    dir: PathBuf,
    header: Header,
    processes: Vec<ProcessInfo>,
    ends: Vec<(i32, ExitStatus)>,
    summary: Option<Summary>,
    incomplete: Option<String>,
}

fn corrupt(path: &Path, what: impl Into<String>) -> TraceError {
    TraceError::Corrupt {
        path: path.to_path_buf(),
        what: what.into(),
    }
}

/// Every whole frame of a file: (records, count) each; and whether the file ended inside one.
fn frames(path: &Path, data: &[u8]) -> Result<(Vec<(Vec<u8>, u32)>, bool), TraceError> {
    let mut out = Vec::new();
    let mut off = 0;
    loop {
        match frame::decode(&data[off..]) {
            Ok(Read::Frame(raw, count, len)) => {
                out.push((raw, count));
                off += len;
            }
            Ok(Read::End) => return Ok((out, false)),
            Ok(Read::Truncated) => return Ok((out, true)),
            Err(e) => return Err(corrupt(path, format!("corrupted at byte {off} ({})", e.0))),
        }
    }
}

fn read_file(path: &Path) -> Result<Vec<u8>, TraceError> {
    std::fs::read(path).map_err(|e| TraceError::io(path, "reading", e))
}

impl TraceReader {
    /// Opens the trace in `dir`.
    pub fn open(dir: &Path) -> Result<TraceReader, TraceError> {
        let hp = dir.join("header");
        if !dir.is_dir() {
            return Err(TraceError::NotFound(format!("{}: no such trace", dir.display())));
        }
        let data = match std::fs::read(&hp) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(corrupt(dir, "not a hindsight trace (no header)"))
            }
            Err(e) => return Err(TraceError::io(&hp, "reading", e)),
        };
        if data.len() < MAGIC.len() + 4 || &data[..MAGIC.len()] != MAGIC {
            return Err(corrupt(&hp, "not a hindsight trace header"));
        }
        let v = &data[MAGIC.len()..MAGIC.len() + 4];
        let version = u32::from_le_bytes([v[0], v[1], v[2], v[3]]);
        if version > FORMAT_VERSION {
            return Err(TraceError::TooNew {
                path: dir.to_path_buf(),
                found: version,
                supported: FORMAT_VERSION,
            });
        }
        let (fr, _) = frames(&hp, &data[MAGIC.len() + 4..])?;
        let Some((raw, _)) = fr.first() else {
            return Err(corrupt(&hp, "the header is cut off"));
        };
        let header = Dec::new(raw)
            .header(version)
            .map_err(|e| corrupt(&hp, format!("cannot decode the header: {}", e.0)))?;

        let pp = dir.join("processes");
        let pdata = read_file(&pp)?;
        let (fr, _) = frames(&pp, &pdata)?;
        let mut processes: Vec<ProcessInfo> = Vec::new();
        let mut ends = Vec::new();
        for (raw, count) in fr {
            let mut d = Dec::new(&raw);
            for _ in 0..count {
                match d.process_record() {
                    Ok(ProcessRecord::Started(p)) => processes.push(p),
                    Ok(ProcessRecord::Exec { pid, program, args }) => {
                        if let Some(p) = processes.iter_mut().find(|p| p.pid == pid) {
                            p.program = program;
                            p.args = args;
                        }
                    }
                    Ok(ProcessRecord::Ended { pid, status }) => ends.push((pid, status)),
                    Err(e) => return Err(corrupt(&pp, format!("cannot decode: {}", e.0))),
                }
            }
        }
        let sp = dir.join("summary");
        let summary = match std::fs::read(&sp) {
            Ok(d) => {
                let (fr, _) = frames(&sp, &d)?;
                match fr.first() {
                    Some((raw, _)) => Some(
                        Dec::new(raw)
                            .summary()
                            .map_err(|e| corrupt(&sp, format!("cannot decode: {}", e.0)))?,
                    ),
                    None => None,
                }
            }
            Err(_) => None,
        };
        let incomplete = std::fs::read(dir.join("incomplete"))
            .ok()
            .map(|r| String::from_utf8_lossy(&r).trim().to_string())
            .or_else(|| summary.is_none().then(String::new));
        Ok(TraceReader {
            dir: dir.to_path_buf(),
            header,
            processes,
            ends,
            summary,
            incomplete,
        })
    }

    /// The trace directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The processes, root first.
    pub fn processes(&self) -> &[ProcessInfo] {
        &self.processes
    }

    /// How process `pid` ended, if it did within the recording.
    pub fn process_end(&self, pid: i32) -> Option<&ExitStatus> {
        self.ends.iter().find(|(p, _)| *p == pid).map(|(_, s)| s)
    }

    /// The summary of a complete recording.
    pub fn summary(&self) -> Option<&Summary> {
        self.summary.as_ref()
    }

    /// Some(reason) when the recording did not end normally ("" if none was given).
    pub fn incomplete(&self) -> Option<&str> {
        self.incomplete.as_deref()
    }

    /// Where the copy of file `id` is.
    pub fn file_path(&self, id: FileId) -> Result<PathBuf, TraceError> {
        let files = self.dir.join("files");
        let prefix = format!("{id}-");
        let entries = std::fs::read_dir(&files).map_err(|e| TraceError::io(&files, "reading", e))?;
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().starts_with(&prefix) {
                return Ok(e.path());
            }
        }
        Err(corrupt(&files, format!("file {id} is missing")))
    }

    /// The events of process `pid`, in order.
    pub fn events(&self, pid: i32) -> Result<EventStream, TraceError> {
        let path = self.dir.join("events").join(pid.to_string());
        let data = match std::fs::read(&path) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(TraceError::io(&path, "reading", e)),
        };
        Ok(EventStream {
            path,
            pid,
            data,
            offset: 0,
            queue: VecDeque::new(),
            truncated: false,
            position: 0,
        })
    }

    /// Total size on disk, in bytes.
    pub fn size(&self) -> u64 {
        fn walk(p: &Path) -> u64 {
            match std::fs::symlink_metadata(p) {
                Ok(m) if m.is_dir() => std::fs::read_dir(p)
                    .map(|d| d.flatten().map(|e| walk(&e.path())).sum())
                    .unwrap_or(0),
                Ok(m) => m.len(),
                Err(_) => 0,
            }
        }
        walk(&self.dir)
    }
}

/// The events of one process, decoded a frame at a time.
pub struct EventStream {
    path: PathBuf,
    pid: i32,
    data: Vec<u8>,
    offset: usize,
    queue: VecDeque<Event>,
    truncated: bool,
    position: u64,
}

impl EventStream {
    /// The next event; Ok(None) at the end (a frame cut off at the end of the file ends the
    /// stream and sets [`EventStream::truncated`]).
    pub fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        if self.queue.is_empty() {
            self.fill()?;
        }
        let e = self.queue.pop_front();
        if e.is_some() {
            self.position += 1;
        }
        Ok(e)
    }

    fn fill(&mut self) -> Result<(), TraceError> {
        let at = self.offset;
        let err = |what: String| TraceError::Corrupt {
            path: self.path.clone(),
            what: format!("events of process {} are corrupted at byte {at} ({what})", self.pid),
        };
        match frame::decode(&self.data[self.offset..]) {
            Ok(Read::Frame(raw, count, len)) => {
                let mut d = Dec::new(&raw);
                for _ in 0..count {
                    let e = d.event().map_err(|e| err(e.0))?;
                    self.queue.push_back(e);
                }
                self.offset += len;
                Ok(())
            }
            Ok(Read::End) => Ok(()),
            Ok(Read::Truncated) => {
                self.truncated = true;
                self.offset = self.data.len();
                Ok(())
            }
            Err(e) => Err(err(e.0)),
        }
    }

    /// True when the stream ended inside a frame (the recording was cut off).
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// Index of the next event to be returned.
    pub fn position(&self) -> u64 {
        self.position
    }
}
