//! A Rust program: breakpoints on a function by its short name, Rust value formats.

mod common;
use common::*;

#[test]
fn rust_functions_and_values() {
    let prog = compile_rust("hello");
    let r = debug(
        &prog,
        &[
            "break scale",
            "run",
            "next",
            "next",
            "next",
            "next",
            "print *p",
            "print p.x",
            "print k",
            "print sum",
            "print flag",
            "print letter",
            "print ratio",
            "finish",
        ],
        &[],
    );
    r.has("Breakpoint 1, hello::scale (p=0x")
        .has(", k=2) at ")
        .has("$1 = hello::Point {x: 3, y: 4}\n")
        .has("$2 = 3\n")
        .has("$3 = 2\n")
        .has("$4 = 14\n")
        .has("$5 = true\n")
        .has("$6 = 122 'z'\n")
        .has("$7 = 0.5\n")
        .has("big 14 z 0.5")
        .has(" in hello::main () at ")
        .has("Value returned is $8 = 14\n");
}

// ---------------------------------------------------------------------------------------------
// `tests/programs/shapes.rs`, expected lines as gdb 13 prints them.

#[test]
fn rust_break_on_a_function_and_print_i32_bool_and_a_struct() {
    let prog = compile_rust("shapes");
    let r = debug(
        &prog,
        &[
            "break shapes::area",
            "run",
            "print scale",
            "print *r",
            "print r.width",
            "print r.filled",
            "print r.width * scale",
            "print r.height < 0",
            "next",
            "print big",
            "info args",
            "backtrace 2",
            "finish",
            "print r",
            "print r.height",
            "continue",
        ],
        &[],
    );
    r.block(&[
        "Breakpoint 1, shapes::area (r={hex}, scale=3) at shapes.rs:10",
        "10\t    let big = r.width * r.height > 20;",
        "$1 = 3",
        "$2 = shapes::Rect {width: 6, height: -7, filled: true}",
        "$3 = 6",
        "$4 = true",
        "$5 = 18",
        "$6 = true",
        "11\t    let result = r.width * r.height * scale;",
        "$7 = false",
        "r = {hex}",
        "scale = 3",
        "#0  shapes::area (r={hex}, scale=3) at shapes.rs:11",
        "#1  {hex} in shapes::main () at shapes.rs:21",
        "{hex} in shapes::main () at shapes.rs:21",
        "21\t    let total = area(&r, 3);",
        "Value returned is $8 = -126",
        "$9 = shapes::Rect {width: 6, height: -7, filled: true}",
        "$10 = -7",
        "area -126 -40 true",
        "[Inferior 1 (process {n}) exited normally]",
    ])
    .line("Breakpoint 1 at {hex}: file shapes.rs, line 10.")
    .code(0)
    .program_gone();
}
