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
            // Several 1 ms slices of work per racer even on a fast machine.
            &["2000000"],
            &["--time-slice", "1"],
            "shared",
            20,
        );
        varied(&lines, "tick_racers");
    }
}

#[test]
fn chaos_mode_recordings_replay_exactly() {
    // Random time slices and thread choices: other orders, the same exactness. Chaos draws
    // turns of 0.1 to 40 ms (and now and then 200 ms): each racer must work for tens of
    // milliseconds, or on a fast machine whole racers fit in one turn and never lose an update.
    let prog = compile("tick_racers", &["-O1"]);
    let lines = replays_are_exact(
        "racers-chaos",
        &prog,
        &["3000000"],
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
        let lines = replays_are_exact(&format!("alarms{opt}"), &prog, &args, &[], "at", 20);
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

/// The value gdb printed as `$N = VALUE` on line `line` of `out`'s `$` lines (in order).
fn values(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| l.starts_with('$'))
        .filter_map(|l| l.split_once(" = ").map(|(_, v)| v.to_string()))
        .collect()
}

#[test]
fn break_tick_stops_where_the_thread_has_counted_that_many_ticks() {
    // One tick per iteration (its backward branch): two stops K ticks apart are K iterations
    // apart, and the position of a tick stop is found again by goto.
    let prog = compile("tick_steps", &[]);
    let dir = workdir("break-tick");
    let p = prog.to_str().expect("path");
    hs(&dir, &["record", "-o", "t", "--", p, "3000000"]).code(0);
    let run = hs(
        &dir,
        &[
            "replay",
            "t",
            "--batch",
            "-q",
            "-ex",
            "break tick 1000000",
            "-ex",
            "continue",
            "-ex",
            "print i",
            "-ex",
            "when",
            "-ex",
            "break tick 1000777",
            "-ex",
            "continue",
            "-ex",
            "print i",
            "-ex",
            "info events",
        ],
    );
    run.code(0)
        .line("Quantum event 1: stop at tick 1000000 of thread 1")
        .line("Stopped at tick 1000000.")
        .line("main (argc=2, argv={hex}) at tick_steps.c:13")
        .line("Quantum event 2: stop at tick 1000777 of thread 1")
        .line("Stopped at tick 1000777.")
        .line("1    spent      stop at tick 1000000 of LWP {n} (as recorded): stop");
    let v = values(&run.stdout);
    assert_eq!(v.len(), 2, "two values\n{}", run.stdout);
    let (a, b): (i64, i64) = (v[0].parse().expect("i"), v[1].parse().expect("i"));
    assert_eq!(b - a, 777, "777 ticks are 777 iterations\n{}", run.stdout);
    // goto returns to the first tick stop from its end, and the loop counter is as it was.
    let pos = run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("Current position: "))
        .expect("when prints the position")
        .to_string();
    assert!(
        pos.contains(":1000000:"),
        "the position names the tick: {pos}"
    );
    let back = hs(
        &dir,
        &[
            "replay",
            "t",
            "--batch",
            "-q",
            "-ex",
            "break tick 2000000",
            "-ex",
            "continue",
            "-ex",
            &format!("goto {pos}"),
            "-ex",
            "print i",
            "-ex",
            "break tick 5",
            "-ex",
            "break tick 10 thread 9",
        ],
    );
    let v2 = values(&back.stdout);
    assert_eq!(
        v2,
        vec![a.to_string()],
        "goto {pos}\n{}\n{}",
        back.stdout,
        back.stderr
    );
    assert!(
        back.stderr.contains(
            "Thread 1 has counted 1000000 ticks already: a tick event stops only going forward."
        ) && back.stderr.contains("Unknown thread 9."),
        "{}",
        back.stderr
    );
}

/// The tick counts of the positions `when` printed (`Current position: E:TICKS:PC:I`).
fn when_ticks(out: &str) -> Vec<u64> {
    out.lines()
        .filter_map(|l| l.strip_prefix("Current position: "))
        .filter_map(|p| p.split(':').nth(1)?.parse().ok())
        .collect()
}

/// `hindsight replay t --batch [-q] -ex CMD…` in `dir`.
fn replay_cmds(dir: &Path, quiet: bool, cmds: &[&str]) -> Run {
    let mut args = vec!["replay", "t", "--batch"];
    if quiet {
        args.push("-q");
    }
    for c in cmds {
        args.extend(["-ex", c]);
    }
    hs(dir, &args)
}

/// `tests/programs/tick_calls.c` (two ticks per turn of its loop: step's entry and the
/// backward branch) recorded with `turns` turns.
fn tick_calls_trace(name: &str, turns: &str) -> PathBuf {
    let prog = compile("tick_calls", &[]);
    let dir = workdir(name);
    let p = prog.to_str().expect("path");
    hs(&dir, &["record", "-o", "t", "--", p, turns]).code(0);
    dir
}

