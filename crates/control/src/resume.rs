//! Resuming the program and deciding, event by event, whether it stops.
//!
//! Kernel surprises handled here:
//! - After `PTRACE_INTERRUPT`, a thread that stopped for another reason first still owes the
//!   interrupt: it reports a `PTRACE_EVENT_STOP` soon after its next resume. Such a stop of a
//!   thread we are not stopping is spurious and the thread is simply resumed.
//! - A new thread's first stop and its creator's `PTRACE_EVENT_CLONE` come in either order.
//! - An int3 leaves the pc one byte past the trap (`si_code == SI_KERNEL`); a single-step trap
//!   has `TRAP_TRACE`; a debug-register hit has `TRAP_HWBKPT` and sets DR6's low bits.
//! - `waitpid` reports the exit of the thread-group leader only after every other thread is
//!   gone, so the leader's exit is the process's end.

use hindsight_ptrace::{Regs, Stop, Tid, WaitEvent};

use hindsight_breakpoints::displaced::{Plan, SLOT_SIZE};
use hindsight_breakpoints::stepover::{AtSite, Command, Event, Tid as PTid};
use hindsight_breakpoints::table::{classify_trap, TrapKind};

use crate::error::ControlError;
use crate::event::{Notification, StopEvent, StopHook};
use crate::inferior::{Inferior, StepOverMode};
use crate::sites::StepPlan;
use crate::threads::{Thread, ThreadState};

const SI_KERNEL: i32 = 0x80;
const TRAP_TRACE: i32 = 2;
const TRAP_HWBKPT: i32 = 4;
/// si_code of the trap a step reports at a syscall's exit.
const TRAP_BRKPT: i32 = 1;
/// DR6 bit of a single-step.
const DR6_BS: u64 = 1 << 14;
/// si_code of the trap a step reports when it delivered a signal: the kernel sets up the
/// handler's frame and stops before the handler's first instruction (`ptrace_notify`, whose
/// si_code is the stop's code, SIGTRAP), without a single-step trap in DR6.
const STEPPED_INTO_HANDLER: i32 = libc::SIGTRAP;
const SCRATCH_PAGE: u64 = 4096;
/// Signals that do not stop the program, given to it one after another in one step.
const MAX_QUIET_SIGNALS: usize = 16;
/// `syscall`.
const SYSCALL_INSN: [u8; 2] = [0x0f, 0x05];
/// The trap flag (EFLAGS.TF).
const EFLAGS_TF: u64 = 0x100;

/// Where register `reg` (a `libc::REG_*` index) of the code a signal interrupted is saved,
/// for a thread at the first instruction of the signal's handler with stack pointer `sp`:
/// the kernel's frame starts there (the handler's return address, then the `ucontext`).
pub fn saved_register_in_handler_frame(sp: u64, reg: i32) -> u64 {
    sp + 8 + std::mem::offset_of!(libc::ucontext_t, uc_mcontext) as u64 + 8 * reg as u64
}

/// Kernel surprise: `syscall` copies RFLAGS into r11, trap flag included, so a `syscall`
/// that was single-stepped leaves TF in the program's r11 (and in a signal frame built at
/// its end) where a run without a debugger has none: the step is made invisible by taking
/// TF out of r11. (Whether the program had set TF itself cannot be told: once hindsight has
/// written registers read during a step, the kernel shows the step's TF as the program's.
/// Programs that trace themselves with TF are left aside.)
fn hide_trap_flag_in_r11(tid: Tid) -> Result<(), ControlError> {
    let mut r = tid.regs()?;
    if r.0.r11 & EFLAGS_TF != 0 {
        r.0.r11 &= !EFLAGS_TF;
        tid.set_regs(&r)?;
    }
    Ok(())
}

/// How a resume moves the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resume {
    /// Every thread runs.
    Continue,
    /// Only this thread executes one instruction; the others stay stopped.
    Step(Tid),
}

impl Inferior {
    /// Resumes the program and returns at the next stop that the hook (or the kind of event)
    /// says is one. Every thread is stopped again when this returns.
    pub fn resume(
        &mut self,
        how: Resume,
        hook: &mut dyn StopHook,
    ) -> Result<StopEvent, ControlError> {
        if self.exit.is_some() {
            return Err(ControlError::NotRunning);
        }
        if let Resume::Step(tid) = how {
            return self.step_program_insn(tid, hook);
        }
        let stop = self.resume_all(hook)?;
        self.settle(&stop)?;
        Ok(stop)
    }

    fn resume_all(&mut self, hook: &mut dyn StopHook) -> Result<StopEvent, ControlError> {
        self.flush_new_threads(hook);
        // Stops that were collected while stopping everyone last time come first, before any
        // thread moves: one of them may be the next stop to report.
        while let Some((tid, ev)) = self.pending.pop_front() {
            if let Some(stop) = self.handle(tid, ev, hook)? {
                return Ok(stop);
            }
        }
        self.resume_ready()?;
        loop {
            // An inline step-over stops everyone and may queue stops: those come first.
            let (tid, ev) = match self.pending.pop_front() {
                Some(p) => p,
                None => hindsight_ptrace::wait_any()?,
            };
            if let Some(stop) = self.handle(tid, ev, hook)? {
                return Ok(stop);
            }
        }
    }

