//! The on-disk cache of patched modules: what planning and assembling a library's code
//! produced, kept between hindsight runs.
//!
//! Planning and assembling libc takes a quarter of a second of CPU (decoding its 1.9 MB of
//! code, planning 26 000 sites, encoding their trampolines), and every recorded or replayed
//! process pays it for every library it maps, at every exec: most of the recording time of a
//! short program such as `ls`. Without address randomisation a library lands at the same
//! place run after run, so the result for (file, load bias, trampoline base, agent entry) is
//! the same bytes every time; this cache keeps it.
//!
//! Invariants:
//! - An entry is found only by the identity of its file's contents (size and a 128-bit
//!   hash), of the hindsight executable that wrote it (its device, inode, size and
//!   modification time: another build may plan differently) and the placement; the key is
//!   stored in the entry and compared, not only hashed into its name.
//! - An entry that does not read back whole (truncated, damaged: its checksum) is ignored,
//!   and made again. Entries are written to a temporary name and renamed: a reader never
//!   sees half of one.
//! - The cache only saves time: every error of it is ignored, and the counter still checks
//!   that the bytes it patches are the file's.
//!
//! Where: `$HINDSIGHT_CACHE_DIR`, else `$XDG_CACHE_HOME/hindsight`, else
//! `~/.cache/hindsight` (subdirectory `code`); `HINDSIGHT_CACHE_DIR=` (empty) turns it off.

use std::collections::HashMap;
use std::io::Write as _;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use crate::assemble::{AgentStub, Patched, Trap, Write, WriteBytes};
use crate::plan::Uncounted;
use crate::scan::Counted;

/// Bumped when the format of an entry changes.
const MAGIC: &[u8; 8] = b"hsCODE01";

/// Identity of a file's contents: its size and a 128-bit hash of its bytes. Contents, not
/// inode: replay maps the trace's copies of the recorded files, and finds what recording
/// kept for the originals.
pub(crate) type FileId = [u64; 3];

/// The identity of the contents of the file at `path` (read and hashed once per file per
/// process: about a millisecond for libc).
pub(crate) fn file_id(path: &Path) -> std::io::Result<FileId> {
    type Stat = (u64, u64, u64, i64, i64);
    static SEEN: OnceLock<Mutex<HashMap<Stat, FileId>>> = OnceLock::new();
    let m = std::fs::metadata(path)?;
    let stat = (m.dev(), m.ino(), m.size(), m.mtime(), m.mtime_nsec());
    let seen = SEEN.get_or_init(Default::default);
    if let Some(id) = seen.lock().ok().and_then(|s| s.get(&stat).copied()) {
        return Ok(id);
    }
    // Hashed as it is read, through one small buffer: a whole-file buffer of a large
    // program's megabytes costs more in fresh pages than the hashing itself.
    let mut f = std::fs::File::open(path)?;
    let mut h = twox_hash::XxHash3_128::new();
    let mut buf = vec![0u8; 256 << 10];
    let mut len = 0u64;
    loop {
        match std::io::Read::read(&mut f, &mut buf) {
            Ok(0) => break,
            Ok(n) => {
                h.write(&buf[..n]);
                len += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let h = h.finish_128();
    let id = [len, h as u64, (h >> 64) as u64];
    if let Ok(mut s) = seen.lock() {
        s.insert(stat, id);
    }
    Ok(id)
}

/// What patching a module needs before its trampolines are assembled (where they go).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Summary {
    /// `[start, end)` of its executable sections (file addresses).
    pub sections: Vec<(u64, u64)>,
    /// (p_offset, p_vaddr) of its PT_LOAD segments.
    pub loads: Vec<(u64, u64)>,
    /// How many counted sites the plan patches.
    pub sites: u64,
    /// How many `syscall` sites it can send to the agent.
    pub syscalls: u64,
}

fn dir() -> Option<&'static Path> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        // The developers' aids that change the plan make results the cache must not keep.
        if std::env::var_os("HINDSIGHT_TICKS_SITES").is_some()
            || std::env::var_os("HINDSIGHT_TICKS_KIND").is_some()
        {
            return None;
        }
        let base = match std::env::var_os("HINDSIGHT_CACHE_DIR") {
            Some(d) if d.is_empty() => return None,
            Some(d) => PathBuf::from(d),
            None => match std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
                Some(d) => PathBuf::from(d).join("hindsight"),
                None => PathBuf::from(std::env::var_os("HOME").filter(|d| !d.is_empty())?)
                    .join(".cache/hindsight"),
            },
        };
        Some(base.join("code"))
    })
    .as_deref()
}

