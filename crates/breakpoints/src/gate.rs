//! State gates: a breakpoint that checks the thread's state inside the program and traps
//! only when it equals a wanted one.
//!
//! Replay must stop a thread at an asynchronous position — one execution of a pc, named by
//! the registers and the top of the stack it had there (DESIGN.md, "Time"). A plain int3 at
//! the pc costs a ptrace stop (microseconds) at every execution, and a tight loop executes it
//! millions of times. A gate does the comparison in the program instead, for a few
//! nanoseconds per execution:
//!
//! - The instructions covering the first 5 bytes at the pc are replaced by `jmp rel32` to the
//!   gate's code (int3 fill after it), in a scratch page within ±2 GiB.
//! - The gate's code compares rsp, the 15 general registers and the wanted stack words with
//!   constants; on the first difference it goes on to the relocated instructions and jumps
//!   back. When all are equal it restores everything and executes an int3: the tracer sees a
//!   SIGTRAP with the pc at [`Gate::trap_end`] and the thread's registers as they were at the
//!   pc. Resuming it there runs the relocated instructions (the "not this one" path).
//! - Nothing is written to the program's stack (its red zone and the dead stack below stay as
//!   they were; an uninitialised local read later must see what it saw when recorded): rax
//!   and the flags are saved in the page, the arithmetic flags with `lahf`/`seto` and put back
//!   with `add al, 0x7f`/`sahf` (cmp changes only those).
//!
//! A patch over several instructions is only correct when nothing jumps or returns into its
//! interior: the caller says which addresses are branch targets ([`BranchFacts`] finds them
//! in code), and instructions that cannot move (calls, syscalls, traps, rdtsc) are refused.
//! The page must be writable (it holds the saved rax and flags) and executable; only one
//! thread may run through a gate at a time.

use iced_x86::code_asm::{
    qword_ptr, r10, r11, r12, r13, r14, r15, r8, r9, rax, rbp, rbx, rcx, rdi, rdx, rsi, rsp,
    AsmRegister64, CodeAssembler, CodeLabel,
};
use iced_x86::{BlockEncoderOptions, Code, Decoder, DecoderOptions, FlowControl, Instruction};

/// Bytes of the jump written at the gated pc.
pub const JUMP_LEN: usize = 5;

/// The bytes a gate's code can take at most (its page size; 128 stack words fit easily).
pub const GATE_PAGE: u64 = 0x4000;

/// The registers a gate compares, in `user_regs_struct` order (its first 15 words).
const GPRS: [AsmRegister64; 15] = [
    r15, r14, r13, r12, rbp, rbx, r11, r10, r9, r8, rax, rcx, rdx, rsi, rdi,
];
/// Index of rax among them.
const RAX: usize = 10;

/// The state a gate waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    /// r15 … rdi, in `user_regs_struct` order.
    pub gprs: [u64; 15],
    /// The stack pointer.
    pub rsp: u64,
    /// The words on the stack from rsp up.
    pub stack: Vec<u64>,
    /// Indices of `stack` words not to compare (they may differ at the position).
    pub ignore: Vec<usize>,
}

impl Wanted {
    /// The order in which a gate compares registers (indices into `gprs`) and stack words:
    /// those that differ in `now` (the thread's state when it sets off) first — they are the
    /// ones that change on the way, and a comparison that fails early costs least.
    fn order(&self, now: Option<&Wanted>) -> (Vec<usize>, Vec<usize>) {
        let differs = |i: usize, a: u64, b: Option<u64>| (b == Some(a), i);
        let mut regs: Vec<(bool, usize)> = (0..15)
            .map(|i| differs(i, self.gprs[i], now.map(|n| n.gprs[i])))
            .collect();
        regs.sort();
        let same_frame = now.is_some_and(|n| n.rsp == self.rsp);
        let mut words: Vec<(bool, usize)> = (0..self.stack.len())
            .map(|i| {
                let other = now
                    .filter(|_| same_frame)
                    .and_then(|n| n.stack.get(i).copied());
                differs(i, self.stack[i], other)
            })
            .collect();
        words.sort();
        (
            regs.into_iter().map(|r| r.1).collect(),
            words.into_iter().map(|w| w.1).collect(),
        )
    }
}

