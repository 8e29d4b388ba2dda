//! Writing a trace.
//!
//! Invariants:
//! - The directory is created here, never an existing one (nothing is ever overwritten); if
//!   the trace cannot be started, the directory is removed again. It and everything in it are
//!   readable by their owner only (0700/0600): a trace holds the program's environment and
//!   everything it read.
//! - The `header` file (the header, then the [`Manifest`]) is replaced whole, by a rename,
//!   whenever the manifest changes; its ending says whether the recording ended and how. A
//!   recording cut off at any moment (the recorder killed) has a manifest whose ending is
//!   [`Ending::Recording`], listing what had been written by then.
//! - Buffered events reach the disk at least once a second: a thread of the writer writes them
//!   out every [`FLUSH_EVERY`] even when the recorder is busy or waiting, then lists them.
//! - Every byte of a stream belongs to a whole frame, or to the last, cut-off one (a write
//!   that fails half-way is cut back to the last whole frame).
//! - The copies of files are written under hidden names and renamed when whole, then listed:
//!   what bears their name is never partial. They are links to the store of copies shared
//!   between traces when it holds the same contents, else copied sparse (holes stay holes) and
//!   put into the store ([`crate::copies`]).

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::checksum::Summer;
use crate::copies::{self, Store};
use crate::encode::{Enc, ProcessRecord};
use crate::error::TraceError;
use crate::event::*;
use crate::links::{Channel, ChannelKind, Link, Transfer};
use crate::manifest::{Ending, Listed, Manifest, Part};
use crate::{frame, FORMAT_VERSION, MAGIC};

/// Events are written out when this many bytes are buffered.
const FLUSH_AT: usize = 256 << 10;

/// The writer's thread writes buffered events out this often.
pub const FLUSH_EVERY: Duration = Duration::from_millis(500);

/// Creates a file readable and writable by its owner only (`exec`: and executable by them).
pub(crate) fn create_private(path: &Path, exec: bool) -> Result<File, TraceError> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(if exec { 0o700 } else { 0o600 })
        .open(path)
        .map_err(|e| TraceError::io(path, "creating", e))
}

/// Creates a directory accessible by its owner only.
pub(crate) fn create_private_dir(path: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new().mode(0o700).create(path)
}

/// A file that grows by whole frames: an event stream or the process journal.
struct Stream {
    path: PathBuf,
    file: File,
    /// Records not yet written, and their count.
    buf: Enc,
    buffered: u32,
    /// Records appended, written or not.
    total: u64,
    /// Records written, and the sum of the bytes written.
    written: u64,
    summer: Summer,
}

impl Stream {
    fn create(path: PathBuf) -> Result<Stream, TraceError> {
        let file = create_private(&path, false)?;
        Ok(Stream {
            path,
            file,
            buf: Enc::default(),
            buffered: 0,
            total: 0,
            written: 0,
            summer: Summer::default(),
        })
    }

    /// Writes the buffered records out as one frame (or chain).
    fn flush(&mut self) -> Result<(), TraceError> {
        if self.buffered == 0 {
            return Ok(());
        }
        let f = frame::encode(&self.buf.0, self.buffered, self.written);
        if let Err(e) = self.file.write_all(&f) {
            // Nothing of a frame that is not whole stays behind.
            let _ = self.file.set_len(self.summer.sum().size);
            return Err(TraceError::io(&self.path, "writing", e));
        }
        self.summer.update(&f);
        self.written += u64::from(self.buffered);
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

    fn listed(&self, part: Part) -> Listed {
        Listed {
            part,
            sum: self.summer.sum(),
            records: self.written,
        }
    }
}

/// What the writer and its flushing thread share.
struct Inner {
    dir: PathBuf,
    /// The header's frame, as written first in the `header` file.
    header_frame: Vec<u8>,
    streams: BTreeMap<i32, Stream>,
    processes: Stream,
    /// The `links` file, and the run of events of one process not written to it yet.
    links: Stream,
    run: Option<(i32, u64)>,
    /// Channels named so far, by kind and name.
    channels: HashMap<(ChannelKind, String), u32>,
    copies: Vec<Listed>,
    files: HashMap<(u64, u64, u64, i64, i64), FileId>,
    next_file: FileId,
    /// What the manifest on disk lists is out of date.
    dirty: bool,
    /// A failure of the flushing thread, reported by the writer's next call.
    failed: Option<TraceError>,
}

impl Inner {
    fn flush(&mut self) -> Result<(), TraceError> {
        for s in self.streams.values_mut() {
            if s.buffered > 0 {
                s.flush()?;
                self.dirty = true;
            }
        }
        if self.processes.buffered > 0 {
            self.processes.flush()?;
            self.dirty = true;
        }
        // The run so far goes out with its events (the next turn of the same process
        // continues it).
        self.end_run()?;
        if self.links.buffered > 0 {
            self.links.flush()?;
            self.dirty = true;
        }
        Ok(())
    }

