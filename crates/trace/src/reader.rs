//! Reading a trace. Nothing read from disk is trusted: lengths are bounded by the frame, a
//! frame's checksum is verified before its contents are decoded, every file is checked
//! against the manifest (its size when the trace is opened, its checksum before it is used or
//! as it is read), and every failure is an error naming the file and the byte offset.
//!
//! Invariants:
//! - What a reader returns is what the recorder wrote, or a prefix of it followed by an error
//!   (or, for a recording that was cut off, by the end): never other events, never an event
//!   stream that ends quietly where the recording did not.
//! - A stream shorter than listed (cut off after the recording) replays up to its last whole
//!   frame, and reading on from there is an error naming the file.

use std::collections::{HashSet, VecDeque};
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::checksum::{self, Sum, Summer};
use crate::encode::{Dec, ProcessRecord};
use crate::error::TraceError;
use crate::event::*;
use crate::frame::{self, FrameError, Read};
use crate::links::{Link, Links};
use crate::manifest::{Ending, Listed, Manifest, Part};
use crate::{FORMAT_VERSION, MAGIC, OLDEST_FORMAT_VERSION};

/// A trace opened for reading.
#[derive(Debug, Clone)]
pub struct TraceReader {
    dir: PathBuf,
    header: Header,
    manifest: Manifest,
    processes: Vec<ProcessInfo>,
    ends: Vec<(i32, ExitStatus)>,
    /// File copies whose checksum was verified.
    verified: Arc<Mutex<HashSet<FileId>>>,
}

fn corrupt(path: &Path, what: impl Into<String>) -> TraceError {
    TraceError::Corrupt {
        path: path.to_path_buf(),
        what: what.into(),
    }
}

/// A frame's records and their count.
type Frame = (Vec<u8>, u32);

