//! The counter of one traced process: its page, the modules patched so far, and the ticks
//! of each of its threads.
//!
//! The counter is one 64-bit word at `gs:[0]`, in a page of its own that every thread's GS
//! base points to (x86-64 Linux programs leave GS alone; threads and forked children inherit
//! the base, an exec clears it and the counter is installed again). One thread of a process
//! runs at a time under hindsight, so one word counts for all of them: the tracer folds what
//! the word counted into the ticks of the thread that ran ([`Counter::run`]).
//!
//! The word counts *down*, by [`TICK`] per tick, and the counting code traps when it reaches
//! zero. While nothing is wanted it holds [`IDLE`] (2^62: it would take 2^54 ticks to reach
//! zero); [`Counter::arm`] sets it to the distance to a wanted tick count.
//!
//! Invariants:
//! - Record and replay install the counter and patch every module at the same points of the
//!   program (its exec, the exit of each syscall that makes code executable), from the same
//!   bytes, at the same addresses: the program counts the same ticks in both.
//! - `last` is the word's value when the tracer last read or wrote it; the ticks the word
//!   counted since then belong to `running`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use hindsight_ptrace::{inject::inject_syscall, ProcessMemory, Tid};

use crate::assemble::{assemble, Patched, Trap, MAX_TRAMPOLINE, TICK};
use crate::cache::{FileId, Summary};
use crate::code::ModuleCode;
use crate::plan::plan;
use crate::scan::Scan;
use crate::TicksError;

/// The counter's value while no tick count is wanted.
pub const IDLE: u64 = 1 << 62;

/// A module whose code is patched.
#[derive(Debug, Clone)]
pub struct Module {
    /// The file it was read from.
    pub path: PathBuf,
    /// Its executable mapping, `[start, end)`.
    pub text: (u64, u64),
    /// The patches, trampolines and translation tables.
    pub patched: Arc<Patched>,
}

/// What [`Counter::arm`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Armed {
    /// The trap fires when the thread reaches the wanted count.
    Set,
    /// The thread is at that count already.
    Reached,
    /// The thread is past it.
    Passed {
        /// Its count now.
        now: u64,
    },
}

/// The counter of one process.
#[derive(Debug, Clone)]
pub struct Counter {
    /// Address of the counter page (the threads' GS base).
    page: u64,
    /// Patched modules, by text start.
    code: CodeView,
    /// Executable file mappings that could not be patched (their code runs uncounted), with why.
    skipped: Vec<((u64, u64), PathBuf, String)>,
    last: u64,
    running: Option<i32>,
    ticks: HashMap<i32, u64>,
    /// The in-process agent, where patches send `syscall` instructions (None: they stay as
    /// they are).
    agent: Option<AgentCode>,
    /// The running thread's count at which the trap fires (None: disarmed).
    armed: Option<u64>,
}

/// Where the in-process agent's code is (crate `hindsight-agent`): the counter sends the
/// program's `syscall` instructions to `entry`, and takes `[code.0, code.1)` for machinery
/// (never counted, never a program position).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AgentCode {
    /// What the stubs call.
    pub entry: u64,
    /// The agent's code.
    pub code: (u64, u64),
}

impl Counter {
    /// Installs the counter in a process stopped at its exec, before its first instruction
    /// (one thread, `tid`, whose ticks are counted under the name `key`): maps the counter
    /// page, points the thread's GS base at it and patches the code mapped so far (the
    /// program and its loader). With `agent` (the entry of the in-process agent, already
    /// mapped), every `syscall` instruction a patch can take is sent to it.
    pub fn install(
        tid: Tid,
        key: i32,
        mem: &ProcessMemory,
        agent: Option<AgentCode>,
    ) -> Result<Counter, TicksError> {
        let mut c = Counter {
            page: 0,
            code: CodeView {
                modules: Vec::new(),
                agent,
            },
            skipped: Vec::new(),
            last: IDLE,
            running: Some(key),
            ticks: HashMap::new(),
            agent,
            armed: None,
        };
        // Trampolines first: their places follow the modules' (below each), and the page
        // then goes wherever the kernel puts it — the same place in record and replay.
        c.patch_new(tid, mem)?;
        let page = inject_syscall(
            tid,
            mem,
            libc::SYS_mmap,
            [
                0,
                4096,
                (libc::PROT_READ | libc::PROT_WRITE) as u64,
                (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS) as u64,
                u64::MAX,
                0,
            ],
        )?;
        if (-4095..0).contains(&page) {
            return Err(TicksError::Setup(format!(
                "cannot map the counter page (error {})",
                -page
            )));
        }
        c.page = page as u64;
        mem.write(c.page, &IDLE.to_le_bytes())?;
        let mut regs = tid.regs()?;
        regs.0.gs_base = c.page;
        tid.set_regs(&regs)?;
        Ok(c)
    }