    /// Like [`Inferior::resume`] with `Resume::Continue`, but `until` is asked while the
    /// program runs how long to let it run before asking again; when it says None, every
    /// thread is stopped where it is and `StopEvent::Interrupted` returned. (Replay uses it to
    /// run a thread up to a CPU time: the tracer sleeps meanwhile, which leaves the CPU to the
    /// program.)
    pub fn resume_polled(
        &mut self,
        hook: &mut dyn StopHook,
        until: &mut dyn FnMut() -> Option<std::time::Duration>,
    ) -> Result<StopEvent, ControlError> {
        let stop = self.resume_polled_all(hook, until)?;
        self.settle(&stop)?;
        Ok(stop)
    }

    /// Steps every thread that a stop left in the middle of moved code (see
    /// [`crate::codemap`]) on to the next program instruction, so that what the front end
    /// reads is the program's. A stop of another kind on the way is queued for the next
    /// resume.
    fn settle(&mut self, stop: &StopEvent) -> Result<(), ControlError> {
        if self.code.is_none() {
            return Ok(());
        }
        let tids: Vec<Tid> = match stop {
            StopEvent::Exited(_) | StopEvent::Killed(_) => return Ok(()),
            _ => self
                .threads
                .iter()
                .filter(|t| t.state == ThreadState::Stopped)
                .map(|t| t.tid)
                .collect(),
        };
        for tid in tids {
            for _ in 0..64 {
                let Ok(r) = tid.regs() else { break };
                let trapped = self.code.as_ref().is_some_and(|c| c.is_trap(r.pc()));
                if trapped || self.at_program_insn(r.pc()) || self.after_step.contains_key(&tid) {
                    break;
                }
                let pending = self.thread(tid).map(|t| t.pending_signal).unwrap_or(0);
                if !self.single_step_raw(tid)? {
                    break;
                }
                // A trap of the moved code's own (the counter's) is not the program's: it is
                // reported at the next resume as the stop it is.
                if let Some(t) = self.thread_mut(tid) {
                    if t.pending_signal == libc::SIGTRAP && pending != libc::SIGTRAP {
                        t.pending_signal = pending;
                        self.after_step
                            .insert(tid, WaitEvent::Stopped(Stop::Signal(libc::SIGTRAP)));
                    }
                }
            }
        }
        Ok(())
    }

    fn resume_polled_all(
        &mut self,
        hook: &mut dyn StopHook,
        until: &mut dyn FnMut() -> Option<std::time::Duration>,
    ) -> Result<StopEvent, ControlError> {
        if self.exit.is_some() {
            return Err(ControlError::NotRunning);
        }
        self.flush_new_threads(hook);
        while let Some((tid, ev)) = self.pending.pop_front() {
            if let Some(stop) = self.handle(tid, ev, hook)? {
                return Ok(stop);
            }
        }
        self.resume_ready()?;
        let sigchld = sigchld_fd();
        let mut deadline = until();
        loop {
            let next = match self.pending.pop_front() {
                Some(p) => Some(p),
                None => hindsight_ptrace::wait::poll_any()?,
            };
            if let Some((tid, ev)) = next {
                if let Some(stop) = self.handle(tid, ev, hook)? {
                    return Ok(stop);
                }
                continue;
            }
            let Some(d) = deadline else {
                self.stop_all()?;
                return Ok(StopEvent::Interrupted);
            };
            // Nothing to reap: sleep until a child changes state (SIGCHLD, read through a
            // signalfd: no race with the wait above) or the time is up.
            if !wait_sigchld(sigchld, d) {
                deadline = until();
            }
        }
    }

    /// Stopped threads with nothing queued: those a resume lets go (in serial mode, only the
    /// chosen one).
    fn ready_threads(&self) -> Vec<Tid> {
        let queued: Vec<Tid> = self.pending.iter().map(|(t, _)| *t).collect();
        self.threads
            .iter()
            .filter(|t| t.state == ThreadState::Stopped && !queued.contains(&t.tid))
            .filter(|t| self.serial.is_none_or(|s| s == t.tid))
            .map(|t| t.tid)
            .collect()
    }

    /// Lets every ready thread run: the step-over protocol gets the threads whose pc is at a
    /// planted site (it steps over those that trapped there; the others trap when they run).
    fn resume_ready(&mut self) -> Result<(), ControlError> {
        let mut at_sites = Vec::new();
        for tid in self.ready_threads() {
            let Ok(r) = tid.regs() else { continue };
            if let Some(site) = self.sites.get(r.pc()) {
                at_sites.push(AtSite {
                    tid: PTid(tid.0 as u32),
                    site: r.pc(),
                    displaceable: site.plan.is_some_and(|p| p != StepPlan::Inline),
                });
            }
        }
        let commands = self.protocol.handle(Event::Resume { at_sites })?;
        self.execute(commands, None)
    }

    fn cont(&mut self, tid: Tid) -> Result<(), ControlError> {
        let Some(t) = self.thread_mut(tid) else {
            return Ok(());
        };
        let sig = std::mem::take(&mut t.pending_signal);
        t.state = ThreadState::Running;
        match tid.cont(sig) {
            Err(e) if e.is_gone() => Ok(()),
            r => Ok(r?),
        }
    }

