//! `hindsight record` and `hindsight replay` on programs whose output differs from run to run
//! (`tests/programs/rr_*.c`): random bytes, the time-stamp counter, clocks, pids, files, threads,
//! timer signals, child processes, crashes. Each program is recorded twice (the two outputs must
//! differ, or a replay that merely ran the program again could pass), then replayed to the end
//! (its output must come back exactly, and end the same way) and to the line marked
//! `/* BREAK-HERE */`, where `print VAR` must show what the recorded run printed as `VAR=VALUE`.
//! Then: `-q`, `run` again, watchpoints, `--process`, `ls`/`info`, `$HINDSIGHT_DIR` and
//! `latest-trace`, and damaged traces (cut off, corrupted, from a newer version).
//!
//! Every hindsight run here gets its own `$HINDSIGHT_DIR` under the test's scratch directory,
//! so nothing is written to the user's home.

mod common;
use common::*;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

// ---------------------------------------------------------------------------------------------
// Helpers

/// A fresh directory for one test (the traces and files it makes).
fn workdir(name: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let d = scratch().join(format!("rr-{name}-{}", N.fetch_add(1, Ordering::Relaxed)));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("work dir");
    d
}

/// Runs hindsight with `args`, `$HINDSIGHT_DIR` set to `root`, stdin from `stdin` (or
/// nothing), in `cwd`; kills it after [`TIMEOUT`].
fn hs_in(root: &Path, cwd: &Path, stdin: Option<&Path>, args: &[&OsStr]) -> Run {
    hs_env(root, cwd, stdin, &[], args)
}

/// [`hs_in`] with more environment variables.
fn hs_env(
    root: &Path,
    cwd: &Path,
    stdin: Option<&Path>,
    env: &[(&str, &str)],
    args: &[&OsStr],
) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hindsight"));
    cmd.args(args)
        .current_dir(cwd)
        .envs(env.iter().copied())
        .env("HINDSIGHT_DIR", root)
        .stdin(match stdin {
            Some(p) => Stdio::from(std::fs::File::open(p).expect("stdin file")),
            None => Stdio::null(),
        });
    let (r, finished) = collect_with_timeout(&mut cmd);
    assert!(
        finished,
        "hindsight {:?} did not finish within {TIMEOUT:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        args, r.stdout, r.stderr
    );
    r.clean();
    r
}

fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

/// A recorded run.
struct Recorded {
    /// What `hindsight record` printed (the program's output and hindsight's last line).
    run: Run,
    /// The trace directory.
    trace: PathBuf,
}

impl Recorded {
    /// The program's own stderr: hindsight's lines removed.
    fn program_stderr(&self) -> String {
        self.run
            .stderr
            .lines()
            .filter(|l| !l.starts_with("hindsight:"))
            .map(|l| format!("{l}\n"))
            .collect()
    }

    /// The value the program printed as `KEY=VALUE` on a line of its own.
    fn value(&self, key: &str) -> String {
        value_of(&self.run.stdout, key)
    }
}

/// The value printed as `KEY=VALUE` on a line of `text`.
fn value_of(text: &str, key: &str) -> String {
    let prefix = format!("{key}=");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no line {prefix}... in\n{text}"))
        .to_string()
}

/// `hindsight record -o TRACE -- PROG ARGS...` in `dir` (traces without `-o` go to
/// `dir/root`); checks the exit status and the last line on stderr.
fn record(
    dir: &Path,
    trace: &str,
    prog: &Path,
    args: &[&str],
    stdin: Option<&Path>,
    code: i32,
) -> Recorded {
    record_with(dir, trace, &[], prog, args, stdin, code)
}

/// [`record`] with options of `hindsight record` (`--time-slice MS`).
fn record_with(
    dir: &Path,
    trace: &str,
    options: &[&str],
    prog: &Path,
    args: &[&str],
    stdin: Option<&Path>,
    code: i32,
) -> Recorded {
    let trace = dir.join(trace);
    let mut v: Vec<&OsStr> = vec![os("record"), os("-o"), trace.as_os_str()];
    v.extend(options.iter().map(|o| os(o)));
    v.extend([os("--"), prog.as_os_str()]);
    v.extend(args.iter().map(|a| os(a)));
    let run = hs_in(&dir.join("root"), dir, stdin, &v);
    assert_eq!(
        run.code, code,
        "exit status of hindsight record\n--- stdout ---\n{}\n--- stderr ---\n{}",
        run.stdout, run.stderr
    );
    let saved = format!("hindsight: trace saved to {}", trace.display());
    assert_eq!(
        run.stderr.lines().last(),
        Some(saved.as_str()),
        "the last line on stderr of hindsight record\n{}",
        run.stderr
    );
    assert!(trace.is_dir(), "no trace directory {}", trace.display());
    Recorded { run, trace }
}

/// `hindsight replay TRACE [extra options] --batch -ex CMD...` (in the trace's parent).
fn replay_with(trace: &Path, options: &[&str], cmds: &[&str]) -> Run {
    let dir = trace.parent().expect("parent");
    let mut v: Vec<&OsStr> = vec![os("replay"), trace.as_os_str()];
    v.extend(options.iter().map(|o| os(o)));
    v.push(os("--batch"));
    for c in cmds {
        v.push(os("-ex"));
        v.push(os(c));
    }
    hs_in(&dir.join("root"), dir, None, &v)
}

fn replay(trace: &Path, cmds: &[&str]) -> Run {
    replay_with(trace, &[], cmds)
}

/// The lines of a replay's stdout that gdb (and hindsight) print around the program's own:
/// "Continuing.", thread and fork notices, blank lines.
fn is_notice(l: &str) -> bool {
    const NOTICES: [&str; 11] = [
        // `handle`'s table.
        "Signal{*}Description",
        "SIG{*}",
        "[New Thread {hex} (LWP {n})]",
        "[Thread {hex} (LWP {n}) exited]",
        "[Detaching after fork from child process {n}]",
        "[Detaching after vfork from child process {n}]",
        "[New inferior {*}]",
        "[Inferior {n} (process {n}) detached]",
        "[Thread debugging using libthread_db enabled]",
        "Using host libthread_db library {*}",
        "process {n} is executing new program: {*}",
    ];
    l.is_empty() || is_chatter(l) || NOTICES.iter().any(|p| matches(p, l)) || is_child_end(l)
}

/// gdb's announcement of the end of a process of the tree other than the first (inferior 1's
/// is the end of the replay that tests look for).
fn is_child_end(l: &str) -> bool {
    !l.starts_with("[Inferior 1 ") && matches("[Inferior {n} (process {n}) exited{*}]", l)
}

/// The replay's stdout without the notices.
fn program_lines(r: &Run) -> Vec<&str> {
    r.stdout.lines().filter(|l| !is_notice(l)).collect()
}

/// gdb's line for a process that exited with `code`.
fn exit_pattern(code: i32) -> String {
    if code == 0 {
        "[Inferior 1 (process {n}) exited normally]".to_string()
    } else {
        format!("[Inferior 1 (process {{n}}) exited with code {code:02o}]")
    }
}

/// The line of `tests/programs/NAME.c` marked `/* BREAK-HERE */` (`tag` empty) or
/// `/* BREAK-HERE: TAG */`.
fn marked_line(name: &str, tag: &str) -> usize {
    let marker = if tag.is_empty() {
        "/* BREAK-HERE */".to_string()
    } else {
        format!("/* BREAK-HERE: {tag} */")
    };
    let src = std::fs::read_to_string(programs().join(format!("{name}.c"))).expect("source");
    let hits: Vec<usize> = src
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(&marker))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(hits.len(), 1, "{name}.c must have exactly one {marker}");
    hits[0]
}

/// The line of `tests/programs/NAME.c` that contains `text` (once).
fn line_of(name: &str, text: &str) -> usize {
    let src = std::fs::read_to_string(programs().join(format!("{name}.c"))).expect("source");
    let hits: Vec<usize> = src
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(text))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(hits.len(), 1, "{name}.c must have {text:?} exactly once");
    hits[0]
}

/// How a recorded program ended.
#[derive(Clone, Copy)]
enum End {
    /// exit(code).
    Exit(i32),
    /// Killed by a signal: its number, gdb's name and description.
    Signal(i32, &'static str, &'static str),
}

/// Asserts that a replay to the end (`continue`, and for a signal one more `continue`) showed
/// exactly the recorded program's output and ended as the recording did.
fn assert_replayed_whole(rec: &Recorded, r: &Run, end: End) {
    let recorded: Vec<&str> = rec.run.stdout.lines().collect();
    let got = program_lines(r);
    let shown = format!(
        "--- recorded stdout ---\n{}\n--- replay stdout ---\n{}\n--- replay stderr ---\n{}",
        rec.run.stdout, r.stdout, r.stderr
    );
    assert!(
        got.len() > recorded.len() && got[..recorded.len()] == recorded[..],
        "the replay's output is not the recorded output\n{shown}"
    );
    let rest = &got[recorded.len()..];
    match end {
        End::Exit(code) => {
            assert!(
                rest.len() == 1 && matches(&exit_pattern(code), rest[0]),
                "after the recorded output, expected only {:?}\n{shown}",
                exit_pattern(code)
            );
        }
        End::Signal(_, name, desc) => {
            let received = format!("Program received signal {name}, {desc}.");
            let terminated = format!("Program terminated with signal {name}, {desc}.");
            assert_eq!(rest.first().copied(), Some(received.as_str()), "{shown}");
            assert!(
                rest.contains(&terminated.as_str())
                    && rest.contains(&"The program no longer exists."),
                "expected {terminated:?} after another continue\n{shown}"
            );
            assert!(
                !rest.iter().any(|l| l.starts_with("[Inferior 1")),
                "a program killed by a signal does not exit\n{shown}"
            );
        }
    }
    // What the program wrote to stderr comes back on stderr.
    let err = rec.program_stderr();
    assert!(
        r.stderr.contains(&err),
        "the program's stderr {err:?} did not come back\n{shown}"
    );
}

