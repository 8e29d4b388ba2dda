//! `print`, `x`, `info locals/args/registers` on C values, formatted as gdb does.

mod common;
use common::*;

#[test]
fn values_of_many_types() {
    let prog = compile("values", &[]);
    let r = debug(
        &prog,
        &[
            "break area",
            "run",
            "print *s",
            "print s->name",
            "print s->corners[1]",
            "print s->corners[1].x * factor",
            "print factor == 2",
            "print global_count",
            "print ratio",
            "print greeting",
            "print primes",
            "print zeros",
            "print primes[2] + primes[3]",
            "print/x global_count",
            "print -5 / 2",
            "print 10 % 3",
            "print 1.0 / 3",
            "up",
            "print origin",
            "print c",
            "print big",
            "print letter",
            "print neg",
            "print f",
            "print none",
            "print sizeof(struct shape)",
            "print &origin == &origin",
            "print origin.y < 0 && big > 3",
            "x/4dw primes",
            "x/s greeting",
            "print $2",
        ],
        &[],
    );
    r.has("Breakpoint 1, area (s=0x")
        .has(", factor=2) at ")
        .has("$1 = {name = 0x")
        .has(" \"square\", corners = {{x = 1, y = 2}, {x = 4, y = 6}}, scale = 1.5}\n")
        .has(" \"square\"\n")
        .has("$3 = {x = 4, y = 6}\n")
        .has("$4 = 8\n")
        .has("$5 = 1\n")
        .has("$6 = 42\n")
        .has("$7 = 2.5\n")
        // 16 bytes: "hello", ten NULs shown inline (gdb repeats runs of more than ten) and
        // the terminating one dropped.
        .has("$8 = \"hello\\000\\000\\000\\000\\000\\000\\000\\000\\000\\000\"\n")
        .has("$9 = {2, 3, 5, 7, 11}\n")
        .has("$10 = {0 <repeats 16 times>}\n")
        .has("$11 = 12\n")
        .has("$12 = 0x2a\n")
        .has("$13 = -2\n")
        .has("$14 = 1\n")
        .has("$15 = 0.33333333333333331\n")
        .has("in main (argc=1, argv=0x")
        .has("$16 = {x = 0, y = -1}\n")
        .has("$17 = GREEN\n")
        .has("$18 = 4000000000\n")
        .has("$19 = 65 'A'\n")
        .has("$20 = -12\n")
        .has("$21 = 3.1400001\n")
        .has("$22 = (int *) 0x0\n")
        .has("$23 = 32\n")
        .has("$24 = 1\n")
        .has("$25 = 1\n")
        .has(":\t2\t3\t5\t7\n")
        .has(":\t\"hello\"\n")
        .has("$26 = 0x")
        .code(0);
}

#[test]
fn locals_args_registers_and_errors() {
    let prog = compile("values", &[]);
    let r = debug(
        &prog,
        &[
            "break values.c:20",
            "run",
            "info args",
            "info locals",
            "info registers rip",
            "print nosuch",
            "print 1 +",
            "print *none",
            "up",
            "print *none",
        ],
        &[],
    );
    r.has("s = 0x")
        .has("factor = 2\n")
        .has("w = 3\n")
        .has("h = 4\n")
        .has("rip            0x")
        .has(" <area+")
        .err_has("No symbol \"nosuch\" in current context.")
        .err_has("A syntax error in expression, near `'.")
        .err_has("Cannot access memory at address 0x0")
        .code(1);
}

#[test]
fn assignment_changes_what_the_program_computes() {
    let prog = compile("steps", &[]);
    let r = debug(
        &prog,
        &["break square", "run", "set var x = 7", "print x", "finish"],
        &[],
    );
    r.has("$1 = 7\n").has("Value returned is $2 = 49\n").code(0);
}

#[test]
fn ptype_and_whatis() {
    let prog = compile("values", &[]);
    let r = debug(
        &prog,
        &[
            "break area",
            "run",
            "ptype s",
            "whatis s->corners",
            "whatis 1.0 + factor",
            "up",
            "ptype c",
            "whatis origin",
            "ptype area",
        ],
        &[],
    );
    r.in_order(&[
        "type = struct shape {\n    const char *name;\n    struct point corners[2];\n    double scale;\n} *\n",
        "type = struct point [2]\n",
        "type = double\n",
        "type = enum color {RED, GREEN, BLUE}\n",
        "type = point_t\n",
        "type = int (struct shape *, int)\n",
    ]);
}