/// A gate planned for one pc and one page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gate {
    /// Where the patch starts.
    pub addr: u64,
    /// The pc whose executions the gate checks (`addr` or an instruction under the patch).
    pub at: u64,
    /// What to write at `addr` (the jump, then int3 up to the end of the last covered
    /// instruction).
    pub patch: Vec<u8>,
    /// The gate's code and data, for the page's start.
    pub code: Vec<u8>,
    /// The pc a thread has just after the gate's int3 (a SIGTRAP there is a match).
    pub trap_end: u64,
    /// Where each relocated instruction starts in the page, with the original address it
    /// stands for (and the jump back, standing for the address after the patch): a thread
    /// stopped in the page by anything else is at that original address.
    pub relocated: Vec<(u64, u64)>,
}

impl Gate {
    /// The program's own pc for a thread whose pc is `pc` (inside the gate's page, or not).
    pub fn original_pc(&self, pc: u64) -> u64 {
        self.relocated
            .iter()
            .find(|(at, _)| *at == pc)
            .map(|(_, orig)| *orig)
            .unwrap_or(pc)
    }

    /// Bytes the patch covers at `addr`.
    pub fn len(&self) -> usize {
        self.patch.len()
    }

    /// Always false: a patch covers at least the jump.
    pub fn is_empty(&self) -> bool {
        self.patch.is_empty()
    }
}

/// Why a pc cannot be gated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GateRefusal {
    /// The bytes at the pc do not decode.
    #[error("undecodable instruction at {0:#x}")]
    Undecodable(u64),
    /// An instruction under the patch cannot run elsewhere.
    #[error("instruction at {0:#x} cannot be moved")]
    Unmovable(u64),
    /// Something jumps or returns into the patch's interior.
    #[error("{0:#x} is a branch target inside the patch")]
    TargetInside(u64),
    /// The page is out of rel32 reach, or the code does not fit it.
    #[error("the gate cannot be encoded: {0}")]
    Encoding(String),
}