/// Asserts that a replay stopped at `FILE:LINE` shows, for each variable, the value the
/// recorded run printed as `VAR=VALUE` (as `$1`, `$2`... in order), and that the program's
/// output stopped short of the first of those lines.
fn assert_values_at_break(rec: &Recorded, name: &str, tag: &str, vars: &[&str], r: &Run) {
    let line = marked_line(name, tag);
    r.line(&format!(
        "Breakpoint 1 at {{hex}}: file {name}.c, line {line}."
    ))
    .line(&format!("{{*}}Breakpoint 1, {{*}} at {name}.c:{line}"));
    for (i, var) in vars.iter().enumerate() {
        let want = format!("${} = {}", i + 1, rec.value(var));
        assert!(
            r.stdout.lines().any(|l| l == want),
            "expected {want:?} (the recorded run printed {var}={})\n--- replay stdout ---\n{}\n--- stderr ---\n{}",
            rec.value(var),
            r.stdout,
            r.stderr
        );
    }
    if tag.is_empty() {
        let first = format!("{}={}", vars[0], rec.value(vars[0]));
        r.no_line(&first);
        // Everything printed before it was printed again, in order.
        let before: Vec<String> = rec
            .run
            .stdout
            .lines()
            .take_while(|l| *l != first)
            .map(|l| format!("{l}\n"))
            .collect();
        let pieces: Vec<&str> = before.iter().map(String::as_str).collect();
        r.in_order(&pieces);
    }
}

/// The commands that stop at the marked line and print `vars`.
fn break_cmds(name: &str, tag: &str, vars: &[&str]) -> Vec<String> {
    let mut cmds = vec![
        format!("break {name}.c:{}", marked_line(name, tag)),
        "continue".to_string(),
    ];
    cmds.extend(vars.iter().map(|v| format!("print {v}")));
    cmds
}

/// The whole round trip for one program: two recordings whose outputs differ, the first
/// replayed to the end, the second to the marked line. Returns both recordings.
fn round_trip(name: &str, args: &[&str], end: End, vars: &[&str]) -> (Recorded, Recorded) {
    round_trip_with(name, args, end, vars, &[])
}

/// [`round_trip`] with commands to run first in each replay (`handle`...).
fn round_trip_with(
    name: &str,
    args: &[&str],
    end: End,
    vars: &[&str],
    prelude: &[&str],
) -> (Recorded, Recorded) {
    round_trip_built(name, &compile(name, &[]), args, end, vars, prelude)
}

/// [`round_trip_with`] of a program already built from `tests/programs/NAME.c`.
fn round_trip_built(
    name: &str,
    prog: &Path,
    args: &[&str],
    end: End,
    vars: &[&str],
    prelude: &[&str],
) -> (Recorded, Recorded) {
    let prog = prog.to_path_buf();
    let dir = workdir(name);
    let code = match end {
        End::Exit(c) => c,
        End::Signal(sig, _, _) => 128 + sig,
    };
    let a = record(&dir, "a", &prog, args, None, code);
    let b = record(&dir, "b", &prog, args, None, code);
    assert_ne!(
        a.run.stdout, b.run.stdout,
        "two runs of {name} printed the same: the test proves nothing"
    );
    let mut cmds: Vec<&str> = prelude.to_vec();
    cmds.extend_from_slice(match end {
        End::Exit(_) => &["continue"],
        End::Signal(..) => &["continue", "continue"],
    });
    let r = replay(&a.trace, &cmds);
    assert_replayed_whole(&a, &r, end);
    r.code(0);
    let cmds = break_cmds(name, "", vars);
    let cmds: Vec<&str> = prelude
        .iter()
        .copied()
        .chain(cmds.iter().map(String::as_str))
        .collect();
    let r = replay(&b.trace, &cmds);
    assert_values_at_break(&b, name, "", vars, &r);
    r.code(0);
    (a, b)
}

/// FNV-1a, 64 bits (as rr_readfile.c computes it).
fn fnv(data: &[u8]) -> u64 {
    data.iter().fold(14695981039346656037u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(1099511628211)
    })
}

/// Some bytes that differ from test run to test run.
fn fresh_text(tag: &str, lines: usize) -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let mut s = format!("{tag} {t} {}\n", std::process::id());
    let mut x = (t as u64) | 1;
    for i in 0..lines {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.push_str(&format!("{i} {x:016x}\n"));
    }
    s
}

/// The event stream file of the recorded process `pid` (the root's when `pid` is None).
fn events_file(trace: &Path, pid: Option<i32>) -> PathBuf {
    let dir = trace.join("events");
    match pid {
        Some(p) => dir.join(p.to_string()),
        None => {
            // The root process has the lowest pid unless pids wrapped: take the largest file.
            let mut files: Vec<(u64, PathBuf)> = std::fs::read_dir(&dir)
                .expect("events dir")
                .flatten()
                .map(|e| (e.metadata().map(|m| m.len()).unwrap_or(0), e.path()))
                .collect();
            files.sort();
            files.pop().expect("an events file").1
        }
    }
}

/// A copy of a trace directory (to damage it).
fn copy_trace(from: &Path, to: &Path) {
    let st = Command::new("cp")
        .arg("-r")
        .arg(from)
        .arg(to)
        .status()
        .expect("cp");
    assert!(st.success());
}

// ---------------------------------------------------------------------------------------------
// One test per program

#[test]
fn urandom_bytes_come_back() {
    round_trip("rr_urandom", &[], End::Exit(0), &["word", "tail"]);
}

#[test]
fn getrandom_comes_back() {
    round_trip("rr_getrandom", &[], End::Exit(0), &["first", "last", "sum"]);
}

#[test]
fn rdtsc_and_rdtscp_come_back() {
    let (a, b) = round_trip(
        "rr_rdtsc",
        &[],
        End::Exit(0),
        &["t1", "t2", "t3", "low", "mix"],
    );
    // The counter was answered in order (the recorder did not make values up).
    assert_eq!(a.value("ordered"), "1");
    assert_eq!(b.value("ordered"), "1");
}

#[test]
fn clocks_come_back() {
    let (a, _) = round_trip(
        "rr_clock",
        &[],
        End::Exit(0),
        &[
            "rt_sec",
            "rt_nsec",
            "mono_nsec",
            "usec",
            "now_sec",
            "elapsed",
        ],
    );
    assert_eq!(a.value("consistent"), "1", "{}", a.run.stdout);
    // The recorded wall clock is the real one (within a day).
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs() as i64;
    let rt: i64 = a.value("rt_sec").parse().expect("rt_sec");
    assert!((now - rt).abs() < 86400, "rt_sec={rt}, now={now}");
}

#[test]
fn pids_come_back_as_recorded() {
    let (a, b) = round_trip("rr_getpid", &[], End::Exit(0), &["pid", "ppid", "tid"]);
    for rec in [&a, &b] {
        let pid = rec.value("pid");
        // `info` names the recorded process by the pid the program saw.
        let info = hs_in(
            &rec.trace.parent().unwrap().join("root"),
            rec.trace.parent().unwrap(),
            None,
            &[os("info"), rec.trace.as_os_str()],
        );
        info.code(0).has(&format!("process {pid}"));
    }
}

#[test]
fn threads_with_a_mutex_and_condition_variables() {
    let (a, _) = round_trip("rr_prodcons", &[], End::Exit(0), &["sum", "order"]);
    assert_eq!(
        a.run
            .stdout
            .lines()
            .filter(|l| l.starts_with("item "))
            .count(),
        50
    );
    // Replaying the same trace again gives the same output, interleaving included.
    let r1 = replay(&a.trace, &["continue"]);
    let r2 = replay(&a.trace, &["continue"]);
    let (l1, l2) = (program_lines(&r1), program_lines(&r2));
    // (The exit line names the process, compared elsewhere.)
    assert_eq!(l1[..l1.len() - 1], l2[..l2.len() - 1]);
    // The threads are announced as gdb does.
    assert_eq!(r1.count("[New Thread {hex} (LWP {n})]"), 3, "{}", r1.stdout);
}

#[test]
fn a_thread_spinning_without_syscalls_is_preempted_and_replayed() {
    round_trip("rr_spin", &[], End::Exit(0), &["work", "spins"]);
}

#[test]
fn cpu_bound_threads_preempted_between_mutex_handoffs() {
    // Short time slices: each worker is preempted in the middle of its syscall-free rounds,
    // again and again, and replay must stop it at exactly the same instruction each time.
    let prog = compile("rr_workers", &[]);
    let dir = workdir("rr_workers_sliced");
    let opts = ["--time-slice", "2"];
    let a = record_with(&dir, "a", &opts, &prog, &[], None, 0);
    let b = record_with(&dir, "b", &opts, &prog, &[], None, 0);
    assert_ne!(a.run.stdout, b.run.stdout, "two runs printed the same");
    for rec in [&a, &b] {
        let events = hs_in(
            &dir.join("root"),
            &dir,
            None,
            &[os("info"), os("--events"), rec.trace.as_os_str()],
        );
        let switches = events
            .stdout
            .lines()
            .filter(|l| l.contains("] a thread switch at 0x"))
            .count();
        assert!(
            switches >= 4,
            "only {switches} preemptions\n{}",
            events.stdout
        );
    }
    let r = replay(&a.trace, &["continue"]);
    assert_replayed_whole(&a, &r, End::Exit(0));
    // Replaying the same trace again gives the same interleaving.
    let r = replay(&a.trace, &["continue"]);
    assert_replayed_whole(&a, &r, End::Exit(0));
    let cmds = break_cmds("rr_workers", "", &["value", "order"]);
    let cmds: Vec<&str> = cmds.iter().map(String::as_str).collect();
    let r = replay(&b.trace, &cmds);
    assert_values_at_break(&b, "rr_workers", "", &["value", "order"], &r);
}

