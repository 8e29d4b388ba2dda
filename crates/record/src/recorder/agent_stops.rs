//! The recorder's stops as the in-process agent changes them (see [`crate::agent`]): the
//! buffer drained before a thread's event, and the stops that find a thread inside the
//! agent (a signal, a preemption, the desched signal of a call that blocks) turned into
//! what they are for, outside it.

use hindsight_agent::abi;
use hindsight_ptrace::{Regs, Tid};
use hindsight_trace::{Batch, BufferedCall, Event, MemWrite, SignalPoint};

use super::{is_synchronous, MemReader, Recorder};

/// How a call that blocked in the agent ended (see [`Recorder::agent_unblock`]).
#[derive(Debug, Clone, Copy)]
pub(super) enum Unblock {
    /// It returned this result; the thread stopped at the agent's traced syscall after it.
    Returned(i64),
    /// A signal (number, siginfo) stopped the thread at the call's return, with this
    /// result (a restart code when the signal interrupted it).
    Signal(i32, libc::siginfo_t, i64),
}
use crate::agent::{self, Place};
use crate::channels::Pending;
use crate::error::RecordError;

impl Recorder {
    /// Where thread `tid` of `pid`, stopped with `regs`, stands with respect to the agent,
    /// and the agent's state (None: the process has no agent).
    fn agent_place(
        &mut self,
        pid: i32,
        tid: i32,
        regs: &Regs,
    ) -> Result<Option<(hindsight_agent_host::State, Place)>, RecordError> {
        let Some(p) = self.procs.get(&pid) else {
            return Ok(None);
        };
        let (Some(a), Some(c)) = (p.agent, p.counter.as_ref()) else {
            return Ok(None);
        };
        let state = a.state(&p.mem)?;
        let place = agent::place(&a, c.view(), &p.mem, regs, &state);
        let _ = tid;
        Ok(Some((state, place)))
    }

    /// Writes the calls the agent logged since `tid`'s previous event (it is the running
    /// thread, stopped outside a record being written), as an event of `tid`.
    fn drain_agent(
        &mut self,
        pid: i32,
        tid: i32,
        state: &hindsight_agent_host::State,
    ) -> Result<(), RecordError> {
        let Some(p) = self.procs.get_mut(&pid) else {
            return Ok(());
        };
        let Some(a) = p.agent else {
            return Ok(());
        };
        if p.agent_runner == Some(tid) {
            if let Some(t) = p.thread(tid) {
                if t.agent.desched_fd != state.desched_fd {
                    t.agent.desched_fd = state.desched_fd;
                    t.agent.desched_dup = None;
                }
            }
        }
        // A descriptor the agent is to close, once it closed the previous one.
        if state.stale_fd < 0 {
            if let Some(fd) = p.agent_stale.pop() {
                a.set_stale(&p.mem, fd)?;
            }
        }
        if state.used == 0 {
            return Ok(());
        }
        let calls = a.drain(&p.mem, state.used)?;
        if let Some(t) = p.thread(tid) {
            // The thread ran since it was resumed: a signal now is not "at the stop".
            t.resumed_with = None;
        }
        let links = self.batch_links(pid, &calls)?;
        if !links.is_empty() {
            let event = self.writer.event_count(pid);
            self.writer.batch(Batch {
                pid,
                event,
                calls: calls.len() as u32,
            })?;
        }
        self.append_with(pid, &Event::Buffered { tid, calls }, &links)?;
        Ok(())
    }

    /// The transfers between processes that the buffered `calls` of `pid` made, each named
    /// by its index in the batch. The descriptors are looked at now, in the batch's order:
    /// the agent closes no pipe, FIFO or socket (those closes are traced and end a batch),
    /// so a descriptor that a later call of the batch closed was none of those, and every
    /// other one still names what it named at its call.
    fn batch_links(
        &mut self,
        pid: i32,
        calls: &[BufferedCall],
    ) -> Result<Vec<Pending>, RecordError> {
        let close = hindsight_agent::calls::nr::CLOSE;
        // Each descriptor's last close in the batch (a batch holds thousands of calls: one
        // pass, not a scan of the rest of the batch per call).
        let mut last_close: std::collections::HashMap<u64, usize> = Default::default();
        for (i, c) in calls.iter().enumerate() {
            if c.nr == close && c.result == 0 {
                last_close.insert(c.args[0], i);
            }
        }
        // Every descriptor is looked at once for the whole batch (see `Channels::batch`).
        self.channels.batch(true);
        let (channels, writer) = (&mut self.channels, &mut self.writer);
        let links: Result<Vec<Vec<Pending>>, _> = calls
            .iter()
            .enumerate()
            .filter(|(i, c)| {
                let closed_later = last_close.get(&c.args[0]).is_some_and(|j| j > i);
                c.nr != close && c.result > 0 && !closed_later
            })
            .map(|(i, c)| {
                let name = hindsight_syscalls::name(c.nr).unwrap_or("");
                channels
                    .transfers(writer, pid, name, &c.args, c.result, None)
                    .map(|mut links| {
                        for l in &mut links {
                            l.call = i as u32;
                        }
                        links
                    })
            })
            .collect();
        self.channels.batch(false);
        Ok(links?.into_iter().flatten().collect())
    }