    /// Writes the current run of events, if any, as a turn.
    fn end_run(&mut self) -> Result<(), TraceError> {
        if let Some((pid, events)) = self.run.take().filter(|r| r.1 > 0) {
            Link::Turn { pid, events }.encode(&mut self.links.buf);
            self.links.pushed()?;
        }
        Ok(())
    }

    fn link(&mut self, l: &Link) -> Result<(), TraceError> {
        l.encode(&mut self.links.buf);
        self.links.pushed()
    }

    fn manifest(&self, ending: Ending) -> Manifest {
        let mut parts = vec![
            self.processes.listed(Part::Processes),
            self.links.listed(Part::Links),
        ];
        parts.extend(
            self.streams
                .iter()
                .map(|(pid, s)| s.listed(Part::Events(*pid))),
        );
        parts.extend(self.copies.iter().cloned());
        Manifest { ending, parts }
    }

    /// Replaces the `header` file with one listing what is written now.
    fn write_manifest(&mut self, ending: Ending) -> Result<(), TraceError> {
        let mut enc = Enc::default();
        enc.manifest(&self.manifest(ending));
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        bytes.extend_from_slice(&self.header_frame);
        bytes.extend_from_slice(&frame::encode(&enc.0, 1, 1));
        let partial = self.dir.join(".header.partial");
        let p = self.dir.join("header");
        let _ = std::fs::remove_file(&partial);
        let write = || -> std::io::Result<()> {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&partial)?
                .write_all(&bytes)
        };
        if let Err(e) = write() {
            let _ = std::fs::remove_file(&partial);
            return Err(TraceError::io(&partial, "writing", e));
        }
        std::fs::rename(&partial, &p).map_err(|e| TraceError::io(&p, "replacing", e))?;
        self.dirty = false;
        Ok(())
    }

    fn stream(&mut self, pid: i32) -> Result<&mut Stream, TraceError> {
        match self.streams.entry(pid) {
            std::collections::btree_map::Entry::Occupied(o) => Ok(o.into_mut()),
            std::collections::btree_map::Entry::Vacant(v) => {
                self.dirty = true;
                Ok(v.insert(Stream::create(
                    self.dir.join("events").join(pid.to_string()),
                )?))
            }
        }
    }

