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
