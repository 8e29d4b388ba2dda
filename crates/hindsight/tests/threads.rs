//! Thread listing and switching.

mod common;
use common::*;

#[test]
fn info_threads_and_thread_switching() {
    let prog = compile("race", &[]);
    let r = debug(
        &prog,
        &[
            "break count",
            "run",
            "info threads",
            "thread 1",
            "thread",
            "thread 9",
        ],
        &[],
    );
    r.has("  Id   Target Id")
        .has("* ")
        .has("\"race\" ")
        .has("count (x=")
        .has("[Switching to thread 1 (Thread 0x")
        .has("[Current thread is 1 (Thread 0x")
        .err_has("Unknown thread 9.");
    assert!(r.stdout.matches("(LWP ").count() >= 3, "{}", r.stdout);
}

// ---------------------------------------------------------------------------------------------
// `tests/programs/threads.c`: three workers asleep in read() while main stops in all_parked.

#[test]
fn info_threads_lists_every_thread_and_thread_n_switches() {
    let prog = compile("threads", &[]);
    let r = debug(
        &prog,
        &[
            "break all_parked",
            "run",
            "info threads",
            "thread 2",
            "backtrace",
            "thread 3",
            "thread",
            "thread 1",
            "print n",
            "thread 7",
            "continue",
        ],
        &[],
    );
    let name = thread_name(&prog);
    r.seq(&[
        "Breakpoint 1 at {hex}: file threads.c, line 50.",
        "[New Thread {hex} (LWP {n})]",
        "[New Thread {hex} (LWP {n})]",
        "[New Thread {hex} (LWP {n})]",
        // Once a program has had several threads, gdb names the thread in stop lines.
        &format!("Thread 1 \"{name}\" hit Breakpoint 1, all_parked (n=3) at threads.c:50"),
        "50\t    return n;",
        "  Id   Target Id{*}Frame{*}",
        &format!("* 1    Thread {{hex}} (LWP {{n}}) \"{name}\" all_parked (n=3) at threads.c:50"),
        &format!("  2    Thread {{hex}} (LWP {{n}}) \"{name}\" {{*}}"),
        &format!("  3    Thread {{hex}} (LWP {{n}}) \"{name}\" {{*}}"),
        &format!("  4    Thread {{hex}} (LWP {{n}}) \"{name}\" {{*}}"),
        "[Switching to thread 2 (Thread {hex} (LWP {n}))]",
        // Thread 2 is the first worker (id 0), asleep in read() called from park().
        "#{n}  {hex} in park (id=0) at threads.c:20",
        "#{n}  {hex} in worker (arg=0x0) at threads.c:29",
        "[Switching to thread 3 (Thread {hex} (LWP {n}))]",
        "[Current thread is 3 (Thread {hex} (LWP {n}))]",
        "[Switching to thread 1 (Thread {hex} (LWP {n}))]",
        "#0  all_parked (n=3) at threads.c:50",
        "50\t    return n;",
        "$1 = 3",
        "workers done, sum 33",
        "[Inferior 1 (process {n}) exited normally]",
    ])
    .err_line("Unknown thread 7.")
    .program_gone();
    assert_eq!(r.count("[New Thread {hex} (LWP {n})]"), 3, "{}", r.stdout);
    assert_eq!(
        r.count("[Thread {hex} (LWP {n}) exited]"),
        3,
        "{}",
        r.stdout
    );
    assert_eq!(r.count("  {n}    Thread {*}"), 3, "{}", r.stdout);
    // The LWPs listed are the program's threads: distinct, and the first is the process.
    let lwps: Vec<i32> = r
        .stdout
        .lines()
        .filter(|l| matches("{*}    Thread {hex} (LWP {n}) {*}", l))
        .filter_map(|l| l.split("(LWP ").nth(1)?.split(')').next()?.parse().ok())
        .collect();
    assert_eq!(lwps.len(), 4, "{}", r.stdout);
    assert_eq!(lwps[0], r.pid(), "thread 1 is the main thread");
    let mut uniq = lwps.clone();
    uniq.sort();
    uniq.dedup();
    assert_eq!(uniq.len(), 4, "{lwps:?}");
}

