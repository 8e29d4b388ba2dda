//! The instruction counter (DESIGN.md, "Time"): asynchronous events — preemptions of threads
//! that race without a syscall, timer signals in loops whose state lives only in memory —
//! land where they happened in the recording, at the same instruction instance, in every
//! replay, with and without `-q`.
//!
//! Each program prints, through a function `report`, values that depend on the exact
//! instructions where those events landed (updates lost between a load and a store, where a
//! loop stood at each signal); they differ from run to run. A replay without `-q` must print
//! the recorded line again; a replay with `-q` stops at `report` and prints the same values.

mod common;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use common::*;

/// A fresh directory for one test's traces.
fn workdir(name: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let d = scratch().join(format!(
        "ticks-{name}-{}",
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("work dir");
    d
}

/// `hindsight ARGS` in `dir`, traces under `dir/root`.
fn hs(dir: &Path, args: &[&str]) -> Run {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_hindsight"));
    cmd.args(args)
        .current_dir(dir)
        .env("HINDSIGHT_DIR", dir.join("root"))
        .stdin(std::process::Stdio::null());
    let (r, finished) = collect_with_timeout(&mut cmd);
    assert!(
        finished,
        "hindsight {args:?} did not finish\n{}\n{}",
        r.stdout, r.stderr
    );
    r
}

/// The line the program printed that starts with `prefix` (once).
fn printed<'a>(out: &'a str, prefix: &str) -> &'a str {
    let hits: Vec<&str> = out.lines().filter(|l| l.starts_with(prefix)).collect();
    assert_eq!(hits.len(), 1, "expected one line {prefix}... in\n{out}");
    hits[0]
}

/// Records `prog ARGS` `n` times (with `options` for `hindsight record`) and replays each
/// recording to its end without `-q` and, with `-q`, to `report` where `var` is printed: every
/// replay must show the values of its own recording. Returns the recorded lines.
fn replays_are_exact(
    name: &str,
    prog: &Path,
    args: &[&str],
    options: &[&str],
    var: &str,
    n: usize,
) -> Vec<String> {
    let dir = workdir(name);
    let prefix = format!("{var} = ");
    let one = |i: usize| -> String {
        let trace = format!("t{i}");
        let mut rec: Vec<&str> = vec!["record", "-o", &trace];
        rec.extend_from_slice(options);
        let prog_s = prog.to_str().expect("path");
        rec.extend(["--", prog_s]);
        rec.extend_from_slice(args);
        let r = hs(&dir, &rec);
        r.code(0);
        let recorded = printed(&r.stdout, &prefix).to_string();

        let whole = hs(&dir, &["replay", &trace, "--batch", "-ex", "continue"]);
        whole
            .code(0)
            .line("[Inferior 1 (process {n}) exited normally]");
        assert_eq!(
            printed(&whole.stdout, &prefix),
            recorded,
            "replay {i} of {name} printed another line\n{}\n{}",
            whole.stdout,
            whole.stderr
        );

        let print = format!("print {var}");
        let quiet = hs(
            &dir,
            &[
                "replay",
                &trace,
                "--batch",
                "-q",
                "-ex",
                "break report",
                "-ex",
                "continue",
                "-ex",
                &print,
            ],
        );
        quiet.code(0);
        let want = recorded.replacen(&prefix, "$1 = ", 1);
        assert!(
            quiet.stdout.lines().any(|l| l == want),
            "replay {i} of {name} with -q: expected {want:?}\n{}\n{}",
            quiet.stdout,
            quiet.stderr
        );
        recorded
    };
    // Two at a time (the machine's CPUs), each recording with its own replays.
    let mut lines = Vec::new();
    for pair in (0..n).collect::<Vec<_>>().chunks(2) {
        let got: Vec<String> = std::thread::scope(|s| {
            let handles: Vec<_> = pair.iter().map(|&i| s.spawn(move || one(i))).collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a recording and its replays"))
                .collect()
        });
        lines.extend(got);
    }
    lines
}

/// Asserts that the recordings did not all print the same (else the test proves nothing).
fn varied(lines: &[String], name: &str) {
    let first = &lines[0];
    assert!(
        lines.iter().any(|l| l != first),
        "every recording of {name} printed {first:?}: the events did not land differently"
    );
}

#[test]
fn threads_racing_without_syscalls_replay_their_lost_updates_exactly() {
    for opt in ["-O0", "-O2"] {
        let prog = compile("tick_racers", &[opt]);
        let lines = replays_are_exact(
            &format!("racers{opt}"),
            &prog,
            &["300000"],
            &["--time-slice", "1"],
            "shared",
            10,
        );
        varied(&lines, "tick_racers");
    }
}

#[test]
fn chaos_mode_recordings_replay_exactly() {
    // Random time slices and thread choices: other orders, the same exactness.
    let prog = compile("tick_racers", &["-O1"]);
    let lines = replays_are_exact(
        "racers-chaos",
        &prog,
        &["300000"],
        &["--chaos"],
        "shared",
        6,
    );
    varied(&lines, "tick_racers --chaos");
}

#[test]
fn timer_signals_in_a_loop_whose_state_is_in_memory_replay_on_the_same_iteration() {
    for (opt, args) in [("-O0", vec![]), ("-O2", vec![]), ("-O2", vec!["prof"])] {
        let prog = compile("tick_alarms", &[opt]);
        let lines = replays_are_exact(
            &format!("alarms{opt}"),
            &prog,
            &args,
            &[],
            "at",
            if args.is_empty() { 10 } else { 6 },
        );
        varied(&lines, "tick_alarms");
    }
}

#[test]
fn info_tells_the_counter_what_runs_uncounted_and_where_events_landed() {
    let prog = compile("tick_racers", &["-O2"]);
    let dir = workdir("info");
    let p = prog.to_str().expect("path");
    hs(
        &dir,
        &["record", "--time-slice", "1", "-o", "t", "--", p, "1000000"],
    )
    .code(0);
    let info = hs(&dir, &["info", "t"]);
    info.code(0)
        .line("Counter:    ticks-1 (back edges, function entries and indirect jumps count ticks)")
        .line("  tick_racers_O2: {n} counted instructions patched, {n} uncounted{*}")
        .line("  libc.so.6: {n} counted instructions patched, {n} uncounted ({*})");
    let events = hs(&dir, &["info", "--events", "t"]);
    events.code(0);
    assert!(
        events.count("{*}[{n}] a thread switch at {hex} (tick {n})") >= 2,
        "thread switches with their ticks\n{}",
        events.stdout
    );
    // Without the counter (a developers' switch), positions are named the old way.
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_hindsight"));
    cmd.args(["record", "--time-slice", "1", "-o", "u", "--", p, "300000"])
        .current_dir(&dir)
        .env("HINDSIGHT_NO_TICKS", "1")
        .env("HINDSIGHT_DIR", dir.join("root"));
    let (r, _) = collect_with_timeout(&mut cmd);
    r.code(0);
    hs(&dir, &["info", "u"]).code(0).line(
        "Counter:    none (recorded without this hindsight's instruction counter: positions between events are found by registers and stack)",
    );
}
