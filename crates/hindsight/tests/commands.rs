//! gdb's everyday commands beyond print and break: `info line LOCATION`, `info source`,
//! `info frame`, `display`/`undisplay`, `disassemble [/r /s]`, `info signals` and `handle`.
//! The expected lines are gdb 13's on the same program and commands
//! (`HINDSIGHT_TESTS_UNDER_GDB=1` checks them against gdb).

mod common;
use common::*;

#[test]
fn line_source_frame_display_and_disassemble_as_gdb_prints_them() {
    let prog = compile("basics", &[]);
    let r = debug(
        &prog,
        &[
            "info line main",
            "info line square",
            "info line basics.c:32",
            "info line basics.c:1",
            "break square",
            "run",
            "display v",
            "display/x v",
            "info display",
            "info line",
            "info line *$pc",
            "info source",
            "info frame",
            "up",
            "info frame",
            "down",
            "disassemble",
            "x/2i $pc",
            "undisplay 1",
            "next",
            "info signals SIGUSR1",
        ],
        &[],
    );
    // Before `run` gdb shows file addresses, hindsight (the program already loaded) runtime
    // ones: the same lines with other numbers.
    r.seq(&[
        "Line 70 of \"basics.c\" starts at address {hex} <main> and ends at {hex} <main+8>.",
        "Line 31 of \"basics.c\" starts at address {hex} <square> and ends at {hex} <square+7>.",
        "Line 32 of \"basics.c\" starts at address {hex} <square+7> and ends at {hex} <square+16>.",
        "Line 1 of \"basics.c\" is at address {hex} <square> but contains no code.",
    ]);
    r.block(&[
        "Breakpoint 1, square (v=7) at basics.c:32",
        "32	    int result = v * v;",
        "Auto-display expressions now in effect:",
        "Num Enb Expression",
        "1:   y  v",
        "2:   y  /x v",
        "Line 32 of \"basics.c\" starts at address {hex} <square+7> and ends at {hex} <square+16>.",
        "Line 32 of \"basics.c\" starts at address {hex} <square+7> and ends at {hex} <square+16>.",
        "Current source file is basics.c",
        "Compilation directory is {*}",
        "Located in {*}/basics.c",
        "Contains 81 lines.",
        "Source language is c.",
        "Producer is {*}",
        "Compiled with DWARF 5 debugging format.",
        "Does not include preprocessor macro info.",
        "Stack level 0, frame at {hex}:",
        " rip = {hex} in square (basics.c:32); saved rip = {hex}",
        " called by frame at {hex}",
        " source language c.",
        " Arglist at {hex}, args: v=7",
        " Locals at {hex}, Previous frame's sp is {hex}",
        " Saved registers:",
        "  rbp at {hex}, rip at {hex}",
        "#1  {hex} in main () at basics.c:72",
        "72	    int x = square(7);",
        "Stack level 1, frame at {hex}:",
        " rip = {hex} in main (basics.c:72); saved rip = {hex}",
        " caller of frame at {hex}",
        " source language c.",
        " Arglist at {hex}, args: ",
        " Locals at {hex}, Previous frame's sp is {hex}",
        " Saved registers:",
        "  rbp at {hex}, rip at {hex}",
        "#0  square (v=7) at basics.c:32",
        "32	    int result = v * v;",
        "Dump of assembler code for function square:",
        "   {hex} <+0>:	push   %rbp",
        "   {hex} <+1>:	mov    %rsp,%rbp",
        "   {hex} <+4>:	mov    %edi,-{hex}(%rbp)",
        "=> {hex} <+7>:	mov    -{hex}(%rbp),%eax",
        "   {hex} <+10>:	imul   %eax,%eax",
        "   {hex} <+13>:	mov    %eax,-{hex}(%rbp)",
        "   {hex} <+16>:	mov    -{hex}(%rbp),%eax",
        "   {hex} <+19>:	pop    %rbp",
        "   {hex} <+20>:	ret",
        "End of assembler dump.",
        "=> {hex} <square+7>:	mov    -{hex}(%rbp),%eax",
        "   {hex} <square+10>:	imul   %eax,%eax",
        "33	    return result;",
        "2: /x v = {hex}",
        "Signal        Stop	Print	Pass to program	Description",
        "SIGUSR1       Yes	Yes	Yes		User defined signal 1",
    ]);
}

#[test]
fn bad_locations_are_errors() {
    let prog = compile("basics", &[]);
    let r = debug(
        &prog,
        &["info line nosuch", "info line nosuch.c:3", "disassemble /q"],
        &[],
    );
    r.err_line("Function \"nosuch\" not defined.")
        .err_line("No source file named nosuch.c.")
        .err_line("Invalid disassembly modifier.")
        .failed();
}

#[test]
fn handle_print_nostop_reports_and_goes_on() {
    // gdb prints `handle`'s table only at a terminal: hindsight always does.
    if under_gdb() {
        return;
    }
    let prog = compile("rr_signals", &[]);
    let r = debug(
        &prog,
        &[
            "handle SIGUSR1 SIGUSR2 nostop print",
            "info signals SIGUSR2",
            "run",
        ],
        &[],
    );
    r.line("SIGUSR2       No\tYes\tYes\t\tUser defined signal 2")
        .line("Program received signal SIGUSR1, User defined signal 1.")
        .line("Thread {n} \"rr_signals\" received signal SIGUSR2, User defined signal 2.")
        .line("[Inferior 1 (process {n}) exited {*}");
}

/// `print f(x)` and `call f(x)` run the program's functions: live in the program itself
/// (a global they change stays changed, as in gdb), nested in expressions too.
#[test]
fn calls_run_the_programs_functions_live() {
    let prog = compile("basics", &[]);
    let r = debug(
        &prog,
        &[
            "break level1",
            "run",
            "print square(5)",
            "call add(2, 3)",
            "print square(add(1, 2)) + 1",
            "print counter",
            "call add(counter, 1)",
            "print $",
            "print nosuch(1)",
            "print square()",
        ],
        &[],
    );
    r.block(&[
        "$1 = 25", "$2 = 5", "$3 = 10", "$4 = 13", "$5 = 14", "$6 = 14",
    ])
    .err_line("No symbol \"nosuch\" in current context.")
    .err_line("Too few arguments in function call.");
}

/// In a replay a call runs in a forked copy of the replayed process: it answers, and the
/// recording's past is not changed (the global the function increments keeps its value, and
/// the rest of the run replays as recorded).
#[test]
fn calls_in_a_replay_do_not_change_the_past() {
    let prog = compile("basics", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let r = replay_batch(
        &trace,
        &[
            "break level1",
            "continue",
            "print counter",
            "print square(5)",
            "print add(counter, 100)",
            "print counter",
            "continue",
        ],
    );
    r.clean()
        .block(&["$1 = 11", "$2 = 25", "$3 = 111", "$4 = 11"])
        // A divergence from the recording would stop the replay with an error.
        .line("[Inferior 1 (process {n}) exited normally]");
    assert!(!r.stderr.contains("diverged"), "{}", r.stderr);
}