    /// Disarms (or arms) the desched event of `tid`, the running thread, through the
    /// recorder's duplicate of its descriptor (after a call was taken out of the agent before
    /// the agent could disarm it, or at a stop, which counts as a switch).
    fn arm_desched(&mut self, pid: i32, tid: i32, on: bool) {
        let Some(p) = self.procs.get_mut(&pid) else {
            return;
        };
        let fd = match (p.agent, p.agent_runner == Some(tid)) {
            // The agent may have opened it since the recorder last looked.
            (Some(a), true) => a.state(&p.mem).map(|s| s.desched_fd).unwrap_or(-1),
            _ => -1,
        };
        let Some(t) = p.thread(tid) else {
            return;
        };
        if fd >= 0 && fd != t.agent.desched_fd {
            t.agent.desched_fd = fd;
            t.agent.desched_dup = None;
        }
        if t.agent.desched_dup.is_none() {
            t.agent.desched_dup = agent::dup_desched(pid, t.agent.desched_fd);
        }
        if let Some(fd) = &t.agent.desched_dup {
            agent::set_desched(fd, on);
        }
    }

    /// The running thread of `pid` was taken out of the agent in the middle of a call: the
    /// agent is told that no call is under way.
    fn left_agent(&mut self, pid: i32) -> Result<(), RecordError> {
        if let Some(p) = self.procs.get(&pid) {
            if let Some(a) = p.agent {
                a.set_phase(&p.mem, abi::PHASE_IDLE)?;
            }
        }
        Ok(())
    }

    fn disarm_desched(&mut self, pid: i32, tid: i32) {
        self.arm_desched(pid, tid, false);
    }

    /// The signals of `tid` that waited for it to leave the agent are sent again (it is at a
    /// stop outside the agent, about to make a traced syscall that they may interrupt).
    fn requeue_deferred(&mut self, pid: i32, tid: i32) -> Result<(), RecordError> {
        let Some(t) = self.procs.get_mut(&pid).and_then(|p| p.thread(tid)) else {
            return Ok(());
        };
        t.agent.preempt = false;
        let deferred = std::mem::take(&mut t.agent.deferred);
        for (sig, si) in deferred {
            Tid(tid).kill(pid, sig)?;
            t.agent.requeued.push((sig, si));
        }
        if t.agent.exit_trap {
            t.agent.exit_trap = false;
            agent::disarm_exit_trap(Tid(tid))?;
        }
        Ok(())
    }

    /// Whether a signal that stopped `tid` of `pid` (not executing user code) is a desched
    /// signal of the agent's (one of the thread's event that came late): nothing for the
    /// program.
    pub(super) fn stray_desched(
        &mut self,
        pid: i32,
        tid: i32,
        sig: i32,
        si: &libc::siginfo_t,
    ) -> bool {
        if sig != abi::DESCHED_SIGNAL {
            return false;
        }
        let fd = self
            .procs
            .get_mut(&pid)
            .and_then(|p| p.thread(tid))
            .map(|t| t.agent.desched_fd)
            .unwrap_or(-1);
        agent::is_desched(sig, si, fd)
    }

    /// A signal that the recorder sent again (see [`Recorder::requeue_deferred`]) gets its
    /// own siginfo back at its delivery.
    pub(super) fn restore_requeued(
        &mut self,
        pid: i32,
        tid: i32,
        sig: i32,
    ) -> Result<(), RecordError> {
        let Some(t) = self.procs.get_mut(&pid).and_then(|p| p.thread(tid)) else {
            return Ok(());
        };
        if let Some(i) = t.agent.requeued.iter().position(|(s, _)| *s == sig) {
            let (_, si) = t.agent.requeued.remove(i);
            Tid(tid).set_siginfo(&si)?;
        }
        Ok(())
    }

