//! Reaching asynchronous positions through state gates (see `hindsight_breakpoints::gate`).
//!
//! A recorded preemption or signal in code without syscalls is a pc plus the registers and
//! stack it had there. While the thread runs towards it, a gate at the pc compares its state
//! inside the program at every execution, so the thread runs at nearly full speed from its
//! previous event and traps only at a candidate; the tracer then checks the whole position
//! (flags, stack digest) and either stops there or lets the thread go on through the gate.
//!
//! Invariants:
//! - A gate is armed only while one thread (the one approaching the position) runs, and is
//!   taken out at every stop that is not a rejected candidate, before anything else looks at
//!   the thread: nobody but this module ever sees a pc inside the gate's page (a stop there
//!   is translated back to the program's own address) or the jump at the pc.
//! - The page is mapped once and kept (mapping injects a syscall); replay maps recorded
//!   memory with MAP_FIXED and may replace it, so it is looked up in /proc/PID/maps before
//!   each use, and mapped again when gone.
//! - What may jump into the patch is learnt from the whole module's code, decoded function by
//!   function from the starts that its `.eh_frame_hdr` lists (the loaded image's own table, read
//!   from memory): branch and call targets, return addresses, function starts (entered through
//!   pointers and by the kernel for signal handlers) and functions with jump tables. Cold
//!   parts of functions jump back into their hot part: scanning the whole module sees them.
//!   One jump that no code shows is added: where a thread about to run rt_sigreturn returns.
//! - A thread stopped inside the patch (preempted there) is single-stepped out of it before
//!   the patch is written. A single-stepping user never meets a gate (steps use breakpoints).
//! - A pc that cannot be gated falls back to breakpoint hits.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

use hindsight_breakpoints::gate::{self, BranchFacts, Gate, Wanted, GATE_PAGE};
use hindsight_control::Inferior;
use hindsight_ptrace::{ProcessMemory, Tid};
use hindsight_trace::AsyncPoint;

use crate::error::ReplayError;

/// Index of rip and rsp in the recorded register words (`user_regs_struct` order).
const RIP: usize = 16;
const RSP: usize = 19;
/// Where the interrupted rip is in the signal frame that rt_sigreturn finds at rsp: the
/// ucontext (flags, link, 24-byte stack) then the saved registers r8…rcx, rsp, rip.
const SIGFRAME_RIP: u64 = 40 + 16 * 8;

/// A gate in place.
#[derive(Debug, Clone)]
struct Armed {
    /// The event (trace index) whose position it waits for.
    index: u64,
    /// The thread approaching it.
    tid: Tid,
    gate: Gate,
    /// The program's bytes under the patch.
    original: Vec<u8>,
}

/// What a stop meant for the armed gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateStop {
    /// No gate was armed.
    NotArmed,
    /// The thread is at the position (its pc set back to the position's pc); the gate is out.
    Reached,
    /// A candidate that is not the position: the gate stays, the thread goes on from there.
    NotThis,
    /// Something else stopped the run: the gate is out, a pc in its page translated back.
    Other,
}

/// What arming a gate came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arming {
    /// The gate is in place.
    Armed,
    /// The pc cannot be gated now: the caller uses breakpoint hits.
    No,
    /// The thread already stands at the position (it returned there from a signal handler,
    /// or was preempted there): no gate, nothing to run.
    AlreadyThere,
}

/// The gates of one replayed process.
#[derive(Debug, Default, Clone)]
pub struct Gates {
    /// The page the gate's code goes in (None until mapped).
    page: Option<u64>,
    armed: Option<Armed>,
    /// Pcs found impossible to gate whatever the threads do (their code does not change
    /// during a replay).
    refused: HashSet<u64>,
}