#[test]
fn every_k_ticks_runs_its_command_at_each_multiple_the_same_in_every_replay() {
    let dir = tick_calls_trace("every-ticks", "200000");
    let cmds = [
        "every 50000 ticks print iter",
        "every 50000 ticks thread 1 when",
        "continue",
    ];
    let first = replay_cmds(&dir, true, &cmds);
    first
        .code(0)
        .line("Periodic event 1: every 50000 ticks of thread 1, print iter")
        .line("Periodic event 2: every 50000 ticks of thread 1, when")
        .line("[Inferior 1 (process {n}) exited normally]");
    // At each multiple of the period, in order, none skipped: the thread counts 2 ticks a
    // turn for 200000 turns, plus the loader's and libc's before main.
    let ticks = when_ticks(&first.stdout);
    let want: Vec<u64> = (1..=ticks.len() as u64).map(|k| k * 50000).collect();
    assert!(ticks.len() >= 8, "{}", first.stdout);
    assert_eq!(ticks, want, "{}", first.stdout);
    // Inside the loop, 50000 ticks are 25000 turns.
    let v: Vec<i64> = values(&first.stdout)
        .iter()
        .map(|v| v.parse().expect("a number"))
        .collect();
    assert_eq!(v.len(), ticks.len(), "{}", first.stdout);
    let turns: Vec<i64> = v
        .windows(2)
        .filter(|w| w[0] > 0)
        .map(|w| w[1] - w[0])
        .collect();
    assert!(
        !turns.is_empty() && turns.iter().all(|d| *d == 25000),
        "{v:?}"
    );
    // A second replay, showing the program's output this time: the same firings, the same
    // values, and the program's own line.
    let second = replay_cmds(&dir, false, &cmds);
    second.code(0).line("acc = 19999900000");
    assert_eq!(when_ticks(&second.stdout), ticks, "{}", second.stdout);
    assert_eq!(values(&second.stdout), values(&first.stdout));
    // A tick quantum at the third multiple sees what the third firing saw.
    let at = replay_cmds(&dir, true, &["break tick 150000", "continue", "print iter"]);
    assert_eq!(values(&at.stdout), vec![v[2].to_string()], "{}", at.stdout);
    // Mistakes.
    let bad = replay_cmds(
        &dir,
        true,
        &[
            "every 0 ticks when",
            "every 10 ticks",
            "every 10 ticks thread 7 when",
        ],
    );
    bad.err_has("usage: every K [ticks [thread M]] COMMAND")
        .err_has("Unknown thread 7.");
}

#[test]
fn an_era_of_ticks_bounds_breakpoints_forward_and_backward_and_goto_reaches_its_ends() {
    // (Few turns: outside its era, a hit of an era breakpoint still traps, and going back
    // scans the turns before.)
    let dir = tick_calls_trace("eras", "15000");
    // The era covers 20 ticks inside one stretch without events: 10 turns of the loop.
    let era = "era mid from tick 20000 to tick 20020";
    let mut cmds = vec![
        era,
        "info eras",
        "goto era mid",
        "print iter",
        "break step era mid",
        "info breakpoints",
    ];
    cmds.extend(["continue", "print v"].repeat(10));
    cmds.push("continue");
    let fwd = replay_cmds(&dir, true, &cmds);
    fwd.code(0)
        .line("Era mid: from event {n} tick 20000 (tick 20000 of thread 1) to event {n} tick 20020 (tick 20020 of thread 1)")
        .line("mid        event {n} tick 20000           event {n} tick 20020")
        .line("\tonly from event {n} tick 20000 to event {n} tick 20020")
        .line("[Inferior 1 (process {n}) exited normally]");
    // (libc has a `step` too, in misc/regexp.c: as in gdb, the breakpoint has a location
    // there, 1.2, and the program's hits are of 1.1.)
    assert_eq!(
        fwd.count("Breakpoint 1.1, step (v={n}) at {*}"),
        10,
        "{}",
        fwd.stdout
    );
    let v: Vec<i64> = values(&fwd.stdout)
        .iter()
        .map(|v| v.parse().expect("a number"))
        .collect();
    // The era's start, then its ten hits: ten turns in a row, from the one at its start
    // (whose entry may be the era's first tick, or come after it: the tick at the start can
    // be the previous turn's backward branch).
    assert_eq!(v.len(), 11, "{}", fwd.stdout);
    let (x, y) = (v[0], v[1]);
    assert!(y == x || y == x + 1, "{}", fwd.stdout);
    assert_eq!(
        v[1..].to_vec(),
        (y..y + 10).collect::<Vec<_>>(),
        "{}",
        fwd.stdout
    );
    // Backwards from the era's end: its hits in reverse order, and none before it.
    let mut back = vec![era, "goto era mid end", "print iter", "break step era mid"];
    back.extend(["reverse-continue", "print v"].repeat(10));
    back.push("reverse-continue");
    let rev = replay_cmds(&dir, true, &back);
    rev.code(0).line("No more reverse-execution history.");
    let w: Vec<i64> = values(&rev.stdout)
        .iter()
        .map(|v| v.parse().expect("a number"))
        .collect();
    assert_eq!(w[0], x + 10, "20 ticks after its start\n{}", rev.stdout);
    assert_eq!(
        w[1..].to_vec(),
        (y..y + 10).rev().collect::<Vec<_>>(),
        "{}",
        rev.stdout
    );
    // An era watchpoint: the writes of `acc` before the era are passed (thousands of them:
    // fast enough for perf to throttle the watchpoint, which the kernel then reports as a
    // bare SIGTRAP), the first two inside it stop.
    let watch = replay_cmds(
        &dir,
        true,
        &[
            era,
            "watch acc era mid",
            "continue",
            "print v",
            "continue",
            "print v",
        ],
    );
    watch.code(0).lacks("SIGTRAP");
    assert_eq!(
        watch.count("Hardware watchpoint 1: acc"),
        3,
        "{}",
        watch.stdout
    );
    assert_eq!(
        values(&watch.stdout),
        vec![y.to_string(), (y + 1).to_string()],
        "{}",
        watch.stdout
    );
    // Bounds named by a bookmark and by `here` are the same moments; mistakes are refused
    // and leave the replay where it was.
    let named = replay_cmds(
        &dir,
        true,
        &[
            "goto tick 20000",
            "bookmark b",
            "goto tick 20020",
            "era same from b to here",
            "era bad from tick 20020 to tick 20000",
            "break step era nosuch",
            "goto tick 999999999",
            "print iter",
            "delete era same",
            "info eras",
        ],
    );
    named
        .line("Era same: from event {n} tick 20000 (bookmark b) to event {n} tick 20020 (here)")
        .line("No eras.");
    named
        .err_has("An era must end after it starts (from event ")
        .err_has("No era named \"nosuch\".")
        .err_has("The recording has no tick 999999999 of thread 1.");
    assert_eq!(
        values(&named.stdout),
        vec![(x + 10).to_string()],
        "{}",
        named.stdout
    );
}

