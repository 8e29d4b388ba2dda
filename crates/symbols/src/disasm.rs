//! Instructions in gdb's AT&T syntax: decoded one by one ([`decode`], [`decode_range`]) for
//! `disassemble`, and `x/i` lines with `<symbol+offset>` labels and the `=>` mark on the
//! current pc.

use iced_x86::{Decoder, DecoderOptions, Formatter, GasFormatter, Instruction};

use crate::expr::{EvalContext, ExprError};

/// The longest x86 instruction.
const MAX_INSN: usize = 15;

/// One decoded instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Insn {
    /// Its address.
    pub addr: u64,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// gdb's AT&T text (`mov    %rsp,%rbp`, `call   0x1139 <square>`).
    pub text: String,
}

/// The instruction at `a`.
pub fn decode(ctx: &dyn EvalContext, a: u64) -> Result<Insn, ExprError> {
    let mut fmt = GasFormatter::new();
    // gdb pads mnemonics to a column of 7.
    let o = fmt.options_mut();
    o.set_first_operand_char_index(7);
    // gdb writes every number in lowercase hex: `0x8(%rax)`, `-0x1c(%rbp)`.
    o.set_uppercase_hex(false);
    o.set_small_hex_numbers_in_decimal(false);
    o.set_branch_leading_zeros(false);
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
    let len = insn.len().clamp(1, n);
    Ok(Insn {
        addr: a,
        bytes: bytes[..len].to_vec(),
        text,
    })
}

/// The instructions of `[start, end)`.
pub fn decode_range(ctx: &dyn EvalContext, start: u64, end: u64) -> Result<Vec<Insn>, ExprError> {
    let mut out = Vec::new();
    let mut a = start;
    // A range is a function or what the user asked: bounded, but not by much.
    while a < end && out.len() < 1 << 16 {
        let i = decode(ctx, a)?;
        a += i.bytes.len() as u64;
        out.push(i);
    }
    Ok(out)
}

/// `count` instructions from `addr`, one line each, as `x/Ni` prints them.
pub fn disassemble(
    ctx: &dyn EvalContext,
    addr: u64,
    count: usize,
    current_pc: Option<u64>,
) -> Result<String, ExprError> {
    let mut out = String::new();
    let mut a = addr;
    for _ in 0..count {
        let insn = decode(ctx, a)?;
        let mark = if Some(a) == current_pc { "=> " } else { "   " };
        let label = match ctx.symbol_for(a) {
            Some(s) => format!("{a:#x} <{s}>:"),
            None => format!("{a:#x}:"),
        };
        out.push_str(&format!("{mark}{label}\t{}\n", insn.text));
        a += insn.bytes.len() as u64;
    }
    Ok(out)
}
