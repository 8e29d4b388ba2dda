//! Turning a [`Plan`] into bytes at run-time addresses: the trampolines (one block per site or
//! region, placed one after the other from `base`), the writes into the module's code, and
//! the tables that translate between patched and original code ([`Patched`]).
//!
//! The counting code (`gs:[0]` is the process's counter, see the crate's documentation):
//!
//! ```text
//!   flags dead:                      flags live:
//!     sub qword gs:[0], 256            mov gs:[8], rax ; lahf ; seto al
//!     je  stub                         sub qword gs:[0], 256
//!   cont:                              je  stub
//!                                      add al, 0x7f ; sahf ; mov rax, gs:[8]
//!                                    cont:
//!   stub: (restore) int3 ; jmp cont
//! ```
//!
//! The trap is taken with every register and flag as the program had them (the live variant
//! restores before the `int3`), so a stop there is a position of the program.
//!
//! Every program instruction that runs in a trampoline has one *boundary*: the first byte
//! emitted for it (its counting code, when it counts before it runs). A thread whose pc is a
//! boundary stands at that instruction of the program; anywhere else in a trampoline it is in
//! the middle of the machinery and is stepped on to the next boundary before anyone looks.

use iced_x86::{
    BlockEncoder, BlockEncoderOptions, Code, FlowControl, Instruction, InstructionBlock,
    MemoryOperand, Register,
};

use crate::code::ModuleCode;
use crate::plan::{How, Plan, Site, Uncounted, JUMP_LEN};

/// Bytes below the stack pointer that the ABI lets leaf code use (an agent stub moves the
/// stack pointer past them before it calls the agent).
const RED_ZONE: u64 = 128;
use crate::scan::{Counted, Scan};

/// The counter's step per tick: the low byte of the counter never changes, so the flags the
/// `sub` leaves (PF, AF from the low byte, ZF, SF, CF, OF) are the same whatever the counter's
/// value as long as it is positive and not yet zero: recording and replay, which set it to
/// different values, leave the program the same flags.
pub const TICK: u64 = 256;

/// Offset, in the counter page, of the counter.
pub const COUNTER_OFFSET: u64 = 0;
/// Offset of the slot that saves rax while the flags are saved.
pub const RAX_SLOT: u64 = 8;

/// Synthetic instruction addresses for generated code (labels): far above user space.
const LABELS: u64 = 0x4000_0000_0000_0000;

/// The bytes of one [`Write`]: a jump and what it covers, a few bytes each, kept inline: a
/// large module has a hundred thousand writes, read back from the on-disk cache at every
/// exec, and one allocation per write was most of that.
pub type WriteBytes = smallvec::SmallVec<[u8; 16]>;

/// A write into the module's code (or padding).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Write {
    /// Where (run-time address).
    pub addr: u64,
    /// The new bytes.
    pub bytes: WriteBytes,
    /// The bytes they replace.
    pub original: WriteBytes,
}

/// Where a tick trap leaves a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trap {
    /// The pc a thread has just after the trap's `int3`.
    pub at: u64,
    /// Where it goes on from (a program address, or a boundary in a trampoline).
    pub resume: u64,
    /// The program address it stands at.
    pub logical: u64,
    /// The counting code left the flags of its `sub` (they are dead there): the count that
    /// trapped set ZF, which every other count, and a run without the trap, leaves clear.
    /// Whoever continues the thread clears it, so that its registers are the same as
    /// without the trap (see [`TICK`]).
    pub set_zf: bool,
}

/// The zero flag in `eflags`.
pub const ZF: u64 = 0x40;

