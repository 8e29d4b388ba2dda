//! Breakpoints under racing threads, zombies, the program's own int3, conditions, tbreak.

mod common;
use common::*;

#[test]
fn ignore_count_sees_every_call_of_every_thread() {
    let prog = compile("race", &[]);
    let r = debug(
        &prog,
        &[
            "break count",
            "ignore 1 1000000",
            "continue",
            "info breakpoints",
        ],
        &[],
    );
    r.has("Breakpoint 1 at 0x")
        .has("Will ignore next 1000000 crossings of breakpoint 1.")
        // 4 threads x 5000 calls, not one more or less.
        .has("\tbreakpoint already hit 20000 times\n")
        .has("\tignore next 980000 hits\n")
        .has("[Inferior 1 (process ")
        .has("exited normally]")
        .code(0);
    assert!(
        r.stdout.contains(&native(&prog, &[])),
        "output changed:\n{}",
        r.stdout
    );
    assert_eq!(r.stdout.matches("[New Thread 0x").count(), 4);
}

#[test]
fn ignore_count_with_inline_stepping_is_exact_too() {
    // A non-PIE build puts the code where the scratch page may land elsewhere; the count
    // must not depend on how the step-over is done.
    let prog = compile("race", &["-no-pie"]);
    let r = debug(
        &prog,
        &[
            "break count",
            "ignore 1 1000000",
            "continue",
            "info breakpoints",
        ],
        &[],
    );
    r.has("\tbreakpoint already hit 20000 times\n")
        .has("exited normally]")
        .code(0);
}

#[test]
fn deleting_at_the_first_stop_turns_pending_hits_into_zombies() {
    let prog = compile("race", &[]);
    let r = debug(&prog, &["break count", "run", "delete 1", "continue"], &[]);
    r.has("hit Breakpoint 1, count (x=")
        .lacks("SIGTRAP")
        .has("exited normally]")
        .code(0);
    assert!(
        r.stdout.contains(&native(&prog, &[])),
        "output changed:\n{}",
        r.stdout
    );
}

#[test]
fn the_programs_own_int3_reaches_its_handler() {
    let prog = compile("int3", &[]);
    let r = debug(&prog, &["run", "continue"], &[]);
    r.has("Program received signal SIGTRAP, Trace/breakpoint trap.")
        .has("handler ran 1 time(s)")
        .has("exited normally]")
        .code(0);
}

#[test]
fn conditions_tbreak_disable_enable_and_hit_counts() {
    let prog = compile("steps", &[]);
    let r = debug(
        &prog,
        &[
            "break square if x == 2",
            "tbreak sum_squares",
            "run",
            "continue",
            "print x",
            "condition 1",
            "disable 1",
            "info breakpoints",
            "enable 1",
            "continue",
            "print x",
            "delete",
            "continue",
        ],
        &[],
    );
    r.has("Breakpoint 1 at 0x")
        .has("Temporary breakpoint 2 at 0x")
        .has("Temporary breakpoint 2, sum_squares (n=3) at ")
        .has("Breakpoint 1, square (x=2) at ")
        .has("$1 = 2\n")
        .has("Breakpoint 1 now unconditional.")
        .has("1       breakpoint     keep n   0x")
        .has("in square at ")
        .has("\tbreakpoint already hit 1 time\n")
        .has("Breakpoint 1, square (x=3) at ")
        .has("$2 = 3\n")
        .has("v = 15")
        .has("exited normally]");
    // The temporary breakpoint is gone after it stopped the program.
    assert!(!r.stdout.contains("2       breakpoint"), "{}", r.stdout);
}

#[test]
fn file_line_and_address_breakpoints() {
    let prog = compile("steps", &[]);
    let r = debug(
        &prog,
        &["break steps.c:12", "run", "info breakpoints", "print $pc"],
        &[],
    );
    r.has("file ")
        .has("line 12.")
        .has("Breakpoint 1, sum_squares (n=3) at ")
        .has("12\t        total += square(i);");
    // The address gdb printed for the breakpoint works as `*ADDRESS` too.
    let addr = r
        .stdout
        .split("Breakpoint 1 at ")
        .nth(1)
        .and_then(|s| s.split(':').next())
        .expect("address")
        .to_string();
    let r2 = debug(&prog, &[&format!("break *{addr}"), "run", "bt 1"], &[]);
    r2.has("Breakpoint 1, sum_squares (n=3) at ");
}