    /// A seccomp stop of the running thread: the agent's buffer is drained before the
    /// syscall's event. False when the stop was the agent's report (the recording fails).
    pub(super) fn agent_at_syscall(
        &mut self,
        pid: i32,
        tid: i32,
        regs: &Regs,
    ) -> Result<bool, RecordError> {
        let Some((state, _place)) = self.agent_place(pid, tid, regs)? else {
            return Ok(true);
        };
        let report = self
            .procs
            .get(&pid)
            .and_then(|p| p.agent)
            .map(|a| a.addrs.report + abi::SYSCALL_LEN);
        if Some(regs.pc()) == report {
            self.failure = Some(agent_report(&state));
            return Ok(false);
        }
        self.drain_agent(pid, tid, &state)?;
        self.requeue_deferred(pid, tid)?;
        Ok(true)
    }

    /// A signal-delivery stop of the running thread: the agent's desched signal, a signal
    /// inside the agent (deferred, or delivered where the interrupted call stands traced), or
    /// one outside it (the buffer drained first). False when the stop was handled here.
    pub(super) fn agent_at_signal(
        &mut self,
        pid: i32,
        tid: i32,
        sig: i32,
        si: &libc::siginfo_t,
    ) -> Result<bool, RecordError> {
        let regs = Tid(tid).regs()?;
        let Some((state, place)) = self.agent_place(pid, tid, &regs)? else {
            return Ok(true);
        };
        let own_fd = self
            .procs
            .get_mut(&pid)
            .and_then(|p| p.thread(tid))
            .map(|t| t.agent.desched_fd)
            .unwrap_or(-1);
        if agent::is_desched(sig, si, state.desched_fd) || agent::is_desched(sig, si, own_fd) {
            // The thread was switched out (blocked, or preempted) with its event armed. Every
            // ptrace stop switches it out too: the event is disarmed here, and armed again
            // only for a call that is still to be made.
            self.arm_desched(pid, tid, false);
            match place {
                Place::Interrupted { .. } => {
                    self.drain_agent(pid, tid, &state)?;
                    self.left_agent(pid)?;
                    if !self.block_in_agent(pid, tid, place)? {
                        agent::redo_traced(Tid(tid), &place)?;
                    }
                }
                // Inside the agent, its call still to be made: armed again.
                Place::Inside { .. }
                    if state.phase == abi::PHASE_SYSCALL
                        && self
                            .procs
                            .get(&pid)
                            .and_then(|p| p.agent)
                            .is_some_and(|a| regs.pc() != a.addrs.untraced + abi::SYSCALL_LEN) =>
                {
                    self.arm_desched(pid, tid, true);
                }
                _ => {}
            }
            let _ = Tid(tid).cont(0);
            return Ok(false);
        }
        if sig == libc::SIGTRAP && agent::hit_exit_trap(Tid(tid), si, regs.pc()) {
            return self.at_exit_trap(pid, tid, &regs, &state).map(|_| false);
        }

        match place {
            Place::Outside => {
                self.drain_agent(pid, tid, &state)?;
                Ok(true)
            }
            Place::ToSyscall => {
                self.defer(pid, tid, sig, si);
                let _ = Tid(tid).cont(0);
                Ok(false)
            }
            Place::Interrupted { .. } => {
                // The call, blocked, is interrupted: it becomes the traced call of its stub,
                // interrupted, and the signal is delivered there as the kernel would.
                self.drain_agent(pid, tid, &state)?;
                self.disarm_desched(pid, tid);
                self.left_agent(pid)?;
                if let Some((nr, args, result)) = agent::interrupted_traced(Tid(tid), &place)? {
                    let writes = self.written(pid, nr, &args, result);
                    self.append(
                        pid,
                        &Event::Syscall {
                            tid,
                            nr,
                            args,
                            result,
                            writes,
                            mapped: None,
                        },
                    )?;
                    let now = Tid(tid).regs()?.to_words();
                    if let Some(t) = self.procs.get_mut(&pid).and_then(|p| p.thread(tid)) {
                        t.resumed_with = Some(now);
                        // As for a traced call: a poll or nanosleep that returned
                        // -ERESTART_RESTARTBLOCK is resumed by restart_syscall, which
                        // writes what the interrupted call would have written.
                        if result == -516 {
                            t.restart_block = Some((nr, args));
                        }
                    }
                }
                Ok(true)
            }
            Place::Inside { ret, phase } => {
                if is_synchronous(sig, si.si_code) && sig != libc::SIGTRAP {
                    // The agent read a bad pointer of the program's while it prepared the
                    // call (nothing done yet): the call goes to its stub, traced.
                    let stub = self
                        .procs
                        .get(&pid)
                        .and_then(|p| p.counter.as_ref())
                        .and_then(|c| c.view().agent_stub(ret))
                        .filter(|s| s.ret == ret);
                    match stub {
                        Some(stub) if phase != abi::PHASE_COMMIT => {
                            self.disarm_desched(pid, tid);
                            self.left_agent(pid)?;
                            agent::redo_at(Tid(tid), &stub, &state)?;
                            let _ = Tid(tid).cont(0);
                            return Ok(false);
                        }
                        _ => {
                            self.failure = Some(format!(
                                "hindsight's agent faulted ({}) at {:#x} in its phase {phase}: \
                                 the recording stops here",
                                crate::agent::signal_name(sig),
                                regs.pc()
                            ));
                            return Ok(false);
                        }
                    }
                }
                self.defer(pid, tid, sig, si);
                self.arm_exit(pid, tid, ret)?;
                let _ = Tid(tid).cont(0);
                Ok(false)
            }
        }
    }