/// Plans a gate whose check runs where the thread arrives at `at`, with the jump written at
/// `start` (`start == at`, or an instruction before it from which execution falls through to
/// it: when something jumps right after `at`, the patch can still start earlier). `code` is
/// the program's own bytes from `start` (at least `at - start + JUMP_LEN + 15`), the gate's
/// page is at `page`, `now` the thread's state as it sets off if known (it orders the
/// comparisons), and `is_target(a)` tells whether anything may jump or return to `a`.
pub fn plan(
    start: u64,
    code: &[u8],
    at: u64,
    page: u64,
    wanted: &Wanted,
    now: Option<&Wanted>,
    is_target: impl Fn(u64) -> bool,
) -> Result<Gate, GateRefusal> {
    let moved = covered_instructions(start, code, at)?;
    let end = moved
        .last()
        .map(|i| i.next_ip())
        .ok_or(GateRefusal::Undecodable(start))?;
    if let Some(t) = (start + 1..end).find(|&a| is_target(a)) {
        return Err(GateRefusal::TargetInside(t));
    }
    let enc = |e: iced_x86::IcedError| GateRefusal::Encoding(e.to_string());

    let mut a = CodeAssembler::new(64).map_err(enc)?;
    let mut save_rax = a.create_label();
    let mut save_flags = a.create_label();
    let mut miss = a.create_label();
    let mut consts: Vec<(CodeLabel, u64)> = Vec::new();
    let mut constant = |a: &mut CodeAssembler, v: u64| {
        let l = a.create_label();
        consts.push((l, v));
        l
    };
    let mut starts = Vec::new();
    let relocate =
        |a: &mut CodeAssembler, starts: &mut Vec<(CodeLabel, u64)>, insn: &Instruction| {
            let mut l = a.create_label();
            a.set_label(&mut l)?;
            starts.push((l, insn.ip()));
            if insn.flow_control() == FlowControl::Call {
                // A direct call, emulated: the return address pushed is the original one
                // (the program sees it), with no register or flag changed on the way.
                a.push(rax)?;
                a.mov(rax, insn.next_ip())?;
                a.xchg(qword_ptr(rsp), rax)?;
                return a.jmp(insn.near_branch_target());
            }
            a.add_instruction(*insn)
        };

    // The program's instructions before `at`, moved.
    for insn in moved.iter().filter(|i| i.ip() < at) {
        relocate(&mut a, &mut starts, insn).map_err(enc)?;
    }
    // The check. Save rax and the arithmetic flags (lahf: SF ZF AF PF CF into ah; seto: OF
    // into al).
    a.mov(qword_ptr(save_rax), rax).map_err(enc)?;
    a.lahf().map_err(enc)?;
    a.seto(iced_x86::code_asm::al).map_err(enc)?;
    a.mov(qword_ptr(save_flags), rax).map_err(enc)?;
    // The stack pointer first (other frames, other recursion depths), then the registers.
    let c = constant(&mut a, wanted.rsp);
    a.cmp(rsp, qword_ptr(c)).map_err(enc)?;
    a.jne(miss).map_err(enc)?;
    let (reg_order, word_order) = wanted.order(now);
    for i in reg_order {
        let c = constant(&mut a, wanted.gprs[i]);
        if i == RAX {
            // rax holds the saved flags: compare its saved value.
            a.mov(rax, qword_ptr(save_rax)).map_err(enc)?;
        }
        a.cmp(GPRS[i], qword_ptr(c)).map_err(enc)?;
        a.jne(miss).map_err(enc)?;
    }
    for i in word_order
        .into_iter()
        .filter(|i| !wanted.ignore.contains(i))
    {
        let c = constant(&mut a, wanted.stack[i]);
        a.mov(rax, qword_ptr(rsp + (8 * i) as i32)).map_err(enc)?;
        a.cmp(rax, qword_ptr(c)).map_err(enc)?;
        a.jne(miss).map_err(enc)?;
    }
    // A match: everything as it was, then the trap.
    restore(&mut a, save_rax, save_flags).map_err(enc)?;
    a.int3().map_err(enc)?;
    // The instructions from `at` on, moved, then back to the code after the patch.
    let first_at = starts.len();
    for insn in moved.iter().filter(|i| i.ip() >= at) {
        relocate(&mut a, &mut starts, insn).map_err(enc)?;
    }
    let resume = starts[first_at].0;
    let mut back = a.create_label();
    a.set_label(&mut back).map_err(enc)?;
    starts.push((back, end));
    a.jmp(end).map_err(enc)?;
    a.set_label(&mut miss).map_err(enc)?;
    restore(&mut a, save_rax, save_flags).map_err(enc)?;
    a.jmp(resume).map_err(enc)?;
    // Data: the constants, then the two save slots a page away from any code (a store
    // near instructions being executed is taken for self-modifying code: the CPU flushes
    // its pipeline at every one).
    for (mut l, v) in consts {
        a.set_label(&mut l).map_err(enc)?;
        a.dq(&[v]).map_err(enc)?;
    }
    a.db(&[0xcc; 4096]).map_err(enc)?;
    a.set_label(&mut save_rax).map_err(enc)?;
    a.dq(&[0]).map_err(enc)?;
    a.set_label(&mut save_flags).map_err(enc)?;
    a.dq(&[0]).map_err(enc)?;

    let result = a
        .assemble_options(page, BlockEncoderOptions::RETURN_NEW_INSTRUCTION_OFFSETS)
        .map_err(enc)?;
    let bytes = result.inner.code_buffer.clone();
    if bytes.len() as u64 > GATE_PAGE {
        return Err(GateRefusal::Encoding(format!(
            "{} bytes do not fit the page",
            bytes.len()
        )));
    }
    let relocated = starts
        .iter()
        .map(|(l, orig)| Ok((result.label_ip(l).map_err(enc)?, *orig)))
        .collect::<Result<Vec<_>, GateRefusal>>()?;
    // The int3 sits just before the instruction at `at`, moved: a match stops with the pc
    // there.
    let trap_end = relocated[first_at].0;
    let jump_from = start + JUMP_LEN as u64;
    let disp = i32::try_from(page as i64 - jump_from as i64)
        .map_err(|_| GateRefusal::Encoding("the page is out of jump reach".into()))?;
    let mut patch = vec![0xe9];
    patch.extend_from_slice(&disp.to_le_bytes());
    patch.resize((end - start) as usize, 0xcc);
    Ok(Gate {
        addr: start,
        at,
        patch,
        code: bytes,
        trap_end,
        relocated,
    })
}

/// Puts rax and the flags back as they were saved.
fn restore(
    a: &mut CodeAssembler,
    save_rax: CodeLabel,
    save_flags: CodeLabel,
) -> Result<(), iced_x86::IcedError> {
    a.mov(rax, qword_ptr(save_flags))?;
    // al is 1 when OF was set: 1 + 0x7f overflows, 0 + 0x7f does not.
    a.add(iced_x86::code_asm::al, 0x7f)?;
    a.sahf()?;
    a.mov(rax, qword_ptr(save_rax))
}

