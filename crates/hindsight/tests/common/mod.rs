//! Shared helpers: compile the test programs at test time, run `hindsight debug --batch` on
//! them, and match its output line by line against the shapes gdb 13 prints.
//!
//! Line patterns are literal text with three placeholders, so that addresses, pids and
//! thread ids that vary between runs do not make a test flaky while every value that a user
//! reads stays exact:
//! - `{hex}`: `0x` and one or more hex digits;
//! - `{n}`: an optional `-` and one or more decimal digits;
//! - `{*}`: any text, possibly empty.
//!
//! A pattern must match a whole line (after the trailing `\n` is dropped).

#![allow(dead_code)]

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long one hindsight run may take before the test fails (and everything is killed).
pub const TIMEOUT: Duration = Duration::from_secs(120);

/// The repository's `tests/programs` directory.
pub fn programs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/programs")
}

/// A per-test-process scratch directory (see [`process_dir`]).
pub fn scratch() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| process_dir("hindsight-tests")).clone()
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

/// Runs `cmd` (a compiler) once per output file and test process; tests of one binary run in
/// parallel, so each compiles to its own temporary name and renames it into place.
fn build_once(out: PathBuf, mut cmd: Command, what: &str) -> PathBuf {
    static BUILT: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    let set = built.get_or_insert_with(HashSet::new);
    if set.contains(&out) {
        return out;
    }
    let tmp = out.with_extension("tmp");
    let result = cmd.arg("-o").arg(&tmp).output().expect("compiler runs");
    assert!(
        result.status.success(),
        "{what} failed:\n{}",
        String::from_utf8_lossy(&result.stderr)
    );
    std::fs::rename(&tmp, &out).expect("rename");
    set.insert(out.clone());
    out
}

/// Compiles `tests/programs/NAME.c` with `gcc -g -O0 -pthread` plus `extra` flags.
///
/// gcc runs in `tests/programs` on the bare file name, so the debug info names the file
/// `NAME.c` (as in `at NAME.c:12`) and the source is still found through the compilation
/// directory for `list`.
pub fn compile(name: &str, extra: &[&str]) -> PathBuf {
    let suffix: String = extra
        .iter()
        .map(|f| f.replace(['-', ' ', '='], "_"))
        .collect();
    let out = scratch().join(format!("{name}{suffix}"));
    let mut cmd = Command::new("gcc");
    cmd.current_dir(programs())
        .args(["-g", "-O0", "-pthread"])
        .args(extra)
        .arg(format!("{name}.c"));
    build_once(out, cmd, &format!("gcc {name}.c"))
}

/// Compiles `tests/programs/NAME.c` with `gcc -O0` and no debug information.
pub fn compile_nodebug(name: &str, extra: &[&str]) -> PathBuf {
    let suffix: String = extra.iter().map(|f| f.replace(['-', ' '], "_")).collect();
    let out = scratch().join(format!("{name}-nodebug{suffix}"));
    let mut cmd = Command::new("gcc");
    cmd.current_dir(programs())
        .args(["-O0", "-pthread"])
        .args(extra)
        .arg(format!("{name}.c"));
    build_once(out, cmd, &format!("gcc (no -g) {name}.c"))
}

/// Compiles `tests/programs/NAME.cpp` with `g++ -g -O0 -pthread` plus `extra` flags.
pub fn compile_cpp(name: &str, extra: &[&str]) -> PathBuf {
    let suffix: String = extra
        .iter()
        .map(|f| f.replace(['-', ' ', '='], "_"))
        .collect();
    let out = scratch().join(format!("{name}-cpp{suffix}"));
    let mut cmd = Command::new("g++");
    cmd.current_dir(programs())
        .args(["-g", "-O0", "-pthread"])
        .args(extra)
        .arg(format!("{name}.cpp"));
    build_once(out, cmd, &format!("g++ {name}.cpp"))
}

/// The line of `tests/programs/FILE` that holds `marker` (tests break there).
pub fn marker_line(file: &str, marker: &str) -> u32 {
    let text = std::fs::read_to_string(programs().join(file)).expect("test program source");
    text.lines()
        .position(|l| l.contains(marker))
        .map(|i| i as u32 + 1)
        .unwrap_or_else(|| panic!("no {marker:?} in {file}"))
}

/// Compiles `tests/programs/NAME.rs` with rustc in debug mode.
pub fn compile_rust(name: &str) -> PathBuf {
    let out = scratch().join(format!("{name}-rs"));
    let mut cmd = Command::new("rustc");
    cmd.current_dir(programs())
        .args(["-g", "-C", "opt-level=0"])
        .arg(format!("{name}.rs"));
    build_once(out, cmd, &format!("rustc {name}.rs"))
}