/// A module's code, patched: what to map and write, and how to translate addresses.
#[derive(Debug, Clone, Default)]
pub struct Patched {
    /// The trampolines' first byte.
    pub base: u64,
    /// The trampolines.
    pub code: Vec<u8>,
    /// Writes into the module's code and padding, sorted by address.
    pub writes: Vec<Write>,
    /// Boundaries in the trampolines: (address, program address), sorted.
    pub boundaries: Vec<(u64, u64)>,
    /// Tick traps, sorted by [`Trap::at`].
    pub traps: Vec<Trap>,
    /// Program addresses whose instruction runs in a trampoline, with its boundary there:
    /// (program address, boundary), sorted. A breakpoint for the address goes there.
    pub moved: Vec<(u64, u64)>,
    /// `[start, end)` ranges of the module's code whose instructions no longer run in place
    /// (their bytes are a jump into a trampoline, or padding used by one), sorted: no thread
    /// stands at an address in them.
    pub displaced: Vec<(u64, u64)>,
    /// Counted instructions left without a patch (run-time addresses).
    pub uncounted: Vec<Uncounted>,
    /// The stubs that send `syscall` instructions to the in-process agent, sorted by
    /// [`AgentStub::entry`] (none when the module was patched without the agent).
    pub agent_stubs: Vec<AgentStub>,
}

/// The stub of a `syscall` instruction sent to the in-process agent:
///
/// ```text
///   entry:     lea rsp, [rsp - 128]     the syscall's boundary (the red zone is kept)
///              mov r11, AGENT_ENTRY
///              call r11                 the agent answers the call, or asks for it to be
///   ret:       lea rsp, [rsp + 128]       executed here (rcx = 0: answered)
///              jrcxz end
///   fallback:  syscall                  traced, with the program's registers
///   end:       (the program's next instruction)
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentStub {
    /// Its first instruction, where a thread stands at the program's `syscall`.
    pub entry: u64,
    /// The return address of its call into the agent.
    pub ret: u64,
    /// Its `syscall` instruction (the call executed in place).
    pub fallback: u64,
    /// Just past that `syscall`.
    pub end: u64,
    /// The program address of the `syscall` instruction it stands for.
    pub logical: u64,
}

impl AgentStub {
    /// For a thread that faulted in this stub before its call reached the agent (the call
    /// pushes the return address on the program's stack, which may be invalid: a program
    /// may make a syscall with any stack pointer, even 0), the registers that make the
    /// syscall in place, traced: the program's, the stub's `syscall` next. None when `regs`
    /// is not in the stub before its return address.
    pub fn in_place(&self, regs: &hindsight_ptrace::Regs) -> Option<hindsight_ptrace::Regs> {
        let pc = regs.pc();
        if !(self.entry..self.ret).contains(&pc) {
            return None;
        }
        let mut r = *regs;
        // Past the first instruction the stack pointer is 128 bytes lower (the red zone);
        // r11 holds the agent's address, which the syscall clobbers anyway.
        if pc != self.entry {
            r.0.rsp = regs.0.rsp.wrapping_add(128);
        }
        r.0.rip = self.fallback;
        r.0.orig_rax = u64::MAX;
        Some(r)
    }
}

/// Why a site's trampoline could not be made.
fn encode_error(e: iced_x86::IcedError) -> &'static str {
    let _ = e;
    "its trampoline cannot be encoded (out of reach)"
}

/// The most bytes one site's trampoline can take (planning reserves this much per site).
pub const MAX_TRAMPOLINE: u64 = 256;