    /// The running thread's buffered call blocked (its desched signal, `place` the
    /// interrupted untraced syscall, the buffer drained): when it can, the call goes on
    /// blocked in the kernel, and the thread gives up its turn as a traced call would (its
    /// `SyscallEntry` written). It is moved to the agent's second untraced syscall
    /// instruction, from which the kernel restarts the call (the desched signal not being
    /// delivered), and after which the agent makes a traced syscall: the thread stops there
    /// when the call returns, and [`Recorder::agent_unblock`] takes it out of the agent as
    /// if its stub had made the call traced. One stop instead of three (desched, the traced
    /// call's entry and exit), and the trace is the traced call's: replay does not tell
    /// them apart.
    ///
    /// The thread's own state is the kernel's while it waits: its registers (the agent's
    /// stack pointer) and, saved here, the program's registers at the call. It reads and
    /// writes nothing of the agent's shared memory (frame, stack, buffer, phase) again, so
    /// other threads use the agent meanwhile. False (nothing done) when the call must be
    /// made traced instead: the kernel would not restart it as it is (only -ERESTARTSYS,
    /// -ERESTARTNOINTR and -ERESTARTNOHAND are restarted in place when the signal is not
    /// delivered), it writes to the recording's outputs, or something waits for the thread
    /// to leave the agent (a deferred signal, a preemption, its exit trap).
    fn block_in_agent(&mut self, pid: i32, tid: i32, place: Place) -> Result<bool, RecordError> {
        let Place::Interrupted { frame, result, .. } = place else {
            return Ok(false);
        };
        if !matches!(result, -514..=-512) {
            return Ok(false);
        }
        let (nr, args) = (frame.rax, frame.args());
        if self.writes_to_outputs(tid, nr, &args) {
            return Ok(false);
        }
        let Some(p) = self.procs.get_mut(&pid) else {
            return Ok(false);
        };
        let Some(a) = p.agent else {
            return Ok(false);
        };
        let Some(t) = p.thread(tid) else {
            return Ok(false);
        };
        if !t.agent.deferred.is_empty() || t.agent.preempt || t.agent.exit_trap {
            return Ok(false);
        }
        let mut regs = Tid(tid).regs()?;
        if regs.pc() != a.addrs.untraced + abi::SYSCALL_LEN {
            return Ok(false);
        }
        // The kernel's restart moves the pc back over the `syscall`.
        regs.0.rip = a.addrs.blocked + abi::SYSCALL_LEN;
        Tid(tid).set_regs(&regs)?;
        t.slice = std::time::Duration::ZERO;
        t.agent.blocked = Some(place);
        self.enter_syscall(pid, tid, nr, args, false)?;
        // It blocked (its desched signal says so): no patience for it to return at once,
        // whether or not another thread is ready yet (the one it waits for may be about to
        // stop at its own call's return).
        self.write_entries(pid)?;
        Ok(true)
    }

    /// Whether `tid` of `pid` waits in a buffered call that blocked.
    pub(super) fn blocked_in_agent(&mut self, pid: i32, tid: i32) -> bool {
        self.procs
            .get_mut(&pid)
            .and_then(|p| p.thread(tid))
            .is_some_and(|t| t.agent.blocked.is_some())
    }