impl Gates {
    /// Arms a gate for `point` (event `index`), which `tid` approaches; `matches` tells
    /// whether a thread with these registers is at the position.
    pub fn arm(
        &mut self,
        inf: &mut Inferior,
        mem: &ProcessMemory,
        tid: Tid,
        index: u64,
        point: &AsyncPoint,
        matches: impl Fn(&Inferior, &hindsight_ptrace::Regs) -> bool,
    ) -> Result<Arming, ReplayError> {
        let pc = point.regs[RIP];
        if let Some(a) = &self.armed {
            if a.index == index && a.tid == tid {
                return Ok(Arming::Armed);
            }
            self.disarm(inf)?;
        }
        if self.refused.contains(&pc) {
            return Ok(Arming::No);
        }
        let pid = inf.pid();
        let Some(facts) = module_facts(pid, inf, pc) else {
            self.refused.insert(pc);
            return Ok(Arming::No);
        };
        // The patch starts at the pc, or (when something jumps right after it) up to three
        // instructions earlier.
        let mut starts = vec![pc];
        starts.extend(facts.previous_instructions(inf, pc, 3));
        let mut code = [0u8; 64];
        let span = |start: u64| (pc - start) as usize + gate::JUMP_LEN + 16;
        if inf
            .read_memory(starts[starts.len() - 1], &mut code)
            .is_err()
            && inf.read_memory(pc, &mut code[..span(pc)]).is_err()
        {
            return Ok(Arming::No);
        }
        let regs = inf.raw_regs(tid)?;
        // A thread with a syscall restart pending cannot have a page mapped through it (the
        // injected mmap would cancel the restart).
        if (-516..=-512).contains(&(regs.0.rax as i64)) && regs.0.orig_rax != u64::MAX {
            return Ok(Arming::No);
        }
        let Some(page) = self.page(pid, tid, mem, pc)? else {
            self.refused.insert(pc);
            return Ok(Arming::No);
        };
        let mut wanted = wanted_state(&point.regs, &point.stack);
        wanted.ignore = hindsight_record::point::frame_noise(&point.stack, |a, b| {
            inf.read_memory(a, b).is_ok()
        });
        let words = regs.to_words();
        let mut stack = vec![0u8; point.stack.len()];
        let now = inf
            .read_memory(words[RSP], &mut stack)
            .is_ok()
            .then(|| wanted_state(&words, &stack));
        // A thread about to return from a signal handler jumps to the pc in its signal frame,
        // a jump that no code shows.
        let sigreturn_to = (regs.0.orig_rax == libc::SYS_rt_sigreturn as u64)
            .then(|| {
                let mut b = [0u8; 8];
                inf.read_memory(regs.sp() + SIGFRAME_RIP, &mut b)
                    .ok()
                    .map(|_| u64::from_le_bytes(b))
            })
            .flatten();
        let lowest = starts[starts.len() - 1];
        let mut planned = Err(gate::GateRefusal::Undecodable(pc));
        for &start in &starts {
            let from = (start - lowest) as usize;
            let bytes = &code[from..(from + span(start)).min(code.len())];
            planned = gate::plan(start, bytes, pc, page, &wanted, now.as_ref(), |a| {
                facts.branches.is_target(a) || Some(a) == sigreturn_to
            });
            if !matches!(planned, Err(gate::GateRefusal::TargetInside(_))) {
                break;
            }
        }
        let gate = match planned {
            Ok(g) => g,
            Err(why) => {
                if crate::replayer::tracing() {
                    eprintln!("replay: no gate at {pc:#x}: {why}");
                }
                // A signal return's target is there only once.
                if !matches!(why, gate::GateRefusal::TargetInside(_)) {
                    self.refused.insert(pc);
                }
                return Ok(Arming::No);
            }
        };
        // A breakpoint under the patch would be hidden by it (and move with it).
        if (gate.addr..gate.addr + gate.len() as u64).any(|a| inf.has_site(a)) {
            return Ok(Arming::No);
        }
        // A thread stopped inside the patch (preempted there, or back from a signal handler)
        // would resume in the middle of the jump: unless it stands at the position already,
        // it is stepped out first.
        let end = gate.addr + gate.len() as u64;
        if regs.pc() > gate.addr && regs.pc() < end {
            match step_out(inf, tid, &gate, &matches)? {
                StepOut::Out => {}
                StepOut::AtPosition => return Ok(Arming::AlreadyThere),
                StepOut::Stayed => return Ok(Arming::No),
                StepOut::Signal(sig) => {
                    // Its signal is the program's: it gets it when it resumes.
                    inf.set_pending_signal(tid, sig);
                    return Ok(Arming::No);
                }
            }
        }
        mem.write(page, &gate.code)?;
        let from = (gate.addr - lowest) as usize;
        let original = code[from..from + gate.len()].to_vec();
        inf.write_memory(gate.addr, &gate.patch)?;
        if crate::replayer::tracing() {
            eprintln!(
                "replay: gate at {pc:#x} ({} bytes from {:#x}) for event {index}, page {page:#x}",
                gate.len(),
                gate.addr
            );
        }
        self.armed = Some(Armed {
            index,
            tid,
            gate,
            original,
        });
        Ok(Arming::Armed)
    }