/// Assembles `plan` for the module mapped with load bias `bias`, its trampolines from `base`;
/// with `agent` (the in-process agent's entry), its syscall sites too.
pub fn assemble(
    code: &ModuleCode,
    scan: &Scan,
    plan: &Plan,
    bias: u64,
    base: u64,
    agent: Option<u64>,
) -> Patched {
    let mut out = Patched {
        base,
        ..Default::default()
    };
    out.uncounted = plan
        .uncounted
        .iter()
        .map(|u| Uncounted {
            at: u.at + bias,
            ..*u
        })
        .collect();
    // Sites grouped by patch: one trampoline per patch.
    let mut k = 0;
    while k < plan.sites.len() {
        let how = plan.sites[k].how;
        let mut j = k + 1;
        if let How::Region { .. } = how {
            while j < plan.sites.len() && plan.sites[j].how == how {
                j += 1;
            }
        }
        let group = &plan.sites[k..j];
        k = j;
        let made = match how {
            How::Region { start, end } => region_block(scan, group, start, end, bias, None),
            _ => single_block(scan, &group[0], bias),
        };
        let block = match made {
            Ok(b) => b,
            Err(why) => {
                uncount(&mut out, group, bias, why);
                continue;
            }
        };
        let back_edge_island =
            group[0].kind == Counted::BackEdge && matches!(how, How::Island { .. });
        if let Err(why) = place(
            &mut out,
            code,
            scan,
            &block,
            (group[0].at, how),
            back_edge_island,
            group.len(),
            bias,
        ) {
            uncount(&mut out, group, bias, why);
        }
    }
    if let Some(entry) = agent {
        for site in &plan.syscalls {
            let made = match site.how {
                How::Region { start, end } => {
                    region_block(scan, &[], start, end, bias, Some(entry))
                }
                _ => syscall_island_block(scan, site.at, bias, entry),
            };
            // A site that cannot be made stays a traced syscall.
            if let Ok(block) = made {
                let _ = place(
                    &mut out,
                    code,
                    scan,
                    &block,
                    (site.at, site.how),
                    false,
                    1,
                    bias,
                );
            }
        }
    }
    out.writes.sort_by_key(|w| w.addr);
    out.boundaries.sort_unstable();
    out.boundaries.dedup_by_key(|b| b.0);
    out.traps.sort_by_key(|t| t.at);
    out.moved.sort_unstable();
    out.moved.dedup_by_key(|m| m.0);
    out.displaced.sort_unstable();
    out.agent_stubs.sort_by_key(|s| s.entry);
    out
}

/// Encodes `block` at the end of the trampolines and adds it, its tables and the writes
/// that send the patch `(at, how)` there to `out`. `back_edge_island`: a short back edge
/// reaching its island keeps its place. `sites`: how many sites the block serves (its
/// size limit).
#[allow(clippy::too_many_arguments)]
fn place(
    out: &mut Patched,
    code: &ModuleCode,
    scan: &Scan,
    block: &Block,
    (at, how): (u64, How),
    back_edge_island: bool,
    sites: usize,
    bias: u64,
) -> Result<(), &'static str> {
    let rip = out.base + out.code.len() as u64;
    let encoded = BlockEncoder::encode(
        64,
        InstructionBlock::new(&block.insns, rip),
        BlockEncoderOptions::RETURN_NEW_INSTRUCTION_OFFSETS,
    )
    .map_err(encode_error)?;
    if encoded.code_buffer.len() as u64 > MAX_TRAMPOLINE * sites as u64 {
        return Err("its trampoline is too long");
    }
    let addr_of = |i: usize| rip + u64::from(encoded.new_instruction_offsets[i]);
    let writes = patch_writes(code, scan, at, how, back_edge_island, bias, rip)
        .ok_or("its bytes are not the file's")?;
    let mut stubs = Vec::new();
    let mut glue_boundaries = Vec::new();
    for (i, m) in block.marks.iter().enumerate() {
        if let Mark::AgentReturn(logical) = *m {
            // The fallback `syscall` is two instructions on (see [`AgentStub`]).
            let fallback = addr_of(i + 2);
            let entry = block
                .marks
                .iter()
                .position(|m| *m == Mark::Boundary(logical))
                .map(addr_of)
                .ok_or("an agent stub without its boundary")?;
            if block.insns.get(i + 2).map(|x| x.code()) != Some(Code::Syscall) {
                return Err("an agent stub of another shape");
            }
            stubs.push(AgentStub {
                entry,
                ret: addr_of(i),
                fallback,
                end: fallback + 2,
                logical,
            });
            // Just past the fallback `syscall` a thread stands at the program's next
            // instruction, whatever comes there (its moved copy, or the jump back): a stop
            // there (the syscall's own stop) is a program position, never stepped on.
            // (A moved instruction there is a boundary already; the jump back is not.)
            if block.insns.get(i + 3).is_none_or(|x| x.ip() >= LABELS) {
                glue_boundaries.push((fallback + 2, logical + 2));
            }
        }
    }
    for (i, m) in block.marks.iter().enumerate() {
        match *m {
            Mark::None | Mark::Glue(_) | Mark::AgentReturn(_) => {}
            Mark::Boundary(logical) => {
                out.boundaries.push((addr_of(i), logical));
                out.moved.push((logical, addr_of(i)));
            }
            Mark::AfterTrap {
                cont,
                logical,
                set_zf,
            } => {
                // The jump back to the continuation: a glue jump to the program goes
                // straight there.
                let resume = match block.index_of(cont) {
                    Some(c) => match block.marks[c] {
                        Mark::Glue(l) => l,
                        _ => addr_of(c),
                    },
                    None => cont,
                };
                out.traps.push(Trap {
                    at: addr_of(i),
                    resume,
                    logical,
                    set_zf,
                });
            }
        }
    }
    for w in &writes {
        // A short back edge keeps its place (only its displacement changes).
        let keeps_place = back_edge_island && w.addr == at + bias;
        if !keeps_place {
            out.displaced.push((w.addr, w.addr + w.bytes.len() as u64));
        }
    }
    out.boundaries.extend(glue_boundaries);
    out.writes.extend(writes);
    out.code.extend_from_slice(&encoded.code_buffer);
    out.agent_stubs.extend(stubs);
    Ok(())
}