/// A function that the loader and libc both define (`mmap`) is one breakpoint with a
/// location in each, as in gdb; the program's own call stops in libc's.
#[test]
fn a_function_of_several_libraries_has_a_location_in_each() {
    let prog = compile("rr_mmap", &[]);
    let r = debug(
        &prog,
        &["break main", "run", "break mmap", "continue", "bt"],
        &[prog.to_str().expect("path")],
    );
    r.has("Breakpoint 2 at ")
        .has(": mmap. (2 locations)")
        .has("Breakpoint 2.1, ")
        .has(" in main (argc=2, ");
}

// ---------------------------------------------------------------------------------------------
// The same ground again with `tests/programs/hits.c`, `basics.c` and `selftrap.c`, every
// expected line taken from what gdb 13 prints for the same commands.

/// Line 17 of hits.c, the body of `f`, as gdb shows it at a stop.
const HITS_F_LINE: &str = "17\t    return (x * 2654435761u) % 1000003u;";

/// N threads x M calls of `f` under `ignore`: the hit count is exactly N x M, the program's
/// output is what it prints natively, every thread is announced and reported gone.
fn ignore_counts_every_call(prog: &std::path::Path, threads: u32, calls: u32) {
    let args = [threads.to_string(), calls.to_string()];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let total = threads * calls;
    let r = debug(
        prog,
        &[
            "break f",
            "ignore 1 1000000",
            "continue",
            "info breakpoints",
        ],
        &args,
    );
    r.line("Breakpoint 1 at {hex}: file hits.c, line 17.")
        .line("[Inferior 1 (process {n}) exited normally]")
        .block(&[
            "Num     Type           Disp Enb Address            What",
            "1       breakpoint     keep y   {hex} in f at hits.c:17",
            &format!("\tbreakpoint already hit {total} times"),
            &format!("\tignore next {} hits", 1_000_000 - total),
        ])
        .nowhere("SIGTRAP")
        .nowhere("hit Breakpoint")
        .code(0)
        .program_gone();
    let expected = format!("threads {threads} calls {calls} checksum ");
    assert!(native(prog, &args).contains(&expected));
    assert!(
        r.stdout.contains(&native(prog, &args)),
        "the program's output changed under the debugger{}",
        r.stdout
    );
    assert_eq!(
        r.count("[New Thread {hex} (LWP {n})]"),
        threads as usize,
        "{}",
        r.stdout
    );
    assert_eq!(
        r.count("[Thread {hex} (LWP {n}) exited]"),
        threads as usize,
        "{}",
        r.stdout
    );
}

#[test]
fn ignore_count_four_threads_twenty_thousand_hits() {
    ignore_counts_every_call(&compile("hits", &[]), 4, 5000);
}

#[test]
fn ignore_count_eight_threads_non_pie() {
    ignore_counts_every_call(&compile("hits", &["-no-pie"]), 8, 3000);
}

/// `break f`, `run`, `delete 1` at the first stop, `continue`: the hits that other threads
/// had pending are zombies, resumed silently; the program ends exactly as natively.
fn delete_at_first_stop(prog: &std::path::Path, temporary: bool, threads: u32) {
    let args = [threads.to_string(), "5000".to_string()];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (set, kind) = if temporary {
        ("tbreak f", "Temporary breakpoint")
    } else {
        ("break f", "Breakpoint")
    };
    let mut cmds = vec![set, "run"];
    if !temporary {
        cmds.push("delete 1");
    }
    cmds.extend(["info breakpoints", "continue"]);
    let r = debug(prog, &cmds, &args);
    // The first hit of all is some worker's first call: x is id * 5000 for worker `id`, which
    // gdb numbers as thread id + 2 (threads are numbered in creation order, main is 1).
    r.seq(&[
        &format!("{kind} 1 at {{hex}}: file hits.c, line 17."),
        "[New Thread {hex} (LWP {n})]",
        // (gdb also prints "[Switching to Thread ...]" here: see threads.rs.)
        &format!(
            "Thread {{n}} \"{}\" hit {kind} 1, f (x={{n}}) at hits.c:17",
            thread_name(prog)
        ),
        HITS_F_LINE,
        "No breakpoints or watchpoints.",
        "[Inferior 1 (process {n}) exited normally]",
    ])
    .nowhere("SIGTRAP")
    .nowhere("Program received signal")
    .code(0)
    .program_gone();
    let stop = r
        .stdout
        .lines()
        .find(|l| l.contains(&format!("hit {kind} 1, f (x=")))
        .expect("a stop line");
    let thread: u32 = stop
        .strip_prefix("Thread ")
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .expect("thread number");
    let x: u32 = stop
        .split("(x=")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .and_then(|s| s.parse().ok())
        .expect("x");
    assert!(
        (2..threads + 2).contains(&thread) && x == (thread - 2) * 5000,
        "the first stop must be a worker's first call: {stop}"
    );
    assert_eq!(
        r.count(&format!("{{*}}hit {kind} 1{{*}}")),
        1,
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(&native(prog, &args)),
        "the program's output changed{}",
        r.stdout
    );
}

