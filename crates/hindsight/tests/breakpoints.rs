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
    // The same with noswitch stepping, where more hits are pending at the first stop.
    let r = debug(
        &prog,
        &[
            "set displaced-stepping off",
            "break count",
            "run",
            "delete 1",
            "continue",
        ],
        &[],
    );
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
