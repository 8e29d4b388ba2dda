//! Choosing how each counted instruction of a module is patched.
//!
//! Three ways, cheapest first:
//! - **In place**: an instruction of 5 bytes or more (`jcc rel32`, `jmp rel32`, `call rel32`,
//!   a long first instruction of a function, `jmp *disp32(%rip)`) is replaced by a `jmp rel32`
//!   to its trampoline. No other instruction moves, and as one instruction is replaced by one
//!   jump, no branch can land inside the patch whatever the code's jump tables hold.
//! - **Island**: a short instruction jumps to a 5-byte `jmp rel32` written into *padding*
//!   within its reach (±127 bytes): bytes after an unconditional transfer that only fill up to
//!   the next block and are never executed. A short conditional or unconditional branch keeps
//!   its place and only its 8-bit displacement changes (its not-taken path runs natively); a
//!   short first instruction of a function or a short indirect jump is replaced by a `jmp
//!   rel8` of the same length or less.
//! - **Region**: the instructions around the counted one, at least 5 bytes of them, are
//!   replaced by a `jmp rel32`, and all of them run in the trampoline. Only where the code
//!   shows every way into the function (no indirect jump in it: a jump table could lead into
//!   the region's interior) and nothing jumps into the region's interior. A small loop closed
//!   by a conditional back edge is tried this way first, whole (`find_loop`): its iterations
//!   then take one branch each, as in the program, where the other two ways take three.
//!
//! A counted instruction that none of these can take is *uncounted* and listed with the
//! reason. Planning is a pure function of the module's bytes, so recording and replay, which
//! map the same bytes, patch identically.

use iced_x86::{Code, FlowControl};

use crate::flags;
use crate::scan::{Counted, Insn, Scan};

/// Bytes of the `jmp rel32` a patch jumps to its trampoline with.
pub const JUMP_LEN: u64 = 5;

/// How a site is patched (file addresses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum How {
    /// The counted instruction is replaced by a jump to its trampoline.
    InPlace,
    /// The counted instruction reaches its trampoline through a jump in padding at `island`.
    Island {
        /// Where the 5-byte jump goes.
        island: u64,
    },
    /// The instructions of `[start, end)` are replaced by a jump; all run in the trampoline.
    Region {
        /// First byte.
        start: u64,
        /// One past the last byte.
        end: u64,
    },
}

/// One counted instruction and how it is patched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Site {
    /// The counted instruction's address.
    pub at: u64,
    /// Why it counts.
    pub kind: Counted,
    /// How it is patched.
    pub how: How,
    /// Whether the counting code must keep the arithmetic flags.
    pub flags_live: bool,
}

/// A counted instruction that no patch could take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Uncounted {
    /// Its address.
    pub at: u64,
    /// Why it would count.
    pub kind: Counted,
    /// Why it could not be patched.
    pub why: &'static str,
}

/// A `syscall` instruction that a patch sends to the in-process agent (crate
/// `hindsight-agent`): the stub calls the agent, which answers the call or has the stub
/// execute it in place. Counts no tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyscallSite {
    /// The instruction's address.
    pub at: u64,
    /// How it is patched: [`How::Island`] (the `syscall` becomes a 2-byte jump to an island:
    /// no other instruction moves, so it is safe even where jump tables lead) or
    /// [`How::Region`].
    pub how: How,
}

/// How a module's counted instructions are patched.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// The patched ones, sorted by address (the sites of one region share its `How`).
    pub sites: Vec<Site>,
    /// The others.
    pub uncounted: Vec<Uncounted>,
    /// The `syscall` instructions that can be sent to the agent (planned after the counted
    /// instructions, in the bytes they left: the ticks are the same with or without the
    /// agent), sorted by address.
    pub syscalls: Vec<SyscallSite>,
    /// `syscall` instructions that no patch could take (they stay traced), with why.
    pub unpatched_syscalls: Vec<(u64, &'static str)>,
}

/// Bytes already taken by a patch (sorted, disjoint `[start, end)` ranges).
#[derive(Default)]
struct Claims(Vec<(u64, u64)>);

impl Claims {
    fn free(&self, start: u64, end: u64) -> bool {
        let i = self.0.partition_point(|r| r.1 <= start);
        self.0.get(i).is_none_or(|r| r.0 >= end)
    }
    fn take(&mut self, start: u64, end: u64) {
        let i = self.0.partition_point(|r| r.1 <= start);
        self.0.insert(i, (start, end));
    }
}