#[test]
fn setitimer_signals_in_a_loop_without_syscalls() {
    let (a, _) = round_trip("rr_itimer", &[], End::Exit(0), &["loops", "seen"]);
    assert!(a.value("seen").parse::<i32>().unwrap() >= 20);
}

#[test]
fn posix_timer_signals_in_a_loop_without_syscalls() {
    // The loop's counter is a global that no register holds at most pcs: the recorder
    // delivers each signal a few instructions on, where the state tells the iteration.
    let (a, _) = round_trip("rr_timer", &[], End::Exit(0), &["loops", "value"]);
    assert_eq!(a.value("value"), "4242");
}

#[test]
fn timer_signals_in_optimised_loops_land_on_the_same_iteration() {
    // At -O1 and -O2 the loops are a handful of instructions around a volatile counter, on
    // the stack (rr_itimer) or global (rr_timer).
    for (name, opt) in [
        ("rr_itimer", "-O1"),
        ("rr_itimer", "-O2"),
        ("rr_timer", "-O1"),
        ("rr_timer", "-O2"),
    ] {
        let prog = compile(name, &[opt]);
        let dir = workdir(&format!("{name}{opt}"));
        let a = record(&dir, "a", &prog, &[], None, 0);
        let r = replay(&a.trace, &["continue"]);
        assert_replayed_whole(&a, &r, End::Exit(0));
    }
}

#[test]
fn signals_let_in_by_a_syscalls_mask_and_a_restarted_poll() {
    // sigsuspend, ppoll and pselect take their signal through a temporary mask, which the
    // handler's frame records (replay runs them for real, the signal already pending); a
    // poll interrupted by SIGCHLD without a handler is resumed by restart_syscall, which
    // must write what poll writes (revents).
    let quiet = [
        "handle SIGUSR1 nostop noprint",
        "handle SIGUSR2 nostop noprint",
        "handle SIGALRM nostop noprint",
        "handle SIGCHLD nostop noprint",
    ];
    let (a, b) = round_trip_with("rr_sigwait", &[], End::Exit(0), &["nonce"], &quiet);
    for rec in [&a, &b] {
        assert!(
            rec.run
                .stdout
                .contains("suspended=10 r1=-1\nppolled=12 r2=-1\npselected=14 r3=-1\n"),
            "{}",
            rec.run.stdout
        );
        assert!(
            rec.run.stdout.contains("revents=1 r4=1"),
            "{}",
            rec.run.stdout
        );
    }
}

#[test]
fn memory_shared_with_a_child_or_changed_by_a_syscall() {
    let (a, _) = round_trip("rr_shared", &[], End::Exit(0), &["from_child", "seen"]);
    assert_ne!(a.value("from_child"), "0", "{}", a.run.stdout);
}

#[test]
fn job_control_signals_are_named_and_sigcont_is_replayed() {
    let prog = compile("rr_stopsigs", &[]);
    let dir = workdir("rr_stopsigs");
    let a = record(&dir, "a", &prog, &[], None, 0);
    assert!(a.run.stdout.contains("caught=81"), "{}", a.run.stdout);
    let r = replay(&a.trace, &["continue"; 5]);
    r.code(0)
        .seq(&[
            "Program received signal SIGTTIN, Stopped (tty input).",
            "Program received signal SIGTTOU, Stopped (tty output).",
            "Program received signal SIGTSTP, Stopped (user).",
            "Program received signal SIGCONT, Continued.",
            "caught=81",
            "[Inferior 1 (process {n}) exited normally]",
        ])
        .lacks("diverged");
}

#[test]
fn calls_that_a_stop_interrupted_are_restarted_as_the_kernel_did() {
    // A thread blocked in a read and one in a condition wait when the process is stopped
    // (SIGSTOP, then a child's SIGCONT): a call the stop reaches ends with -ERESTARTSYS, no
    // signal of that thread follows, and the kernel restarts it. A replay that let the
    // program see the code would take the error path; a position recorded there would be out
    // of reach. Whether the stop reaches a call before the data does varies from run to run:
    // round trips (each replayed exactly) until a recording has such a call.
    let quiet = [
        "handle SIGSTOP nostop noprint",
        "handle SIGCONT nostop noprint",
    ];
    let interrupted = |rec: &Recorded| {
        let events = info_events(rec);
        ["read", "futex"].iter().any(|call| {
            events
                .stdout
                .contains(&format!("the return of {call} = 0xfffffffffffffe00"))
        })
    };
    let found = (0..6).any(|_| {
        let (a, b) = round_trip_with(
            "restart_stopped",
            &[],
            End::Exit(0),
            &["got", "woke"],
            &quiet,
        );
        interrupted(&a) || interrupted(&b)
    });
    assert!(
        found,
        "no recording had a read or futex interrupted by the stop (-ERESTARTSYS)"
    );
}

#[test]
fn two_signals_pending_at_once_for_a_blocked_thread() {
    let quiet = [
        "handle SIGUSR1 nostop noprint",
        "handle SIGUSR2 nostop noprint",
    ];
    let (a, _) = round_trip_with("rr_pending", &[], End::Exit(0), &["nonce"], &quiet);
    assert!(a.run.stdout.contains("handled SIGUSR"), "{}", a.run.stdout);
    assert!(a.run.stdout.contains("read=K"), "{}", a.run.stdout);
}

#[test]
fn a_script_is_recorded_through_its_interpreter() {
    // As rr does (gdb refuses to debug a script): the kernel runs the interpreter, which the
    // recording follows; the output differs from run to run.
    use std::os::unix::fs::PermissionsExt;
    let dir = workdir("script");
    let script = dir.join("nonce.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\necho \"pid=$$\"\necho \"nanos=$(date +%N)\"\n",
    )
    .expect("write the script");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let a = record(&dir, "a", &script, &[], None, 0);
    let b = record(&dir, "b", &script, &[], None, 0);
    assert_ne!(a.run.stdout, b.run.stdout, "two runs printed the same");
    let r = replay(&a.trace, &["continue"]);
    assert_replayed_whole(&a, &r, End::Exit(0));
}

#[test]
fn two_threads_yielding_to_each_other_take_turns() {
    // sched_yield hands the turn to the other thread, also when that one is itself inside
    // sched_yield (the recorder had each thread run several rounds in a row: ~80 of 400).
    let (a, b) = round_trip("rr_pingpong", &[], End::Exit(0), &["result", "misses"]);
    for rec in [&a, &b] {
        assert_eq!(rec.value("misses"), "0", "{}", rec.run.stdout);
    }
}

#[test]
fn fork_and_pipe() {
    let (a, b) = round_trip(
        "rr_forkpipe",
        &[],
        End::Exit(0),
        &["child_value", "child_pid"],
    );
    for rec in [&a, &b] {
        assert_eq!(rec.value("child_code"), "7");
        assert_eq!(rec.value("child_pid"), rec.value("fork_result"));
    }
}

#[test]
fn popen_of_shell_commands() {
    let (a, _) = round_trip(
        "rr_popen",
        &[],
        End::Exit(0),
        &["nanos", "random", "shell_pid"],
    );
    assert_eq!(a.value("status"), "0,0,0");
    // The shells are processes of the trace.
    let dir = a.trace.parent().unwrap();
    let info = hs_in(
        &dir.join("root"),
        dir,
        None,
        &[os("info"), a.trace.as_os_str()],
    );
    info.code(0)
        .has(&format!("process {}", a.value("shell_pid")));
}

#[test]
fn system_and_the_commands_output() {
    let (a, _) = round_trip("rr_system", &[], End::Exit(0), &["code", "ok"]);
    assert_eq!(a.value("code"), "5");
    assert_eq!(a.value("ok"), "1");
    assert!(a.run.stdout.contains("\nnanos ") && a.run.stdout.contains("\nbytes "));
}

#[test]
fn a_crash_after_a_random_value() {
    let (a, _) = round_trip(
        "rr_crash",
        &[],
        End::Signal(11, "SIGSEGV", "Segmentation fault"),
        &["value"],
    );
    // The replay stops where the recorded run crashed.
    let r = replay(&a.trace, &["continue", "print value", "backtrace"]);
    let line = line_of("rr_crash", "*nowhere = value;");
    r.line("Program received signal SIGSEGV, Segmentation fault.")
        .line(&format!("{{hex}} in main () at rr_crash.c:{line}"))
        .line(&format!("$1 = {}", a.value("value")))
        .line(&format!("#0  {{hex}} in main () at rr_crash.c:{line}"))
        .lacks("not reached");
}

#[test]
fn a_write_into_a_closed_pipe_kills_with_sigpipe_as_without_hindsight() {
    round_trip(
        "rr_sigpipe",
        &[],
        End::Signal(13, "SIGPIPE", "Broken pipe"),
        &["value"],
    );
}

#[test]
fn abort_after_a_random_value() {
    round_trip(
        "rr_abort",
        &[],
        End::Signal(6, "SIGABRT", "Aborted"),
        &["value"],
    );
}

#[test]
fn many_events_over_several_frames() {
    let (a, _) = round_trip("rr_chatty", &[], End::Exit(0), &["total"]);
    assert_eq!(a.run.stdout.lines().count(), 201);
}

#[test]
fn signals_raised_sent_to_a_blocked_thread_and_sigchld() {
    // As in gdb, SIGUSR1 and SIGUSR2 would stop the program; let them through.
    let (a, b) = round_trip_with(
        "rr_signals",
        &[],
        End::Exit(0),
        &["tsc", "sent", "received", "child_code"],
        &[
            "handle SIGUSR1 nostop noprint",
            "handle SIGUSR2 nostop noprint",
        ],
    );
    for rec in [&a, &b] {
        assert_eq!(rec.value("handlers"), "1,1,1", "{}", rec.run.stdout);
        assert_eq!(rec.value("sent"), rec.value("received"));
    }
}

#[test]
fn exec_of_itself_with_a_random_argument() {
    let (a, b) = round_trip(
        "rr_exec",
        &[],
        End::Exit(3),
        &["combined", "inherited", "pid2"],
    );
    for rec in [&a, &b] {
        assert_eq!(rec.value("pid1"), rec.value("pid2"));
        assert_eq!(rec.value("value1"), rec.value("inherited"));
    }
}