/// Every whole frame of a small file (header, processes): (records, count) each; and whether
/// the file ended inside one.
fn frames(path: &Path, data: &[u8]) -> Result<(Vec<Frame>, bool), TraceError> {
    let mut out = Vec::new();
    let mut rest = data;
    let mut off = 0u64;
    let mut first = 0u64;
    loop {
        match frame::read_from(&mut rest, off, first) {
            Ok(Read::Frame(raw, count, len)) => {
                first += u64::from(count);
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

/// Reads the header and the manifest of the trace in `dir` (checking magic and version first).
fn read_head(dir: &Path) -> Result<(Header, Manifest), TraceError> {
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
    if version < OLDEST_FORMAT_VERSION {
        return Err(TraceError::TooOld {
            path: dir.to_path_buf(),
            found: version,
            supported: OLDEST_FORMAT_VERSION,
        });
    }
    let (fr, cut) = frames(&hp, &data[MAGIC.len() + 4..])?;
    let (Some((raw, _)), Some((man, _))) = (fr.first(), fr.get(1)) else {
        return Err(corrupt(&hp, "the header is cut off"));
    };
    if cut || fr.len() > 2 {
        return Err(corrupt(&hp, "bytes after the end of the header"));
    }
    let header = Dec::new(raw)
        .header(version)
        .map_err(|e| corrupt(&hp, format!("cannot decode the header: {}", e.0)))?;
    let manifest = Dec::new(man)
        .manifest()
        .map_err(|e| corrupt(&hp, format!("cannot decode the list of files: {}", e.0)))?;
    Ok((header, manifest))
}

/// Reads only the header of the trace in `dir` (checking its magic and version first).
pub fn read_header(dir: &Path) -> Result<Header, TraceError> {
    read_head(dir).map(|(h, _)| h)
}

/// The size of the file at `path`, or an error saying it is missing.
fn size_of(path: &Path) -> Result<u64, TraceError> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(m.len()),
        Ok(_) => Err(corrupt(path, "not a regular file")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(corrupt(path, "missing from the trace"))
        }
        Err(e) => Err(TraceError::io(path, "reading", e)),
    }
}

impl TraceReader {
    /// Opens the trace in `dir`: checks the header's magic and version (another version is
    /// refused by name), reads the header and the manifest, checks that every listed file is
    /// there with its size, and reads the process journal and the links (checked against
    /// their checksums).
    /// A relative `dir` is made absolute: replay opens the trace's files from processes
    /// that run in the recorded program's working directory.
    pub fn open(dir: &Path) -> Result<TraceReader, TraceError> {
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let (header, manifest) = read_head(&dir)?;
        let finished = manifest.is_final();
        for l in &manifest.parts {
            let p = dir.join(l.part.path());
            let size = size_of(&p)?;
            let listed = l.sum.size;
            match l.part {
                // A copy never changes once listed.
                Part::Copy(..) if size != listed => {
                    return Err(corrupt(
                        &p,
                        format!("{size} bytes where the trace lists {listed}: damaged"),
                    ))
                }
                // Bytes after the end of a finished recording: nothing of the recorder's.
                _ if finished && size > listed => {
                    return Err(corrupt(
                        &p,
                        format!(
                            "{} bytes more than the trace lists ({listed}): damaged",
                            size - listed
                        ),
                    ))
                }
                _ => {}
            }
        }
        let pp = dir.join("processes");
        let listed = manifest
            .find(&Part::Processes)
            .ok_or_else(|| corrupt(&dir.join("header"), "the list of files lacks the processes"))?;
        let pdata = std::fs::read(&pp).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => corrupt(&pp, "missing from the trace"),
            _ => TraceError::io(&pp, "reading", e),
        })?;
        check_prefix(&pp, &pdata, listed)?;
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
        // The links are checked like the processes journal: a replay of one process does not
        // read them, but damage to them is never passed over in silence.
        if let Some(listed) = manifest.find(&Part::Links) {
            let lp = dir.join(Part::Links.path());
            let data = std::fs::read(&lp).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => corrupt(&lp, "missing from the trace"),
                _ => TraceError::io(&lp, "reading", e),
            })?;
            check_prefix(&lp, &data, listed)?;
        }
        for p in &processes {
            let ev = dir.join(Part::Events(p.pid).path());
            if finished && manifest.find(&Part::Events(p.pid)).is_none() {
                return Err(corrupt(
                    &ev,
                    format!("process {} has no events listed in the trace", p.pid),
                ));
            }
            size_of(&ev)?;
        }
        Ok(TraceReader {
            dir,
            header,
            manifest,
            processes,
            ends,
            verified: Arc::new(Mutex::new(HashSet::new())),
        })
    }

    /// The trace directory (absolute).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The manifest: every file of the trace, and how the recording ended.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
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
        match &self.manifest.ending {
            Ending::Finished(s) => Some(s),
            _ => None,
        }
    }

    /// Some(reason) when the recording did not end normally.
    pub fn incomplete(&self) -> Option<&str> {
        match &self.manifest.ending {
            Ending::Finished(_) => None,
            Ending::Abandoned(r) => Some(r),
            Ending::Recording => Some("the recorder was stopped before it could end the recording"),
        }
    }

    /// Where the copy of file `id` is. Its checksum is verified the first time it is asked
    /// for: a damaged copy is an error naming it, never a file that replay maps.
    pub fn file_path(&self, id: FileId) -> Result<PathBuf, TraceError> {
        let listed = self
            .manifest
            .parts
            .iter()
            .find(|l| matches!(l.part, Part::Copy(i, _) if i == id))
            .ok_or_else(|| {
                corrupt(
                    &self.dir.join("header"),
                    format!("file {id} is not listed in the trace"),
                )
            })?;
        let path = self.dir.join(listed.part.path());
        let mut verified = self.verified.lock().unwrap_or_else(|p| p.into_inner());
        if !verified.contains(&id) {
            verify_file(&path, listed.sum)?;
            verified.insert(id);
        }
        Ok(path)
    }

    /// The events of process `pid`, in order.
    pub fn events(&self, pid: i32) -> Result<EventStream, TraceError> {
        let path = self.dir.join(Part::Events(pid).path());
        let listed = self.manifest.find(&Part::Events(pid)).cloned();
        if listed.is_none() && !self.processes.iter().any(|p| p.pid == pid) {
            return Err(TraceError::NotFound(format!(
                "no process {pid} in trace {}",
                self.dir.display()
            )));
        }
        let file = match File::open(&path) {
            Ok(f) => Some(Summing {
                inner: BufReader::with_capacity(1 << 16, f),
                summer: Summer::default(),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(corrupt(&path, "missing from the trace"))
            }
            Err(e) => return Err(TraceError::io(&path, "opening", e)),
        };
        Ok(EventStream {
            path,
            pid,
            file,
            listed,
            finished: self.manifest.is_final(),
            offset: 0,
            records: 0,
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

    /// What the trace's files take, by kind (apparent sizes; see [`Sizes`]).
    pub fn sizes(&self) -> Sizes {
        use std::os::unix::fs::MetadataExt as _;
        let mut out = Sizes {
            total: self.size(),
            ..Sizes::default()
        };
        for l in &self.manifest.parts {
            if let Part::Copy(..) = l.part {
                let Ok(m) = std::fs::symlink_metadata(self.dir.join(l.part.path())) else {
                    continue;
                };
                out.copies += m.len();
                // The store's link, this trace's, and another trace's at least.
                if m.nlink() > 2 {
                    out.shared += m.len();
                }
            }
        }
        out
    }

    /// Verifies the checksum of every listed file (of an event stream, of what the manifest
    /// lists of it), before a replay uses any. A stream shorter than listed is not an error
    /// here (see [`TraceReader::cut_streams`]): it reads up to its last whole frame, then
    /// fails naming itself. Returns the number of bytes verified.
    pub fn verify(&self) -> Result<u64, TraceError> {
        let mut bytes = 0;
        for l in &self.manifest.parts {
            let p = self.dir.join(l.part.path());
            match l.part {
                Part::Copy(id, _) => {
                    verify_file(&p, l.sum)?;
                    self.verified
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(id);
                }
                // Checked when the trace was opened.
                Part::Processes => {}
                Part::Events(_) | Part::Links => {
                    if size_of(&p)? < l.sum.size {
                        continue;
                    }
                    match checksum::sum_file(&p, Some(l.sum.size)) {
                        Ok(s) if s == l.sum => {}
                        Ok(_) => return Err(corrupt(&p, "checksum mismatch: damaged")),
                        Err(e) => return Err(TraceError::io(&p, "reading", e)),
                    }
                }
            }
            bytes += l.sum.size;
        }
        Ok(bytes)
    }

    /// The event streams shorter than the manifest lists (damaged after the recording):
    /// (pid, bytes there, bytes listed). Their replay ends at their last whole frame.
    pub fn cut_streams(&self) -> Vec<(i32, u64, u64)> {
        self.manifest
            .parts
            .iter()
            .filter_map(|l| match l.part {
                Part::Events(pid) => {
                    let size = size_of(&self.dir.join(l.part.path())).ok()?;
                    (size < l.sum.size).then_some((pid, size, l.sum.size))
                }
                _ => None,
            })
            .collect()
    }

    /// Verifies everything: the checksum of every listed file, and every event of every
    /// process decoded. The first damage found is the error.
    pub fn check(&self) -> Result<Checked, TraceError> {
        let mut out = Checked {
            bytes: self.verify()?,
            files: self.manifest.parts.len() as u64,
            ..Checked::default()
        };
        for p in &self.processes {
            let mut s = self.events(p.pid)?;
            while s.next_event()?.is_some() {}
            out.events += s.position();
            if s.truncated() {
                out.cut_off.push(p.pid);
            }
        }
        self.links()?;
        Ok(out)
    }

    /// The links between processes (see [`crate::links`]): None for a trace recorded before
    /// hindsight wrote them. Read whole: what the manifest lists is checked against its
    /// checksum, and a recording cut off after that reads up to its last whole frame.
    pub fn links(&self) -> Result<Option<Links>, TraceError> {
        let Some(listed) = self.manifest.find(&Part::Links) else {
            return Ok(None);
        };
        let path = self.dir.join(Part::Links.path());
        let data = std::fs::read(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => corrupt(&path, "missing from the trace"),
            _ => TraceError::io(&path, "reading", e),
        })?;
        check_prefix(&path, &data, listed)?;
        let (fr, _) = frames(&path, &data)?;
        let mut links = Links::default();
        for (raw, count) in fr {
            let mut d = Dec::new(&raw);
            for _ in 0..count {
                let l = Link::decode(&mut d)
                    .map_err(|e| corrupt(&path, format!("cannot decode: {}", e.0)))?;
                links.push(l);
            }
            if !d.done() {
                return Err(corrupt(&path, "bytes left after a frame's records"));
            }
        }
        Ok(Some(links))
    }
}

/// What a trace's files take on disk (apparent sizes: a sparse copy counts its holes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sizes {
    /// Every file of the trace directory.
    pub total: u64,
    /// The copies of mapped files.
    pub copies: u64,
    /// Of those, the ones other traces link too (through the store of shared copies:
    /// [`crate::copies`]): they take their space once for all these traces.
    pub shared: u64,
}

/// What [`TraceReader::check`] verified.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Checked {
    /// Files whose checksums were verified.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Events decoded, all processes together.
    pub events: u64,
    /// Processes whose stream ends in a frame cut off by the end of the recording.
    pub cut_off: Vec<i32>,
}