/// The instructions that the jump at `start` covers, up to `at` at least, each one checked
/// movable; `at` must be one of their starts.
fn covered_instructions(start: u64, code: &[u8], at: u64) -> Result<Vec<Instruction>, GateRefusal> {
    let mut dec = Decoder::with_ip(64, code, start, DecoderOptions::NONE);
    let mut out = Vec::new();
    let mut end = start;
    while end < start + JUMP_LEN as u64 || end <= at {
        if !dec.can_decode() {
            return Err(GateRefusal::Undecodable(end));
        }
        let insn = dec.decode();
        if insn.is_invalid() {
            return Err(GateRefusal::Undecodable(end));
        }
        if !movable(&insn) {
            return Err(GateRefusal::Unmovable(insn.ip()));
        }
        end = insn.next_ip();
        out.push(insn);
    }
    if !out.iter().any(|i| i.ip() == at) {
        return Err(GateRefusal::Undecodable(at));
    }
    Ok(out)
}

/// Whether an instruction behaves the same at another address (branches keep their absolute
/// targets and RIP-relative operands are re-encoded by the assembler; a direct call is
/// emulated so that it pushes its original return address). Indirect calls would push the
/// page's address; syscalls, traps and the time-stamp counter are events of their own.
fn movable(insn: &Instruction) -> bool {
    let plain_flow = matches!(
        insn.flow_control(),
        FlowControl::Next
            | FlowControl::UnconditionalBranch
            | FlowControl::ConditionalBranch
            | FlowControl::IndirectBranch
            | FlowControl::Return
    ) || (insn.flow_control() == FlowControl::Call && insn.is_call_near());
    plain_flow
        && !matches!(
            insn.code(),
            Code::Syscall | Code::Rdtsc | Code::Rdtscp | Code::Cpuid | Code::Rdrand_r64
        )
}

/// What a stretch of code says about where control can arrive: every direct branch and call
/// target and the address after every call (where a `ret` arrives), and the stretches that
/// contain indirect jumps (jump tables can lead anywhere in them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BranchFacts {
    /// Sorted, deduplicated addresses that control may arrive at other than by falling through.
    pub targets: Vec<u64>,
    /// `[start, end)` stretches that contain an indirect jump.
    pub indirect: Vec<(u64, u64)>,
}

impl BranchFacts {
    /// Adds what the function `[start, start + code.len())` says (decoded from its start).
    pub fn add_function(&mut self, start: u64, code: &[u8]) {
        let mut dec = Decoder::with_ip(64, code, start, DecoderOptions::NONE);
        let mut indirect = false;
        while dec.can_decode() {
            let insn = dec.decode();
            match insn.flow_control() {
                FlowControl::UnconditionalBranch | FlowControl::ConditionalBranch => {
                    self.targets.push(insn.near_branch_target());
                }
                FlowControl::Call => {
                    self.targets.push(insn.near_branch_target());
                    self.targets.push(insn.next_ip());
                }
                FlowControl::IndirectCall => {
                    self.targets.push(insn.next_ip());
                }
                FlowControl::IndirectBranch => indirect = true,
                _ => {}
            }
        }
        if indirect {
            self.indirect.push((start, start + code.len() as u64));
        }
    }

    /// Sorts the facts gathered (call once after the last [`BranchFacts::add_function`]).
    pub fn finish(&mut self) {
        self.targets.sort_unstable();
        self.targets.dedup();
        self.indirect.sort_unstable();
    }