#[test]
fn what_the_system_says_about_itself() {
    round_trip(
        "rr_sysinfo",
        &[],
        End::Exit(0),
        &[
            "ticks",
            "starttime",
            "freeram",
            "uptime",
            "entries",
            "cpu",
            "minflt",
            "exe_len",
        ],
    );
}

#[test]
fn the_kernels_random_bytes_and_the_stack_canary() {
    let (a, _) = round_trip("rr_atrandom", &[], End::Exit(0), &["lo", "hi", "canary"]);
    // glibc's canary is AT_RANDOM's first word with its low byte zeroed.
    let lo: u64 = a.value("lo").parse().unwrap();
    assert_eq!(a.value("canary"), (lo & !0xff).to_string());
}

#[test]
fn waits_with_timeouts() {
    let (a, _) = round_trip(
        "rr_poll",
        &[],
        End::Exit(0),
        &["waited", "slept", "byte", "token"],
    );
    assert_eq!(a.value("token"), 0x1234567890abcdefu64.to_string());
    assert_eq!(a.value("results"), "0,0,0,1,1,1", "{}", a.run.stdout);
}

#[test]
fn a_descriptor_passed_over_a_socket_a_memfd_and_datagrams() {
    let (a, _) = round_trip(
        "rr_sockets",
        &[],
        End::Exit(0),
        &["first", "second", "via_pread", "dgram"],
    );
    assert_eq!(a.value("checks"), "20,1,1,1,8", "{}", a.run.stdout);
}

#[test]
fn a_memfd_mapped_shared_and_private() {
    let (a, _) = round_trip(
        "rr_memfd",
        &[],
        End::Exit(0),
        &["shared_word", "private_word", "sum"],
    );
    assert_eq!(a.value("checks"), "1,1", "{}", a.run.stdout);
}

