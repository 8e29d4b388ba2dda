//! Line tables: the row at a pc, the range `step` must leave, and `break FILE:LINE`, checked
//! against gdb on the same binaries (DWARF 5 and 4).

mod dwarf_common;

use std::path::Path;

use dwarf_common::{compile_c, gdb_breaks, line_of, CHAIN_C};
use hindsight_symbols::{Program, SymbolsError};

fn load(prog: &Path) -> Program {
    let mut p = Program::new();
    p.load_module(prog, 0).expect("load");
    p
}

fn check_lines(prog: &Path) {
    let p = load(prog);
    let leaf = p.lookup_functions("leaf").remove(0);
    let marker = line_of("int marker = 42");
    let at = p.line_at(leaf.breakpoint_addr).expect("line_at");
    assert_eq!(at.line, marker);
    assert_eq!(at.address, leaf.breakpoint_addr);
    assert!(at.is_stmt);
    assert_eq!(at.name, "chain.c");
    assert_eq!(at.file.parent(), prog.parent());
    assert!(at.file.ends_with("chain.c"));
    // Every pc of the line maps to the line, and the range is exactly the line's rows.
    let (start, end) = p.line_range(leaf.breakpoint_addr).expect("line_range");
    assert_eq!(start, leaf.breakpoint_addr);
    assert!(end > start);
    for pc in start..end {
        let l = p.line_at(pc).expect("line_at");
        assert_eq!(l.line, marker, "{pc:#x}");
        assert_eq!(p.line_range(pc), Some((start, end)));
    }
    assert_ne!(p.line_at(end).map(|l| l.line), Some(marker));
    // The opening line's range stays inside the function.
    let (s, e) = p.line_range(leaf.low).expect("line_range");
    assert_eq!(s, leaf.low);
    assert!(e <= leaf.breakpoint_addr);
    // Outside any line table.
    assert!(p.line_at(0x10).is_none());
    assert!(p.line_range(0x10).is_none());
}

#[test]
fn lines_dwarf5() {
    check_lines(&compile_c("chain.c", CHAIN_C, &["-g", "-O0", "-no-pie"]));
}

#[test]
fn lines_dwarf4() {
    check_lines(&compile_c(
        "chain.c",
        CHAIN_C,
        &["-gdwarf-4", "-O0", "-no-pie"],
    ));
}

/// Lines with code, lines without (blank, declarations, between functions), and past the end.
fn resolve_cases() -> Vec<u32> {
    let mut lines: Vec<u32> = (1..=line_of("return 0;") + 1).collect();
    lines.push(line_of("return 0;") + 30);
    lines
}

fn check_resolve(prog: &Path) {
    let p = load(prog);
    let lines = resolve_cases();
    let specs: Vec<String> = lines.iter().map(|l| format!("chain.c:{l}")).collect();
    let spec_refs: Vec<&str> = specs.iter().map(String::as_str).collect();
    let gdb = gdb_breaks(prog, &spec_refs);
    for (i, line) in lines.iter().enumerate() {
        let ours = p.resolve_line("chain.c", *line);
        if let Some(gdb) = &gdb {
            match (&ours, &gdb[i]) {
                (Ok(addrs), Ok((addr, gdb_line))) => {
                    assert_eq!(addrs, &vec![*addr], "chain.c:{line}");
                    assert_eq!(p.line_at(addrs[0]).map(|l| l.line), Some(*gdb_line));
                }
                (Err(e), Err(msg)) => assert_eq!(&e.to_string(), msg),
                _ => panic!("chain.c:{line}: ours {ours:?}, gdb {:?}", gdb[i]),
            }
        }
    }
    // What holds with or without gdb.
    let marker = line_of("int marker = 42");
    let leaf = p.lookup_functions("leaf").remove(0);
    assert_eq!(
        p.resolve_line("chain.c", marker),
        Ok(vec![leaf.breakpoint_addr])
    );
    // The declaration line of a function breaks where `break FUNCTION` does.
    assert_eq!(
        p.resolve_line("chain.c", line_of("int leaf(int depth")),
        Ok(vec![leaf.breakpoint_addr])
    );
    // A blank line moves to the next line with code.
    let blank = line_of("int s = a + b;") + 1;
    let ret = p.resolve_line("chain.c", blank).expect("blank line");
    assert_eq!(
        p.line_at(ret[0]).map(|l| l.line),
        Some(line_of("return middle(s)"))
    );
    let past = line_of("return 0;") + 30;
    assert_eq!(
        p.resolve_line("chain.c", past),
        Err(SymbolsError::LineOutOfRange {
            file: "chain.c".into(),
            line: past,
        })
    );
    assert_eq!(
        p.resolve_line("chain.c", past).unwrap_err().to_string(),
        format!("No line {past} in file \"chain.c\".")
    );
}

