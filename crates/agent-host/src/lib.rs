//! hindsight's side of the in-process agent (crate `hindsight-agent`, DESIGN.md "In-process
//! agent"): the agent's image, which `build.rs` compiles and this crate carries
//! ([`image::IMAGE`]); loading it into a traced process at every exec ([`load`]); and reading
//! and writing its state and syscall buffer while the process is stopped ([`Agent`]).
//!
//! The recorder drains the buffer into [`hindsight_trace::Event::Buffered`] events; the
//! replayer fills it from them. Record and replay load the agent at the same points of the
//! program (its exec, before its first instruction), at the same address, so that the
//! program's memory map is the same in both.
//!
//! The agent's memory is anonymous: the instruction counter (`hindsight-ticks`), which
//! patches every executable *file* mapping, leaves it alone, in recording and replay alike.

pub mod image;

use hindsight_agent::abi::{self, offsets, Frame};
use hindsight_agent::record::Record;
use hindsight_ptrace::inject::inject_syscall;
use hindsight_ptrace::{ProcessMemory, PtraceError, Tid};
use hindsight_trace::{BufferedCall, MemWrite};
use thiserror::Error;

pub use image::Addresses;

/// What can go wrong with the agent.
#[derive(Debug, Error)]
pub enum AgentError {
    /// The image cannot be used (a build problem).
    #[error("hindsight's agent image is unusable: {0}")]
    Image(String),
    /// Its place in the process is taken.
    #[error("cannot map hindsight's agent at {0:#x}: {1}")]
    Map(u64, String),
    /// The program overwrote the agent's memory.
    #[error("the program wrote over hindsight's agent memory ({0}): its recording cannot go on")]
    Corrupt(String),
    /// Reading or writing the process failed.
    #[error(transparent)]
    Ptrace(#[from] PtraceError),
}

/// The word that the trace header's clock carries after the counter's name when the agent
/// was used (its protocol version: a trace replays only with the same one).
pub fn clock_word() -> String {
    format!("agent-{}", abi::VERSION)
}

/// Whether a trace header's `clock` says the agent was used: Ok(true) for this agent's
/// word, Ok(false) for none, Err(the word) for another version's.
pub fn used_in(clock: &str) -> Result<bool, String> {
    match clock.split_whitespace().nth(1) {
        None => Ok(false),
        Some(w) if w == clock_word() => Ok(true),
        Some(w) => Err(w.to_string()),
    }
}

/// Whether `HINDSIGHT_NO_AGENT` asks for recordings without the agent (for hindsight's
/// developers: every syscall traced, as before the agent existed).
pub fn disabled_by_env() -> bool {
    std::env::var_os("HINDSIGHT_NO_AGENT").is_some()
}

/// Whether the agent records or replays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Recording: calls run for real and are logged; writes to the recording's stdout and
    /// stderr stay traced.
    Record {
        /// The outputs (stdout, stderr).
        outputs: [Option<Output>; 2],
    },
    /// Replay: calls are answered from the buffer.
    Replay,
}

/// One of the recording's outputs, as the agent tells it apart from other files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Output {
    /// st_dev of the file.
    pub dev: u64,
    /// st_ino of the file.
    pub ino: u64,
    /// Only descriptors of hindsight's own open file count (`abi::OUTPUT_SAME_OPEN_FILE`:
    /// a character device that is not a terminal, like `/dev/null`), not every descriptor
    /// of the file.
    pub same_open_file: bool,
}

/// The agent loaded in one process (a copy serves a forked child: same addresses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Agent {
    /// Where its parts are.
    pub addrs: Addresses,
}