    /// A hit that does not stop the program: thread `tid` (pc at the site, registers `regs`
    /// not yet written back) gets past the site while the others run on.
    fn pass_on(&mut self, tid: Tid, addr: u64, regs: Regs) -> Result<(), ControlError> {
        let displaceable = self
            .sites
            .get(addr)
            .and_then(|s| s.plan)
            .is_some_and(|p| p != StepPlan::Inline);
        let commands = self.protocol.handle(Event::PassOn(AtSite {
            tid: PTid(tid.0 as u32),
            site: addr,
            displaceable,
        }))?;
        if !displaceable {
            // Inline stepping starts from the site itself.
            tid.set_regs(&regs)?;
        }
        self.execute(commands, Some((tid, regs)))
    }

    /// Executes the protocol's commands. `regs`: a thread's registers already in hand (pc at
    /// its site). Only `Displaced` and `NoSwitch` drive a live process: while a thread
    /// single-steps over a lifted site nothing else runs, so the step is waited for here.
    fn execute(
        &mut self,
        commands: Vec<Command>,
        regs: Option<(Tid, Regs)>,
    ) -> Result<(), ControlError> {
        for command in commands {
            match command {
                Command::ReportHit { .. } => {}
                Command::StopAll => {
                    self.stop_all()?;
                    // Everyone is stopped: the protocol now takes the threads at sites.
                    return self.resume_ready();
                }
                Command::Lift(site) => self.sites.lift(&self.mem, site)?,
                Command::Plant(site) => self.sites.replant(&self.mem, site)?,
                Command::RunDisplaced(t, site) => {
                    let tid = Tid(t.0 as i32);
                    let mut r = match regs {
                        Some((rt, r)) if rt == tid => r,
                        _ => tid.regs()?,
                    };
                    match self.sites.get(site).and_then(|s| s.plan) {
                        Some(StepPlan::Relocated { slot }) => r.set_pc(slot),
                        Some(StepPlan::EmulateCall {
                            target,
                            return_addr,
                        }) => {
                            r.0.rsp -= 8;
                            self.mem.write(r.0.rsp, &return_addr.to_le_bytes())?;
                            r.set_pc(target);
                        }
                        _ => {}
                    }
                    tid.set_regs(&r)?;
                    self.stats.displaced += 1;
                }
                Command::SingleStep(t) => {
                    let tid = Tid(t.0 as i32);
                    self.stats.inline += 1;
                    let stepped = self.single_step_raw(tid);
                    let next = match stepped {
                        Ok(true) => self.protocol.handle(Event::StepDone(t))?,
                        _ => self.protocol.handle(Event::Gone(t))?,
                    };
                    // Re-plant and resume even if the step failed, then report the failure.
                    let done = self.execute(next, None);
                    stepped?;
                    done?;
                }
                Command::Resume(t) => self.cont_or_report(Tid(t.0 as i32))?,
                Command::ResumeAll => {
                    for tid in self.ready_threads() {
                        self.cont_or_report(tid)?;
                    }
                }
                Command::ResumeAllExcept(t) => {
                    for tid in self.ready_threads() {
                        if tid.0 as u32 != t.0 {
                            self.cont_or_report(tid)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Decides how to step over `addr` without lifting the trap, mapping scratch memory
    /// within reach of the code when needed. Every thread must be stopped: mapping memory
    /// injects a syscall instruction at `tid`'s pc, which no other thread may execute meanwhile.
    pub(crate) fn plan_step_over(&mut self, tid: Tid, addr: u64) -> Result<StepPlan, ControlError> {
        if self.mode == StepOverMode::NoSwitch {
            return Ok(StepPlan::Inline);
        }
        let mut code = [0u8; 16];
        if self.read_memory(addr, &mut code).is_err() {
            return Ok(StepPlan::Inline);
        }
        let Some(slot) = self.scratch_slot(tid, addr)? else {
            return Ok(StepPlan::Inline);
        };

        let plan = match hindsight_breakpoints::displaced::plan(addr, &code, slot) {
            Plan::Relocated { code, .. } => {
                self.mem.write(slot, &code)?;
                StepPlan::Relocated { slot }
            }
            Plan::EmulateCall {
                target,
                return_addr,
            } => StepPlan::EmulateCall {
                target,
                return_addr,
            },
            Plan::Inline => StepPlan::Inline,
        };
        Ok(plan)
    }

    /// A free scratch slot within ±1 GiB of `addr` (well inside rel32 reach), mapping a new
    /// page through `tid` when none is close enough.
    fn scratch_slot(&mut self, tid: Tid, addr: u64) -> Result<Option<u64>, ControlError> {
        const REACH: u64 = 1 << 30;
        let near = |base: u64| base.abs_diff(addr) < REACH;
        if let Some(page) = self
            .scratch
            .iter_mut()
            .find(|(base, used)| near(*base) && *used + SLOT_SIZE as u64 <= SCRATCH_PAGE)
        {
            let slot = page.0 + page.1;
            page.1 += SLOT_SIZE as u64;
            return Ok(Some(slot));
        }
        // Ask for a page just below the code's 2 MiB region: below the executable there is
        // free space in the usual layout, and the kernel falls back to its own choice.
        let hint = (addr & !0x1f_ffff).saturating_sub(0x20_0000);
        let Some(base) = hindsight_ptrace::inject::map_scratch(tid, &self.mem, hint, SCRATCH_PAGE)?
        else {
            return Ok(None);
        };
        if !near(base) {
            return Ok(None);
        }
        self.scratch.push((base, SLOT_SIZE as u64));
        Ok(Some(base))
    }

    /// Resumes `tid`, unless its last step over a breakpoint ended in a stop of its own (see
    /// `after_step`): then the thread stays stopped and that stop is queued as if it had just
    /// arrived (for a watchpoint, DR6 still holds its bits).
    fn cont_or_report(&mut self, tid: Tid) -> Result<(), ControlError> {
        if let Some(ev) = self.after_step.remove(&tid) {
            self.pending.push_back((tid, ev));
            return Ok(());
        }
        self.cont(tid)
    }

    /// Single-steps `tid` alone. Returns false when the thread vanished meanwhile. Signals that
    /// arrive before the instruction runs are kept for later delivery.
    fn single_step_raw(&mut self, tid: Tid) -> Result<bool, ControlError> {
        loop {
            if let Err(e) = tid.step(0) {
                if e.is_gone() {
                    return Ok(false);
                }
                return Err(e.into());
            }
            match hindsight_ptrace::wait_tid(tid)? {
                WaitEvent::Stopped(Stop::Signal(libc::SIGTRAP)) => {
                    let si = tid.siginfo()?;
                    // The kernel reports a single-step that also hit a watchpoint as one trap:
                    // DR6 tells (bits 0-3), and the hit must not be lost with the step.
                    if self.debugregs.dr7 != 0 && tid.debugreg(6).unwrap_or(0) & 0xf != 0 {
                        self.after_step
                            .insert(tid, WaitEvent::Stopped(Stop::Signal(libc::SIGTRAP)));
                    }
                    // Kernel surprise (seen in VMs, about once in a few hundred thousand
                    // steps): a completed single-step can report TRAP_BRKPT, its DR6 having
                    // lost the single-step bit. Any debug trap of the kernel's (si_code 1 to
                    // 4) is the step's.
                    if (TRAP_BRKPT..=TRAP_HWBKPT).contains(&si.si_code) {
                        return Ok(true);
                    }
                    // A SIGTRAP sent by someone: deliver it later.
                    self.set_pending_signal(tid, libc::SIGTRAP);
                    return Ok(true);
                }
                // Kernel surprise: an instruction that faults never completes its step; the
                // fault is raised again at every step. The fault is the step's end: it is
                // reported like any signal stop (the thread stays at the instruction).
                WaitEvent::Stopped(Stop::Signal(
                    sig @ (libc::SIGSEGV | libc::SIGBUS | libc::SIGFPE | libc::SIGILL),
                )) => {
                    self.after_step
                        .insert(tid, WaitEvent::Stopped(Stop::Signal(sig)));
                    return Ok(true);
                }
                WaitEvent::Stopped(Stop::Signal(sig)) => self.set_pending_signal(tid, sig),
                WaitEvent::Stopped(Stop::Clone) => {
                    self.on_clone(tid)?;
                }
                WaitEvent::Stopped(Stop::Fork) => {
                    self.on_fork(tid, false)?;
                }
                WaitEvent::Stopped(Stop::Vfork) => {
                    self.on_fork(tid, true)?;
                }
                // Kernel surprise (replay): the instruction under the breakpoint is a syscall,
                // and its seccomp stop comes in the middle of the step. The syscall belongs to
                // the replayer: the step ends here and the stop is reported as it is.
                WaitEvent::Stopped(Stop::Seccomp) => {
                    hide_trap_flag_in_r11(tid)?;
                    self.after_step
                        .insert(tid, WaitEvent::Stopped(Stop::Seccomp));
                    return Ok(true);
                }
                WaitEvent::Stopped(_) => {}
                ev @ (WaitEvent::Exited(_) | WaitEvent::Killed(_)) => {
                    self.pending.push_back((tid, ev));
                    return Ok(false);
                }
            }
        }
    }

    /// Whether `tid`, stepped from `pc`, executed the `syscall` there (it stands after it).
    fn stepped_a_syscall(&self, tid: Tid, pc: u64) -> bool {
        let mut code = [0u8; 2];
        tid.regs().is_ok_and(|r| r.pc() == pc.wrapping_add(2))
            && self.mem.read(pc, &mut code).is_ok()
            && code == SYSCALL_INSN
    }

    /// Kernel surprise: a signal delivered by a single-step saves the step's trap flag in the
    /// handler's frame (the `eflags` of its `ucontext`), where the program can read it and
    /// `rt_sigreturn` would restore it. `tid` stands at the handler's first instruction. As
    /// in [`hide_trap_flag_in_r11`], the step is made invisible.
    fn hide_trap_flag_in_frame(&mut self, tid: Tid) -> Result<(), ControlError> {
        let eflags = saved_register_in_handler_frame(tid.regs()?.sp(), libc::REG_EFL);
        let mut word = [0u8; 8];
        if self.mem.read(eflags, &mut word).is_err() {
            return Ok(());
        }
        let flags = u64::from_le_bytes(word);
        if flags & EFLAGS_TF != 0 {
            self.mem
                .write(eflags, &(flags & !EFLAGS_TF).to_le_bytes())?;
        }
        Ok(())
    }

    /// `stepi` for one thread: one instruction of the program (in moved code, the machinery
    /// around it is stepped through as well); the others stay stopped.
    fn step_program_insn(
        &mut self,
        tid: Tid,
        hook: &mut dyn StopHook,
    ) -> Result<StopEvent, ControlError> {
        let mut stop = self.step_thread(tid, hook)?;
        for _ in 0..64 {
            if stop != (StopEvent::Stepped { tid }) {
                break;
            }
            let pc = tid.regs()?.pc();
            if self.at_program_insn(pc) {
                break;
            }
            stop = self.step_thread(tid, hook)?;
        }
        Ok(stop)
    }

    /// One machine instruction of one thread; the others stay stopped.
    fn step_thread(
        &mut self,
        tid: Tid,
        hook: &mut dyn StopHook,
    ) -> Result<StopEvent, ControlError> {
        if self.thread(tid).map(|t| t.state) != Some(ThreadState::Stopped) {
            return Err(ControlError::NoThread(tid.0.to_string()));
        }
        let pc = tid.regs()?.pc();
        // A user's single-step executes the instruction under a site without a new hit
        // (gdb's rule), trapped there or not; the front end reports a breakpoint when a
        // step ends *on* a site.
        let at_site = self.sites.get(pc).is_some();
        // The user's step takes the thread out of any breakpoint it was in.
        self.protocol.handle(Event::Gone(PTid(tid.0 as u32)))?;
        if at_site {
            self.sites.lift(&self.mem, pc)?;
        }
        // The pending signal goes with the step, as with a continue: whether a signal is
        // passed was decided when it arrived (`handle SIG pass`), and a replay's recorded
        // signal must be delivered at this very instruction.
        let sig = self
            .thread_mut(tid)
            .map(|t| std::mem::take(&mut t.pending_signal))
            .unwrap_or(0);
        let mut result = tid.step(sig);
        let mut waited = result.map(|_| hindsight_ptrace::wait_tid(tid));
        // Kernel surprise: stepping a thread stopped at a syscall (a seccomp stop, as replay
        // leaves threads) first finishes the syscall and traps at its exit (TRAP_BRKPT)
        // before any instruction runs: step again for the instruction itself.
        if let Ok(Ok(WaitEvent::Stopped(Stop::Signal(libc::SIGTRAP)))) = &waited {
            let at_exit = tid
                .siginfo()
                .map(|si| si.si_code == TRAP_BRKPT)
                .unwrap_or(false);
            if at_exit && tid.regs().map(|r| r.pc() == pc).unwrap_or(false) {
                result = tid.step(0);
                waited = result.map(|_| hindsight_ptrace::wait_tid(tid));
            }
        }
        // A signal that came before the instruction ran and does not stop the program
        // (`handle SIG nostop`) is given to it (or not: `nopass`) by stepping again, as gdb
        // does; the step then ends at its handler's first instruction (see
        // `STEPPED_INTO_HANDLER`) or, without a handler, after the instruction.
        for _ in 0..MAX_QUIET_SIGNALS {
            let Ok(Ok(WaitEvent::Stopped(Stop::Signal(sig)))) = &waited else {
                break;
            };
            let sig = *sig;
            if sig == libc::SIGTRAP || hook.stops_on_signal(sig) {
                break;
            }
            hook.signal_arrived(self, tid, sig);
            let pass = if hook.passes_signal(sig) { sig } else { 0 };
            result = tid.step(pass);
            waited = result.map(|_| hindsight_ptrace::wait_tid(tid));
        }
        if at_site {
            self.sites.replant(&self.mem, pc)?;
        }
        let ev = waited??;
        match ev {
            WaitEvent::Stopped(Stop::Signal(libc::SIGTRAP)) => {
                let si = tid.siginfo()?;
                // A step over a `syscall` traps at the syscall's exit with TRAP_BRKPT (a plain
                // step has TRAP_TRACE, so the common step pays for no look at the code).
                if si.si_code == TRAP_BRKPT && self.stepped_a_syscall(tid, pc) {
                    hide_trap_flag_in_r11(tid)?;
                }
                let dr6 = tid.debugreg(6).unwrap_or(0);
                if dr6 & 0xf != 0 {
                    tid.set_debugreg(6, 0)?;
                    if hook.watchpoint_hit(self, tid, (dr6 & 0xf) as u8) {
                        return Ok(StopEvent::Watchpoint {
                            tid,
                            slots: (dr6 & 0xf) as u8,
                        });
                    }
                    return Ok(StopEvent::Stepped { tid });
                }
                // (A completed step may report TRAP_BRKPT: see `single_step_raw`.)
                if si.si_code == STEPPED_INTO_HANDLER {
                    self.hide_trap_flag_in_frame(tid)?;
                    self.entered_handler = Some(tid);
                }
                if (TRAP_BRKPT..=TRAP_HWBKPT).contains(&si.si_code)
                    || si.si_code == STEPPED_INTO_HANDLER
                    || dr6 & DR6_BS != 0
                {
                    let _ = tid.set_debugreg(6, 0);
                    return Ok(StopEvent::Stepped { tid });
                }
                if si.si_code == SI_KERNEL {
                    // The stepped instruction was an int3 that is not ours.
                    self.set_pending_signal(tid, libc::SIGTRAP);
                }
                Ok(StopEvent::Signal {
                    tid,
                    signal: libc::SIGTRAP,
                })
            }
            WaitEvent::Stopped(Stop::Signal(sig)) => {
                self.set_pending_signal(tid, sig);
                Ok(StopEvent::Signal { tid, signal: sig })
            }
            WaitEvent::Stopped(Stop::Clone) => {
                self.on_clone(tid)?;
                Ok(StopEvent::Stepped { tid })
            }
            // The stepped instruction is a syscall (recording/replay): the caller decides.
            WaitEvent::Stopped(Stop::Seccomp) => {
                hide_trap_flag_in_r11(tid)?;
                Ok(StopEvent::Syscall { tid })
            }
            WaitEvent::Stopped(Stop::Fork) => {
                self.on_fork(tid, false)?;
                Ok(StopEvent::Stepped { tid })
            }
            WaitEvent::Stopped(Stop::Vfork) => {
                self.on_fork(tid, true)?;
                Ok(StopEvent::Stepped { tid })
            }
            WaitEvent::Stopped(_) => Ok(StopEvent::Stepped { tid }),
            WaitEvent::Exited(_) | WaitEvent::Killed(_) => {
                // Process ending during a step: reap everything and report it.
                self.pending.push_back((tid, ev));
                while let Some((t, e)) = self.pending.pop_front() {
                    if let Some(stop) = self.handle(t, e, hook)? {
                        return Ok(stop);
                    }
                }
                loop {
                    let (t, e) = hindsight_ptrace::wait_any()?;
                    if let Some(stop) = self.handle(t, e, hook)? {
                        return Ok(stop);
                    }
                }
            }
        }
    }

    /// Handles one reaped event of a running (or queued) thread. Returns the stop to report,
    /// with every thread stopped, or None when the program goes on.
    fn handle(
        &mut self,
        tid: Tid,
        ev: WaitEvent,
        hook: &mut dyn StopHook,
    ) -> Result<Option<StopEvent>, ControlError> {
        // Threads registered while stopping everyone or stepping inline are announced here.
        self.flush_new_threads(hook);
        // The leader's exit is the process's end, even when the leader left our table early
        // (it called pthread_exit and lingered as a zombie).
        if tid.0 == self.pid && self.thread(tid).is_none() {
            match ev {
                WaitEvent::Exited(code) => return self.on_exit(tid, StopEvent::Exited(code), hook),
                WaitEvent::Killed(sig) => return self.on_exit(tid, StopEvent::Killed(sig), hook),
                WaitEvent::Stopped(_) => {}
            }
        }
        if self.thread(tid).is_none() {
            if let WaitEvent::Stopped(_) = ev {
                self.early_stops.insert(tid);
            }
            return Ok(None);
        }
        if let Some(t) = self.thread_mut(tid) {
            t.state = ThreadState::Stopped;
        }
        match ev {
            WaitEvent::Exited(code) => self.on_exit(tid, StopEvent::Exited(code), hook),
            WaitEvent::Killed(sig) => self.on_exit(tid, StopEvent::Killed(sig), hook),
            WaitEvent::Stopped(stop) => match stop {
                Stop::Clone => {
                    if let Some(child) = self.on_clone(tid)? {
                        self.flush_new_threads(hook);
                        if self.serial.is_none() {
                            self.cont(child)?;
                        }
                    }
                    self.cont(tid)?;
                    Ok(None)
                }
                Stop::Fork | Stop::Vfork => {
                    let pid = self.on_fork(tid, stop == Stop::Vfork)?;
                    hook.notify(Notification::Detached { pid });
                    self.cont(tid)?;
                    Ok(None)
                }
                Stop::Exec => {
                    self.on_exec(tid)?;
                    let path = std::fs::read_link(format!("/proc/{}/exe", self.pid))
                        .map(|p| p.display().to_string())
                        .unwrap_or_default();
                    Ok(Some(StopEvent::Exec {
                        tid: Tid(self.pid),
                        path,
                    }))
                }
                Stop::Signal(libc::SIGTRAP) => self.on_sigtrap(tid, hook),
                Stop::Seccomp => {
                    self.stop_all()?;
                    Ok(Some(StopEvent::Syscall { tid }))
                }
                Stop::Signal(sig) => {
                    if !hook.stops_on_signal(sig) {
                        hook.signal_arrived(self, tid, sig);
                        if hook.passes_signal(sig) {
                            self.set_pending_signal(tid, sig);
                        }
                        self.cont(tid)?;
                        return Ok(None);
                    }
                    // gdb passes a stopping signal on continue, except SIGINT (the user's ^C)
                    // and those that `handle SIG nopass` keeps from the program.
                    if sig != libc::SIGINT && hook.passes_signal(sig) {
                        self.set_pending_signal(tid, sig);
                    }
                    self.stop_all()?;
                    Ok(Some(StopEvent::Signal { tid, signal: sig }))
                }
                // A leftover interrupt, a group stop or a syscall stop: nothing for the user.
                Stop::EventStop(_) | Stop::Exiting | Stop::Syscall => {
                    self.cont(tid)?;
                    Ok(None)
                }
            },
        }
    }

    fn on_sigtrap(
        &mut self,
        tid: Tid,
        hook: &mut dyn StopHook,
    ) -> Result<Option<StopEvent>, ControlError> {
        // The hot path (a breakpoint hit that does not stop) costs four kernel calls: this
        // GETREGS, the hook's reads, one SETREGS and the resume. Without watchpoints, a
        // SIGTRAP that leaves the pc just past one of our int3s is that int3, so the siginfo
        // is only read when there is a doubt.
        let mut regs = tid.regs()?;
        let addr = regs.pc().wrapping_sub(1);
        let ours = self.sites.get(addr).is_some();
        let si_code = if ours && self.debugregs.dr7 == 0 {
            SI_KERNEL
        } else {
            tid.siginfo()?.si_code
        };
        if si_code == SI_KERNEL {
            if ours {
                regs.set_pc(addr);
                // The protocol's breakpoint action for this trap (seed 000's invariant).
                self.protocol.handle(Event::Trapped {
                    tid: PTid(tid.0 as u32),
                    site: addr,
                })?;
                // The hook sees the thread as stopped at the site (pc rewound) without a write.
                self.regs_cache.set(Some((tid, regs)));
                let program_addr = self.logical_pc(addr);
                let stop = hook.breakpoint_hit(self, tid, program_addr);
                self.regs_cache.set(None);
                if stop {
                    tid.set_regs(&regs)?;
                    self.stop_all()?;
                    return Ok(Some(StopEvent::Breakpoint {
                        tid,
                        addr: program_addr,
                    }));
                }
                self.pass_on(tid, addr, regs)?;
                return Ok(None);
            }
            // No site: seed 004's test. An int3 still in memory is the program's own; none
            // means a breakpoint removed while this hit was pending (a zombie): rewind, go on.
            if classify_trap(false, self.read_raw_byte(addr)?) == TrapKind::Zombie {
                regs.set_pc(addr);
                tid.set_regs(&regs)?;
                self.cont(tid)?;
                return Ok(None);
            }
            self.set_pending_signal(tid, libc::SIGTRAP);
            self.stop_all()?;
            return Ok(Some(StopEvent::Signal {
                tid,
                signal: libc::SIGTRAP,
            }));
        }
        let dr6 = tid.debugreg(6).unwrap_or(0);
        if dr6 & 0xf != 0 || si_code == TRAP_HWBKPT {
            tid.set_debugreg(6, 0)?;
            let slots = (dr6 & 0xf) as u8;
            if hook.watchpoint_hit(self, tid, slots) {
                self.stop_all()?;
                return Ok(Some(StopEvent::Watchpoint { tid, slots }));
            }
            self.cont(tid)?;
            return Ok(None);
        }
        if si_code == TRAP_TRACE {
            // A stray single-step trap (e.g. the flag left set by a signal handler): ignore.
            self.cont(tid)?;
            return Ok(None);
        }
        // Kernel surprise: when watchpoint hits come faster than perf allows, perf throttles
        // the watchpoint's event; the hardware still traps, but the kernel no longer says
        // which register fired and reports the trap as an `int1` would: TRAP_BRKPT, nothing
        // in DR6. Such a trap while write watchpoints are armed is a hit of one of them (the
        // hook compares their values, so a slot that did not change is no hit).
        let writes = write_slots(self.debugregs.dr7);
        if si_code == TRAP_BRKPT && writes != 0 {
            if hook.watchpoint_hit(self, tid, writes) {
                self.stop_all()?;
                return Ok(Some(StopEvent::Watchpoint { tid, slots: writes }));
            }
            self.cont(tid)?;
            return Ok(None);
        }
        // Someone sent SIGTRAP (raise, kill): it is the program's.
        if !hook.stops_on_signal(libc::SIGTRAP) {
            self.set_pending_signal(tid, libc::SIGTRAP);
            self.cont(tid)?;
            return Ok(None);
        }
        self.set_pending_signal(tid, libc::SIGTRAP);
        self.stop_all()?;
        Ok(Some(StopEvent::Signal {
            tid,
            signal: libc::SIGTRAP,
        }))
    }

    fn on_exit(
        &mut self,
        tid: Tid,
        how: StopEvent,
        hook: &mut dyn StopHook,
    ) -> Result<Option<StopEvent>, ControlError> {
        if tid.0 == self.pid {
            // The leader is reaped last: the process is gone.
            self.threads.clear();
            self.pending.clear();
            self.exit = Some(how.clone());
            return Ok(Some(how));
        }
        self.protocol.handle(Event::Gone(PTid(tid.0 as u32)))?;
        if let Some(i) = self.threads.iter().position(|t| t.tid == tid) {
            let t = self.threads.remove(i);
            hook.notify(Notification::ThreadExited {
                num: t.num,
                tid,
                pthread: t.pthread,
            });
        }
        Ok(None)
    }

    /// A thread created another: register it, stopped (its first stop may already have come).
    /// Returns the new thread's tid.
    fn on_clone(&mut self, parent: Tid) -> Result<Option<Tid>, ControlError> {
        let child = Tid(parent.event_msg()? as i32);
        if self.thread(child).is_some() {
            return Ok(None);
        }
        let num = self.next_num;
        self.next_num += 1;
        let mut t = Thread::new(child, num);
        t.announced = true;
        if self.early_stops.remove(&child) {
            self.init_new_thread(&mut t)?;
        } else {
            // Its first stop is still to come: wait for it now, so that the thread is under
            // control (debug registers set) before it runs a single instruction.
            match hindsight_ptrace::wait_tid(child)? {
                WaitEvent::Stopped(_) => self.init_new_thread(&mut t)?,
                _ => return Ok(None),
            }
        }
        self.threads.push(t);
        Ok(Some(child))
    }

    fn init_new_thread(&self, t: &mut Thread) -> Result<(), ControlError> {
        t.state = ThreadState::Stopped;
        if let Ok(r) = t.tid.regs() {
            t.pthread = r.0.fs_base;
        }
        if self.debugregs.dr7 != 0 {
            self.apply_debugregs(t.tid)?;
        }
        Ok(())
    }

    /// Tells the hook about threads created since the last call.
    fn flush_new_threads(&mut self, hook: &mut dyn StopHook) {
        for t in self.threads.iter_mut().filter(|t| t.announced) {
            t.announced = false;
            hook.notify(Notification::NewThread {
                num: t.num,
                tid: t.tid,
                pthread: t.pthread,
            });
        }
    }

    /// The program forked: clean our int3s out of the child's memory and let it go.
    fn on_fork(&mut self, parent: Tid, vfork: bool) -> Result<i32, ControlError> {
        let child = Tid(parent.event_msg()? as i32);
        if !self.early_stops.remove(&child) {
            hindsight_ptrace::wait_tid(child)?;
        }
        // A vfork child shares our memory until it execs: leave the sites alone then.
        if !vfork {
            if let Ok(mem) = hindsight_ptrace::ProcessMemory::open(child.0) {
                self.sites.restore_into(&mem);
            }
        }
        let _ = child.set_debugreg(7, 0);
        let _ = child.detach(0);
        Ok(child.0)
    }

    pub(crate) fn on_exec_public(&mut self, tid: Tid) -> Result<(), ControlError> {
        self.on_exec(tid)
    }

    /// The process executed a new program: one thread is left, memory is new.
    fn on_exec(&mut self, tid: Tid) -> Result<(), ControlError> {
        self.threads.retain(|t| t.tid == tid || t.tid.0 == self.pid);
        if let Some(t) = self.threads.first_mut() {
            t.tid = Tid(self.pid);
            t.state = ThreadState::Stopped;
        }
        self.mem = hindsight_ptrace::ProcessMemory::open(self.pid)?;
        self.sites.forget_all();
        self.scratch.clear();
        Ok(())
    }

    /// Stops every running thread (all-stop). Stops that are not our interrupt are queued.
    pub(crate) fn stop_all(&mut self) -> Result<(), ControlError> {
        // Kernel surprise: a thread-group leader that called pthread_exit stays a zombie,
        // reports nothing until the whole process exits, and never stops for an interrupt.
        // Waiting for it would hang: it leaves the table instead.
        let pid = self.pid;
        if self
            .threads
            .iter()
            .any(|t| t.tid.0 == pid && t.state == ThreadState::Running)
            && is_zombie(pid, pid)
        {
            self.threads.retain(|t| t.tid.0 != pid);
        }
        for t in self.threads.iter_mut() {
            if t.state == ThreadState::Running {
                match t.tid.interrupt() {
                    Ok(()) => t.state = ThreadState::Stopping,
                    Err(e) if e.is_gone() => t.state = ThreadState::Stopping,
                    Err(e) => return Err(e.into()),
                }
            }
        }
        while self
            .threads
            .iter()
            .any(|t| t.state == ThreadState::Stopping)
        {
            let (tid, ev) = hindsight_ptrace::wait_any()?;
            let Some(state) = self.thread(tid).map(|t| t.state) else {
                if let WaitEvent::Stopped(_) = ev {
                    self.early_stops.insert(tid);
                }
                continue;
            };
            if let Some(t) = self.thread_mut(tid) {
                t.state = ThreadState::Stopped;
            }
            match ev {
                WaitEvent::Stopped(Stop::EventStop(_)) if state == ThreadState::Stopping => {}
                WaitEvent::Stopped(Stop::Clone) => {
                    // The new thread stays stopped too; it is announced on the next resume.
                    self.on_clone(tid)?;
                }
                other => self.pending.push_back((tid, other)),
            }
        }
        Ok(())
    }
}

/// A signalfd for SIGCHLD (blocked in hindsight from the first call on: the kernel sends it
/// for every stop of a tracee, and `waitpid` reaps them), or -1 if it cannot be had.
fn sigchld_fd() -> i32 {
    static FD: std::sync::OnceLock<i32> = std::sync::OnceLock::new();
    *FD.get_or_init(|| {
        // SAFETY: plain signal-mask and signalfd calls on a zeroed, then filled, sigset.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGCHLD);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK)
        }
    })
}

/// Waits up to `d` for a SIGCHLD; true if one came (drained).
fn wait_sigchld(fd: i32, d: std::time::Duration) -> bool {
    if fd < 0 {
        std::thread::sleep(d);
        return false;
    }
    let ts = libc::timespec {
        tv_sec: d.as_secs() as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    };
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, a valid timespec; the read drains into a local buffer.
    unsafe {
        let n = libc::ppoll(&mut pfd, 1, &ts, std::ptr::null());
        if n <= 0 {
            return false;
        }
        let mut buf = [0u8; 128 * 16];
        while libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) > 0 {}
        true
    }
}

/// True when thread `tid` of process `pid` is a zombie (state `Z` in /proc).
fn is_zombie(pid: i32, tid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat"))
        .ok()
        .and_then(|s| {
            // The state follows the command name, which is in parentheses and may contain
            // spaces: take the first field after the last ')'.
            let after = &s[s.rfind(')')? + 1..];
            after.split_whitespace().next().map(|f| f == "Z")
        })
        .unwrap_or(false)
}

/// The debug registers that DR7 enables as write watchpoints (RW = 01), as DR6-style bits.
fn write_slots(dr7: u64) -> u8 {
    (0..4)
        .filter(|i| dr7 & (3 << (2 * i)) != 0 && (dr7 >> (16 + 4 * i)) & 3 == 1)
        .fold(0, |m, i| m | 1 << i)
}
