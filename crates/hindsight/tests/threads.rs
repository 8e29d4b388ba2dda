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
        .err_has("Invalid thread ID: 9");
    assert!(r.stdout.matches("(LWP ").count() >= 3, "{}", r.stdout);
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