#[test]
fn delete_at_first_stop_four_threads() {
    let prog = compile("hits", &[]);
    for _ in 0..3 {
        delete_at_first_stop(&prog, false, 4);
    }
}

#[test]
fn delete_at_first_stop_eight_threads_non_pie() {
    let prog = compile("hits", &["-no-pie"]);
    for _ in 0..3 {
        delete_at_first_stop(&prog, false, 8);
    }
}

#[test]
fn temporary_breakpoint_hit_by_racing_threads_stops_once() {
    let prog = compile("hits", &[]);
    for _ in 0..3 {
        delete_at_first_stop(&prog, true, 4);
    }
}

#[test]
fn condition_under_racing_threads_stops_exactly_once() {
    let prog = compile("hits", &[]);
    let r = debug(
        &prog,
        &[
            "break f if x == 12345",
            "run",
            "print x",
            "backtrace 2",
            "continue",
            "info breakpoints",
        ],
        &[],
    );
    // 12345 is worker 2's call number 2345.
    r.seq(&[
        "Breakpoint 1 at {hex}: file hits.c, line 17.",
        "Thread 4 \"hits\" hit Breakpoint 1, f (x=12345) at hits.c:17",
        HITS_F_LINE,
        "$1 = 12345",
        "#0  f (x=12345) at hits.c:17",
        "#1  {hex} in worker (arg=0x2) at hits.c:26",
        "threads 4 calls 5000 checksum 10004374217",
        "[Inferior 1 (process {n}) exited normally]",
    ])
    .block(&[
        "Num     Type           Disp Enb Address            What",
        "1       breakpoint     keep y   {hex} in f at hits.c:17",
        "\tstop only if x == 12345",
        "\tbreakpoint already hit 1 time",
    ])
    .nowhere("SIGTRAP")
    .code(0)
    .program_gone();
    assert_eq!(r.count("{*}hit Breakpoint 1{*}"), 1, "{}", r.stdout);
}

#[test]
fn self_int3_is_a_sigtrap_for_the_program_and_reaches_its_handler() {
    let prog = compile("selftrap", &[]);
    let r = debug(&prog, &["run", "backtrace", "continue"], &[]);
    r.seq(&[
        "Program received signal SIGTRAP, Trace/breakpoint trap.",
        "main () at selftrap.c:27",
        "27\t    printf(\"after int3, traps = %d\\n\", (int)traps);",
        "#0  main () at selftrap.c:27",
        "[Inferior 1 (process {n}) exited normally]",
    ])
    // gdb itself would swallow the SIGTRAP (its signal table says "pass: No"); hindsight passes
    // the program's own trap on, so its handler runs exactly once.
    .has("before int3\n")
    .has("handler caught signal 5\n")
    .has("after int3, traps = 1\n")
    .code(0)
    .program_gone();
    assert_eq!(r.count("Program received signal SIGTRAP{*}"), 1);
}

#[test]
fn self_int3_with_a_breakpoint_in_the_handler() {
    let prog = compile("selftrap", &[]);
    let r = debug(
        &prog,
        &[
            "break on_trap",
            "run",
            "continue",
            "backtrace 1",
            "continue",
        ],
        &[],
    );
    r.seq(&[
        "Breakpoint 1 at {hex}: file selftrap.c, line 12.",
        "Program received signal SIGTRAP, Trace/breakpoint trap.",
        "main () at selftrap.c:27",
        "Breakpoint 1, on_trap (sig=5) at selftrap.c:12",
        "12\t    traps++;",
        "#0  on_trap (sig=5) at selftrap.c:12",
        "[Inferior 1 (process {n}) exited normally]",
    ])
    .has("after int3, traps = 1\n")
    .code(0);
}