    /// The in-process agent that patches send `syscall` instructions to, if any.
    pub fn agent(&self) -> Option<AgentCode> {
        self.agent
    }

    /// The counter page's address.
    pub fn page(&self) -> u64 {
        self.page
    }

    /// The patched modules.
    pub fn modules(&self) -> &[Module] {
        &self.code.modules
    }

    /// Executable file mappings left unpatched, with the reason.
    pub fn skipped(&self) -> &[((u64, u64), PathBuf, String)] {
        &self.skipped
    }

    /// Patches every executable file mapping of the process that is not patched yet (after
    /// an exec, or a syscall that may have made code executable); forgets modules that are
    /// gone. `tid` is a thread stopped where a syscall may be injected through it.
    pub fn patch_new(&mut self, tid: Tid, mem: &ProcessMemory) -> Result<(), TicksError> {
        let maps = read_maps(mem.pid())?;
        self.code.modules.retain(|m| {
            maps.iter()
                .any(|r| r.exec && r.start == m.text.0 && r.end == m.text.1)
        });
        for r in maps.iter().filter(|r| r.exec && r.path.starts_with('/')) {
            if self.code.modules.iter().any(|m| m.text == (r.start, r.end))
                || self.skipped.iter().any(|s| s.0 == (r.start, r.end))
            {
                continue;
            }
            match self.patch_module(tid, mem, &maps, r) {
                Ok(m) => {
                    let at = self.code.modules.partition_point(|x| x.text.0 < m.text.0);
                    self.code.modules.insert(at, m);
                }
                Err(TicksError::Unpatchable(why)) => {
                    self.skipped
                        .push(((r.start, r.end), PathBuf::from(&r.path), why));
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn patch_module(
        &mut self,
        tid: Tid,
        mem: &ProcessMemory,
        maps: &[MapRow],
        r: &MapRow,
    ) -> Result<Module, TicksError> {
        let path = Path::new(&r.path);
        let file = crate::cache::file_id(path)
            .map_err(|e| TicksError::Unpatchable(format!("cannot read {}: {e}", path.display())))?;
        let summary = summary_of(path, &file)?;
        let bias = bias_of(&summary.loads, r)?;
        // Every executable section of the file must lie in this mapping.
        if summary
            .sections
            .iter()
            .any(|s| s.0 + bias < r.start || s.1 + bias > r.end)
        {
            return Err(TicksError::Unpatchable(
                "its code is not mapped in one piece".into(),
            ));
        }
        // The trampolines go below the file's lowest mapping, within reach of its code.
        let low = maps
            .iter()
            .filter(|m| m.path == r.path && m.start <= r.start)
            .map(|m| m.start)
            .min()
            .unwrap_or(r.start);
        // Room for the syscall sites' stubs only with the agent: without it the trampolines
        // go where they always went.
        let syscalls = if self.agent.is_some() {
            summary.syscalls
        } else {
            0
        };
        let reserve = (MAX_TRAMPOLINE * (summary.sites + syscalls + 1) + 0xffff) & !0xfff;
        let Some(mut base) = low.checked_sub(reserve + 0x1000) else {
            return Err(TicksError::Unpatchable("no room below it".into()));
        };
        base &= !0xfff;
        let patched = patched_at(path, &file, bias, base, self.agent.map(|a| a.entry))?;
        let len = (patched.code.len() as u64 + 0xfff) & !0xfff;
        if len == 0 {
            return Ok(Module {
                path: path.to_path_buf(),
                text: (r.start, r.end),
                patched,
            });
        }
        let got = inject_syscall(
            tid,
            mem,
            libc::SYS_mmap,
            [
                base,
                len,
                (libc::PROT_READ | libc::PROT_EXEC) as u64,
                (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | 0x10_0000) as u64, // MAP_FIXED_NOREPLACE
                u64::MAX,
                0,
            ],
        )?;
        if got as u64 != base {
            if !(-4095..0).contains(&got) {
                // An old kernel that took the address as a hint only.
                inject_syscall(tid, mem, libc::SYS_munmap, [got as u64, len, 0, 0, 0, 0])?;
            }
            return Err(TicksError::Unpatchable(format!(
                "the place for its trampolines ({base:#x}) is taken"
            )));
        }
        mem.write(base, &patched.code)?;
        // The text, patched in one piece: read it, apply the writes, write it back.
        let mut text = vec![0u8; (r.end - r.start) as usize];
        mem.read(r.start, &mut text)?;
        for w in &patched.writes {
            let at = (w.addr - r.start) as usize;
            let Some(cur) = text.get(at..at + w.bytes.len()) else {
                continue;
            };
            // planning decoded the file; what is mapped must be the same bytes.
            if cur != w.original.as_slice() {
                return Err(TicksError::Unpatchable(format!(
                    "its code at {:#x} is not the file's",
                    w.addr
                )));
            }
        }
        for w in &patched.writes {
            let at = (w.addr - r.start) as usize;
            text[at..at + w.bytes.len()].copy_from_slice(&w.bytes);
        }
        mem.write(r.start, &text)?;
        Ok(Module {
            path: path.to_path_buf(),
            text: (r.start, r.end),
            patched,
        })
    }

    /// Folds what the word counted since it was last looked at into the running thread.
    fn fold(&mut self, mem: &ProcessMemory) -> Result<(), TicksError> {
        if self.page == 0 {
            return Ok(());
        }
        let now = mem.read_u64(self.page)?;
        if let Some(t) = self.running {
            *self.ticks.entry(t).or_default() += self.last.saturating_sub(now) / TICK;
        }
        self.last = now;
        Ok(())
    }

    /// Makes `tid` the thread whose ticks the counter counts from now on (the one about to
    /// run user code).
    pub fn run(&mut self, mem: &ProcessMemory, tid: i32) -> Result<(), TicksError> {
        if self.running != Some(tid) {
            self.disarm(mem)?;
            self.running = Some(tid);
        }
        Ok(())
    }

    /// The ticks thread `tid` has counted.
    pub fn ticks(&mut self, mem: &ProcessMemory, tid: i32) -> Result<u64, TicksError> {
        if self.running == Some(tid) {
            self.fold(mem)?;
        }
        Ok(self.ticks.get(&tid).copied().unwrap_or(0))
    }

    /// Arms the trap for when `tid` (the running thread) has counted `target` ticks.
    pub fn arm(&mut self, mem: &ProcessMemory, tid: i32, target: u64) -> Result<Armed, TicksError> {
        self.run(mem, tid)?;
        let now = self.ticks(mem, tid)?;
        if target == now {
            return Ok(Armed::Reached);
        }
        if target < now {
            return Ok(Armed::Passed { now });
        }
        let left = (target - now).saturating_mul(TICK).min(IDLE);
        mem.write(self.page, &left.to_le_bytes())?;
        self.last = left;
        self.armed = Some(target);
        Ok(Armed::Set)
    }

    /// Arms the trap for `target` ticks of `tid` unless it is armed for an earlier count
    /// already (two reasons to stop: the earlier one first).
    pub fn arm_at_most(
        &mut self,
        mem: &ProcessMemory,
        tid: i32,
        target: u64,
    ) -> Result<Armed, TicksError> {
        if self.running == Some(tid) && self.armed.is_some_and(|a| a <= target) {
            return Ok(Armed::Set);
        }
        self.arm(mem, tid, target)
    }

    /// Writes the word back as the counter last left it: after a vfork (or a clone sharing
    /// memory without being a thread), whose child counted its own ticks in the same word
    /// while the parent waited. Replaying the parent alone runs no child: both must see the
    /// parent's count go on from where it was.
    pub fn restore_word(&self, mem: &ProcessMemory) -> Result<(), TicksError> {
        if self.page != 0 {
            mem.write(self.page, &self.last.to_le_bytes())?;
        }
        Ok(())
    }

    /// How to read `key`'s tick count from the counter word without the counter (valid until
    /// the tracer next arms, disarms or switches threads); None if `key` is not running.
    pub fn clock(&self, key: i32) -> Option<Clock> {
        (self.running == Some(key) && self.page != 0).then(|| Clock {
            page: self.page,
            base: self.ticks.get(&key).copied().unwrap_or(0),
            last: self.last,
        })
    }

    /// Takes the trap away (the word back to [`IDLE`]).
    pub fn disarm(&mut self, mem: &ProcessMemory) -> Result<(), TicksError> {
        if self.page == 0 {
            return Ok(());
        }
        self.fold(mem)?;
        if self.last != IDLE {
            mem.write(self.page, &IDLE.to_le_bytes())?;
            self.last = IDLE;
        }
        self.armed = None;
        Ok(())
    }

    /// The tick trap a thread whose pc is `pc` has just taken, if it is one.
    pub fn trap(&self, pc: u64) -> Option<Trap> {
        self.code.trap(pc)
    }

    /// Where a thread whose pc is `pc` stands in the program (see [`CodeView::logical`]).
    pub fn logical(&self, pc: u64) -> Option<u64> {
        self.code.logical(pc)
    }

    /// The patched code as the debugger must see through it.
    pub fn view(&self) -> &CodeView {
        &self.code
    }

    /// Single-steps `tid` (of process `pid`) until it stands at an instruction of the program
    /// ([`Counter::logical`] is Some): a thread stopped in the middle of the counting code
    /// must not get a signal there (its handler would run the same code, whose saved rax it
    /// would overwrite) nor be named by a pc that is no program instruction. A signal that
    /// arrives meanwhile is sent again; a fault (of a moved instruction) ends the stepping
    /// where it is. Returns the wait event if the thread ended.
    pub fn step_to_boundary(
        &self,
        pid: i32,
        tid: Tid,
    ) -> Result<Option<hindsight_ptrace::WaitEvent>, TicksError> {
        use hindsight_ptrace::{wait_tid, Stop, WaitEvent};
        // Signals that stop a step are sent again once the stepping is over (sent at once,
        // the next step would stop for them again, before its instruction).
        let mut later: Vec<(i32, libc::siginfo_t)> = Vec::new();
        let mut result = Err(TicksError::Setup(
            "a thread did not leave the counting code in 256 steps".into(),
        ));
        for _ in 0..256 {
            let pc = tid.regs()?.pc();
            if self.logical(pc).is_some() {
                result = Ok(None);
                break;
            }
            tid.step(0)?;
            match wait_tid(tid)? {
                WaitEvent::Stopped(Stop::Signal(libc::SIGTRAP)) => {}
                WaitEvent::Stopped(Stop::Signal(sig)) => {
                    let si = tid.siginfo()?;
                    let fault = matches!(
                        sig,
                        libc::SIGSEGV | libc::SIGBUS | libc::SIGILL | libc::SIGFPE
                    ) && si.si_code > 0;
                    if fault {
                        result = Ok(None);
                        break;
                    }
                    later.push((sig, si));
                }
                WaitEvent::Stopped(_) => {}
                gone => {
                    result = Ok(Some(gone));
                    break;
                }
            }
        }
        for (sig, si) in &later {
            tid.resend_signal(pid, *sig, si);
        }
        result
    }

    /// The counter of a forked copy of this process (`mem` is the copy's memory): the same
    /// page and patched code (the copy has copies of them), its threads counting from zero,
    /// from the word's value in the copy.
    pub fn for_child(&self, child_tid: i32, mem: &ProcessMemory) -> Counter {
        let last = if self.page == 0 {
            IDLE
        } else {
            mem.read_u64(self.page).unwrap_or(self.last)
        };
        Counter {
            page: self.page,
            code: self.code.clone(),
            skipped: self.skipped.clone(),
            last,
            running: Some(child_tid),
            ticks: HashMap::new(),
            agent: self.agent,
            armed: None,
        }
    }

    /// A copy of this counter's state for a copy of the process whose threads keep their
    /// counts (a checkpoint): `threads` maps each old tid to the new one.
    pub fn for_copy(&self, threads: &[(i32, i32)]) -> Counter {
        let map = |t: i32| threads.iter().find(|p| p.0 == t).map(|p| p.1).unwrap_or(t);
        Counter {
            page: self.page,
            code: self.code.clone(),
            skipped: self.skipped.clone(),
            last: self.last,
            running: self.running.map(map),
            ticks: self.ticks.iter().map(|(t, n)| (map(*t), *n)).collect(),
            agent: self.agent,
            armed: self.armed,
        }
    }
}

/// The patched code of a process, for translating between where the program's instructions
/// are and where they run (a snapshot: take a new one after the counter patched more).
#[derive(Debug, Clone, Default)]
pub struct CodeView {
    modules: Vec<Module>,
    agent: Option<AgentCode>,
}

impl CodeView {
    /// The tick trap a thread whose pc is `pc` has just taken, if it is one.
    pub fn trap(&self, pc: u64) -> Option<Trap> {
        let m = self.module_of_trampoline(pc)?;
        let t = &m.patched.traps;
        t.binary_search_by_key(&pc, |t| t.at).ok().map(|i| t[i])
    }

    /// Where a thread whose pc is `pc` stands in the program: the program address of the
    /// instruction it is about to run, or None when it is in the middle of the counter's
    /// machinery (counting code, a jump between trampoline and program) and must be stepped
    /// on first ([`Counter::step_to_boundary`]).
    pub fn logical(&self, pc: u64) -> Option<u64> {
        if self.in_agent(pc) {
            return None;
        }
        if let Some(m) = self.module_of_trampoline(pc) {
            let b = &m.patched.boundaries;
            return b.binary_search_by_key(&pc, |b| b.0).ok().map(|i| b[i].1);
        }
        match self.module_of_text(pc) {
            Some(m) if displaced(&m.patched, pc) => None,
            _ => Some(pc),
        }
    }

    /// Where the program instruction at `addr` runs: its boundary in a trampoline when it
    /// was moved there, else `addr` itself (a breakpoint for `addr` goes there).
    pub fn real(&self, addr: u64) -> u64 {
        match self.module_of_text(addr) {
            Some(m) => {
                let moved = &m.patched.moved;
                match moved.binary_search_by_key(&addr, |x| x.0) {
                    Ok(i) => moved[i].1,
                    Err(_) => addr,
                }
            }
            None => addr,
        }
    }

    /// The program's own bytes at `[addr, addr + buf.len())` put back over the patches in
    /// `buf` (what a debugger shows of the code).
    pub fn unpatch(&self, addr: u64, buf: &mut [u8]) {
        let end = addr + buf.len() as u64;
        for m in &self.modules {
            if addr >= m.text.1 || end <= m.text.0 {
                continue;
            }
            let w = &m.patched.writes;
            let first = w.partition_point(|w| w.addr + w.bytes.len() as u64 <= addr);
            for w in &w[first..] {
                if w.addr >= end {
                    break;
                }
                for (k, b) in w.original.iter().enumerate() {
                    let a = w.addr + k as u64;
                    if a >= addr && a < end {
                        buf[(a - addr) as usize] = *b;
                    }
                }
            }
        }
    }

    /// The agent stub (see [`crate::assemble::AgentStub`]) whose instructions hold `pc`
    /// (`[entry, end)`), if any.
    pub fn agent_stub(&self, pc: u64) -> Option<crate::assemble::AgentStub> {
        let m = self.module_of_trampoline(pc)?;
        let stubs = &m.patched.agent_stubs;
        let i = stubs.partition_point(|s| s.entry <= pc);
        stubs.get(i.checked_sub(1)?).copied().filter(|s| pc < s.end)
    }

    /// Whether `pc` is in the in-process agent's code.
    pub fn in_agent(&self, pc: u64) -> bool {
        self.agent.is_some_and(|a| pc >= a.code.0 && pc < a.code.1)
    }

    /// How many `syscall` instructions the patched code sends to the in-process agent.
    pub fn agent_sites(&self) -> usize {
        self.modules
            .iter()
            .map(|m| m.patched.agent_stubs.len())
            .sum()
    }

    /// The module whose executable mapping holds `pc`.
    fn module_of_text(&self, pc: u64) -> Option<&Module> {
        let i = self.modules.partition_point(|m| m.text.0 <= pc);
        self.modules
            .get(i.checked_sub(1)?)
            .filter(|m| pc < m.text.1)
    }

    /// The module whose trampolines hold `pc`.
    fn module_of_trampoline(&self, pc: u64) -> Option<&Module> {
        self.modules.iter().find(|m| {
            let p = &m.patched;
            pc >= p.base && pc < p.base + p.code.len() as u64
        })
    }
}

/// Whether `pc` lies in code whose instructions no longer run in place.
fn displaced(p: &Patched, pc: u64) -> bool {
    let i = p.displaced.partition_point(|r| r.0 <= pc);
    i.checked_sub(1)
        .and_then(|i| p.displaced.get(i))
        .is_some_and(|r| pc < r.1)
}

/// The running thread's tick count as a function of the counter word (see [`Counter::clock`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    page: u64,
    base: u64,
    last: u64,
}

impl Clock {
    /// The tick count now; `read` reads the process's memory.
    pub fn read(&self, read: impl Fn(u64, &mut [u8]) -> bool) -> Option<u64> {
        let mut b = [0u8; 8];
        read(self.page, &mut b)
            .then(|| self.base + self.last.saturating_sub(u64::from_le_bytes(b)) / TICK)
    }
}

/// One row of /proc/PID/maps.
#[derive(Debug, Clone)]
struct MapRow {
    start: u64,
    end: u64,
    exec: bool,
    offset: u64,
    path: String,
}

fn read_maps(pid: i32) -> Result<Vec<MapRow>, TicksError> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .map_err(|e| TicksError::Setup(format!("cannot read the memory map of {pid}: {e}")))?;
    let mut rows = Vec::new();
    for line in text.lines() {
        let mut f = line.splitn(6, ' ');
        let (Some(range), Some(perms), Some(off), Some(_dev), Some(_ino)) =
            (f.next(), f.next(), f.next(), f.next(), f.next())
        else {
            continue;
        };
        let path = f.next().unwrap_or("").trim_start().to_string();
        let Some((s, e)) = range.split_once('-') else {
            continue;
        };
        let (Ok(start), Ok(end), Ok(offset)) = (
            u64::from_str_radix(s, 16),
            u64::from_str_radix(e, 16),
            u64::from_str_radix(off, 16),
        ) else {
            continue;
        };
        rows.push(MapRow {
            start,
            end,
            exec: perms.as_bytes().get(2) == Some(&b'x'),
            offset,
            path,
        });
    }
    Ok(rows)
}

/// A file's code, decoded and planned (the same for every process that maps it).
struct Analysis {
    code: ModuleCode,
    scan: Scan,
    plan: crate::plan::Plan,
    /// (p_offset, p_vaddr) of its PT_LOAD segments.
    loads: Vec<(u64, u64)>,
}

/// The analysis of the file at `path` (identity `file`), made once per file per hindsight
/// process.
fn analysis_of(path: &Path, file: &FileId) -> Result<Arc<Analysis>, TicksError> {
    static CACHE: OnceLock<Mutex<HashMap<FileId, Arc<Analysis>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(a) = cache.lock().ok().and_then(|c| c.get(file).cloned()) {
        return Ok(a);
    }
    let bytes = std::fs::read(path)
        .map_err(|e| TicksError::Unpatchable(format!("cannot read {}: {e}", path.display())))?;
    let code = ModuleCode::from_elf(&bytes).map_err(|e| TicksError::Unpatchable(e.to_string()))?;
    let loads = load_segments(&bytes);
    let scan = Scan::new(&code);
    let mut plan = plan(&scan);
    // Developers' bisection aid: HINDSIGHT_TICKS_SITES=LO-HI patches only those sites.
    if let Some((lo, hi)) = std::env::var("HINDSIGHT_TICKS_SITES").ok().and_then(|v| {
        v.split_once('-')
            .map(|(a, b)| (a.parse().unwrap_or(0), b.parse().unwrap_or(usize::MAX)))
    }) {
        let n = plan.sites.len();
        plan.sites = plan.sites[lo.min(n)..hi.min(n)].to_vec();
    }
    if let Ok(k) = std::env::var("HINDSIGHT_TICKS_KIND") {
        plan.sites
            .retain(|s| format!("{:?}/{:?}", s.kind, s.how).contains(&k));
    }
    let a = Arc::new(Analysis {
        code,
        scan,
        plan,
        loads,
    });
    if let Ok(mut c) = cache.lock() {
        c.insert(*file, a.clone());
    }
    Ok(a)
}

/// What placing the file's trampolines needs: from this process's analysis, else from the
/// disk cache, else from a new analysis (which the disk cache then keeps).
fn summary_of(path: &Path, file: &FileId) -> Result<Summary, TicksError> {
    static CACHE: OnceLock<Mutex<HashMap<FileId, Summary>>> = OnceLock::new();
    let mem = CACHE.get_or_init(Default::default);
    if let Some(s) = mem.lock().ok().and_then(|c| c.get(file).cloned()) {
        return Ok(s);
    }
    let s = match crate::cache::summary(file) {
        Some(s) => s,
        None => {
            let a = analysis_of(path, file)?;
            let s = Summary {
                sections: a.code.sections.iter().map(|s| (s.addr, s.end())).collect(),
                loads: a.loads.clone(),
                sites: a.plan.sites.len() as u64,
                syscalls: a.plan.syscalls.len() as u64,
            };
            crate::cache::keep_summary(file, &s);
            s
        }
    };
    if let Ok(mut c) = mem.lock() {
        c.insert(*file, s.clone());
    }
    Ok(s)
}

/// The module patched for load bias `bias` with trampolines at `base` (and its syscalls sent
/// to `agent`), made once per (file, bias, base, agent) per hindsight process, and kept on
/// disk between runs (see `cache`).
fn patched_at(
    path: &Path,
    file: &FileId,
    bias: u64,
    base: u64,
    agent: Option<u64>,
) -> Result<Arc<Patched>, TicksError> {
    type Key = (FileId, u64, u64, Option<u64>);
    static CACHE: OnceLock<Mutex<HashMap<Key, Arc<Patched>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (*file, bias, base, agent);
    if let Some(p) = cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
        return Ok(p);
    }
    let p = match crate::cache::patched(file, bias, base, agent) {
        Some(p) => Arc::new(p),
        None => {
            let a = analysis_of(path, file)?;
            let p = assemble(&a.code, &a.scan, &a.plan, bias, base, agent);
            crate::cache::keep_patched(file, bias, base, agent, &p);
            Arc::new(p)
        }
    };
    if let Ok(mut c) = cache.lock() {
        c.insert(key, p.clone());
    }
    Ok(p)
}

/// (p_offset, p_vaddr) of the PT_LOAD segments of an ELF file.
fn load_segments(bytes: &[u8]) -> Vec<(u64, u64)> {
    use object::read::elf::{FileHeader, ProgramHeader};
    let Ok(elf) = object::elf::FileHeader64::<object::LittleEndian>::parse(bytes) else {
        return Vec::new();
    };
    let endian = object::LittleEndian;
    let Ok(headers) = elf.program_headers(endian, bytes) else {
        return Vec::new();
    };
    headers
        .iter()
        .filter(|h| h.p_type(endian) == object::elf::PT_LOAD)
        .map(|h| (h.p_offset(endian), h.p_vaddr(endian)))
        .collect()
}

/// The load bias of a mapping of a file (what is added to the file's addresses).
fn bias_of(loads: &[(u64, u64)], r: &MapRow) -> Result<u64, TicksError> {
    // The segment whose file range holds the mapping's offset (segments are page-congruent:
    // vaddr - offset is the same for every byte of one).
    let seg = loads
        .iter()
        .filter(|(off, _)| *off <= r.offset)
        .max_by_key(|(off, _)| *off)
        .ok_or_else(|| TicksError::Unpatchable("no loadable segment for its mapping".into()))?;
    let vaddr = seg.1.wrapping_sub(seg.0).wrapping_add(r.offset);
    Ok(r.start.wrapping_sub(vaddr))
}

/// Whether a successful syscall (`name`, its arguments and result) may have made code
/// executable or removed code that `counter` patched: the counter then looks at the
/// process's mappings again ([`Counter::patch_new`]).
pub fn changes_code(name: &str, args: &[u64; 6], result: u64, counter: &Counter) -> bool {
    let exec = |prot: u64| prot & libc::PROT_EXEC as u64 != 0;
    let overlaps = |start: u64, len: u64| {
        counter
            .code
            .modules
            .iter()
            .any(|m| start < m.text.1 && start.saturating_add(len) > m.text.0)
    };
    match name {
        "mmap" => exec(args[2]) || overlaps(result, args[1]),
        "mprotect" | "pkey_mprotect" => exec(args[2]) || overlaps(args[0], args[1]),
        "munmap" | "madvise" => overlaps(args[0], args[1]),
        "mremap" => overlaps(args[0], args[1]) || overlaps(result, args[2]),
        _ => false,
    }
}