fn uncount(out: &mut Patched, group: &[Site], bias: u64, why: &'static str) {
    out.uncounted.extend(group.iter().map(|s| Uncounted {
        at: s.at + bias,
        kind: s.kind,
        why,
    }));
}

/// What an emitted instruction stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mark {
    None,
    /// Where the program instruction at this address stands in the trampoline (its count,
    /// if it counts before it runs, is behind).
    Boundary(u64),
    /// A jump on to this program address (no count pending).
    Glue(u64),
    /// The instruction after a trap's `int3`: the jump back to `cont` (an instruction ip in
    /// the block), where the thread stands at program address `logical`; `set_zf`: see
    /// [`Trap::set_zf`].
    AfterTrap {
        cont: u64,
        logical: u64,
        set_zf: bool,
    },
    /// The return address of an agent stub's call, for the `syscall` at `logical`.
    AgentReturn(u64),
}

/// A counting code whose stub is still to be emitted.
struct Stub {
    label: u64,
    /// The instruction after the counting code (set when it is emitted).
    cont: Option<u64>,
    /// The program address a thread stands at there.
    logical: u64,
    flags_live: bool,
}

/// The instructions of one trampoline, before encoding.
#[derive(Default)]
struct Block {
    insns: Vec<Instruction>,
    marks: Vec<Mark>,
    next_label: u64,
    /// A label to give the next emitted instruction.
    pending: Option<u64>,
    stubs: Vec<Stub>,
    /// Taken paths of moved conditional back edges: (label, target, flags live).
    taken: Vec<(u64, u64, bool)>,
    /// The in-process agent's entry: `syscall` instructions become calls of it.
    agent: Option<u64>,
    /// A loop moved whole (see [`region_block`]): its first instruction's address and the
    /// label of the count just before it, where its back edge jumps.
    loop_head: Option<(u64, u64)>,
}

type Emit = Result<(), &'static str>;

fn enc(r: Result<Instruction, iced_x86::IcedError>) -> Result<Instruction, &'static str> {
    r.map_err(|_| "an instruction of its trampoline cannot be built")
}

/// `gs:[displ]`: the counter page.
fn gs(displ: u64) -> MemoryOperand {
    MemoryOperand::new(
        Register::None,
        Register::None,
        1,
        displ as i64,
        4,
        false,
        Register::GS,
    )
}

impl Block {
    fn label(&mut self) -> u64 {
        self.next_label += 1;
        LABELS + self.next_label
    }

    fn index_of(&self, ip: u64) -> Option<usize> {
        self.insns.iter().position(|i| i.ip() == ip)
    }