#[test]
fn posix_spawn_of_a_shell() {
    let (a, _) = round_trip("rr_spawn", &[], End::Exit(0), &["spawned", "code"]);
    assert_eq!(a.value("code"), "4");
    // The shell on its own.
    let shell = a.value("spawned");
    let line = a
        .run
        .stdout
        .lines()
        .find(|l| l.starts_with(&format!("spawned {shell} ")))
        .unwrap_or_else(|| panic!("no line of the shell in\n{}", a.run.stdout))
        .to_string();
    let r = replay_with(&a.trace, &["--process", &shell], &["continue"]);
    assert_eq!(
        program_lines(&r).first().copied(),
        Some(line.as_str()),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
    r.line(&exit_pattern(4)).lacks("spawned=").code(0);
}

#[test]
fn the_recorded_environment_and_working_directory() {
    let prog = compile("rr_env", &[]);
    let dir = workdir("env");
    let here = dir.join("recorded-here");
    std::fs::create_dir(&here).unwrap();
    let token = fresh_text("token", 0).trim().replace(' ', "-");
    let trace = dir.join("trace");
    let run = hs_env(
        &dir.join("root"),
        &here,
        None,
        &[("RR_TOKEN", &token)],
        &[
            os("record"),
            os("-o"),
            trace.as_os_str(),
            os("--"),
            prog.as_os_str(),
        ],
    );
    run.code(0);
    let rec = Recorded { run, trace };
    assert_eq!(rec.value("token"), token);
    assert_eq!(rec.value("cwd"), here.to_str().unwrap());
    // Replayed from elsewhere, without the variable, after the directory is gone.
    std::fs::remove_dir(&here).unwrap();
    let r = replay(&rec.trace, &["continue"]);
    assert_replayed_whole(&rec, &r, End::Exit(0));
    let cmds = break_cmds("rr_env", "", &["token_len", "cwd_len"]);
    let cmds: Vec<&str> = cmds.iter().map(String::as_str).collect();
    let r = replay(&rec.trace, &cmds);
    assert_values_at_break(&rec, "rr_env", "", &["token_len", "cwd_len"], &r);
}

// ---------------------------------------------------------------------------------------------
// Inputs, outputs and the outside world

#[test]
fn a_file_and_stdin_are_read_from_the_recording() {
    let prog = compile("rr_readfile", &[]);
    let dir = workdir("readfile");
    let data = dir.join("data.txt");
    let input = dir.join("input.txt");
    let content = fresh_text("file", 300);
    let stdin = fresh_text("stdin", 200);
    std::fs::write(&data, &content).unwrap();
    std::fs::write(&input, &stdin).unwrap();
    let rec = record(
        &dir,
        "trace",
        &prog,
        &[data.to_str().unwrap()],
        Some(&input),
        0,
    );
    // The recording read what was there.
    assert_eq!(rec.value("file_sum"), fnv(content.as_bytes()).to_string());
    assert_eq!(rec.value("file_len"), content.len().to_string());
    assert_eq!(rec.value("first"), content.lines().next().unwrap());
    assert_eq!(rec.value("stdin_sum"), fnv(stdin.as_bytes()).to_string());
    assert_eq!(rec.value("stdin_len"), stdin.len().to_string());
    // The file changes, then vanishes; the replay has no stdin: it reads the recording.
    std::fs::write(&data, "something else\n").unwrap();
    let r = replay(&rec.trace, &["continue"]);
    assert_replayed_whole(&rec, &r, End::Exit(0));
    std::fs::remove_file(&data).unwrap();
    let cmds = break_cmds(
        "rr_readfile",
        "",
        &["file_sum", "file_len", "stdin_sum", "stdin_len"],
    );
    let cmds: Vec<&str> = cmds.iter().map(String::as_str).collect();
    let r = replay(&rec.trace, &cmds);
    assert_values_at_break(
        &rec,
        "rr_readfile",
        "",
        &["file_sum", "file_len", "stdin_sum", "stdin_len"],
        &r,
    );
}

#[test]
fn a_mapped_file_is_replayed_from_its_copy() {
    let prog = compile("rr_mmap", &[]);
    let dir = workdir("mmap");
    let data = dir.join("mapped.txt");
    let content = fresh_text("mapped", 2000);
    std::fs::write(&data, &content).unwrap();
    let rec = record(&dir, "trace", &prog, &[data.to_str().unwrap()], None, 0);
    let sum = content
        .bytes()
        .fold(0u64, |h, b| h.wrapping_mul(131).wrapping_add(u64::from(b)));
    assert_eq!(rec.value("checksum"), sum.to_string());
    assert_eq!(rec.value("first"), content.lines().next().unwrap());
    // Rewritten in place (same size, other bytes), then removed.
    let other: String = content
        .chars()
        .map(|c| if c == '\n' { c } else { 'x' })
        .collect();
    std::fs::write(&data, &other).unwrap();
    let r = replay(&rec.trace, &["continue"]);
    assert_replayed_whole(&rec, &r, End::Exit(0));
    std::fs::remove_file(&data).unwrap();
    let cmds = break_cmds("rr_mmap", "", &["checksum", "size"]);
    let cmds: Vec<&str> = cmds.iter().map(String::as_str).collect();
    let r = replay(&rec.trace, &cmds);
    assert_values_at_break(&rec, "rr_mmap", "", &["checksum", "size"], &r);
    // The mapping itself holds the recorded bytes.
    let r = replay(
        &rec.trace,
        &[cmds[0], cmds[1], "print (char)p[0]", "print p[1] == 'a'"],
    );
    r.line(&format!("$1 = {} '{}'", b'm', 'm')).line("$2 = 1");
}

#[test]
fn a_file_deleted_before_it_is_mapped_is_recorded_through_its_descriptor() {
    let prog = compile("rr_mmap", &[]);
    let dir = workdir("mmap-deleted");
    let data = dir.join("gone.txt");
    let content = fresh_text("deleted", 1500);
    std::fs::write(&data, &content).unwrap();
    let rec = record(
        &dir,
        "trace",
        &prog,
        &[data.to_str().unwrap(), "unlink"],
        None,
        0,
    );
    assert!(!data.exists());
    let sum = content
        .bytes()
        .fold(0u64, |h, b| h.wrapping_mul(131).wrapping_add(u64::from(b)));
    assert_eq!(rec.value("checksum"), sum.to_string());
    let r = replay(&rec.trace, &["continue"]);
    assert_replayed_whole(&rec, &r, End::Exit(0));
}

#[test]
fn a_replay_writes_no_file_and_removes_none() {
    let prog = compile("rr_effects", &[]);
    let dir = workdir("effects");
    let newfile = dir.join("created.txt");
    let oldfile = dir.join("doomed.txt");
    let newdir = dir.join("made");
    std::fs::write(&oldfile, "old\n").unwrap();
    let args = [
        newfile.to_str().unwrap(),
        oldfile.to_str().unwrap(),
        newdir.to_str().unwrap(),
    ];
    let rec = record(&dir, "trace", &prog, &args, None, 0);
    let written = std::fs::read_to_string(&newfile).expect("the recorded run wrote the file");
    assert_eq!(written, format!("written {}\n", rec.value("value")));
    assert!(!oldfile.exists() && newdir.is_dir());
    // Undo the recorded run's effects; the replay must not redo them.
    std::fs::remove_file(&newfile).unwrap();
    std::fs::remove_dir(&newdir).unwrap();
    std::fs::write(&oldfile, "still here\n").unwrap();
    let r = replay(&rec.trace, &["continue"]);
    assert_replayed_whole(&rec, &r, End::Exit(0));
    assert!(!newfile.exists(), "the replay wrote {}", newfile.display());
    assert!(!newdir.exists(), "the replay made {}", newdir.display());
    assert_eq!(
        std::fs::read_to_string(&oldfile).ok().as_deref(),
        Some("still here\n"),
        "the replay removed {}",
        oldfile.display()
    );
    // And the replayed syscalls still answered as recorded.
    assert_eq!(value_of(&r.stdout, "results"), rec.value("results"));
}

// ---------------------------------------------------------------------------------------------
// The debugger on a replay

#[test]
fn quiet_replay_silences_the_program() {
    let prog = compile("rr_getpid", &[]);
    let dir = workdir("quiet");
    let rec = record(&dir, "trace", &prog, &[], None, 0);
    let r = replay_with(&rec.trace, &["-q"], &["continue"]);
    r.line(&exit_pattern(0)).code(0);
    for l in rec.run.stdout.lines() {
        r.no_line(l);
    }
    assert!(
        !r.stderr.contains(&rec.program_stderr()),
        "-q let the program's stderr through:\n{}",
        r.stderr
    );
}

#[test]
fn a_replay_starts_stopped_before_the_first_instruction() {
    let prog = compile("rr_urandom", &[]);
    let dir = workdir("stopped");
    let rec = record(&dir, "trace", &prog, &[], None, 0);
    // Nothing has run yet: no output, and main is still ahead.
    let r = replay(&rec.trace, &["info registers rip"]);
    r.line("rip {*}");
    for l in rec.run.stdout.lines() {
        r.no_line(l);
    }
    let r = replay(&rec.trace, &["break main", "continue", "backtrace"]);
    r.line("Breakpoint 1, main () at rr_urandom.c:{n}")
        .line("#0  main () at rr_urandom.c:{n}");
    for l in rec.run.stdout.lines() {
        r.no_line(l);
    }
}

#[test]
fn run_replays_again_with_the_same_values() {
    let prog = compile("rr_urandom", &[]);
    let dir = workdir("rerun");
    let rec = record(&dir, "trace", &prog, &[], None, 0);
    let line = marked_line("rr_urandom", "");
    let r = replay(
        &rec.trace,
        &[
            &format!("break rr_urandom.c:{line}"),
            "continue",
            "print word",
            "continue",
            "run",
            "print word",
            "print tail",
        ],
    );
    let word = rec.value("word");
    r.line(&format!("$1 = {word}"))
        .line(&format!("$2 = {word}"))
        .line(&format!("$3 = {}", rec.value("tail")))
        .line(&exit_pattern(0));
    assert_eq!(
        r.count(&format!("hex={}", rec.value("hex"))),
        2,
        "{}",
        r.stdout
    );
}

#[test]
fn a_watchpoint_and_next_in_a_replay() {
    let prog = compile("rr_chatty", &[]);
    let dir = workdir("watch");
    let rec = record(&dir, "trace", &prog, &[], None, 0);
    let block = |i: usize| -> u64 {
        rec.run
            .stdout
            .lines()
            .nth(i)
            .and_then(|l| l.strip_prefix(&format!("block {i}: ")))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no block {i} in\n{}", rec.run.stdout))
    };
    let (b0, b1) = (block(0), block(1));
    let line = line_of("rr_chatty", "for (int i = 0; i < 200; i++)");
    let r = replay(
        &rec.trace,
        &[
            &format!("break rr_chatty.c:{line}"),
            "continue",
            "print total",
            "watch total",
            "continue",
            "continue",
            "print i",
            "print sum",
            "next",
            "print total",
        ],
    );
    r.line(&format!("Breakpoint 1, main () at rr_chatty.c:{line}"))
        .line("$1 = 0")
        .line("Hardware watchpoint 2: total")
        .seq(&[
            "Old value = 0",
            &format!("New value = {b0}"),
            &format!("Old value = {b0}"),
            &format!("New value = {}", b0 ^ b1),
            "$2 = 1",
            &format!("$3 = {b1}"),
            &format!("block 1: {b1}"),
            &format!("$4 = {}", b0 ^ b1),
        ])
        .order(
            &format!("block 0: {b0}\n"),
            &format!("New value = {}", b0 ^ b1),
        )
        .code(0);
    // Block 2 was never printed: the replay stopped there.
    r.lacks(&format!("block 2: {}", block(2)));
}

// ---------------------------------------------------------------------------------------------
// Processes

#[test]
fn a_child_process_replays_on_its_own() {
    let prog = compile("rr_forkpipe", &[]);
    let dir = workdir("child");
    let rec = record(&dir, "trace", &prog, &[], None, 0);
    let child = rec.value("child_pid");
    let parent = rec.value("parent");
    // `info` lists both processes with their recorded pids.
    let info = hs_in(
        &dir.join("root"),
        &dir,
        None,
        &[os("info"), rec.trace.as_os_str()],
    );
    info.code(0)
        .has(&format!("process {parent}"))
        .has(&format!("process {child}"));
    // The child alone, to the end: its output, not its parent's, and its exit code.
    let r = replay_with(&rec.trace, &["--process", &child], &["continue"]);
    let child_line = format!("child {child}: value={}", rec.value("child_value"));
    assert_eq!(
        program_lines(&r).first().copied(),
        Some(child_line.as_str()),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
    r.line(&exit_pattern(7))
        .lacks("parent=")
        .lacks("child_value=")
        .code(0);
    // Stopped in the child: the value and the pid it saw.
    let line = marked_line("rr_forkpipe", "child");
    let r = replay_with(
        &rec.trace,
        &["--process", &child],
        &[
            &format!("break rr_forkpipe.c:{line}"),
            "continue",
            "print value",
            "print me",
            "backtrace",
        ],
    );
    r.line(&format!(
        "Breakpoint 1, child (out={{n}}) at rr_forkpipe.c:{line}"
    ))
    .line(&format!("$1 = {}", rec.value("child_value")))
    .line(&format!("$2 = {child}"))
    .line("#1  {hex} in main () at rr_forkpipe.c:{n}")
    .lacks("parent=");
}

#[test]
fn the_replay_names_the_process_by_its_recorded_pid() {
    // `info` and `--process` speak of recorded pids, and getpid() answers with them; gdb on a
    // replay (rr) shows them in its exit line too.
    let prog = compile("rr_getpid", &[]);
    let dir = workdir("recorded-pid");
    let rec = record(&dir, "trace", &prog, &[], None, 0);
    let r = replay(&rec.trace, &["continue"]);
    r.line(&format!(
        "[Inferior 1 (process {}) exited normally]",
        rec.value("pid")
    ));
    let prog = compile("rr_forkpipe", &[]);
    let rec = record(&dir, "fork", &prog, &[], None, 0);
    let child = rec.value("child_pid");
    let r = replay_with(&rec.trace, &["--process", &child], &["continue"]);
    r.line(&format!(
        "[Inferior 1 (process {child}) exited with code 07]"
    ));
}

#[test]
fn a_process_that_is_not_in_the_trace_is_refused() {
    let prog = compile("rr_urandom", &[]);
    let dir = workdir("noprocess");
    let rec = record(&dir, "trace", &prog, &[], None, 0);
    let r = replay_with(&rec.trace, &["--process", "1"], &["continue"]);
    assert!(r.code != 0, "exit status {}", r.code);
    assert!(
        r.stderr
            .split(|c: char| !c.is_ascii_digit())
            .any(|w| w == "1"),
        "the error names process 1: {}",
        r.stderr
    );
    r.lacks(&rec.value("word"));
}

// ---------------------------------------------------------------------------------------------
// Where traces go: ls, info, latest-trace

#[test]
fn traces_under_hindsight_dir_and_the_latest_one() {
    let prog = compile("rr_urandom", &[]);
    let dir = workdir("latest");
    let root = dir.join("root");
    let rec = |_: u32| {
        let r = hs_in(&root, &dir, None, &[os("record"), prog.as_os_str()]);
        r.code(0);
        let last = r.stderr.lines().last().unwrap_or("").to_string();
        let path = last
            .strip_prefix("hindsight: trace saved to ")
            .unwrap_or_else(|| panic!("last line on stderr: {last:?}"))
            .to_string();
        (r, PathBuf::from(path))
    };
    let (r1, p1) = rec(1);
    let (r2, p2) = rec(2);
    assert_ne!(p1, p2);
    for p in [&p1, &p2] {
        let p = if p.is_absolute() {
            p.clone()
        } else {
            dir.join(p)
        };
        assert!(
            p.starts_with(&root),
            "{} is not under $HINDSIGHT_DIR",
            p.display()
        );
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        assert!(matches("rr_urandom-{n}", &name), "trace named {name}");
    }
    assert!(root.join("latest-trace").exists());
    // No argument: the latest.
    let r = hs_in(
        &root,
        &dir,
        None,
        &[os("replay"), os("--batch"), os("-ex"), os("continue")],
    );
    r.code(0).line(&exit_pattern(0));
    assert_eq!(
        program_lines(&r)[..3],
        r2.stdout.lines().collect::<Vec<_>>()[..]
    );
    assert_ne!(r1.stdout, r2.stdout);
    // The first one by its name.
    let r = hs_in(
        &root,
        &dir,
        None,
        &[
            os("replay"),
            p1.file_name().unwrap(),
            os("--batch"),
            os("-ex"),
            os("continue"),
        ],
    );
    assert_eq!(
        program_lines(&r)[..3],
        r1.stdout.lines().collect::<Vec<_>>()[..]
    );
    // info without argument: the latest.
    let info = hs_in(&root, &dir, None, &[os("info")]);
    info.code(0)
        .has(&p2.file_name().unwrap().to_string_lossy())
        .has("rr_urandom");
}

#[test]
fn ls_and_info_show_programs_and_how_they_ended() {
    let dir = workdir("ls");
    let root = dir.join("root");
    let urandom = compile("rr_urandom", &[]);
    let crash = compile("rr_crash", &[]);
    let readfile = compile("rr_readfile", &[]);
    let prodcons = compile("rr_prodcons", &[]);
    for (prog, code) in [(&urandom, 0), (&crash, 139), (&readfile, 2), (&prodcons, 0)] {
        hs_in(&root, &dir, None, &[os("record"), prog.as_os_str()]).code(code);
    }
    let ls = hs_in(&root, &dir, None, &[os("ls")]);
    ls.code(0);
    let line_of_prog = |name: &str| -> String {
        let found: Vec<&str> = ls
            .stdout
            .lines()
            .filter(|l| l.contains(&format!("{name}-0")))
            .collect();
        assert_eq!(found.len(), 1, "one line for {name}-0 in\n{}", ls.stdout);
        found[0].to_string()
    };
    let l = line_of_prog("rr_crash");
    assert!(l.contains("SIGSEGV"), "{l}");
    let l = line_of_prog("rr_readfile");
    assert!(
        l.split_whitespace()
            .any(|w| w.trim_matches(|c: char| !c.is_ascii_alphanumeric()) == "2"),
        "exit status 2 not shown: {l}"
    );
    let l = line_of_prog("rr_urandom");
    assert!(l.contains("rr_urandom") && !l.contains("SIG"), "{l}");
    assert!(ls.stdout.contains(&crash.display().to_string()) || ls.stdout.contains("rr_crash"));
    // info: program, arguments, threads, processes.
    let info = hs_in(&root, &dir, None, &[os("info"), os("rr_prodcons-0")]);
    info.code(0).has(&prodcons.display().to_string());
    let threads = info
        .stdout
        .lines()
        .find(|l| l.to_lowercase().contains("threads"))
        .unwrap_or_else(|| panic!("no thread count in\n{}", info.stdout));
    assert!(threads.contains('4'), "4 threads: {threads}");
    let info = hs_in(&root, &dir, None, &[os("info"), os("rr_crash-0")]);
    info.code(0)
        .has("SIGSEGV")
        .has(&crash.display().to_string());
}

// ---------------------------------------------------------------------------------------------
// Refusals and damaged traces

#[test]
fn recording_over_an_existing_directory_fails_and_leaves_it_alone() {
    let prog = compile("rr_effects", &[]);
    let dir = workdir("exists");
    let target = dir.join("taken");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("keep.txt"), "precious\n").unwrap();
    let newfile = dir.join("created.txt");
    let oldfile = dir.join("doomed.txt");
    let newdir = dir.join("made");
    std::fs::write(&oldfile, "old\n").unwrap();
    let args = [
        newfile.to_str().unwrap(),
        oldfile.to_str().unwrap(),
        newdir.to_str().unwrap(),
    ];
    let attempt = |target: &Path| {
        let mut v: Vec<&OsStr> = vec![
            os("record"),
            os("-o"),
            target.as_os_str(),
            os("--"),
            prog.as_os_str(),
        ];
        v.extend(args.iter().map(|a| os(a)));
        hs_in(&dir.join("root"), &dir, None, &v)
    };
    let r = attempt(&target);
    assert!(r.code > 0, "exit status {}\n{}", r.code, r.stderr);
    let lines: Vec<&str> = r.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line of error:\n{}", r.stderr);
    assert!(
        lines[0].contains("taken"),
        "the error names the directory: {}",
        lines[0]
    );
    let entries: Vec<_> = std::fs::read_dir(&target)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(entries, vec![std::ffi::OsString::from("keep.txt")]);
    assert_eq!(
        std::fs::read_to_string(target.join("keep.txt")).unwrap(),
        "precious\n"
    );
    // The program did not run.
    assert!(
        !newfile.exists() && oldfile.exists() && !newdir.exists(),
        "the program ran"
    );
    // An empty directory is not taken either.
    let empty = dir.join("empty");
    std::fs::create_dir(&empty).unwrap();
    let r = attempt(&empty);
    assert!(r.code > 0, "exit status {}\n{}", r.code, r.stderr);
    assert_eq!(std::fs::read_dir(&empty).unwrap().count(), 0);
    assert!(!newfile.exists(), "the program ran");
    // Nor is an existing trace: it still replays as before.
    let rec = record(&dir, "trace", &prog, &args, None, 0);
    std::fs::remove_file(&newfile).unwrap();
    std::fs::remove_dir(&newdir).unwrap();
    std::fs::write(&oldfile, "old\n").unwrap();
    let r = attempt(&rec.trace);
    assert!(r.code > 0, "exit status {}\n{}", r.code, r.stderr);
    assert!(!newfile.exists(), "the program ran");
    let r = replay(&rec.trace, &["continue"]);
    assert_replayed_whole(&rec, &r, End::Exit(0));
}

/// Asserts that a damaged trace gave a clean error or a partial replay: no panic, no death by
/// signal, the program's output a prefix of the recorded one, and some word about it.
fn assert_partial_or_error(rec: &Recorded, r: &Run) -> usize {
    assert!(r.code >= 0, "hindsight died\n{}\n{}", r.stdout, r.stderr);
    let recorded: Vec<&str> = rec.run.stdout.lines().collect();
    let got: Vec<&str> = program_lines(r)
        .into_iter()
        .take_while(|l| {
            !l.starts_with("No more reverse-execution history") && !l.starts_with("[Inferior 1")
        })
        .filter(|l| recorded.contains(l))
        .collect();
    assert!(
        got.len() <= recorded.len() && got[..] == recorded[..got.len()],
        "the damaged trace replayed something else than the recording\n--- replay ---\n{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("No more reverse-execution history") || !r.stderr.trim().is_empty(),
        "nothing said about the damage\n{}\n{}",
        r.stdout,
        r.stderr
    );
    got.len()
}

#[test]
fn a_truncated_trace_replays_up_to_its_last_whole_part() {
    let prog = compile("rr_chatty", &[]);
    let dir = workdir("truncated");
    let rec = record(&dir, "trace", &prog, &[], None, 0);
    let cut = dir.join("cut");
    copy_trace(&rec.trace, &cut);
    let events = events_file(&cut, None);
    let len = std::fs::metadata(&events).unwrap().len();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&events)
        .unwrap();
    f.set_len(len / 2).unwrap();
    drop(f);
    let r = replay(&cut, &["continue", "continue"]);
    let n = assert_partial_or_error(&rec, &r);
    // Not the whole run.
    assert!(
        n < 201,
        "a trace cut in half replayed to the end\n{}",
        r.stdout
    );
    r.lacks(&format!("total={}", rec.value("total")))
        .no_line(&exit_pattern(0));
    // info still works on it.
    hs_in(
        &dir.join("root"),
        &dir,
        None,
        &[os("info"), cut.as_os_str()],
    );
    // A one-frame trace cut in half, and an events file cut to nothing.
    let small = compile("rr_urandom", &[]);
    let rec = record(&dir, "small", &small, &[], None, 0);
    for keep in [2u64, 0] {
        let cut = dir.join(format!("small-cut-{keep}"));
        copy_trace(&rec.trace, &cut);
        let events = events_file(&cut, None);
        let len = std::fs::metadata(&events).unwrap().len();
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&events)
            .unwrap();
        f.set_len(len.checked_div(keep).unwrap_or(0)).unwrap();
        drop(f);
        let r = replay(&cut, &["continue", "continue"]);
        assert_partial_or_error(&rec, &r);
        r.no_line(&exit_pattern(0));
    }
}

