//! Functions from DWARF and ELF symbols: lookup by name and address, and where `break FUNCTION`
//! goes, checked against gdb on the same binaries.

mod dwarf_common;

use std::path::Path;

use dwarf_common::{compile_c, compile_rust, gdb_breaks, line_of, CHAIN_C};
use hindsight_symbols::types::{Language, Type};
use hindsight_symbols::Program;

/// Each function of chain.c and the text of its declaration line.
const FUNCS: [(&str, &str); 5] = [
    ("main", "int main(int argc"),
    ("leaf", "int leaf(int depth"),
    ("middle", "int middle(int n)"),
    ("outer", "int outer(int a"),
    ("tally", "int tally(void)"),
];

fn check_functions(prog: &Path, bias: u64) {
    let mut p = Program::new();
    let m = p.load_module(prog, bias).expect("load");
    assert!(p.has_debug_info(m));
    assert_eq!(p.module_path(m), prog);
    let names: Vec<&str> = FUNCS.iter().map(|f| f.0).collect();
    let gdb = gdb_breaks(prog, &names);
    for (i, (name, decl)) in FUNCS.iter().enumerate() {
        let found = p.lookup_functions(name);
        assert_eq!(found.len(), 1, "{name}: {found:?}");
        let f = &found[0];
        assert_eq!(f.name, *name);
        assert!(f.has_debug_info);
        assert_eq!(f.module, m);
        assert!(f.low < f.high);
        assert!(
            f.low < f.breakpoint_addr && f.breakpoint_addr < f.high,
            "{name}: the prologue is skipped"
        );
        assert_eq!(f.decl_line, Some(line_of(decl)), "{name}");
        let decl_file = f.decl_file.as_ref().expect("decl_file");
        assert!(decl_file.ends_with("chain.c"), "{}", decl_file.display());
        assert_eq!(decl_file.parent(), prog.parent());
        // Every function of chain.c returns int.
        let ret = f.return_type.expect("return type");
        assert!(
            matches!(p.types(ret.module).get(ret.id), Type::Base { name, size: 4, .. } if name == "int")
        );
        // The address lookups agree with the name lookup.
        for pc in [f.low, f.breakpoint_addr, f.high - 1] {
            let at = p.function_at(pc).expect("function_at");
            assert_eq!((at.name.as_str(), at.low, at.high), (*name, f.low, f.high));
        }
        assert_ne!(
            p.function_at(f.high).map(|g| g.name),
            Some(name.to_string())
        );
        assert_eq!(p.language_at(f.low), Language::C);
        // The breakpoint lands in the body, past the declaration and its brace.
        let line = p.line_at(f.breakpoint_addr).expect("line").line;
        assert!(line > line_of(decl) + 1, "{name}: line {line}");
        if let Some(gdb) = &gdb {
            let (addr, gdb_line) = gdb[i].clone().expect("gdb breakpoint");
            assert_eq!(f.breakpoint_addr, addr + bias, "{name} vs gdb");
            assert_eq!(line, gdb_line, "{name} vs gdb");
        }
    }
    assert!(p.lookup_functions("no_such_function").is_empty());
}

#[test]
fn functions_dwarf5_no_pie() {
    check_functions(&compile_c("chain.c", CHAIN_C, &["-g", "-O0", "-no-pie"]), 0);
}

#[test]
fn functions_dwarf4_no_pie() {
    check_functions(
        &compile_c("chain.c", CHAIN_C, &["-gdwarf-4", "-O0", "-no-pie"]),
        0,
    );
}

#[test]
fn functions_pie_with_bias() {
    let prog = compile_c("chain.c", CHAIN_C, &["-g", "-O0", "-pie", "-fPIE"]);
    check_functions(&prog, 0x5555_5555_4000);
}

/// Optimized code: gdb breaks at the entry of out-of-line functions.
#[test]
fn functions_optimized() {
    let prog = compile_c("chain.c", CHAIN_C, &["-g", "-O2", "-no-pie"]);
    let mut p = Program::new();
    p.load_module(&prog, 0).expect("load");
    let names = ["leaf", "middle", "outer"];
    let gdb = gdb_breaks(&prog, &names);
    for (i, name) in names.iter().enumerate() {
        let f = p.lookup_functions(name);
        assert_eq!(f.len(), 1, "{name}");
        assert_eq!(f[0].breakpoint_addr, f[0].low, "{name}");
        if let Some(gdb) = &gdb {
            assert_eq!(Ok(f[0].breakpoint_addr), gdb[i].clone().map(|g| g.0));
        }
    }
}