    fn push(&mut self, insn: Instruction, mark: Mark) {
        let ip = insn.ip();
        self.insns.push(insn);
        self.marks.push(mark);
        // Counting codes just before this instruction continue here.
        for s in self.stubs.iter_mut().filter(|s| s.cont.is_none()) {
            s.cont = Some(ip);
        }
    }

    /// Emits a generated instruction (a label of its own, or the pending one).
    fn emit(&mut self, mut insn: Instruction, mark: Mark) {
        let ip = match self.pending.take() {
            Some(l) => l,
            None => self.label(),
        };
        insn.set_ip(ip);
        self.push(insn, mark);
    }

    /// Emits a program instruction, moved (it keeps its address, which RIP-relative
    /// operands are computed from).
    fn relocate(&mut self, insn: Instruction, mark: Mark) -> Emit {
        if self.pending.is_some() {
            return Err("a label before a moved instruction");
        }
        self.push(insn, mark);
        Ok(())
    }

    /// Counting code; its continuation is the next instruction emitted, where the thread
    /// stands at program address `logical`.
    fn count(&mut self, flags_live: bool, logical: u64) -> Emit {
        let label = self.label();
        let sub = enc(Instruction::with2(
            Code::Sub_rm64_imm32,
            gs(COUNTER_OFFSET),
            TICK as u32,
        ))?;
        let je = enc(Instruction::with_branch(Code::Je_rel32_64, label))?;
        if flags_live {
            self.emit(
                enc(Instruction::with2(
                    Code::Mov_rm64_r64,
                    gs(RAX_SLOT),
                    Register::RAX,
                ))?,
                Mark::None,
            );
            self.emit(Instruction::with(Code::Lahf), Mark::None);
            self.emit(
                enc(Instruction::with1(Code::Seto_rm8, Register::AL))?,
                Mark::None,
            );
            self.emit(sub, Mark::None);
            self.emit(je, Mark::None);
            self.restore_flags()?;
        } else {
            self.emit(sub, Mark::None);
            self.emit(je, Mark::None);
        }
        self.stubs.push(Stub {
            label,
            cont: None,
            logical,
            flags_live,
        });
        Ok(())
    }

    fn restore_flags(&mut self) -> Emit {
        // al is 1 when OF was set: 1 + 0x7f overflows, 0 + 0x7f does not; sahf then puts
        // back SF ZF AF PF CF from ah.
        self.emit(
            enc(Instruction::with2(
                Code::Add_rm8_imm8,
                Register::AL,
                0x7fu32,
            ))?,
            Mark::None,
        );
        self.emit(Instruction::with(Code::Sahf), Mark::None);
        self.emit(
            enc(Instruction::with2(
                Code::Mov_r64_rm64,
                Register::RAX,
                gs(RAX_SLOT),
            ))?,
            Mark::None,
        );
        Ok(())
    }

    /// `jmp target`.
    fn jump(&mut self, target: u64, mark: Mark) -> Emit {
        self.emit(
            enc(Instruction::with_branch(Code::Jmp_rel32_64, target))?,
            mark,
        );
        Ok(())
    }

    /// A direct call, emulated: the original return address is pushed (two 32-bit stores,
    /// no register or flag touched), then a jump to the target.
    fn emulated_call(&mut self, call: &Instruction, mark: Mark) -> Emit {
        let ret = call.next_ip();
        self.emit(
            enc(Instruction::with2(
                Code::Lea_r64_m,
                Register::RSP,
                MemoryOperand::with_base_displ(Register::RSP, -8),
            ))?,
            mark,
        );
        self.emit(
            enc(Instruction::with2(
                Code::Mov_rm32_imm32,
                MemoryOperand::with_base(Register::RSP),
                ret as u32,
            ))?,
            Mark::None,
        );
        self.emit(
            enc(Instruction::with2(
                Code::Mov_rm32_imm32,
                MemoryOperand::with_base_displ(Register::RSP, 4),
                (ret >> 32) as u32,
            ))?,
            Mark::None,
        );
        self.jump(call.near_branch_target(), Mark::None)
    }