/// The part of the agent's state that hindsight looks at when the process stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct State {
    /// Bytes of records in the buffer.
    pub used: u64,
    /// Replay: bytes consumed.
    pub consumed: u64,
    /// Where the agent is in a call (`abi::PHASE_*`).
    pub phase: u64,
    /// The stack pointer at the agent's entry (points at the return address into the stub).
    pub saved_sp: u64,
    /// The running thread's desched descriptor (see [`abi::Globals::desched_fd`]).
    pub desched_fd: i64,
    /// A descriptor waiting for the agent to close it (see [`abi::Globals::stale_fd`]).
    pub stale_fd: i64,
    /// The program's registers during a call.
    pub frame: Frame,
    /// The last report's kind and detail.
    pub report: (u64, u64),
    /// Running counts of buffered and traced calls.
    pub buffered: u64,
    /// Calls sent back to be traced.
    pub fell_back: u64,
    /// The program's rcx at the last call sent back to be traced.
    pub fallback_rcx: u64,
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Maps the agent into a process stopped before its first instruction (at its exec), with
/// `tid` a thread stopped where a syscall can be injected, and sets it up for `mode`.
pub fn load(tid: Tid, mem: &ProcessMemory, mode: Mode) -> Result<Agent, AgentError> {
    let img = image::image()?;
    let a = img.addrs;
    let len = a.range.1 - a.range.0;
    let got = inject_syscall(
        tid,
        mem,
        libc::SYS_mmap,
        [
            a.range.0,
            len,
            (libc::PROT_READ | libc::PROT_WRITE) as u64,
            (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | 0x10_0000) as u64, // MAP_FIXED_NOREPLACE
            u64::MAX,
            0,
        ],
    )?;
    if got as u64 != a.range.0 {
        if !(-4095..0).contains(&got) {
            inject_syscall(tid, mem, libc::SYS_munmap, [got as u64, len, 0, 0, 0, 0])?;
        }
        let why = if (-4095..0).contains(&got) {
            std::io::Error::from_raw_os_error(-got as i32).to_string()
        } else {
            "the place is taken".to_string()
        };
        return Err(AgentError::Map(a.range.0, why));
    }
    for s in &img.segments {
        mem.write(a.range.0 + s.offset, &s.bytes)?;
    }
    let mut g = vec![0u8; offsets::HEADER];
    let mut put = |at: usize, v: u64| g[at..at + 8].copy_from_slice(&v.to_le_bytes());
    put(offsets::MAGIC, abi::MAGIC);
    put(offsets::MAGIC + 8, abi::VERSION);
    put(offsets::DESCHED_FD, u64::MAX);
    put(offsets::STALE_FD, u64::MAX);
    match mode {
        Mode::Record { outputs } => {
            put(offsets::MODE, abi::MODE_RECORD);
            for (i, o) in outputs.iter().enumerate() {
                if let Some(o) = o {
                    put(offsets::OUTPUTS + i * 24, o.dev);
                    put(offsets::OUTPUTS + i * 24 + 8, o.ino);
                    let how = match o.same_open_file {
                        true => abi::OUTPUT_SAME_OPEN_FILE,
                        false => abi::OUTPUT_ANY,
                    };
                    put(offsets::OUTPUTS + i * 24 + 16, how);
                }
            }
            put(offsets::RECORDER_PID, u64::from(std::process::id()));
        }
        Mode::Replay => put(offsets::MODE, abi::MODE_REPLAY),
    }
    mem.write(a.globals, &g)?;
    // The code read-only and executable, the read-only data read-only.
    for s in img
        .segments
        .iter()
        .filter(|s| s.prot & libc::PROT_WRITE as u64 == 0)
    {
        let start = (a.range.0 + s.offset) & !0xfff;
        let end = (a.range.0 + s.offset + s.mem_len + 0xfff) & !0xfff;
        let r = inject_syscall(
            tid,
            mem,
            libc::SYS_mprotect,
            [start, end - start, s.prot, 0, 0, 0],
        )?;
        if r != 0 {
            return Err(AgentError::Map(
                start,
                format!("mprotect failed (error {})", -r),
            ));
        }
    }
    Ok(Agent { addrs: a })
}