#[test]
fn resolve_line_dwarf5() {
    check_resolve(&compile_c("chain.c", CHAIN_C, &["-g", "-O0", "-no-pie"]));
}

#[test]
fn resolve_line_dwarf4() {
    check_resolve(&compile_c(
        "chain.c",
        CHAIN_C,
        &["-gdwarf-4", "-O0", "-no-pie"],
    ));
}

#[test]
fn resolve_line_file_matching() {
    let prog = compile_c("chain.c", CHAIN_C, &["-g", "-O0", "-no-pie"]);
    let p = load(&prog);
    let line = line_of("int marker = 42");
    let expected = p.resolve_line("chain.c", line).expect("by name");
    let full = prog.with_file_name("chain.c");
    assert_eq!(
        p.resolve_line(&full.to_string_lossy(), line),
        Ok(expected.clone())
    );
    // A suffix on a '/' boundary.
    let dir = prog.parent().and_then(Path::file_name).expect("dir name");
    let suffix = format!("{}/chain.c", dir.to_string_lossy());
    assert_eq!(p.resolve_line(&suffix, line), Ok(expected));
    // Not on a boundary, or unknown.
    for bad in ["hain.c", "other.c", "x/chain.c"] {
        assert_eq!(
            p.resolve_line(bad, line),
            Err(SymbolsError::NoSourceFile(bad.into()))
        );
    }
    assert_eq!(
        p.resolve_line("nosuch.c", 3).unwrap_err().to_string(),
        "No source file named nosuch.c."
    );
}

/// A loop line has rows in several places of one function: one breakpoint, at the first.
#[test]
fn resolve_line_loop_once_per_function() {
    let prog = compile_c("chain.c", CHAIN_C, &["-g", "-O0", "-no-pie"]);
    let p = load(&prog);
    let line = line_of("for (int i = 0;");
    let addrs = p.resolve_line("chain.c", line).expect("loop line");
    assert_eq!(addrs.len(), 1);
    let middle = p.lookup_functions("middle").remove(0);
    assert!(middle.low <= addrs[0] && addrs[0] < middle.high);
    assert_eq!(p.line_at(addrs[0]).map(|l| l.line), Some(line));
}

/// A header's inline function included in two files: one location per copy.
#[test]
fn resolve_line_several_functions() {
    let dir = dwarf_common::temp_dir("multi");
    std::fs::write(
        dir.join("twice.h"),
        "static int twice(int x)\n{\n    return x * 2;\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("a.c"),
        "#include \"twice.h\"\nint a(int v) { return twice(v); }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("b.c"),
        "#include \"twice.h\"\nint a(int);\nint main(void) { return a(1) + twice(2); }\n",
    )
    .unwrap();
    let prog = dir.join("prog");
    let ok = std::process::Command::new("gcc")
        .current_dir(&dir)
        .args(["-g", "-O0", "-no-pie", "-o", "prog", "a.c", "b.c"])
        .status()
        .expect("gcc")
        .success();
    assert!(ok);
    let p = load(&prog);
    let addrs = p.resolve_line("twice.h", 3).expect("twice.h:3");
    assert_eq!(addrs.len(), 2, "{addrs:x?}");
    let twice = p.lookup_functions("twice");
    assert_eq!(twice.len(), 2);
    for f in &twice {
        assert!(addrs.contains(&f.breakpoint_addr));
    }
    if let Some(gdb) = gdb_breaks(&prog, &["twice.h:3"]) {
        // gdb: "Breakpoint 1 at 0x...: twice.h:3. (2 locations)"
        assert!(
            matches!(&gdb[0], Err(m) if m.contains("(2 locations)")),
            "{gdb:?}"
        );
    }
}