#[test]
fn conditions_tbreak_disable_enable_delete_and_hit_counts() {
    let prog = compile("basics", &[]);
    let r = debug(
        &prog,
        &[
            "break add if a == 3",
            "tbreak square",
            "break basics.c:46",
            "run",
            "info breakpoints",
            "continue",
            "print a",
            "print b",
            "condition 1 a > 5",
            "continue",
            "print a",
            "info breakpoints",
            "disable 1",
            "continue",
            "backtrace",
            "enable 1",
            "delete 3",
            "condition 1",
            "continue",
            "info breakpoints",
            "delete",
            "info breakpoints",
        ],
        &[],
    );
    r.seq(&[
        "Breakpoint 1 at {hex}: file basics.c, line 38.",
        "Temporary breakpoint 2 at {hex}: file basics.c, line 32.",
        "Breakpoint 3 at {hex}: file basics.c, line 46.",
        "Temporary breakpoint 2, square (v=7) at basics.c:32",
        "32\t    int result = v * v;",
    ])
    // The temporary breakpoint is gone once it has stopped the program.
    .block(&[
        "Num     Type           Disp Enb Address            What",
        "1       breakpoint     keep y   {hex} in add at basics.c:38",
        "\tstop only if a == 3",
        "3       breakpoint     keep y   {hex} in level3 at basics.c:46",
        "Breakpoint 1, add (a=3, b=3) at basics.c:38",
        "38\t    int sum = a + b;",
        "$1 = 3",
        "$2 = 3",
    ])
    // Evaluations where the condition was false are not hits.
    .block(&[
        "Breakpoint 1, add (a=6, b=6) at basics.c:38",
        "38\t    int sum = a + b;",
        "$3 = 6",
        "Num     Type           Disp Enb Address            What",
        "1       breakpoint     keep y   {hex} in add at basics.c:38",
        "\tstop only if a > 5",
        "\tbreakpoint already hit 2 times",
        "3       breakpoint     keep y   {hex} in level3 at basics.c:46",
    ])
    // Disabled, add (a=7..9) does not stop; level3's breakpoint does. A struct argument is
    // shown as `...` in frame lines (gdb's default `print frame-arguments scalars`).
    .block(&[
        "Breakpoint 3, level3 (depth=3, tag={hex} \"deep\") at basics.c:46",
        "46\t    return local3 + (int)strlen(tag);",
        "#0  level3 (depth=3, tag={hex} \"deep\") at basics.c:46",
        "#1  {hex} in level2 (depth=2, p=...) at basics.c:51",
        "#2  {hex} in level1 (depth=1) at basics.c:57",
        "#3  {hex} in main () at basics.c:78",
    ])
    .seq(&[
        "deep 305 neg -5 byte 200",
        "[Inferior 1 (process {n}) exited normally]",
    ])
    // Breakpoint 3 was deleted, 1 is unconditional again; then `delete` removes them all.
    .block(&[
        "Num     Type           Disp Enb Address            What",
        "1       breakpoint     keep y   {hex} in add at basics.c:38",
        "\tbreakpoint already hit 2 times",
        "No breakpoints or watchpoints.",
    ])
    .no_line("Breakpoint 1, add (a=7, b=7) at basics.c:38");
}

#[test]
fn ignore_then_continue_n_count_every_crossing() {
    let prog = compile("basics", &[]);
    let r = debug(
        &prog,
        &[
            "break add",
            "ignore 1 4",
            "run",
            "info breakpoints",
            "continue 3",
            "print a",
            "info breakpoints",
            "break 46",
            "tbreak basics.c:56",
            "continue",
            "continue",
            "info breakpoints",
        ],
        &[],
    );
    // add is called with (49, 1), then (0, 0), (1, 1)...: the 5th call is add (3, 3).
    r.block(&[
        "Breakpoint 1, add (a=3, b=3) at basics.c:38",
        "38\t    int sum = a + b;",
        "Num     Type           Disp Enb Address            What",
        "1       breakpoint     keep y   {hex} in add at basics.c:38",
        "\tbreakpoint already hit 5 times",
    ])
    .seq(&[
        "Breakpoint 1, add (a=6, b=6) at basics.c:38",
        "$1 = 6",
        "\tbreakpoint already hit 8 times",
        "Breakpoint 2 at {hex}: file basics.c, line 46.",
        "Temporary breakpoint 3 at {hex}: file basics.c, line 56.",
        "Breakpoint 1, add (a=7, b=7) at basics.c:38",
        "Breakpoint 1, add (a=8, b=8) at basics.c:38",
    ])
    .block(&[
        "Num     Type           Disp Enb Address            What",
        "1       breakpoint     keep y   {hex} in add at basics.c:38",
        "\tbreakpoint already hit 10 times",
        "2       breakpoint     keep y   {hex} in level3 at basics.c:46",
        "3       breakpoint     del  y   {hex} in level1 at basics.c:56",
    ])
    .code(0);
}

