//! Time travel in `hindsight replay`: reverse execution (gdb's commands and their landing
//! places), positions (`when`, `goto`, bookmarks, checkpoints) and the debugger-event engine
//! (`dprintf`, `every`, era breakpoints, `break event N`), on recorded C programs
//! (`tests/programs/tt_*.c`), single- and multi-threaded.
//!
//! The landing lines of the reverse line steps are those of gdb 13's own reverse debugging
//! (`record full`) of the same program, noted where they are asserted.

mod common;
use common::*;

use std::path::PathBuf;

/// The values printed by `print` (`$N = VALUE`), in order.
fn printed(r: &Run) -> Vec<String> {
    r.stdout
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix('$')?;
            let (n, v) = rest.split_once(" = ")?;
            n.parse::<u32>().ok()?;
            Some(v.to_string())
        })
        .collect()
}

/// The lines that report a breakpoint hit (`Breakpoint N, …` / `Thread N "…" hit …`).
fn hits(r: &Run) -> Vec<String> {
    r.stdout
        .lines()
        .filter(|l| matches("{*}Breakpoint {n}, {*} at {*}", l))
        .map(str::to_string)
        .collect()
}

/// The positions `when` printed, in order.
fn positions(r: &Run) -> Vec<String> {
    r.stdout
        .lines()
        .filter_map(|l| l.strip_prefix("Current position: "))
        .map(str::to_string)
        .collect()
}

/// The events `when` printed, in order.
fn events(r: &Run) -> Vec<u64> {
    r.stdout
        .lines()
        .filter_map(|l| l.strip_prefix("Current event: ")?.parse().ok())
        .collect()
}

fn loop_trace() -> (PathBuf, Run) {
    let prog = compile("tt_loop", &[]);
    record_trace(&prog, &[])
}

fn line_of(name: &str, mark: &str) -> u32 {
    let text = std::fs::read_to_string(programs().join(format!("{name}.c"))).expect("source");
    text.lines()
        .position(|l| l.contains(mark))
        .map(|i| i as u32 + 1)
        .unwrap_or_else(|| panic!("no {mark} in {name}.c"))
}

#[test]
fn reverse_continue_visits_breakpoint_hits_in_reverse_order() {
    let (trace, _) = loop_trace();
    let mut cmds = vec!["break square"];
    cmds.extend(["continue", "print x"].repeat(6));
    cmds.extend(["reverse-continue", "print x"].repeat(5));
    cmds.push("reverse-continue");
    let r = replay_batch(&trace, &cmds);
    r.clean();
    let values = printed(&r);
    assert_eq!(
        values,
        ["0", "1", "2", "3", "4", "5", "4", "3", "2", "1", "0"],
        "{}",
        r.stdout
    );
    // Each reverse hit is reported as gdb reports a hit.
    assert_eq!(hits(&r).len(), 11, "{}", r.stdout);
    r.line("Breakpoint 1, square (x=4) at tt_loop.c:{n}");
    // Before the first hit: the start of the recording, as gdb says it.
    r.seq(&[
        "Breakpoint 1, square (x=0) at tt_loop.c:{n}",
        "{*}",
        "Continuing.",
        "No more reverse-execution history.",
    ]);
}

#[test]
fn reverse_continue_in_a_multithreaded_recording() {
    let prog = compile("tt_threads", &[]);
    let (trace, rec) = record_trace(&prog, &[]);
    let mut cmds = vec!["break bump"];
    cmds.extend(["continue", "print id", "print shared"].repeat(6));
    cmds.extend(["reverse-continue", "print id", "print shared"].repeat(5));
    let r = replay_batch(&trace, &cmds);
    r.clean();
    let v = printed(&r);
    assert_eq!(v.len(), 22, "{}", r.stdout);
    let forward: Vec<(String, String)> = v[..12]
        .chunks(2)
        .map(|c| (c[0].clone(), c[1].clone()))
        .collect();
    let backward: Vec<(String, String)> = v[12..]
        .chunks(2)
        .map(|c| (c[0].clone(), c[1].clone()))
        .collect();
    let mut expected: Vec<(String, String)> = forward[..5].to_vec();
    expected.reverse();
    assert_eq!(backward, expected, "{}", r.stdout);
    // The values are the recorded run's: the last update gives what it printed.
    let last = &forward[5];
    let id: i64 = last.0.parse().expect("id");
    let before: i64 = last.1.parse().expect("shared");
    assert!(rec.stdout.contains(&format!("shared={}", before * 3 + id)));
    // Both threads took part, and a stop in another thread says so.
    assert!(forward.iter().any(|(id, _)| id == "1") && forward.iter().any(|(id, _)| id == "2"));
    r.line("[Switching to Thread {hex} (LWP {n})]");
}