/// The identity of the running hindsight executable (None: unknown, no caching).
fn exe_id() -> Option<[u64; 5]> {
    static ID: OnceLock<Option<[u64; 5]>> = OnceLock::new();
    *ID.get_or_init(|| {
        let m = std::fs::metadata("/proc/self/exe").ok()?;
        Some([
            m.dev(),
            m.ino(),
            m.size(),
            m.mtime() as u64,
            m.mtime_nsec() as u64,
        ])
    })
}

/// The key words of an entry: its kind, the executable's and the file's identity, and
/// the kind's own words.
fn key(kind: u64, file: &FileId, extra: &[u64]) -> Option<Vec<u64>> {
    let mut k = vec![kind];
    k.extend_from_slice(&exe_id()?);
    k.extend_from_slice(file);
    k.extend_from_slice(extra);
    Some(k)
}

fn entry_path(key: &[u64]) -> Option<PathBuf> {
    let mut h = crc32fast::Hasher::new();
    let mut h2: u64 = 0xcbf2_9ce4_8422_2325;
    for w in key {
        h.update(&w.to_le_bytes());
        for b in w.to_le_bytes() {
            h2 = (h2 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    Some(dir()?.join(format!("{:08x}{h2:016x}", h.finalize())))
}

/// An entry read back: its whole file, and where its payload lies in it.
struct Entry {
    bytes: Vec<u8>,
    payload: std::ops::Range<usize>,
}

impl Entry {
    fn payload(&self) -> &[u8] {
        &self.bytes[self.payload.clone()]
    }
}

fn read_entry(key: &[u64]) -> Option<Entry> {
    let bytes = std::fs::read(entry_path(key)?).ok()?;
    let head = 8 + 8 * (key.len() + 1);
    if bytes.len() < head + 4 || &bytes[..8] != MAGIC {
        return None;
    }
    let (body, sum) = bytes.split_at(bytes.len() - 4);
    if crc32fast::hash(body).to_le_bytes() != sum {
        return None;
    }
    let mut r = Reader { b: &body[8..] };
    if r.u64()? != key.len() as u64 || (0..key.len()).any(|i| r.u64() != Some(key[i])) {
        return None;
    }
    // The payload is used where it lies (no copy: entries are megabytes).
    let payload = head..body.len();
    Some(Entry { bytes, payload })
}

fn write_entry(key: &[u64], payload: &[u8]) {
    let (Some(path), Some(dir)) = (entry_path(key), dir()) else {
        return;
    };
    let mut bytes = Vec::with_capacity(payload.len() + 64);
    bytes.extend_from_slice(MAGIC);
    put(&mut bytes, key.len() as u64);
    for w in key {
        put(&mut bytes, *w);
    }
    bytes.extend_from_slice(payload);
    let sum = crc32fast::hash(&bytes);
    bytes.extend_from_slice(&sum.to_le_bytes());
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".tmp-{}-{n}", std::process::id()));
    let written = std::fs::create_dir_all(dir).is_ok()
        && std::fs::File::create(&tmp)
            .and_then(|mut f| f.write_all(&bytes))
            .is_ok()
        && std::fs::rename(&tmp, &path).is_ok();
    if !written {
        let _ = std::fs::remove_file(&tmp);
    }
}

const SUMMARY: u64 = 1;
const PATCHED: u64 = 2;

/// The cached summary of file `file`.
pub(crate) fn summary(file: &FileId) -> Option<Summary> {
    let entry = read_entry(&key(SUMMARY, file, &[])?)?;
    let mut r = Reader { b: entry.payload() };
    let s = Summary {
        sections: r.pairs()?,
        loads: r.pairs()?,
        sites: r.u64()?,
        syscalls: r.u64()?,
    };
    r.b.is_empty().then_some(s)
}

/// Keeps the summary of file `file`.
pub(crate) fn keep_summary(file: &FileId, s: &Summary) {
    let Some(k) = key(SUMMARY, file, &[]) else {
        return;
    };
    let mut b = Vec::new();
    put_pairs(&mut b, &s.sections);
    put_pairs(&mut b, &s.loads);
    put(&mut b, s.sites);
    put(&mut b, s.syscalls);
    write_entry(&k, &b);
}

fn placement(bias: u64, base: u64, agent: Option<u64>) -> [u64; 4] {
    [bias, base, u64::from(agent.is_some()), agent.unwrap_or(0)]
}

/// The cached patches of file `file` for this placement.
pub(crate) fn patched(file: &FileId, bias: u64, base: u64, agent: Option<u64>) -> Option<Patched> {
    decode_patched(read_entry(&key(
        PATCHED,
        file,
        &placement(bias, base, agent),
    )?)?)
}

/// Keeps the patches of file `file` for this placement.
pub(crate) fn keep_patched(file: &FileId, bias: u64, base: u64, agent: Option<u64>, p: &Patched) {
    if let Some(k) = key(PATCHED, file, &placement(bias, base, agent)) {
        write_entry(&k, &encode_patched(p));
    }
}

fn put(b: &mut Vec<u8>, v: u64) {
    b.extend_from_slice(&v.to_le_bytes());
}

fn put_bytes(b: &mut Vec<u8>, v: &[u8]) {
    put(b, v.len() as u64);
    b.extend_from_slice(v);
}

fn put_pairs(b: &mut Vec<u8>, v: &[(u64, u64)]) {
    put(b, v.len() as u64);
    for (x, y) in v {
        put(b, *x);
        put(b, *y);
    }
}

struct Reader<'a> {
    b: &'a [u8],
}