    /// A signal stop of a thread blocked in the agent: a late desched signal (nothing: the
    /// call goes on), or a signal (the call returns with what it has, interrupted or done,
    /// and the signal comes after it, as it would at a traced call's exit).
    pub(super) fn agent_blocked_signal(
        &mut self,
        pid: i32,
        tid: i32,
        sig: i32,
        si: &libc::siginfo_t,
    ) -> Result<(), RecordError> {
        if self.stray_desched(pid, tid, sig, si) {
            // Not delivered: the kernel restarts the interrupted call in place.
            let _ = Tid(tid).cont(0);
            return Ok(());
        }
        let result = Tid(tid).regs()?.0.rax as i64;
        self.agent_unblock(pid, tid, Unblock::Signal(sig, *si, result))
    }

    /// Takes a thread that was blocked in the agent out of it: it stands where the stub's
    /// traced call would stand at its exit, with the call's result (or its restart code),
    /// and the call's exit is recorded as a traced one's. A signal that stopped it is sent
    /// again, to come after the exit, as the kernel orders a traced call's exit and a
    /// signal (its siginfo put back at its delivery).
    pub(super) fn agent_unblock(
        &mut self,
        pid: i32,
        tid: i32,
        how: Unblock,
    ) -> Result<(), RecordError> {
        let Some(t) = self.procs.get_mut(&pid).and_then(|p| p.thread(tid)) else {
            return Ok(());
        };
        let Some(Place::Interrupted {
            stub,
            frame,
            saved_sp,
            ..
        }) = t.agent.blocked.take()
        else {
            return Ok(());
        };
        let result = match how {
            Unblock::Returned(result) => result,
            Unblock::Signal(sig, si, result) => {
                Tid(tid).kill(pid, sig)?;
                t.agent.requeued.push((sig, si));
                result
            }
        };
        let done = Place::Interrupted {
            stub,
            frame,
            saved_sp,
            result,
        };
        agent::interrupted_traced(Tid(tid), &done)?;
        if let Unblock::Returned(_) = how {
            // Stopped at the agent's traced syscall: skipped.
            let mut regs = Tid(tid).regs()?;
            regs.0.orig_rax = u64::MAX;
            Tid(tid).set_regs(&regs)?;
        }
        self.syscall_exit(pid, tid)?;
        self.output_done(tid)
    }

    /// A preemption stop (PTRACE_INTERRUPT) of the running thread, others being ready.
    /// False when it was handled here (inside the agent).
    pub(super) fn agent_at_interrupt(&mut self, pid: i32, tid: i32) -> Result<bool, RecordError> {
        let regs = Tid(tid).regs()?;
        let Some((state, place)) = self.agent_place(pid, tid, &regs)? else {
            return Ok(true);
        };
        match place {
            Place::Outside => {
                self.drain_agent(pid, tid, &state)?;
                Ok(true)
            }
            // It is about to make a traced syscall: the others run then.
            Place::ToSyscall => {
                let _ = Tid(tid).cont(0);
                Ok(false)
            }
            Place::Interrupted { .. } => {
                self.drain_agent(pid, tid, &state)?;
                self.disarm_desched(pid, tid);
                self.left_agent(pid)?;
                agent::redo_traced(Tid(tid), &place)?;
                let _ = Tid(tid).cont(0);
                Ok(false)
            }
            Place::Inside { ret, .. } => {
                if let Some(t) = self.procs.get_mut(&pid).and_then(|p| p.thread(tid)) {
                    t.agent.preempt = true;
                }
                self.arm_exit(pid, tid, ret)?;
                let _ = Tid(tid).cont(0);
                Ok(false)
            }
        }
    }

    fn defer(&mut self, pid: i32, tid: i32, sig: i32, si: &libc::siginfo_t) {
        if let Some(t) = self.procs.get_mut(&pid).and_then(|p| p.thread(tid)) {
            t.agent.deferred.push((sig, *si));
        }
    }

    fn arm_exit(&mut self, pid: i32, tid: i32, ret: u64) -> Result<(), RecordError> {
        if let Some(t) = self.procs.get_mut(&pid).and_then(|p| p.thread(tid)) {
            if !t.agent.exit_trap {
                t.agent.exit_trap = true;
                agent::arm_exit_trap(Tid(tid), ret)?;
            }
        }
        Ok(())
    }