#[test]
fn watch_then_reverse_continue_finds_the_last_writer_in_another_function() {
    let (trace, _) = loop_trace();
    let write_line = line_of("tt_loop", "WRITE-HERE");
    let r = replay_batch(
        &trace,
        &[
            "break tt_loop.c:26",
            "continue",
            "watch total",
            "reverse-continue",
            "print total",
            "print v",
            "bt 1",
            "reverse-continue",
            "print total",
            "continue",
        ],
    );
    r.clean();
    let at = format!("{{*}}add_to_total (v=49) at tt_loop.c:{write_line}");
    r.block(&[
        "Hardware watchpoint 2: total",
        "Old value = 140",
        "New value = 91",
        &at,
    ]);
    // Stopped before the write: the value is the earlier one there.
    assert_eq!(printed(&r)[..2], ["91", "49"], "{}", r.stdout);
    r.block(&["Old value = 91", "New value = 55"]);
    // And forward again from there: the write happens.
    r.block(&["Old value = 55", "New value = 91"]);
}

#[test]
fn watch_then_reverse_continue_finds_the_writer_in_another_thread() {
    let prog = compile("tt_threads", &[]);
    let (trace, rec) = record_trace(&prog, &[]);
    let end = line_of("tt_threads", "END-HERE");
    let bump = line_of("tt_threads", "BUMP-HERE");
    let r = replay_batch(
        &trace,
        &[
            &format!("break tt_threads.c:{end}"),
            "continue",
            "watch shared",
            "reverse-continue",
            "print id",
            "print shared",
            "info threads",
        ],
    );
    r.clean();
    let total: i64 = rec
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("shared="))
        .and_then(|v| v.trim().parse().ok())
        .expect("the recorded total");
    let v = printed(&r);
    let id: i64 = v[0].parse().expect("id");
    let before: i64 = v[1].parse().expect("shared");
    assert_eq!(before * 3 + id, total, "{}", r.stdout);
    r.line(&format!("Old value = {total}"));
    r.line(&format!("New value = {before}"));
    r.line(&format!("{{*}}bump (id={id}) at tt_threads.c:{bump}"));
    // The writer is a worker thread, now the selected one.
    r.line("* {n}    Thread {*}bump (id={n}) at tt_threads.c:{n}");
}

#[test]
fn reverse_step_next_and_finish_land_where_gdb_does() {
    let prog = compile("tt_steps", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let r = replay_batch(
        &trace,
        &[
            "break 20",
            "continue",
            "reverse-next",
            "reverse-next",
            "reverse-next",
            "reverse-step",
            "reverse-step",
            "reverse-step",
            "reverse-step",
            "reverse-finish",
            "reverse-next",
            "reverse-next",
            "reverse-next",
            "reverse-next",
            "reverse-stepi",
            "reverse-nexti",
        ],
    );
    r.clean();
    // What gdb 13 prints for the same commands under `record full` (from `break 20`).
    r.block(&[
        "Breakpoint 1, main () at tt_steps.c:20",
        "20\t    g = g * 2;",
        "16\t    for (int i = 0; i < 3; i++) {",
        "18\t        g = acc + 1;",
        "17\t        acc = twice(i);",
        "16\t    for (int i = 0; i < 3; i++) {",
        "18\t        g = acc + 1;",
        "twice (x=1) at tt_steps.c:12",
        "12\t}",
        "11\t    return y;",
        "Run back to call of #0  twice (x=1) at tt_steps.c:11",
        "{hex} in main () at tt_steps.c:17",
        "17\t        acc = twice(i);",
        "17\t        acc = twice(i);",
        "16\t    for (int i = 0; i < 3; i++) {",
        "18\t        g = acc + 1;",
        "17\t        acc = twice(i);",
        "{hex}\t16\t    for (int i = 0; i < 3; i++) {",
        "{hex}\t16\t    for (int i = 0; i < 3; i++) {",
    ]);
}

#[test]
fn reverse_stepi_returns_to_the_previous_instruction() {
    let (trace, _) = loop_trace();
    let r = replay_batch(
        &trace,
        &[
            "break square",
            "continue",
            "info registers rip",
            "stepi",
            "info registers rip",
            "stepi",
            "info registers rip",
            "reverse-stepi",
            "info registers rip",
            "reverse-stepi",
            "info registers rip",
        ],
    );
    r.clean();
    let rips: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("rip "))
        .map(|l| l.split_whitespace().nth(1).unwrap_or(""))
        .collect();
    assert_eq!(rips.len(), 5, "{}", r.stdout);
    assert_eq!(rips[3], rips[1], "{}", r.stdout);
    assert_eq!(rips[4], rips[0], "{}", r.stdout);
}

#[test]
fn a_bookmark_left_and_returned_to_shows_the_same_registers_and_memory() {
    let (trace, _) = loop_trace();
    let state = [
        "info registers",
        "x/16gx $sp",
        "print total",
        "print counter",
    ];
    let mut cmds = vec![
        "break square",
        "continue",
        "continue",
        "continue",
        "bookmark here",
    ];
    cmds.extend(state);
    cmds.extend(["continue", "continue", "print x", "goto here"]);
    cmds.extend(state);
    cmds.extend(["reverse-continue", "goto here"]);
    cmds.extend(state);
    cmds.push("info bookmarks");
    let r = replay_batch(&trace, &cmds);
    r.clean();
    // The three copies of the state (registers, stack, globals) are identical.
    let text = &r.stdout;
    let block = |from: usize| -> Vec<&str> {
        text.lines()
            .skip(from)
            .skip_while(|l| !l.starts_with("rax "))
            .take_while(|l| !l.starts_with('$') || l.starts_with("$1") || l.contains('='))
            .take(20 + 8 + 2)
            .collect()
    };
    let starts: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("rax "))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(starts.len(), 3, "{text}");
    let a = block(starts[0]);
    assert!(a.iter().any(|l| l.starts_with("rip ")), "{text}");
    assert_eq!(a, block(starts[1]), "{text}");
    assert_eq!(a, block(starts[2]), "{text}");
    let values = printed(&r);
    assert_eq!(values[0], values[3], "{text}");
    assert_eq!(values[1], values[4], "{text}");
    r.line("here {*}{n}:{n}:{hex}:{n}");
}