/// The address of symbol `sym` in an ELF file, from `nm`.
pub fn nm_address(prog: &Path, sym: &str) -> u64 {
    let out = Command::new("nm").arg(prog).output().expect("nm runs");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| {
            let mut f = l.split_whitespace();
            let (addr, _kind, name) = (f.next()?, f.next()?, f.next()?);
            (name == sym).then(|| u64::from_str_radix(addr, 16).ok())?
        })
        .unwrap_or_else(|| panic!("no symbol {sym} in {}", prog.display()))
}

/// The name gdb shows for the threads of `prog` (`Thread 2 "NAME" hit ...`): the kernel's
/// `comm`, the executable's file name cut to 15 bytes.
pub fn thread_name(prog: &Path) -> String {
    let name = prog
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.chars().take(15).collect()
}

/// Does `line` match `pat` entirely? See the module documentation for the placeholders.
pub fn matches(pat: &str, line: &str) -> bool {
    #[derive(Clone, Copy, PartialEq)]
    enum Tok {
        Lit(char),
        Hex,
        Num,
        Any,
    }
    let mut toks = Vec::new();
    let mut rest = pat;
    while let Some(c) = rest.chars().next() {
        let (tok, len) = if rest.starts_with("{hex}") {
            (Tok::Hex, 5)
        } else if rest.starts_with("{n}") {
            (Tok::Num, 3)
        } else if rest.starts_with("{*}") {
            (Tok::Any, 3)
        } else {
            (Tok::Lit(c), c.len_utf8())
        };
        toks.push(tok);
        rest = &rest[len..];
    }
    let s: Vec<char> = line.chars().collect();
    // Backtracking match; patterns are short and lines are short.
    fn go(t: &[Tok], s: &[char]) -> bool {
        let Some((&first, tail)) = t.split_first() else {
            return s.is_empty();
        };
        match first {
            Tok::Lit(c) => s.first() == Some(&c) && go(tail, &s[1..]),
            Tok::Any => (0..=s.len()).any(|i| go(tail, &s[i..])),
            Tok::Hex => {
                if s.len() < 3 || s[0] != '0' || s[1] != 'x' || !s[2].is_ascii_hexdigit() {
                    return false;
                }
                let n = 2 + s[2..].iter().take_while(|c| c.is_ascii_hexdigit()).count();
                (3..=n).rev().any(|i| go(tail, &s[i..]))
            }
            Tok::Num => {
                let sign = usize::from(s.first() == Some(&'-'));
                let n = s[sign..].iter().take_while(|c| c.is_ascii_digit()).count();
                (sign + 1..=sign + n).rev().any(|i| go(tail, &s[i..]))
            }
        }
    }
    go(&toks, &s)
}

/// What one hindsight run printed.
pub struct Run {
    /// Everything hindsight and the program wrote to stdout.
    pub stdout: String,
    /// Everything hindsight and the program wrote to stderr.
    pub stderr: String,
    /// hindsight's exit status (-1 if killed by a signal).
    pub code: i32,
}

impl Run {
    pub fn dump(&self) -> String {
        format!(
            "\n--- stdout ---\n{}\n--- stderr ---\n{}\n--- exit status {} ---",
            self.stdout, self.stderr, self.code
        )
    }

    /// Asserts that stdout contains `needle`, showing everything otherwise.
    pub fn has(&self, needle: &str) -> &Self {
        assert!(
            self.stdout.contains(needle),
            "stdout lacks {needle:?}{}",
            self.dump()
        );
        self
    }

    /// Asserts that stderr contains `needle`.
    pub fn err_has(&self, needle: &str) -> &Self {
        assert!(
            self.stderr.contains(needle),
            "stderr lacks {needle:?}{}",
            self.dump()
        );
        self
    }

    /// Asserts that stdout does not contain `needle`.
    pub fn lacks(&self, needle: &str) -> &Self {
        assert!(
            !self.stdout.contains(needle),
            "stdout has {needle:?}{}",
            self.dump()
        );
        self
    }

    /// Asserts that neither stdout nor stderr contains `needle`.
    pub fn nowhere(&self, needle: &str) -> &Self {
        assert!(
            !self.stdout.contains(needle) && !self.stderr.contains(needle),
            "output has {needle:?}{}",
            self.dump()
        );
        self
    }

