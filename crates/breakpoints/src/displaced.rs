//! Displaced stepping plans: how a thread executes a breakpoint's original instruction
//! somewhere else, so that the int3 never leaves memory and no other thread can run through
//! the address unseen.
//!
//! The instruction is re-encoded for a scratch *slot* (iced-x86's block encoder fixes
//! RIP-relative operands and branch targets) and followed by a jump back to the next
//! instruction. A direct `call` is emulated instead: a relocated call would push the slot's
//! address as the return address. Anything else that cannot move (indirect calls, traps,
//! targets out of rel32 reach, undecodable bytes) is stepped inline.

use iced_x86::{
    BlockEncoder, BlockEncoderOptions, Code, Decoder, DecoderOptions, FlowControl, Instruction,
    InstructionBlock, OpKind,
};

/// The most bytes a slot holds.
pub const SLOT_SIZE: usize = 32;

/// How to get past the instruction at a breakpoint site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Write `code` at the slot and set rip to the slot; it ends by jumping back.
    Relocated {
        /// The relocated instruction followed by `jmp addr+len`.
        code: Vec<u8>,
        /// Length of the original instruction.
        len: usize,
    },
    /// Push `return_addr` and set rip to `target`.
    EmulateCall {
        /// The call's target.
        target: u64,
        /// The address after the call.
        return_addr: u64,
    },
    /// Lift the trap and single-step with the other threads stopped.
    Inline,
}

/// Plans the step over the instruction whose bytes (`code`, up to 15 or more bytes, the
/// program's own — not the int3) are at `addr`, with a scratch slot at `slot`.
pub fn plan(addr: u64, code: &[u8], slot: u64) -> Plan {
    let mut dec = Decoder::with_ip(64, code, addr, DecoderOptions::NONE);
    let insn = dec.decode();
    if insn.is_invalid() {
        return Plan::Inline;
    }
    let len = insn.len();
    match insn.flow_control() {
        FlowControl::Call
            if matches!(insn.op0_kind(), OpKind::NearBranch64 | OpKind::NearBranch32) =>
        {
            return Plan::EmulateCall {
                target: insn.near_branch_target(),
                return_addr: addr + len as u64,
            }
        }
        FlowControl::Next
        | FlowControl::UnconditionalBranch
        | FlowControl::ConditionalBranch
        | FlowControl::IndirectBranch
        | FlowControl::Return => {}
        // Calls that are not direct (their return address would be wrong), syscall (its
        // behaviour is fine, but keep the kernel's view of rip simple), int3, xbegin…
        _ => return Plan::Inline,
    }
    let Ok(back) = Instruction::with_branch(Code::Jmp_rel32_64, addr + len as u64) else {
        return Plan::Inline;
    };
    let insns = [insn, back];
    let block = InstructionBlock::new(&insns, slot);
    match BlockEncoder::encode(64, block, BlockEncoderOptions::NONE) {
        Ok(r) if r.code_buffer.len() <= SLOT_SIZE => Plan::Relocated {
            code: r.code_buffer,
            len,
        },
        _ => Plan::Inline,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(code: &[u8], ip: u64) -> Instruction {
        Decoder::with_ip(64, code, ip, DecoderOptions::NONE).decode()
    }

    const ADDR: u64 = 0x40_1000;
    const SLOT: u64 = 0x3f_0000;

    #[test]
    fn plain_instructions_move_and_jump_back() {
        // push rbp; mov rbp,rsp; endbr64; nop
        for code in [
            &[0x55][..],
            &[0x48, 0x89, 0xe5],
            &[0xf3, 0x0f, 0x1e, 0xfa],
            &[0x90],
        ] {
            let Plan::Relocated { code: out, len } = plan(ADDR, code, SLOT) else {
                panic!("{code:x?} must relocate");
            };
            assert_eq!(len, code.len());
            assert_eq!(
                &out[..len],
                code,
                "position-independent bytes are unchanged"
            );
            let back = decode(&out[len..], SLOT + len as u64);
            assert_eq!(back.near_branch_target(), ADDR + len as u64);
        }
    }

    #[test]
    fn rip_relative_operand_keeps_its_target() {
        // mov eax, [rip+0x2ed6]
        let code = [0x8b, 0x05, 0xd6, 0x2e, 0x00, 0x00];
        let orig = decode(&code, ADDR);
        let Plan::Relocated { code: out, .. } = plan(ADDR, &code, SLOT) else {
            panic!("must relocate");
        };
        let moved = decode(&out, SLOT);
        assert_eq!(moved.memory_displacement64(), orig.memory_displacement64());
        // lea rdi, [rip+0x100]
        let code = [0x48, 0x8d, 0x3d, 0x00, 0x01, 0x00, 0x00];
        let Plan::Relocated { code: out, .. } = plan(ADDR, &code, SLOT) else {
            panic!("must relocate");
        };
        assert_eq!(decode(&out, SLOT).memory_displacement64(), ADDR + 7 + 0x100);
    }

    #[test]
    fn branches_keep_their_targets() {
        // jmp rel8 +0x10; je rel8 -0x20
        for code in [&[0xeb, 0x10][..], &[0x74, 0xe0]] {
            let orig = decode(code, ADDR);
            let Plan::Relocated { code: out, .. } = plan(ADDR, code, SLOT) else {
                panic!("must relocate");
            };
            assert_eq!(
                decode(&out, SLOT).near_branch_target(),
                orig.near_branch_target()
            );
        }
    }

    #[test]
    fn direct_calls_are_emulated_and_odd_ones_stepped_inline() {
        // call rel32 +0x100
        let code = [0xe8, 0x00, 0x01, 0x00, 0x00];
        assert_eq!(
            plan(ADDR, &code, SLOT),
            Plan::EmulateCall {
                target: ADDR + 5 + 0x100,
                return_addr: ADDR + 5
            }
        );
        // call rax; int3; syscall; garbage
        assert_eq!(plan(ADDR, &[0xff, 0xd0], SLOT), Plan::Inline);
        assert_eq!(plan(ADDR, &[0xcc], SLOT), Plan::Inline);
        assert_eq!(plan(ADDR, &[0x0f, 0x05], SLOT), Plan::Inline);
        assert_eq!(plan(ADDR, &[0x0f, 0xff], SLOT), Plan::Inline);
    }

    #[test]
    fn far_slots_still_reach_the_same_memory() {
        // The encoder switches to another addressing form rather than fail.
        let code = [0x8b, 0x05, 0xd6, 0x2e, 0x00, 0x00];
        let far = 0x7fff_0000_0000;
        match plan(ADDR, &code, far) {
            Plan::Relocated { code: out, .. } => {
                assert_eq!(
                    decode(&out, far).memory_displacement64(),
                    decode(&code, ADDR).memory_displacement64()
                );
            }
            Plan::Inline => {}
            other => panic!("{other:?}"),
        }
    }
}