#[test]
fn when_prints_a_position_that_goto_returns_to() {
    let (trace, _) = loop_trace();
    let first = replay_batch(&trace, &["break square", "continue", "continue", "when"]);
    first.clean();
    let p = positions(&first);
    assert_eq!(p.len(), 1, "{}", first.stdout);
    // In a new session: go there from the start, and again after going past it.
    let r = replay_batch(
        &trace,
        &[
            "break square",
            &format!("goto {}", p[0]),
            "print x",
            "when",
            "continue",
            "continue",
            &format!("goto {}", p[0]),
            "print x",
            "when",
        ],
    );
    r.clean();
    assert_eq!(printed(&r), ["1", "1"], "{}", r.stdout);
    assert_eq!(positions(&r), [p[0].clone(), p[0].clone()], "{}", r.stdout);
}

#[test]
fn goto_event_then_continue_reaches_the_same_stops_as_replaying_from_the_start() {
    let (trace, _) = loop_trace();
    let mut all = vec!["break square"];
    all.extend(["continue", "when", "print x"].repeat(8));
    let full = replay_batch(&trace, &all);
    full.clean();
    let e = events(&full);
    let xs = printed(&full);
    assert_eq!(xs.len(), 8, "{}", full.stdout);
    // Iterations make syscalls: every hit has an event of its own.
    let mid = e[4];
    assert!(e.windows(2).all(|w| w[0] < w[1]), "{:?}", e);
    let mut cmds = vec!["break square".to_string(), format!("goto event {mid}")];
    for _ in 0..4 {
        cmds.extend(["continue".to_string(), "print x".to_string()]);
    }
    let cmds: Vec<&str> = cmds.iter().map(String::as_str).collect();
    let r = replay_batch(&trace, &cmds);
    r.clean();
    // From the start of event `mid`'s stretch, the hits are those from hit 4 on.
    assert_eq!(printed(&r), xs[4..8].to_vec(), "{}", r.stdout);
}

#[test]
fn periodic_events_run_their_command_every_k_events() {
    let (trace, _) = loop_trace();
    let r = replay_batch(&trace, &["every 5 when", "continue"]);
    r.clean();
    let e = events(&r);
    assert!(e.len() >= 5, "{}", r.stdout);
    // Each firing is at the first stop at or after a multiple of 5, once per multiple.
    for w in e.windows(2) {
        assert!(w[1] / 5 > w[0] / 5, "{e:?}");
    }
    for t in &e {
        assert!(t % 5 <= 2, "fired at event {t}, late: {e:?}");
    }
    r.line("[Inferior 1 (process {n}) exited normally]");
}

#[test]
fn an_era_breakpoint_applies_only_within_its_era() {
    let (trace, _) = loop_trace();
    let mut all = vec!["break square"];
    all.extend(["continue", "when", "print x"].repeat(8));
    let full = replay_batch(&trace, &all);
    let e = events(&full);
    assert_eq!(e.len(), 8, "{}", full.stdout);
    // An era covering hits 2, 3 and 4 only.
    let (from, to) = (e[2], e[4] + 1);
    let r = replay_batch(
        &trace,
        &[
            &format!("break square from {from} to {to}"),
            "continue",
            "print x",
            "continue",
            "print x",
            "continue",
            "print x",
            "continue",
            "info events",
            "info breakpoints",
        ],
    );
    r.clean();
    assert_eq!(printed(&r), ["2", "3", "4"], "{}", r.stdout);
    r.line(&format!("\tonly from event {from} to event {to}"));
    r.line("[Inferior 1 (process {n}) exited normally]");
    r.line(&format!(
        "{{n}}{{*}}requeued{{*}}breakpoint 1 from event {from} to event {to}: stop"
    ));
    // Going back, the era still holds: reverse-continue stops at its hits only.
    let back = replay_batch(
        &trace,
        &[
            &format!("break square from {from} to {to}"),
            "break tt_loop.c:26",
            "continue",
            "continue",
            "continue",
            "continue",
            "reverse-continue",
            "print x",
            "reverse-continue",
            "print x",
        ],
    );
    back.clean();
    back.line("Breakpoint 2, main () at tt_loop.c:26");
    assert_eq!(printed(&back), ["4", "3"], "{}", back.stdout);
}