    /// Interprets a stop of the run with a gate armed (see [`GateStop`]). At a candidate,
    /// `matches` decides with the thread's registers set back to the position's pc.
    pub fn on_stop(
        &mut self,
        inf: &mut Inferior,
        matches: impl Fn(&Inferior, &hindsight_ptrace::Regs) -> bool,
    ) -> Result<GateStop, ReplayError> {
        let Some(armed) = self.armed.clone() else {
            return Ok(GateStop::NotArmed);
        };
        let tid = armed.tid;
        let Ok(mut regs) = inf.raw_regs(tid) else {
            // The thread is gone (the process exited): nothing to put back in it.
            self.armed = None;
            return Ok(GateStop::Other);
        };
        if regs.pc() == armed.gate.trap_end {
            // The gate's int3 reports as the program's own SIGTRAP: it is not.
            inf.set_pending_signal(tid, 0);
            let mut at = regs;
            at.set_pc(armed.gate.at);
            if !matches(inf, &at) {
                return Ok(GateStop::NotThis);
            }
            self.disarm(inf)?;
            inf.set_raw_regs(tid, &at)?;
            return Ok(GateStop::Reached);
        }
        self.disarm(inf)?;
        let orig = armed.gate.original_pc(regs.pc());
        if orig != regs.pc() {
            regs.set_pc(orig);
            inf.set_raw_regs(tid, &regs)?;
        }
        Ok(GateStop::Other)
    }

    /// The gates of a copy of the process (a checkpoint): what is known of the code and the
    /// page (a fork keeps it; it is looked up again before use), but no gate in place.
    pub fn for_copy(&self) -> Gates {
        Gates {
            page: self.page,
            armed: None,
            refused: self.refused.clone(),
        }
    }

    /// Whether a gate is in place.
    pub fn is_armed(&self) -> bool {
        self.armed.is_some()
    }

    /// Takes the armed gate out (the program's bytes back at its pc).
    pub fn disarm(&mut self, inf: &mut Inferior) -> Result<(), ReplayError> {
        if let Some(a) = self.armed.take() {
            inf.write_memory(a.gate.addr, &a.original)?;
        }
        Ok(())
    }

    /// The gate page, mapped through `tid` near `pc` if it is not there any more. None when
    /// the kernel gives no page within reach.
    fn page(
        &mut self,
        pid: i32,
        tid: Tid,
        mem: &ProcessMemory,
        pc: u64,
    ) -> Result<Option<u64>, ReplayError> {
        const REACH: u64 = 1 << 30;
        if let Some(p) = self.page {
            if p.abs_diff(pc) < REACH && still_mapped(pid, p) {
                return Ok(Some(p));
            }
        }
        // Just below the code's 2 MiB region, as for displaced-stepping slots.
        let hint = (pc & !0x1f_ffff).saturating_sub(0x40_0000);
        // Kernel surprise: the injection single-steps the thread, which leaves it at a trap
        // stop; a signal it is to receive on resuming (a replayed signal, injected at its
        // delivery stop) would then go in with a fresh SI_USER siginfo from us — and the
        // handler's frame would differ from the recorded one. Its siginfo is put back.
        let siginfo = tid.siginfo().ok();
        let prot = (libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC) as u64;
        let flags = (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS) as u64;
        let r = hindsight_ptrace::inject::inject_syscall(
            tid,
            mem,
            libc::SYS_mmap,
            [hint, GATE_PAGE, prot, flags, u64::MAX, 0],
        )?;
        if let Some(si) = siginfo {
            tid.set_siginfo(&si)?;
        }
        if (-4095..0).contains(&r) {
            return Ok(None);
        }
        let p = r as u64;
        if p.abs_diff(pc) >= REACH {
            hindsight_ptrace::inject::inject_syscall(
                tid,
                mem,
                libc::SYS_munmap,
                [p, GATE_PAGE, 0, 0, 0, 0],
            )?;
            return Ok(None);
        }
        self.page = Some(p);
        Ok(Some(p))
    }
}

/// How [`step_out`] ended.
enum StepOut {
    /// The thread is out of the patch.
    Out,
    /// It is at the gated pc, in the position's state.
    AtPosition,
    /// It is still in it: a watchpoint is armed (these steps would not report its hits), or
    /// it did not get out in a few steps.
    Stayed,
    /// A signal stopped it on the way.
    Signal(i32),
}

