//! The live process: its threads, memory, breakpoint sites and debug registers.

use std::collections::{HashSet, VecDeque};
use std::ffi::OsStr;
use std::path::Path;

use hindsight_breakpoints::stepover::{Event, Protocol, Strategy};
use hindsight_ptrace::{FpRegs, ProcessMemory, Regs, SpawnOptions, Tid, WaitEvent};

use crate::error::ControlError;
use crate::sites::{SiteTable, StepPlan};
use crate::threads::{Thread, ThreadState};
use crate::StopEvent;

/// How threads get past a planted breakpoint when they resume.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepOverMode {
    /// Execute a relocated copy of the instruction; the trap stays planted and the other
    /// threads keep running (falls back to `NoSwitch` for instructions that cannot move).
    Displaced,
    /// Lift the trap and single-step with every other thread stopped (seed 000's fix).
    NoSwitch,
}

/// What the front end sees of a thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadInfo {
    /// gdb's thread number.
    pub num: u32,
    /// Kernel thread id.
    pub tid: Tid,
    /// pthread_t.
    pub pthread: u64,
}

/// The debug-register state that every thread carries (new threads get it too).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DebugRegs {
    /// DR0–DR3.
    pub addr: [u64; 4],
    /// DR7.
    pub dr7: u64,
}

/// A live, traced process.
pub struct Inferior {
    pub(crate) pid: i32,
    pub(crate) mem: ProcessMemory,
    pub(crate) threads: Vec<Thread>,
    pub(crate) next_num: u32,
    pub(crate) sites: SiteTable,
    pub(crate) debugregs: DebugRegs,
    /// Stops reaped while stopping everyone, handled first on the next resume.
    pub(crate) pending: VecDeque<(Tid, WaitEvent)>,
    /// Tids whose first stop arrived before their creator's clone/fork event.
    pub(crate) early_stops: HashSet<Tid>,
    /// Threads whose step over a breakpoint ended in a stop of its own: the instruction
    /// under the breakpoint set off a watchpoint, or faulted (SIGSEGV…). That stop is
    /// reported instead of resuming the thread.
    pub(crate) after_step: std::collections::HashMap<Tid, WaitEvent>,
    /// The thread whose single-step delivered a signal and stopped at the first instruction
    /// of its handler (see [`Inferior::take_stepped_into_handler`]).
    pub(crate) entered_handler: Option<Tid>,
    /// Scratch pages for displaced stepping: (base, bytes used).
    pub(crate) scratch: Vec<(u64, u64)>,
    pub(crate) mode: StepOverMode,
    /// The step-over protocol's state (seed 000), driven by `resume`.
    pub(crate) protocol: Protocol,
    pub(crate) exit: Option<StopEvent>,
    /// Registers of the thread a `StopHook` is being asked about (pc rewound to the site),
    /// so that the hook reads them without a kernel call or a write-back.
    pub(crate) regs_cache: std::cell::Cell<Option<(Tid, Regs)>>,
    /// Serial execution (replay): only this thread runs when the program resumes.
    pub(crate) serial: Option<Tid>,
    /// Number of step-overs done by each strategy (displaced, inline), for tests and benchmarks.
    pub stats: StepOverStats,
    /// Where the program's code runs elsewhere (see [`crate::codemap`]).
    pub(crate) code: Option<std::sync::Arc<dyn crate::CodeMap>>,
}

/// Counters of how breakpoints were stepped over.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StepOverStats {
    /// Through a relocated copy or an emulated call.
    pub displaced: u64,
    /// By lifting the trap and single-stepping with the others stopped.
    pub inline: u64,
}

impl Inferior {
    /// Starts `program` stopped before its first instruction (at the exec event), with ASLR
    /// off, and pinned with the tracer to the tracer's current CPU when `pin` is set.
    pub fn spawn(program: &Path, args: &[&OsStr], pin: bool) -> Result<Inferior, ControlError> {
        let opts = SpawnOptions {
            disable_aslr: true,
            cpu: pin.then(hindsight_ptrace::thread::current_cpu),
            ..Default::default()
        };
        let tid = hindsight_ptrace::spawn(program, args, &opts)?;
        let mem = ProcessMemory::open(tid.0)?;
        Ok(Inferior::spawn_adopted(tid.0, mem))
    }