    /// Whether control may arrive at `addr` other than by falling through (a target, or
    /// anywhere in a stretch with indirect jumps).
    pub fn is_target(&self, addr: u64) -> bool {
        self.targets.binary_search(&addr).is_ok()
            || self.indirect.iter().any(|(s, e)| addr >= *s && addr < *e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wanted() -> Wanted {
        Wanted {
            gprs: [7; 15],
            rsp: 0x7ffe_0000,
            stack: vec![1, 2, 3],
            ignore: Vec::new(),
        }
    }

    /// mov rax,[rbp-8] (4 bytes); add rax,1 (4 bytes); jmp back; padding.
    const LOOP: [u8; 22] = [
        0x48, 0x8b, 0x45, 0xf8, 0x48, 0x83, 0xc0, 0x01, 0xeb, 0xf6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0,
    ];

    #[test]
    fn a_gate_jumps_to_its_page_and_covers_whole_instructions() {
        let code = LOOP;
        let addr = 0x40_1000;
        let page = 0x30_0000;
        let g = plan(addr, &code, addr, page, &wanted(), None, |_| false).unwrap();
        assert_eq!(g.patch.len(), 8);
        assert_eq!(g.patch[0], 0xe9);
        let disp = i32::from_le_bytes(g.patch[1..5].try_into().unwrap());
        assert_eq!(addr as i64 + 5 + disp as i64, page as i64);
        assert_eq!(&g.patch[5..], &[0xcc; 3]);
        // The int3 sits just before the relocated code; stops there map back.
        assert_eq!(g.code[(g.trap_end - 1 - page) as usize], 0xcc);
        assert_eq!(g.original_pc(g.trap_end), addr);
        assert_eq!(g.relocated.len(), 3);
        assert_eq!(g.relocated[1].1, addr + 4);
        assert_eq!(g.original_pc(g.relocated[2].0), addr + 8);
    }

    #[test]
    fn targets_inside_the_patch_and_unmovable_code_are_refused() {
        let code = LOOP;
        let addr = 0x40_1000;
        assert_eq!(
            plan(addr, &code, addr, 0x30_0000, &wanted(), None, |a| a
                == addr + 4),
            Err(GateRefusal::TargetInside(addr + 4))
        );
        // syscall; nop…
        let sys = [
            0x0f, 0x05, 0x90, 0x90, 0x90, 0x90, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ];
        assert_eq!(
            plan(addr, &sys, addr, 0x30_0000, &wanted(), None, |_| false),
            Err(GateRefusal::Unmovable(addr))
        );
        // Out of reach.
        assert!(matches!(
            plan(addr, &code, addr, 0x7fff_0000_0000, &wanted(), None, |_| {
                false
            }),
            Err(GateRefusal::Encoding(_))
        ));
    }

    #[test]
    fn a_gate_can_start_before_the_pc_it_checks() {
        // xor [rbp-8],rax (4); addl [rbp-16],1 (4); cmpl [rbp-16],0x16e35f (7): the cmpl is a
        // branch target, so a gate for the addl starts at the xor.
        let code = [
            0x48, 0x31, 0x45, 0xf8, 0x83, 0x45, 0xf0, 0x01, 0x81, 0x7d, 0xf0, 0x5f, 0xe3, 0x16,
            0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ];
        let addr = 0x40_1000;
        let target = |a: u64| a == addr + 8;
        assert_eq!(
            plan(
                addr + 4,
                &code[4..],
                addr + 4,
                0x30_0000,
                &wanted(),
                None,
                target
            ),
            Err(GateRefusal::TargetInside(addr + 8))
        );
        let g = plan(addr, &code, addr + 4, 0x30_0000, &wanted(), None, target).unwrap();
        assert_eq!((g.addr, g.at, g.len()), (addr, addr + 4, 8));
        // The moved xor comes first, at the page's start; the trap is before the moved addl.
        assert_eq!(g.relocated[0], (0x30_0000, addr));
        assert_eq!(g.original_pc(g.trap_end), addr + 4);
        assert_eq!(g.code[(g.trap_end - 1 - 0x30_0000) as usize], 0xcc);
    }

    #[test]
    fn a_direct_call_under_the_patch_is_emulated() {
        // call +0x100 (5 bytes): the gate pushes the original return address itself.
        let code = [
            0xe8, 0x00, 0x01, 0, 0, 0x90, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ];
        let addr = 0x40_1000;
        let g = plan(addr, &code, addr, 0x30_0000, &wanted(), None, |_| false).unwrap();
        assert_eq!(g.len(), 5);
        let moved = (g.relocated[0].0 - 0x30_0000) as usize;
        // The check runs first (the trap just before), then push rax; mov rax, imm64.
        assert_eq!(g.code[moved], 0x50);
        assert_eq!(&g.code[moved + 1..moved + 3], &[0x48, 0xb8]);
        let ret = u64::from_le_bytes(g.code[moved + 3..moved + 11].try_into().unwrap());
        assert_eq!(ret, addr + 5);
    }

    #[test]
    fn branch_facts_know_targets_return_addresses_and_jump_tables() {
        // 0: call +0 (to 5); 5: jne 0 ; 7: jmp rax
        let code = [0xe8, 0, 0, 0, 0, 0x75, 0xf9, 0xff, 0xe0];
        let mut f = BranchFacts::default();
        f.add_function(0x1000, &code);
        f.finish();
        assert!(f.is_target(0x1005)); // after the call
        assert!(f.is_target(0x1000)); // the jne's target
        assert!(f.indirect.contains(&(0x1000, 0x1009)));
        let mut g = BranchFacts::default();
        g.add_function(0x1000, &code[..7]);
        g.finish();
        assert!(!g.is_target(0x1002));
    }
}