#[test]
fn dprintf_prints_and_goes_on() {
    let (trace, rec) = loop_trace();
    let r = replay_batch(
        &trace,
        &[
            r#"dprintf add_to_total,"v=%d total=%ld\n", v, total"#,
            "info breakpoints",
            "continue",
        ],
    );
    r.clean();
    r.line("1       dprintf        keep y   {hex} in add_to_total at tt_loop.c:{n}");
    r.line(r#"        printf "v=%d total=%ld\n",v,total"#);
    r.line("Dprintf 1 at {hex}: file tt_loop.c, line {n}.");
    r.seq(&["v=0 total=0", "v=1 total=0", "v=4 total=1", "v=49 total=91"]);
    r.line("[Inferior 1 (process {n}) exited normally]");
    assert!(rec.stdout.contains("total=140"));
}

#[test]
fn break_at_an_event_stops_there() {
    let (trace, _) = loop_trace();
    let r = replay_batch(&trace, &["break event 30", "continue", "when", "continue"]);
    r.clean();
    r.line("Stopped at event 30.");
    assert_eq!(events(&r), [30], "{}", r.stdout);
    r.line("[Inferior 1 (process {n}) exited normally]");
}

#[test]
fn checkpoints_can_be_listed_restarted_and_deleted() {
    let (trace, _) = loop_trace();
    let r = replay_batch(
        &trace,
        &[
            "break square",
            "continue",
            "continue",
            "checkpoint",
            "continue",
            "continue",
            "info checkpoints",
            "restart 1",
            "print x",
            "delete checkpoint 1",
            "info checkpoints",
            "restart 1",
        ],
    );
    r.clean();
    r.line("checkpoint 1: {n}:{n}:{hex}:{n}");
    assert_eq!(printed(&r), ["1"], "{}", r.stdout);
    r.err_has("Not found: checkpoint id 1");
}

#[test]
fn bad_positions_are_refused_and_the_replay_stays_where_it_was() {
    let (trace, _) = loop_trace();
    let r = replay_batch(
        &trace,
        &[
            "break square",
            "continue",
            "continue",
            "when",
            "goto 12:zz:1",
            "goto 3:0x1234:7",
            "goto event 999999",
            "goto nowhere",
            "print x",
            "when",
        ],
    );
    r.clean();
    r.err_has("malformed position '12:zz:1'");
    r.err_has("The recording has no position 3:0x1234:7.");
    r.err_has("There is no event 999999 in the recording");
    r.err_has("No bookmark named \"nowhere\"");
    assert_eq!(printed(&r), ["1"], "{}", r.stdout);
    let p = positions(&r);
    assert_eq!(p.len(), 2);
    assert_eq!(p[0], p[1]);
}

#[test]
fn reverse_commands_on_a_live_session_say_they_need_a_recording() {
    let prog = compile("tt_loop", &[]);
    let r = debug(
        &prog,
        &[
            "break square",
            "run",
            "reverse-continue",
            "reverse-step",
            "when",
            "goto event 3",
        ],
        &[],
    );
    r.clean();
    assert_eq!(
        r.stderr.matches("needs a recording").count(),
        4,
        "{}",
        r.stderr
    );
}

#[test]
fn reverse_at_the_start_of_the_recording_says_so() {
    let (trace, _) = loop_trace();
    let r = replay_batch(
        &trace,
        &["reverse-stepi", "reverse-continue", "reverse-next"],
    );
    r.clean();
    assert_eq!(
        r.stdout
            .matches("No more reverse-execution history.")
            .count(),
        3,
        "{}",
        r.stdout
    );
}

#[test]
fn going_back_over_a_long_run_uses_checkpoints_and_finds_the_same_hits() {
    let prog = compile("tt_long", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let mut cmds = vec!["break mark"];
    cmds.extend(["continue", "print i", "print acc"].repeat(6));
    cmds.push("bookmark last");
    cmds.push("info registers rip rsp");
    cmds.push("continue");
    cmds.extend(["reverse-continue", "print i", "print acc"].repeat(6));
    cmds.extend([
        "goto last",
        "print i",
        "print acc",
        "info registers rip rsp",
    ]);
    cmds.push("info checkpoints");
    let r = replay_batch(&trace, &cmds);
    r.clean();
    let v = printed(&r);
    assert_eq!(v.len(), 26, "{}", r.stdout);
    let forward: Vec<&[String]> = v[..12].chunks(2).collect();
    let backward: Vec<&[String]> = v[12..24].chunks(2).collect();
    let is: Vec<&str> = forward.iter().map(|c| c[0].as_str()).collect();
    assert_eq!(is, ["7", "107", "207", "307", "407", "507"]);
    let mut expected = forward.clone();
    expected.reverse();
    assert_eq!(backward, expected, "{}", r.stdout);
    // The bookmark at the last hit: the same values and registers.
    assert_eq!(&v[24..26], forward[5], "{}", r.stdout);
    let regs: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("rip ") || l.starts_with("rsp "))
        .collect();
    assert_eq!(regs.len(), 4, "{}", r.stdout);
    assert_eq!(regs[..2], regs[2..], "{}", r.stdout);
    // Replay took checkpoints on the way, and kept some.
    r.line("({n} automatic checkpoints, kept at events {n} to {n})");
}

#[test]
fn reverse_continue_stops_at_signals_and_goes_back_from_a_crash() {
    let prog = compile("tt_signals", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let crash = line_of("tt_signals", "CRASH-HERE");
    let mut cmds = vec!["continue"; 4];
    cmds.extend(["reverse-continue", "print handled"].repeat(3));
    cmds.extend([
        "reverse-continue",
        "continue",
        "print handled",
        "continue",
        "continue",
    ]);
    cmds.extend(["continue", "continue"]);
    let r = replay_batch(&trace, &cmds);
    r.clean();
    r.line(&format!("{{hex}} in main () at tt_signals.c:{crash}"));
    // Back from the crash: the three SIGUSR1s, latest first (the handler has not run yet
    // at each), then the start of the recording.
    assert_eq!(printed(&r)[..3], ["2", "1", "0"], "{}", r.stdout);
    assert_eq!(
        r.stdout
            .matches("Program received signal SIGUSR1, User defined signal 1.")
            .count(),
        3 + 3 + 3,
        "{}",
        r.stdout
    );
    r.seq(&[
        "No more reverse-execution history.",
        "{*}",
        "Program received signal SIGUSR1, User defined signal 1.",
        "{*}",
        "$4 = 0",
        "{*}",
        "Program received signal SIGSEGV, Segmentation fault.",
        "{*}",
        "Program terminated with signal SIGSEGV, Segmentation fault.",
    ]);
}

#[test]
fn checkpoints_of_a_multithreaded_replay_recreate_its_threads() {
    let prog = compile("tt_threads_long", &[]);
    let (trace, rec) = record_trace(&prog, &[]);
    let mut cmds = vec!["break bump if round % 10 == 5"];
    cmds.extend(["continue", "print id", "print round", "print shared"].repeat(10));
    cmds.push("info checkpoints");
    cmds.extend(
        [
            "reverse-continue",
            "print id",
            "print round",
            "print shared",
        ]
        .repeat(9),
    );
    let end = format!(
        "break tt_threads_long.c:{}",
        line_of("tt_threads_long", "END-HERE")
    );
    cmds.extend(["info threads", "delete", &end, "continue"]);
    cmds.push("print shared");
    let r = replay_batch(&trace, &cmds);
    r.clean();
    let v = printed(&r);
    assert_eq!(v.len(), 30 + 27 + 1, "{}", r.stdout);
    let forward: Vec<&[String]> = v[..30].chunks(3).collect();
    let backward: Vec<&[String]> = v[30..57].chunks(3).collect();
    let mut expected = forward[..9].to_vec();
    expected.reverse();
    assert_eq!(backward, expected, "{}", r.stdout);
    // Checkpoints were taken while both workers ran (so threads were recreated from them).
    r.line("({n} automatic checkpoints, kept at events {n} to {n})");
    // gdb's thread numbers survive the copies: a worker stays Thread 2 or 3.
    r.line("* {n}    Thread {hex} (LWP {n}) \"tt_threads_long\" bump (id={n}, round=5) at tt_threads_long.c:{n}");
    // Forward again to the end: the recorded result.
    let total = rec
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("shared="))
        .expect("the recorded total");
    assert_eq!(v[57], total, "{}", r.stdout);
}

#[test]
fn going_back_across_an_exec_is_refused_without_moving() {
    let prog = compile("rr_exec", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let r = replay_batch(
        &trace,
        &[
            "break main",
            "continue",
            "continue",
            "print argc",
            "reverse-continue",
            "goto event 3",
            "print argc",
            "run",
            "print argc",
        ],
    );
    r.clean();
    r.line("process {n} is executing new program: {*}");
    r.err_line("going back across an exec is not supported yet (the program executed a new one at event {n}); 'run' starts the replay again");
    // Where it was (after the exec: the new program's main), then the start again with run.
    assert_eq!(printed(&r), ["3", "3", "1"], "{}", r.stdout);
}

#[test]
fn with_a_checkpoint_at_every_event_going_back_finds_the_same_stops() {
    // Checkpoints taken everywhere (at signal deliveries, handler returns, before an exec)
    // and restored: the replay must not notice.
    let every = [("HINDSIGHT_CHECKPOINT_MS", "0")];
    let prog = compile("tt_signals", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let r = replay_batch_env(
        &trace,
        &every,
        &[
            "break on_usr1",
            "continue",
            "continue",
            "continue",
            "continue",
            "print handled",
            "reverse-continue",
            "print handled",
            "reverse-continue",
            "print handled",
            "info checkpoints",
        ],
    );
    r.clean();
    assert!(!r.stderr.contains("diverged"), "{}", r.stderr);
    assert_eq!(printed(&r), ["1", "1", "0"], "{}", r.stdout);
    r.line("({n} automatic checkpoints, kept at events {n} to {n})");
    let prog = compile("rr_exec", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let r = replay_batch_env(&trace, &every, &["continue"]);
    r.clean();
    // No SIGCHLD from a checkpoint dropped after the exec reaches the program.
    assert!(!r.stdout.contains("SIGCHLD"), "{}", r.stdout);
    r.line("[Inferior 1 (process {n}) exited with code 03]");
}

#[test]
fn positions_in_library_code_and_back_from_a_fault() {
    // A stop in the C library: its position is found again, and reverse-finish goes back to
    // the call in the program.
    let (trace, _) = loop_trace();
    let r = replay_batch(
        &trace,
        &[
            "break main",
            "continue",
            "break getppid",
            "continue",
            "when",
            "bookmark inlibc",
            "continue",
            "goto inlibc",
            "when",
            "reverse-finish",
        ],
    );
    r.clean();
    let p = positions(&r);
    assert_eq!(p.len(), 2, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(p[0], p[1]);
    r.line("Run back to call of #0  {*}getppid{*}");
    r.line("main () at tt_loop.c:{n}");
    // From the crash: one instruction back is the one before the faulting one.
    let prog = compile("crash", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let r = replay_batch(
        &trace,
        &[
            "continue",
            "info registers rip",
            "reverse-stepi",
            "info registers rip",
            "stepi",
            "info registers rip",
        ],
    );
    r.clean();
    let rips: Vec<u64> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("rip "))
        .filter_map(|l| {
            u64::from_str_radix(l.split_whitespace().nth(1)?.trim_start_matches("0x"), 16).ok()
        })
        .collect();
    assert_eq!(rips.len(), 3, "{}\n{}", r.stdout, r.stderr);
    assert!(rips[1] < rips[0] && rips[0] - rips[1] <= 15, "{rips:x?}");
    assert_eq!(rips[2], rips[0], "{rips:x?}");
}

#[test]
fn reverse_continue_between_timer_signals_in_a_loop_without_syscalls() {
    // SIGALRM every millisecond into a loop that makes no syscall: each handler call starts
    // at an asynchronous position. Going back to an earlier call replays from the start (no
    // checkpoint in between) and must find the current one again, signal frame included.
    let prog = compile("rr_itimer", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    for env in [
        ("HINDSIGHT_CHECKPOINT_MS", "100000"),
        ("HINDSIGHT_CHECKPOINT_MS", "0"),
    ] {
        let r = replay_batch_env(
            &trace,
            &[env],
            &[
                "break on_alarm",
                "continue",
                "continue",
                "continue",
                "continue",
                "print ticks",
                "reverse-continue",
                "print ticks",
                "reverse-continue",
                "print ticks",
                "continue",
                "print ticks",
            ],
        );
        r.clean();
        assert_eq!(printed(&r), ["3", "2", "1", "2"], "{env:?}\n{}", r.stdout);
    }
}

#[test]
fn the_recorded_past_cannot_be_changed() {
    let (trace, _) = loop_trace();
    let r = replay_batch(
        &trace,
        &[
            "break square",
            "continue",
            "continue",
            "set var x = 40",
            "print x = 40",
            "print x++",
            "print x == 1",
            "print x",
        ],
    );
    let refusal = "A replay cannot change the program: its past is recorded (debug the program live with 'hindsight debug' to change variables).";
    assert_eq!(
        r.stderr.lines().filter(|l| *l == refusal).count(),
        3,
        "set var, an assignment and an increment are refused\n{}\n{}",
        r.stdout,
        r.stderr
    );
    // Comparisons are not assignments; the value is the recorded one.
    assert_eq!(printed(&r), ["1", "1"], "{}", r.stdout);
}

#[test]
fn reverse_commands_work_from_the_programs_exit() {
    let (trace, _) = loop_trace();
    let r = replay_batch(
        &trace,
        &[
            "continue",
            "reverse-stepi",
            "info registers rip",
            "reverse-stepi",
            "info registers rip",
            "continue",
            "break square",
            "reverse-continue",
            "print x",
            "reverse-finish",
            "continue",
            "reverse-next",
            "continue",
            "break add_to_total",
            "reverse-continue",
            "print v",
            "reverse-step",
            "print x",
        ],
    );
    r.line("[Inferior 1 (process {n}) exited normally]");
    // From the exit, one instruction back is the exit syscall (the last instruction that
    // ran), then the one before it.
    let rips: Vec<(u64, String)> = r
        .stdout
        .lines()
        .filter_map(|l| {
            let mut w = l.strip_prefix("rip ")?.split_whitespace();
            let pc = u64::from_str_radix(w.next()?.strip_prefix("0x")?, 16).ok()?;
            Some((pc, w.nth(1)?.to_string()))
        })
        .collect();
    assert_eq!(rips.len(), 2, "{}", r.dump());
    assert!(rips[0].1.contains("exit"), "{rips:?}");
    assert!(rips[1].0 < rips[0].0, "{rips:?}");
    // The last call of square was square(7); reverse-finish goes back to its call in main.
    let call = line_of("tt_loop", "add_to_total(square(i))");
    r.line("Run back to call of #0  square (x=7) at tt_loop.c:{n}");
    r.line(&format!("main () at tt_loop.c:{call}"));
    // From square(7), the add_to_total before is the one of square(6); reverse-step from its
    // first line goes back into square's last line.
    r.line("square (x=6) at tt_loop.c:{n}");
    assert_eq!(printed(&r), ["7", "36", "6"], "{}", r.dump());
    assert!(!r.stderr.contains("could not"), "{}", r.dump());
}

/// `stepi` over a libc `syscall` that hindsight's agent serves (the site jumps to the agent's
/// stub) ends at the next instruction of the program, as without hindsight: no stop inside
/// the agent (it used to take two steps, the first ending in the stub at 0x7a00…).
#[test]
fn stepi_over_a_syscall_the_agent_serves_ends_right_after_it() {
    let prog = compile("stepi_syscall", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let mut cmds = vec!["break main", "continue", "break write", "continue"];
    for _ in 0..12 {
        cmds.extend(["stepi", "x/i $pc"]);
    }
    let r = replay_batch(&trace, &cmds);
    let pcs: Vec<&str> = r.stdout.lines().filter(|l| l.starts_with("=> ")).collect();
    assert_eq!(pcs.len(), 12, "{}", r.dump());
    assert!(
        pcs.iter().all(|l| !l.contains("0x7a00000")),
        "a step ended inside the agent: {}",
        r.dump()
    );
    let addr = |l: &str| {
        let hex = l[3..].split([' ', ':']).next().unwrap_or("");
        u64::from_str_radix(hex.trim_start_matches("0x"), 16).unwrap_or(0)
    };
    let at = pcs
        .iter()
        .position(|l| l.trim_end().ends_with("syscall"))
        .unwrap_or_else(|| panic!("no step reached write's syscall: {}", r.dump()));
    assert!(at + 1 < pcs.len(), "{}", r.dump());
    assert_eq!(addr(pcs[at + 1]), addr(pcs[at]) + 2, "{}", r.dump());
}

/// Right after a `syscall` stepped over by instruction, the recorded events that follow it
/// and need no execution (its output, the next batch of buffered calls) are replayed: `when`
/// names the same instant as any other way of getting there, so it finds it again, and
/// `reverse-stepi` and `stepi` come back to it. Checked over a write to stdout and over a
/// traced `mmap` followed by buffered writes, with and without the agent.
/// How many `stepi` after `setup` (commands that stop the replay at a function's start) end
/// on the function's `syscall` instruction (at most 12 are tried).
fn stepi_count_to_syscall(trace: &std::path::Path, setup: &[&str]) -> usize {
    let mut cmds = setup.to_vec();
    for _ in 0..12 {
        cmds.extend(["stepi", "x/i $pc"]);
    }
    let r = replay_batch(trace, &cmds);
    let pcs: Vec<&str> = r.stdout.lines().filter(|l| l.starts_with("=> ")).collect();
    let at = pcs
        .iter()
        .position(|l| l.trim_end().ends_with("syscall"))
        .unwrap_or_else(|| panic!("no step reached the syscall: {}", r.dump()));
    at + 1
}

#[test]
fn when_right_after_a_stepped_syscall_finds_the_position_again() {
    let prog = compile("stepi_traced", &[]);
    for env in [&[][..], &[("HINDSIGHT_NO_AGENT", "1")][..]] {
        let (trace, _) = record_trace_env(&prog, &[], env);
        for func in ["syscall", "write"] {
            // Which step ends right after the function's `syscall`.
            let brk = format!("break {func}");
            let setup = ["break main", "continue", brk.as_str(), "continue"];
            let steps = stepi_count_to_syscall(&trace, &setup) + 1;
            let mut cmds = setup.to_vec();
            cmds.extend(std::iter::repeat_n("stepi", steps));
            cmds.extend([
                "when",
                "reverse-stepi",
                "x/i $pc",
                "when",
                "stepi",
                "when",
                "reverse-stepi",
                "reverse-stepi",
                "stepi",
                "stepi",
                "when",
            ]);
            let r = replay_batch(&trace, &cmds);
            let out = r.stdout.clone() + &r.stderr;
            assert!(
                !out.contains("could not find"),
                "{func} {env:?}: {}",
                r.dump()
            );
            let whens: Vec<&str> = r
                .stdout
                .lines()
                .filter(|l| l.starts_with("Current position:"))
                .collect();
            assert_eq!(whens.len(), 4, "{func} {env:?}: {}", r.dump());
            assert_eq!(whens[0], whens[2], "{func} {env:?}: {}", r.dump());
            assert_eq!(whens[0], whens[3], "{func} {env:?}: {}", r.dump());
            assert_ne!(whens[0], whens[1], "{func} {env:?}: {}", r.dump());
            let back: Vec<&str> = r.stdout.lines().filter(|l| l.starts_with("=> ")).collect();
            assert!(
                back.len() == 1 && back[0].trim_end().ends_with("syscall"),
                "{func} {env:?}: reverse-stepi did not go back to the syscall: {}",
                r.dump()
            );
        }
    }
}

/// A signal the recording delivered at a syscall's end (SIGALRM ending `pause()`), stepped
/// over by instruction, as under gdb: `stepi` over the `syscall` stops right after it with
/// the restart code in rax (the signal not delivered yet); the next `stepi` runs the handler
/// to its end and steps on (gdb steps over the handler of a `nostop` signal), or, with
/// `handle SIGALRM stop`, reports the signal and then steps into the handler. Every stop on
/// the way is found again by `when` and by stepping back and forth, and the replay goes on
/// as recorded. Before, the step back diverged ("recorded rt_sigreturn, replay pause"): the
/// step dropped the pending signal, and a stepped `syscall` left the step's trap flag in r11
/// and in the handler's frame.
#[test]
fn stepping_over_a_syscall_that_a_signal_ends_finds_every_position_again() {
    let prog = compile("stepi_signal", &[]);
    let to_printf = ["break stepi_signal.c:24", "continue", "p hits"];
    for env in [&[][..], &[("HINDSIGHT_NO_AGENT", "1")][..]] {
        let (trace, _) = record_trace_env(&prog, &[], env);
        let setup = ["break main", "continue", "break pause", "continue"];
        let mut start = setup.to_vec();
        start.extend(std::iter::repeat_n(
            "stepi",
            stepi_count_to_syscall(&trace, &setup),
        ));
        let check = |r: &Run| {
            let all = r.stdout.clone() + &r.stderr;
            assert!(
                !all.contains("could not find")
                    && !all.contains("diverged")
                    && !all.contains("SIGTRAP"),
                "{env:?}: {}",
                r.dump()
            );
            let insns: Vec<String> = r
                .stdout
                .lines()
                .filter(|l| l.starts_with("=> "))
                .map(String::from)
                .collect();
            let values: Vec<String> = r
                .stdout
                .lines()
                .filter(|l| l.starts_with('$'))
                .map(|l| {
                    l.split_once(" = ")
                        .map(|(_, v)| v.to_string())
                        .unwrap_or_default()
                })
                .collect();
            let whens: Vec<String> = r
                .stdout
                .lines()
                .filter_map(|l| l.strip_prefix("Current position: "))
                .map(String::from)
                .collect();
            (insns, values, whens)
        };

        // The handler stepped over (SIGALRM: nostop, pass).
        let mut cmds = start.clone();
        cmds.extend([
            "x/i $pc", // the syscall
            "stepi",
            "p $rax",
            "x/i $pc", // right after it
            "when",    // 0
            "stepi",
            "p $rax",
            "p hits",
            "x/i $pc", // the next instruction, the handler run
            "when",    // 1
            "reverse-stepi",
            "p $rax",
            "x/i $pc", // back after the syscall, the handler run
            "stepi",
            "when", // 2
        ]);
        cmds.extend(to_printf);
        let r = replay_batch(&trace, &cmds);
        let (insns, values, whens) = check(&r);
        assert_eq!(insns.len(), 4, "{env:?}: {}", r.dump());
        assert!(insns[0].trim_end().ends_with("syscall"), "{}", r.dump());
        assert_eq!(insns[1], insns[3], "{env:?}: {}", r.dump());
        assert!(!insns[2].contains("<on_alarm"), "{env:?}: {}", r.dump());
        assert_ne!(insns[1], insns[2], "{env:?}: {}", r.dump());
        // pause() returns -ERESTARTNOHAND to the kernel; the handler's delivery makes it EINTR.
        assert_eq!(
            values,
            ["-514", "-4", "14", "-4", "14"],
            "{env:?}: {}",
            r.dump()
        );
        assert_eq!(whens.len(), 3, "{env:?}: {}", r.dump());
        assert_eq!(whens[1], whens[2], "{env:?}: {}", r.dump());
        assert_ne!(whens[0], whens[1], "{env:?}: {}", r.dump());

        // The signal reported, then its handler stepped into.
        let mut cmds = vec!["handle SIGALRM stop print"];
        cmds.extend(start.iter().copied());
        cmds.extend([
            "stepi",
            "x/i $pc", // right after the syscall
            "when",    // 0
            "stepi",   // the signal is reported
            "stepi",
            "x/i $pc", // the handler's first instruction
            "when",    // 1
            "stepi",
            "when", // 2
            "reverse-stepi",
            "when", // 3
            "reverse-stepi",
            "p $rax",
            "x/i $pc", // right after the syscall again
            "when",    // 4
            "reverse-stepi",
            "x/i $pc", // the syscall
            "stepi",
            "when",     // 5
            "continue", // the signal is reported again
        ]);
        cmds.extend(to_printf);
        let r = replay_batch(&trace, &cmds);
        let (insns, values, whens) = check(&r);
        assert!(
            r.stdout.contains("Program received signal SIGALRM"),
            "{env:?}: {}",
            r.dump()
        );
        assert_eq!(insns.len(), 4, "{env:?}: {}", r.dump());
        assert_eq!(insns[0], insns[2], "{env:?}: {}", r.dump());
        assert!(insns[1].contains("<on_alarm"), "{env:?}: {}", r.dump());
        assert!(insns[3].trim_end().ends_with("syscall"), "{}", r.dump());
        assert_eq!(values, ["-514", "14"], "{env:?}: {}", r.dump());
        assert_eq!(whens.len(), 6, "{env:?}: {}", r.dump());
        assert_eq!(whens[1], whens[3], "{env:?}: {}", r.dump());
        assert_ne!(whens[1], whens[2], "{env:?}: {}", r.dump());
        assert_eq!(whens[0], whens[5], "{env:?}: {}", r.dump());
        // The instant after the syscall reached backward is the same instruction instance
        // (ticks and pc); its event number may count the signal as taken already.
        let tail = |p: &str| {
            p.split_once(':')
                .map(|(_, t)| t.to_string())
                .unwrap_or_default()
        };
        assert_eq!(tail(&whens[0]), tail(&whens[4]), "{env:?}: {}", r.dump());
    }
}