/// Checks that `data`, a growing file's contents, begins with what `listed` says.
fn check_prefix(path: &Path, data: &[u8], listed: &Listed) -> Result<(), TraceError> {
    let n = listed.sum.size;
    if (data.len() as u64) < n {
        return Err(corrupt(
            path,
            format!("cut off: {} bytes where the trace lists {n}", data.len()),
        ));
    }
    let mut s = Summer::default();
    s.update(&data[..n as usize]);
    if s.sum() != listed.sum {
        return Err(corrupt(path, "checksum mismatch: damaged"));
    }
    Ok(())
}

/// Checks a file copy against its listing.
fn verify_file(path: &Path, listed: Sum) -> Result<(), TraceError> {
    match checksum::sum_file(path, None) {
        Ok(s) if s == listed => Ok(()),
        Ok(s) if s.size != listed.size => Err(corrupt(
            path,
            format!(
                "{} bytes where the trace lists {}: damaged",
                s.size, listed.size
            ),
        )),
        Ok(_) => Err(corrupt(path, "checksum mismatch: damaged")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(corrupt(path, "missing from the trace"))
        }
        Err(e) => Err(TraceError::io(path, "reading", e)),
    }
}

/// A reader that sums what is read through it.
struct Summing<R> {
    inner: R,
    summer: Summer,
}