impl Agent {
    /// The agent's state (one read of its header).
    pub fn state(&self, mem: &ProcessMemory) -> Result<State, AgentError> {
        let mut b = vec![0u8; offsets::HEADER];
        mem.read(self.addrs.globals, &mut b)?;
        if u64_at(&b, offsets::MAGIC) != abi::MAGIC
            || u64_at(&b, offsets::MAGIC + 8) != abi::VERSION
        {
            return Err(AgentError::Corrupt(format!(
                "its header at {:#x}",
                self.addrs.globals
            )));
        }
        let f = |i: usize| u64_at(&b, offsets::FRAME + i * 8);
        let frame = Frame {
            rax: f(0),
            rbx: f(1),
            rcx: f(2),
            rdx: f(3),
            rsi: f(4),
            rdi: f(5),
            rbp: f(6),
            r8: f(7),
            r9: f(8),
            r10: f(9),
            r11: f(10),
            r12: f(11),
            r13: f(12),
            r14: f(13),
            r15: f(14),
            rflags: f(15),
        };
        Ok(State {
            used: u64_at(&b, offsets::USED),
            consumed: u64_at(&b, offsets::CONSUMED),
            phase: u64_at(&b, offsets::PHASE),
            saved_sp: u64_at(&b, offsets::SAVED_SP),
            desched_fd: u64_at(&b, offsets::DESCHED_FD) as i64,
            stale_fd: u64_at(&b, offsets::STALE_FD) as i64,
            frame,
            report: (u64_at(&b, offsets::REPORT), u64_at(&b, offsets::REPORT_A)),
            buffered: u64_at(&b, offsets::BUFFERED),
            fell_back: u64_at(&b, offsets::FELL_BACK),
            fallback_rcx: u64_at(&b, offsets::FALLBACK_RCX),
        })
    }

    /// Takes the `used` bytes of records out of the buffer (recording, the thread outside
    /// the agent or before its call's commit) and empties it.
    pub fn drain(&self, mem: &ProcessMemory, used: u64) -> Result<Vec<BufferedCall>, AgentError> {
        if used == 0 {
            return Ok(Vec::new());
        }
        if used > abi::BUFFER_SIZE as u64 {
            return Err(AgentError::Corrupt(format!(
                "its buffer's length ({used} bytes) at {:#x}",
                self.addrs.globals + offsets::USED as u64
            )));
        }
        let mut buf = vec![0u8; used as usize];
        mem.read(self.addrs.buffer, &mut buf)?;
        mem.write(
            self.addrs.globals + offsets::USED as u64,
            &0u64.to_le_bytes(),
        )?;
        let mut calls = Vec::new();
        let mut at = 0;
        while at < buf.len() {
            let r = Record::parse(&buf[at..]).map_err(|e| {
                AgentError::Corrupt(format!(
                    "a record of its syscall buffer at {:#x} ({e:?})",
                    self.addrs.buffer + at as u64
                ))
            })?;
            calls.push(BufferedCall {
                nr: r.nr,
                args: r.args,
                result: r.result,
                writes: (0..r.writes)
                    .map(|k| {
                        let (addr, data) = r.write(k);
                        MemWrite {
                            addr,
                            data: data.to_vec(),
                        }
                    })
                    .collect(),
            });
            at += r.size();
        }
        Ok(calls)
    }