    fn check(&mut self) -> Result<(), TraceError> {
        match self.failed.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// The thread that writes buffered events out while the recorder works.
struct Flusher {
    stop: mpsc::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

impl Flusher {
    fn start(inner: Arc<Mutex<Inner>>) -> Result<Flusher, TraceError> {
        let (stop, stopped) = mpsc::channel::<()>();
        // The recorder's signals (its timer, SIGCHLD, SIGTERM…) must reach the recorder's own
        // thread, which waits for them: this one is started with every signal blocked.
        let thread = with_signals_blocked(|| {
            std::thread::Builder::new()
                .name("trace-flush".into())
                .spawn(move || loop {
                    match stopped.recv_timeout(FLUSH_EVERY) {
                        Err(RecvTimeoutError::Timeout) => {}
                        Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
                    }
                    let mut g = lock(&inner);
                    if g.failed.is_some() {
                        continue;
                    }
                    let r = g.flush().and_then(|()| {
                        if g.dirty {
                            g.write_manifest(Ending::Recording)
                        } else {
                            Ok(())
                        }
                    });
                    if let Err(e) = r {
                        g.failed = Some(e);
                    }
                })
        })
        .map_err(|e| TraceError::io("", "starting the trace's writer thread", e))?;
        Ok(Flusher { stop, thread })
    }

    fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.thread.join();
    }
}

/// Runs `f` with every signal blocked in this thread (threads it starts inherit the mask).
fn with_signals_blocked<T>(f: impl FnOnce() -> T) -> T {
    // SAFETY: sigset_t is plain data, filled by sigfillset; pthread_sigmask only changes this
    // thread's mask, restored below.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        let r = f();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        r
    }
}

fn lock(m: &Mutex<Inner>) -> MutexGuard<'_, Inner> {
    // A panic while holding the lock leaves the state as consistent as any failure does.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A trace being recorded.
pub struct TraceWriter {
    dir: PathBuf,
    inner: Arc<Mutex<Inner>>,
    flusher: Option<Flusher>,
    /// Where copies are shared with other traces, if anywhere.
    store: Option<Store>,
}

impl TraceWriter {
    /// Creates the trace directory `dir` (which must not exist), copies `exe` in as file 0 and
    /// writes the header, listing it. Copies are the trace's own (see
    /// [`TraceWriter::create_sharing`]).
    pub fn create(dir: &Path, header: Header, exe: &Path) -> Result<TraceWriter, TraceError> {
        Self::create_sharing(dir, header, exe, None)
    }

    /// [`TraceWriter::create`], sharing the copies of mapped files with other traces through
    /// the store in directory `store` (see [`crate::copies`]; made if missing, its unused
    /// entries removed first). A store that cannot be used leaves the trace its own copies.
    pub fn create_sharing(
        dir: &Path,
        header: Header,
        exe: &Path,
        store: Option<&Path>,
    ) -> Result<TraceWriter, TraceError> {
        match create_private_dir(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(TraceError::Exists(dir.to_path_buf()))
            }
            Err(e) => return Err(TraceError::io(dir, "creating the trace directory", e)),
        }
        // The directory is ours: if the trace cannot be started, none of it is left behind.
        let store = store.and_then(Store::open);
        if let Some(s) = &store {
            s.prune();
        }
        Self::start(dir, header, exe, store).inspect_err(|_| {
            let _ = std::fs::remove_dir_all(dir);
        })
    }

    fn start(
        dir: &Path,
        mut header: Header,
        exe: &Path,
        store: Option<Store>,
    ) -> Result<TraceWriter, TraceError> {
        for sub in ["events", "files"] {
            let p = dir.join(sub);
            create_private_dir(&p).map_err(|e| TraceError::io(&p, "creating", e))?;
        }
        header.format_version = FORMAT_VERSION;
        let inner = Inner {
            dir: dir.to_path_buf(),
            header_frame: Vec::new(),
            streams: BTreeMap::new(),
            processes: Stream::create(dir.join("processes"))?,
            links: Stream::create(dir.join("links"))?,
            run: None,
            channels: HashMap::new(),
            copies: Vec::new(),
            files: HashMap::new(),
            next_file: 0,
            dirty: true,
            failed: None,
        };
        let mut w = TraceWriter {
            dir: dir.to_path_buf(),
            inner: Arc::new(Mutex::new(inner)),
            flusher: None,
            store,
        };
        header.executable = w.add_file_unlisted(exe)?;
        let mut enc = Enc::default();
        enc.header(&header);
        {
            let mut g = lock(&w.inner);
            g.header_frame = frame::encode(&enc.0, 1, 0);
            g.write_manifest(Ending::Recording)?;
        }
        w.flusher = Some(Flusher::start(w.inner.clone())?);
        Ok(w)
    }

