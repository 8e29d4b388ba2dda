//! Shared mappings: memory that changes behind the program's back.
//!
//! A `MAP_SHARED` mapping can be written by another process (a forked child writing into
//! anonymous shared memory), or by the kernel on another path (`write()` into a file that is
//! also mapped). Replay runs one process alone and answers its syscalls from the trace, so
//! neither happens there. The recorder keeps a copy of each shared mapping and, whenever a
//! thread of the process is about to run user code again, writes down the bytes that
//! changed since (a `KernelWrite` event, applied by replay at the same point).
//!
//! A shared mapping of a file is read from the file itself (its bytes past the file's end
//! count as zeros): replay backs it with a memory file as long as the mapping, so bytes
//! written into the file after it grew under the mapping are written down too, where
//! reading the mapping would fault.
//!
//! Changes are seen at those points only: two processes racing on shared memory without a
//! syscall in between cannot be replayed exactly (a thread reads what was there when it was
//! last resumed). Mappings beyond [`LIMIT`] bytes in total are not followed (copying them at
//! every resume would cost more than it is worth); [`SharedMemory::add`] says so.

use std::os::unix::fs::FileExt;
use std::sync::Arc;

use hindsight_ptrace::ProcessMemory;
use hindsight_trace::MemWrite;

/// The most bytes of shared mappings followed per process.
pub const LIMIT: usize = 8 << 20;

/// Changed bytes closer than this are written down as one stretch.
const GAP: usize = 32;

/// The file under a shared mapping, open for reading.
#[derive(Debug)]
pub struct Backing {
    /// The file (opened anew through the program's descriptor).
    pub file: std::fs::File,
    /// The mapping's offset in it.
    pub offset: u64,
}

impl Backing {
    /// The file's length now.
    fn size(&self) -> u64 {
        self.file.metadata().map(|m| m.len()).unwrap_or(0)
    }

    /// The part of `[0, len)` of the mapping that lies in the file between lengths `from`
    /// and `to` (bytes that came into being when the file grew).
    fn grown(&self, len: u64, from: u64, to: u64) -> Option<(usize, usize)> {
        let start = from.max(self.offset) - self.offset;
        let end = to
            .min(self.offset.saturating_add(len))
            .saturating_sub(self.offset);
        (start < end).then_some((start as usize, end as usize))
    }

    /// The mapping's bytes as the file holds them; zeros past its end.
    fn read(&self, buf: &mut [u8]) -> std::io::Result<()> {
        self.read_from(0, buf)
    }

    /// The mapping's bytes from `start` on, as [`Backing::read`].
    fn read_from(&self, start: u64, buf: &mut [u8]) -> std::io::Result<()> {
        let mut done = 0;
        while done < buf.len() {
            match self
                .file
                .read_at(&mut buf[done..], self.offset + start + done as u64)?
            {
                0 => break,
                n => done += n,
            }
        }
        buf[done..].fill(0);
        Ok(())
    }
}

/// One shared mapping and what it held at the last look.
#[derive(Debug, Clone)]
struct Region {
    addr: u64,
    copy: Vec<u8>,
    backing: Option<Arc<Backing>>,
    /// The file's length at the last look (a file's mapping).
    size: u64,
}

/// A private mapping of a file that reaches past the file's end: its pages there fault
/// until the file grows. Replay maps the file's copy as long as it was, and is told each
/// growth (the new bytes, written into the mapping: the program could not have written
/// there before).
#[derive(Debug, Clone)]
struct Short {
    addr: u64,
    len: u64,
    backing: Arc<Backing>,
    size: u64,
}

impl Region {
    fn read(&self, mem: &ProcessMemory, buf: &mut [u8]) -> bool {
        match &self.backing {
            Some(b) => b.read(buf).is_ok(),
            None => mem.read(self.addr, buf).is_ok(),
        }
    }
}

/// The shared mappings of one process.
#[derive(Debug, Clone, Default)]
pub struct SharedMemory {
    regions: Vec<Region>,
    short: Vec<Short>,
}

impl SharedMemory {
    /// Whether no mapping is followed.
    pub fn is_empty(&self) -> bool {
        self.regions.is_empty() && self.short.is_empty()
    }

    /// Watches the private mapping `[addr, addr + len)` of `backing`'s file for the file's
    /// growth, when it reaches past the file's end (otherwise there is nothing to watch).
    pub fn add_private(&mut self, addr: u64, len: u64, backing: Backing) {
        let size = backing.size();
        if backing.offset.saturating_add(len) > size {
            self.forget(addr, len);
            self.short.push(Short {
                addr,
                len,
                backing: Arc::new(backing),
                size,
            });
        }
    }

    /// Follows the shared mapping `[addr, addr + len)` from its present content on. False
    /// when it is not followed (too big, or unreadable).
    /// `backing`: the file mapped, None for anonymous memory.
    pub fn add(
        &mut self,
        mem: &ProcessMemory,
        addr: u64,
        len: u64,
        backing: Option<Backing>,
    ) -> bool {
        let total: usize = self.regions.iter().map(|r| r.copy.len()).sum();
        let Ok(len) = usize::try_from(len) else {
            return false;
        };
        if total.saturating_add(len) > LIMIT {
            return false;
        }
        let backing = backing.map(Arc::new);
        let size = backing.as_ref().map_or(0, |b| b.size());
        let mut r = Region {
            addr,
            copy: vec![0u8; len],
            backing,
            size,
        };
        let mut copy = vec![0u8; len];
        if !r.read(mem, &mut copy) {
            return false;
        }
        r.copy = copy;
        self.forget(addr, len as u64);
        self.regions.push(r);
        true
    }

