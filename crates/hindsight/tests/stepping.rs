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