/// The register and memory states `out` shows: `info registers` lines and `$N = …` values,
/// one string per `--` separator.
fn states(out: &str) -> Vec<String> {
    let mut all = Vec::new();
    let mut cur = String::new();
    for l in out.lines() {
        if l == "--" {
            all.push(std::mem::take(&mut cur));
        } else if l.starts_with('$') {
            // The history number differs from one print to the next; the value does not.
            cur.push_str(l.split_once(" = ").map_or(l, |(_, v)| v));
            cur.push('\n');
        } else if l
            .split_whitespace()
            .nth(1)
            .is_some_and(|w| w.starts_with("0x"))
        {
            cur.push_str(l);
            cur.push('\n');
        }
    }
    all
}

#[test]
fn consecutive_reverse_stepi_retrace_the_forward_steps_exactly() {
    // 200 reverse-stepi in a loop without syscalls (checkpoints inside it, taken at tick
    // counts, make each step cheap): each must land on the previous instruction instance —
    // the states seen going back, read forward, are the states stepi shows going forward
    // again from where they ended, registers and memory alike. At -O1 the loop is small
    // enough to run whole in a trampoline, its count before its first instruction.
    for opt in ["-O0", "-O1"] {
        let prog = compile("tick_steps", &[opt]);
        let dir = workdir("rsi-200");
        let p = prog.to_str().expect("path");
        hs(&dir, &["record", "-o", "t", "--", p, "40000000"]).code(0);
        const N: usize = 200;
        let state = ["info registers", "print sum", "echo --\\n"];
        let mut cmds = vec!["break tick 25000000", "continue"];
        cmds.extend(state);
        for _ in 0..N {
            cmds.push("reverse-stepi");
            cmds.extend(state);
        }
        for _ in 0..N {
            cmds.push("stepi");
            cmds.extend(state);
        }
        let run = replay_cmds(&dir, true, &cmds);
        run.code(0);
        let s = states(&run.stdout);
        assert_eq!(s.len(), 2 * N + 1, "{opt}\n{}", run.dump());
        assert!(s[0].contains("rip"), "{opt}: {}", s[0]);
        // s[k] (k ≤ N) is k instructions before the tick stop; s[N + j] is j instructions
        // after s[N], i.e. s[N - j].
        for j in 1..=N {
            assert_eq!(
                s[N + j],
                s[N - j],
                "{opt}: stepi {j} after {N} reverse-stepi is not where reverse-stepi {} was\n{}",
                N - j,
                run.stderr
            );
        }
        // The steps went back through distinct instants (~20 iterations of the loop).
        let distinct: std::collections::BTreeSet<&String> = s[..=N].iter().collect();
        assert!(
            distinct.len() > N / 2,
            "{opt}: {} distinct states",
            distinct.len()
        );
    }
}
