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

/// Rust's std types as rust-gdb shows them (tests/programs/rs_values.rs): String, &str,
/// slices, Vec, VecDeque, HashMap, HashSet, BTreeMap, Option, Result, Box, Rc, Arc<Mutex>,
/// Cell, RefCell, enums with data, tuple structs and tuples. The expected lines are
/// rust-gdb's (`HINDSIGHT_TESTS_UNDER_GDB=1` runs rust-gdb on the same commands).
#[test]
fn std_values_as_rust_gdb_shows_them() {
    let prog = compile_rust("rs_values");
    let at = format!(
        "break rs_values.rs:{}",
        marker_line("rs_values.rs", "// stop")
    );
    let r = debug(
        &prog,
        &[
            &at,
            "run",
            "print *job",
            "print job",
            "print shapes",
            "print text",
            "print owned",
            "print v",
            "print empty",
            "print dq",
            "print hm",
            "print hs",
            "print some",
            "print none",
            "print ok",
            "print err",
            "print boxed",
            "print rc",
            "print arc",
            "print cell",
            "print refcell",
            "print pair",
            "print tuple",
            "print shapes[1]",
            "print v[1]",
            "print owned.vec.len",
            "info args",
            "info locals",
        ],
        &[],
    );
    assert!(r.stdout.lines().count() > 40, "{}", r.stdout);
    r.err_line("Cannot subscript non-array type");
    r.block(&[
        "$1 = rs_values::Job {id: 1, name: \"batch-alpha-1\", weights: Vec(size=2) = {0, 0.5}}",
        "$2 = (*mut rs_values::Job) {hex}",
        "$3 = &[rs_values::Shape](size=3) = {rs_values::Shape::Circle(1.5), rs_values::Shape::Rect{w: 2, h: 3}, rs_values::Shape::Empty}",
        "$4 = \"hello\"",
        "$5 = \"owned text\"",
        "$6 = Vec(size=3) = {1, 2, 3}",
        "$7 = Vec(size=0)",
        "$8 = VecDeque(size=3) = {1, 2, 3}",
        "$9 = HashMap(size=1) = {[1] = 10}",
        "$10 = HashSet(size=1) = {7}",
        "$11 = core::option::Option<i32>::Some(3)",
        "$12 = core::option::Option<i32>::None",
        "$13 = core::result::Result<i32, alloc::string::String>::Ok(5)",
        "$14 = core::result::Result<i32, alloc::string::String>::Err(\"bad\")",
        "$15 = (*mut i32) {hex}",
        "$16 = Rc(strong=1, weak=0) = {value = 4, strong = 1, weak = 0}",
        "$17 = Arc(strong=1, weak=0) = {value = std::sync::poison::mutex::Mutex<i32> {inner: std::sys::sync::mutex::futex::Mutex {futex: core::sync::atomic::AtomicU32 {v: core::cell::UnsafeCell<u32> {value: 0}}}, poison: std::sync::poison::Flag {failed: core::sync::atomic::AtomicBool {v: core::cell::UnsafeCell<u8> {value: 0}}}, data: core::cell::UnsafeCell<i32> {value: 6}}, strong = 1, weak = 0}",
        "$18 = Cell = {value = 2}",
        "$19 = RefCell(borrow=0) = {value = 9, borrow = 0}",
        "$20 = rs_values::Pair (1, 122 'z')",
        "$21 = (1, 2.5)",
        "$22 = rs_values::Shape::Rect{w: 2, h: 3}",
        "$23 = 10",
        "job = {hex}",
        "shapes = &[rs_values::Shape](size=3) = {rs_values::Shape::Circle(1.5), rs_values::Shape::Rect{w: 2, h: 3}, rs_values::Shape::Empty}",
        "n = 189",
        "tuple = (1, 2.5)",
        "pair = rs_values::Pair (1, 122 'z')",
        "refcell = RefCell(borrow=0) = {value = 9, borrow = 0}",
        "cell = Cell = {value = 2}",
        "arc = Arc(strong=1, weak=0) = {value = std::sync::poison::mutex::Mutex<i32> {inner: std::sys::sync::mutex::futex::Mutex {futex: core::sync::atomic::AtomicU32 {v: core::cell::UnsafeCell<u32> {value: 0}}}, poison: std::sync::poison::Flag {failed: core::sync::atomic::AtomicBool {v: core::cell::UnsafeCell<u8> {value: 0}}}, data: core::cell::UnsafeCell<i32> {value: 6}}, strong = 1, weak = 0}",
        "rc = Rc(strong=1, weak=0) = {value = 4, strong = 1, weak = 0}",
        "boxed = {hex}",
        "err = core::result::Result<i32, alloc::string::String>::Err(\"bad\")",
        "ok = core::result::Result<i32, alloc::string::String>::Ok(5)",
        "none = core::option::Option<i32>::None",
        "some = core::option::Option<i32>::Some(3)",
        "bt = BTreeMap(size=2) = {[1] = \"one\", [2] = \"two\"}",
        "hs = HashSet(size=1) = {7}",
        "hm = HashMap(size=1) = {[1] = 10}",
        "dq = VecDeque(size=3) = {1, 2, 3}",
        "empty = Vec(size=0)",
        "v = Vec(size=3) = {1, 2, 3}",
        "owned = \"owned text\"",
        "text = \"hello\"",
    ]);
}

/// `ptype` and `whatis` of Rust types as rust-gdb writes them: structs, tuple structs,
/// tuples, enums with their variants, pointers by name.
#[test]
fn rust_types_as_rust_gdb_writes_them() {
    let prog = compile_rust("rs_values");
    let at = format!(
        "break rs_values.rs:{}",
        marker_line("rs_values.rs", "// stop")
    );
    let r = debug(
        &prog,
        &[
            &at,
            "run",
            "ptype job",
            "ptype pair",
            "ptype tuple",
            "ptype some",
            "ptype rs_values::Shape",
            "ptype *job",
            "whatis pair",
            "whatis v",
        ],
        &[],
    );
    r.block(&[
        "type = *mut rs_values::Job",
        "type = struct rs_values::Pair (",
        "  i32,",
        "  char,",
        ")",
        "type = (i32, f64)",
        "type = enum core::option::Option<i32> {",
        "  None,",
        "  Some(i32),",
        "}",
        "type = enum rs_values::Shape {",
        "  Circle(f64),",
        "  Rect{w: i32, h: i32},",
        "  Empty,",
        "}",
        "type = struct rs_values::Job {",
        "  id: u32,",
        "  name: alloc::string::String,",
        "  weights: alloc::vec::Vec<f64, alloc::alloc::Global>,",
        "}",
        "type = rs_values::Pair",
        "type = alloc::vec::Vec<i32, alloc::alloc::Global>",
    ]);
}
