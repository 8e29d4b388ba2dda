//! `x/i`: instructions in gdb's AT&T syntax, with `<symbol+offset>` labels and the `=>` mark
//! on the current pc.

use iced_x86::{Decoder, DecoderOptions, Formatter, GasFormatter, Instruction};

use crate::expr::{EvalContext, ExprError};

/// The longest x86 instruction.
const MAX_INSN: usize = 15;

/// `count` instructions from `addr`, one line each, as `x/Ni` prints them.
pub fn disassemble(
    ctx: &dyn EvalContext,
    addr: u64,
    count: usize,
    current_pc: Option<u64>,
) -> Result<String, ExprError> {
    let mut fmt = GasFormatter::new();
    // gdb pads mnemonics to a column of 7.
    let o = fmt.options_mut();
    o.set_first_operand_char_index(7);
    // gdb writes every number in lowercase hex: `0x8(%rax)`, `-0x1c(%rbp)`.
    o.set_uppercase_hex(false);
    o.set_small_hex_numbers_in_decimal(false);
    o.set_branch_leading_zeros(false);
    let mut out = String::new();
    let mut a = addr;
    for _ in 0..count {
        let mut bytes = [0u8; MAX_INSN];
        // Near the end of a mapping fewer bytes may be readable.
        let mut n = MAX_INSN;
        while n > 0 && ctx.read_memory(a, &mut bytes[..n]).is_err() {
            n -= 1;
        }
        if n == 0 {
            return Err(ExprError::Access(crate::target::AccessError::Memory(a)));
        }
        let mut dec = Decoder::with_ip(64, &bytes[..n], a, DecoderOptions::NONE);
        let mut insn = Instruction::default();
        dec.decode_out(&mut insn);
        let mut text = String::new();
        if insn.is_invalid() {
            text.push_str("(bad)");
        } else {
            fmt.format(&insn, &mut text);
            if insn.is_call_near() || insn.is_jmp_short_or_near() || insn.is_jcc_short_or_near() {
                if let Some(sym) = ctx.symbol_for(insn.near_branch_target()) {
                    text.push_str(&format!(" <{sym}>"));
                }
            }
        }
        let mark = if Some(a) == current_pc { "=> " } else { "   " };
        let label = match ctx.symbol_for(a) {
            Some(s) => format!("{a:#x} <{s}>:"),
            None => format!("{a:#x}:"),
        };
        out.push_str(&format!("{mark}{label}\t{text}\n"));
        a += insn.len().max(1) as u64;
    }
    Ok(out)
}