/// Plans the patches of a decoded module.
pub fn plan(scan: &Scan) -> Plan {
    let mut plan = Plan::default();
    let mut claims = Claims::default();
    // A region may take counted instructions after its own: they are counted there.
    let mut covered_until = 0u64;
    for k in 0..scan.insns.len() {
        let i = &scan.insns[k];
        let Some(kind) = i.counted else { continue };
        if i.ip() < covered_until {
            continue;
        }
        if !i.in_function {
            plan.uncounted.push(Uncounted {
                at: i.ip(),
                kind,
                why: "outside every function of the unwind tables",
            });
            continue;
        }
        if kind == Counted::BackCall && target_counts(scan, i) {
            // A call to a stub whose first instruction counts (a PLT entry's indirect jump):
            // the arrival there is counted already.
            continue;
        }
        let flags_live = flags_live_after_count(scan, i);
        let site = |how| Site {
            at: i.ip(),
            kind,
            how,
            flags_live,
        };
        let (ip, end) = (i.ip(), i.end());
        if let Some((start, rend)) = find_loop(scan, &claims, k) {
            claims.take(start, rend);
            plan.sites.push(site(How::Region { start, end: rend }));
            continue;
        }
        let movable_here = kind != Counted::Entry || movable(&i.insn);
        if movable_here && end - ip >= JUMP_LEN && claims.free(ip, end) {
            claims.take(ip, end);
            plan.sites.push(site(How::InPlace));
            continue;
        }
        if movable_here && short_form_fits(i) && claims.free(ip, end) {
            if let Some(island) = find_island(scan, &claims, i) {
                claims.take(ip, end);
                claims.take(island, island + JUMP_LEN);
                plan.sites.push(site(How::Island { island }));
                continue;
            }
        }
        match find_region(scan, &claims, k, false) {
            Ok((start, rend)) => {
                claims.take(start, rend);
                covered_until = rend;
                // Every counted instruction in the region is counted by its trampoline.
                let lo = scan.index_of(start).unwrap_or(k);
                for j in lo..scan.insns.len() {
                    let n = &scan.insns[j];
                    if n.ip() >= rend {
                        break;
                    }
                    let Some(nk) = n.counted else { continue };
                    if nk == Counted::BackCall && target_counts(scan, n) {
                        continue;
                    }
                    let live = flags_live_after_count(scan, n);
                    plan.sites.push(Site {
                        at: n.ip(),
                        kind: nk,
                        how: How::Region { start, end: rend },
                        flags_live: live,
                    });
                }
            }
            Err(why) => plan.uncounted.push(Uncounted { at: ip, kind, why }),
        }
    }
    plan.sites.sort_by_key(|s| s.at);
    plan_syscalls(scan, &mut claims, &mut plan);
    plan
}

/// Plans the patches of the module's `syscall` instructions in the bytes the counted
/// instructions left.
fn plan_syscalls(scan: &Scan, claims: &mut Claims, plan: &mut Plan) {
    if !scan.insns.iter().any(|i| i.insn.code() == Code::Syscall) {
        return;
    }
    // The scan takes the instruction after a `syscall` for a return address (a `syscall` is
    // a call for the decoder); the kernel returns there by falling through, so for a
    // syscall's region it is no way in unless something else leads there.
    let targets = targets_but_syscall_returns(scan);
    for k in 0..scan.insns.len() {
        let i = &scan.insns[k];
        if i.insn.code() != Code::Syscall {
            continue;
        }
        let (ip, end) = (i.ip(), i.end());
        if !i.in_function {
            plan.unpatched_syscalls
                .push((ip, "it lies outside every function the unwind tables list"));
            continue;
        }
        if !claims.free(ip, end) {
            plan.unpatched_syscalls
                .push((ip, "its bytes are patched already"));
            continue;
        }
        if let Some(island) = island_near(scan, claims, ip + 2) {
            claims.take(ip, end);
            claims.take(island, island + JUMP_LEN);
            plan.syscalls.push(SyscallSite {
                at: ip,
                how: How::Island { island },
            });
            continue;
        }
        match find_region_with(scan, claims, k, true, &|a| {
            targets.binary_search(&a).is_ok()
        }) {
            Ok((start, rend)) => {
                claims.take(start, rend);
                plan.syscalls.push(SyscallSite {
                    at: ip,
                    how: How::Region { start, end: rend },
                });
            }
            Err(why) => plan.unpatched_syscalls.push((ip, why)),
        }
    }
}

/// Whether the arithmetic flags are live where the counting code of `i` continues (see
/// `assemble::emit_program` for where each kind counts): at a back edge's or back call's
/// target; after a function's first instruction when it falls through (it counts after
/// it), else at the function's start; an indirect jump's target is not known.
fn flags_live_after_count(scan: &Scan, i: &Insn) -> bool {
    match i.counted {
        Some(Counted::BackEdge) | Some(Counted::BackCall) => {
            flags::live_at(scan, i.insn.near_branch_target())
        }
        Some(Counted::Entry) if i.insn.flow_control() == FlowControl::Next => {
            flags::live_at(scan, i.end())
        }
        Some(Counted::Entry) => flags::live_at(scan, i.ip()),
        _ => true,
    }
}