/// Single-steps `tid`, stopped inside `gate`'s patch (preempted there, or returned there from
/// a signal handler), until it is out of it or at its start; each time it stands at the
/// gated pc, `matches` says whether that is the position.
fn step_out(
    inf: &Inferior,
    tid: Tid,
    gate: &Gate,
    matches: &impl Fn(&Inferior, &hindsight_ptrace::Regs) -> bool,
) -> Result<StepOut, ReplayError> {
    use hindsight_ptrace::{Stop, WaitEvent};
    let (start, end) = (gate.addr, gate.addr + gate.len() as u64);
    if tid.debugreg(7).unwrap_or(1) & 0xff != 0 {
        return Ok(StepOut::Stayed);
    }
    for _ in 0..16 {
        let regs = tid.regs()?;
        let pc = regs.pc();
        if pc <= start || pc >= end {
            return Ok(StepOut::Out);
        }
        if pc == gate.at && matches(inf, &regs) {
            return Ok(StepOut::AtPosition);
        }
        tid.step(0)?;
        match hindsight_ptrace::wait_tid(tid)? {
            WaitEvent::Stopped(Stop::Signal(libc::SIGTRAP)) => {}
            WaitEvent::Stopped(Stop::Signal(sig)) => return Ok(StepOut::Signal(sig)),
            _ => return Ok(StepOut::Stayed),
        }
    }
    Ok(StepOut::Stayed)
}

/// The state of a thread with registers `regs` (kernel order) and `stack` above its rsp.
fn wanted_state(regs: &[u64; 27], stack: &[u8]) -> Wanted {
    // The approach's words: the 15 general registers, then the stack words.
    let mut words = crate::approach::state_words(regs, stack);
    let stack = words.split_off(15);
    let mut gprs = [0u64; 15];
    gprs.copy_from_slice(&words);
    Wanted {
        gprs,
        rsp: regs[RSP],
        stack,
        ignore: Vec::new(),
    }
}

/// Whether our page is still at `page` (a mapping the program made over it would have its
/// own protections: ours is the only anonymous rwx one of exactly this size there).
fn still_mapped(pid: i32, page: u64) -> bool {
    let Ok(maps) = std::fs::read_to_string(format!("/proc/{pid}/maps")) else {
        return false;
    };
    let want = format!("{:x}-{:x} rwxp 00000000 00:00 0", page, page + GATE_PAGE);
    maps.lines().any(|l| l.trim_end() == want)
}

/// Branch facts of the module whose code contains `pc`, computed once per module and kept
/// for the whole hindsight process (replays restart often; the code stays the same).
fn module_facts(pid: i32, inf: &Inferior, pc: u64) -> Option<Arc<ModuleCode>> {
    /// Per module (path, image base, text start).
    type Cache = HashMap<(String, u64, u64), Arc<ModuleCode>>;
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    let module = code_module(pid, pc)?;
    let key = (module.path.clone(), module.base, module.text.0);
    let cache = CACHE.get_or_init(Default::default);
    if let Some(f) = cache.lock().ok()?.get(&key) {
        return Some(f.clone());
    }
    let read = |a: u64, b: &mut [u8]| inf.read_memory(a, b).is_ok();
    let (start, end) = module.text;
    let mut text = vec![0u8; (end - start) as usize];
    if !read(start, &mut text) {
        return None;
    }
    let mut starts: Vec<u64> = function_starts(&read, module.base)
        .unwrap_or_default()
        .into_iter()
        .filter(|s| *s >= start && *s < end)
        .collect();
    starts.insert(0, start);
    starts.push(end);
    starts.dedup();
    let mut facts = BranchFacts::default();
    for w in starts.windows(2) {
        let (s, e) = ((w[0] - start) as usize, (w[1] - start) as usize);
        facts.add_function(w[0], &text[s..e]);
    }
    // Functions are entered by calls through pointers and by the kernel (signal handlers).
    facts.targets.extend(starts.iter().copied());
    facts.finish();
    let facts = Arc::new(ModuleCode {
        branches: facts,
        functions: starts,
    });
    cache.lock().ok()?.insert(key, facts.clone());
    Some(facts)
}

/// What is known of one module's code.
struct ModuleCode {
    /// Where control can arrive other than by falling through.
    branches: BranchFacts,
    /// Where its functions start (sorted; the mapping's start and end included).
    functions: Vec<u64>,
}

