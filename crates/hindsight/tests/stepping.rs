//! step, next, until, finish, stepi, nexti, backtrace, frame, up, down, list.

mod common;
use common::*;

#[test]
fn next_step_finish_until_land_where_gdb_lands() {
    let prog = compile("steps", &[]);
    let r = debug(
        &prog,
        &[
            "break sum_squares",
            "run",
            "next",
            "next",
            "next",
            "next",
            "step",
            "backtrace",
            "finish",
            "until",
            "until",
            "until",
            "print total",
        ],
        &[],
    );
    let expected = [
        "Breakpoint 1, sum_squares (n=3) at ",
        "10\t    int total = 0;\n",
        "11\t    for (int i = 1; i <= n; i++) {\n",
        "12\t        total += square(i);\n",
        "11\t    for (int i = 1; i <= n; i++) {\n",
        "12\t        total += square(i);\n",
        "square (x=2) at ",
        "5\t    int r = x * x;\n",
        "#0  square (x=2) at ",
        "#1  0x",
        " in sum_squares (n=3) at ",
        "#2  0x",
        " in depth3 (v=3) at ",
        "#3  0x",
        " in main () at ",
        "Run till exit from #0  square (x=2) at ",
        " in sum_squares (n=3) at ",
        "Value returned is $1 = 4\n",
        "11\t    for (int i = 1; i <= n; i++) {\n",
        "14\t    return total;\n",
        "15\t}\n",
        "$2 = 14\n",
    ];
    r.in_order(&expected);
}

#[test]
fn stepi_nexti_frames_and_list() {
    let prog = compile("steps", &[]);
    let r = debug(
        &prog,
        &[
            "break depth3",
            "run",
            "stepi",
            "nexti",
            "frame 1",
            "down",
            "up 2",
            "up",
            "list 4,7",
            "frame 5",
        ],
        &[],
    );
    r.has("Breakpoint 1, depth3 (v=3) at ")
        .has("0x0000")
        .has("\t17\tint depth3(int v) { return sum_squares(v) + 1; }\n")
        .has("#1  0x")
        .has(" in main () at ")
        .has("20\t    int v = depth3(3);\n")
        .has("#0  ")
        .has("4\tint square(int x) {\n5\t    int r = x * x;\n6\t    return r;\n7\t}\n")
        .err_has("Initial frame selected; you cannot go up.")
        .err_has("No frame at level 5.");
}

// ---------------------------------------------------------------------------------------------
// `tests/programs/basics.c`, every expected line as gdb 13 prints it for the same commands.

/// `basics.c` lines `from..=to`, as `list` prints them (number, tab, text).
fn basics_lines(from: usize, to: usize) -> Vec<String> {
    let src = std::fs::read_to_string(programs().join("basics.c")).expect("basics.c");
    src.lines()
        .enumerate()
        .skip(from - 1)
        .take(to + 1 - from)
        .map(|(i, l)| format!("{}\t{l}", i + 1))
        .collect()
}

#[test]
fn step_next_finish_until_in_a_loop() {
    let prog = compile("basics", &[]);
    let r = debug(
        &prog,
        &[
            "break loop",
            "run",
            "next",
            "next",
            "step",
            "backtrace",
            "finish",
            "next",
            "next",
            "next",
            "until",
            "until",
            "info locals",
            "print total",
        ],
        &[],
    );
    r.block(&[
        "Breakpoint 1, loop (n=10) at basics.c:62",
        "62\t    int total = 0;",
        "63\t    for (int i = 0; i < n; i++) {",
        "64\t        total += add(i, i);",
        // step enters add: the new frame's line first.
        "add (a=0, b=0) at basics.c:38",
        "38\t    int sum = a + b;",
        "#0  add (a=0, b=0) at basics.c:38",
        "#1  {hex} in loop (n=10) at basics.c:64",
        "#2  {hex} in main () at basics.c:77",
        // finish returns mid-line: the address is shown.
        "{hex} in loop (n=10) at basics.c:64",
        "64\t        total += add(i, i);",
        "Value returned is $1 = 0",
        "63\t    for (int i = 0; i < n; i++) {",
        // next steps over add.
        "64\t        total += add(i, i);",
        "63\t    for (int i = 0; i < n; i++) {",
        // until does not go back into the loop: it runs the remaining iterations.
        "66\t    printf(\"loop total %d\\n\", total);",
        "67\t}",
        "total = 90",
        "$2 = 90",
    ])
    .lacks("add (a=1, b=1)")
    .code(0);
}