    /// The stub of a `syscall` sent to the agent at `entry` (see [`AgentStub`]). `last`:
    /// nothing of the program follows it in the block (the glue jump that comes next gets a
    /// label for the `jrcxz`).
    fn agent_call(&mut self, syscall: &Instruction, entry: u64, last: bool) -> Emit {
        let ip = syscall.ip();
        let rsp = |d: i64| MemoryOperand::with_base_displ(Register::RSP, d);
        self.emit(
            enc(Instruction::with2(
                Code::Lea_r64_m,
                Register::RSP,
                rsp(-(RED_ZONE as i64)),
            ))?,
            Mark::Boundary(ip),
        );
        self.emit(
            enc(Instruction::with2(
                Code::Mov_r64_imm64,
                Register::R11,
                entry,
            ))?,
            Mark::None,
        );
        self.emit(
            enc(Instruction::with1(Code::Call_rm64, Register::R11))?,
            Mark::None,
        );
        self.emit(
            enc(Instruction::with2(
                Code::Lea_r64_m,
                Register::RSP,
                rsp(RED_ZONE as i64),
            ))?,
            Mark::AgentReturn(ip),
        );
        let cont = if last {
            let l = self.label();
            self.pending = Some(l);
            l
        } else {
            syscall.next_ip()
        };
        // The pending label is for the instruction after the `syscall`: emit these two
        // with labels of their own.
        let pending = self.pending.take();
        self.emit(
            enc(Instruction::with_branch(Code::Jrcxz_rel8_64, cont))?,
            Mark::None,
        );
        self.emit(Instruction::with(Code::Syscall), Mark::None);
        self.pending = pending;
        Ok(())
    }

    /// After the program instructions: the taken paths of counted conditional branches
    /// (count, then on to the target), then the stubs of every counting code: (restore the
    /// flags,) `int3`, back to the continuation.
    fn finish(&mut self) -> Emit {
        for (label, target, live) in std::mem::take(&mut self.taken) {
            self.pending = Some(label);
            self.count(live, target)?;
            self.jump(target, Mark::Glue(target))?;
        }
        for stub in std::mem::take(&mut self.stubs) {
            let cont = stub.cont.ok_or("a count with nothing after it")?;
            self.pending = Some(stub.label);
            if stub.flags_live {
                self.restore_flags()?;
            }
            self.emit(Instruction::with(Code::Int3), Mark::None);
            self.jump(
                cont,
                Mark::AfterTrap {
                    cont,
                    logical: stub.logical,
                    set_zf: !stub.flags_live,
                },
            )?;
        }
        Ok(())
    }
}

/// The instruction at file address `at`, moved to run-time address `at + bias`.
fn insn_at(scan: &Scan, at: u64, bias: u64) -> Result<Instruction, &'static str> {
    let k = scan.index_of(at).ok_or("no instruction there")?;
    let mut insn = scan.insns[k].insn;
    rebase(&mut insn, bias);
    Ok(insn)
}

/// Moves a decoded instruction (ip, branch target, RIP-relative operand) by `bias`.
fn rebase(insn: &mut Instruction, bias: u64) {
    let ip = insn.ip().wrapping_add(bias);
    if crate::scan::is_direct(insn) {
        let t = insn.near_branch_target().wrapping_add(bias);
        insn.set_near_branch64(t);
    }
    if insn.is_ip_rel_memory_operand() {
        let d = insn.memory_displacement64().wrapping_add(bias);
        insn.set_memory_displacement64(d);
    }
    insn.set_ip(ip);
}