/// Whether the first instruction at a call's target counts by itself.
fn target_counts(scan: &Scan, call: &Insn) -> bool {
    scan.index_of(call.insn.near_branch_target())
        .and_then(|t| scan.insns[t].counted)
        .is_some_and(|c| matches!(c, Counted::Entry | Counted::IndirectJump))
}

/// Whether an instruction reaches an island with its own short form: a short branch keeps
/// its opcode and gets a new 8-bit displacement; a first instruction of a function or an
/// indirect jump of at least 2 bytes is replaced by `jmp rel8`.
fn short_form_fits(i: &Insn) -> bool {
    match i.counted {
        Some(Counted::BackEdge) => is_rel8_branch(i.insn.code()),
        Some(Counted::Entry) | Some(Counted::IndirectJump) => i.insn.len() >= 2,
        _ => false,
    }
}

/// Branches whose displacement is their last byte, 8 bits wide.
pub fn is_rel8_branch(code: Code) -> bool {
    code.is_jcc_short()
        || code.is_jmp_short()
        || matches!(
            code,
            Code::Loop_rel8_64_RCX
                | Code::Loope_rel8_64_RCX
                | Code::Loopne_rel8_64_RCX
                | Code::Jrcxz_rel8_64
                | Code::Jecxz_rel8_64
        )
}

/// A free 5-byte window in padding that a short jump from `i` reaches, nearest first.
fn find_island(scan: &Scan, claims: &Claims, i: &Insn) -> Option<u64> {
    // The displacement counts from the end of the short form (the branch itself, or the
    // 2-byte `jmp rel8` written at the instruction's start).
    let from = match i.counted {
        Some(Counted::BackEdge) => i.end(),
        _ => i.ip() + 2,
    };
    island_near(scan, claims, from)
}

/// A free 5-byte window in padding that a `rel8` displacement counted from `from` reaches,
/// nearest first.
fn island_near(scan: &Scan, claims: &Claims, from: u64) -> Option<u64> {
    let lo = from.saturating_sub(128);
    let hi = from + 127;
    let first = scan.padding.partition_point(|p| p.1 <= lo);
    let mut best: Option<u64> = None;
    for &(s, e) in &scan.padding[first..] {
        if s > hi {
            break;
        }
        let mut a = s.max(lo);
        while a + JUMP_LEN <= e && a <= hi {
            if claims.free(a, a + JUMP_LEN) {
                if best.is_none_or(|b| a.abs_diff(from) < b.abs_diff(from)) {
                    best = Some(a);
                }
                break;
            }
            a += 1;
        }
    }
    best
}

/// The longest loop, in bytes, that [`find_loop`] moves whole into a trampoline.
const MAX_LOOP: u64 = 64;

/// A small loop that instruction `k`, a conditional back edge, closes — `[its target, its
/// end)`, at most [`MAX_LOOP`] bytes of movable instructions that fall through into each
/// other, with no other counted instruction, nothing jumping into its interior and no byte
/// taken — to be moved whole into a trampoline as a region. There the count sits just
/// before the loop's first instruction and the back edge jumps to it: one taken branch per
/// iteration, as in the program, where an island or an in-place patch takes three (to the
/// island, to the trampoline, back to the loop), which costs a CPU-bound loop more than the
/// count itself.
fn find_loop(scan: &Scan, claims: &Claims, k: usize) -> Option<(u64, u64)> {
    let i = &scan.insns[k];
    if i.counted != Some(Counted::BackEdge)
        || i.insn.flow_control() != FlowControl::ConditionalBranch
        || i.unknown_targets
    {
        return None;
    }
    let start = i.insn.near_branch_target();
    let end = i.end();
    if start >= i.ip() || end - start > MAX_LOOP || end - start < JUMP_LEN {
        return None;
    }
    let lo = scan.index_of(start)?;
    let mut at = start;
    for n in &scan.insns[lo..k] {
        let flow_ok = matches!(
            n.insn.flow_control(),
            FlowControl::Next | FlowControl::ConditionalBranch
        );
        if n.ip() != at
            || !flow_ok
            || !movable(&n.insn)
            || n.counted.is_some()
            || n.unknown_targets
            || !n.in_function
            || (n.ip() != start && scan.is_target(n.ip()))
        {
            return None;
        }
        at = n.end();
    }
    (at == i.ip() && !scan.is_target(i.ip()) && claims.free(start, end)).then_some((start, end))
}

/// A region of whole instructions around instruction `k` (starting at it or up to three
/// instructions before it that fall through to it) of at least [`JUMP_LEN`] bytes: every
/// instruction movable, nothing jumps into its interior, no byte taken, in a function whose
/// every way in the code shows. `syscall`: instruction `k` is a `syscall` for the agent's
/// stub (which replaces it), and the region holds no counted instruction.
fn find_region(
    scan: &Scan,
    claims: &Claims,
    k: usize,
    syscall: bool,
) -> Result<(u64, u64), &'static str> {
    find_region_with(scan, claims, k, syscall, &|a| scan.is_target(a))
}