impl ModuleCode {
    /// Up to `n` instructions that execution falls through from to reach `pc`, nearest
    /// first (decoded from the start of `pc`'s function).
    fn previous_instructions(&self, inf: &Inferior, pc: u64, n: usize) -> Vec<u64> {
        let i = self.functions.partition_point(|&s| s <= pc);
        let Some(&func) = i.checked_sub(1).and_then(|i| self.functions.get(i)) else {
            return Vec::new();
        };
        if pc - func > 1 << 16 {
            return Vec::new();
        }
        let mut code = vec![0u8; (pc - func) as usize];
        if inf.read_memory(func, &mut code).is_err() {
            return Vec::new();
        }
        let mut dec = iced_x86::Decoder::with_ip(64, &code, func, iced_x86::DecoderOptions::NONE);
        let mut starts = Vec::new();
        while dec.can_decode() {
            let insn = dec.decode();
            match insn.flow_control() {
                // Execution does not fall through from there.
                iced_x86::FlowControl::Next | iced_x86::FlowControl::ConditionalBranch => {
                    starts.push(insn.ip())
                }
                _ => starts.clear(),
            }
        }
        // The decoding must land on pc itself.
        if dec.ip() != pc {
            return Vec::new();
        }
        starts.into_iter().rev().take(n).collect()
    }
}

/// A file-backed executable mapping and where its file's image starts.
struct CodeModule {
    path: String,
    /// Address of the image's first byte (its ELF header).
    base: u64,
    /// The executable mapping that holds the pc.
    text: (u64, u64),
}

/// The executable mapping of a file that holds `pc` (None for anonymous code: JIT, vDSO).
fn code_module(pid: i32, pc: u64) -> Option<CodeModule> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).ok()?;
    let mut rows = Vec::new();
    for line in maps.lines() {
        let mut f = line.split_whitespace();
        let range = f.next()?;
        let perms = f.next()?;
        let offset = u64::from_str_radix(f.next()?, 16).ok()?;
        let path = f.nth(2).unwrap_or("").to_string();
        let (s, e) = range.split_once('-')?;
        let (s, e) = (
            u64::from_str_radix(s, 16).ok()?,
            u64::from_str_radix(e, 16).ok()?,
        );
        rows.push((s, e, perms.to_string(), offset, path));
    }
    let (s, e, _, _, path) = rows
        .iter()
        .find(|(s, e, perms, _, path)| {
            pc >= *s && pc < *e && perms.contains('x') && path.starts_with('/')
        })?
        .clone();
    let base = rows
        .iter()
        .filter(|r| r.4 == path && r.3 == 0)
        .map(|r| r.0)
        .min()?;
    Some(CodeModule {
        path,
        base,
        text: (s, e),
    })
}

/// The function starts that the image at `base` lists in its `.eh_frame_hdr` (read from
/// memory through `read`). None when it has no such table in the usual encoding (a version
/// 1 header with a 4-byte `eh_frame_ptr`, a `udata4` count and `datarel sdata4` pairs).
fn function_starts(read: &dyn Fn(u64, &mut [u8]) -> bool, base: u64) -> Option<Vec<u64>> {
    use hindsight_symbols::elf_headers::{load_bias, program_headers, PT_GNU_EH_FRAME};
    let headers = program_headers(|at, buf| read(base.wrapping_add(at), buf))?;
    let bias = load_bias(&headers, base)?;
    let hdr = bias.wrapping_add(headers.iter().find(|h| h.kind == PT_GNU_EH_FRAME)?.vaddr);
    let mut head = [0u8; 12];
    if !read(hdr, &mut head) || head[0] != 1 || head[2] != 0x03 || head[3] != 0x3b {
        return None;
    }
    if head[1] & 0x0f != 0x0b && head[1] & 0x0f != 0x03 {
        return None; // eh_frame_ptr not 4 bytes wide
    }
    let count = u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as usize;
    if count > 1 << 22 {
        return None;
    }
    let mut table = vec![0u8; count * 8];
    if !read(hdr + 12, &mut table) {
        return None;
    }
    let mut starts: Vec<u64> = table
        .chunks_exact(8)
        .map(|p| hdr.wrapping_add(i32::from_le_bytes([p[0], p[1], p[2], p[3]]) as i64 as u64))
        .collect();
    starts.sort_unstable();
    Some(starts)
}