    /// Follows a mapping that `mremap` moved or resized from `[old, old + old_len)` to
    /// `[new, new + new_len)`, with the bytes of the last look (changes since then are still
    /// to be written down; a grown part starts as zeros, as replay's private copy of
    /// anonymous memory does — a file's is compared with the file at the next look).
    /// False when the old range was followed but the new one cannot be (too big, or the old
    /// range was only part of a followed mapping).
    pub fn moved(&mut self, old: u64, old_len: u64, new: u64, new_len: u64) -> bool {
        if old_len == 0 {
            // A second mapping of the same shared pages: the first stays where it is.
            return true;
        }
        if let Some(w) = self
            .short
            .iter_mut()
            .find(|w| w.addr == old && w.len == old_len)
        {
            w.addr = new;
            w.len = new_len;
            return true;
        }
        let Some(i) = self.regions.iter().position(|r| r.addr == old) else {
            let followed = self.regions.iter().any(|r| {
                r.addr < old.saturating_add(old_len) && r.addr + r.copy.len() as u64 > old
            });
            self.forget(old, old_len);
            return !followed;
        };
        let mut r = self.regions.remove(i);
        self.forget(old, old_len);
        let total: usize = self.regions.iter().map(|r| r.copy.len()).sum();
        let Ok(len) = usize::try_from(new_len) else {
            return false;
        };
        if r.copy.len() != old_len as usize || total.saturating_add(len) > LIMIT {
            return false;
        }
        r.copy.resize(len, 0);
        r.addr = new;
        self.forget(new, new_len);
        self.regions.push(r);
        true
    }

    /// Stops following whatever overlaps `[addr, addr + len)` (unmapped, remapped).
    pub fn forget(&mut self, addr: u64, len: u64) {
        let end = addr.saturating_add(len);
        self.regions
            .retain(|r| r.addr >= end || r.addr + r.copy.len() as u64 <= addr);
        self.short
            .retain(|w| w.addr >= end || w.addr.saturating_add(w.len) <= addr);
    }

    /// Takes `[addr, addr + len)` to hold zeros at the last look: what replay's private
    /// copy of a shared mapping holds after `madvise(MADV_DONTNEED)`, which leaves the
    /// shared pages as they were — the next look writes their bytes down again.
    pub fn dropped(&mut self, addr: u64, len: u64) {
        let end = addr.saturating_add(len);
        // A file's pages stay as they are (replay maps it shared).
        for r in self.regions.iter_mut().filter(|r| r.backing.is_none()) {
            let r_end = r.addr + r.copy.len() as u64;
            let (from, to) = (addr.max(r.addr), end.min(r_end));
            if from < to {
                r.copy[(from - r.addr) as usize..(to - r.addr) as usize].fill(0);
            }
        }
    }

    /// The bytes that changed since the last look (and takes this look as the new one). A
    /// mapping that cannot be read any more is dropped.
    pub fn changes(&mut self, mem: &ProcessMemory) -> Vec<MemWrite> {
        let mut writes = Vec::new();
        self.regions.retain_mut(|r| {
            let mut now = vec![0u8; r.copy.len()];
            if !r.read(mem, &mut now) {
                return false;
            }
            let mut runs = changed_runs(&r.copy, &now);
            if let Some(b) = &r.backing {
                // Grown: the new bytes are written down even when zero — replay's memory
                // file grows by them, as the file did.
                let size = b.size();
                if let Some(g) = b.grown(now.len() as u64, r.size, size) {
                    runs.retain(|&(s, e)| e <= g.0 || s >= g.1);
                    runs.push(g);
                }
                r.size = size;
            }
            for (start, end) in runs {
                writes.push(MemWrite {
                    addr: r.addr + start as u64,
                    data: now[start..end].to_vec(),
                });
            }
            r.copy = now;
            true
        });
        for w in &mut self.short {
            let size = w.backing.size();
            if let Some((start, end)) = w.backing.grown(w.len, w.size, size) {
                let mut data = vec![0u8; end - start];
                if w.backing.read_from(start as u64, &mut data).is_ok() {
                    writes.push(MemWrite {
                        addr: w.addr + start as u64,
                        data,
                    });
                }
            }
            w.size = size;
        }
        writes
    }
}

/// The `[start, end)` stretches where `a` and `b` differ, stretches less than [`GAP`] apart
/// merged.
fn changed_runs(a: &[u8], b: &[u8]) -> Vec<(usize, usize)> {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    // Word by word first: most of a mapping is usually unchanged.
    let mut i = 0;
    while i < a.len() {
        let chunk = (a.len() - i).min(4096);
        if a[i..i + chunk] != b[i..i + chunk] {
            for k in i..i + chunk {
                if a[k] != b[k] {
                    match runs.last_mut() {
                        Some(last) if k - last.1 < GAP => last.1 = k + 1,
                        _ => runs.push((k, k + 1)),
                    }
                }
            }
        }
        i += chunk;
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_runs_are_merged_when_close() {
        let a = vec![0u8; 10_000];
        let mut b = a.clone();
        b[5] = 1;
        b[20] = 1;
        b[9000] = 2;
        assert_eq!(changed_runs(&a, &b), vec![(5, 21), (9000, 9001)]);
        assert!(changed_runs(&a, &a).is_empty());
    }
}