#[test]
fn step_into_nested_calls_then_frame_up_down() {
    let prog = compile("basics", &[]);
    let r = debug(
        &prog,
        &[
            "break basics.c:78",
            "run",
            "step",
            "step",
            "step",
            "up",
            "info locals",
            "down",
            "down",
            "frame 2",
            "info args",
            "frame",
            "frame 5",
            "backtrace",
        ],
        &[],
    );
    r.block(&[
        "Breakpoint 1, main () at basics.c:78",
        "78\t    int deep = level1(1);",
        "level1 (depth=1) at basics.c:56",
        "56\t    struct point p = {depth, depth * 2};",
        "57\t    return level2(depth + 1, p);",
        // A struct argument is `...` in frame lines (gdb's `print frame-arguments scalars`).
        "level2 (depth=2, p=...) at basics.c:51",
        "51\t    return level3(depth + 1, \"deep\") + p.x;",
        "#1  {hex} in level1 (depth=1) at basics.c:57",
        "57\t    return level2(depth + 1, p);",
        "p = {x = 1, y = 2}",
        "#0  level2 (depth=2, p=...) at basics.c:51",
        "51\t    return level3(depth + 1, \"deep\") + p.x;",
        "#2  {hex} in main () at basics.c:78",
        "78\t    int deep = level1(1);",
        "No arguments.",
        "#2  {hex} in main () at basics.c:78",
        "78\t    int deep = level1(1);",
        "#0  level2 (depth=2, p=...) at basics.c:51",
        "#1  {hex} in level1 (depth=1) at basics.c:57",
        "#2  {hex} in main () at basics.c:78",
    ])
    .err_has("Bottom (innermost) frame selected; you cannot go down.")
    .err_has("No frame at level 5.")
    .failed();
}

#[test]
fn next_over_a_call_and_out_of_a_function() {
    let prog = compile("basics", &[]);
    let r = debug(
        &prog,
        &[
            "break square",
            "run",
            "next",
            "next",
            "next",
            "next",
            "next",
        ],
        &[],
    );
    r.block(&[
        "Breakpoint 1, square (v=7) at basics.c:32",
        "32\t    int result = v * v;",
        "33\t    return result;",
        "34\t}",
        // Back in the caller mid-line (the store into x): gdb keeps stepping to the start of
        // the next line, then shows the frame line since the function changed.
        "main () at basics.c:73",
        "73\t    int y = add(x, 1);",
        "74\t    int neg = -5;",
        "75\t    unsigned char byte = 200;",
    ])
    .code(0);
}

#[test]
fn list_around_a_function_then_onwards_and_a_range() {
    let prog = compile("basics", &[]);
    let r = debug(
        &prog,
        &["list level3", "list", "list 60,63", "list basics.c:33"],
        &[],
    );
    // `list FUNCTION` centres on the function's line (44): 39..48, then 49..58 follow.
    let mut want = basics_lines(39, 58);
    want.extend(basics_lines(60, 63));
    want.extend(basics_lines(28, 37));
    let want: Vec<&str> = want.iter().map(String::as_str).collect();
    // Blank source lines (48, 53, 29, 35) keep their number and tab.
    r.block(&want[..]).code(0);
    assert!(r.stdout.lines().any(|l| l == "48\t"), "{}", r.stdout);
}

#[test]
fn stepi_and_nexti_show_address_and_line_mid_line() {
    let prog = compile("basics", &[]);
    let r = debug(
        &prog,
        &[
            "break basics.c:64",
            "run",
            "stepi",
            "nexti",
            "nexti",
            "nexti",
            "nexti",
            "backtrace",
            "info registers rip",
        ],
        &[],
    );
    // Line 64 (`total += add(i, i);`) at -O0: mov, mov, mov, mov, call add, add...; nexti
    // steps over the call and stays in loop.
    r.seq(&[
        "Breakpoint 1, loop (n=10) at basics.c:64",
        "64\t        total += add(i, i);",
        "{hex}\t64\t        total += add(i, i);",
        "{hex}\t64\t        total += add(i, i);",
        "{hex}\t64\t        total += add(i, i);",
        "{hex}\t64\t        total += add(i, i);",
        "{hex}\t64\t        total += add(i, i);",
        "#0  {hex} in loop (n=10) at basics.c:64",
        "#1  {hex} in main () at basics.c:77",
    ])
    .no_line("add (a=0, b=0) at basics.c:38")
    .no_line("Breakpoint {*}add{*}")
    .code(0);
    // `info registers rip`: the raw value at column 15, the natural value (with its symbol)
    // at column 35.
    let rip = r
        .stdout
        .lines()
        .find(|l| l.starts_with("rip "))
        .unwrap_or_else(|| panic!("no rip line\n{}", r.stdout));
    let raw = rip[15..].split(' ').next().unwrap_or("");
    assert!(
        matches("rip            {hex} {*}{hex} <loop+{n}>", rip) && rip.len() > 35 + raw.len(),
        "{rip:?}"
    );
    assert_eq!(
        &rip[35..35 + raw.len()],
        raw,
        "natural value not at column 35: {rip:?}"
    );
}

