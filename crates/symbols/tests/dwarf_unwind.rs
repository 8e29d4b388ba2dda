//! Unwinding a real stack offline: chain.c records its registers and a copy of its stack
//! inside `leaf` (called through middle and outer from main); the tests unwind that copy and
//! read the variables of every frame from it.

mod dwarf_common;

use std::path::Path;

use dwarf_common::{compile_c, line_of, Dump, CHAIN_C};
use hindsight_symbols::target::{DwarfRegs, ReadMemory};
use hindsight_symbols::{Frame, Location, Program, Variable};

fn setup(flags: &[&str]) -> (Program, Dump) {
    let prog = compile_c("chain.c", CHAIN_C, flags);
    let dump = Dump::run(&prog);
    let mut p = Program::new();
    p.load_module(&prog, 0).expect("load");
    (p, dump)
}

fn frame0_regs(d: &Dump) -> DwarfRegs {
    let mut regs = DwarfRegs::default();
    regs.set(DwarfRegs::RIP, Some(d.rip));
    regs.set(DwarfRegs::RSP, Some(d.rsp));
    regs.set(DwarfRegs::RBP, Some(d.rbp));
    regs
}

/// The function names of the frames (outer frames looked up at pc - 1: their pc is a return
/// address, which may be the first byte of the next function).
fn names(p: &Program, frames: &[Frame]) -> Vec<String> {
    frames
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let pc = f.regs.pc().unwrap_or(0);
            let pc = if i == 0 { pc } else { pc - 1 };
            p.function_at(pc).map(|f| f.name).unwrap_or_default()
        })
        .collect()
}

fn check_chain(p: &Program, dump: &Dump) -> Vec<Frame> {
    let frames = p.unwind(&frame0_regs(dump), dump, 32);
    let names = names(p, &frames);
    assert!(frames.len() >= 4, "{names:?}");
    assert_eq!(names[..4], ["leaf", "middle", "outer", "main"]);
    assert_eq!(frames[0].regs, frame0_regs(dump));
    // Each frame's CFA is above the previous one's, and is the next frame's stack pointer.
    for w in frames[..4].windows(2) {
        let (a, b) = (w[0].cfa.expect("cfa"), w[1].cfa.expect("cfa"));
        assert!(a < b, "{a:#x} {b:#x}");
        assert_eq!(w[1].regs.get(DwarfRegs::RSP), Some(a));
    }
    // The return addresses are in the lines that made the calls.
    let call_lines = [
        line_of("r += leaf(inner, p);"),
        line_of("return middle(s)"),
        line_of("int r = outer(argc, 2);"),
    ];
    for (f, line) in frames[1..4].iter().zip(call_lines) {
        let pc = f.regs.pc().unwrap_or(0) - 1;
        assert_eq!(p.line_at(pc).map(|l| l.line), Some(line));
    }
    // Asking for fewer frames gives a prefix.
    let two = p.unwind(&frame0_regs(dump), dump, 2);
    assert_eq!(two[..], frames[..2]);
    frames
}

#[test]
fn unwind_o0_dwarf5() {
    let (p, dump) = setup(&["-g", "-O0", "-no-pie"]);
    check_chain(&p, &dump);
}

#[test]
fn unwind_o0_dwarf4() {
    let (p, dump) = setup(&["-gdwarf-4", "-O0", "-no-pie"]);
    check_chain(&p, &dump);
}

/// Frameless optimized code: only the CFI knows where the return addresses are.
#[test]
fn unwind_o2_without_frame_pointer() {
    let (p, dump) = setup(&[
        "-g",
        "-O2",
        "-fomit-frame-pointer",
        "-fno-optimize-sibling-calls",
        "-no-pie",
    ]);
    let frames = check_chain(&p, &dump);
    // Variables of optimized frames may live in registers or nowhere; asking is no error.
    for f in &frames[..4] {
        for v in p.locals(f).iter().chain(p.params(f).iter()) {
            assert!(p.variable_location(v, Some(f), &dump).is_ok(), "{}", v.name);
        }
    }
}

/// Without any CFI the rbp chain still finds the callers.
#[test]
fn unwind_rbp_chain_without_cfi() {
    let (p, dump) = setup(&[
        "-g",
        "-O0",
        "-fno-asynchronous-unwind-tables",
        "-fno-unwind-tables",
        "-no-pie",
    ]);
    let frames = p.unwind(&frame0_regs(&dump), &dump, 8);
    let names = names(&p, &frames);
    assert!(names.len() >= 4, "{names:?}");
    assert_eq!(names[..4], ["leaf", "middle", "outer", "main"]);
}

fn read_i32(mem: &dyn ReadMemory, loc: &Location) -> i32 {
    match loc {
        Location::Address(a) => {
            let mut b = [0u8; 4];
            mem.read_memory(*a, &mut b).expect("read variable");
            i32::from_le_bytes(b)
        }
        other => panic!("not in memory: {other:?}"),
    }
}

fn var_names(vars: &[Variable]) -> Vec<&str> {
    vars.iter().map(|v| v.name.as_str()).collect()
}