#[test]
fn switching_to_a_worker_thread_shows_its_frames_and_locals() {
    let prog = compile("threads", &[]);
    // Which frame number park() has depends on whether libc has debug info (inline frames of
    // read()), so the first run finds it in the backtrace.
    let r = debug(
        &prog,
        &["break all_parked", "run", "thread 4", "backtrace"],
        &[],
    );
    r.line("#{n}  {hex} in park (id=2) at threads.c:20")
        .line("#{n}  {hex} in worker (arg=0x2) at threads.c:29");
    let park: u32 = r
        .stdout
        .lines()
        .find(|l| matches("#{n}  {hex} in park (id=2) at threads.c:20", l))
        .and_then(|l| l.trim_start_matches('#').split(' ').next()?.parse().ok())
        .expect("park's frame number");
    let frame = format!("frame {park}");
    let r = debug(
        &prog,
        &[
            "break all_parked",
            "run",
            "thread 4",
            &frame,
            "print id",
            "print c",
            "up",
            "print id",
            "print tids[2] > 0",
            "thread 1",
            "up",
            "info locals",
        ],
        &[],
    );
    r.block(&[
        &format!("#{park}  {{hex}} in park (id=2) at threads.c:20"),
        "20\t    if (read(gate[0], &c, 1) != 1)",
        "$1 = 2",
        "$2 = 0 '\\000'",
        &format!("#{}  {{hex}} in worker (arg=0x2) at threads.c:29", park + 1),
        "29\t    results[id] = park(id);",
        "$3 = 2",
        "$4 = 1",
        "[Switching to thread 1 (Thread {hex} (LWP {n}))]",
        "#0  all_parked (n=3) at threads.c:50",
        "50\t    return n;",
        "#1  {hex} in main () at threads.c:64",
        "64\t    all_parked(WORKERS);",
        "t = {{n}, {n}, {n}}",
        "sum = {n}",
    ]);
}

#[test]
fn stops_in_worker_threads_name_the_thread_and_switch_to_it() {
    // Two threads, 3 calls each: the stop lines name the worker thread that hit.
    let prog = compile("hits", &[]);
    let r = debug(&prog, &["break f", "run", "info breakpoints"], &["2", "3"]);
    let name = thread_name(&prog);
    r.seq(&[
        "[Switching to Thread {hex} (LWP {n})]",
        &format!("Thread {{n}} \"{name}\" hit Breakpoint 1, f (x={{n}}) at hits.c:17"),
        "17\t    return (x * 2654435761u) % 1000003u;",
        "\tbreakpoint already hit 1 time",
    ])
    .code(0)
    .program_gone();
}

#[test]
fn thread_apply_runs_a_command_in_every_thread() {
    let prog = compile("race", &[]);
    let r = debug(
        &prog,
        &["break count", "run", "thread apply all bt 1", "thread"],
        &[],
    );
    // Highest thread first, as gdb does; the selection comes back afterwards.
    r.in_order(&[
        "\nThread 2 (Thread 0x",
        "#0  ",
        "\nThread 1 (Thread 0x",
        "#0  ",
        "[Current thread is ",
    ]);
}

#[test]
fn a_leader_that_called_pthread_exit_does_not_hang_the_debugger() {
    let prog = compile("leader_exits", &[]);
    let r = debug(
        &prog,
        &["break work", "run", "bt", "continue", "delete", "continue"],
        &[],
    );
    r.in_order(&[
        "Breakpoint 1, work (x=0) at ",
        "#1  0x",
        " in worker (a=0x0) at ",
        "Breakpoint 1, work (x=1) at ",
        "w 0\nw 2\nw 4\n",
        "exited normally]",
    ]);
}

#[test]
fn libraries_are_named_as_the_dynamic_loader_names_them() {
    // gdb shows the link map's name of a library (what ldd prints), not /proc's resolved path.
    let prog = compile("race", &[]);
    let ldd = std::process::Command::new("ldd")
        .arg(&prog)
        .output()
        .expect("ldd");
    let ldd = String::from_utf8_lossy(&ldd.stdout).into_owned();
    let libc = ldd
        .lines()
        .find_map(|l| l.trim().strip_prefix("libc.so.6 => "))
        .and_then(|rest| rest.split_whitespace().next())
        .expect("ldd names libc")
        .to_string();
    let r = debug(
        &prog,
        &["break count", "run", "info sharedlibrary", "thread 1", "bt"],
        &[],
    );
    r.has(&format!("{libc}\n"));
    // A frame in a library without debug information is `from` the loader's name (libc has
    // its debug information where libc6-dbg is installed; libstdc++ has none).
    let cpp = compile_cpp("cpp_inline", &["-O2"]);
    let ldd = std::process::Command::new("ldd")
        .arg(&cpp)
        .output()
        .expect("ldd");
    let ldd = String::from_utf8_lossy(&ldd.stdout).into_owned();
    let libstdcxx = ldd
        .lines()
        .find_map(|l| l.trim().strip_prefix("libstdc++.so.6 => "))
        .and_then(|rest| rest.split_whitespace().next())
        .expect("ldd names libstdc++")
        .to_string();
    let r = debug(&cpp, &["break scale", "run", "bt"], &[]);
    r.has(&format!(" from {libstdcxx}\n"));
}
