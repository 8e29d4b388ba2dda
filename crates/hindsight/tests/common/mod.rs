//! Shared helpers: compile the test programs at test time and run `hindsight debug --batch`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's `tests/programs` directory.
pub fn programs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/programs")
}

/// A per-test-process scratch directory.
pub fn scratch() -> PathBuf {
    let d = std::env::temp_dir().join(format!("hindsight-tests-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// Compiles `tests/programs/NAME.c` with `gcc -g -O0 -pthread` plus `extra` flags.
pub fn compile(name: &str, extra: &[&str]) -> PathBuf {
    let out = scratch().join(format!("{name}{}", extra.join("").replace(['-', ' '], "_")));
    if out.exists() {
        return out;
    }
    // Tests of one binary run in parallel: each compiles to its own file, then renames.
    let tmp =
        out.with_extension(format!("tmp{:?}", std::thread::current().id()).replace(['(', ')'], ""));
    let st = Command::new("gcc")
        .args(["-g", "-O0", "-pthread"])
        .args(extra)
        .arg("-o")
        .arg(&tmp)
        .arg(programs().join(format!("{name}.c")))
        .status()
        .expect("gcc runs");
    assert!(st.success(), "gcc failed for {name}");
    std::fs::rename(&tmp, &out).expect("rename");
    out
}

/// Compiles `tests/programs/NAME.rs` with rustc in debug mode.
pub fn compile_rust(name: &str) -> PathBuf {
    let out = scratch().join(format!("{name}-rs"));
    if out.exists() {
        return out;
    }
    let tmp =
        out.with_extension(format!("tmp{:?}", std::thread::current().id()).replace(['(', ')'], ""));
    let st = Command::new("rustc")
        .args(["-g", "-C", "opt-level=0", "-o"])
        .arg(&tmp)
        .arg(programs().join(format!("{name}.rs")))
        .status()
        .expect("rustc runs");
    assert!(st.success(), "rustc failed for {name}");
    std::fs::rename(&tmp, &out).expect("rename");
    out
}

/// What one hindsight run printed.
pub struct Run {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

impl Run {
    /// Asserts that stdout contains `needle`, showing everything otherwise.
    pub fn has(&self, needle: &str) -> &Self {
        assert!(
            self.stdout.contains(needle),
            "stdout lacks {needle:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.stdout,
            self.stderr
        );
        self
    }

    /// Asserts that stderr contains `needle`.
    pub fn err_has(&self, needle: &str) -> &Self {
        assert!(
            self.stderr.contains(needle),
            "stderr lacks {needle:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.stdout,
            self.stderr
        );
        self
    }

    /// Asserts that stdout does not contain `needle`.
    pub fn lacks(&self, needle: &str) -> &Self {
        assert!(
            !self.stdout.contains(needle),
            "stdout has {needle:?}\n--- stdout ---\n{}",
            self.stdout
        );
        self
    }

    /// Asserts that stdout contains every piece, in this order.
    pub fn in_order(&self, pieces: &[&str]) -> &Self {
        let mut rest = self.stdout.as_str();
        for p in pieces {
            match rest.find(p) {
                Some(i) => rest = &rest[i + p.len()..],
                None => panic!("expected {p:?} next in\n{}", self.stdout),
            }
        }
        self
    }

    /// Asserts no panic and no stray debugger output on stderr.
    pub fn clean(&self) -> &Self {
        assert!(!self.stderr.contains("panicked"), "panic: {}", self.stderr);
        self
    }

    /// Asserts the exit status.
    pub fn code(&self, code: i32) -> &Self {
        assert_eq!(
            self.code, code,
            "exit status\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

/// Runs `hindsight debug --batch -ex CMD... -- PROG ARGS...`.
pub fn debug(prog: &Path, cmds: &[&str], args: &[&str]) -> Run {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hindsight"));
    c.arg("debug").arg("--batch");
    for cmd in cmds {
        c.arg("-ex").arg(cmd);
    }
    c.arg("--").arg(prog).args(args);
    let out = c.output().expect("hindsight runs");
    let r = Run {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code().unwrap_or(-1),
    };
    r.clean();
    r
}

/// Runs the program natively; its stdout.
pub fn native(prog: &Path, args: &[&str]) -> String {
    let out = Command::new(prog)
        .args(args)
        .output()
        .expect("program runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}