    /// Starts a program with the given spawn options (recording/replay set `trap_syscalls`
    /// and `trap_rdtsc`), stopped at its exec.
    pub fn spawn_with(
        program: &Path,
        args: &[&OsStr],
        opts: &SpawnOptions,
    ) -> Result<Inferior, ControlError> {
        let tid = hindsight_ptrace::spawn(program, args, opts)?;
        let mem = ProcessMemory::open(tid.0)?;
        Ok(Inferior::spawn_adopted(tid.0, mem))
    }

    /// Takes over a process that is already traced by us with our options and stopped (a
    /// child created while replaying its parent).
    pub fn adopt(pid: i32) -> Result<Inferior, ControlError> {
        let mem = ProcessMemory::open(pid)?;
        Ok(Inferior::spawn_adopted(pid, mem))
    }

    fn spawn_adopted(pid: i32, mem: ProcessMemory) -> Inferior {
        Inferior {
            pid,
            mem,
            threads: vec![Thread::new(Tid(pid), 1)],
            next_num: 2,
            sites: SiteTable::default(),
            debugregs: DebugRegs::default(),
            pending: VecDeque::new(),
            early_stops: HashSet::new(),
            after_step: Default::default(),
            entered_handler: None,
            scratch: Vec::new(),
            mode: StepOverMode::Displaced,
            protocol: Protocol::new(Strategy::Displaced),
            exit: None,
            regs_cache: std::cell::Cell::new(None),
            serial: None,
            stats: StepOverStats::default(),
            code: None,
        }
    }

    /// Tells where the program's code runs elsewhere (None: nowhere). The replayer sets it
    /// again whenever the patched code changes.
    pub fn set_code_map(&mut self, code: Option<std::sync::Arc<dyn crate::CodeMap>>) {
        self.code = code;
    }

    /// The program address for a thread at `pc` (itself outside patched code).
    pub fn logical_pc(&self, pc: u64) -> u64 {
        match &self.code {
            Some(c) => c.logical(pc).unwrap_or(pc),
            None => pc,
        }
    }

    /// Whether a single-step of `tid` delivered a signal since this was last asked: the
    /// thread stood at the first instruction of the signal's handler then, whose frame (the
    /// return address, then the `ucontext` of the interrupted code) was at its stack
    /// pointer. (One step of the program can be several single-steps: a replay steps on
    /// through hindsight's own code.)
    pub fn take_stepped_into_handler(&mut self, tid: Tid) -> bool {
        if self.entered_handler == Some(tid) {
            self.entered_handler = None;
            return true;
        }
        false
    }

    /// Where the instruction at program address `addr` runs.
    pub fn real_pc(&self, addr: u64) -> u64 {
        match &self.code {
            Some(c) => c.real(addr),
            None => addr,
        }
    }

    /// Whether a thread at `pc` stands at a program instruction (not in the machinery of
    /// patched code: counting code, a jump between trampoline and program, an agent stub).
    pub fn at_program_insn(&self, pc: u64) -> bool {
        self.code.as_ref().is_none_or(|c| c.logical(pc).is_some())
    }

    /// Serial execution: when `Some(tid)`, a resume lets only that thread run (the others stay
    /// stopped, and a new thread stays stopped at its first stop). Replay runs threads one at
    /// a time in the recorded order this way.
    pub fn set_serial(&mut self, tid: Option<Tid>) {
        self.serial = tid;
    }

    /// [`Inferior::add_thread`] under a given number (a copy of a process keeps the numbers
    /// its threads had); later threads are numbered after it and after `next`.
    pub fn add_thread_numbered(&mut self, tid: Tid, num: u32, next: u32) -> u32 {
        self.next_num = num;
        let n = self.add_thread(tid);
        self.next_num = self.next_num.max(next);
        n
    }

    /// The number the next new thread will get.
    pub fn next_thread_number(&self) -> u32 {
        self.next_num
    }