#[test]
fn a_corrupted_trace_is_reported_not_replayed_past_the_damage() {
    let prog = compile("rr_chatty", &[]);
    let dir = workdir("corrupt");
    let rec = record(&dir, "trace", &prog, &[], None, 0);
    let bad = dir.join("bad");
    copy_trace(&rec.trace, &bad);
    let events = events_file(&bad, None);
    let mut bytes = std::fs::read(&events).unwrap();
    let mid = bytes.len() / 2;
    for b in &mut bytes[mid..mid + 16] {
        *b ^= 0xa5;
    }
    std::fs::write(&events, &bytes).unwrap();
    let r = replay(&bad, &["continue", "continue"]);
    assert_partial_or_error(&rec, &r);
    r.lacks(&format!("total={}", rec.value("total")))
        .no_line(&exit_pattern(0));
    // One line saying so, naming the damaged file (gdb's note about a stop's missing source
    // file, libc's when its debug information is installed, is not about the trace).
    let errs: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.ends_with(": No such file or directory."))
        .collect();
    assert_eq!(errs.len(), 1, "one line of error:\n{}", r.stderr);
    let name = events.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        errs[0].contains(&name),
        "the error names {name}: {}",
        errs[0]
    );
    // The header and the process list, damaged: an error, no panic.
    for file in ["header", "processes"] {
        let bad = dir.join(format!("bad-{file}"));
        copy_trace(&rec.trace, &bad);
        let p = bad.join(file);
        let mut bytes = std::fs::read(&p).unwrap();
        let mid = (bytes.len() / 2).max(24).min(bytes.len() - 1);
        for b in &mut bytes[mid..] {
            *b ^= 0x5a;
        }
        std::fs::write(&p, &bytes).unwrap();
        let r = replay(&bad, &["continue"]);
        assert!(
            r.code > 0,
            "a damaged {file} was accepted\n{}\n{}",
            r.stdout,
            r.stderr
        );
        r.lacks("block 0:");
        let errs: Vec<&str> = r.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(
            errs.len(),
            1,
            "one line of error for a damaged {file}:\n{}",
            r.stderr
        );
        let info = hs_in(
            &dir.join("root"),
            &dir,
            None,
            &[os("info"), bad.as_os_str()],
        );
        assert!(info.code >= 0);
    }
    // Not a trace at all.
    let r = replay(&dir.join("nonexistent"), &["continue"]);
    assert!(r.code > 0);
    assert_eq!(
        r.stderr.lines().filter(|l| !l.trim().is_empty()).count(),
        1,
        "{}",
        r.stderr
    );
}

