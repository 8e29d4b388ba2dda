//! Decoding a module's code once: its instructions, where control can arrive other than by
//! falling through, the instructions that count a tick, and the unreachable padding between
//! blocks that a patch may use.
//!
//! Functions are decoded from their FDE starts (so that data between functions is not taken
//! for code); stretches of executable sections outside every FDE (the PLT, start-up code) are
//! decoded from their start and marked as such.

use iced_x86::{Code, Decoder, DecoderOptions, FlowControl, Instruction, OpKind};

use crate::code::ModuleCode;

/// Why an instruction counts a tick (see the crate's documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Counted {
    /// A direct jump or conditional jump to its own address or below, when taken.
    BackEdge,
    /// The first instruction of a function (every arrival: call, jump, return to it).
    Entry,
    /// An indirect jump.
    IndirectJump,
    /// A direct call to its own address or below, whose target is not a function start.
    BackCall,
}

/// One decoded instruction and what the counter makes of it.
#[derive(Debug, Clone)]
pub struct Insn {
    /// The instruction (its ip is the file address).
    pub insn: Instruction,
    /// Whether it counts a tick, and why.
    pub counted: Option<Counted>,
    /// Whether it lies in a function with an indirect jump (a jump table may lead anywhere in
    /// it), or outside every function.
    pub unknown_targets: bool,
    /// Whether it was decoded from a function's start (code outside every FDE — start-up code,
    /// hand-written assembly, signal trampolines — may be data or decoded out of step, and is
    /// neither patched nor used for padding).
    pub in_function: bool,
}

impl Insn {
    /// Its address.
    pub fn ip(&self) -> u64 {
        self.insn.ip()
    }
    /// One past its last byte.
    pub fn end(&self) -> u64 {
        self.insn.next_ip()
    }
}

/// The decoded code of a module.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    /// Every decoded instruction, sorted by address.
    pub insns: Vec<Insn>,
    /// Sorted addresses that control may arrive at other than by falling through: direct
    /// branch and call targets, return addresses, function starts.
    pub targets: Vec<u64>,
    /// `[start, end)` stretches of bytes that are never executed (padding after an
    /// unconditional transfer, up to the next target or instruction that is reached).
    pub padding: Vec<(u64, u64)>,
}