    /// Registers a thread that the caller saw being created (its first stop already
    /// reaped), stopped. Returns its gdb number.
    pub fn add_thread(&mut self, tid: Tid) -> u32 {
        if let Some(t) = self.thread(tid) {
            return t.num;
        }
        let num = self.next_num;
        self.next_num += 1;
        let mut t = Thread::new(tid, num);
        t.announced = true;
        t.state = ThreadState::Stopped;
        if let Ok(r) = tid.regs() {
            t.pthread = r.0.fs_base;
        }
        if self.debugregs.dr7 != 0 {
            let _ = self.apply_debugregs(tid);
        }
        self.threads.push(t);
        num
    }

    /// Forgets that `tid` trapped at a breakpoint (the caller handled that hit itself): on the
    /// next resume it is not stepped over a site it is not at.
    pub fn forget_trap(&mut self, tid: Tid) {
        let _ = self
            .protocol
            .handle(Event::Gone(hindsight_breakpoints::stepover::Tid(
                tid.0 as u32,
            )));
    }

    /// Forgets a thread that the caller saw exit (reaped).
    pub fn remove_thread(&mut self, tid: Tid) {
        let _ = self
            .protocol
            .handle(Event::Gone(hindsight_breakpoints::stepover::Tid(
                tid.0 as u32,
            )));
        self.threads.retain(|t| t.tid != tid);
    }

    /// The process executed a new program (the caller reaped the exec event): one thread is
    /// left and every site went with the old memory.
    pub fn reset_after_exec(&mut self, tid: Tid) -> Result<(), ControlError> {
        self.on_exec_public(tid)
    }

    /// Records the process's end (the caller reaped it).
    pub fn set_exited(&mut self, how: StopEvent) {
        self.threads.clear();
        self.pending.clear();
        self.exit = Some(how);
    }

    /// The process id.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// How the process ended, once it has.
    pub fn exit_status(&self) -> Option<&StopEvent> {
        self.exit.as_ref()
    }

    /// True while the process exists.
    pub fn is_alive(&self) -> bool {
        self.exit.is_none()
    }

    /// Chooses the step-over strategy.
    pub fn set_step_over_mode(&mut self, mode: StepOverMode) {
        self.mode = mode;
        self.protocol = Protocol::new(match mode {
            StepOverMode::Displaced => Strategy::Displaced,
            StepOverMode::NoSwitch => Strategy::NoSwitch,
        });
    }

    /// The threads, in gdb's numbering order.
    pub fn threads(&self) -> Vec<ThreadInfo> {
        self.threads
            .iter()
            .map(|t| ThreadInfo {
                num: t.num,
                tid: t.tid,
                // The main thread's TCB is set up by the dynamic loader after we first saw
                // it: read it when asked.
                pthread: if t.pthread == 0 && t.state == ThreadState::Stopped {
                    t.tid.regs().map(|r| r.0.fs_base).unwrap_or(0)
                } else {
                    t.pthread
                },
            })
            .collect()
    }

    pub(crate) fn thread_mut(&mut self, tid: Tid) -> Option<&mut Thread> {
        self.threads.iter_mut().find(|t| t.tid == tid)
    }

    pub(crate) fn thread(&self, tid: Tid) -> Option<&Thread> {
        self.threads.iter().find(|t| t.tid == tid)
    }

    fn stopped(&self, tid: Tid) -> Result<Tid, ControlError> {
        match self.thread(tid) {
            Some(t) if t.state == ThreadState::Stopped => Ok(tid),
            Some(_) => Err(ControlError::NoThread(format!("{} is running", tid.0))),
            None => Err(ControlError::NoThread(tid.0.to_string())),
        }
    }

    /// General registers of a stopped thread, as the program has them (the pc is a program
    /// address, see [`crate::codemap`]).
    pub fn regs(&self, tid: Tid) -> Result<Regs, ControlError> {
        let mut r = self.raw_regs(tid)?;
        r.set_pc(self.logical_pc(r.pc()));
        Ok(r)
    }

    /// General registers of a stopped thread as the CPU has them (its pc may be in code the
    /// program's was moved to).
    pub fn raw_regs(&self, tid: Tid) -> Result<Regs, ControlError> {
        if let Some((t, r)) = self.regs_cache.get() {
            if t == tid {
                return Ok(r);
            }
        }
        Ok(self.stopped(tid)?.regs()?)
    }

