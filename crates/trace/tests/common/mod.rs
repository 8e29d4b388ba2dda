//! Helpers shared by the tests: scratch directories and sample records.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use hindsight_trace::*;

/// A fresh, empty scratch directory (removed when dropped).
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(tag: &str) -> Scratch {
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!(
            "hindsight-trace-test-{}-{tag}-{n}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("scratch dir");
        Scratch(p)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A small file standing for the recorded executable.
pub fn fake_exe(s: &Scratch) -> PathBuf {
    let p = s.path().join("prog");
    std::fs::write(&p, b"\x7fELF not really").expect("exe");
    p
}

pub fn header() -> Header {
    Header {
        format_version: 0,
        hindsight_version: "0.1.0-test".into(),
        program: b"/usr/bin/prog".to_vec(),
        executable: 99,
        args: vec![b"prog".to_vec(), b"--flag".to_vec(), vec![0xff, 0x00, 0x41]],
        env: vec![b"HOME=/home/x".to_vec(), b"EMPTY=".to_vec()],
        cwd: b"/tmp/somewhere".to_vec(),
        start_time: 1_700_000_000,
        clock: "none".into(),
    }
}

pub fn point(seed: u64) -> AsyncPoint {
    let mut regs = [0u64; 27];
    for (i, r) in regs.iter_mut().enumerate() {
        *r = seed
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .wrapping_add(i as u64);
    }
    regs[0] = u64::MAX;
    AsyncPoint {
        regs,
        stack_digest: seed ^ 0xdead_beef,
        stack: (0..64u8).map(|b| b.wrapping_add(seed as u8)).collect(),
        cpu_ns: seed * 1000,
        ticks: seed.is_multiple_of(2).then_some(seed * 7),
    }
}

/// One event of every kind (and the interesting variants of their fields).
pub fn every_event() -> Vec<Event> {
    vec![
        Event::Syscall {
            tid: 100,
            nr: 0,
            args: [3, 0x7fff_0000, 4096, 0, u64::MAX, 1],
            result: 12,
            writes: vec![
                MemWrite {
                    addr: 0x7fff_0000,
                    data: b"hello world\n".to_vec(),
                },
                MemWrite {
                    addr: 0,
                    data: vec![],
                },
            ],
            mapped: None,
        },
        Event::Syscall {
            tid: 100,
            nr: 9,
            args: [0; 6],
            result: -2,
            writes: vec![],
            mapped: Some(MappedFile {
                file: 3,
                offset: 0x1000,
                identity: 1,
            }),
        },
        Event::SyscallEntry {
            tid: 101,
            nr: 202,
            args: [1, 2, 3, 4, 5, 6],
        },
        Event::SyscallExit {
            tid: 101,
            nr: 202,
            result: i64::MIN,
            writes: vec![MemWrite {
                addr: u64::MAX - 8,
                data: vec![1; 8],
            }],
            mapped: Some(MappedFile {
                file: u32::MAX,
                offset: u64::MAX,
                identity: u32::MAX,
            }),
        },
        Event::Rdtsc {
            tid: 100,
            pc: 0x401000,
            tsc: 123_456_789_012,
            aux: None,
        },
        Event::Rdtsc {
            tid: 100,
            pc: 0x401004,
            tsc: u64::MAX,
            aux: Some(7),
        },
        Event::Signal {
            tid: 100,
            signo: 11,
            siginfo: vec![0xab; 128],
            point: SignalPoint::Synchronous,
        },
        Event::Signal {
            tid: 101,
            signo: 17,
            siginfo: vec![0; 128],
            point: SignalPoint::AtStop,
        },
        Event::Signal {
            tid: 101,
            signo: 14,
            siginfo: (0..128u8).collect(),
            point: SignalPoint::Async(Box::new(point(5))),
        },
        Event::Preempt {
            tid: 102,
            point: point(6),
        },
        Event::Exec {
            tid: 100,
            path: b"/bin/true".to_vec(),
            file: 2,
        },
        Event::ThreadExit { tid: 101 },
        Event::ProcessExit {
            status: ExitStatus::Exited(-1),
        },
        Event::ProcessExit {
            status: ExitStatus::Killed(9),
        },
        Event::Output {
            pid: 100,
            fd: 1,
            data: b"out\n".to_vec(),
        },
        Event::KernelWrite {
            writes: vec![MemWrite {
                addr: 0x7ffd_1234,
                data: vec![9; 16],
            }],
        },
        Event::Buffered {
            tid: 101,
            calls: vec![
                BufferedCall {
                    nr: 0,
                    args: [3, 0x5000, 4096, 0, 0, 0],
                    result: 5,
                    writes: vec![MemWrite {
                        addr: 0x5000,
                        data: b"hello".to_vec(),
                    }],
                },
                BufferedCall {
                    nr: 228,
                    args: [1, 0x6000, 0, 0, 0, 0],
                    result: -14,
                    writes: Vec::new(),
                },
            ],
        },
    ]
}

pub fn process(pid: i32, parent: Option<i32>, fork_event: Option<u64>) -> ProcessInfo {
    ProcessInfo {
        pid,
        parent,
        fork_event,
        program: b"/usr/bin/prog".to_vec(),
        args: vec![b"prog".to_vec()],
    }
}

/// Reads every event of `pid`, failing on any error.
pub fn read_all(r: &TraceReader, pid: i32) -> (Vec<Event>, bool) {
    let mut s = r.events(pid).expect("events");
    let mut out = Vec::new();
    while let Some(e) = s.next_event().expect("next event") {
        out.push(e);
    }
    assert_eq!(s.position(), out.len() as u64);
    (out, s.truncated())
}