impl Reader<'_> {
    fn u64(&mut self) -> Option<u64> {
        let (w, rest) = self.b.split_first_chunk::<8>()?;
        self.b = rest;
        Some(u64::from_le_bytes(*w))
    }

    /// A count of items of at least `each` bytes (bounded by what is left: a damaged count
    /// cannot make a huge allocation).
    fn count(&mut self, each: usize) -> Option<usize> {
        let n = usize::try_from(self.u64()?).ok()?;
        (n.checked_mul(each)? <= self.b.len()).then_some(n)
    }

    fn bytes(&mut self) -> Option<&[u8]> {
        let n = self.count(1)?;
        let (v, rest) = self.b.split_at(n);
        self.b = rest;
        Some(v)
    }

    fn pairs(&mut self) -> Option<Vec<(u64, u64)>> {
        let n = self.count(16)?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push((self.u64()?, self.u64()?));
        }
        Some(v)
    }
}

const COUNTED: [Counted; 4] = [
    Counted::BackEdge,
    Counted::Entry,
    Counted::IndirectJump,
    Counted::BackCall,
];

/// The reasons of uncounted sites are static strings of the planner's; read back, each
/// distinct one is leaked once per process (there are a dozen).
fn intern(s: &str) -> &'static str {
    static SEEN: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let Ok(mut seen) = SEEN.lock() else {
        return "unknown";
    };
    if let Some(w) = seen.iter().find(|w| **w == s) {
        return w;
    }
    let w: &'static str = Box::leak(s.to_string().into_boxed_str());
    seen.push(w);
    w
}

fn encode_patched(p: &Patched) -> Vec<u8> {
    let mut b = Vec::with_capacity(p.code.len() + p.writes.len() * 48 + 4096);
    put(&mut b, p.base);
    put_bytes(&mut b, &p.code);
    put(&mut b, p.writes.len() as u64);
    for w in &p.writes {
        put(&mut b, w.addr);
        put_bytes(&mut b, &w.bytes);
        put_bytes(&mut b, &w.original);
    }
    put_pairs(&mut b, &p.boundaries);
    put(&mut b, p.traps.len() as u64);
    for t in &p.traps {
        put(&mut b, t.at);
        put(&mut b, t.resume);
        put(&mut b, t.logical);
        put(&mut b, u64::from(t.set_zf));
    }
    put_pairs(&mut b, &p.moved);
    put_pairs(&mut b, &p.displaced);
    put(&mut b, p.uncounted.len() as u64);
    for u in &p.uncounted {
        put(&mut b, u.at);
        put(
            &mut b,
            COUNTED.iter().position(|c| *c == u.kind).unwrap_or(0) as u64,
        );
        put_bytes(&mut b, u.why.as_bytes());
    }
    put(&mut b, p.agent_stubs.len() as u64);
    for s in &p.agent_stubs {
        for w in [s.entry, s.ret, s.fallback, s.end, s.logical] {
            put(&mut b, w);
        }
    }
    b
}

