//! Shared helpers of the DWARF reader tests: compile the test programs with gcc into a fresh
//! temporary directory, run them, and ask gdb (when installed) what it makes of the same binary.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use hindsight_symbols::target::{AccessError, ReadMemory};

/// The C program of most tests (see its header comment).
pub const CHAIN_C: &str = include_str!("../dwarf_programs/chain.c");

/// 1-based number of the first line of chain.c that contains `needle`.
pub fn line_of(needle: &str) -> u32 {
    CHAIN_C
        .lines()
        .position(|l| l.contains(needle))
        .map(|i| i as u32 + 1)
        .expect("line in chain.c")
}

/// A fresh directory under the system's temporary directory.
pub fn temp_dir(tag: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    static ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let dir = ROOT
        .get_or_init(|| process_dir("hindsight-dwarf"))
        .join(format!("{tag}-{n}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

/// Writes `source` as `name` into a fresh directory and compiles it there with a relative
/// file name (so the line table says `name` and the compilation directory is the temporary
/// one). Returns the binary's path.
pub fn compile_c(name: &str, source: &str, flags: &[&str]) -> PathBuf {
    let dir = temp_dir(name.trim_end_matches(".c"));
    std::fs::write(dir.join(name), source).expect("write source");
    let out = dir.join("prog");
    let status = Command::new("gcc")
        .current_dir(&dir)
        .args(flags)
        .arg("-o")
        .arg(&out)
        .arg(name)
        .status()
        .expect("run gcc");
    assert!(status.success(), "gcc {flags:?} {name} failed");
    out
}

/// Compiles a Rust source file with `rustc -g` into a fresh directory.
pub fn compile_rust(name: &str, source: &str) -> PathBuf {
    let dir = temp_dir(name.trim_end_matches(".rs"));
    std::fs::write(dir.join(name), source).expect("write source");
    let out = dir.join("prog");
    let status = Command::new("rustc")
        .current_dir(&dir)
        .args(["-g", "-C", "opt-level=0", "--edition", "2021", "-o"])
        .arg(&out)
        .arg(name)
        .status()
        .expect("run rustc");
    assert!(status.success(), "rustc {name} failed");
    out
}

/// True when gdb can be run.
pub fn have_gdb() -> bool {
    Command::new("gdb")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// What gdb answers to `break SPEC` on a binary that is not running, one answer per spec:
/// the address and line of the breakpoint, or gdb's message. `None` if gdb is not installed.
pub fn gdb_breaks(prog: &Path, specs: &[&str]) -> Option<Vec<Result<(u64, u32), String>>> {
    if !have_gdb() {
        return None;
    }
    let mut cmd = Command::new("gdb");
    cmd.args(["-nx", "-batch"]);
    for s in specs {
        cmd.arg("-ex").arg(format!("break {s}"));
    }
    let out = cmd.arg(prog).output().ok()?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut answers = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("Breakpoint ") {
            // "Breakpoint 1 at 0x401161: file chain.c, line 26." ("at 0x401161" alone without
            // line information: line 0 here.)
            let addr = rest
                .split(" at 0x")
                .nth(1)
                .and_then(|s| s.split(':').next())
                .and_then(|h| u64::from_str_radix(h, 16).ok());
            let line_no = match rest.rsplit_once(", line ") {
                Some((_, l)) => l.trim_end_matches('.').parse().ok(),
                None => Some(0),
            };
            match (addr, line_no) {
                // "Breakpoint 1 at 0x401136: twice.h:3. (2 locations)": kept whole.
                _ if rest.ends_with("locations)") => answers.push(Err(line.to_string())),
                (Some(a), Some(l)) => answers.push(Ok((a, l))),
                _ => answers.push(Err(line.to_string())),
            }
        } else if line.starts_with("No ") || line.starts_with("Function \"") {
            // "No source file named x.c.", "No line 9 in file ...", "Function \"f\" not defined."
            answers.push(Err(line.to_string()));
        }
    }
    assert_eq!(answers.len(), specs.len(), "gdb said:\n{text}");
    Some(answers)
}

/// A stack dumped by `chain.c`: the registers it recorded and a copy of the stack from rsp.
pub struct Dump {
    /// rip inside `leaf`, right after the register capture.
    pub rip: u64,
    /// rsp at that point.
    pub rsp: u64,
    /// rbp at that point.
    pub rbp: u64,
    /// The address of `leaf`'s local `marker`.
    pub marker: u64,
    /// Where the stack copy starts (below rsp: the red zone).
    pub base: u64,
    /// The stack bytes from `base` up.
    pub stack: Vec<u8>,
}

impl Dump {
    /// Runs `prog` (a build of chain.c) and reads the dump it writes.
    pub fn run(prog: &Path) -> Dump {
        let file = prog.with_file_name("dump.bin");
        let out = Command::new(prog).arg(&file).output().expect("run program");
        assert!(out.status.success(), "{} failed", prog.display());
        let bytes = std::fs::read(&file).expect("read dump");
        let word = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes[i * 8..i * 8 + 8]);
            u64::from_le_bytes(b)
        };
        Dump {
            rip: word(0),
            rsp: word(1),
            rbp: word(2),
            marker: word(3),
            base: word(4),
            stack: bytes[40..].to_vec(),
        }
    }
}

impl ReadMemory for Dump {
    fn read_memory(&self, addr: u64, buf: &mut [u8]) -> Result<(), AccessError> {
        let start = addr
            .checked_sub(self.base)
            .ok_or(AccessError::Memory(addr))? as usize;
        let src = self
            .stack
            .get(start..start + buf.len())
            .ok_or(AccessError::Memory(addr))?;
        buf.copy_from_slice(src);
        Ok(())
    }
}

/// The per-process scratch directory `PREFIX-PID` under the system's temporary directory,
/// created on first use after removing those of test processes that are gone (each holds
/// compiled programs and recordings: hundreds of MB left behind by every test binary).
fn process_dir(prefix: &str) -> PathBuf {
    let tmp = std::env::temp_dir();
    if let Ok(entries) = std::fs::read_dir(&tmp) {
        for e in entries.flatten() {
            let name = e.file_name();
            let Some(pid) = name
                .to_str()
                .and_then(|n| n.strip_prefix(prefix))
                .and_then(|n| n.strip_prefix('-'))
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if !Path::new(&format!("/proc/{pid}")).exists() {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    let d = tmp.join(format!("{prefix}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}