#[test]
fn a_trace_from_a_newer_version_is_refused_by_name() {
    let prog = compile("rr_urandom", &[]);
    let dir = workdir("version");
    let rec = record(&dir, "trace", &prog, &[], None, 0);
    let newer = dir.join("newer");
    copy_trace(&rec.trace, &newer);
    let header = newer.join("header");
    let mut bytes = std::fs::read(&header).unwrap();
    // The magic (16 bytes) and the format version (little-endian u32).
    assert!(bytes.starts_with(b"HINDSIGHT-TRACE\n"), "header magic");
    let version = u32::from_le_bytes(bytes[16..20].try_into().unwrap());
    let bumped = version + 1;
    bytes[16..20].copy_from_slice(&bumped.to_le_bytes());
    std::fs::write(&header, &bytes).unwrap();
    let r = replay(&newer, &["continue"]);
    assert!(r.code > 0, "exit status {}", r.code);
    r.lacks(&rec.value("word"));
    let errs: Vec<&str> = r.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(errs.len(), 1, "one line of error:\n{}", r.stderr);
    assert!(
        errs[0].contains(&bumped.to_string()) && errs[0].contains("version"),
        "the error names version {bumped}: {}",
        errs[0]
    );
    let info = hs_in(
        &dir.join("root"),
        &dir,
        None,
        &[os("info"), newer.as_os_str()],
    );
    assert!(
        info.code > 0,
        "info accepted a newer trace:\n{}",
        info.stdout
    );
    info.err_has(&bumped.to_string());
}

// ---------------------------------------------------------------------------------------------
// The in-process agent (syscall buffering): the programs agent_*.c

/// `hindsight info --events TRACE`, which must succeed.
fn info_events(rec: &Recorded) -> Run {
    let dir = rec.trace.parent().expect("parent");
    let r = hs_in(
        &dir.join("root"),
        dir,
        None,
        &[os("info"), os("--events"), rec.trace.as_os_str()],
    );
    r.code(0);
    r
}

/// The lines of `hindsight info --events TRACE` of a recording made with the agent.
fn event_lines(rec: &Recorded) -> Vec<String> {
    let r = info_events(rec);
    assert!(
        r.stdout
            .lines()
            .any(|l| l.starts_with("Agent:      agent-")),
        "info does not say the recording used the agent\n{}",
        r.stdout
    );
    r.stdout.lines().map(str::to_string).collect()
}

/// How many calls named `call` the agent logged in `lines` (from [`event_lines`]), e.g.
/// `read` counts the `read ×N` of every `N buffered syscalls: ...` line.
fn buffered_count(lines: &[String], call: &str) -> usize {
    let tag = format!("{call} ×");
    lines
        .iter()
        .filter_map(|l| l.split_once(" buffered syscalls: ").map(|(_, list)| list))
        .flat_map(|list| list.split(", "))
        .filter_map(|item| item.strip_prefix(&tag))
        .map(|n| n.parse::<usize>().expect("a count"))
        .sum()
}

#[test]
fn agent_pipe_read_that_blocks_lets_the_writer_run() {
    // Each round, the main thread's read of a pipe blocks until the other thread (which
    // sleeps first) writes the time into it. The read starts in the agent; blocked there, it
    // must become a traced call that lets the writer run (or the recording would hang).
    let (a, _) = round_trip("agent_pipe_wait", &[], End::Exit(0), &["sum"]);
    assert_eq!(a.value("got"), "20");
    let lines = event_lines(&a);
    let blocked = lines
        .iter()
        .filter(|l| l.contains("] read(0x3,") && l.ends_with("(blocks)"))
        .count();
    assert!(
        blocked >= 10,
        "only {blocked} of 20 reads blocked\n{}",
        lines.join("\n")
    );
    // The writes into the pipes, which never block, ran in the agent.
    let writes = buffered_count(&lines, "write");
    assert!(
        writes >= 20,
        "only {writes} buffered writes\n{}",
        lines.join("\n")
    );
}

#[test]
fn agent_signals_interrupting_buffered_calls() {
    // A read interrupted without SA_RESTART fails with EINTR; with SA_RESTART it returns what
    // the handler wrote; a 1 ms timer lands signals in and between thousands of buffered
    // reads. Replay delivers each where it was, the handler seeing the recorded times.
    let (a, b) = round_trip("agent_signals", &[], End::Exit(0), &["nhits", "digest"]);
    for rec in [&a, &b] {
        assert_eq!(rec.value("interrupted"), "EINTR");
        assert_ne!(rec.value("restarted"), "-1");
        let lines = event_lines(rec);
        let reads = buffered_count(&lines, "read");
        let hits: usize = rec.value("nhits").parse().expect("a number");
        assert!(
            reads >= 100,
            "only {reads} buffered reads\n{}",
            lines.join("\n")
        );
        let signals = lines
            .iter()
            .filter(|l| l.contains("signal SIGALRM"))
            .count();
        assert!(
            signals >= hits + 2,
            "{signals} SIGALRM events for {hits} hits and 2 interruptions\n{}",
            lines.join("\n")
        );
    }
}

#[test]
fn agent_many_threads_on_a_mutex_and_condition_variables_replay_exactly() {
    // 8 threads pass a turn around a ring (a futex wait that blocks in the agent, every
    // turn) and race for items of a shared queue: the order they took them in (the digest)
    // and the time differ from run to run. Every replay, with and without -q, prints the
    // recorded values and ends at the same position.
    let (a, _) = round_trip(
        "agent_handoff",
        &[],
        End::Exit(0),
        &["start", "digest", "most"],
    );
    let lines = event_lines(&a);
    let blocked = lines
        .iter()
        .filter(|l| l.contains("] futex(") && l.ends_with("(blocks)"))
        .count();
    assert!(
        blocked >= 240,
        "only {blocked} futex waits blocked\n{}",
        lines.join("\n")
    );
    assert!(
        buffered_count(&lines, "futex") >= 240,
        "the futex wakes were not buffered\n{}",
        lines.join("\n")
    );
    let mut ends = Vec::new();
    for options in [&[][..], &["-q"], &[], &["-q"]] {
        let r = replay_with(&a.trace, options, &["continue", "when"]);
        r.code(0);
        let printed = |key: &str| {
            r.stdout
                .lines()
                .any(|l| l == format!("{key}={}", a.value(key)))
        };
        assert_eq!(
            ["start", "digest", "most"].map(printed),
            [options.is_empty(); 3],
            "replay {options:?} printed\n{}",
            r.stdout
        );
        let end = r
            .stdout
            .lines()
            .find(|l| l.starts_with("Current position: "))
            .unwrap_or_else(|| panic!("no position after the end\n{}", r.stdout))
            .to_string();
        ends.push(end);
    }
    assert!(
        ends.iter().all(|e| *e == ends[0]),
        "the replays ended at different positions: {ends:?}"
    );
}

#[test]
fn agent_signals_during_a_blocked_futex_wait() {
    // A thread blocked in a condition variable's futex wait (a buffered call that blocked)
    // gets SIGUSR1 (SA_RESTART) and SIGUSR2 (without): the handlers run there, read the
    // time, and the wait goes on. Replay delivers each where it was.
    let (a, b) = round_trip_with(
        "agent_futex_signal",
        &[],
        End::Exit(0),
        &["usr1", "usr2", "handled"],
        &[
            "handle SIGUSR1 nostop noprint",
            "handle SIGUSR2 nostop noprint",
        ],
    );
    for rec in [&a, &b] {
        assert_eq!(rec.value("handled"), "6");
        let lines = event_lines(rec);
        // The signals went to the waiter while its futex wait was under way (the main
        // thread gives it 3 ms to get there): the wait's entry, its return (interrupted, or
        // done just then), then the signal, in the waiter's events.
        let tid_of = |l: &str| {
            l.split_once('[')
                .and_then(|(_, r)| r.split_once(']'))
                .map(|(t, _)| t.to_string())
        };
        let (mut signals, mut during) = (0, 0);
        for (i, l) in lines.iter().enumerate() {
            if !(l.contains("signal SIGUSR1") || l.contains("signal SIGUSR2")) {
                continue;
            }
            signals += 1;
            let tid = tid_of(l);
            let before: Vec<&String> = lines[..i].iter().filter(|p| tid_of(p) == tid).collect();
            let n = before.len();
            if n >= 2
                && before[n - 1].contains("the return of futex")
                && before[n - 2].contains("] futex(")
                && before[n - 2].ends_with("(blocks)")
            {
                during += 1;
            }
        }
        assert_eq!(signals, 6, "{}", lines.join("\n"));
        assert!(
            during >= 3,
            "only {during} of the signals came during a blocked wait\n{}",
            lines.join("\n")
        );
    }
}

#[test]
fn agent_follows_an_exec_without_ld_preload() {
    // The program empties its environment (LD_PRELOAD included) and execs itself: the new
    // program's reads still go through the agent, and replay gives its values back.
    let (a, b) = round_trip("agent_exec", &[], End::Exit(0), &["child"]);
    for rec in [&a, &b] {
        assert_eq!(rec.value("preload"), "unset");
        let lines = event_lines(rec);
        let exec = lines
            .iter()
            .position(|l| l.contains("] exec of "))
            .unwrap_or_else(|| panic!("no exec event\n{}", lines.join("\n")));
        let reads = buffered_count(&lines[exec..], "read");
        assert!(
            reads >= 64,
            "only {reads} buffered reads after the exec\n{}",
            lines.join("\n")
        );
    }
}

#[test]
fn agent_in_a_static_program() {
    // No dynamic loader and no LD_PRELOAD: the agent still comes with the counter's patches.
    let prog = compile("agent_static", &["-static"]);
    let (a, _) = round_trip_built("agent_static", &prog, &[], End::Exit(0), &["value"], &[]);
    let lines = event_lines(&a);
    let reads = buffered_count(&lines, "read");
    assert!(
        reads >= 100,
        "only {reads} buffered reads\n{}",
        lines.join("\n")
    );
}

