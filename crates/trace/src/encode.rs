//! The binary encoding of records: little-endian varints (LEB128; signed values zigzag),
//! length-prefixed byte strings, one tag byte per enum variant. Decoding never trusts a
//! length: every read is checked against the bytes that are there.

use crate::checksum::Sum;
use crate::event::*;
use crate::manifest::{Ending, Listed, Manifest, Part};

/// Appends encoded values to a buffer.
#[derive(Default)]
pub struct Enc(pub Vec<u8>);

impl Enc {
    /// An unsigned varint.
    pub fn u64(&mut self, mut v: u64) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                self.0.push(b);
                return;
            }
            self.0.push(b | 0x80);
        }
    }
    /// A signed varint (zigzag).
    pub fn i64(&mut self, v: i64) {
        self.u64(((v << 1) ^ (v >> 63)) as u64);
    }
    /// A byte string.
    pub fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
    }
    fn list(&mut self, l: &[Vec<u8>]) {
        self.u64(l.len() as u64);
        for b in l {
            self.bytes(b);
        }
    }
    fn writes(&mut self, w: &[MemWrite]) {
        self.u64(w.len() as u64);
        for m in w {
            self.u64(m.addr);
            self.bytes(&m.data);
        }
    }
    fn mapped(&mut self, m: &Option<MappedFile>) {
        match m {
            None => self.u64(0),
            Some(m) => {
                self.u64(2);
                self.u64(u64::from(m.file));
                self.u64(m.offset);
                self.u64(u64::from(m.identity));
            }
        }
    }
    fn point(&mut self, p: &AsyncPoint) {
        for r in p.regs {
            self.u64(r);
        }
        self.u64(p.stack_digest);
        self.bytes(&p.stack);
        self.u64(p.cpu_ns);
        // 0: uncounted, else ticks + 1.
        self.u64(p.ticks.map_or(0, |t| t.saturating_add(1)));
    }
    fn status(&mut self, s: &ExitStatus) {
        match s {
            ExitStatus::Exited(c) => {
                self.u64(0);
                self.i64(i64::from(*c));
            }
            ExitStatus::Killed(c) => {
                self.u64(1);
                self.i64(i64::from(*c));
            }
        }
    }

    /// An event.
    pub fn event(&mut self, e: &Event) {
        match e {
            Event::Syscall {
                tid,
                nr,
                args,
                result,
                writes,
                mapped,
            } => {
                self.u64(0);
                self.i64(i64::from(*tid));
                self.u64(*nr);
                args.iter().for_each(|a| self.u64(*a));
                self.i64(*result);
                self.writes(writes);
                self.mapped(mapped);
            }
            Event::SyscallEntry { tid, nr, args } => {
                self.u64(1);
                self.i64(i64::from(*tid));
                self.u64(*nr);
                args.iter().for_each(|a| self.u64(*a));
            }
            Event::SyscallExit {
                tid,
                nr,
                result,
                writes,
                mapped,
            } => {
                self.u64(2);
                self.i64(i64::from(*tid));
                self.u64(*nr);
                self.i64(*result);
                self.writes(writes);
                self.mapped(mapped);
            }
            Event::Rdtsc { tid, pc, tsc, aux } => {
                self.u64(3);
                self.i64(i64::from(*tid));
                self.u64(*pc);
                self.u64(*tsc);
                match aux {
                    None => self.u64(0),
                    Some(a) => {
                        self.u64(1);
                        self.u64(u64::from(*a));
                    }
                }
            }
            Event::Signal {
                tid,
                signo,
                siginfo,
                point,
            } => {
                self.u64(4);
                self.i64(i64::from(*tid));
                self.i64(i64::from(*signo));
                self.bytes(siginfo);
                match point {
                    SignalPoint::Synchronous => self.u64(0),
                    SignalPoint::AtStop => self.u64(1),
                    SignalPoint::Async(p) => {
                        self.u64(2);
                        self.point(p);
                    }
                }
            }
            Event::Preempt { tid, point } => {
                self.u64(5);
                self.i64(i64::from(*tid));
                self.point(point);
            }
            Event::Exec { tid, path, file } => {
                self.u64(6);
                self.i64(i64::from(*tid));
                self.bytes(path);
                self.u64(u64::from(*file));
            }
            Event::ThreadExit { tid } => {
                self.u64(7);
                self.i64(i64::from(*tid));
            }
            Event::ProcessExit { status } => {
                self.u64(8);
                self.status(status);
            }
            Event::Output { pid, fd, data } => {
                self.u64(9);
                self.i64(i64::from(*pid));
                self.i64(i64::from(*fd));
                self.bytes(data);
            }
            Event::KernelWrite { writes } => {
                self.u64(10);
                self.writes(writes);
            }
            Event::Buffered { tid, calls } => {
                self.u64(11);
                self.i64(i64::from(*tid));
                self.u64(calls.len() as u64);
                for c in calls {
                    self.u64(c.nr);
                    for a in c.args {
                        self.u64(a);
                    }
                    self.i64(c.result);
                    self.writes(&c.writes);
                }
            }
        }
    }

    /// The header (after the magic and version, which are plain bytes).
    pub fn header(&mut self, h: &Header) {
        self.bytes(h.hindsight_version.as_bytes());
        self.bytes(&h.program);
        self.u64(u64::from(h.executable));
        self.list(&h.args);
        self.list(&h.env);
        self.bytes(&h.cwd);
        self.u64(h.start_time);
        self.bytes(h.clock.as_bytes());
    }

    /// A record of the processes stream.
    pub fn process_record(&mut self, r: &ProcessRecord) {
        match r {
            ProcessRecord::Started(p) => {
                self.u64(0);
                self.i64(i64::from(p.pid));
                match p.parent {
                    None => self.u64(0),
                    Some(pp) => {
                        self.u64(1);
                        self.i64(i64::from(pp));
                    }
                }
                match p.fork_event {
                    None => self.u64(0),
                    Some(e) => {
                        self.u64(1);
                        self.u64(e);
                    }
                }
                self.bytes(&p.program);
                self.list(&p.args);
            }
            ProcessRecord::Exec { pid, program, args } => {
                self.u64(1);
                self.i64(i64::from(*pid));
                self.bytes(program);
                self.list(args);
            }
            ProcessRecord::Ended { pid, status } => {
                self.u64(2);
                self.i64(i64::from(*pid));
                self.status(status);
            }
        }
    }

    /// The summary.
    pub fn summary(&mut self, s: &Summary) {
        self.status(&s.exit);
        self.u64(s.duration_ns);
        self.u64(s.events);
        self.u64(u64::from(s.threads));
        self.u64(u64::from(s.processes));
    }

    /// The manifest.
    pub fn manifest(&mut self, m: &Manifest) {
        match &m.ending {
            Ending::Recording => self.u64(0),
            Ending::Finished(s) => {
                self.u64(1);
                self.summary(s);
            }
            Ending::Abandoned(reason) => {
                self.u64(2);
                self.bytes(reason.as_bytes());
            }
        }
        self.u64(m.parts.len() as u64);
        for l in &m.parts {
            match &l.part {
                Part::Processes => self.u64(0),
                Part::Events(pid) => {
                    self.u64(1);
                    self.i64(i64::from(*pid));
                }
                Part::Copy(id, name) => {
                    self.u64(2);
                    self.u64(u64::from(*id));
                    self.bytes(name.as_bytes());
                }
                Part::Links => self.u64(3),
            }
            self.u64(l.sum.size);
            self.u64(l.sum.hash);
            self.u64(l.records);
        }
    }
}

