//! Whether the arithmetic flags are live at an address: may the code that runs from there
//! read one of them before writing it?
//!
//! The counting code (`sub qword gs:[0], 256`) overwrites the six arithmetic flags. Where
//! they are dead at the point execution continues, nothing saves them (a few cycles per tick
//! saved); elsewhere they are saved and restored around the count. The analysis follows the
//! fall-through path and direct unconditional jumps for a bounded number of instructions,
//! and answers "live" whenever it cannot tell.

use iced_x86::{Code, FlowControl, Instruction, Mnemonic, OpKind, RflagsBits};

use crate::scan::{is_direct, Scan};

/// The flags the counting code changes.
const ARITH: u32 = RflagsBits::OF
    | RflagsBits::SF
    | RflagsBits::ZF
    | RflagsBits::AF
    | RflagsBits::CF
    | RflagsBits::PF;

/// Instructions followed from the address before giving up (and answering "live").
const BUDGET: usize = 48;

/// Whether any arithmetic flag may be read, from `addr` on, before it is written.
pub fn live_at(scan: &Scan, addr: u64) -> bool {
    let mut need = ARITH;
    let mut at = addr;
    for _ in 0..BUDGET {
        let Some(k) = scan.index_of(at) else {
            return true;
        };
        let insn = &scan.insns[k].insn;
        if insn.rflags_read() & need != 0 {
            return true;
        }
        match insn.flow_control() {
            // The calling convention leaves the flags undefined across a call and a return.
            FlowControl::Call | FlowControl::IndirectCall | FlowControl::Return => return false,
            FlowControl::UnconditionalBranch if is_direct(insn) => {
                at = insn.near_branch_target();
                continue;
            }
            FlowControl::Next => {}
            // A conditional branch (its taken path is not followed) or anything else that
            // leads where this analysis does not follow, with flags still unwritten.
            _ => return true,
        }
        if matches!(insn.code(), Code::Syscall | Code::Sysenter) {
            // The kernel gives the flags back as they were.
            return true;
        }
        need &= !killed(insn);
        if need == 0 {
            return false;
        }
        at = insn.next_ip();
    }
    true
}

/// The flags an instruction certainly overwrites without reading them first. Shifts and
/// rotates leave every flag alone when their count is zero, so only a non-zero immediate
/// count kills theirs.
fn killed(insn: &Instruction) -> u32 {
    let all =
        insn.rflags_written() | insn.rflags_cleared() | insn.rflags_set() | insn.rflags_undefined();
    let shift = matches!(
        insn.mnemonic(),
        Mnemonic::Shl
            | Mnemonic::Sal
            | Mnemonic::Shr
            | Mnemonic::Sar
            | Mnemonic::Rol
            | Mnemonic::Ror
            | Mnemonic::Rcl
            | Mnemonic::Rcr
            | Mnemonic::Shld
            | Mnemonic::Shrd
    );
    if !shift {
        return all;
    }
    let count_op = insn.op_count() - 1;
    let imm = match insn.op_kind(count_op) {
        OpKind::Immediate8 => u64::from(insn.immediate8()),
        // `shl r/m, 1` has an implicit count of one.
        _ if insn.op_count() == 1 => 1,
        _ => 0,
    };
    if imm & 0x3f != 0 {
        all
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code::{ModuleCode, Section};

    fn scan_of(bytes: &[u8]) -> Scan {
        let code = ModuleCode {
            sections: vec![Section {
                addr: 0x1000,
                bytes: bytes.to_vec(),
            }],
            functions: vec![(0x1000, 0x1000 + bytes.len() as u64)],
        };
        Scan::new(&code)
    }

    #[test]
    fn an_add_kills_every_flag_a_jcc_reads_them() {
        // add rax, rbx; ret
        assert!(!live_at(&scan_of(&[0x48, 0x01, 0xd8, 0xc3]), 0x1000));
        // jne +0; ret
        assert!(live_at(&scan_of(&[0x75, 0x00, 0xc3]), 0x1000));
        // adc rax, rbx (reads CF)
        assert!(live_at(&scan_of(&[0x48, 0x11, 0xd8, 0xc3]), 0x1000));
    }

    #[test]
    fn inc_keeps_carry_and_a_shift_by_cl_keeps_everything() {
        // inc rax; adc rbx, rcx: inc leaves CF, which adc reads.
        assert!(live_at(
            &scan_of(&[0x48, 0xff, 0xc0, 0x48, 0x11, 0xcb, 0xc3]),
            0x1000
        ));
        // shl rax, cl; jz: the shift by a register count may change nothing.
        assert!(live_at(
            &scan_of(&[0x48, 0xd3, 0xe0, 0x74, 0x00, 0xc3]),
            0x1000
        ));
        // shl rax, 3; jz: a non-zero immediate count writes ZF (and the others).
        assert!(!live_at(
            &scan_of(&[0x48, 0xc1, 0xe0, 0x03, 0x74, 0x00, 0xc3]),
            0x1000
        ));
    }

    #[test]
    fn mov_and_lea_pass_through_to_what_follows() {
        // mov rax, rbx; lea rcx, [rax+1]; cmp rax, rcx; ret
        assert!(!live_at(
            &scan_of(&[0x48, 0x89, 0xd8, 0x48, 0x8d, 0x48, 0x01, 0x48, 0x39, 0xc8, 0xc3]),
            0x1000
        ));
        // mov rax, rbx; cmovz rcx, rax
        assert!(live_at(
            &scan_of(&[0x48, 0x89, 0xd8, 0x48, 0x0f, 0x44, 0xc8, 0xc3]),
            0x1000
        ));
    }
}