/// [`find_region`] with `is_target` telling where control may arrive.
fn find_region_with(
    scan: &Scan,
    claims: &Claims,
    k: usize,
    syscall: bool,
    is_target: &dyn Fn(u64) -> bool,
) -> Result<(u64, u64), &'static str> {
    let i = &scan.insns[k];
    if i.unknown_targets {
        return Err(
            "short, in a function with an indirect jump (a jump table could lead next to it)",
        );
    }
    let mut why = "short, with no padding in reach and no room around it";
    let max_back = if i.counted == Some(Counted::Entry) {
        0
    } else {
        3
    };
    for back in 0..=max_back {
        let Some(s) = k.checked_sub(back) else { break };
        // The instructions from s to k must fall through into each other.
        if (s..k).any(|j| {
            scan.insns[j].end() != scan.insns[j + 1].ip()
                || !matches!(
                    scan.insns[j].insn.flow_control(),
                    FlowControl::Next | FlowControl::ConditionalBranch
                )
        }) {
            break;
        }
        if scan.insns[s].unknown_targets {
            break;
        }
        let start = scan.insns[s].ip();
        let mut end = start;
        let mut j = s;
        let mut ok = true;
        while j < scan.insns.len() && (end < start + JUMP_LEN || j <= k) {
            let n = &scan.insns[j];
            if n.ip() != end {
                ok = false;
                why = "next to bytes that do not decode";
                break;
            }
            if n.ip() != start && is_target(n.ip()) {
                ok = false;
                why = "something jumps right next to it";
                break;
            }
            if !(movable(&n.insn) || (syscall && j == k)) {
                ok = false;
                why = "next to an instruction that cannot move";
                break;
            }
            if syscall && n.counted.is_some() {
                ok = false;
                why = "a counted instruction next to it";
                break;
            }
            end = n.end();
            j += 1;
        }
        if ok && end >= start + JUMP_LEN {
            if claims.free(start, end) {
                return Ok((start, end));
            }
            why = "next to another patch";
        }
    }
    Err(why)
}

/// The scan's targets without the addresses that are one only as the instruction after a
/// `syscall` (sorted).
fn targets_but_syscall_returns(scan: &Scan) -> Vec<u64> {
    let mut other: Vec<u64> = Vec::new();
    for i in &scan.insns {
        let insn = &i.insn;
        match insn.flow_control() {
            FlowControl::UnconditionalBranch | FlowControl::ConditionalBranch
                if crate::scan::is_direct(insn) =>
            {
                other.push(insn.near_branch_target());
            }
            FlowControl::Call if insn.code() != Code::Syscall => {
                if crate::scan::is_direct(insn) {
                    other.push(insn.near_branch_target());
                }
                other.push(insn.next_ip());
            }
            FlowControl::IndirectCall => other.push(insn.next_ip()),
            _ => {}
        }
    }
    // Function starts: the scan's targets that no instruction's flow explains are them
    // (and the syscall returns, which are left out).
    let returns: Vec<u64> = scan
        .insns
        .iter()
        .filter(|i| i.insn.code() == Code::Syscall)
        .map(|i| i.end())
        .collect();
    other.sort_unstable();
    other.dedup();
    let mut out: Vec<u64> = scan
        .targets
        .iter()
        .copied()
        .filter(|t| other.binary_search(t).is_ok() || returns.binary_search(t).is_err())
        .collect();
    out.sort_unstable();
    out
}

/// Whether an instruction behaves the same at another address (branches keep absolute
/// targets and RIP-relative operands are re-encoded; direct calls are emulated so that
/// they push their original return address). Indirect calls would push the trampoline's
/// address; syscalls, traps and the time-stamp counter are events of their own.
pub fn movable(insn: &iced_x86::Instruction) -> bool {
    let flow_ok = match insn.flow_control() {
        FlowControl::Next
        | FlowControl::UnconditionalBranch
        | FlowControl::ConditionalBranch
        | FlowControl::IndirectBranch
        | FlowControl::Return => true,
        FlowControl::Call => crate::scan::is_direct(insn),
        _ => false,
    };
    flow_ok
        && !matches!(
            insn.code(),
            Code::Syscall
                | Code::Sysenter
                | Code::Rdtsc
                | Code::Rdtscp
                | Code::Cpuid
                | Code::Rdrand_r16
                | Code::Rdrand_r32
                | Code::Rdrand_r64
                | Code::Rdseed_r16
                | Code::Rdseed_r32
                | Code::Rdseed_r64
                | Code::Xbegin_rel16
                | Code::Xbegin_rel32
        )
}