#[test]
fn x_i_disassembles_as_gdb_does() {
    let prog = compile("steps", &[]);
    let r = debug(
        &prog,
        &["break square", "run", "x/2i $pc", "x/12i sum_squares"],
        &[],
    );
    r.in_order(&[
        "=> 0x",
        " <square+7>:\tmov    ",
        "   0x",
        " <sum_squares+32>:\tcall   0x",
        " <square>\n",
    ]);
}

#[test]
fn advance_and_until_stop_when_the_frame_returns_first() {
    let prog = compile("steps", &[]);
    let r = debug(&prog, &["break square", "run", "delete", "advance 20"], &[]);
    // Line 20 is in main; square returns to sum_squares first, mid-line, and that is where
    // gdb stops.
    r.in_order(&[
        "Breakpoint 1, square (x=1) at ",
        "0x",
        " in sum_squares (n=3) at ",
        "12\t        total += square(i);\n",
    ]);
}

#[test]
fn two_source_files() {
    // multifile.c calls helper() in util.c: break and list by FILE:LINE in either file.
    let dir = scratch();
    let exe = dir.join("multifile");
    let st = std::process::Command::new("gcc")
        .args(["-g", "-O0", "-o"])
        .arg(&exe)
        .arg(programs().join("multifile.c"))
        .arg(programs().join("util.c"))
        .status()
        .expect("gcc");
    assert!(st.success());
    let r = debug(
        &exe,
        &[
            "break util.c:9",
            "run",
            "print calls",
            "print seen",
            "print s",
            "up",
            "print msgs",
            "list util.c:1,3",
        ],
        &[],
    );
    r.in_order(&[
        "Breakpoint 1, helper (s=0x",
        "9\t        return calls + seen;\n",
        "$1 = 3\n",
        "$2 = 1\n",
        " \"one\"\n",
        " in main (argc=1, argv=0x",
        "$4 = {0x",
        "1\t#include <string.h>\n2\tstatic int calls;\n3\tint helper(const char *s) {\n",
    ]);
}

/// A signal that arrives during `stepi` in a live program (SIGALRM ending `pause()`): with
/// gdb's default for it (nostop, noprint, pass) the step runs its handler to the end and
/// goes on to the next instruction; with `handle SIGALRM stop` the signal is reported, and
/// the next `stepi` enters the handler. Before, every signal that came during a step was
/// reported as a stop, and a step after a reported signal dropped it.
#[test]
fn stepi_steps_over_the_handler_of_a_signal_that_does_not_stop() {
    let prog = compile("stepi_signal", &[]);
    // From pause's first instruction to its `syscall`: as many steps as gdb takes.
    let mut cmds = vec!["break main", "run", "break pause", "continue"];
    for _ in 0..8 {
        cmds.extend(["stepi", "x/i $pc"]);
    }
    let r = debug(&prog, &cmds, &[]);
    let pcs: Vec<&str> = r.stdout.lines().filter(|l| l.starts_with("=> ")).collect();
    let at = pcs
        .iter()
        .position(|l| l.trim_end().ends_with("syscall"))
        .unwrap_or_else(|| panic!("no step reached pause's syscall: {}", r.dump()));
    let mut start = vec!["break main", "run", "break pause", "continue"];
    start.extend(std::iter::repeat_n("stepi", at + 2));

    let mut cmds = start.clone();
    cmds.extend(["p $rax", "stepi", "x/i $pc", "p hits", "p $rax"]);
    let r = debug(&prog, &cmds, &[]);
    r.lacks("Program received signal");
    let insns: Vec<&str> = r.stdout.lines().filter(|l| l.starts_with("=> ")).collect();
    assert!(
        insns.len() == 1 && insns[0].contains("<__libc_pause+") && !insns[0].contains("cmp"),
        "{}",
        r.dump()
    );
    let values: Vec<&str> = r.stdout.lines().filter(|l| l.starts_with('$')).collect();
    assert_eq!(values.len(), 3, "{}", r.dump());
    assert!(values[0].ends_with("= -514"), "{}", r.dump());
    assert!(values[1].ends_with("= 14"), "{}", r.dump());
    assert!(values[2].ends_with("= -4"), "{}", r.dump());

    let mut cmds = vec!["handle SIGALRM stop print"];
    cmds.extend(start.iter().copied());
    // (The first `stepi` reports the signal, the second enters its handler.)
    cmds.extend(["stepi", "stepi", "x/i $pc", "p hits"]);
    let r = debug(&prog, &cmds, &[]);
    r.has("Program received signal SIGALRM");
    let insns: Vec<&str> = r.stdout.lines().filter(|l| l.starts_with("=> ")).collect();
    assert!(
        insns.len() == 1 && insns[0].contains("<on_alarm>"),
        "{}",
        r.dump()
    );
    r.line("$1 = 0");
}
