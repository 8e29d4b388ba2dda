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

// ---------------------------------------------------------------------------------------------
// `tests/programs/basics.c` stopped at line 76 of main; every expected line is what gdb 13
// prints for the same command at the same place.

/// Pairs of (command, the line gdb prints for it), run in order so the `$N` numbers follow.
const BASICS_PRINTS: &[(&str, &str)] = &[
    ("print counter", "$1 = 1"),
    ("print big_global", "$2 = -1234567890123"),
    ("print mask", "$3 = 4000000000"),
    ("print ratio", "$4 = 2.5"),
    ("print arr", "$5 = {10, 20, 30, 40, 50}"),
    ("print arr[3]", "$6 = 40"),
    ("print greeting", "$7 = \"hello, world\""),
    ("print message", "$8 = {hex} \"a message\""),
    (
        "print rec",
        "$9 = {name = \"widget\\000\\000\\000\\000\\000\\000\\000\\000\\000\", id = 7, score = 98.5, pos = {x = 3, y = -4}, flags = 48879}",
    ),
    (
        "print *recp",
        "$10 = {name = \"widget\\000\\000\\000\\000\\000\\000\\000\\000\\000\", id = 7, score = 98.5, pos = {x = 3, y = -4}, flags = 48879}",
    ),
    ("print recp->pos", "$11 = {x = 3, y = -4}"),
    (
        "print recp->name",
        "$12 = \"widget\\000\\000\\000\\000\\000\\000\\000\\000\\000\"",
    ),
    ("print rec.pos.y", "$13 = -4"),
    ("print -rec.pos.y * 2", "$14 = 8"),
    ("print arr[1] + arr[2] * 3", "$15 = 110"),
    ("print arr[4] / 7", "$16 = 7"),
    ("print arr[4] % 7", "$17 = 1"),
    ("print ratio * 2", "$18 = 5"),
    ("print ratio > 2", "$19 = 1"),
    ("print arr[0] == 10 && mask != 0", "$20 = 1"),
    ("print/x mask", "$21 = 0xee6b2800"),
    ("print/x arr", "$22 = {0xa, 0x14, 0x1e, 0x28, 0x32}"),
    ("print/x -1", "$23 = 0xffffffff"),
    ("print recp", "$24 = (struct record *) {hex} <rec>"),
    ("print &arr[2]", "$25 = (int *) {hex} <arr+8>"),
    ("print (char)65", "$26 = 65 'A'"),
    ("print sizeof(rec)", "$27 = 48"),
    ("print rec.score / 3", "$28 = 32.833333333333336"),
    ("x/4dw &arr", "{hex} <arr>:\t10\t20\t30\t40"),
    ("x/s message", "{hex}:\t\"a message\""),
    ("x/s greeting", "{hex} <greeting>:\t\"hello, world\""),
    ("print $1 + 5", "$29 = 6"),
    ("print 10 - 20", "$30 = -10"),
    ("print mask + 1000000000", "$31 = 705032704"),
    ("print rec.flags", "$32 = 48879"),
    ("print/t 10", "$33 = 1010"),
    ("print/c 65", "$34 = 65 'A'"),
    ("print/o 8", "$35 = 010"),
    ("print *arr@3", "$36 = {10, 20, 30}"),
    ("print &rec", "$37 = (struct record *) {hex} <rec>"),
    ("print message[2]", "$38 = 109 'm'"),
    (
        "x/2xg &big_global",
        "{hex} <big_global>:\t0xfffffee08e04fb35\t0x00000000ee6b2800",
    ),
    ("x/3xb greeting", "{hex} <greeting>:\t0x68\t0x65\t0x6c"),
    ("print nullp", "$39 = (int *) 0x0"),
    ("print &counter", "$40 = (int *) {hex} <counter>"),
    ("print square", "$41 = {int (int)} {hex} <square>"),
    ("print x", "$42 = 49"),
    ("print neg", "$43 = -5"),
    ("print byte", "$44 = 200 '\\310'"),
    ("print arr[1] < arr[0]", "$45 = 0"),
    ("print 5 > 3 || 0", "$46 = 1"),
    ("print !5", "$47 = 0"),
    ("print ~0", "$48 = -1"),
    ("print 1.5 + 2", "$49 = 3.5"),
    ("print 3 / 2.0", "$50 = 1.5"),
    ("print -7 / 2", "$51 = -3"),
    ("print (long)mask * 4", "$52 = 16000000000"),
    ("print mask * 2", "$53 = 3705032704"),
    ("print rec.name[0]", "$54 = 119 'w'"),
    ("print &rec.pos", "$55 = (struct point *) {hex} <rec+32>"),
    ("print recp->pos.x + recp->pos.y", "$56 = -1"),
    ("print $", "$57 = -1"),
    // `$$2`: two values back from the last one ($57), so $55.
    ("print $$2", "$58 = (struct point *) {hex} <rec+32>"),
    ("output arr[2]", "30"),
];