    /// Writes the general registers of a stopped thread (a program address as pc is moved to
    /// where that instruction runs; the pc it stands at is left as it is).
    pub fn set_regs(&mut self, tid: Tid, regs: &Regs) -> Result<(), ControlError> {
        let tid = self.stopped(tid)?;
        let mut r = *regs;
        if self.code.is_some() {
            let now = tid.regs()?.pc();
            r.set_pc(if self.logical_pc(now) == regs.pc() {
                now
            } else {
                self.real_pc(regs.pc())
            });
        }
        Ok(tid.set_regs(&r)?)
    }

    /// Writes the general registers of a stopped thread as the CPU is to have them (no
    /// translation of the pc).
    pub fn set_raw_regs(&mut self, tid: Tid, regs: &Regs) -> Result<(), ControlError> {
        Ok(self.stopped(tid)?.set_regs(regs)?)
    }

    /// x87/SSE registers of a stopped thread.
    pub fn fp_regs(&self, tid: Tid) -> Result<FpRegs, ControlError> {
        Ok(self.stopped(tid)?.fp_regs()?)
    }

    /// The thread's name, as `info threads` shows it.
    pub fn thread_name(&self, tid: Tid) -> Option<String> {
        tid.name(self.pid)
    }

    /// Reads program memory as the program sees it: planted int3s show their original bytes.
    pub fn read_memory(&self, addr: u64, buf: &mut [u8]) -> Result<(), ControlError> {
        self.mem.read(addr, buf)?;
        self.sites.unmask(addr, buf);
        if let Some(c) = &self.code {
            c.unpatch(addr, buf);
        }
        Ok(())
    }

    /// Reads memory through the int3s (what the CPU executes), for zombie classification.
    pub fn read_raw_byte(&self, addr: u64) -> Result<u8, ControlError> {
        let mut b = [0u8; 1];
        self.mem.read(addr, &mut b)?;
        Ok(b[0])
    }

    /// Writes program memory. (Writing over a planted site is refused: the site would hide it.)
    pub fn write_memory(&self, addr: u64, data: &[u8]) -> Result<(), ControlError> {
        let end = addr.saturating_add(data.len() as u64);
        if self.sites.addresses().any(|a| a >= addr && a < end) {
            return Err(ControlError::Insert(format!(
                "Cannot write to {addr:#x}: a breakpoint is planted there"
            )));
        }
        Ok(self.mem.write(addr, data)?)
    }

    /// Plants (or shares) the int3 at `addr`, and plans how threads will step over it.
    /// Every thread is stopped (the invariant between resumes), which planning needs.
    pub fn insert_site(&mut self, addr: u64) -> Result<(), ControlError> {
        let addr = self.real_pc(addr);
        let fresh = self.sites.get(addr).is_none();
        self.sites.insert(&self.mem, addr)?;
        if fresh {
            let plan = match self.threads.first().map(|t| t.tid) {
                Some(tid) => self.plan_step_over(tid, addr).unwrap_or(StepPlan::Inline),
                None => StepPlan::Inline,
            };
            self.sites.set_plan(addr, plan);
        }
        Ok(())
    }

    /// A stopped copy of this process, made by an injected fork through thread `tid` (the
    /// copy has that thread only), without our breakpoints: its memory is the program's own.
    /// The copy is traced by us and belongs to no Inferior (a checkpoint).
    pub fn fork_copy(&mut self, tid: Tid) -> Result<Tid, ControlError> {
        let child = hindsight_ptrace::inject::fork_stopped(tid, &self.mem)?;
        let cmem = ProcessMemory::open(child.0)?;
        self.sites.restore_into(&cmem);
        Ok(child)
    }

    /// Plants a site at each of `addrs` that lies in executable memory now (the memory map is
    /// read once); returns the addresses left unplanted, to try again later. A site planted
    /// in memory that is not code yet would be lost when the code is mapped over it: the
    /// loader reserves a library's range read-only first, then maps its text there.
    pub fn insert_sites_in_code(&mut self, addrs: &[u64]) -> Vec<u64> {
        let code = self.code_ranges();
        addrs
            .iter()
            .copied()
            .filter(|&a| {
                let real = self.real_pc(a);
                let in_code = code.iter().any(|&(lo, hi)| lo <= real && real < hi);
                !in_code || self.insert_site(a).is_err()
            })
            .collect()
    }