/// Emits one program instruction into a trampoline, with its counting if `site` counts it.
///
/// Where the count goes decides where the instruction's boundary is, so that a program
/// address always names one tick count: a first instruction of a function that falls
/// through counts after it runs (the boundary is before both); a conditional back edge
/// counts on its taken path; everything else counts before it runs and its boundary is
/// after the count (arrivals through the patch jump step on to it).
fn emit_program(block: &mut Block, insn: &Instruction, site: Option<&Site>, last: bool) -> Emit {
    let ip = insn.ip();
    let flow = insn.flow_control();
    if insn.code() == Code::Syscall {
        // Only a syscall site's block holds a `syscall` (the counter never moves one).
        let entry = block
            .agent
            .ok_or("a syscall in a trampoline without the agent")?;
        return block.agent_call(insn, entry, last);
    }
    match site.map(|s| (s.kind, s.flags_live)) {
        Some((Counted::Entry, live)) if flow == FlowControl::Next => {
            block.relocate(*insn, Mark::Boundary(ip))?;
            block.count(live, insn.next_ip())?;
        }
        Some((Counted::BackEdge, live)) if flow == FlowControl::ConditionalBranch => {
            let target = insn.near_branch_target();
            let mut j = *insn;
            j.as_near_branch();
            match block.loop_head {
                // The count before the loop's first instruction is its taken path.
                Some((head, label)) if head == target => {
                    j.set_near_branch64(label);
                    block.relocate(j, Mark::Boundary(ip))?;
                }
                _ => {
                    let taken = block.label();
                    j.set_near_branch64(taken);
                    block.relocate(j, Mark::Boundary(ip))?;
                    block.taken.push((taken, target, live));
                }
            }
        }
        Some((Counted::BackEdge, live)) => {
            // An unconditional back edge: counted, then the jump itself.
            block.count(live, ip)?;
            block.jump(insn.near_branch_target(), Mark::Boundary(ip))?;
        }
        Some((_, live)) => {
            // A function entry that branches, an indirect jump, a back call.
            block.count(live, ip)?;
            if flow == FlowControl::Call {
                block.emulated_call(insn, Mark::Boundary(ip))?;
            } else {
                block.relocate(*insn, Mark::Boundary(ip))?;
            }
        }
        None if flow == FlowControl::Call => block.emulated_call(insn, Mark::Boundary(ip))?,
        None => block.relocate(*insn, Mark::Boundary(ip))?,
    }
    Ok(())
}

/// The trampoline of an in-place or island site.
fn single_block(scan: &Scan, site: &Site, bias: u64) -> Result<Block, &'static str> {
    let mut block = Block::default();
    let insn = insn_at(scan, site.at, bias)?;
    match (site.kind, site.how) {
        (Counted::BackEdge, How::Island { .. }) => {
            // Only the taken path comes here: the branch itself stays in the program.
            let target = insn.near_branch_target();
            block.count(site.flags_live, target)?;
            block.jump(target, Mark::Glue(target))?;
        }
        _ => {
            emit_program(&mut block, &insn, Some(site), true)?;
            if can_fall_through(&insn) {
                let next = insn.next_ip();
                block.jump(next, Mark::Glue(next))?;
            }
        }
    }
    block.finish()?;
    Ok(block)
}

/// The trampoline of a `syscall` at `at` sent to the agent through an island: the agent's
/// stub, then back to the instruction after it.
fn syscall_island_block(
    scan: &Scan,
    at: u64,
    bias: u64,
    entry: u64,
) -> Result<Block, &'static str> {
    let mut block = Block {
        agent: Some(entry),
        ..Default::default()
    };
    let insn = insn_at(scan, at, bias)?;
    block.agent_call(&insn, entry, true)?;
    let next = insn.next_ip();
    block.jump(next, Mark::Glue(next))?;
    block.finish()?;
    Ok(block)
}