    /// Tells the agent which thread runs now (recording): its id, its desched descriptor
    /// (-1: none yet) and how many other threads the process has.
    pub fn set_thread(
        &self,
        mem: &ProcessMemory,
        tid: i32,
        desched_fd: i64,
        others: u64,
    ) -> Result<(), AgentError> {
        let g = self.addrs.globals;
        mem.write(g + offsets::DESCHED_FD as u64, &desched_fd.to_le_bytes())?;
        // tid and others are consecutive.
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&i64::from(tid).to_le_bytes());
        b[8..].copy_from_slice(&others.to_le_bytes());
        mem.write(g + offsets::TID as u64, &b)?;
        Ok(())
    }

    /// Switches the agent off for good in this address space: every call goes back to its
    /// stub to be traced, and the agent's state is no longer touched (its entry checks the
    /// mode first). For processes that share the agent's memory and run at the same time.
    pub fn switch_off(&self, mem: &ProcessMemory) -> Result<(), AgentError> {
        mem.write(
            self.addrs.globals + offsets::MODE as u64,
            &abi::MODE_OFF.to_le_bytes(),
        )?;
        Ok(())
    }

    /// Sets the agent's phase (`abi::PHASE_*`): hindsight took a thread out of a call.
    pub fn set_phase(&self, mem: &ProcessMemory, phase: u64) -> Result<(), AgentError> {
        mem.write(
            self.addrs.globals + offsets::PHASE as u64,
            &phase.to_le_bytes(),
        )?;
        Ok(())
    }

    /// Gives the agent a descriptor to close at its next call (a desched descriptor no
    /// thread uses any more).
    pub fn set_stale(&self, mem: &ProcessMemory, fd: i64) -> Result<(), AgentError> {
        mem.write(
            self.addrs.globals + offsets::STALE_FD as u64,
            &fd.to_le_bytes(),
        )?;
        Ok(())
    }

    /// Forgets what the agent knew of descriptors `fds` (closed, or replaced by `dup2`):
    /// it looks at them again on their next write.
    pub fn forget_fds(
        &self,
        mem: &ProcessMemory,
        fds: impl IntoIterator<Item = u64>,
    ) -> Result<(), AgentError> {
        for fd in fds {
            if fd < abi::FD_TABLE as u64 {
                mem.write(
                    self.addrs.globals + offsets::FD_STATE as u64 + fd,
                    &[abi::FD_UNKNOWN],
                )?;
            }
        }
        Ok(())
    }

    /// Tells the agent that the process maps file (st_dev, st_ino) shared: writes to it stay
    /// traced (what they change in the mapping is seen at their stop).
    pub fn add_shared_file(
        &self,
        mem: &ProcessMemory,
        dev: u64,
        ino: u64,
    ) -> Result<(), AgentError> {
        let g = self.addrs.globals;
        let count = mem.read_u64(g + offsets::SHARED_COUNT as u64)? as usize;
        let mut b = vec![0u8; abi::MAX_SHARED_FILES * 16];
        mem.read(g + offsets::SHARED_FILES as u64, &mut b)?;
        let known = (0..count.min(abi::MAX_SHARED_FILES))
            .any(|i| u64_at(&b, i * 16) == dev && u64_at(&b, i * 16 + 8) == ino);
        if known {
            return Ok(());
        }
        if count < abi::MAX_SHARED_FILES {
            let mut e = [0u8; 16];
            e[..8].copy_from_slice(&dev.to_le_bytes());
            e[8..].copy_from_slice(&ino.to_le_bytes());
            mem.write(g + (offsets::SHARED_FILES + count * 16) as u64, &e)?;
        }
        let count = (count + 1).min(abi::MAX_SHARED_FILES + 1) as u64;
        mem.write(g + offsets::SHARED_COUNT as u64, &count.to_le_bytes())?;
        // Descriptors looked at before are looked at again.
        self.forget_all_fds(mem)
    }

    /// Forgets every descriptor (after `close_range`).
    pub fn forget_all_fds(&self, mem: &ProcessMemory) -> Result<(), AgentError> {
        mem.write(
            self.addrs.globals + offsets::FD_STATE as u64,
            &[abi::FD_UNKNOWN; abi::FD_TABLE],
        )?;
        Ok(())
    }

    /// Replay: puts `calls` into the buffer (the agent answers the thread's next calls from
    /// them, in order).
    pub fn fill(&self, mem: &ProcessMemory, calls: &[BufferedCall]) -> Result<(), AgentError> {
        let mut buf = Vec::new();
        for c in calls {
            let writes: Vec<(u64, &[u8])> = c
                .writes
                .iter()
                .map(|w| (w.addr, w.data.as_slice()))
                .collect();
            let size = hindsight_agent::record::size_for(writes.iter().map(|w| w.1.len()));
            let at = buf.len();
            buf.resize(at + size, 0);
            hindsight_agent::record::encode(&mut buf[at..], c.nr, &c.args, c.result, &writes)
                .ok_or_else(|| {
                    AgentError::Corrupt(format!(
                        "a recorded buffered call with {} writes",
                        c.writes.len()
                    ))
                })?;
        }
        // Calls handed over before and not answered yet stay first.
        let s = self.state(mem)?;
        if s.consumed < s.used && s.used <= abi::BUFFER_SIZE as u64 {
            let mut rest = vec![0u8; (s.used - s.consumed) as usize];
            mem.read(self.addrs.buffer + s.consumed, &mut rest)?;
            rest.extend_from_slice(&buf);
            buf = rest;
        }
        if buf.len() > abi::BUFFER_SIZE {
            return Err(AgentError::Corrupt(format!(
                "recorded buffered calls of {} bytes",
                buf.len()
            )));
        }
        mem.write(self.addrs.buffer, &buf)?;
        let mut counts = [0u8; 16];
        counts[..8].copy_from_slice(&(buf.len() as u64).to_le_bytes());
        // used, then consumed (consecutive).
        mem.write(self.addrs.globals + offsets::USED as u64, &counts)?;
        Ok(())
    }

    /// Replay: how many of the filled calls the agent has not answered yet, and the first
    /// of them.
    pub fn unanswered(
        &self,
        mem: &ProcessMemory,
    ) -> Result<(usize, Option<BufferedCall>), AgentError> {
        let s = self.state(mem)?;
        if s.consumed >= s.used {
            return Ok((0, None));
        }
        let mut buf = vec![0u8; (s.used - s.consumed) as usize];
        mem.read(self.addrs.buffer + s.consumed, &mut buf)?;
        let mut n = 0;
        let mut first = None;
        let mut at = 0;
        while at < buf.len() {
            let Ok(r) = Record::parse(&buf[at..]) else {
                break;
            };
            if first.is_none() {
                first = Some(BufferedCall {
                    nr: r.nr,
                    args: r.args,
                    result: r.result,
                    writes: Vec::new(),
                });
            }
            n += 1;
            at += r.size();
        }
        Ok((n.max(1), first))
    }

    /// Replay: how many of the calls filled last the agent has answered (the records before
    /// its `consumed` mark).
    pub fn answered(&self, mem: &ProcessMemory) -> Result<u32, AgentError> {
        let s = self.state(mem)?;
        let end = s.consumed.min(s.used).min(abi::BUFFER_SIZE as u64);
        let mut buf = vec![0u8; end as usize];
        mem.read(self.addrs.buffer, &mut buf)?;
        let mut n = 0;
        let mut at = 0;
        while at < buf.len() {
            let Ok(r) = Record::parse(&buf[at..]) else {
                break;
            };
            n += 1;
            at += r.size();
        }
        Ok(n)
    }

    /// Replay: the offset in the buffer of the end of the first `n` records filled (None
    /// when fewer are there).
    pub fn end_of_records(&self, mem: &ProcessMemory, n: u32) -> Result<Option<u64>, AgentError> {
        let s = self.state(mem)?;
        let used = s.used.min(abi::BUFFER_SIZE as u64);
        let mut buf = vec![0u8; used as usize];
        mem.read(self.addrs.buffer, &mut buf)?;
        let mut at = 0;
        for _ in 0..n {
            let Ok(r) = Record::parse(&buf[at..]) else {
                return Ok(None);
            };
            at += r.size();
        }
        Ok(Some(at as u64))
    }

    /// Replay: sets how many bytes of records the agent may answer from (the records past
    /// it stay in the buffer, held back: the thread's call that would take the next one is
    /// made traced).
    pub fn set_used(&self, mem: &ProcessMemory, used: u64) -> Result<(), AgentError> {
        mem.write(
            self.addrs.globals + offsets::USED as u64,
            &used.to_le_bytes(),
        )?;
        Ok(())
    }

    /// Replay: the record at `offset` in the buffer (the one a mismatch report names).
    pub fn record_at(&self, mem: &ProcessMemory, offset: u64) -> Result<BufferedCall, AgentError> {
        let s = self.state(mem)?;
        if offset >= s.used {
            return Err(AgentError::Corrupt(format!("a record offset {offset}")));
        }
        let mut buf = vec![0u8; (s.used - offset) as usize];
        mem.read(self.addrs.buffer + offset, &mut buf)?;
        let r = Record::parse(&buf)
            .map_err(|e| AgentError::Corrupt(format!("the record at offset {offset} ({e:?})")))?;
        Ok(BufferedCall {
            nr: r.nr,
            args: r.args,
            result: r.result,
            writes: Vec::new(),
        })
    }
}
