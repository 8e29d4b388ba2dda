//! Reading a trace. Nothing read from disk is trusted: lengths are bounded by the frame, a
//! frame's checksum is verified before its contents are decoded, and every failure is an
//! error naming the file and the byte offset.

use std::collections::VecDeque;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use crate::encode::{Dec, ProcessRecord};
use crate::error::TraceError;
use crate::event::*;
use crate::frame::{self, FrameError, Read};
use crate::{FORMAT_VERSION, MAGIC};

/// A trace opened for reading.
#[derive(Debug, Clone)]
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

/// A frame's records and their count.
type Frame = (Vec<u8>, u32);

/// Every whole frame of a small file (header, processes, summary): (records, count) each; and
/// whether the file ended inside one.
fn frames(path: &Path, data: &[u8]) -> Result<(Vec<Frame>, bool), TraceError> {
    let mut out = Vec::new();
    let mut rest = data;
    let mut off = 0u64;
    loop {
        match frame::read_from(&mut rest, off) {
            Ok(Read::Frame(raw, count, len)) => {
                out.push((raw, count));
                off += len;
            }
            Ok(Read::End) => return Ok((out, false)),
            Ok(Read::Truncated) => return Ok((out, true)),
            Err(e) => return Err(frame_error(path, "", e)),
        }
    }
}

/// The error for a bad frame of file `path`; `whose` says what the file holds ("events of
/// process 12 are "), or is empty.
fn frame_error(path: &Path, whose: &str, e: FrameError) -> TraceError {
    match e {
        FrameError::Io(e) => TraceError::io(path, "reading", e),
        FrameError::Corrupt { at, what } => {
            corrupt(path, format!("{whose}corrupted at byte {at} ({what})"))
        }
    }
}

fn read_file(path: &Path) -> Result<Vec<u8>, TraceError> {
    std::fs::read(path).map_err(|e| TraceError::io(path, "reading", e))
}

/// Reads only the header of the trace in `dir` (checking its magic and version first).
pub fn read_header(dir: &Path) -> Result<Header, TraceError> {
    let hp = dir.join("header");
    if !dir.is_dir() {
        return Err(TraceError::NotFound(format!(
            "{}: no such trace",
            dir.display()
        )));
    }
    let data = match std::fs::read(&hp) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(corrupt(dir, "not a hindsight trace (no header)"))
        }
        Err(e) => return Err(TraceError::io(&hp, "reading", e)),
    };
    if data.is_empty() {
        return Err(corrupt(
            &hp,
            "not a hindsight trace header (the file is empty)",
        ));
    }
    if data.len() < MAGIC.len() + 4 || &data[..MAGIC.len()] != MAGIC {
        return Err(corrupt(
            &hp,
            "not a hindsight trace header (bad magic bytes)",
        ));
    }
    let mut v = [0u8; 4];
    v.copy_from_slice(&data[MAGIC.len()..MAGIC.len() + 4]);
    let version = u32::from_le_bytes(v);
    if version > FORMAT_VERSION {
        return Err(TraceError::TooNew {
            path: dir.to_path_buf(),
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    if version == 0 {
        return Err(corrupt(&hp, "format version 0 does not exist"));
    }
    let (fr, _) = frames(&hp, &data[MAGIC.len() + 4..])?;
    let Some((raw, _)) = fr.first() else {
        return Err(corrupt(&hp, "the header is cut off"));
    };
    Dec::new(raw)
        .header(version)
        .map_err(|e| corrupt(&hp, format!("cannot decode the header: {}", e.0)))
}

impl TraceReader {
    /// Opens the trace in `dir`: checks the header's magic and version (a newer version is
    /// refused by name), reads the header, the processes and the summary.
    pub fn open(dir: &Path) -> Result<TraceReader, TraceError> {
        let header = read_header(dir)?;
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
        let entries =
            std::fs::read_dir(&files).map_err(|e| TraceError::io(&files, "reading", e))?;
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().starts_with(&prefix) {
                return Ok(e.path());
            }
        }
        Err(corrupt(&files, format!("file {id} is missing")))
    }

    /// The events of process `pid`, in order (none if it has no events file).
    pub fn events(&self, pid: i32) -> Result<EventStream, TraceError> {
        let path = self.dir.join("events").join(pid.to_string());
        let file = match File::open(&path) {
            Ok(f) => Some(BufReader::with_capacity(1 << 16, f)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(TraceError::io(&path, "opening", e)),
        };
        Ok(EventStream {
            path,
            pid,
            file,
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

/// The events of one process, read from its file and decoded a frame at a time.
pub struct EventStream {
    path: PathBuf,
    pid: i32,
    /// None once the stream has ended (or when there is no file).
    file: Option<BufReader<File>>,
    /// Offset in the file of the next frame.
    offset: u64,
    queue: VecDeque<Event>,
    truncated: bool,
    position: u64,
}

impl EventStream {
    /// The next event; Ok(None) at the end. A frame cut off at the end of the file ends the
    /// stream quietly and sets [`EventStream::truncated`]; a damaged frame is an error naming
    /// the file and the frame's byte offset (and the stream ends there).
    pub fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        while self.queue.is_empty() && self.file.is_some() {
            self.fill()?;
        }
        let e = self.queue.pop_front();
        if e.is_some() {
            self.position += 1;
        }
        Ok(e)
    }

    /// Decodes the next frame into the queue, or ends the stream.
    fn fill(&mut self) -> Result<(), TraceError> {
        let Some(file) = self.file.as_mut() else {
            return Ok(());
        };
        let at = self.offset;
        let whose = format!("events of process {} are ", self.pid);
        let read = frame::read_from(file, at);
        match read {
            Ok(Read::Frame(raw, count, len)) => {
                let mut d = Dec::new(&raw);
                let mut events = Vec::new();
                for _ in 0..count {
                    match d.event() {
                        Ok(e) => events.push(e),
                        Err(e) => {
                            self.file = None;
                            return Err(corrupt(
                                &self.path,
                                format!(
                                    "{whose}corrupted at byte {at} (undecodable event: {})",
                                    e.0
                                ),
                            ));
                        }
                    }
                }
                if !d.done() {
                    self.file = None;
                    return Err(corrupt(
                        &self.path,
                        format!("{whose}corrupted at byte {at} (bytes left after the frame's {count} events)"),
                    ));
                }
                self.queue.extend(events);
                self.offset += len;
            }
            Ok(Read::End) => self.file = None,
            Ok(Read::Truncated) => {
                self.truncated = true;
                self.file = None;
            }
            Err(e) => {
                self.file = None;
                return Err(frame_error(&self.path, &whose, e));
            }
        }
        Ok(())
    }

    /// An independent copy that continues from the same event (a checkpoint of the replay
    /// keeps one): the file is opened again at the same frame.
    pub fn try_clone(&self) -> Result<EventStream, TraceError> {
        let file = match &self.file {
            None => None,
            Some(_) => {
                let io = |e| TraceError::io(&self.path, "reopening the events file", e);
                let mut f = File::open(&self.path).map_err(io)?;
                std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(self.offset)).map_err(io)?;
                Some(BufReader::with_capacity(1 << 16, f))
            }
        };
        Ok(EventStream {
            path: self.path.clone(),
            pid: self.pid,
            file,
            offset: self.offset,
            queue: self.queue.clone(),
            truncated: self.truncated,
            position: self.position,
        })
    }

    /// True when the stream ended inside a frame (the recording was cut off there).
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// Index of the next event to be returned.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// The events file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}
