//! Displaced stepping plans: how a thread executes a breakpoint's original instruction
//! somewhere else, so that the int3 never leaves memory and no other thread can run through
//! the address unseen (seed 000; [`crate::stepover::Strategy::Displaced`]).
//!
//! The instruction is re-encoded for a scratch *slot* (iced-x86's block encoder fixes
//! RIP-relative operands and relative branch targets) and followed by a `jmp rel32` back to
//! the next instruction. A direct `call` is emulated instead: a relocated call would push the
//! slot's address as the return address. Anything that cannot move faithfully (indirect
//! calls, traps and faults, transactions, undecodable bytes, targets out of rel32 reach of the
//! slot) is stepped inline, with the trap lifted and every other thread stopped.
//!
//! The tracer allocates the slot within ±2 GiB of the code, writes the plan's code there once
//! and must not rewrite it while any thread may still be executing in it (a thread stopped in
//! a slot by an all-stop resumes there later).

use iced_x86::{
    BlockEncoder, BlockEncoderOptions, Code, Decoder, DecoderOptions, FlowControl, Instruction,
    InstructionBlock, OpKind,
};

/// The most bytes a plan's code takes (the longest instruction, 15 bytes, re-encoded, plus the
/// 5-byte jump back, rounded up).
pub const SLOT_SIZE: usize = 32;

/// How to get past the instruction at a breakpoint site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Write `code` at the slot and set rip to the slot; it ends by jumping back to the
    /// instruction after the original.
    Relocated {
        /// The relocated instruction followed by `jmp rel32` to `addr + len`.
        code: Vec<u8>,
        /// Length of the original instruction.
        len: usize,
    },
    /// A direct call: push `return_addr` and set rip to `target`.
    EmulateCall {
        /// The call's target.
        target: u64,
        /// The address after the call.
        return_addr: u64,
    },
    /// No displaced step: lift the trap and single-step with the other threads stopped.
    Inline,
}

/// Plans the step over the instruction at `addr`, whose bytes (the program's own, not the
/// int3; at least the instruction's length, 15 bytes suffice) are `code`, with a scratch slot
/// at `slot`.
pub fn plan(addr: u64, code: &[u8], slot: u64) -> Plan {
    let mut dec = Decoder::with_ip(64, code, addr, DecoderOptions::NONE);
    let insn = dec.decode();
    if insn.is_invalid() {
        return Plan::Inline;
    }
    let len = insn.len();
    let next = addr.wrapping_add(len as u64);
    match insn.flow_control() {
        FlowControl::Call if is_near_branch(&insn) => {
            return Plan::EmulateCall {
                target: insn.near_branch_target(),
                return_addr: next,
            }
        }
        // The kernel returns to the instruction after `syscall`, the jump back: moving it is
        // safe, and a restarted syscall re-executes the copy.
        _ if insn.code() == Code::Syscall => {}
        FlowControl::Next
        | FlowControl::UnconditionalBranch
        | FlowControl::ConditionalBranch
        | FlowControl::IndirectBranch
        | FlowControl::Return => {}
        // Indirect calls (the pushed return address would be the slot's), int/int3/ud2 (a
        // signal reported in the slot), xbegin, far transfers…
        _ => return Plan::Inline,
    }
    let Ok(back) = Instruction::with_branch(Code::Jmp_rel32_64, next) else {
        return Plan::Inline;
    };
    let insns = [insn, back];
    let block = InstructionBlock::new(&insns, slot);
    match BlockEncoder::encode(64, block, BlockEncoderOptions::NONE) {
        Ok(r)
            if r.code_buffer.len() <= SLOT_SIZE && faithful(&insn, &r.code_buffer, slot, next) =>
        {
            Plan::Relocated {
                code: r.code_buffer,
                len,
            }
        }
        _ => Plan::Inline,
    }
}