    /// The thread is back from the agent, at its stub's return address, with a signal or a
    /// preemption waiting: when the agent answered the call, it is stepped on to the
    /// program's next instruction and what waited happens there; when the stub is to execute
    /// the call, what waited waits for its seccomp stop.
    fn at_exit_trap(
        &mut self,
        pid: i32,
        tid: i32,
        regs: &Regs,
        state: &hindsight_agent_host::State,
    ) -> Result<(), RecordError> {
        agent::disarm_exit_trap(Tid(tid))?;
        let Some(t) = self.procs.get_mut(&pid).and_then(|p| p.thread(tid)) else {
            return Ok(());
        };
        t.agent.exit_trap = false;
        if regs.0.rcx != 0 {
            let _ = Tid(tid).cont(0);
            return Ok(());
        }
        let deferred = std::mem::take(&mut t.agent.deferred);
        let preempt = std::mem::take(&mut t.agent.preempt);
        self.drain_agent(pid, tid, state)?;
        if deferred.is_empty() && !preempt {
            let _ = Tid(tid).cont(0);
            return Ok(());
        }
        let point = match self.async_point(pid, tid)? {
            Ok(point) => point,
            Err(ev) => return self.handle(tid, ev),
        };
        let mut deferred = deferred.into_iter();
        match deferred.next() {
            Some((sig, si)) => {
                // The others come right after it.
                for (s, info) in deferred {
                    Tid(tid).kill(pid, s)?;
                    if let Some(t) = self.procs.get_mut(&pid).and_then(|p| p.thread(tid)) {
                        t.agent.requeued.push((s, info));
                    }
                }
                Tid(tid).set_siginfo(&si)?;
                self.deliver(pid, tid, sig, &si, SignalPoint::Async(Box::new(point)))
            }
            None => self.preempt(pid, tid, point),
        }
    }

    /// What syscall `nr` with `args` and `result` wrote in `pid`'s memory (for a call the
    /// recorder writes down as traced).
    fn written(&self, pid: i32, nr: u64, args: &[u64; 6], result: i64) -> Vec<MemWrite> {
        let Some(p) = self.procs.get(&pid) else {
            return Vec::new();
        };
        let mem = &p.mem;
        hindsight_syscalls::writes(nr, args, result, &MemReader(mem))
            .unwrap_or_default()
            .into_iter()
            .filter_map(|w| {
                let mut data = vec![0u8; w.len];
                mem.read(w.addr, &mut data)
                    .ok()
                    .map(|_| MemWrite { addr: w.addr, data })
            })
            .collect()
    }

    /// After a successful traced syscall of `pid`: what the agent knew of descriptors it
    /// closed or replaced is forgotten (the agent looks at them again on their next write),
    /// and a thread's desched descriptor that went with them is forgotten too.
    pub(super) fn agent_after_fds(&mut self, pid: i32, name: &str, args: &[u64; 6]) {
        let Some(p) = self.procs.get_mut(&pid) else {
            return;
        };
        let Some(a) = p.agent else {
            return;
        };
        let (lo, hi) = match name {
            "close" => (args[0], args[0]),
            "dup2" | "dup3" => (args[1], args[1]),
            "close_range" => (args[0], args[1].min(u64::from(u32::MAX))),
            _ => return,
        };
        let _ = if hi - lo < abi::FD_TABLE as u64 {
            a.forget_fds(&p.mem, lo..=hi)
        } else {
            a.forget_all_fds(&p.mem)
        };
        let gone = |fd: i64| fd >= 0 && (fd as u64) >= lo && (fd as u64) <= hi;
        p.agent_stale.retain(|fd| !gone(*fd));
        let mut runner_lost = false;
        for t in p.threads.iter_mut() {
            if gone(t.agent.desched_fd) {
                t.agent.desched_fd = -1;
                t.agent.desched_dup = None;
                runner_lost |= p.agent_runner == Some(t.tid);
            }
        }
        if runner_lost {
            p.agent_runner = None;
        }
    }
}

/// The agent's report, in the recording's words.
fn agent_report(state: &hindsight_agent_host::State) -> String {
    match state.report.0 {
        abi::REPORT_CORRUPT => format!(
            "the program wrote over hindsight's agent memory (at {:#x}): the recording stops here",
            state.report.1
        ),
        other => {
            format!("hindsight's agent reported a problem ({other}): the recording stops here")
        }
    }
}