/// A record of the processes stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessRecord {
    /// A process was created.
    Started(ProcessInfo),
    /// It executed a new program.
    Exec {
        /// Recorded pid.
        pid: i32,
        /// The program.
        program: Vec<u8>,
        /// Its argv.
        args: Vec<Vec<u8>>,
    },
    /// It ended.
    Ended {
        /// Recorded pid.
        pid: i32,
        /// How.
        status: ExitStatus,
    },
}

/// Why bytes could not be decoded (a position in the decoded buffer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(pub String);

type R<T> = Result<T, DecodeError>;

/// Reads encoded values from a buffer.
pub struct Dec<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Dec<'a> {
    /// Decodes from `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Dec { buf, pos: 0 }
    }
    /// True when every byte was consumed.
    pub fn done(&self) -> bool {
        self.pos >= self.buf.len()
    }
    fn err<T>(&self, what: &str) -> R<T> {
        Err(DecodeError(format!("{what} at byte {}", self.pos)))
    }
    /// An unsigned varint.
    pub fn u64(&mut self) -> R<u64> {
        let mut v = 0u64;
        for shift in (0..70).step_by(7) {
            let Some(&b) = self.buf.get(self.pos) else {
                return self.err("unexpected end");
            };
            self.pos += 1;
            if shift == 63 && b > 1 {
                return self.err("varint too long");
            }
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        self.err("varint too long")
    }
    /// A signed varint.
    pub fn i64(&mut self) -> R<i64> {
        let v = self.u64()?;
        Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
    }
    fn i32(&mut self) -> R<i32> {
        let v = self.i64()?;
        i32::try_from(v).or_else(|_| self.err("value out of range"))
    }
    fn u32(&mut self) -> R<u32> {
        let v = self.u64()?;
        u32::try_from(v).or_else(|_| self.err("value out of range"))
    }
    /// A byte string.
    pub fn bytes(&mut self) -> R<Vec<u8>> {
        let n = self.u64()?;
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        if n > self.buf.len() - self.pos {
            return self.err("length past the end");
        }
        let b = self.buf[self.pos..self.pos + n].to_vec();
        self.pos += n;
        Ok(b)
    }
    fn string(&mut self) -> R<String> {
        let b = self.bytes()?;
        String::from_utf8(b).or_else(|_| self.err("invalid text"))
    }
    fn count(&mut self) -> R<usize> {
        let n = self.u64()?;
        // Every element takes at least one byte: a count beyond the rest is corrupt.
        if n > (self.buf.len() - self.pos) as u64 {
            return self.err("count past the end");
        }
        Ok(n as usize)
    }
    fn list(&mut self) -> R<Vec<Vec<u8>>> {
        let n = self.count()?;
        (0..n).map(|_| self.bytes()).collect()
    }
    fn writes(&mut self) -> R<Vec<MemWrite>> {
        let n = self.count()?;
        (0..n)
            .map(|_| {
                Ok(MemWrite {
                    addr: self.u64()?,
                    data: self.bytes()?,
                })
            })
            .collect()
    }
    fn mapped(&mut self) -> R<Option<MappedFile>> {
        match self.u64()? {
            0 => Ok(None),
            // Written before mappings had an identity: each copy is its own file.
            1 => {
                let file = self.u32()?;
                Ok(Some(MappedFile {
                    file,
                    offset: self.u64()?,
                    identity: file,
                }))
            }
            2 => Ok(Some(MappedFile {
                file: self.u32()?,
                offset: self.u64()?,
                identity: self.u32()?,
            })),
            _ => self.err("bad tag"),
        }
    }
    fn args(&mut self) -> R<[u64; 6]> {
        let mut a = [0u64; 6];
        for x in a.iter_mut() {
            *x = self.u64()?;
        }
        Ok(a)
    }
    fn point(&mut self) -> R<AsyncPoint> {
        let mut regs = [0u64; 27];
        for r in regs.iter_mut() {
            *r = self.u64()?;
        }
        Ok(AsyncPoint {
            regs,
            stack_digest: self.u64()?,
            stack: self.bytes()?,
            cpu_ns: self.u64()?,
            ticks: self.u64()?.checked_sub(1),
        })
    }
    fn status(&mut self) -> R<ExitStatus> {
        match self.u64()? {
            0 => Ok(ExitStatus::Exited(self.i32()?)),
            1 => Ok(ExitStatus::Killed(self.i32()?)),
            _ => self.err("bad tag"),
        }
    }

    /// An event.
    pub fn event(&mut self) -> R<Event> {
        Ok(match self.u64()? {
            0 => Event::Syscall {
                tid: self.i32()?,
                nr: self.u64()?,
                args: self.args()?,
                result: self.i64()?,
                writes: self.writes()?,
                mapped: self.mapped()?,
            },
            1 => Event::SyscallEntry {
                tid: self.i32()?,
                nr: self.u64()?,
                args: self.args()?,
            },
            2 => Event::SyscallExit {
                tid: self.i32()?,
                nr: self.u64()?,
                result: self.i64()?,
                writes: self.writes()?,
                mapped: self.mapped()?,
            },
            3 => Event::Rdtsc {
                tid: self.i32()?,
                pc: self.u64()?,
                tsc: self.u64()?,
                aux: match self.u64()? {
                    0 => None,
                    1 => Some(self.u32()?),
                    _ => return self.err("bad tag"),
                },
            },
            4 => Event::Signal {
                tid: self.i32()?,
                signo: self.i32()?,
                siginfo: self.bytes()?,
                point: match self.u64()? {
                    0 => SignalPoint::Synchronous,
                    1 => SignalPoint::AtStop,
                    2 => SignalPoint::Async(Box::new(self.point()?)),
                    _ => return self.err("bad tag"),
                },
            },
            5 => Event::Preempt {
                tid: self.i32()?,
                point: self.point()?,
            },
            6 => Event::Exec {
                tid: self.i32()?,
                path: self.bytes()?,
                file: self.u32()?,
            },
            7 => Event::ThreadExit { tid: self.i32()? },
            8 => Event::ProcessExit {
                status: self.status()?,
            },
            9 => Event::Output {
                pid: self.i32()?,
                fd: self.i32()?,
                data: self.bytes()?,
            },
            10 => Event::KernelWrite {
                writes: self.writes()?,
            },
            11 => {
                let tid = self.i32()?;
                let n = self.count()?;
                let mut calls = Vec::with_capacity(n.min(4096));
                for _ in 0..n {
                    calls.push(BufferedCall {
                        nr: self.u64()?,
                        args: self.args()?,
                        result: self.i64()?,
                        writes: self.writes()?,
                    });
                }
                Event::Buffered { tid, calls }
            }
            _ => return self.err("unknown event kind"),
        })
    }

    /// The header (its version is given: it was read before).
    pub fn header(&mut self, format_version: u32) -> R<Header> {
        Ok(Header {
            format_version,
            hindsight_version: self.string()?,
            program: self.bytes()?,
            executable: self.u32()?,
            args: self.list()?,
            env: self.list()?,
            cwd: self.bytes()?,
            start_time: self.u64()?,
            clock: self.string()?,
        })
    }

    /// A record of the processes stream.
    pub fn process_record(&mut self) -> R<ProcessRecord> {
        Ok(match self.u64()? {
            0 => ProcessRecord::Started(ProcessInfo {
                pid: self.i32()?,
                parent: match self.u64()? {
                    0 => None,
                    1 => Some(self.i32()?),
                    _ => return self.err("bad tag"),
                },
                fork_event: match self.u64()? {
                    0 => None,
                    1 => Some(self.u64()?),
                    _ => return self.err("bad tag"),
                },
                program: self.bytes()?,
                args: self.list()?,
            }),
            1 => ProcessRecord::Exec {
                pid: self.i32()?,
                program: self.bytes()?,
                args: self.list()?,
            },
            2 => ProcessRecord::Ended {
                pid: self.i32()?,
                status: self.status()?,
            },
            _ => return self.err("unknown record kind"),
        })
    }

    /// The summary.
    pub fn summary(&mut self) -> R<Summary> {
        Ok(Summary {
            exit: self.status()?,
            duration_ns: self.u64()?,
            events: self.u64()?,
            threads: self.u32()?,
            processes: self.u32()?,
        })
    }

    /// The manifest.
    pub fn manifest(&mut self) -> R<Manifest> {
        let ending = match self.u64()? {
            0 => Ending::Recording,
            1 => Ending::Finished(self.summary()?),
            2 => Ending::Abandoned(self.string()?),
            _ => return self.err("unknown ending"),
        };
        let n = self.u64()?;
        let mut parts = Vec::new();
        for _ in 0..n {
            let part = match self.u64()? {
                0 => Part::Processes,
                1 => Part::Events(self.i32()?),
                2 => {
                    let id = self.u32()?;
                    let name = self.string()?;
                    // A name is one component: never a way out of the trace directory.
                    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
                        return self.err("bad file name");
                    }
                    Part::Copy(id, name)
                }
                3 => Part::Links,
                _ => return self.err("unknown part"),
            };
            parts.push(Listed {
                part,
                sum: Sum {
                    size: self.u64()?,
                    hash: self.u64()?,
                },
                records: self.u64()?,
            });
        }
        Ok(Manifest { ending, parts })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_at_the_edges() {
        let us = [
            0,
            1,
            127,
            128,
            255,
            16_383,
            16_384,
            u64::from(u32::MAX),
            u64::MAX - 1,
            u64::MAX,
        ];
        let is = [0, 1, -1, 63, -64, 64, -65, i64::MAX, i64::MIN, i64::MIN + 1];
        let mut e = Enc::default();
        us.iter().for_each(|v| e.u64(*v));
        is.iter().for_each(|v| e.i64(*v));
        let mut d = Dec::new(&e.0);
        for v in us {
            assert_eq!(d.u64().unwrap(), v);
        }
        for v in is {
            assert_eq!(d.i64().unwrap(), v);
        }
        assert!(d.done());
    }

    #[test]
    fn overlong_varints_and_lengths_are_errors() {
        // 11 continuation bytes.
        assert!(Dec::new(&[0xff; 11]).u64().is_err());
        // A 10th byte carrying more than the top bit.
        let mut b = vec![0xff; 9];
        b.push(0x02);
        assert!(Dec::new(&b).u64().is_err());
        // A byte string longer than what is there.
        let mut e = Enc::default();
        e.u64(u64::MAX);
        assert!(Dec::new(&e.0).bytes().is_err());
        let mut e = Enc::default();
        e.u64(5);
        e.0.extend_from_slice(b"abcd");
        assert!(Dec::new(&e.0).bytes().is_err());
        // An i32 out of range.
        let mut e = Enc::default();
        e.u64(7); // ThreadExit
        e.i64(i64::from(i32::MAX) + 1);
        assert!(Dec::new(&e.0).event().is_err());
    }

    #[test]
    fn random_bytes_never_panic() {
        let mut seed = 0x0123_4567_89ab_cdefu64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..20_000 {
            let len = (next() % 64) as usize;
            let buf: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let _ = Dec::new(&buf).event();
            let _ = Dec::new(&buf).process_record();
            let _ = Dec::new(&buf).header(1);
            let _ = Dec::new(&buf).summary();
            let _ = Dec::new(&buf).manifest();
        }
    }
}