    /// The trace directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Copies a file into the trace and lists it; the same file (device, inode, size, mtime)
    /// is copied once and keeps its id. The copy is a link to the store's entry with the same
    /// contents if there is one; else it is made under a hidden name and renamed when whole
    /// (a copy cut off by a crash never passes for the file), then put into the store.
    pub fn add_file(&mut self, path: &Path) -> Result<FileId, TraceError> {
        let id = self.add_file_unlisted(path)?;
        let mut g = lock(&self.inner);
        if g.dirty {
            g.write_manifest(Ending::Recording)?;
        }
        Ok(id)
    }

    fn add_file_unlisted(&mut self, path: &Path) -> Result<FileId, TraceError> {
        let m = std::fs::metadata(path).map_err(|e| TraceError::io(path, "reading", e))?;
        let key = (m.dev(), m.ino(), m.size(), m.mtime(), m.mtime_nsec());
        let (id, dest, partial, name) = {
            let mut g = lock(&self.inner);
            g.check()?;
            if let Some(id) = g.files.get(&key) {
                return Ok(*id);
            }
            let id = g.next_file;
            let name = file_name(id, path);
            let dest = g.dir.join("files").join(&name);
            let partial = g.dir.join("files").join(format!(".{name}.partial"));
            (id, dest, partial, name)
        };
        // Copied without the lock: the flushing thread goes on meanwhile.
        let exec = m.mode() & 0o111 != 0;
        let shared = match &self.store {
            // The contents first: a file the store holds costs a read, no write.
            Some(store) => {
                let d = copies::digest_file(path)?;
                store.link(&d, &dest, exec).then_some(d.sum)
            }
            None => None,
        };
        let sum = match shared {
            Some(sum) => sum,
            None => {
                let d = match copies::copy(path, &partial, exec) {
                    Ok(d) => d,
                    Err(e) => {
                        let _ = std::fs::remove_file(&partial);
                        return Err(e);
                    }
                };
                std::fs::rename(&partial, &dest)
                    .map_err(|e| TraceError::io(&dest, "renaming", e))?;
                if let Some(store) = &self.store {
                    store.insert(&d, &dest);
                }
                d.sum
            }
        };
        let mut g = lock(&self.inner);
        g.next_file += 1;
        g.files.insert(key, id);
        g.copies.push(Listed {
            part: Part::Copy(id, name),
            sum,
            records: 0,
        });
        g.dirty = true;
        Ok(id)
    }

    fn journal(&mut self, r: &ProcessRecord) -> Result<(), TraceError> {
        let mut g = lock(&self.inner);
        g.check()?;
        g.processes.buf.process_record(r);
        g.processes.pushed()?;
        g.processes.flush()?;
        g.dirty = true;
        Ok(())
    }

    /// Registers a process (in creation order; the first is the root). Its events file is
    /// created now, so that a registered process always has one.
    pub fn add_process(&mut self, info: ProcessInfo) -> Result<(), TraceError> {
        lock(&self.inner).stream(info.pid)?;
        self.journal(&ProcessRecord::Started(info))
    }

    /// Records that process `pid` executed a new program.
    pub fn note_exec(
        &mut self,
        pid: i32,
        program: &[u8],
        args: Vec<Vec<u8>>,
    ) -> Result<(), TraceError> {
        self.journal(&ProcessRecord::Exec {
            pid,
            program: program.to_vec(),
            args,
        })
    }

    /// Records how process `pid` ended.
    pub fn note_process_end(&mut self, pid: i32, status: ExitStatus) -> Result<(), TraceError> {
        self.journal(&ProcessRecord::Ended { pid, status })
    }

    /// Appends an event to process `pid`'s stream; returns its index there.
    pub fn append(&mut self, pid: i32, event: &Event) -> Result<u64, TraceError> {
        let mut g = lock(&self.inner);
        g.check()?;
        let s = g.stream(pid)?;
        s.buf.event(event);
        let index = s.total;
        s.pushed()?;
        match g.run.as_mut() {
            Some((p, n)) if *p == pid => *n += 1,
            _ => {
                g.end_run()?;
                g.run = Some((pid, 1));
            }
        }
        Ok(index)
    }