    /// Asserts that `a` appears before `b` in stdout.
    pub fn order(&self, a: &str, b: &str) -> &Self {
        let ia = self
            .stdout
            .find(a)
            .unwrap_or_else(|| panic!("no {a:?}{}", self.dump()));
        assert!(
            self.stdout[ia..].contains(b),
            "no {b:?} after {a:?}{}",
            self.dump()
        );
        self
    }

    /// Asserts that some stdout line matches the line pattern `pat`.
    pub fn line(&self, pat: &str) -> &Self {
        assert!(
            self.stdout.lines().any(|l| matches(pat, l)),
            "no stdout line matches {pat:?}{}",
            self.dump()
        );
        self
    }

    /// Asserts that no stdout line matches the line pattern `pat`.
    pub fn no_line(&self, pat: &str) -> &Self {
        assert!(
            !self.stdout.lines().any(|l| matches(pat, l)),
            "a stdout line matches {pat:?}{}",
            self.dump()
        );
        self
    }

    /// Asserts that some stderr line matches the line pattern `pat`.
    pub fn err_line(&self, pat: &str) -> &Self {
        assert!(
            self.stderr.lines().any(|l| matches(pat, l)),
            "no stderr line matches {pat:?}{}",
            self.dump()
        );
        self
    }

    /// How many stdout lines match `pat`.
    pub fn count(&self, pat: &str) -> usize {
        self.stdout.lines().filter(|l| matches(pat, l)).count()
    }

    /// Asserts that stdout has lines matching `pats` in this order (other lines may come
    /// between them).
    pub fn seq(&self, pats: &[&str]) -> &Self {
        let lines: Vec<&str> = self.stdout.lines().collect();
        let mut at = 0;
        for (k, pat) in pats.iter().enumerate() {
            match lines[at..].iter().position(|l| matches(pat, l)) {
                Some(i) => at += i + 1,
                None => panic!(
                    "pattern #{k} {pat:?} not found after line {at} (the lines before it did \
                     match in order: {:?}){}",
                    &pats[..k],
                    self.dump()
                ),
            }
        }
        self
    }

    /// Asserts that stdout has consecutive lines matching `pats` exactly: a block such as a
    /// watchpoint report or a backtrace, with nothing else in between except blank lines and
    /// the lines that gdb prints only when a command comes from a terminal (see `is_chatter`).
    pub fn block(&self, pats: &[&str]) -> &Self {
        let lines: Vec<&str> = self
            .stdout
            .lines()
            .filter(|l| !l.is_empty() && !is_chatter(l))
            .collect();
        // The longest run of leading patterns that matches somewhere, to say what broke.
        let mut best = (0, 0);
        for start in 0..lines.len() {
            let n = pats
                .iter()
                .zip(&lines[start..])
                .take_while(|(p, l)| matches(p, l))
                .count();
            if n == pats.len() {
                return self;
            }
            if n > best.0 {
                best = (n, start);
            }
        }
        let (n, start) = best;
        let got = lines.get(start + n).copied().unwrap_or("<end of output>");
        panic!(
            "no block of lines matches the {} patterns; the best attempt matched {n} of them, \
             then expected {:?} but found {got:?}{}",
            pats.len(),
            pats[n],
            self.dump()
        );
    }

    /// Asserts that stdout contains every piece (which may span lines), in this order.
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

    /// Asserts no panic and no Rust backtrace on stderr.
    pub fn clean(&self) -> &Self {
        assert!(
            !self.stderr.contains("panicked") && !self.stderr.contains("RUST_BACKTRACE"),
            "hindsight panicked{}",
            self.dump()
        );
        self
    }

    /// Asserts the exit status.
    pub fn code(&self, code: i32) -> &Self {
        assert_eq!(self.code, code, "exit status{}", self.dump());
        self
    }

    /// Asserts a non-zero exit status (not a death by signal): some command failed. (gdb's
    /// own status only reflects the last command, so this is not checked under gdb.)
    pub fn failed(&self) -> &Self {
        if under_gdb() {
            return self;
        }
        assert!(
            self.code > 0,
            "expected a failure exit status{}",
            self.dump()
        );
        self
    }

    /// The pid the program printed as `pid N` on stderr at its start.
    pub fn pid(&self) -> i32 {
        self.stderr
            .lines()
            .find_map(|l| l.strip_prefix("pid ")?.trim().parse().ok())
            .unwrap_or_else(|| panic!("the program printed no pid{}", self.dump()))
    }