/// The trampoline of a region `[start, end)` (file addresses) with its counted sites (and,
/// with `agent`, the agent's stub for a `syscall` in it).
fn region_block(
    scan: &Scan,
    sites: &[Site],
    start: u64,
    end: u64,
    bias: u64,
    agent: Option<u64>,
) -> Result<Block, &'static str> {
    let mut block = Block {
        agent,
        ..Default::default()
    };
    let mut k = scan.index_of(start).ok_or("no instruction there")?;
    // A loop moved whole (`plan::find_loop`): the way in jumps over the count that the back
    // edge jumps to, so that each iteration takes one branch, as in the program:
    //
    //          jmp head
    //   count: sub qword gs:[0], 256 ; je stub
    //   head:  (the loop's instructions) ; jcc count
    //          jmp end
    let head = start + bias;
    let closing = sites.iter().find(|s| {
        s.kind == Counted::BackEdge
            && insn_at(scan, s.at, bias).is_ok_and(|i| {
                i.flow_control() == FlowControl::ConditionalBranch && i.near_branch_target() == head
            })
    });
    if let Some(site) = closing {
        block.jump(head, Mark::None)?;
        let label = block.label();
        block.pending = Some(label);
        block.count(site.flags_live, head)?;
        block.loop_head = Some((head, label));
    }
    let mut last = None;
    while k < scan.insns.len() && scan.insns[k].ip() < end {
        let at = scan.insns[k].ip();
        let insn = insn_at(scan, at, bias)?;
        let site = sites.iter().find(|s| s.at == at);
        let is_last = insn.next_ip() >= end + bias;
        emit_program(&mut block, &insn, site, is_last)?;
        last = Some(insn);
        k += 1;
    }
    if let Some(l) = last {
        if can_fall_through(&l) {
            block.jump(end + bias, Mark::Glue(end + bias))?;
        }
    }
    block.finish()?;
    Ok(block)
}

fn can_fall_through(insn: &Instruction) -> bool {
    matches!(
        insn.flow_control(),
        FlowControl::Next | FlowControl::ConditionalBranch | FlowControl::Call
    )
}

/// The writes that send the patch `(at, how)` to its trampoline at `tramp`; None when the
/// module's bytes there are not what planning decoded. `back_edge_island`: a short back
/// edge that keeps its place and only gets a new displacement.
fn patch_writes(
    code: &ModuleCode,
    scan: &Scan,
    at: u64,
    how: How,
    back_edge_island: bool,
    bias: u64,
    tramp: u64,
) -> Option<Vec<Write>> {
    let original = |at: u64, len: u64| -> Option<WriteBytes> {
        Some(WriteBytes::from_slice(
            code.bytes_from(at)?.get(..len as usize)?,
        ))
    };
    let jump_to = |from: u64| -> Option<WriteBytes> {
        let disp = i32::try_from(tramp as i64 - (from + JUMP_LEN) as i64).ok()?;
        let mut b = smallvec::smallvec![0xe9];
        b.extend_from_slice(&disp.to_le_bytes());
        Some(b)
    };
    let (start, end) = match how {
        How::Region { start, end } => (start, end),
        _ => {
            let k = scan.index_of(at)?;
            (at, scan.insns[k].end())
        }
    };
    let mut writes = Vec::new();
    match how {
        How::InPlace | How::Region { .. } => {
            let mut bytes = jump_to(start + bias)?;
            bytes.resize((end - start) as usize, 0xcc);
            writes.push(Write {
                addr: start + bias,
                original: original(start, end - start)?,
                bytes,
            });
        }
        How::Island { island } => {
            writes.push(Write {
                addr: island + bias,
                original: original(island, JUMP_LEN)?,
                bytes: jump_to(island + bias)?,
            });
            let orig = original(start, end - start)?;
            if back_edge_island {
                // Only the displacement (the last byte) changes.
                let rel = i8::try_from(island as i64 - end as i64).ok()?;
                let mut bytes = orig.clone();
                *bytes.last_mut()? = rel as u8;
                writes.push(Write {
                    addr: start + bias,
                    original: orig,
                    bytes,
                });
            } else {
                let rel = i8::try_from(island as i64 - (start + 2) as i64).ok()?;
                let mut bytes: WriteBytes = smallvec::smallvec![0xeb, rel as u8];
                bytes.resize((end - start) as usize, 0xcc);
                writes.push(Write {
                    addr: start + bias,
                    original: orig,
                    bytes,
                });
            }
        }
    }
    Some(writes)
}