#[test]
fn print_and_x_on_basics_values_as_gdb_formats_them() {
    let prog = compile("basics", &[]);
    let mut cmds = vec!["break basics.c:76", "run"];
    cmds.extend(BASICS_PRINTS.iter().map(|(c, _)| *c));
    let r = debug(&prog, &cmds, &[]);
    r.seq(&[
        "Breakpoint 1, main () at basics.c:76",
        "76\t    printf(\"square %d add %d\\n\", x, y);",
    ]);
    // Each command's line, in order, and nothing else between them.
    let want: Vec<&str> = BASICS_PRINTS.iter().map(|(_, w)| *w).collect();
    r.block(&want).code(0);
}

#[test]
fn info_locals_args_and_errors_in_print() {
    let prog = compile("basics", &[]);
    let r = debug(
        &prog,
        &[
            "break basics.c:76",
            "run",
            "info locals",
            "info args",
            "print nosuch",
            "print 1 +",
            "print )",
            "print *nullp",
            "print nullp->x",
            "print 1 + 2",
            "break level3",
            "continue",
            "info args",
            "info locals",
            "print tag",
            "print *tag",
            "print tag[1]",
            "print depth * -2",
            "print/x depth",
            "up",
            "print p",
            "print p.y",
            "print/x p",
            // Last: gdb prints `0x0:\t` on stdout before the error, with no newline.
            "x/4x 0",
        ],
        &[],
    );
    r.block(&[
        "x = 49",
        "y = 50",
        "neg = -5",
        // Not yet assigned at line 76: its initial (zeroed stack) contents are shown.
        "byte = {*}",
        "deep = {*}",
        "No arguments.",
        "$1 = 3",
    ])
    .block(&[
        "Breakpoint 2, level3 (depth=3, tag={hex} \"deep\") at basics.c:45",
        "45\t    int local3 = depth * 100;",
        "depth = 3",
        "tag = {hex} \"deep\"",
        "local3 = {*}",
        "$2 = {hex} \"deep\"",
        "$3 = 100 'd'",
        "$4 = 101 'e'",
        "$5 = -6",
        "$6 = 0x3",
        "#1  {hex} in level2 (depth=2, p=...) at basics.c:51",
        "51\t    return level3(depth + 1, \"deep\") + p.x;",
        "$7 = {x = 1, y = 2}",
        "$8 = 2",
        "$9 = {x = 0x1, y = 0x2}",
    ])
    .err_line("No symbol \"nosuch\" in current context.")
    .err_line("A syntax error in expression, near `'.")
    .err_line("A syntax error in expression, near `)'.")
    .err_line("Cannot access memory at address 0x0")
    .err_line("Attempt to extract a component of a value that is not a structure pointer.")
    .failed();
    // Two "Cannot access memory" lines: *nullp and x/4x 0 (gdb prints `0x0:\t` on stdout
    // first for the latter).
    assert_eq!(
        r.stderr
            .lines()
            .filter(|l| l.contains("Cannot access memory at address 0x0"))
            .count(),
        2,
        "{}",
        r.stderr
    );
    assert!(!r.stdout.contains("$10"), "{}", r.stdout);
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