    /// Asserts that the program (its pid printed on stderr) no longer exists now that
    /// hindsight has exited: neither running nor stopped nor an unreaped zombie.
    pub fn program_gone(&self) -> &Self {
        assert_gone(self.pid());
        self
    }
}

/// Lines that gdb prints for a command typed at a terminal but not for `-ex` commands in batch
/// mode ("Continuing.", "Run till exit from ...", ...): hindsight may print them or not.
pub fn is_chatter(line: &str) -> bool {
    const CHATTER: [&str; 6] = [
        "Continuing.",
        "Starting program: {*}",
        "Run till exit from {*}",
        "Will ignore next {*}",
        "Breakpoint {n} now unconditional.",
        "(More stack frames follow...)",
    ];
    CHATTER.iter().any(|p| matches(p, line))
}

/// Asserts that process `pid` is gone (allowing a moment for init to reap it).
pub fn assert_gone(pid: i32) {
    let stat = format!("/proc/{pid}/stat");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match std::fs::read_to_string(&stat) {
            Err(_) => return,
            // A zombie (state Z or X) has no code left to run; it waits for init to reap it.
            Ok(s)
                if s.rsplit(')')
                    .next()
                    .is_some_and(|r| r.trim_start().starts_with(['Z', 'X'])) =>
            {
                return
            }
            Ok(s) => {
                if Instant::now() > deadline {
                    let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
                    panic!("process {pid} outlived hindsight: {s}");
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `hindsight` with `args` (killed after a generous timeout so that a hang fails the
/// test instead of the whole suite).
/// `hindsight replay TRACE -q --gdbserver 127.0.0.1:0 EXTRA…` started and listening: the
/// child, its port, and the lines it logged up to saying where it listens. The rest of its
/// log is drained in the background, so that it never blocks on a full pipe.
pub fn start_gdbserver(trace: &Path, extra: &[&str]) -> (std::process::Child, u16, Vec<String>) {
    use std::io::BufRead as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_hindsight"))
        .arg("replay")
        .arg(trace)
        .args(["-q", "--gdbserver", "127.0.0.1:0"])
        .args(extra)
        .env("HINDSIGHT_DIR", scratch().join("hindsight-dir"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the server starts");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = std::io::BufReader::new(stderr).lines();
    let mut log = Vec::new();
    let port = loop {
        let Some(Ok(line)) = lines.next() else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the server ended before listening: {log:?}");
        };
        log.push(line.clone());
        if let Some(rest) = line.split("on 127.0.0.1:").nth(1) {
            let port: String = rest.chars().take_while(char::is_ascii_digit).collect();
            break port.parse().expect("a port");
        }
    };
    std::thread::spawn(move || for _ in lines {});
    (child, port, log)
}

pub fn hindsight(args: &[&std::ffi::OsStr]) -> Run {
    run_with_timeout(Command::new(env!("CARGO_BIN_EXE_hindsight")).args(args))
}

/// Runs `cmd` with stdin closed and both outputs captured, killing it after `TIMEOUT`.
fn run_with_timeout(cmd: &mut Command) -> Run {
    let (r, finished) = collect_with_timeout(cmd.stdin(Stdio::null()));
    if !finished {
        // Do not leave the program behind either.
        if let Some(pid) = r
            .stderr
            .lines()
            .find_map(|l| l.strip_prefix("pid ")?.trim().parse::<i32>().ok())
        {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
        panic!("the debugger did not finish within {TIMEOUT:?}{}", r.dump());
    }
    r
}

/// Spawns `cmd` (its stdin as the caller set it) with both outputs captured, and waits for
/// it, killing it after `TIMEOUT`. Returns what it printed and whether it finished in time.
pub fn collect_with_timeout(cmd: &mut Command) -> (Run, bool) {
    collect_within(cmd, TIMEOUT)
}

/// [`collect_with_timeout`] with a time limit of its own (a whole suite run by another test
/// runner).
pub fn collect_within(cmd: &mut Command, limit: Duration) -> (Run, bool) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the debugger runs");
    // Read both pipes on their own threads so that a chatty run cannot block on a full pipe.
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut out, &mut v);
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut err, &mut v);
        v
    });
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break Some(st);
        }
        if start.elapsed() > limit {
            // A command started in a process group of its own (a test runner) goes with
            // everything it started.
            // SAFETY: a signal to the group our child leads, if it leads one.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let r = Run {
        stdout: String::from_utf8_lossy(&t_out.join().unwrap_or_default()).into_owned(),
        stderr: String::from_utf8_lossy(&t_err.join().unwrap_or_default()).into_owned(),
        code: status.and_then(|s| s.code()).unwrap_or(-1),
    };
    (r, status.is_some())
}

/// With `HINDSIGHT_TESTS_UNDER_GDB=1` in the environment, `debug` runs real gdb on the same
/// commands instead of hindsight: a way to check that the expected lines of a test are what
/// gdb prints (tests of deliberate differences, such as passing the program's own SIGTRAP or
/// refusing a fifth watchpoint at once, fail there by design).
pub fn under_gdb() -> bool {
    std::env::var_os("HINDSIGHT_TESTS_UNDER_GDB").is_some_and(|v| v == "1")
}

/// Runs `gdb -batch -nx -ex CMD... --args PROG ARGS...`. gdb's program is not started yet, so
/// a `continue` before any `run` becomes `run`. Rust programs (built by [`compile_rust`]) get
/// rust-gdb, whose pretty-printers are what hindsight's Rust formatters follow; C++ ones get
/// libstdc++'s printers, which gdb loads by itself.
fn debug_under_gdb(prog: &Path, cmds: &[&str], args: &[&str]) -> Run {
    let rust = prog.to_string_lossy().ends_with("-rs");
    let mut c = Command::new(if rust { "rust-gdb" } else { "gdb" });
    c.args(["-batch", "-nx"]);
    let mut started = false;
    for cmd in cmds {
        let cmd = match *cmd {
            "continue" | "c" if !started => "run",
            other => other,
        };
        started |= matches!(cmd, "run" | "r" | "start" | "starti");
        c.arg("-ex").arg(cmd);
    }
    c.arg("--args").arg(prog).args(args);
    run_with_timeout(&mut c)
}

/// Runs `hindsight debug --batch -ex CMD... -- PROG ARGS...` and checks that it did not panic.
pub fn debug(prog: &Path, cmds: &[&str], args: &[&str]) -> Run {
    if under_gdb() {
        return debug_under_gdb(prog, cmds, args);
    }
    let mut v: Vec<&std::ffi::OsStr> = vec!["debug".as_ref(), "--batch".as_ref()];
    for cmd in cmds {
        v.push("-ex".as_ref());
        v.push(cmd.as_ref());
    }
    v.push("--".as_ref());
    v.push(prog.as_os_str());
    v.extend(args.iter().map(std::ffi::OsStr::new));
    let r = hindsight(&v);
    r.clean();
    r
}

/// Runs the program natively; its stdout.
pub fn native(prog: &Path, args: &[&str]) -> String {
    let out = Command::new(prog)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("program runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Records `prog ARGS` into a fresh trace directory under the scratch directory (traces
/// without `-o` would go to `$HINDSIGHT_DIR`, set there too). Returns the trace and what
/// recording printed; fails the test if recording fails.
pub fn record_trace(prog: &Path, args: &[&str]) -> (PathBuf, Run) {
    record_trace_env(prog, args, &[])
}

/// [`record_trace`] with environment variables set for `hindsight record`.
pub fn record_trace_env(prog: &Path, args: &[&str], env: &[(&str, &str)]) -> (PathBuf, Run) {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let name = prog.file_name().map(|n| n.to_string_lossy().into_owned());
    let trace = scratch().join(format!(
        "trace-{}-{}-{}",
        name.unwrap_or_default(),
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&trace);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hindsight"));
    cmd.arg("record")
        .arg("-o")
        .arg(&trace)
        .arg("--")
        .arg(prog)
        .args(args)
        .envs(env.iter().copied())
        .env("HINDSIGHT_DIR", scratch().join("hindsight-dir"));
    let r = run_with_timeout(&mut cmd);
    assert!(
        r.stderr.contains("hindsight: trace saved to"),
        "recording failed{}",
        r.dump()
    );
    (trace, r)
}

/// `hindsight replay TRACE --batch -q -ex CMD…`: a replay driven by commands.
pub fn replay_batch(trace: &Path, cmds: &[&str]) -> Run {
    replay_batch_env(trace, &[], cmds)
}

/// [`replay_batch`] with more environment variables.
pub fn replay_batch_env(trace: &Path, env: &[(&str, &str)], cmds: &[&str]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hindsight"));
    cmd.envs(env.iter().copied());
    cmd.arg("replay")
        .arg(trace)
        .args(["--batch", "-q"])
        .env("HINDSIGHT_DIR", scratch().join("hindsight-dir"));
    for c in cmds {
        cmd.arg("-ex").arg(c);
    }
    run_with_timeout(&mut cmd)
}