/// Reads `count` items of at least `each` bytes with `item`, into a vector of that capacity
/// (the counts are bounded by what is left, see [`Reader::count`]).
fn items<'a, T>(
    r: &mut Reader<'a>,
    each: usize,
    mut item: impl FnMut(&mut Reader<'a>) -> Option<T>,
) -> Option<Vec<T>> {
    let n = r.count(each)?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        v.push(item(r)?);
    }
    Some(v)
}

/// The patches held in `entry`; the trampolines' bytes stay in the entry's buffer (moved to
/// its front), the rest is decoded without an allocation per item: this runs at every exec
/// of every recorded or replayed process, for every module.
fn decode_patched(entry: Entry) -> Option<Patched> {
    let payload = entry.payload();
    let mut r = Reader { b: payload };
    let base = r.u64()?;
    let code_len = r.count(1)?;
    let code_start = entry.payload.start + (payload.len() - r.b.len());
    r.b = &r.b[code_len..];
    let writes = items(&mut r, 24, |r| {
        Some(Write {
            addr: r.u64()?,
            bytes: WriteBytes::from_slice(r.bytes()?),
            original: WriteBytes::from_slice(r.bytes()?),
        })
    })?;
    let boundaries = r.pairs()?;
    let traps = items(&mut r, 32, |r| {
        Some(Trap {
            at: r.u64()?,
            resume: r.u64()?,
            logical: r.u64()?,
            set_zf: r.u64()? != 0,
        })
    })?;
    let moved = r.pairs()?;
    let displaced = r.pairs()?;
    let uncounted = items(&mut r, 24, |r| {
        let at = r.u64()?;
        let kind = *COUNTED.get(usize::try_from(r.u64()?).ok()?)?;
        let why = intern(std::str::from_utf8(r.bytes()?).ok()?);
        Some(Uncounted { at, kind, why })
    })?;
    let agent_stubs = items(&mut r, 40, |r| {
        Some(AgentStub {
            entry: r.u64()?,
            ret: r.u64()?,
            fallback: r.u64()?,
            end: r.u64()?,
            logical: r.u64()?,
        })
    })?;
    if !r.b.is_empty() {
        return None;
    }
    let mut code = entry.bytes;
    code.truncate(code_start + code_len);
    code.drain(..code_start);
    Some(Patched {
        base,
        code,
        writes,
        boundaries,
        traps,
        moved,
        displaced,
        uncounted,
        agent_stubs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Patched {
        Patched {
            base: 0x7fff_0000_0000,
            code: vec![0x90, 0xcc, 0xc3],
            writes: vec![Write {
                addr: 0x1000,
                bytes: WriteBytes::from_slice(&[0xe9, 1, 2, 3, 4]),
                original: WriteBytes::from_slice(&[0x48, 0x89, 0xe5, 0x90, 0x90]),
            }],
            boundaries: vec![(1, 2), (3, 4)],
            traps: vec![Trap {
                at: 5,
                resume: 6,
                logical: 7,
                set_zf: true,
            }],
            moved: vec![(8, 9)],
            displaced: vec![(10, 12)],
            uncounted: vec![Uncounted {
                at: 13,
                kind: Counted::IndirectJump,
                why: "next to another patch",
            }],
            agent_stubs: vec![AgentStub {
                entry: 14,
                ret: 15,
                fallback: 16,
                end: 17,
                logical: 18,
            }],
        }
    }

    /// Decodes `payload` as it lies in an entry's file: after the magic and key, before the
    /// checksum.
    fn decode(payload: &[u8]) -> Option<Patched> {
        let bytes = [&b"hsCODE01key"[..], payload, &[1, 2, 3, 4]].concat();
        decode_patched(Entry {
            payload: 11..11 + payload.len(),
            bytes,
        })
    }

    #[test]
    fn patches_read_back_as_written() {
        let p = sample();
        let q = decode(&encode_patched(&p)).expect("decodes");
        assert_eq!(q.base, p.base);
        assert_eq!(q.code, p.code);
        assert_eq!(q.writes, p.writes);
        assert_eq!(q.boundaries, p.boundaries);
        assert_eq!(q.traps, p.traps);
        assert_eq!(q.moved, p.moved);
        assert_eq!(q.displaced, p.displaced);
        assert_eq!(q.uncounted, p.uncounted);
        assert_eq!(q.agent_stubs, p.agent_stubs);
    }

    #[test]
    fn a_cut_entry_does_not_decode() {
        let b = encode_patched(&sample());
        for n in 0..b.len() {
            assert!(decode(&b[..n]).is_none(), "cut at {n}");
        }
    }
}