#[test]
fn agent_buffers_writes_to_the_programs_own_dev_null() {
    // The program writes 300 lines to its own /dev/null and prints two lines to its stdout.
    // With hindsight's stdout a pipe, or /dev/null itself (the same device: only the open
    // file tells the program's /dev/null from the recording's output), the /dev/null writes
    // run in the agent and the stdout ones stay the recording's output, shown by replay.
    let (a, _) = round_trip("agent_devnull", &[], End::Exit(0), &["sum"]);
    let writes = buffered_count(&event_lines(&a), "write");
    assert!(writes >= 300, "only {writes} buffered writes");

    let prog = compile("agent_devnull", &[]);
    let dir = workdir("agent_devnull_quiet");
    let trace = dir.join("quiet");
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "exec \"$0\" \"$@\" >/dev/null"])
        .arg(env!("CARGO_BIN_EXE_hindsight"))
        .args([
            os("record"),
            os("-o"),
            trace.as_os_str(),
            os("--"),
            prog.as_os_str(),
        ])
        .current_dir(&dir)
        .env("HINDSIGHT_DIR", dir.join("root"))
        .stdin(Stdio::null());
    let (run, finished) = collect_with_timeout(&mut cmd);
    assert!(finished && run.code == 0, "record failed{}", run.dump());
    assert_eq!(run.stdout, "", "the program's stdout went to /dev/null");
    let rec = Recorded { run, trace };
    let lines = event_lines(&rec);
    let writes = buffered_count(&lines, "write");
    assert!(
        writes >= 300,
        "only {writes} buffered writes\n{}",
        lines.join("\n")
    );
    // Its stdout's writes are still output: replay prints them, and the sum it printed is
    // the one replay computes from the buffered clock values.
    let r = replay(&rec.trace, &["continue"]);
    r.code(0);
    let printed = value_of(&r.stdout, "sum");
    assert_eq!(value_of(&r.stdout, "rounds"), "300");
    let cmds = break_cmds("agent_devnull", "", &["sum"]);
    let cmds: Vec<&str> = cmds.iter().map(String::as_str).collect();
    let r = replay(&rec.trace, &cmds);
    r.code(0);
    r.line(&format!("$1 = {printed}"));
}

#[test]
fn patched_code_is_cached_between_runs_and_a_damaged_entry_is_made_again() {
    // Planning and patching a library's code is kept on disk (HINDSIGHT_CACHE_DIR): a
    // second recording reuses the entries the first made, replays of both are exact, and
    // entries damaged on disk are ignored and written again.
    let prog = compile("agent_devnull", &[]);
    let dir = workdir("code_cache");
    let cache = dir.join("cache");
    let env = [("HINDSIGHT_CACHE_DIR", cache.to_str().expect("utf-8 path"))];
    let entries = || -> Vec<(String, Vec<u8>)> {
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(cache.join("code"))
            .map(|d| {
                d.flatten()
                    .map(|e| {
                        let bytes = std::fs::read(e.path()).expect("entry");
                        (e.file_name().to_string_lossy().into_owned(), bytes)
                    })
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    let record = |name: &str| -> Recorded {
        let trace = dir.join(name);
        let run = hs_env(
            &dir.join("root"),
            &dir,
            None,
            &env,
            &[
                os("record"),
                os("-o"),
                trace.as_os_str(),
                os("--"),
                prog.as_os_str(),
            ],
        );
        run.code(0);
        Recorded { run, trace }
    };
    let check = |rec: &Recorded| {
        let cmds = break_cmds("agent_devnull", "", &["sum"]);
        let mut v: Vec<&OsStr> = vec![os("replay"), rec.trace.as_os_str(), os("--batch")];
        for c in &cmds {
            v.extend([os("-ex"), os(c)]);
        }
        let r = hs_env(&dir.join("root"), &dir, None, &env, &v);
        r.code(0);
        r.line(&format!("$1 = {}", rec.value("sum")));
    };

    let names = |v: &[(String, Vec<u8>)]| v.iter().map(|e| e.0.clone()).collect::<Vec<_>>();
    let a = record("a");
    let first = entries();
    // The program, libc and the loader: a summary and the patches of each.
    assert!(first.len() >= 6, "{} cache entries", first.len());
    assert!(first.iter().all(|e| !e.0.starts_with(".tmp")));
    let b = record("b");
    let now = entries();
    assert_eq!(
        names(&now),
        names(&first),
        "the second recording made entries"
    );
    assert!(now == first, "the second recording changed entries");
    assert_ne!(a.value("sum"), b.value("sum"));
    check(&a);
    check(&b);
    // Replay patches the same code (the trace's copies of the files) at the same places: it
    // finds what recording kept.
    let now = entries();
    assert_eq!(
        names(&now),
        names(&first),
        "replay made other cache entries"
    );

    // Damage every entry (a byte in the middle of each): the next recording is the same.
    for (name, bytes) in &first {
        let mut bad = bytes.clone();
        let mid = bad.len() / 2;
        bad[mid] ^= 0x5a;
        std::fs::write(cache.join("code").join(name), &bad).expect("damage");
    }
    let c = record("c");
    check(&c);
    let now = entries();
    assert_eq!(
        names(&now),
        names(&first),
        "the third recording made other entries"
    );
    assert!(now == first, "damaged entries were not made again");
}

#[test]
fn a_library_changed_in_place_is_planned_again_not_taken_from_the_cache() {
    // The patched-code cache is found by the contents of a file, not its name: a library
    // rebuilt at the same path gets new entries (its summary and its patches; the program,
    // libc and the loader keep theirs), the recording counts the new code, and the older
    // trace still replays its own copy of the old library.
    let dir = workdir("code_cache_changed");
    let cache = dir.join("cache");
    let env = [("HINDSIGHT_CACHE_DIR", cache.to_str().expect("utf-8 path"))];
    let lib = dir.join("libhscache.so");
    let build_lib = |variant: &str| {
        let out = Command::new("gcc")
            .current_dir(programs())
            .args(["-shared", "-fPIC", "-O1", "-g"])
            .arg(format!("-DVARIANT={variant}"))
            .args(["cache_lib.c", "-o"])
            .arg(&lib)
            .output()
            .expect("gcc runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    build_lib("1");
    let prog = dir.join("cache_main");
    let out = Command::new("gcc")
        .current_dir(programs())
        .args(["-g", "-O0", "cache_main.c", "-o"])
        .arg(&prog)
        .arg(format!("-L{}", dir.display()))
        .arg("-lhscache")
        .arg(format!("-Wl,-rpath,{}", dir.display()))
        .output()
        .expect("gcc runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let native = || {
        let out = Command::new(&prog).output().expect("program runs");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let entries = || -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(cache.join("code"))
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    let record = |name: &str| -> PathBuf {
        let trace = dir.join(name);
        let run = hs_env(
            &dir.join("root"),
            &dir,
            None,
            &env,
            &[
                os("record"),
                os("-o"),
                trace.as_os_str(),
                os("--"),
                prog.as_os_str(),
            ],
        );
        run.code(0);
        trace
    };
    // The library's line of `info`: how many of its instructions the counter patched.
    let patched_in_lib = |trace: &Path| -> String {
        let r = hs_env(
            &dir.join("root"),
            &dir,
            None,
            &env,
            &[os("info"), trace.as_os_str()],
        );
        r.code(0);
        r.stdout
            .lines()
            .find_map(|l| l.trim().strip_prefix("libhscache.so: "))
            .unwrap_or_else(|| panic!("no line for the library in:\n{}", r.stdout))
            .split(" counted")
            .next()
            .unwrap_or_default()
            .to_string()
    };
    let replayed = |trace: &Path| {
        let r = hs_env(
            &dir.join("root"),
            &dir,
            None,
            &env,
            &[
                os("replay"),
                trace.as_os_str(),
                os("--batch"),
                os("-ex"),
                os("continue"),
            ],
        );
        r.code(0);
        r.stdout
            .lines()
            .find(|l| l.starts_with("value = "))
            .unwrap_or_else(|| panic!("no value in the replay:\n{}", r.stdout))
            .to_string()
    };

    let first_value = native();
    let a = record("a");
    let first = entries();
    assert!(first.len() >= 8, "{} cache entries", first.len());
    let first_patched = patched_in_lib(&a);

    // The same path, the same kind of file, other code.
    build_lib("2");
    let second_value = native();
    assert_ne!(first_value, second_value);
    let b = record("b");
    let now = entries();
    assert!(
        first.iter().all(|e| now.contains(e)),
        "the second recording removed entries"
    );
    assert_eq!(
        now.len(),
        first.len() + 2,
        "the changed library's summary and patches, nothing else, are new: {first:?} -> {now:?}"
    );
    let second_patched = patched_in_lib(&b);
    assert_ne!(
        first_patched, second_patched,
        "the changed library was counted as the old one"
    );
    assert_eq!(replayed(&b), second_value);
    // The first trace replays its copy of the old library, with the old library's entries.
    assert_eq!(replayed(&a), first_value);
    assert_eq!(patched_in_lib(&a), first_patched);
    assert_eq!(entries(), now, "replay made entries");
}

#[test]
fn a_program_that_overwrites_the_agent_is_stopped_with_an_error() {
    let prog = compile("agent_scribble", &[]);
    let dir = workdir("agent_scribble");
    for (how, what) in [
        ("write", "the program wrote over hindsight's agent memory"),
        ("map", "would change hindsight's agent memory"),
    ] {
        let trace = dir.join(how);
        let r = hs_in(
            &dir.join("root"),
            &dir,
            None,
            &[
                os("record"),
                os("-o"),
                trace.as_os_str(),
                os("--"),
                prog.as_os_str(),
                os(how),
            ],
        );
        assert!(r.code > 0, "exit status {}\n{}", r.code, r.stderr);
        // The program never got past the damage: its line is not in the recording.
        r.lacks("scribbled");
        r.lacks("no agent");
        let stopped: Vec<&str> = r
            .stderr
            .lines()
            .filter(|l| l.starts_with("hindsight: the recording stopped: "))
            .collect();
        assert!(
            stopped.len() == 1 && stopped[0].contains(what),
            "expected one line saying {what:?}\n{}",
            r.stderr
        );
        // What was recorded up to there replays, and says why it ends.
        let rp = replay(&trace, &["continue"]);
        assert!(
            rp.stdout.contains(what) || rp.stderr.contains(what),
            "the replay does not say why the recording ended\n{}\n{}",
            rp.stdout,
            rp.stderr
        );
        rp.lacks("scribbled");
    }
}