fn check_variables(flags: &[&str]) {
    let (p, dump) = setup(flags);
    let frames = check_chain(&p, &dump);
    let (leaf, middle, outer, main) = (&frames[0], &frames[1], &frames[2], &frames[3]);

    // leaf: parameters and locals in declaration order.
    assert_eq!(var_names(&p.params(leaf)), ["depth", "p"]);
    assert_eq!(var_names(&p.locals(leaf)), ["marker", "rip", "rsp", "rbp"]);
    assert!(p.params(leaf).iter().all(|v| v.is_param));
    assert!(p.locals(leaf).iter().all(|v| !v.is_param));
    let marker = p.lookup_variable("marker", Some(leaf)).expect("marker");
    assert_eq!(
        p.variable_location(&marker, Some(leaf), &dump),
        Ok(Location::Address(dump.marker))
    );
    // The program ran with one argument: argc = 2, s = n = inner = 4, marker = 46.
    assert_eq!(read_i32(&dump, &Location::Address(dump.marker)), 46);
    let depth = p.lookup_variable("depth", Some(leaf)).expect("depth");
    let loc = p.variable_location(&depth, Some(leaf), &dump).unwrap();
    assert_eq!(read_i32(&dump, &loc), 4);

    // middle: innermost block first.
    assert_eq!(var_names(&p.locals(middle)), ["inner", "i", "p", "r"]);
    assert_eq!(var_names(&p.params(middle)), ["n"]);
    for (name, value) in [("inner", 4), ("i", 0), ("n", 4), ("r", 0)] {
        let v = p.lookup_variable(name, Some(middle)).expect(name);
        let loc = p.variable_location(&v, Some(middle), &dump).unwrap();
        assert_eq!(read_i32(&dump, &loc), value, "{name}");
    }
    // `p` in middle is a point_t; in leaf it is the parameter.
    let pm = p.lookup_variable("p", Some(middle)).expect("p");
    assert!(!pm.is_param);
    assert!(p.lookup_variable("p", Some(leaf)).expect("p").is_param);

    // outer: a + b = s.
    assert_eq!(var_names(&p.params(outer)), ["a", "b"]);
    for (name, value) in [("a", 2), ("b", 2), ("s", 4)] {
        let v = p.lookup_variable(name, Some(outer)).expect(name);
        let loc = p.variable_location(&v, Some(outer), &dump).unwrap();
        assert_eq!(read_i32(&dump, &loc), value, "{name}");
    }
    assert_eq!(var_names(&p.params(main)), ["argc", "argv"]);
    assert!(p.lookup_variable("inner", Some(outer)).is_none());

    // Globals and file statics: from any frame, or none.
    for name in ["counter", "ratio", "head"] {
        for frame in [Some(leaf), None] {
            let v = p.lookup_variable(name, frame).expect(name);
            assert!(!v.is_param);
            match p.variable_location(&v, frame, &dump) {
                Ok(Location::Address(a)) => assert_eq!(p.symbol_for(a).as_deref(), Some(name)),
                other => panic!("{name}: {other:?}"),
            }
        }
    }
    assert!(p.lookup_variable("marker", None).is_none());
    assert!(p.lookup_variable("no_such_variable", Some(leaf)).is_none());
}

#[test]
fn variables_dwarf5() {
    check_variables(&["-g", "-O0", "-no-pie"]);
}

#[test]
fn variables_dwarf4() {
    check_variables(&["-gdwarf-4", "-O0", "-no-pie"]);
}

/// The program must exist for these tests to mean anything.
#[test]
fn chain_program_is_a_real_call_chain() {
    let prog = compile_c("chain.c", CHAIN_C, &["-g", "-O0", "-no-pie"]);
    let dump = Dump::run(&prog);
    assert!(dump.base <= dump.marker && dump.marker < dump.base + dump.stack.len() as u64);
    assert_eq!(dump.base + 128, dump.rsp);
    assert!(Path::new(&prog).exists());
}

/// Memory holding one word.
struct OneWord(u64, u64);

impl ReadMemory for OneWord {
    fn read_memory(
        &self,
        addr: u64,
        buf: &mut [u8],
    ) -> Result<(), hindsight_symbols::target::AccessError> {
        let bytes = self.1.to_le_bytes();
        match addr.checked_sub(self.0) {
            Some(off) if off as usize + buf.len() <= 8 => {
                buf.copy_from_slice(&bytes[off as usize..off as usize + buf.len()]);
                Ok(())
            }
            _ => Err(hindsight_symbols::target::AccessError::Memory(addr)),
        }
    }
}

/// A PLT stub's CFA is a DWARF expression (rsp + 8, or + 16 past its push): stopped at the
/// first instruction of a stub, the caller is found from the return address at rsp.
#[test]
fn unwind_through_a_plt_stub() {
    use object::{Object, ObjectSection};
    let prog = compile_c("chain.c", CHAIN_C, &["-g", "-O0", "-no-pie"]);
    let bytes = std::fs::read(&prog).unwrap();
    let file = object::File::parse(&*bytes).unwrap();
    let plt = file.section_by_name(".plt").expect(".plt");
    // Entry 0 is the resolver's; entry 1 is the first function's stub.
    let stub = plt.address() + 16;
    let mut p = Program::new();
    p.load_module(&prog, 0).expect("load");
    let main = p.lookup_functions("main").remove(0);
    let ret = main.breakpoint_addr + 1;
    let rsp = 0x7fff_0000_1000;
    let mut regs = DwarfRegs::default();
    regs.set(DwarfRegs::RIP, Some(stub));
    regs.set(DwarfRegs::RSP, Some(rsp));
    // An rbp that leads nowhere: the rbp chain would stop here.
    regs.set(DwarfRegs::RBP, Some(0x10));
    let frames = p.unwind(&regs, &OneWord(rsp, ret), 4);
    assert!(frames.len() >= 2, "{frames:?}");
    assert_eq!(frames[0].cfa, Some(rsp + 8));
    assert_eq!(frames[1].regs.pc(), Some(ret));
    assert_eq!(frames[1].regs.get(DwarfRegs::RSP), Some(rsp + 8));
}