#[test]
fn elf_symbols_without_debug_info() {
    let prog = compile_c("chain.c", CHAIN_C, &["-g", "-O0", "-no-pie"]);
    let mut p = Program::new();
    p.load_module(&prog, 0).expect("load");
    // `_start` comes from crt1.o, which has no DWARF.
    let start = p.lookup_functions("_start");
    assert_eq!(start.len(), 1, "{start:?}");
    let s = &start[0];
    assert!(!s.has_debug_info);
    assert_eq!(s.name, "_start");
    assert!(s.decl_line.is_none() && s.return_type.is_none());
    let at = p.function_at(s.low + 1).expect("function_at");
    assert_eq!(at.name, "_start");
    assert!(!at.has_debug_info);
    assert!(p.line_at(s.low).is_none());

    // A binary without any DWARF still has its ELF functions.
    let bare = compile_c("chain.c", CHAIN_C, &["-O0", "-no-pie"]);
    let mut p = Program::new();
    let m = p.load_module(&bare, 0).expect("load");
    assert!(!p.has_debug_info(m));
    let leaf = p.lookup_functions("leaf");
    assert_eq!(leaf.len(), 1);
    assert!(!leaf[0].has_debug_info);
    assert!(leaf[0].low < leaf[0].high);
    // gdb skips `push %rbp; mov %rsp,%rbp` in functions without line information.
    assert!(leaf[0].breakpoint_addr > leaf[0].low);
    if let Some(gdb) = gdb_breaks(&bare, &["leaf"]) {
        assert_eq!(
            Ok(leaf[0].breakpoint_addr),
            gdb[0].clone().map(|g| g.0),
            "{gdb:?}"
        );
    }
}

#[test]
fn load_errors() {
    let mut p = Program::new();
    let err = p
        .load_module(Path::new("/nonexistent/hindsight/prog"), 0)
        .unwrap_err();
    assert!(err.to_string().contains("/nonexistent/hindsight/prog"));
    // Not an ELF file.
    let dir = dwarf_common::temp_dir("notelf");
    let f = dir.join("text");
    std::fs::write(&f, "hello").unwrap();
    assert!(p.load_module(&f, 0).is_err());
    assert_eq!(p.modules().count(), 0);
}

pub const RUST_SRC: &str = r#"
pub struct Point {
    pub x: i32,
    pub y: i32,
}

#[inline(never)]
fn area(p: &Point) -> i32 {
    let a = p.x * p.y;
    a
}

static COUNTER: i32 = 5;

fn main() {
    let p = Point { x: 3, y: 4 };
    let r = area(&p);
    println!("{} {}", r, COUNTER);
}
"#;

#[test]
fn rust_functions() {
    const BIAS: u64 = 0x5555_5555_4000;
    let prog = compile_rust("hello.rs", RUST_SRC);
    let mut p = Program::new();
    let m = p.load_module(&prog, BIAS).expect("load");
    assert!(p.has_debug_info(m));
    let main = p.lookup_functions("hello::main");
    assert_eq!(main.len(), 1, "{main:?}");
    assert_eq!(main[0].name, "hello::main");
    assert!(main[0].has_debug_info);
    assert!(p
        .lookup_functions("main")
        .iter()
        .any(|f| f.name == "hello::main"));
    let area = p.lookup_functions("area");
    assert_eq!(area.len(), 1);
    assert_eq!(area[0].name, "hello::area");
    assert_eq!(p.language_at(area[0].low), Language::Rust);
    let ret = area[0].return_type.expect("return type");
    assert!(matches!(p.types(ret.module).get(ret.id), Type::Base { name, .. } if name == "i32"));
    let at = p.function_at(area[0].breakpoint_addr).expect("function_at");
    assert_eq!(at.name, "hello::area");
    // `let a = p.x * p.y;` is where gdb stops for `break area`.
    let line = p.line_at(area[0].breakpoint_addr).expect("line");
    assert_eq!(line.line, 9);
    assert!(line.file.ends_with("hello.rs"));
    if let Some(gdb) = gdb_breaks(&prog, &["hello::area", "hello::main"]) {
        for (f, g) in [&area[0], &main[0]].into_iter().zip(gdb) {
            let (addr, line) = g.expect("gdb breakpoint");
            assert_eq!(f.breakpoint_addr, addr + BIAS, "{}", f.name);
            assert_eq!(p.line_at(f.breakpoint_addr).map(|l| l.line), Some(line));
        }
    }
}