    /// The id of the channel of `kind` named `name`, listed in the `links` file the first
    /// time it is asked for.
    pub fn channel(&mut self, kind: ChannelKind, name: &str) -> Result<u32, TraceError> {
        let mut g = lock(&self.inner);
        g.check()?;
        if let Some(id) = g.channels.get(&(kind, name.to_string())) {
            return Ok(*id);
        }
        let id = g.channels.len() as u32;
        g.channels.insert((kind, name.to_string()), id);
        g.link(&Link::Channel(Channel {
            id,
            kind,
            name: name.to_string(),
        }))?;
        Ok(id)
    }

    /// Gives the channel of `kind` named `old` the name `new` from now on (and in the
    /// `links` file: a channel record with its id). Nothing happens if `old` was never
    /// listed or `new` already names a channel.
    pub fn rename_channel(
        &mut self,
        kind: ChannelKind,
        old: &str,
        new: &str,
    ) -> Result<(), TraceError> {
        let mut g = lock(&self.inner);
        g.check()?;
        if g.channels.contains_key(&(kind, new.to_string())) {
            return Ok(());
        }
        let Some(id) = g.channels.remove(&(kind, old.to_string())) else {
            return Ok(());
        };
        g.channels.insert((kind, new.to_string()), id);
        g.link(&Link::Channel(Channel {
            id,
            kind,
            name: new.to_string(),
        }))
    }

    /// Writes down a send or a receive (see [`crate::links`]). Its event is written before
    /// or after, as the recorder sees fit: the transfer names it by index.
    pub fn transfer(&mut self, t: Transfer) -> Result<(), TraceError> {
        let mut g = lock(&self.inner);
        g.check()?;
        g.link(&Link::Transfer(t))
    }

    /// Lists a batch of buffered calls that transfers name (before the first of them).
    pub fn batch(&mut self, b: crate::links::Batch) -> Result<(), TraceError> {
        let mut g = lock(&self.inner);
        g.check()?;
        g.link(&Link::Batch(b))
    }

    /// Number of events appended to `pid`'s stream so far.
    pub fn event_count(&self, pid: i32) -> u64 {
        lock(&self.inner)
            .streams
            .get(&pid)
            .map(|s| s.total)
            .unwrap_or(0)
    }

    /// Writes every buffered event out and lists it.
    pub fn flush(&mut self) -> Result<(), TraceError> {
        let mut g = lock(&self.inner);
        g.check()?;
        g.flush()?;
        g.write_manifest(Ending::Recording)
    }

    /// Ends the recording: the thread stopped, everything written, and the manifest's ending
    /// set (the one rename that makes the trace complete or abandoned).
    fn end(&mut self, ending: Ending) -> Result<PathBuf, TraceError> {
        if let Some(f) = self.flusher.take() {
            f.stop();
        }
        let mut g = lock(&self.inner);
        let failed = g.check();
        let flushed = g.flush();
        g.write_manifest(ending)?;
        failed?;
        flushed?;
        Ok(self.dir.clone())
    }

    /// Ends a normal recording with its summary.
    pub fn finish(mut self, summary: &Summary) -> Result<PathBuf, TraceError> {
        self.end(Ending::Finished(summary.clone()))
    }

    /// Ends a recording cut short: everything written, and `reason` (made one line) kept.
    pub fn abandon(mut self, reason: &str) -> Result<PathBuf, TraceError> {
        let line = reason.replace(['\n', '\r'], " ").trim().to_string();
        self.end(Ending::Abandoned(line))
    }
}

impl Drop for TraceWriter {
    /// A writer dropped without `finish` or `abandon` (the recorder failed or panicked):
    /// writes out what it can and says so.
    fn drop(&mut self) {
        if self.flusher.is_some() {
            let _ = self.end(Ending::Abandoned(
                "the recorder stopped without ending the recording".into(),
            ));
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