#[test]
fn address_breakpoint_in_a_non_pie_program_and_stepi_from_it() {
    let prog = compile("basics", &["-no-pie"]);
    let addr = nm_address(&prog, "level3");
    let r = debug(
        &prog,
        &[
            &format!("break *{addr:#x}"),
            "run",
            "info breakpoints",
            "stepi",
            "print $pc",
            "stepi 5",
            "info args",
            "nexti 2",
            "finish",
        ],
        &[],
    );
    // gcc 12 -O0 prologue of level3: push (1 byte), mov (3), sub (4), two stores (3, 4); line 45
    // starts at +0xf, its second instruction is at +0x12, line 46 starts at +0x18.
    r.seq(&[
        &format!("Breakpoint 1 at {addr:#x}: file basics.c, line 44."),
        // Stopped on the first instruction, before the prologue stored the arguments.
        "Breakpoint 1, level3 (depth={*}) at basics.c:44",
        "44\t{",
        &format!("1       breakpoint     keep y   0x{addr:016x} in level3 at basics.c:44"),
        "\tbreakpoint already hit 1 time",
        // Mid-line stops show the address; the frame line is not repeated.
        &format!("0x{:016x}\t44\t{{", addr + 1),
        &format!("$1 = (void (*)()) {:#x} <level3+1>", addr + 1),
    ])
    // `stepi 5` shows only where it ends.
    .block(&[
        &format!("0x{:016x}\t45\t    int local3 = depth * 100;", addr + 0x12),
        "depth = 3",
        "tag = {hex} \"deep\"",
        // A stop at the start of a line shows the line alone.
        "46\t    return local3 + (int)strlen(tag);",
    ])
    .seq(&[
        "level2 (depth=2, p=...) at basics.c:51",
        "51\t    return level3(depth + 1, \"deep\") + p.x;",
        "Value returned is $2 = 304",
    ])
    .no_line(&format!("0x{:016x}\t44\t{{", addr + 0xb))
    .no_line("45\t    int local3 = depth * 100;")
    .code(0);
}

#[test]
fn unpinned_threads_racing_on_two_cpus_are_counted_exactly_under_both_protocols() {
    // Without --no-pin everything shares one CPU; here the threads really run in parallel.
    let prog = compile("race", &[]);
    for mode in ["on", "off"] {
        let set = format!("set displaced-stepping {mode}");
        let args: Vec<std::ffi::OsString> = [
            "debug",
            "--batch",
            "--no-pin",
            "-ex",
            &set,
            "-ex",
            "break count",
            "-ex",
            "ignore 1 1000000",
            "-ex",
            "continue",
            "-ex",
            "info breakpoints",
            "--",
        ]
        .iter()
        .map(Into::into)
        .chain(std::iter::once(prog.clone().into_os_string()))
        .collect();
        let refs: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        let r = hindsight(&refs);
        r.has("\tbreakpoint already hit 20000 times\n")
            .has("exited normally]");
        assert!(
            r.stdout.contains(&native(&prog, &[])),
            "output changed:\n{}",
            r.stdout
        );
    }
}

#[test]
fn breakpoints_follow_the_program_through_exec() {
    let execs = compile("execs", &[]);
    let target = compile("steps", &[]);
    let target_arg = target.to_string_lossy().into_owned();
    let r = debug(
        &execs,
        &[
            "break main",
            "run",
            "continue",
            "bt",
            "info breakpoints",
            "continue",
        ],
        &[&target_arg],
    );
    r.in_order(&[
        "Breakpoint 1, main (argc=2, argv=0x",
        "is executing new program: ",
        "Breakpoint 1, main () at ",
        "20\t    int v = depth3(3);\n",
        "#0  main () at ",
        "in main at ",
        "\tbreakpoint already hit 2 times\n",
        "v = 15\n",
        "exited normally]",
    ]);
}