impl Scan {
    /// Decodes `code`.
    pub fn new(code: &ModuleCode) -> Scan {
        let mut scan = Scan::default();
        // Stretches to decode: every function, and what lies between them.
        let mut stretches: Vec<(u64, u64, bool)> = Vec::new();
        for s in &code.sections {
            let mut at = s.addr;
            let fns = code
                .functions
                .iter()
                .filter(|(a, b)| *a >= s.addr && *b <= s.end());
            for &(a, b) in fns {
                if a > at {
                    stretches.push((at, a, false));
                }
                stretches.push((a, b, true));
                at = b;
            }
            if at < s.end() {
                stretches.push((at, s.end(), false));
            }
        }
        let mut function_starts = Vec::new();
        for (start, end, is_function) in stretches {
            let Some(bytes) = code.bytes_from(start) else {
                continue;
            };
            let bytes = &bytes[..(end - start) as usize];
            let first = scan.insns.len();
            let mut dec = Decoder::with_ip(64, bytes, start, DecoderOptions::NONE);
            let mut indirect = !is_function;
            while dec.can_decode() {
                let insn = dec.decode();
                if insn.is_invalid() {
                    // Data, or the end of what decodes: the rest of the stretch is not code
                    // we can reason about.
                    indirect = true;
                    break;
                }
                if insn.flow_control() == FlowControl::IndirectBranch {
                    indirect = true;
                }
                scan.insns.push(Insn {
                    insn,
                    counted: None,
                    unknown_targets: false,
                    in_function: is_function,
                });
            }
            if is_function {
                function_starts.push(start);
            }
            for i in &mut scan.insns[first..] {
                i.unknown_targets = indirect;
            }
        }
        scan.insns.sort_by_key(|i| i.ip());
        function_starts.sort_unstable();

        // Where control arrives.
        let mut targets = function_starts.clone();
        for i in &scan.insns {
            let insn = &i.insn;
            match insn.flow_control() {
                FlowControl::UnconditionalBranch | FlowControl::ConditionalBranch
                    if is_direct(insn) =>
                {
                    targets.push(insn.near_branch_target());
                }
                FlowControl::Call => {
                    if is_direct(insn) {
                        targets.push(insn.near_branch_target());
                    }
                    targets.push(insn.next_ip());
                }
                FlowControl::IndirectCall => targets.push(insn.next_ip()),
                _ => {}
            }
        }
        targets.sort_unstable();
        targets.dedup();
        scan.targets = targets;

        // What counts a tick.
        for k in 0..scan.insns.len() {
            let insn = scan.insns[k].insn;
            let ip = insn.ip();
            let counted = match insn.flow_control() {
                FlowControl::UnconditionalBranch | FlowControl::ConditionalBranch
                    if is_direct(&insn) && insn.near_branch_target() <= ip =>
                {
                    Some(Counted::BackEdge)
                }
                FlowControl::IndirectBranch => Some(Counted::IndirectJump),
                FlowControl::Call
                    if is_direct(&insn)
                        && insn.near_branch_target() <= ip
                        && function_starts
                            .binary_search(&insn.near_branch_target())
                            .is_err() =>
                {
                    Some(Counted::BackCall)
                }
                _ => None,
            };
            let counted = if function_starts.binary_search(&ip).is_ok() {
                // An entry that is also a back edge (a function that is a one-instruction
                // loop) is counted as an entry; the loop then counts at every arrival too.
                Some(Counted::Entry)
            } else {
                counted
            };
            scan.insns[k].counted = counted;
        }

        // Padding: after an unconditional transfer, the bytes up to the next target that
        // only fill (nop, int3) are never executed.
        let mut k = 0;
        while k < scan.insns.len() {
            let i = &scan.insns[k];
            let ends_flow = i.in_function
                && (matches!(
                    i.insn.flow_control(),
                    FlowControl::UnconditionalBranch
                        | FlowControl::IndirectBranch
                        | FlowControl::Return
                ) || matches!(i.insn.code(), Code::Ud2 | Code::Int3 | Code::Hlt));
            if !ends_flow {
                k += 1;
                continue;
            }
            let start = i.end();
            let mut end = start;
            let mut j = k + 1;
            while j < scan.insns.len() {
                let n = &scan.insns[j];
                if n.ip() != end || !n.in_function || scan.is_target(n.ip()) || !is_fill(&n.insn) {
                    break;
                }
                end = n.end();
                j += 1;
            }
            if end > start {
                scan.padding.push((start, end));
            }
            k = j.max(k + 1);
        }
        scan
    }

    /// Whether control may arrive at `addr` other than by falling through (by what the code
    /// shows: jump tables are not read).
    pub fn is_target(&self, addr: u64) -> bool {
        self.targets.binary_search(&addr).is_ok()
    }

    /// Index of the instruction that starts at `addr`.
    pub fn index_of(&self, addr: u64) -> Option<usize> {
        self.insns.binary_search_by_key(&addr, |i| i.ip()).ok()
    }

    /// The padding stretch holding `addr`, if any.
    pub fn padding_at(&self, addr: u64) -> Option<(u64, u64)> {
        let i = self.padding.partition_point(|p| p.0 <= addr);
        self.padding
            .get(i.checked_sub(1)?)
            .copied()
            .filter(|p| addr < p.1)
    }
}

/// A near branch or call with an immediate target.
pub fn is_direct(insn: &Instruction) -> bool {
    matches!(
        insn.op0_kind(),
        OpKind::NearBranch16 | OpKind::NearBranch32 | OpKind::NearBranch64
    )
}

/// Alignment fill: a nop of any length or an int3.
fn is_fill(insn: &Instruction) -> bool {
    matches!(
        insn.code(),
        Code::Nopd
            | Code::Nopq
            | Code::Nopw
            | Code::Nop_rm16
            | Code::Nop_rm32
            | Code::Nop_rm64
            | Code::Int3
    ) || (insn.code() == Code::Xchg_r32_EAX && insn.op0_register() == iced_x86::Register::EAX)
}