    /// [lo, hi) of every executable mapping, from /proc/PID/maps.
    fn code_ranges(&self) -> Vec<(u64, u64)> {
        let Ok(maps) = std::fs::read_to_string(format!("/proc/{}/maps", self.pid)) else {
            return Vec::new();
        };
        maps.lines()
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                let (range, perms) = (f.next()?, f.next()?);
                (perms.as_bytes().get(2) == Some(&b'x')).then_some(())?;
                let (lo, hi) = range.split_once('-')?;
                Some((
                    u64::from_str_radix(lo, 16).ok()?,
                    u64::from_str_radix(hi, 16).ok()?,
                ))
            })
            .collect()
    }

    /// Releases one reference to the site at `addr` (restoring memory on the last).
    pub fn remove_site(&mut self, addr: u64) -> Result<(), ControlError> {
        let addr = self.real_pc(addr);
        self.sites.remove(&self.mem, addr)
    }

    /// True when an int3 of ours is planted for program address `addr`.
    pub fn has_site(&self, addr: u64) -> bool {
        self.sites.get(self.real_pc(addr)).is_some()
    }

    /// Sets DR0–DR3 and DR7 in every thread (and in threads created later).
    pub fn set_debug_registers(&mut self, regs: DebugRegs) -> Result<(), ControlError> {
        self.debugregs = regs;
        let tids: Vec<Tid> = self.threads.iter().map(|t| t.tid).collect();
        for tid in tids {
            self.apply_debugregs(tid)?;
        }
        Ok(())
    }

    pub(crate) fn apply_debugregs(&self, tid: Tid) -> Result<(), ControlError> {
        // DR7 off first: the kernel checks each address against the enabled control bits.
        tid.set_debugreg(7, 0)?;
        for (i, a) in self.debugregs.addr.iter().enumerate() {
            tid.set_debugreg(i, *a)?;
        }
        tid.set_debugreg(7, self.debugregs.dr7)?;
        Ok(())
    }

    /// Records that the user was told of a hit of the site at `tid`'s pc although the thread
    /// did not trap there (a step ended on it): it steps over the site when it resumes
    /// instead of reporting the hit a second time.
    pub fn note_hit_reported(&mut self, tid: Tid) -> Result<(), ControlError> {
        let pc = self.raw_regs(tid)?.pc();
        if self.sites.get(pc).is_some() {
            let t = hindsight_breakpoints::stepover::Tid(tid.0 as u32);
            // Out of whatever breakpoint the step left, into this one.
            self.protocol.handle(Event::Gone(t))?;
            self.protocol.handle(Event::Trapped { tid: t, site: pc })?;
        }
        Ok(())
    }

    /// Whether some thread holds a signal that its next resume delivers (a copy of the process
    /// made now would lose it: the signal is ours to pass, not the kernel's).
    pub fn has_pending_signal(&self) -> bool {
        self.threads.iter().any(|t| t.pending_signal != 0)
    }

    /// A stopped thread was moved elsewhere (its registers set by the caller): a stop that its
    /// last step left queued for its next resume (a faulting instruction's signal) no longer
    /// holds, and is dropped.
    pub fn moved(&mut self, tid: Tid) {
        self.after_step.remove(&tid);
    }

    /// Sets the signal a stopped thread receives when it resumes (0: none). gdb's `signal 0`.
    pub fn set_pending_signal(&mut self, tid: Tid, signal: i32) {
        if let Some(t) = self.thread_mut(tid) {
            t.pending_signal = signal;
        }
    }

    /// Kills the process and reaps it. Idempotent.
    pub fn kill(&mut self) {
        if self.exit.is_some() {
            return;
        }
        unsafe {
            libc::kill(self.pid, libc::SIGKILL);
        }
        // Reap every thread so that no zombie stays behind.
        loop {
            match hindsight_ptrace::wait_any() {
                Ok((tid, WaitEvent::Exited(_) | WaitEvent::Killed(_))) if tid.0 == self.pid => {
                    break
                }
                Ok(_) => continue,
                Err(_) => break,
            }
        }
        self.threads.clear();
        self.exit = Some(StopEvent::Killed(libc::SIGKILL));
    }
}

impl Drop for Inferior {
    fn drop(&mut self) {
        self.kill();
    }
}