impl<R: std::io::Read> std::io::Read for Summing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.summer.update(&buf[..n]);
        Ok(n)
    }
}

/// The events of one process, read from its file and decoded a frame at a time.
pub struct EventStream {
    path: PathBuf,
    pid: i32,
    /// None once the stream has ended.
    file: Option<Summing<BufReader<File>>>,
    /// What the manifest lists of this stream, and whether the recording ended.
    listed: Option<Listed>,
    finished: bool,
    /// Offset in the file of the next frame.
    offset: u64,
    /// Records decoded from the file so far.
    records: u64,
    queue: VecDeque<Event>,
    truncated: bool,
    position: u64,
}

impl EventStream {
    /// The next event; Ok(None) at the end. A frame cut off at the end of the file, past
    /// what the manifest lists (the recording was cut off there), ends the stream quietly and
    /// sets [`EventStream::truncated`]; anything else that does not check out is an error
    /// naming the file and the byte offset (and the stream ends there).
    pub fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        while self.queue.is_empty() && self.file.is_some() {
            if let Err(e) = self.fill() {
                self.file = None;
                return Err(e);
            }
        }
        let e = self.queue.pop_front();
        if e.is_some() {
            self.position += 1;
        }
        Ok(e)
    }

    fn whose(&self) -> String {
        format!("events of process {} are ", self.pid)
    }

    /// Decodes the next frame into the queue, or ends the stream.
    fn fill(&mut self) -> Result<(), TraceError> {
        let Some(file) = self.file.as_mut() else {
            return Ok(());
        };
        let at = self.offset;
        let read = frame::read_from(file, at, self.records);
        let listed_size = self.listed.as_ref().map_or(0, |l| l.sum.size);
        match read {
            Ok(Read::Frame(raw, count, len)) => {
                let mut d = Dec::new(&raw);
                let mut events = Vec::with_capacity(count.min(1 << 16) as usize);
                for _ in 0..count {
                    match d.event() {
                        Ok(e) => events.push(e),
                        Err(e) => {
                            return Err(corrupt(
                                &self.path,
                                format!(
                                    "{}corrupted at byte {at} (undecodable event: {})",
                                    self.whose(),
                                    e.0
                                ),
                            ))
                        }
                    }
                }
                if !d.done() {
                    return Err(corrupt(
                        &self.path,
                        format!(
                            "{}corrupted at byte {at} (bytes left after the frame's {count} events)",
                            self.whose()
                        ),
                    ));
                }
                self.offset += len;
                self.records += u64::from(count);
                if at < listed_size && self.offset >= listed_size {
                    self.check_listed()?;
                }
                self.queue.extend(events);
            }
            Ok(Read::End) | Ok(Read::Truncated) if self.offset < listed_size => {
                return Err(corrupt(
                    &self.path,
                    format!(
                        "{}cut off at byte {} of the {listed_size} the trace lists: the replay cannot go on from event {}",
                        self.whose(),
                        self.offset,
                        self.records
                    ),
                ));
            }
            Ok(Read::End) => self.file = None,
            Ok(Read::Truncated) => {
                if self.finished {
                    // The recording ended: nothing may be cut off after what it lists.
                    return Err(corrupt(
                        &self.path,
                        format!(
                            "{}corrupted at byte {at} (bytes after the last frame)",
                            self.whose()
                        ),
                    ));
                }
                self.truncated = true;
                self.file = None;
            }
            Err(e) => return Err(frame_error(&self.path, &self.whose(), e)),
        }
        Ok(())
    }

    /// At the end of what the manifest lists: it must end at a frame's end, with the listed
    /// number of records and the listed checksum.
    fn check_listed(&self) -> Result<(), TraceError> {
        let (Some(l), Some(file)) = (&self.listed, &self.file) else {
            return Ok(());
        };
        let bad = |what: String| Err(corrupt(&self.path, format!("{}{what}", self.whose())));
        if self.offset != l.sum.size {
            return bad(format!(
                "not what the trace lists (a frame ends at byte {}, the list at {})",
                self.offset, l.sum.size
            ));
        }
        if self.records != l.records {
            return bad(format!(
                "not what the trace lists ({} events where it lists {})",
                self.records, l.records
            ));
        }
        if file.summer.sum() != l.sum {
            return bad("damaged (checksum mismatch over the whole file)".into());
        }
        Ok(())
    }

    /// An independent copy that continues from the same event (a checkpoint of the replay
    /// keeps one): the file is opened again at the same frame.
    pub fn try_clone(&self) -> Result<EventStream, TraceError> {
        let file = match &self.file {
            None => None,
            Some(s) => {
                let io = |e| TraceError::io(&self.path, "reopening the events file", e);
                let mut f = File::open(&self.path).map_err(io)?;
                std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(self.offset)).map_err(io)?;
                Some(Summing {
                    inner: BufReader::with_capacity(1 << 16, f),
                    summer: s.summer.clone(),
                })
            }
        };
        Ok(EventStream {
            path: self.path.clone(),
            pid: self.pid,
            file,
            listed: self.listed.clone(),
            finished: self.finished,
            offset: self.offset,
            records: self.records,
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