fn is_near_branch(insn: &Instruction) -> bool {
    matches!(
        insn.op0_kind(),
        OpKind::NearBranch16 | OpKind::NearBranch32 | OpKind::NearBranch64
    )
}

/// Decodes the relocated `code` again: the same instruction reaching the same memory and
/// branch target, then exactly a `jmp rel32` to `next`. The block encoder may rewrite a branch
/// out of reach into a longer sequence; such plans are refused, the tracer expects one
/// instruction and the jump.
fn faithful(orig: &Instruction, code: &[u8], slot: u64, next: u64) -> bool {
    let mut dec = Decoder::with_ip(64, code, slot, DecoderOptions::NONE);
    let moved = dec.decode();
    let back = dec.decode();
    if moved.is_invalid() || back.is_invalid() || moved.mnemonic() != orig.mnemonic() {
        return false;
    }
    if orig.is_ip_rel_memory_operand()
        && moved.ip_rel_memory_address() != orig.ip_rel_memory_address()
    {
        return false;
    }
    if is_near_branch(orig) && moved.near_branch_target() != orig.near_branch_target() {
        return false;
    }
    back.code() == Code::Jmp_rel32_64
        && back.near_branch_target() == next
        && moved.len() + back.len() == code.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(code: &[u8], ip: u64) -> Instruction {
        Decoder::with_ip(64, code, ip, DecoderOptions::NONE).decode()
    }

    const ADDR: u64 = 0x40_1000;
    const SLOT: u64 = 0x3f_0000;

    /// Relocates `code`, checks the jump back, and returns the relocated instruction.
    fn relocate(code: &[u8]) -> (Instruction, Vec<u8>) {
        let Plan::Relocated { code: out, len } = plan(ADDR, code, SLOT) else {
            panic!(
                "{code:02x?} must relocate, got {:?}",
                plan(ADDR, code, SLOT)
            );
        };
        assert_eq!(len, code.len());
        let moved = decode(&out, SLOT);
        let back = decode(&out[moved.len()..], SLOT + moved.len() as u64);
        assert_eq!(back.code(), Code::Jmp_rel32_64);
        assert_eq!(back.near_branch_target(), ADDR + len as u64);
        assert_eq!(moved.len() + back.len(), out.len());
        (moved, out)
    }

    #[test]
    fn position_independent_instructions_keep_their_bytes() {
        for code in [
            &[0x55][..],                                 // push rbp
            &[0x48, 0x89, 0xe5],                         // mov rbp, rsp
            &[0xf3, 0x0f, 0x1e, 0xfa],                   // endbr64
            &[0x90],                                     // nop
            &[0x48, 0x83, 0xf8, 0x05],                   // cmp rax, 5
            &[0x81, 0x7d, 0xfc, 0x10, 0x27, 0x00, 0x00], // cmp dword [rbp-4], 10000
            &[0xc3],                                     // ret
            &[0x0f, 0x05],                               // syscall
        ] {
            let (moved, out) = relocate(code);
            assert_eq!(&out[..code.len()], code, "{moved}");
        }
    }

    #[test]
    fn rip_relative_operands_keep_their_address() {
        for code in [
            &[0x8b, 0x05, 0xd6, 0x2e, 0x00, 0x00][..], // mov eax, [rip+0x2ed6]
            &[0x48, 0x8d, 0x3d, 0x00, 0x01, 0x00, 0x00], // lea rdi, [rip+0x100]
            &[0x80, 0x3d, 0x10, 0x20, 0x00, 0x00, 0x00], // cmp byte [rip+0x2010], 0
            &[0xff, 0x25, 0xe2, 0x2f, 0x00, 0x00],     // jmp [rip+0x2fe2] (a PLT entry)
        ] {
            let orig = decode(code, ADDR);
            let (moved, _) = relocate(code);
            assert!(orig.is_ip_rel_memory_operand());
            assert_eq!(moved.ip_rel_memory_address(), orig.ip_rel_memory_address());
            assert_eq!(moved.mnemonic(), orig.mnemonic());
        }
        // The address itself, computed by hand: next instruction + displacement.
        let (moved, _) = relocate(&[0x8b, 0x05, 0xd6, 0x2e, 0x00, 0x00]);
        assert_eq!(moved.ip_rel_memory_address(), ADDR + 6 + 0x2ed6);
    }

    #[test]
    fn branches_keep_their_targets() {
        for code in [
            &[0xeb, 0x10][..],                     // jmp rel8 +0x10
            &[0x74, 0xe0],                         // je rel8 -0x20
            &[0x0f, 0x85, 0x00, 0x10, 0x00, 0x00], // jne rel32 +0x1000
            &[0xe9, 0x00, 0x00, 0x01, 0x00],       // jmp rel32 +0x10000
        ] {
            let orig = decode(code, ADDR);
            let (moved, _) = relocate(code);
            assert_eq!(moved.near_branch_target(), orig.near_branch_target());
            assert_eq!(moved.mnemonic(), orig.mnemonic());
        }
    }

    #[test]
    fn direct_calls_are_emulated() {
        // call rel32 +0x100
        assert_eq!(
            plan(ADDR, &[0xe8, 0x00, 0x01, 0x00, 0x00], SLOT),
            Plan::EmulateCall {
                target: ADDR + 5 + 0x100,
                return_addr: ADDR + 5
            }
        );
        // call rel32 -0x1005: backwards
        assert_eq!(
            plan(ADDR, &[0xe8, 0xfb, 0xef, 0xff, 0xff], SLOT),
            Plan::EmulateCall {
                target: ADDR + 5 - 0x1005,
                return_addr: ADDR + 5
            }
        );
    }

    #[test]
    fn what_cannot_move_is_stepped_inline() {
        for code in [
            &[0xff, 0xd0][..],                     // call rax
            &[0xff, 0x15, 0x10, 0x20, 0x00, 0x00], // call [rip+0x2010]
            &[0xcc],                               // int3 (the program's own)
            &[0xcd, 0x80],                         // int 0x80
            &[0x0f, 0x0b],                         // ud2
            &[0xc7, 0xf8, 0x00, 0x00, 0x00, 0x00], // xbegin
            &[0x0f, 0xff],                         // undecodable
            &[0x8b, 0x05],                         // truncated
            &[],
        ] {
            assert_eq!(plan(ADDR, code, SLOT), Plan::Inline, "{code:02x?}");
        }
    }

    #[test]
    fn targets_out_of_reach_of_the_slot_are_stepped_inline() {
        let far = 0x7fff_0000_0000;
        // A RIP-relative operand cannot reach its memory from there.
        assert_eq!(
            plan(ADDR, &[0x8b, 0x05, 0xd6, 0x2e, 0x00, 0x00], far),
            Plan::Inline
        );
        // A branch target and the jump back are out of rel32 reach.
        assert_eq!(plan(ADDR, &[0x74, 0xe0], far), Plan::Inline);
        assert_eq!(plan(ADDR, &[0x90], far), Plan::Inline);
        // A call is emulated wherever the slot is: it does not use the slot.
        assert!(matches!(
            plan(ADDR, &[0xe8, 0, 1, 0, 0], far),
            Plan::EmulateCall { .. }
        ));
    }

    #[test]
    fn longest_instructions_fit_a_slot() {
        // mov qword [rip+0x12345678], 0x7fffffff: 11 bytes, RIP-relative with an immediate.
        let code = [
            0x48, 0xc7, 0x05, 0x78, 0x56, 0x34, 0x12, 0xff, 0xff, 0xff, 0x7f,
        ];
        let orig = decode(&code, ADDR);
        let (moved, out) = relocate(&code);
        assert_eq!(moved.ip_rel_memory_address(), orig.ip_rel_memory_address());
        assert_eq!(moved.immediate32(), 0x7fff_ffff);
        assert!(out.len() <= SLOT_SIZE);
    }
}
