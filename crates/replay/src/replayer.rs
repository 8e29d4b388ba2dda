//! The replayer: re-executes one recorded process, one thread at a time in the recorded order,
//! feeding it the recorded inputs, with no effect on the outside world.
//!
//! How the recording is followed (see `hindsight-record` for how it was written): event k of
//! thread T means "T runs from where it is until this point". Before each resume the replayer
//! handles the events that need no execution (output to show again, a parked syscall's return,
//! a signal due at a stop), then lets the thread of the next event run alone (serial mode of
//! `hindsight-control`) until it reaches the point: a syscall (seccomp stop), an rdtsc (its
//! SIGSEGV), a fault, or an asynchronous position (an internal breakpoint at the recorded pc
//! whose registers and stack digest match).
//!
//! Syscalls are skipped and their recorded results and memory writes applied, except those
//! that shape the process (memory map, threads, signal state, exec, exit): those run for real,
//! memory mappings at their recorded addresses, files mapped from the trace's copies.
//!
//! Invariants:
//! - Between two `resume` calls every thread is stopped, and the event at the head of the
//!   stream is the next thing to happen.
//! - A thread parked in a syscall (its `SyscallEntry` seen) stays at its seccomp stop until its
//!   `SyscallExit` is applied.
//!
//! Kernel surprises handled here:
//! - A syscall skipped at its seccomp stop (orig_rax = -1) is not "in a syscall" for the
//!   kernel's restart logic: a recorded -ERESTART… result is applied at the syscall's exit stop
//!   with orig_rax restored, so that a signal delivered next restarts it as the kernel did;
//!   when the thread runs on without one (a ptrace stop interrupted the call), the replayer
//!   restarts it itself, as the kernel did then.
//! - A signal can only be injected at a signal-delivery stop: the replayer queues it with
//!   tgkill, lets the thread reach that stop before any instruction runs, and sets the
//!   recorded siginfo there.
//! - The kernel copies the path given to execve onto the new stack (AT_EXECFN): replay starts
//!   the program by the recorded path so that every stack address stays the same.

use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::io::Write as _;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use hindsight_control::{Inferior, Notification, Resume, StepOverMode, StopEvent, StopHook};
use hindsight_ptrace::{tsc, ProcessMemory, Regs, Stop, Tid, WaitEvent};
use hindsight_syscalls::Replay;
use hindsight_trace::{
    AsyncPoint, Event, EventStream, ExitStatus, MappedFile, MemWrite, SignalPoint, TraceReader,
};

use crate::divergence::{describe_event, describe_syscall, Divergence};
use crate::error::ReplayError;
use crate::gate::{Arming, GateStop};
use hindsight_ticks::counter::{Armed, Counter};

/// Recorded output of the program kept instead of shown ([`Replayer::hold_output`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldOutput {
    /// The recorded process that wrote it (an ancestor's stream holds its descendants'
    /// output too).
    pub pid: i32,
    /// The index of its event (an `Output` event) in the process's stream.
    pub event: u64,
    /// The descriptor it was written to (1 or 2).
    pub fd: i32,
    /// What was written.
    pub data: Vec<u8>,
}

/// Below this much CPU time, an asynchronous position is searched with breakpoint hits from
/// the start (the approach's looks cost more than they save).
const APPROACH_MIN_NS: u64 = 300_000;
/// The approach ends, and breakpoint hits take over, this close to the position.
const APPROACH_SCAN_NS: f64 = 40_000.0;
/// Each look stops at least this much CPU time short of the estimate (a look can come late).
const APPROACH_SAFETY_NS: f64 = 30_000.0;

/// What to replay.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// The trace directory.
    pub trace: PathBuf,
    /// Recorded pid of the process to replay (None: the first one).
    pub process: Option<i32>,
    /// Do not show the program's output again.
    pub quiet: bool,
    /// Pin hindsight and the program to one CPU.
    pub pin: bool,
}

/// Why [`Replayer::resume`] returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplayStop {
    /// A stop of the program, as in a live session.
    Program(StopEvent),
    /// The recording has nothing more (it was cut short): the program is stopped where it
    /// ends.
    EndOfRecording(String),
    /// The replay did something other than the recording: it stops at the first difference.
    Divergence(Divergence),
    /// The hook asked to stop between two events ([`StopHook::at_event`]): this many events
    /// were replayed; every thread is stopped.
    AtEvent(u64),
    /// The running thread counted the ticks of the tick stop ([`Replayer::set_tick_stop`]):
    /// it stands where its count reached them; every thread is stopped.
    AtTick(Tid),
    /// The thread is about to make the buffered call a stop was asked at
    /// ([`Replayer::stop_at_buffered_call`]): it stands at the program's `syscall`
    /// instruction (its stub's entry), the calls before it made; every thread is stopped.
    AtBufferedCall(Tid),
}

/// The recorded event that the replay expects next, with its index.
#[derive(Clone)]
struct Head {
    index: u64,
    event: Event,
}

/// A thread parked at the seccomp stop of a syscall whose return comes later.
#[derive(Debug, Clone)]
struct Parked {
    nr: u64,
    args: [u64; 6],
    regs: Regs,
}

/// A replay in progress.
pub struct Replayer {
    reader: TraceReader,
    /// Recorded pid of the replayed process.
    pid: i32,
    live_pid: i32,
    stream: EventStream,
    head: Option<Head>,
    /// Events consumed so far.
    consumed: u64,
    /// recorded tid → live tid, and back.
    live: HashMap<i32, Tid>,
    recorded: HashMap<i32, i32>,
    mem: ProcessMemory,
    parked: HashMap<i32, Parked>,
    /// The internal breakpoint armed for an asynchronous position: its address.
    async_site: Option<u64>,
    /// The state gate armed for an asynchronous position (the fast way there).
    gates: crate::gate::Gates,
    /// Threads left at the seccomp stop of their rt_sigreturn, which runs when they resume.
    sigreturn_pending: HashSet<Tid>,
    /// Recorded threads whose last syscall ended with a restart code (-ERESTART…) and that
    /// have not run since: the kernel restarts the call when the thread next runs, through
    /// the handler of a signal it gets first, or at once without one (see
    /// [`Replayer::restart_now`]).
    restart_pending: HashSet<i32>,
    /// A thread and the signal already made pending for it (by
    /// [`Replayer::interrupt_for_real`]): its signal event does not send it again.
    presignalled: Option<(Tid, i32)>,
    /// Threads that are gone (ran exit for real).
    gone: HashSet<i32>,
    /// Copies of mapped files open in the process (see `copies`).
    copies: crate::copies::OpenCopies,
    /// Memory files behind file mappings (see `memfiles`).
    memfiles: crate::memfiles::MemFiles,
    quiet: bool,
    /// While set, recorded output is kept here instead of shown (see
    /// [`Replayer::hold_output`]).
    held_output: Option<Vec<HeldOutput>>,
    /// Program path used to start the replay.
    program: PathBuf,
    /// CPU time (ns) of each live thread when its last event was replayed: the base of the
    /// recorded `cpu_ns` of its next asynchronous position.
    cpu_mark: HashMap<i32, u64>,
    /// The approach towards the head event's asynchronous position: (event index, samples
    /// taken on the way, done).
    approach: Option<(u64, Vec<crate::approach::Sample>, bool)>,
    /// Replay CPU time over recorded CPU time, as measured at the positions found so far.
    cpu_ratio: f64,
    /// The head event whose asynchronous position the replay ran past.
    missed: Option<u64>,
    /// With `--process`: the index of the ancestor's event that creates the next process of
    /// the chain (that fork runs for real).
    fork_at: Option<u64>,
    /// The last event count announced to the hook ([`StopHook::at_event`]).
    announced: Option<u64>,
    /// (events replayed, the tick count the thread running towards the next event had when
    /// that event was first announced): where its stretch starts.
    start_ticks: Option<(u64, Option<u64>)>,
    /// Per recorded thread created by the program: the address its clone asked the kernel to
    /// clear at its exit (checkpoints recreate threads with it).
    clear_tid: HashMap<i32, u64>,
    /// The instruction counter, as when recorded (None: the trace has no ticks). Threads
    /// are known to it by their recorded tids.
    counter: Option<Counter>,
    /// The in-process agent, when the recording had it.
    agent: Option<hindsight_agent_host::Agent>,
    /// The recorded thread whose buffered calls were handed to the agent and are not known
    /// to be all answered yet.
    batch: Option<i32>,
    /// The index of the event whose buffered calls were handed to the agent last.
    batch_event: Option<u64>,
    /// A stop asked for at a call of a batch of buffered calls: (the batch's event, the
    /// call's index). The calls from there on are held back from the agent (its `used` is
    /// lowered), so that the thread makes that call traced, where the replay stops.
    hold: Option<(u64, u32)>,
    /// While calls are held back: the agent's `used` to give back.
    held_used: Option<u64>,
    /// Where to stop: (events replayed, tick count of the thread that runs then).
    tick_stop: Option<(u64, u64)>,
    /// Tick counts at which threads stop (recorded tid, ticks): the user's tick quanta.
    thread_tick_stops: Vec<(i32, u64)>,
}

impl Replayer {
    /// Opens the trace and starts its process stopped before its first instruction. Returns
    /// the replayer and the process, which the caller drives through [`Replayer::resume`].
    pub fn start(opts: &ReplayOptions) -> Result<(Replayer, Inferior), ReplayError> {
        // Sleeps of the tracer time the program's free runs: they must not be rounded up by
        // the default 50 µs timer slack.
        // SAFETY: prctl with plain integer arguments.
        unsafe {
            libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0);
        }
        let reader = TraceReader::open(&opts.trace)?;
        let clock = &reader.header().clock;
        let counter_name = clock.split_whitespace().next().unwrap_or("");
        if counter_name != "none" && counter_name != hindsight_ticks::CLOCK {
            return Err(ReplayError::Unsupported(format!(
                "the trace was recorded with another instruction counter ({clock}; this hindsight counts {}): replay it with the hindsight that recorded it",
                hindsight_ticks::CLOCK
            )));
        }
        if let Err(word) = hindsight_agent_host::used_in(clock) {
            return Err(ReplayError::Unsupported(format!(
                "the trace was recorded with another version of hindsight's agent ({word}; this hindsight's is {}): replay it with the hindsight that recorded it",
                hindsight_agent_host::clock_word()
            )));
        }
        // Every file checked against its checksum before any is used.
        reader.verify()?;
        let root = reader
            .processes()
            .first()
            .map(|p| p.pid)
            .ok_or_else(|| ReplayError::Unsupported("the trace records no process".into()))?;
        let pid = opts.process.unwrap_or(root);
        if pid != root {
            if reader.processes().iter().all(|p| p.pid != pid) {
                let pids: Vec<String> = reader
                    .processes()
                    .iter()
                    .map(|p| p.pid.to_string())
                    .collect();
                return Err(ReplayError::Unsupported(format!(
                    "the trace has no process {pid} (it has {})",
                    pids.join(", ")
                )));
            }
            return Self::start_child(reader, pid, opts);
        }
        let (program, inf) = spawn_root(&reader, opts.pin)?;
        let stream = reader.events(root)?;
        let live_pid = inf.pid();
        let mem = ProcessMemory::open(live_pid)?;
        let agent = load_agent(&reader, Tid(live_pid), &mem)?;
        let counter = if counted(&reader) {
            Some(Counter::install(
                Tid(live_pid),
                root,
                &mem,
                agent.map(agent_code),
            )?)
        } else {
            None
        };
        let mut r = Replayer {
            reader,
            pid: root,
            live_pid,
            stream,
            head: None,
            consumed: 0,
            live: HashMap::from([(root, Tid(live_pid))]),
            recorded: HashMap::from([(live_pid, root)]),
            mem,
            parked: HashMap::new(),
            async_site: None,
            gates: Default::default(),
            presignalled: None,
            sigreturn_pending: HashSet::new(),
            restart_pending: HashSet::new(),
            gone: HashSet::new(),
            copies: Default::default(),
            memfiles: Default::default(),
            quiet: opts.quiet,
            held_output: None,
            program,
            fork_at: None,
            announced: None,
            start_ticks: None,
            clear_tid: HashMap::new(),
            cpu_mark: HashMap::new(),
            approach: None,
            missed: None,
            cpu_ratio: 1.0,
            counter,
            agent,
            batch: None,
            batch_event: None,
            hold: None,
            held_used: None,
            tick_stop: None,
            thread_tick_stops: Vec::new(),
        };
        let mut inf = inf;
        r.publish_code(&mut inf);
        r.apply_kernel_writes()?;
        Ok((r, inf))
    }

    /// Replaying a child process on its own: its ancestors are replayed, silently, up to the
    /// fork that made it, which then runs for real; the replay follows the child and the
    /// ancestor is killed.
    fn start_child(
        reader: TraceReader,
        pid: i32,
        opts: &ReplayOptions,
    ) -> Result<(Replayer, Inferior), ReplayError> {
        // The chain of processes from the root down to `pid`.
        let mut chain = vec![pid];
        let mut cur = pid;
        while let Some(parent) = reader
            .processes()
            .iter()
            .find(|p| p.pid == cur)
            .and_then(|p| p.parent)
        {
            chain.push(parent);
            cur = parent;
        }
        chain.reverse();
        let quiet = opts.quiet;
        let root = ReplayOptions {
            process: None,
            quiet: true,
            ..opts.clone()
        };
        let (mut r, mut inf) = Replayer::start(&root)?;
        for child in chain.iter().skip(1) {
            let info = r
                .reader
                .processes()
                .iter()
                .find(|p| p.pid == *child)
                .cloned()
                .ok_or_else(|| ReplayError::Unsupported(format!("no process {child}")))?;
            let fork_event = info.fork_event.ok_or_else(|| {
                ReplayError::Unsupported(format!(
                    "the trace does not say where process {child} was created"
                ))
            })?;
            r.fork_at = Some(fork_event);
            let mut quiet_hook = Silent;
            let live_child = loop {
                match r.resume(&mut inf, Resume::Continue, &mut quiet_hook)? {
                    ReplayStop::Program(StopEvent::Exec { .. }) => continue,
                    ReplayStop::Program(StopEvent::Syscall { tid }) => break tid,
                    other => {
                        return Err(ReplayError::Unsupported(format!(
                            "could not replay up to the creation of process {child}: {other:?}"
                        )))
                    }
                }
            };
            r.fork_at = None;
            // The ancestor's part is over: the child goes on alone.
            inf.kill();
            let mut child_inf = Inferior::adopt(live_child.0)?;
            yield_to_tracer(live_child.0);
            child_inf.set_step_over_mode(StepOverMode::NoSwitch);
            std::mem::swap(&mut inf, &mut child_inf);
            drop(child_inf);
            r.pid = *child;
            r.live_pid = live_child.0;
            r.stream = r.reader.events(*child)?;
            r.head = None;
            r.consumed = 0;
            r.live = HashMap::from([(*child, live_child)]);
            r.recorded = HashMap::from([(live_child.0, *child)]);
            r.mem = ProcessMemory::open(live_child.0)?;
            r.counter = r.counter.as_ref().map(|c| c.for_child(*child, &r.mem));
            r.parked.clear();
            r.async_site = None;
            r.gone.clear();
        }
        r.quiet = quiet;
        r.publish_code(&mut inf);
        Ok((r, inf))
    }

    /// Nothing of an event is under way: no asynchronous position being approached, no
    /// process chain being followed. (Threads parked in a syscall are fine: a checkpoint
    /// sends them back to their seccomp stop.)
    pub(crate) fn quiet_state(&self) -> bool {
        self.async_site.is_none()
            && !self.gates.is_armed()
            && self.presignalled.is_none()
            && self.approach.is_none()
            && self.missed.is_none()
            && self.fork_at.is_none()
    }

    /// Recorded tid of the process's first thread.
    pub(crate) fn main_recorded(&self) -> Option<i32> {
        self.recorded.get(&self.live_pid).copied()
    }

    /// Whether recorded thread `t` is parked in a syscall (its registers are those of the
    /// seccomp stop), and the registers it was parked with.
    pub(crate) fn parked_regs(&self, t: i32) -> Option<Regs> {
        self.parked.get(&t).map(|p| p.regs)
    }

    /// The address the kernel clears when recorded thread `t` exits (0: none).
    pub(crate) fn clear_tid_of(&self, t: i32) -> u64 {
        self.clear_tid.get(&t).copied().unwrap_or(0)
    }

    /// This replayer's state, driving a copy of the process instead: `threads` maps each
    /// recorded thread to its live thread in the copy (the first is the copy's main thread).
    /// What the memory files behind file mappings hold now (for a checkpoint).
    pub(crate) fn memfiles_snapshot(&self) -> Result<crate::memfiles::Snapshot, ReplayError> {
        self.memfiles.snapshot()
    }

    pub(crate) fn duplicate(&self, threads: &[(i32, Tid)]) -> Result<Replayer, ReplayError> {
        let Some(&(_, main)) = threads.first() else {
            return Err(ReplayError::Unsupported("no thread to copy".into()));
        };
        let live: HashMap<i32, Tid> = threads.iter().copied().collect();
        let recorded: HashMap<i32, i32> = threads.iter().map(|&(r, t)| (t.0, r)).collect();
        // The copies' CPU clocks start now: the next asynchronous positions count from here.
        let cpu_mark = threads
            .iter()
            .map(|&(_, t)| (t.0, hindsight_record::point::thread_cpu_ns(main.0, t.0)))
            .collect();
        Ok(Replayer {
            reader: self.reader.clone(),
            pid: self.pid,
            live_pid: main.0,
            stream: self.stream.try_clone()?,
            head: self.head.clone(),
            consumed: self.consumed,
            live,
            recorded,
            mem: ProcessMemory::open(main.0)?,
            parked: self.parked.clone(),
            async_site: None,
            gates: self.gates.for_copy(),
            presignalled: None,
            sigreturn_pending: HashSet::new(),
            restart_pending: self.restart_pending.clone(),
            gone: self.gone.clone(),
            copies: self.copies.clone(),
            memfiles: self.memfiles.clone(),
            quiet: self.quiet,
            held_output: None,
            program: self.program.clone(),
            cpu_mark,
            approach: None,
            cpu_ratio: self.cpu_ratio,
            missed: None,
            fork_at: None,
            // The copy announces its event again (a seek may want to stop right there).
            announced: None,
            start_ticks: self.start_ticks,
            clear_tid: self.clear_tid.clone(),
            // Threads are known by their recorded tids: the copy's counts are the same.
            counter: self.counter.clone(),
            agent: self.agent,
            batch: self.batch,
            batch_event: self.batch_event,
            hold: self.hold,
            held_used: self.held_used,
            tick_stop: None,
            thread_tick_stops: Vec::new(),
        })
    }

    /// Runs the fork/vfork/clone at `tid`'s seccomp stop for real and returns the new
    /// process, stopped at its first stop (with `--process`, the way to a child).
    fn fork_for_real(&mut self, tid: Tid, regs: Regs) -> Result<Tid, ReplayError> {
        tid.set_regs(&regs)?;
        tid.syscall(0)?;
        loop {
            match hindsight_ptrace::wait_tid(tid)? {
                WaitEvent::Stopped(Stop::Fork | Stop::Vfork | Stop::Clone) => {
                    let child = Tid(tid.event_msg()? as i32);
                    return match hindsight_ptrace::wait_tid(child)? {
                        WaitEvent::Stopped(_) => Ok(child),
                        _ => Err(ReplayError::Unsupported(
                            "the new process died at once".into(),
                        )),
                    };
                }
                WaitEvent::Stopped(_) => tid.syscall(0)?,
                _ => {
                    return Err(ReplayError::Unsupported(
                        "the process died while creating a child".into(),
                    ))
                }
            }
        }
    }

    /// Tells the process's Inferior where the counter moved the program's code (after the
    /// counter patched more, and for a new Inferior).
    pub fn publish_code(&self, inf: &mut Inferior) {
        inf.set_code_map(self.counter.as_ref().map(|c| {
            std::sync::Arc::new(PatchedCode(c.view().clone()))
                as std::sync::Arc<dyn hindsight_control::CodeMap>
        }));
    }

    /// The program the replay runs (for its symbols).
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// The trace being replayed.
    pub fn reader(&self) -> &TraceReader {
        &self.reader
    }

    /// Recorded pid of the replayed process (what the program saw as its pid).
    pub fn recorded_pid(&self) -> i32 {
        self.pid
    }

    /// Shows the program's recorded output again, or not (time travel replays stretches
    /// silently).
    pub fn set_quiet(&mut self, quiet: bool) {
        self.quiet = quiet;
    }

    /// Whether the program's recorded output is shown.
    pub fn quiet(&self) -> bool {
        self.quiet
    }

    /// From now on, keeps the recorded output that would be shown instead of showing it
    /// (`hold`), or shows it again (what was kept is dropped): a replayed tree tells output
    /// only when the stop shows it happened before the consistent state.
    pub fn hold_output(&mut self, hold: bool) {
        self.held_output = hold.then(Vec::new);
    }

    /// The output kept since [`Replayer::hold_output`] (it stays held).
    pub fn take_held_output(&mut self) -> Vec<HeldOutput> {
        self.held_output
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// The recorded tid of a live thread (what the program saw as its tid).
    pub fn recorded_tid_of(&self, live: Tid) -> i32 {
        self.recorded_tid(live)
    }

    /// The live thread that replays recorded thread `recorded`.
    pub fn live_tid_of(&self, recorded: i32) -> Option<Tid> {
        self.live_tid(recorded)
    }

    /// Whether the trace counts ticks (positions carry them).
    pub fn counts_ticks(&self) -> bool {
        self.counter.is_some()
    }

    /// The tick count of recorded thread `recorded` now (None without the counter).
    pub fn ticks_of(&mut self, recorded: i32) -> Option<u64> {
        let mem = &self.mem;
        self.counter.as_mut()?.ticks(mem, recorded).ok()
    }

    /// The recorded tid of the thread that runs towards the next event.
    pub fn runner(&mut self) -> Option<i32> {
        self.peek().ok().flatten().and_then(|e| e.tid())
    }

    /// Where the replay stands in time: events replayed, and the tick count of the thread
    /// that runs towards the next one; `mid` is true when that thread has counted ticks
    /// since the event (the replay stands inside the stretch, not at its start).
    pub fn time(&mut self) -> (u64, Option<u64>, bool) {
        let ticks = self.runner().and_then(|r| self.ticks_of(r));
        let mid = matches!(
            (ticks, self.start_ticks),
            (Some(t), Some((e, Some(s)))) if e == self.consumed && t > s
        );
        (self.consumed, ticks, mid)
    }

    /// Ticks the thread running towards the next event counted since that event.
    pub fn ticks_since_event(&mut self) -> Option<u64> {
        let (e, now, _) = self.time();
        match self.start_ticks {
            Some((se, Some(start))) if se == e => now.map(|n| n.saturating_sub(start)),
            _ => None,
        }
    }

    /// Stops the replay (with [`ReplayStop::AtTick`]) when, `event` events replayed, the
    /// thread running then has counted `ticks` ticks; None: no such stop. A thread that had
    /// counted them before the event is not stopped.
    pub fn set_tick_stop(&mut self, stop: Option<(u64, u64)>) {
        self.tick_stop = stop;
    }

    /// Stops the replay (with [`ReplayStop::AtTick`]) when a thread has counted a number of
    /// ticks: (recorded tid, ticks) pairs, whatever the event (the user's `break tick`).
    pub fn set_thread_tick_stops(&mut self, stops: Vec<(i32, u64)>) {
        self.thread_tick_stops = stops;
    }

    /// Stops the replay (with [`ReplayStop::AtBufferedCall`]) when the thread of the batch
    /// of buffered calls at event `event` is about to make its call `call` (0: the first):
    /// it then stands at that call, the ones before made. The batch may be the one the agent
    /// is answering now (`call` not made yet) or one to come.
    pub fn stop_at_buffered_call(&mut self, event: u64, call: u32) -> Result<(), ReplayError> {
        self.release_hold()?;
        self.hold = Some((event, call));
        if self.batch.is_some() {
            self.apply_hold()?;
        }
        Ok(())
    }

    /// Holds back the calls of the loaded batch from the one a stop is asked at.
    fn apply_hold(&mut self) -> Result<(), ReplayError> {
        let (Some((event, call)), Some(a)) = (self.hold, self.agent) else {
            return Ok(());
        };
        if tracing() {
            eprintln!(
                "replay: hold at batch {event} call {call} (loaded {:?}, held {:?})",
                self.batch_event, self.held_used
            );
        }
        if self.batch_event != Some(event) || self.held_used.is_some() {
            return Ok(());
        }
        let Some(end) = a.end_of_records(&self.mem, call)? else {
            self.hold = None;
            return Ok(());
        };
        let state = a.state(&self.mem)?;
        if tracing() {
            eprintln!(
                "replay: hold batch {event} at call {call}: offset {end} (consumed {}, used {})",
                state.consumed, state.used
            );
        }
        if state.consumed > end || end >= state.used {
            // Made already, or past the batch's last call (the thread's next event).
            self.hold = None;
            return Ok(());
        }
        self.held_used = Some(state.used);
        a.set_used(&self.mem, end)?;
        Ok(())
    }

    /// Forgets the stop asked for by [`Replayer::stop_at_buffered_call`] (the replay stopped
    /// elsewhere first): the agent gets the held calls back.
    pub fn cancel_buffered_call_stop(&mut self) -> Result<(), ReplayError> {
        self.release_hold()
    }

    /// Gives the agent back the calls held back.
    fn release_hold(&mut self) -> Result<(), ReplayError> {
        self.hold = None;
        if let (Some(used), Some(a)) = (self.held_used.take(), self.agent) {
            a.set_used(&self.mem, used)?;
        }
        Ok(())
    }

    /// At a traced syscall of `tid`: when it is the call a stop was asked at (the agent
    /// found the batch's answers held back and had its stub make it traced), the call is
    /// cancelled, the answers given back, and the thread put back at its stub's entry with
    /// the program's registers: when it runs on, it makes the call through the agent, which
    /// answers it from the batch as if nothing happened.
    fn at_held_call(
        &mut self,
        tid: Tid,
        rtid: i32,
        regs: &Regs,
    ) -> Result<Option<ReplayStop>, ReplayError> {
        let (Some(_), Some(a)) = (self.held_used, self.agent) else {
            return Ok(None);
        };
        if self.batch != Some(rtid) {
            return Ok(None);
        }
        let state = a.state(&self.mem)?;
        if tracing() {
            eprintln!(
                "replay: traced syscall at {:#x} while held (consumed {}, used {})",
                regs.pc(),
                state.consumed,
                state.used
            );
        }
        // Stopped just past its stub's fallback `syscall`.
        let sys = regs.pc().wrapping_sub(hindsight_agent::abi::SYSCALL_LEN);
        let Some(stub) = self
            .counter
            .as_ref()
            .and_then(|c| c.view().agent_stub(sys))
            .filter(|s| s.fallback == sys)
        else {
            return Ok(None);
        };
        if state.consumed < state.used {
            return Ok(None);
        }
        self.release_hold()?;
        let nr = regs.0.orig_rax;
        let mut r = *regs;
        r.0.orig_rax = u64::MAX;
        tid.set_regs(&r)?;
        self.run_to_exit(tid)?;
        // As the thread stood at the stub's entry: the program's registers at its call (the
        // agent saved them; the stub and the traced call changed rax, rcx, r11, the flags).
        let mut r = tid.regs()?;
        r.0.rip = stub.entry;
        r.0.rax = nr;
        r.0.rcx = state.fallback_rcx;
        r.0.r11 = state.frame.r11;
        r.0.eflags = state.frame.rflags;
        tid.set_regs(&r)?;
        Ok(Some(ReplayStop::AtBufferedCall(tid)))
    }

    /// Number of recorded events replayed so far.
    pub fn events_replayed(&self) -> u64 {
        self.consumed
    }

    /// When the last event replayed is a batch of buffered calls that the agent is still
    /// answering: its index and how many of its calls were answered (a stop between two
    /// of them is inside the batch).
    pub fn batch_progress(&self) -> Option<(u64, u32)> {
        // (Events that need no execution may have been replayed since: the batch is the
        // thread's until it reaches its next event.)
        let event = self.batch_event?;
        self.batch?;
        let answered = self.agent?.answered(&self.mem).ok()?;
        Some((event, answered))
    }

    fn peek(&mut self) -> Result<Option<&Event>, ReplayError> {
        if self.head.is_none() {
            let index = self.stream.position();
            if let Some(event) = self.stream.next_event()? {
                self.head = Some(Head { index, event });
            }
        }
        Ok(self.head.as_ref().map(|h| &h.event))
    }

    fn head_index(&self) -> u64 {
        self.head
            .as_ref()
            .map(|h| h.index)
            .unwrap_or(self.stream.position())
    }

    fn consume(&mut self) -> Option<Event> {
        self.consumed += 1;
        if let Some(t) = self
            .head
            .as_ref()
            .and_then(|h| h.event.tid())
            .and_then(|t| self.live_tid(t))
        {
            let cpu = hindsight_record::point::thread_cpu_ns(self.live_pid, t.0);
            if let Some(point) = self.head.as_ref().and_then(|h| async_point(&h.event)) {
                // Calibrate: how replay's CPU time compares with the recording's.
                let mark = self.cpu_mark.get(&t.0).copied().unwrap_or(0);
                if point.cpu_ns > 1_000_000 && mark > 0 && cpu > mark {
                    let r = (cpu - mark) as f64 / point.cpu_ns as f64;
                    if (0.5..2.0).contains(&r) {
                        self.cpu_ratio = 0.5 * self.cpu_ratio + 0.5 * r;
                    }
                }
            }
            self.cpu_mark.insert(t.0, cpu);
        }
        if tracing() {
            if let Some(h) = &self.head {
                let ticks = match (h.event.tid(), self.counter.as_mut()) {
                    (Some(t), Some(c)) => c.ticks(&self.mem, t).ok(),
                    _ => None,
                };
                eprintln!(
                    "replay: event {} {} (ticks {ticks:?})",
                    h.index,
                    describe_event(&h.event)
                );
            }
        }
        self.head.take().map(|h| h.event)
    }

    fn diverged(&self, tid: i32, recorded: String, replayed: String) -> ReplayStop {
        ReplayStop::Divergence(Divergence {
            event: self.head_index(),
            tid,
            recorded,
            replayed,
        })
    }

    /// Thread `rtid` has reached its next event (it did `replayed`): the calls of its that
    /// were handed to the agent must all have been answered (a divergence otherwise).
    fn batch_answered(
        &mut self,
        rtid: i32,
        replayed: &str,
    ) -> Result<Option<ReplayStop>, ReplayError> {
        if self.batch != Some(rtid) {
            return Ok(None);
        }
        let Some(a) = self.agent else {
            return Ok(None);
        };
        let (n, first) = a.unanswered(&self.mem)?;
        if n == 0 {
            self.batch = None;
            return Ok(None);
        }
        let first = first
            .map(|c| describe_syscall(c.nr, &c.args))
            .unwrap_or_default();
        Ok(Some(self.diverged(
            rtid,
            format!("{n} more buffered syscall(s) first (the next one {first})"),
            replayed.to_string(),
        )))
    }

    /// A stop at the agent's report (a seccomp stop at its report instruction): the replayed
    /// program's syscall is not the recorded one, or its memory was overwritten.
    fn agent_report(&mut self, tid: Tid) -> Result<ReplayStop, ReplayError> {
        let rtid = self.recorded_tid(tid);
        let Some(a) = self.agent else {
            return Ok(self.diverged(rtid, "a syscall".into(), "an agent report".into()));
        };
        let state = a.state(&self.mem)?;
        let (kind, detail) = state.report;
        let replayed = describe_syscall(state.frame.rax, &state.frame.args());
        Ok(match kind {
            hindsight_agent::abi::REPORT_MISMATCH => {
                let recorded = a
                    .record_at(&self.mem, detail)
                    .map(|c| describe_syscall(c.nr, &c.args))
                    .unwrap_or_else(|e| e.to_string());
                self.diverged(rtid, format!("buffered {recorded}"), replayed)
            }
            _ => self.diverged(
                rtid,
                format!("buffered syscalls (hindsight's agent memory at {detail:#x})"),
                format!("{replayed}, the agent's memory overwritten by the program"),
            ),
        })
    }

    fn live_tid(&self, recorded: i32) -> Option<Tid> {
        self.live.get(&recorded).copied()
    }

    fn recorded_tid(&self, live: Tid) -> i32 {
        self.recorded.get(&live.0).copied().unwrap_or(live.0)
    }

    /// Memory the kernel wrote at the exec (AT_RANDOM): applied before the program runs.
    fn apply_kernel_writes(&mut self) -> Result<(), ReplayError> {
        while let Some(Event::KernelWrite { .. }) = self.peek()? {
            if let Some(Event::KernelWrite { writes }) = self.consume() {
                self.write_all(&writes)?;
            }
        }
        Ok(())
    }

    /// Shows recorded output again (unless quiet, or kept while held).
    fn echo(&mut self, pid: i32, fd: i32, data: &[u8]) {
        if self.quiet {
            return;
        }
        let event = self.head_index();
        if let Some(held) = self.held_output.as_mut() {
            held.push(HeldOutput {
                pid,
                event,
                fd,
                data: data.to_vec(),
            });
            return;
        }
        let _ = if fd == 2 {
            std::io::stderr().write_all(data)
        } else {
            let mut out = std::io::stdout();
            out.write_all(data).and_then(|_| out.flush())
        };
    }

    fn write_all(&self, writes: &[MemWrite]) -> Result<(), ReplayError> {
        for w in writes {
            if let Err(e) = self.mem.write(w.addr, &w.data) {
                // A shared mapping without write permission refuses even ptrace's writes,
                // and a mapping past its file's end faults: the bytes go into the memory
                // file behind it (which grows by them, as the recorded file did).
                if !self.write_memfile(w.addr, &w.data)? {
                    return Err(e.into());
                }
            }
        }
        Ok(())
    }

    /// Writes `data` at `addr` into the memory files mapped there (see `memfiles`); false
    /// when some of that range is not such a mapping.
    fn write_memfile(&self, addr: u64, data: &[u8]) -> Result<bool, ReplayError> {
        let Ok(maps) = std::fs::read_to_string(format!("/proc/{}/maps", self.live_pid)) else {
            return Ok(false);
        };
        let end = addr.saturating_add(data.len() as u64);
        let mut covered = 0u64;
        for line in maps.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            let Some((start, stop)) = f.first().and_then(|r| r.split_once('-')) else {
                continue;
            };
            let (Ok(start), Ok(stop)) = (
                u64::from_str_radix(start, 16),
                u64::from_str_radix(stop, 16),
            ) else {
                continue;
            };
            let (from, to) = (addr.max(start), end.min(stop));
            if from >= to {
                continue;
            }
            let (Some(offset), Some(ino)) = (
                f.get(2).and_then(|o| u64::from_str_radix(o, 16).ok()),
                f.get(4).and_then(|i| i.parse::<u64>().ok()),
            ) else {
                return Ok(false);
            };
            let Some(id) = self.memfiles.by_inode(ino) else {
                return Ok(false);
            };
            let part = &data[(from - addr) as usize..(to - addr) as usize];
            self.memfiles.write(id, offset + (from - start), part)?;
            covered += to - from;
        }
        Ok(covered == data.len() as u64)
    }

    /// Resumes the replay (`how` as in a live session) and returns at the next stop.
    ///
    /// Invariant: at a stop of the program, the recorded events that need no execution and
    /// follow what the program did last (its output, the kernel's writes, a thread's end, the
    /// next batch of buffered calls) are replayed already. So a stop right after a syscall
    /// (a `stepi` over it) counts the same events as the same instant reached by any other
    /// motion — a seek announces an event only once those are replayed — and the output a
    /// `write` made is shown when the step over it ends.
    ///
    /// A step ([`Resume::Step`]) is one instruction *of the program*: a step that ends in
    /// hindsight's code (the agent, the stub a patched `syscall` jumps to, the counter's
    /// machinery) goes on until the thread is back at a program instruction or something
    /// else stops it, so that one step over a `syscall` the agent serves ends right after
    /// it, and every motion built of steps (reverse-stepi, reverse line steps) counts and
    /// names only the program's instructions.
    pub fn resume(
        &mut self,
        inf: &mut Inferior,
        how: Resume,
        hook: &mut dyn StopHook,
    ) -> Result<ReplayStop, ReplayError> {
        // The agent's longest path (a buffered call checked and answered) is far shorter.
        const MAX_MACHINE_STEPS: usize = 1 << 16;
        let mut stop = self.resume_to_stop(inf, how, hook)?;
        if let Resume::Step(tid) = how {
            for _ in 0..MAX_MACHINE_STEPS {
                let in_machinery = matches!(stop, ReplayStop::Program(StopEvent::Stepped { tid: t }) if t == tid)
                    // (The machine's pc: the inferior's registers show moved code at the
                    // program address it stands for.)
                    && tid
                        .regs()
                        .is_ok_and(|r| crate::is_agent_code(r.pc()) || !inf.at_program_insn(r.pc()));
                if !in_machinery {
                    break;
                }
                stop = self.resume_to_stop(inf, how, hook)?;
            }
        }
        if let ReplayStop::Program(e) = &stop {
            if !matches!(e, StopEvent::Exited(_) | StopEvent::Killed(_)) {
                self.effect_events(inf)?;
            }
        }
        Ok(stop)
    }

    /// Replays the events at the head that only have effects outside the program's
    /// execution (see [`Replayer::resume`]); stops at the first other one.
    fn effect_events(&mut self, inf: &mut Inferior) -> Result<(), ReplayError> {
        loop {
            let pure = match self.peek()? {
                Some(
                    Event::Output { .. } | Event::KernelWrite { .. } | Event::ThreadExit { .. },
                ) => true,
                // (Without an agent to answer it, the next resume reports the divergence.)
                Some(Event::Buffered { .. }) => self.agent.is_some(),
                _ => false,
            };
            if !pure {
                return Ok(());
            }
            if let Some(event) = self.peek()?.cloned() {
                self.effect_event(inf, event)?;
            }
        }
    }

    /// The body of [`Replayer::resume`].
    fn resume_to_stop(
        &mut self,
        inf: &mut Inferior,
        how: Resume,
        hook: &mut dyn StopHook,
    ) -> Result<ReplayStop, ReplayError> {
        loop {
            if let Some(stop) = self.instant_events(inf, hook)? {
                return Ok(stop);
            }
            let Some(event) = self.peek()?.cloned() else {
                return Ok(self.end_of_recording());
            };
            let runner = match event.tid() {
                Some(t) => t,
                None => {
                    // ProcessExit with the process still there: something outside killed it.
                    if let Event::ProcessExit { status } = event {
                        self.consume();
                        let sig = match status {
                            ExitStatus::Killed(s) => s,
                            ExitStatus::Exited(_) => libc::SIGKILL,
                        };
                        inf.kill();
                        inf.set_exited(StopEvent::Killed(sig));
                        return Ok(ReplayStop::Program(StopEvent::Killed(sig)));
                    }
                    continue;
                }
            };
            let Some(tid) = self.live_tid(runner) else {
                return Ok(self.diverged(runner, describe_event(&event), "no such thread".into()));
            };
            if self.announce(inf, hook, runner, tid) {
                return Ok(ReplayStop::AtEvent(self.consumed));
            }
            inf.set_serial(Some(tid));
            if let Some(c) = self.counter.as_mut() {
                c.run(&self.mem, runner)?;
            }
            let step = matches!(how, Resume::Step(t) if t == tid);
            // A position named by ticks: the counter traps when the thread has counted them
            // (Some(false): on the way there); from there a breakpoint at its pc finds it
            // (Some(true)), the counter armed one tick further as a guard.
            let stop_ticks = self
                .tick_stop
                .filter(|(e, _)| *e == self.consumed)
                .map(|(_, t)| t);
            let now_ticks = self.ticks_of(runner);
            let thread_stop = self
                .thread_tick_stops
                .iter()
                .filter(|(t, n)| *t == runner && now_ticks.is_some_and(|now| *n > now))
                .map(|(_, n)| *n)
                .min();
            let stop_ticks = match (stop_ticks, thread_stop) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let tick_phase = match (
                async_point(&event).and_then(|p| p.ticks),
                self.counter.as_mut(),
            ) {
                (Some(target), Some(c)) => match c.arm(&self.mem, runner, target)? {
                    Armed::Set => Some(false),
                    Armed::Reached => {
                        let regs = tid.regs()?;
                        if async_point(&event).is_some_and(|p| at_position(p, inf, &regs)) {
                            if let Some(s) = self.at_tick(inf, hook, tid, &event, false)? {
                                return Ok(s);
                            }
                            continue;
                        }
                        if tracing() {
                            if let Some(p) = async_point(&event) {
                                trace_differences(p, &regs);
                            }
                        }
                        if let Some(c) = self.counter.as_mut() {
                            c.arm(&self.mem, runner, target + 1)?;
                        }
                        Some(true)
                    }
                    Armed::Passed { now } => {
                        return Ok(self.diverged(
                            runner,
                            describe_event(&event),
                            format!(
                                "the thread counted {now} ticks, past the {target} of that position"
                            ),
                        ))
                    }
                },
                _ => None,
            };
            let ticked = tick_phase.is_some();
            // The tick stop, if this stretch has one ahead.
            if let (Some(st), Some(c)) = (stop_ticks, self.counter.as_mut()) {
                if c.ticks(&self.mem, runner)? < st {
                    c.arm_at_most(&self.mem, runner, st)?;
                }
            }
            let clock = self.counter.as_ref().and_then(|c| c.clock(runner));
            // A gate takes the thread to an asynchronous position at nearly full speed; a
            // single step would walk into the gate's code, so steps use breakpoint hits.
            let arming = if step || ticked {
                Arming::No
            } else {
                self.arm_gate(inf, &event, tid)?
            };
            if arming == Arming::AlreadyThere {
                if let Some(s) = self.on_async_point(inf, hook, tid)? {
                    return Ok(s);
                }
                continue;
            }
            let gated = arming == Arming::Armed;
            // It runs now: a pending rt_sigreturn of it runs with it.
            self.sigreturn_pending.remove(&tid);
            let free_run = if step || gated || ticked {
                None
            } else {
                self.free_run_target(&event, tid)
            };
            if self.missed == Some(self.head_index()) {
                return Ok(self.diverged(
                    runner,
                    describe_event(&event),
                    "the thread ran past that position (found by CPU time) before it could be stopped there".into(),
                ));
            }
            let target = match free_run {
                Some(_) => None,
                None if gated || tick_phase == Some(false) => None,
                None => self.arm_async(inf, &event, tid)?,
            };
            let mut wrapper = Wrapper {
                user: hook,
                target,
                reached: false,
                user_stop: false,
                clock,
            };
            let give_up = if (wrapper.target.is_some() || gated) && !step && !ticked {
                self.scan_limit(&event, tid)
            } else {
                None
            };
            let live_pid = self.live_pid;
            // Sleep until the thread should have used its CPU time (it has the CPU meanwhile),
            // then look again.
            let until_cpu = |limit: u64, min_sleep: u64| {
                let now = hindsight_record::point::thread_cpu_ns(live_pid, tid.0);
                // A few microseconds early is as good as on time (and sleeps that short
                // are not kept reliably).
                (now + 10_000 < limit)
                    .then(|| std::time::Duration::from_nanos((limit - now).max(min_sleep)))
            };
            self.restart_now(tid)?;
            let stop = match (free_run, give_up) {
                (Some(cpu_target), _) => {
                    inf.resume_polled(&mut wrapper, &mut || until_cpu(cpu_target, 2_000))?
                }
                (None, Some(limit)) => {
                    inf.resume_polled(&mut wrapper, &mut || until_cpu(limit, 20_000_000))?
                }
                (None, None) => {
                    inf.resume(if step { how } else { Resume::Continue }, &mut wrapper)?
                }
            };
            if gated {
                let point = async_point(&event).cloned();
                let at = |inf: &Inferior, regs: &Regs| {
                    point.as_ref().is_some_and(|p| at_position(p, inf, regs))
                };
                match self.gates.on_stop(inf, at)? {
                    GateStop::Reached => {
                        if let Some(s) = self.on_async_point(inf, hook, tid)? {
                            return Ok(s);
                        }
                        continue;
                    }
                    GateStop::NotThis => continue,
                    GateStop::Other | GateStop::NotArmed => {}
                }
            }
            if stop == StopEvent::Interrupted && give_up.is_some() && free_run.is_none() {
                return Ok(self.diverged(
                    runner,
                    describe_event(&event),
                    "the thread ran well past the recorded CPU time without reaching it".into(),
                ));
            }
            let (reached, user_stop) = (wrapper.reached, wrapper.user_stop);
            if tracing() {
                eprintln!("replay: stop {stop:?} (free run {free_run:?}, limit {give_up:?})");
            }
            match stop {
                StopEvent::Syscall { tid: t } => {
                    if let Some(s) = self.on_syscall(inf, t)? {
                        return Ok(s);
                    }
                    if step {
                        return Ok(ReplayStop::Program(StopEvent::Stepped { tid: t }));
                    }
                }
                StopEvent::Signal { tid: t, signal } => {
                    if let Some(s) = self.on_signal(inf, hook, t, signal)? {
                        return Ok(s);
                    }
                    if step {
                        return Ok(ReplayStop::Program(StopEvent::Stepped { tid: t }));
                    }
                }
                StopEvent::Breakpoint { tid: t, addr } if reached => {
                    let s = self.on_async_point(inf, hook, t)?;
                    if user_stop {
                        return Ok(ReplayStop::Program(StopEvent::Breakpoint { tid: t, addr }));
                    }
                    if let Some(s) = s {
                        return Ok(s);
                    }
                }
                StopEvent::Exited(_) | StopEvent::Killed(_) => return self.on_exit(stop),
                // A look at the thread on its way to the position.
                StopEvent::Interrupted => self.sample_approach(inf, tid)?,
                other => return Ok(ReplayStop::Program(other)),
            }
        }
    }

    /// Announces the event at the head to the hook ([`StopHook::at_event`]), once per event:
    /// a resume in the middle of a stretch (after a breakpoint stop) is not at an event.
    /// `runner` is the recorded thread the event belongs to, `tid` its live one. True: the
    /// hook wants the replay to stop here.
    fn announce(
        &mut self,
        inf: &mut Inferior,
        hook: &mut dyn StopHook,
        runner: i32,
        tid: Tid,
    ) -> bool {
        if self.announced == Some(self.consumed) {
            return false;
        }
        self.announced = Some(self.consumed);
        let ticks = self.ticks_of(runner);
        // (A copy taken inside the stretch announces it again: its start stays.)
        if self.start_ticks.is_none_or(|(e, _)| e != self.consumed) {
            self.start_ticks = Some((self.consumed, ticks));
        }
        hook.clock(ticks);
        hook.at_event(inf, self.consumed, tid)
    }

    fn end_of_recording(&self) -> ReplayStop {
        let why = if self.stream.truncated() {
            "the trace is truncated".to_string()
        } else {
            match self.reader.incomplete() {
                Some(r) if !r.is_empty() => format!("the recording was cut short: {r}"),
                Some(_) => "the recording was cut short".to_string(),
                None => "no more events".to_string(),
            }
        };
        ReplayStop::EndOfRecording(why)
    }

    /// Replays `event`, the head: one that needs no execution and whose effects are outside
    /// the program's run (output, the kernel's writes, a thread's end, a batch of buffered
    /// calls handed to the agent).
    fn effect_event(
        &mut self,
        inf: &mut Inferior,
        event: Event,
    ) -> Result<Option<ReplayStop>, ReplayError> {
        match event {
            Event::Output { pid, fd, data } => {
                self.echo(pid, fd, &data);
                self.consume();
            }
            Event::KernelWrite { writes } => {
                self.consume();
                self.write_all(&writes)?;
            }
            Event::Buffered { tid, calls } => {
                self.batch_event = Some(self.head_index());
                self.consume();
                let Some(a) = self.agent else {
                    return Ok(Some(self.diverged(
                        tid,
                        describe_event(&Event::Buffered { tid, calls }),
                        "no agent to answer them".into(),
                    )));
                };
                a.fill(&self.mem, &calls)?;
                self.batch = Some(tid);
                self.apply_hold()?;
            }
            Event::ThreadExit { tid } => {
                self.consume();
                if let Some(live) = self.live.get(&tid).copied() {
                    if !self.gone.contains(&tid) {
                        // It did not run its exit here: it died with an exec or a kill.
                        inf.remove_thread(live);
                    }
                }
            }
            _ => {}
        }
        Ok(None)
    }

    /// Handles the events at the head that need no execution.
    fn instant_events(
        &mut self,
        inf: &mut Inferior,
        hook: &mut dyn StopHook,
    ) -> Result<Option<ReplayStop>, ReplayError> {
        loop {
            let Some(event) = self.peek()?.cloned() else {
                return Ok(None);
            };
            match event {
                e @ (Event::Output { .. }
                | Event::KernelWrite { .. }
                | Event::Buffered { .. }
                | Event::ThreadExit { .. }) => {
                    if let Some(stop) = self.effect_event(inf, e)? {
                        return Ok(Some(stop));
                    }
                }
                Event::SyscallExit { tid, .. } if self.parked.contains_key(&tid) => {
                    let Some(Event::SyscallExit {
                        tid,
                        nr,
                        result,
                        writes,
                        mapped,
                    }) = self.consume()
                    else {
                        continue;
                    };
                    let Some(p) = self.parked.remove(&tid) else {
                        continue;
                    };
                    let Some(live) = self.live_tid(tid) else {
                        continue;
                    };
                    if p.nr != nr {
                        return Ok(Some(self.diverged(
                            tid,
                            format!("the return of {}", describe_syscall(nr, &p.args)),
                            describe_syscall(p.nr, &p.args),
                        )));
                    }
                    if let Some(s) = self
                        .complete_syscall(inf, live, p.regs, nr, &p.args, result, &writes, mapped)?
                    {
                        return Ok(Some(s));
                    }
                }
                Event::Signal {
                    tid: runner,
                    point: SignalPoint::AtStop,
                    ..
                } => {
                    // The instant before the signal is a position of its own (a step over
                    // the syscall it ended stops there): a seek must be able to stop there.
                    if let Some(live) = self.live_tid(runner) {
                        if self.announce(inf, hook, runner, live) {
                            return Ok(Some(ReplayStop::AtEvent(self.consumed)));
                        }
                    }
                    let Some(Event::Signal {
                        tid,
                        signo,
                        siginfo,
                        ..
                    }) = self.consume()
                    else {
                        continue;
                    };
                    let Some(live) = self.live_tid(tid) else {
                        continue;
                    };
                    if let Some(s) = self.inject_signal(inf, hook, live, signo, &siginfo)? {
                        return Ok(Some(s));
                    }
                }
                _ => return Ok(None),
            }
        }
    }

    /// A recorded asynchronous position far into its thread's run (by CPU time) is approached
    /// by running the thread freely and looking at it now and then (see [`crate::approach`]);
    /// only the last stretch is covered by breakpoint hits. Returns the CPU time (ns) to run
    /// up to before the next look, if another look is worth it.
    fn free_run_target(&mut self, event: &Event, tid: Tid) -> Option<u64> {
        let point = async_point(event)?;
        let index = self.head_index();
        if point.cpu_ns < APPROACH_MIN_NS {
            return None;
        }
        if self.approach.as_ref().map(|a| a.0) != Some(index) {
            self.approach = Some((index, Vec::new(), false));
        }
        let (_, samples, done) = self.approach.as_ref()?;
        if *done {
            return None;
        }
        let mark = *self.cpu_mark.get(&tid.0)?;
        let now = hindsight_record::point::thread_cpu_ns(self.live_pid, tid.0);
        if tracing() && samples.is_empty() {
            let t = crate::approach::Sample::new(0, &point.regs, &point.stack);
            eprintln!(
                "replay: target pc {:#x} rsp {:#x} words {:x?}",
                t.pc,
                t.rsp,
                &t.words[15..t.words.len().min(22)]
            );
        }
        let expected = point.cpu_ns as f64 * self.cpu_ratio;
        // By CPU time alone, stop short by a margin that covers two runs' differences.
        let by_time = mark + (expected * 0.94 - 150_000.0).max(0.0) as u64;
        if samples.len() >= 2 {
            let target = crate::approach::Sample::new(0, &point.regs, &point.stack);
            let n = samples.len();
            if crate::approach::went_past(&samples[n - 2], &samples[n - 1], &target) {
                self.approach = Some((index, Vec::new(), true));
                self.missed = Some(index);
                return None;
            }
        }
        let next = match samples.len() {
            0 => mark + (expected * 0.5) as u64,
            1 => mark + (expected * 0.7) as u64,
            n => {
                let target = crate::approach::Sample::new(0, &point.regs, &point.stack);
                if tracing() {
                    eprintln!(
                        "replay: samples at cpu {} and {}: {:?}",
                        samples[n - 2].cpu,
                        samples[n - 1].cpu,
                        crate::approach::remaining(&samples[n - 2], &samples[n - 1], &target)
                    );
                }
                // The smallest estimate over every baseline ending at the last look: a long
                // baseline measures the pace well, a short one reacts to a change of pace.
                let left = (0..n - 1)
                    .filter_map(|i| {
                        crate::approach::remaining(&samples[i], &samples[n - 1], &target)
                    })
                    .reduce(f64::min);
                match left {
                    // Close enough for breakpoint hits.
                    Some(left) if left < APPROACH_SCAN_NS => return self.approach_done(),
                    // Stop short: the look itself may come late (the tracer is woken up by
                    // the scheduler, not by the program).
                    Some(left) => now + (left - (left * 0.4).max(APPROACH_SAFETY_NS)) as u64,
                    None if now < by_time => by_time,
                    None => return self.approach_done(),
                }
            }
        };
        if tracing() {
            eprintln!(
                "replay: approach {index}: {} samples, cpu {} of {} recorded (mark {mark}), next look at {}",
                samples.len(),
                now.saturating_sub(mark),
                point.cpu_ns,
                next.saturating_sub(mark)
            );
        }
        if next <= now {
            return self.approach_done();
        }
        Some(next)
    }

    /// The CPU time past which a thread looking for its asynchronous position has missed it
    /// (None: no limit known).
    fn scan_limit(&self, event: &Event, tid: Tid) -> Option<u64> {
        let point = async_point(event)?;
        let mark = *self.cpu_mark.get(&tid.0)?;
        // Breakpoint hits make the thread slower in CPU time too (each hit enters the
        // kernel): the limit is generous.
        Some(mark + point.cpu_ns * 4 + 2_000_000_000)
    }

    fn approach_done(&mut self) -> Option<u64> {
        if let Some(a) = self.approach.as_mut() {
            a.2 = true;
        }
        None
    }

    /// Takes a look at `tid` on its way to the head event's position.
    fn sample_approach(&mut self, inf: &Inferior, tid: Tid) -> Result<(), ReplayError> {
        let regs = inf.raw_regs(tid)?;
        let stack = hindsight_record::point::stack_top_with(
            |a, b| inf.read_memory(a, b).is_ok(),
            regs.sp(),
        );
        let cpu = hindsight_record::point::thread_cpu_ns(self.live_pid, tid.0);
        if let Some((_, samples, _)) = self.approach.as_mut() {
            let sample = crate::approach::Sample::new(cpu, &regs.to_words(), &stack);
            if tracing() {
                eprintln!(
                    "replay: sample pc {:#x} rsp {:#x} words {:x?}",
                    sample.pc,
                    sample.rsp,
                    &sample.words[15..sample.words.len().min(22)]
                );
            }
            samples.push(sample);
        }
        Ok(())
    }

    /// Arms a state gate for the asynchronous position of the head event, if it has one and
    /// its pc can be gated (see [`crate::gate`]).
    fn arm_gate(
        &mut self,
        inf: &mut Inferior,
        event: &Event,
        tid: Tid,
    ) -> Result<Arming, ReplayError> {
        let Some(point) = async_point(event) else {
            return Ok(Arming::No);
        };
        // `HINDSIGHT_NO_GATES=1`: breakpoint hits only (for hindsight's developers, to tell
        // whether a gate is to blame).
        static NO_GATES: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        if *NO_GATES.get_or_init(|| std::env::var_os("HINDSIGHT_NO_GATES").is_some()) {
            return Ok(Arming::No);
        }
        let index = self.head_index();
        let point = point.clone();
        if !self.gates.is_armed() && self.sigreturn_pending.remove(&tid) {
            // The return from a signal handler lands anywhere, possibly inside the patch:
            // it is run first (it would run first anyway), so the thread stands where the
            // handler returned to.
            self.run_to_exit(tid)?;
        }
        let at = |inf: &Inferior, regs: &Regs| at_position(&point, inf, regs);
        self.gates.arm(inf, &self.mem, tid, index, &point, at)
    }

    /// Arms the internal breakpoint of an asynchronous position that `tid` must reach next.
    fn arm_async(
        &mut self,
        inf: &mut Inferior,
        event: &Event,
        tid: Tid,
    ) -> Result<Option<(Tid, AsyncPoint)>, ReplayError> {
        let Some(point) = async_point(event) else {
            return Ok(None);
        };
        let pc = point.regs[16];
        if self.async_site != Some(pc) {
            self.disarm_async(inf)?;
            inf.insert_site(pc)?;
            self.async_site = Some(pc);
        }
        Ok(Some((tid, point.clone())))
    }

    fn disarm_async(&mut self, inf: &mut Inferior) -> Result<(), ReplayError> {
        if let Some(pc) = self.async_site.take() {
            inf.remove_site(pc)?;
        }
        Ok(())
    }

    /// Thread `tid` has counted the ticks of the head event's position (`event`): it must be
    /// there, with the recorded registers and stack; the event happens. `trapped`: the
    /// thread is at the counter trap's signal-delivery stop (a signal can go in there).
    fn at_tick(
        &mut self,
        inf: &mut Inferior,
        hook: &mut dyn StopHook,
        tid: Tid,
        event: &Event,
        trapped: bool,
    ) -> Result<Option<ReplayStop>, ReplayError> {
        let rtid = self.recorded_tid(tid);
        let Some(point) = async_point(event) else {
            return Ok(None);
        };
        let regs = tid.regs()?;
        if !at_position(point, inf, &regs) {
            if tracing() {
                trace_differences(point, &regs);
            }
            return Ok(Some(self.diverged(
                rtid,
                describe_event(event),
                format!(
                    "at its tick count ({}), the thread is at {:#x} with other registers or stack",
                    point.ticks.unwrap_or(0),
                    regs.pc()
                ),
            )));
        }
        let what = format!("{} at {:#x}", describe_event(event), regs.pc());
        if let Some(s) = self.batch_answered(rtid, &what)? {
            return Ok(Some(s));
        }
        match self.consume() {
            Some(Event::Signal { signo, siginfo, .. }) => {
                let fits = siginfo.len() >= std::mem::size_of::<libc::siginfo_t>();
                if trapped && fits && self.presignalled.is_none() {
                    // At the trap's signal-delivery stop: the signal replaces the SIGTRAP.
                    // SAFETY: siginfo_t is plain data; the slice holds at least its size.
                    let si: libc::siginfo_t = unsafe {
                        std::ptr::read_unaligned(siginfo.as_ptr().cast::<libc::siginfo_t>())
                    };
                    tid.set_siginfo(&si)?;
                    inf.set_pending_signal(tid, signo);
                    if hook.stops_on_signal(signo) {
                        return Ok(Some(ReplayStop::Program(StopEvent::Signal {
                            tid,
                            signal: signo,
                        })));
                    }
                    return Ok(None);
                }
                self.inject_signal(inf, hook, tid, signo, &siginfo)
            }
            _ => Ok(None),
        }
    }

    /// A thread reached the asynchronous position of the head event.
    fn on_async_point(
        &mut self,
        inf: &mut Inferior,
        hook: &mut dyn StopHook,
        tid: Tid,
    ) -> Result<Option<ReplayStop>, ReplayError> {
        self.disarm_async(inf)?;
        if let Some(c) = self.counter.as_mut() {
            c.disarm(&self.mem)?;
        }
        // The hit was handled: the thread is not "in" a breakpoint any more.
        inf.forget_trap(tid);
        let rtid = self.recorded_tid(tid);
        let what = format!("an asynchronous position at {:#x}", tid.regs()?.pc());
        if let Some(s) = self.batch_answered(rtid, &what)? {
            return Ok(Some(s));
        }
        match self.consume() {
            Some(Event::Signal { signo, siginfo, .. }) => {
                self.inject_signal(inf, hook, tid, signo, &siginfo)
            }
            _ => Ok(None),
        }
    }

    /// Delivers a recorded signal to a stopped thread, before it executes anything.
    fn inject_signal(
        &mut self,
        inf: &mut Inferior,
        hook: &mut dyn StopHook,
        tid: Tid,
        signo: i32,
        siginfo: &[u8],
    ) -> Result<Option<ReplayStop>, ReplayError> {
        if tracing() {
            if let Ok(r) = tid.regs() {
                eprintln!(
                    "replay: injecting signal {signo} into {} at rip {:#x} rsp {:#x} rax {:#x} orig_rax {:#x}",
                    tid.0, r.0.rip, r.0.rsp, r.0.rax, r.0.orig_rax
                );
            }
        }
        // The kernel restarts (or not) an interrupted call itself at this delivery.
        self.restart_pending.remove(&self.recorded_tid(tid));
        if self.presignalled.take() != Some((tid, signo)) {
            tid.kill(self.live_pid, signo)?;
        }
        tid.cont(0)?;
        loop {
            match hindsight_ptrace::wait_tid(tid)? {
                WaitEvent::Stopped(Stop::Signal(s)) if s == signo => break,
                WaitEvent::Stopped(Stop::Syscall) => tid.cont(0)?,
                // Kernel surprise: a seized thread reports job control as event stops,
                // which have no effect on the program: a SIGCONT sent to it first reports one
                // (the end of a group stop that never began), and a SIGCONT that ended a
                // recorded stop of its process while it ran left it a notification trap
                // (SIGTRAP) to report before anything else.
                WaitEvent::Stopped(Stop::EventStop(_)) => tid.cont(0)?,
                WaitEvent::Stopped(other) => {
                    return Ok(Some(self.diverged(
                        self.recorded_tid(tid),
                        format!("signal {}", crate::divergence::signal_name(signo)),
                        format!("{other:?}"),
                    )))
                }
                WaitEvent::Exited(_) | WaitEvent::Killed(_) => {
                    return Ok(Some(self.diverged(
                        self.recorded_tid(tid),
                        format!("signal {}", crate::divergence::signal_name(signo)),
                        "the thread exited".into(),
                    )))
                }
            }
        }
        if siginfo.len() >= std::mem::size_of::<libc::siginfo_t>() {
            // SAFETY: siginfo_t is plain data; the slice holds at least its size.
            let si: libc::siginfo_t =
                unsafe { std::ptr::read_unaligned(siginfo.as_ptr().cast::<libc::siginfo_t>()) };
            tid.set_siginfo(&si)?;
        }
        inf.set_pending_signal(tid, signo);
        if hook.stops_on_signal(signo) {
            return Ok(Some(ReplayStop::Program(StopEvent::Signal {
                tid,
                signal: signo,
            })));
        }
        // The recorded run got it: replay delivers it whatever `handle` says of passing.
        hook.signal_arrived(inf, tid, signo);
        Ok(None)
    }

    /// A thread stopped at a syscall: it must be the head event's.
    fn on_syscall(
        &mut self,
        inf: &mut Inferior,
        tid: Tid,
    ) -> Result<Option<ReplayStop>, ReplayError> {
        let regs = tid.regs()?;
        let nr = regs.0.orig_rax;
        let args = regs.syscall_args();
        let rtid = self.recorded_tid(tid);
        let replayed = describe_syscall(nr, &args);
        if self
            .agent
            .is_some_and(|a| regs.pc() == a.addrs.report + hindsight_agent::abi::SYSCALL_LEN)
        {
            return self.agent_report(tid).map(Some);
        }
        if let Some(s) = self.at_held_call(tid, rtid, &regs)? {
            return Ok(Some(s));
        }
        if let Some(s) = self.batch_answered(rtid, &replayed)? {
            return Ok(Some(s));
        }
        let Some(event) = self.peek()?.cloned() else {
            return Ok(Some(self.end_of_recording()));
        };
        let same = |t: i32, n: u64, a: &[u64; 6]| t == rtid && n == nr && a[..3] == args[..3];
        if self.fork_at.is_some() && self.fork_at == self.head.as_ref().map(|h| h.index) {
            let child = self.fork_for_real(tid, regs)?;
            return Ok(Some(ReplayStop::Program(StopEvent::Syscall { tid: child })));
        }
        match event {
            Event::Syscall {
                tid: t,
                nr: n,
                args: a,
                result,
                writes,
                mapped,
            } if same(t, n, &a) => {
                self.consume();
                self.complete_syscall(inf, tid, regs, nr, &args, result, &writes, mapped)
            }
            Event::SyscallEntry {
                tid: t,
                nr: n,
                args: a,
            } if same(t, n, &a) => {
                self.consume();
                self.parked.insert(rtid, Parked { nr, args, regs });
                Ok(None)
            }
            Event::Exec {
                tid: t, path, file, ..
            } if t == rtid && is_exec(nr) => {
                self.consume();
                if let Some(fd) = self.exec_by_descriptor(nr, &args)? {
                    // fexecve: the descriptor is not open in replay (its open was not run);
                    // the trace's copy of the program takes its number, then the call runs.
                    if let Some(stop) = self.open_copy_as(tid, regs, file, fd)? {
                        return Ok(Some(stop));
                    }
                    let mut r = regs;
                    r.0.rip = regs.0.rip - 2;
                    r.0.rax = nr;
                    r.0.orig_rax = u64::MAX;
                    tid.set_regs(&r)?;
                }
                self.exec(inf, tid, &path)
            }
            other => Ok(Some(self.diverged(rtid, describe_event(&other), replayed))),
        }
    }

    /// Finishes a syscall whose result is known: skipped with the recorded result, or run for
    /// real when it shapes the process.
    #[allow(clippy::too_many_arguments)]
    fn complete_syscall(
        &mut self,
        inf: &mut Inferior,
        tid: Tid,
        regs: Regs,
        nr: u64,
        args: &[u64; 6],
        result: i64,
        writes: &[MemWrite],
        mapped: Option<MappedFile>,
    ) -> Result<Option<ReplayStop>, ReplayError> {
        let name = hindsight_syscalls::name(nr).unwrap_or("");
        let class = hindsight_syscalls::classify(nr, args).unwrap_or(Replay::Emulate);
        let creates_process = matches!(name, "fork" | "vfork")
            || (matches!(name, "clone") && args[0] & libc::CLONE_THREAD as u64 == 0)
            || (name == "clone3" && self.clone3_flags(args[0]) & libc::CLONE_THREAD as u64 == 0);
        let failed = hindsight_syscalls::is_error(result);
        // rt_sigreturn "returns" the interrupted code's rax, which may look like an error
        // (-EINTR after a signal interrupted a syscall): it always runs.
        // madvise and mprotect may fail after acting on part of their range (ENOMEM at a
        // hole, EINVAL at a locked page): they run even then, on the same memory map.
        let partial = matches!(name, "madvise" | "mprotect" | "pkey_mprotect");
        let execute = class == Replay::Execute
            && !creates_process
            && (!failed || partial || matches!(name, "exit_group" | "rt_sigreturn"));
        if !execute {
            if let Some(signo) = self.signal_let_in_by(name, result, tid)? {
                self.interrupt_for_real(tid, regs, nr, args, result, signo)?;
                return Ok(None);
            }
            self.skip(tid, regs, nr, result)?;
            self.write_all(writes)?;
            return Ok(None);
        }
        match name {
            "exit_group" => {
                tid.cont(0)?;
                // Every thread dies; the leader is reported last.
                loop {
                    match hindsight_ptrace::wait_any()? {
                        (t, WaitEvent::Exited(code)) if t.0 == self.live_pid => {
                            inf.set_exited(StopEvent::Exited(code));
                            return Ok(Some(self.on_exit(StopEvent::Exited(code))?));
                        }
                        (t, WaitEvent::Killed(sig)) if t.0 == self.live_pid => {
                            inf.set_exited(StopEvent::Killed(sig));
                            return Ok(Some(self.on_exit(StopEvent::Killed(sig))?));
                        }
                        (t, WaitEvent::Stopped(_)) => {
                            let _ = t.cont(0);
                        }
                        _ => {}
                    }
                }
            }
            "exit" => {
                tid.cont(0)?;
                if tid.0 != self.live_pid {
                    loop {
                        match hindsight_ptrace::wait_tid(tid)? {
                            WaitEvent::Exited(_) | WaitEvent::Killed(_) => break,
                            WaitEvent::Stopped(_) => tid.cont(0)?,
                        }
                    }
                }
                inf.remove_thread(tid);
                self.gone.insert(self.recorded_tid(tid));
                Ok(None)
            }
            // Runs when the thread resumes; it restores the registers itself.
            "rt_sigreturn" => {
                self.sigreturn_pending.insert(tid);
                Ok(None)
            }
            "clone" | "clone3" => {
                // The address the kernel clears when the thread exits (CLONE_CHILD_CLEARTID).
                let (flags, child_tid) = if name == "clone" {
                    (args[0], args[3])
                } else {
                    (
                        self.mem.read_u64(args[0]).unwrap_or(0),
                        self.mem.read_u64(args[0] + 16).unwrap_or(0),
                    )
                };
                if flags & libc::CLONE_CHILD_CLEARTID as u64 != 0 && result > 0 {
                    self.clear_tid.insert(result as i32, child_tid);
                }
                self.execute_clone(inf, tid, regs, result, writes)
            }
            "shmat" => self.execute_shmat(tid, regs, args, result, mapped),
            "shmdt" => self.execute_shmdt(tid, regs, args, result),
            "mmap" => {
                let stop = self.execute_mmap(tid, regs, args, result, mapped)?;
                if stop.is_none() {
                    self.follow_code(inf, tid, name, args, result)?;
                }
                Ok(stop)
            }
            _ => {
                let mut r = regs;
                tid.set_regs(&r)?;
                let actual = self.run_to_exit(tid)?;
                if matches!(name, "brk" | "mremap") && actual != result {
                    return Ok(Some(self.diverged(
                        self.recorded_tid(tid),
                        format!("{} = {result:#x}", describe_syscall(nr, args)),
                        format!("{} = {actual:#x}", describe_syscall(nr, args)),
                    )));
                }
                r = tid.regs()?;
                r.0.rax = result as u64;
                tid.set_regs(&r)?;
                self.write_all(writes)?;
                self.follow_code(inf, tid, name, args, result)?;
                Ok(None)
            }
        }
    }

    /// Patches code that syscall `name` made executable (as the recorder did, at the same
    /// point), forgets code it unmapped.
    fn follow_code(
        &mut self,
        inf: &mut Inferior,
        tid: Tid,
        name: &str,
        args: &[u64; 6],
        result: i64,
    ) -> Result<(), ReplayError> {
        if let Some(c) = self.counter.as_mut() {
            if hindsight_ticks::counter::changes_code(name, args, result as u64, c) {
                c.patch_new(tid, &self.mem)?;
                self.publish_code(inf);
            }
        }
        Ok(())
    }

    fn clone3_flags(&self, args_addr: u64) -> u64 {
        self.mem.read_u64(args_addr).unwrap_or(0)
    }

    /// Skips the syscall at a seccomp stop, with `result` as its return value.
    /// The signal that interrupted syscall `name` of `tid` with `result`, if the call swaps
    /// the signal mask while it waits (sigsuspend, ppoll, pselect6) and that signal comes
    /// next: it was let in by the call's temporary mask, which its handler's frame records.
    fn signal_let_in_by(
        &mut self,
        name: &str,
        result: i64,
        tid: Tid,
    ) -> Result<Option<i32>, ReplayError> {
        const EINTR: i64 = -4;
        let interrupted = result == EINTR || (-516..=-512).contains(&result);
        if !interrupted || !matches!(name, "rt_sigsuspend" | "ppoll" | "pselect6") {
            return Ok(None);
        }
        let rtid = self.recorded_tid(tid);
        Ok(match self.peek()? {
            Some(Event::Signal {
                tid: t,
                signo,
                point: SignalPoint::AtStop,
                ..
            }) if *t == rtid => Some(*signo),
            _ => None,
        })
    }

    /// Runs an interrupted mask-swapping syscall (see [`Replayer::signal_let_in_by`]) for
    /// real, with its signal already pending: the call installs its temporary mask, which
    /// lets the signal in at once, and the kernel delivers it under that mask when the
    /// signal event is replayed (not sent a second time). ppoll and pselect6 watch no
    /// descriptor and have no timeout: nothing of the outside world is looked at.
    fn interrupt_for_real(
        &mut self,
        tid: Tid,
        regs: Regs,
        nr: u64,
        args: &[u64; 6],
        result: i64,
        signo: i32,
    ) -> Result<(), ReplayError> {
        // SAFETY: tgkill to our own tracee; it is stopped, the signal stays pending.
        unsafe {
            libc::syscall(libc::SYS_tgkill, self.live_pid, tid.0, signo);
        }
        let mut a = *args;
        match hindsight_syscalls::name(nr).unwrap_or("") {
            // ppoll(fds, nfds, timeout, sigmask, sigsetsize)
            "ppoll" => {
                a[1] = 0;
                a[2] = 0;
            }
            // pselect6(nfds, readfds, writefds, exceptfds, timeout, {sigmask, size})
            "pselect6" => {
                a[..5].fill(0);
            }
            _ => {}
        }
        let mut r = regs;
        r.set_syscall_args(a);
        tid.set_regs(&r)?;
        self.run_to_exit(tid)?;
        // The program's own registers back, with the recorded result; a restartable result
        // keeps the call number for the kernel's restart logic.
        let mut back = regs;
        back.0.orig_rax = if (-516..=-512).contains(&result) {
            nr
        } else {
            u64::MAX
        };
        back.0.rax = result as u64;
        tid.set_regs(&back)?;
        self.presignalled = Some((tid, signo));
        Ok(())
    }

    fn skip(&mut self, tid: Tid, mut regs: Regs, nr: u64, result: i64) -> Result<(), ReplayError> {
        regs.0.orig_rax = u64::MAX;
        regs.0.rax = result as u64;
        tid.set_regs(&regs)?;
        if (-516..=-512).contains(&result) {
            // A restartable result: the kernel restarts the call when the thread next runs
            // — as the handler of a signal delivered first decides (it must see a syscall at
            // its exit: orig_rax), or at once when no signal comes (a ptrace stop interrupted
            // the call; [`Replayer::restart_now`]). Until then the thread stands at the
            // syscall's end with the restart code, as a position recorded there says.
            self.run_to_exit(tid)?;
            regs.0.orig_rax = nr;
            regs.0.rax = result as u64;
            tid.set_regs(&regs)?;
            self.restart_pending.insert(self.recorded_tid(tid));
        }
        Ok(())
    }

    /// `tid` is about to run without a signal to deliver first: if its last syscall ended
    /// with a restart code, the kernel restarted the call without the program seeing that
    /// code (no handler ran) — the syscall instruction again, with its number
    /// (restart_syscall for -ERESTART_RESTARTBLOCK).
    fn restart_now(&mut self, tid: Tid) -> Result<(), ReplayError> {
        if !self.restart_pending.remove(&self.recorded_tid(tid)) {
            return Ok(());
        }
        let mut regs = tid.regs()?;
        let code = regs.0.rax as i64;
        if regs.0.orig_rax == u64::MAX || !(-516..=-512).contains(&code) {
            // Moved since (the user set its registers, or it went through a checkpoint's
            // restore): nothing left to restart.
            return Ok(());
        }
        const ERESTART_RESTARTBLOCK: i64 = -516;
        regs.0.rax = if code == ERESTART_RESTARTBLOCK {
            libc::SYS_restart_syscall as u64
        } else {
            regs.0.orig_rax
        };
        regs.0.orig_rax = u64::MAX;
        regs.set_pc(regs.pc().wrapping_sub(2));
        tid.set_regs(&regs)?;
        Ok(())
    }

    /// Lets the syscall at `tid`'s seccomp stop run and waits for its exit; returns rax.
    fn run_to_exit(&mut self, tid: Tid) -> Result<i64, ReplayError> {
        tid.syscall(0)?;
        loop {
            match hindsight_ptrace::wait_tid(tid)? {
                WaitEvent::Stopped(Stop::Syscall)
                    if tid.syscall_op()? == hindsight_ptrace::thread::SyscallOp::Exit =>
                {
                    return Ok(tid.regs()?.0.rax as i64)
                }
                WaitEvent::Stopped(Stop::Seccomp | Stop::Syscall) => tid.syscall(0)?,
                WaitEvent::Stopped(Stop::Signal(sig)) => tid.syscall(sig)?,
                WaitEvent::Stopped(_) => tid.syscall(0)?,
                WaitEvent::Exited(_) | WaitEvent::Killed(_) => {
                    return Err(ReplayError::Unsupported(format!(
                        "thread {} exited during a syscall that replay ran",
                        tid.0
                    )))
                }
            }
        }
    }

    /// Executes syscall `nr(args)` in `tid`, which is stopped at a syscall's exit with the pc
    /// just past a `syscall` instruction: the pc is moved back onto that instruction, which
    /// runs again with our registers (through its seccomp stop) up to its exit.
    fn rerun_syscall(
        &mut self,
        tid: Tid,
        base: &Regs,
        nr: u64,
        args: [u64; 6],
    ) -> Result<i64, ReplayError> {
        let mut r = *base;
        r.0.rip = base.0.rip - 2;
        r.0.rax = nr;
        r.0.orig_rax = u64::MAX;
        r.set_syscall_args(args);
        tid.set_regs(&r)?;
        tid.syscall(0)?;
        loop {
            match hindsight_ptrace::wait_tid(tid)? {
                WaitEvent::Stopped(Stop::Seccomp) => tid.syscall(0)?,
                WaitEvent::Stopped(Stop::Syscall) => {
                    // The entry stop comes first (then the seccomp stop), then the exit.
                    if tid.syscall_op()? == hindsight_ptrace::thread::SyscallOp::Exit {
                        return Ok(tid.regs()?.0.rax as i64);
                    }
                    tid.syscall(0)?;
                }
                WaitEvent::Stopped(_) => tid.syscall(0)?,
                WaitEvent::Exited(_) | WaitEvent::Killed(_) => {
                    return Err(ReplayError::Unsupported(format!(
                        "thread {} exited during a syscall that replay ran",
                        tid.0
                    )))
                }
            }
        }
    }

    /// A System V shared memory segment attached (`shmat(id, addr, flags)`): the recording
    /// took it as a shared mapping of the segment's file, which replay maps the same way (its
    /// memory file, at the recorded address); the segment itself is not there in replay.
    fn execute_shmat(
        &mut self,
        tid: Tid,
        regs: Regs,
        args: &[u64; 6],
        result: i64,
        mapped: Option<MappedFile>,
    ) -> Result<Option<ReplayStop>, ReplayError> {
        const SHM_RDONLY: u64 = 0o10000;
        const SHM_EXEC: u64 = 0o100000;
        let Some(m) = mapped else {
            return Ok(Some(self.diverged(
                self.recorded_tid(tid),
                format!("shmat = {result:#x}"),
                "the recording holds no copy of the segment".into(),
            )));
        };
        let len = std::fs::metadata(self.reader.file_path(m.file)?)
            .map(|md| md.len())
            .unwrap_or(0);
        let prot = if args[2] & SHM_RDONLY != 0 {
            libc::PROT_READ
        } else {
            libc::PROT_READ | libc::PROT_WRITE
        } | if args[2] & SHM_EXEC != 0 {
            libc::PROT_EXEC
        } else {
            0
        };
        let mmap_args = [
            result as u64,
            len,
            prot as u64,
            libc::MAP_SHARED as u64,
            0,
            0,
        ];
        // This stop's syscall becomes that mmap.
        let mut r = regs;
        r.0.orig_rax = libc::SYS_mmap as u64;
        r.set_syscall_args(mmap_args);
        let stop = self.execute_mmap(tid, r, &mmap_args, result, Some(m))?;
        if stop.is_none() {
            return_result(tid, regs, result)?;
        }
        Ok(stop)
    }

    /// A segment detached (`shmdt(addr)`): as the kernel does, every mapping of the memory
    /// file made by the attachment at `addr` (those whose file offset says they start there)
    /// goes.
    fn execute_shmdt(
        &mut self,
        tid: Tid,
        regs: Regs,
        args: &[u64; 6],
        result: i64,
    ) -> Result<Option<ReplayStop>, ReplayError> {
        let addr = args[0];
        let maps = std::fs::read_to_string(format!("/proc/{}/maps", self.live_pid))
            .map_err(|e| ReplayError::Unsupported(format!("reading the memory map: {e}")))?;
        let ranges: Vec<(u64, u64)> = maps
            .lines()
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                let (start, end) = f.next()?.split_once('-')?;
                let (start, end) = (
                    u64::from_str_radix(start, 16).ok()?,
                    u64::from_str_radix(end, 16).ok()?,
                );
                let offset = u64::from_str_radix(f.nth(1)?, 16).ok()?;
                let path = f.nth(2)?;
                (path.starts_with(crate::memfiles::NAME_IN_MAPS)
                    && start.checked_sub(offset) == Some(addr))
                .then_some((start, end))
            })
            .collect();
        let mut at_entry = true;
        for (start, end) in ranges {
            let munmap = [start, end - start, 0, 0, 0, 0];
            if at_entry {
                let mut r = regs;
                r.0.orig_rax = libc::SYS_munmap as u64;
                r.set_syscall_args(munmap);
                tid.set_regs(&r)?;
                self.run_to_exit(tid)?;
                at_entry = false;
            } else {
                self.rerun_syscall(tid, &regs, libc::SYS_munmap as u64, munmap)?;
            }
        }
        if at_entry {
            self.skip(tid, regs, libc::SYS_shmdt as u64, result)?;
        } else {
            return_result(tid, regs, result)?;
        }
        Ok(None)
    }

    /// mmap at the recorded address; a file from the trace's copy of it.
    fn execute_mmap(
        &mut self,
        tid: Tid,
        regs: Regs,
        args: &[u64; 6],
        result: i64,
        mapped: Option<MappedFile>,
    ) -> Result<Option<ReplayStop>, ReplayError> {
        let addr = result as u64;
        // A private file mapping maps the trace's copy at the recorded address; a shared
        // one maps the file's memory file (`memfiles`), shared. Anonymous shared memory
        // becomes private and reserves no swap: it counted for nothing when recorded.
        let fixed = |flags: u64| {
            // MAP_SHARED or MAP_SHARED_VALIDATE.
            let shared = flags & 0x03 != libc::MAP_PRIVATE as u64;
            (flags & !0x10_0000 & !0x03)
                | 0x02
                | libc::MAP_FIXED as u64
                | if shared {
                    libc::MAP_NORESERVE as u64
                } else {
                    0
                }
        };
        let rtid = self.recorded_tid(tid);
        let actual = match mapped {
            None => {
                let mut r = regs;
                r.0.rdi = addr;
                // Shared anonymous memory becomes private too: the process replays alone,
                // what others wrote into it comes as the recording's `KernelWrite`s, and a
                // checkpoint (a fork) must not share its pages with the replay going on —
                // going back to it would find them as they are later.
                r.0.r10 = fixed(args[3]);
                if args[3] & libc::MAP_ANONYMOUS as u64 == 0 {
                    // A mapping of /dev/zero (the one file the recorder maps without a copy):
                    // the descriptor is not there in replay, and anonymous memory is the same.
                    r.0.r10 |= libc::MAP_ANONYMOUS as u64;
                    r.0.r8 = u64::MAX;
                    r.0.r9 = 0;
                }
                tid.set_regs(&r)?;
                self.run_to_exit(tid)?
            }
            Some(m) => 'mapped: {
                let copy = self.reader.file_path(m.file)?;
                let shared = args[3] & 0x03 != libc::MAP_PRIVATE as u64;
                let copy_len = std::fs::metadata(&copy).map(|md| md.len()).unwrap_or(0);
                let extent = m
                    .offset
                    .saturating_add(args[1].saturating_add(4095) & !4095);
                // Shared mappings, and private ones reaching past the copy's end (the file
                // grows under them), map the file's memory file (see `memfiles`). Once a
                // file is mapped from one of the two, its next mappings are too: mappings
                // of one open file merge into one area as they did when recorded. Program
                // images (the loader maps them MAP_DENYWRITE, reserving more than the file)
                // are always the copy: code is patched and found by its file.
                let image = args[3] & libc::MAP_DENYWRITE as u64 != 0;
                let in_memory = shared
                    || (!image
                        && (self.memfiles.has(m.identity)
                            || (extent > copy_len
                                && self.copies.fd(self.live_pid, m.file, &copy).is_none())));
                let flags = if shared {
                    (args[3] & !0x10_0000 & !0x03) | 0x01 | libc::MAP_FIXED as u64
                } else {
                    fixed(args[3])
                };
                let (target, open_fd) = if in_memory {
                    self.memfiles.prepare(m.identity, m.file, &copy)?;
                    let Some(path) = self.memfiles.path(m.identity) else {
                        return Err(ReplayError::Unsupported(
                            "replay's memory file vanished".into(),
                        ));
                    };
                    (path, self.memfiles.tracee_fd(self.live_pid, m.identity))
                } else {
                    let fd = self.copies.fd(self.live_pid, m.file, &copy);
                    (copy.clone(), fd)
                };
                if let Some(fd) = open_fd {
                    // This stop's syscall becomes the mmap of the file already open.
                    let mut r = regs;
                    r.0.rdi = addr;
                    r.0.r10 = flags;
                    r.0.r8 = fd as u64;
                    r.0.r9 = m.offset;
                    tid.set_regs(&r)?;
                    break 'mapped self.run_to_exit(tid)?;
                }
                // This stop's syscall becomes the openat; the mmap follows. The descriptor
                // stays open for the file's next mappings (see `copies`).
                let mode = if in_memory {
                    libc::O_RDWR
                } else {
                    libc::O_RDONLY
                };
                let fd = self.inject_openat(tid, &regs, &target, mode | libc::O_CLOEXEC)?;
                if fd < 0 {
                    return Ok(Some(self.diverged(
                        rtid,
                        format!("mmap of {}", copy.display()),
                        format!("cannot open the trace's copy (error {})", -fd),
                    )));
                }
                let a = self.rerun_syscall(
                    tid,
                    &regs,
                    libc::SYS_mmap as u64,
                    [addr, args[1], args[2], flags, fd as u64, m.offset],
                )?;
                if in_memory {
                    self.memfiles.set_tracee_fd(m.identity, fd as i32);
                } else {
                    self.copies.insert(m.file, fd as i32);
                }
                a
            }
        };
        // Leave the thread at the exit stop with the original registers and the result.
        let mut r = regs;
        r.0.orig_rax = u64::MAX;
        r.0.rax = result as u64;
        tid.set_regs(&r)?;
        if actual != result {
            return Ok(Some(self.diverged(
                rtid,
                format!("mmap = {result:#x}"),
                format!("mmap = {actual:#x}"),
            )));
        }
        Ok(None)
    }

    /// A new thread, for real; the program sees the recorded tid.
    fn execute_clone(
        &mut self,
        inf: &mut Inferior,
        tid: Tid,
        regs: Regs,
        result: i64,
        writes: &[MemWrite],
    ) -> Result<Option<ReplayStop>, ReplayError> {
        tid.set_regs(&regs)?;
        tid.syscall(0)?;
        let mut child = None;
        loop {
            match hindsight_ptrace::wait_tid(tid)? {
                WaitEvent::Stopped(Stop::Clone) => {
                    let c = Tid(tid.event_msg()? as i32);
                    // Its first stop (a new thread starts with a stop of its own).
                    if !matches!(hindsight_ptrace::wait_tid(c)?, WaitEvent::Stopped(_)) {
                        return Err(ReplayError::Unsupported(
                            "a new thread died before its first instruction".into(),
                        ));
                    }
                    inf.add_thread(c);
                    child = Some(c);
                    tid.syscall(0)?;
                }
                WaitEvent::Stopped(Stop::Syscall) => break,
                WaitEvent::Stopped(_) => tid.syscall(0)?,
                WaitEvent::Exited(_) | WaitEvent::Killed(_) => {
                    return Err(ReplayError::Unsupported(format!(
                        "thread {} exited during clone",
                        tid.0
                    )))
                }
            }
        }
        let mut r = tid.regs()?;
        r.0.rax = result as u64;
        tid.set_regs(&r)?;
        self.write_all(writes)?;
        match child {
            Some(c) => {
                self.live.insert(result as i32, c);
                self.recorded.insert(c.0, result as i32);
                Ok(None)
            }
            None => Ok(Some(self.diverged(
                self.recorded_tid(tid),
                format!("clone = {result}"),
                "no thread was created".into(),
            ))),
        }
    }

    /// The descriptor an exec runs the program of: `execveat(fd, "", …, AT_EMPTY_PATH)` or
    /// `execve("/proc/self/fd/N")` / `execve("/dev/fd/N")` (glibc's fexecve).
    fn exec_by_descriptor(&self, nr: u64, args: &[u64; 6]) -> Result<Option<i32>, ReplayError> {
        let mut name = [0u8; 32];
        let path_at = if nr == libc::SYS_execveat as u64 {
            args[1]
        } else {
            args[0]
        };
        if self.mem.read(path_at, &mut name).is_err() {
            return Ok(None);
        }
        let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
        let name = &name[..end];
        if nr == libc::SYS_execveat as u64 {
            let empty_path = args[4] & libc::AT_EMPTY_PATH as u64 != 0;
            return Ok((empty_path && name.is_empty()).then_some(args[0] as i32));
        }
        let n = name
            .strip_prefix(b"/proc/self/fd/")
            .or_else(|| name.strip_prefix(b"/dev/fd/"));
        Ok(n.and_then(|n| std::str::from_utf8(n).ok()?.parse().ok()))
    }

    /// Makes the syscall `tid` is stopped at (its seccomp stop, with `regs`) an `openat` of
    /// `path` with `flags`, run to its exit; returns its result (a descriptor, or -errno).
    /// The path is written below the red zone and the bytes there are put back after.
    fn inject_openat(
        &mut self,
        tid: Tid,
        regs: &Regs,
        path: &Path,
        flags: i32,
    ) -> Result<i64, ReplayError> {
        let mut bytes = path.as_os_str().as_bytes().to_vec();
        bytes.push(0);
        let scratch = (regs.0.rsp - 128 - 4096) & !15;
        let mut saved = vec![0u8; bytes.len()];
        self.mem.read(scratch, &mut saved)?;
        self.mem.write(scratch, &bytes)?;
        let mut r = *regs;
        r.0.orig_rax = libc::SYS_openat as u64;
        r.0.rdi = libc::AT_FDCWD as u64;
        r.0.rsi = scratch;
        r.0.rdx = flags as u64;
        tid.set_regs(&r)?;
        let opened = self.run_to_exit(tid)?;
        self.mem.write(scratch, &saved)?;
        Ok(opened)
    }

    /// Opens the trace's copy `file` in the process (stopped at a syscall's seccomp stop with
    /// `regs`) as descriptor `fd`, through injected openat, dup2 and close. Leaves the thread
    /// at the exit stop of the last.
    fn open_copy_as(
        &mut self,
        tid: Tid,
        regs: Regs,
        file: hindsight_trace::FileId,
        fd: i32,
    ) -> Result<Option<ReplayStop>, ReplayError> {
        let copy = self.reader.file_path(file)?;
        let opened = self.inject_openat(tid, &regs, &copy, libc::O_RDONLY | libc::O_CLOEXEC)?;
        if opened < 0 {
            return Ok(Some(self.diverged(
                self.recorded_tid(tid),
                format!("exec of {}", copy.display()),
                format!("cannot open the trace's copy (error {})", -opened),
            )));
        }
        if opened != fd as i64 {
            self.rerun_syscall(
                tid,
                &regs,
                libc::SYS_dup2 as u64,
                [opened as u64, fd as u64, 0, 0, 0, 0],
            )?;
            self.rerun_syscall(
                tid,
                &regs,
                libc::SYS_close as u64,
                [opened as u64, 0, 0, 0, 0, 0],
            )?;
        }
        Ok(None)
    }

    /// The program executes a new one, for real (by the recorded path).
    fn exec(
        &mut self,
        inf: &mut Inferior,
        tid: Tid,
        path: &[u8],
    ) -> Result<Option<ReplayStop>, ReplayError> {
        tid.syscall(0)?;
        loop {
            match hindsight_ptrace::wait_any()? {
                (_, WaitEvent::Stopped(Stop::Exec)) => break,
                (t, WaitEvent::Stopped(Stop::Syscall))
                    if t == tid && t.syscall_op()? == hindsight_ptrace::thread::SyscallOp::Exit =>
                {
                    // execve failed here although it succeeded when recorded.
                    return Ok(Some(self.diverged(
                        self.recorded_tid(tid),
                        format!("exec of {}", String::from_utf8_lossy(path)),
                        format!("exec failed (error {})", -(t.regs()?.0.rax as i64)),
                    )));
                }
                (t, WaitEvent::Stopped(_)) if t == tid => tid.syscall(0)?,
                _ => {}
            }
        }
        let leader = Tid(self.live_pid);
        let old = self.recorded_tid(tid);
        inf.reset_after_exec(leader)?;
        self.mem = ProcessMemory::open(self.live_pid)?;
        hindsight_ptrace::auxv::hide_vdso(&self.mem, leader.regs()?.sp())?;
        // Only the exec'ing thread is left, with the process id.
        self.live.retain(|_, l| l.0 == self.live_pid || *l == tid);
        self.live.insert(self.pid, leader);
        self.recorded.clear();
        self.recorded.insert(self.live_pid, self.pid);
        let _ = old;
        self.parked.clear();
        self.async_site = None;
        leader.syscall(0)?;
        loop {
            match hindsight_ptrace::wait_tid(leader)? {
                WaitEvent::Stopped(Stop::Syscall) => break,
                WaitEvent::Stopped(_) => leader.syscall(0)?,
                _ => break,
            }
        }
        // The new program's counter, installed where the recorder installed it: at the
        // exec's syscall exit, before its first instruction.
        self.agent = load_agent(&self.reader, leader, &self.mem)?;
        self.batch = None;
        if self.counter.is_some() {
            self.counter = Some(Counter::install(
                leader,
                self.pid,
                &self.mem,
                self.agent.map(agent_code),
            )?);
            self.publish_code(inf);
        }
        self.apply_kernel_writes()?;
        let path = std::fs::read_link(format!("/proc/{}/exe", self.live_pid))
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| String::from_utf8_lossy(path).into_owned());
        Ok(Some(ReplayStop::Program(StopEvent::Exec {
            tid: leader,
            path,
        })))
    }

    /// A signal stopped a thread: an rdtsc, a recorded fault, or the user's interrupt.
    fn on_signal(
        &mut self,
        inf: &mut Inferior,
        hook: &mut dyn StopHook,
        tid: Tid,
        signal: i32,
    ) -> Result<Option<ReplayStop>, ReplayError> {
        let rtid = self.recorded_tid(tid);
        let event = self.peek()?.cloned();
        if signal == libc::SIGSEGV {
            // A syscall made with an invalid stack pointer faults at its stub's call into the
            // agent; as when recorded, it is made in place, traced.
            let regs = tid.regs()?;
            let in_place = self
                .counter
                .as_ref()
                .and_then(|c| c.view().agent_stub(regs.pc()))
                .and_then(|stub| stub.in_place(&regs));
            if let Some(r) = in_place {
                // Run to the syscall's seccomp stop here: the stub's `syscall` is not a
                // program position that a resume could start from.
                inf.set_pending_signal(tid, 0);
                inf.moved(tid);
                tid.set_regs(&r)?;
                tid.cont(0)?;
                return match hindsight_ptrace::wait_tid(tid)? {
                    WaitEvent::Stopped(Stop::Seccomp) => self.on_syscall(inf, tid),
                    other => Err(ReplayError::Unsupported(format!(
                        "a syscall made with an invalid stack pointer did not reach its stop \
                         ({other:?})"
                    ))),
                };
            }
        }
        if signal == libc::SIGTRAP {
            let pc = tid.regs()?.pc();
            if let Some(trap) = self.counter.as_ref().and_then(|c| c.trap(pc)) {
                // The counter's own trap: never the program's signal.
                inf.set_pending_signal(tid, 0);
                let mut regs = tid.regs()?;
                regs.set_pc(trap.resume);
                if trap.set_zf {
                    regs.0.eflags &= !hindsight_ticks::assemble::ZF;
                }
                tid.set_regs(&regs)?;
                if let Some(c) = self.counter.as_mut() {
                    c.disarm(&self.mem)?;
                }
                let now_ticks = self.ticks_of(rtid);
                if let (Some((e, t)), Some(n)) = (self.tick_stop, now_ticks) {
                    if e == self.consumed && t == n {
                        self.tick_stop = None;
                        hook.clock(now_ticks);
                        return Ok(Some(ReplayStop::AtTick(tid)));
                    }
                }
                if let Some(n) = now_ticks {
                    if self.thread_tick_stops.contains(&(rtid, n)) {
                        hook.clock(now_ticks);
                        return Ok(Some(ReplayStop::AtTick(tid)));
                    }
                }
                let Some(event) = event else {
                    return Ok(Some(self.end_of_recording()));
                };
                let Some(point) = async_point(&event).filter(|_| event.tid() == Some(rtid)) else {
                    // Armed for an event that another thread's syscall came before: on.
                    return Ok(None);
                };
                let target = point.ticks.unwrap_or(0);
                let now = match self.counter.as_mut() {
                    Some(c) => c.ticks(&self.mem, rtid)?,
                    None => 0,
                };
                if now > target {
                    return Ok(Some(self.diverged(
                        rtid,
                        describe_event(&event),
                        format!(
                            "the thread ran past that position (it counted {now} ticks, not finding it at its {target}th)"
                        ),
                    )));
                }
                if at_position(point, inf, &regs) {
                    return self.at_tick(inf, hook, tid, &event, true);
                }
                // In the position's tick interval, not at it yet: a breakpoint finds it.
                return Ok(None);
            }
        }
        if signal == libc::SIGSEGV {
            let mut regs = tid.regs()?;
            if let Some(read) = tsc::tsc_read_at(&self.mem, regs.pc()) {
                return match event {
                    Some(Event::Rdtsc {
                        tid: t,
                        pc,
                        tsc: value,
                        aux,
                    }) if t == rtid && pc == regs.pc() => {
                        if let Some(s) = self.batch_answered(rtid, &format!("rdtsc at {pc:#x}"))? {
                            return Ok(Some(s));
                        }
                        self.consume();
                        tsc::complete(&mut regs, read, value, aux.unwrap_or(0));
                        tid.set_regs(&regs)?;
                        inf.set_pending_signal(tid, 0);
                        Ok(None)
                    }
                    other => Ok(Some(
                        self.diverged(
                            rtid,
                            other
                                .as_ref()
                                .map(describe_event)
                                .unwrap_or("the end".into()),
                            format!("rdtsc at {:#x}", regs.pc()),
                        ),
                    )),
                };
            }
        }
        match event {
            Some(Event::Signal {
                tid: t,
                signo,
                point: SignalPoint::Synchronous,
                ..
            }) if t == rtid && signo == signal => {
                let what = format!("signal {}", crate::divergence::signal_name(signal));
                if let Some(s) = self.batch_answered(rtid, &what)? {
                    return Ok(Some(s));
                }
                self.consume();
                if hook.stops_on_signal(signal) {
                    return Ok(Some(ReplayStop::Program(StopEvent::Signal { tid, signal })));
                }
                hook.signal_arrived(inf, tid, signal);
                Ok(None)
            }
            // Not in the recording: the user's ^C, or a signal from outside. It is not
            // delivered (the recorded run did not get it).
            _ => {
                inf.set_pending_signal(tid, 0);
                Ok(Some(ReplayStop::Program(StopEvent::Signal { tid, signal })))
            }
        }
    }

    /// The process ended: it must have ended this way in the recording.
    fn on_exit(&mut self, stop: StopEvent) -> Result<ReplayStop, ReplayError> {
        let status = match stop {
            StopEvent::Exited(c) => ExitStatus::Exited(c),
            StopEvent::Killed(s) => ExitStatus::Killed(s),
            _ => return Ok(ReplayStop::Program(stop)),
        };
        // Output and thread ends recorded before the process's end.
        while let Some(e) = self.peek()?.cloned() {
            match e {
                Event::Output { pid, fd, data } => {
                    self.echo(pid, fd, &data);
                    self.consume();
                }
                Event::ThreadExit { .. } | Event::KernelWrite { .. } => {
                    self.consume();
                }
                _ => break,
            }
        }
        match self.peek()?.cloned() {
            Some(Event::ProcessExit { status: recorded }) => {
                self.consume();
                if recorded == status {
                    Ok(ReplayStop::Program(stop))
                } else {
                    Ok(self.diverged(
                        self.pid,
                        format!("exit {recorded:?}"),
                        format!("exit {status:?}"),
                    ))
                }
            }
            None if self.reader.incomplete().is_some() => Ok(ReplayStop::Program(stop)),
            other => Ok(self.diverged(
                self.pid,
                other
                    .as_ref()
                    .map(describe_event)
                    .unwrap_or("the end".into()),
                format!("exit {status:?}"),
            )),
        }
    }
}

/// The patched code as the debugger sees through it (see `hindsight_control::codemap`).
struct PatchedCode(hindsight_ticks::counter::CodeView);

impl hindsight_control::CodeMap for PatchedCode {
    fn logical(&self, pc: u64) -> Option<u64> {
        self.0.logical(pc)
    }
    fn real(&self, addr: u64) -> u64 {
        self.0.real(addr)
    }
    fn unpatch(&self, addr: u64, buf: &mut [u8]) {
        self.0.unpatch(addr, buf)
    }
    fn is_trap(&self, pc: u64) -> bool {
        self.0.trap(pc).is_some()
    }
}

/// Whether the trace was recorded with this hindsight's instruction counter.
fn counted(reader: &TraceReader) -> bool {
    reader.header().clock.split_whitespace().next() == Some(hindsight_ticks::CLOCK)
}

/// Whether the trace was recorded with the in-process agent.
fn with_agent(reader: &TraceReader) -> bool {
    counted(reader) && hindsight_agent_host::used_in(&reader.header().clock) == Ok(true)
}

/// The in-process agent for a replayed program stopped before its first instruction, when
/// the recording had it (loaded where and when the recorder loaded it: before the counter
/// patches the code).
fn load_agent(
    reader: &TraceReader,
    tid: Tid,
    mem: &ProcessMemory,
) -> Result<Option<hindsight_agent_host::Agent>, ReplayError> {
    if !with_agent(reader) {
        return Ok(None);
    }
    Ok(Some(hindsight_agent_host::load(
        tid,
        mem,
        hindsight_agent_host::Mode::Replay,
    )?))
}

fn agent_code(a: hindsight_agent_host::Agent) -> hindsight_ticks::counter::AgentCode {
    hindsight_ticks::counter::AgentCode {
        entry: a.addrs.entry,
        code: a.addrs.code,
    }
}

/// The asynchronous position an event happens at, if it has one.
fn async_point(e: &Event) -> Option<&AsyncPoint> {
    match e {
        Event::Preempt { point, .. } => Some(point),
        Event::Signal {
            point: SignalPoint::Async(point),
            ..
        } => Some(point),
        _ => None,
    }
}

fn is_exec(nr: u64) -> bool {
    matches!(hindsight_syscalls::name(nr), Some("execve" | "execveat"))
}

/// Starts the recorded program, stopped at its exec. The recorded path is used when the file
/// there is still the recorded one (same bytes), so that the kernel lays out the stack as it
/// did; otherwise the trace's copy.
fn spawn_root(reader: &TraceReader, pin: bool) -> Result<(PathBuf, Inferior), ReplayError> {
    let h = reader.header();
    let original = PathBuf::from(OsString::from_vec(h.program.clone()));
    let copy = reader.file_path(h.executable)?;
    let same = match (std::fs::read(&original), std::fs::read(&copy)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    let program = if same { original } else { copy };
    let args: Vec<OsString> = h
        .args
        .iter()
        .skip(1)
        .map(|a| OsString::from_vec(a.clone()))
        .collect();
    let arg_refs: Vec<&OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let cwd = PathBuf::from(OsString::from_vec(h.cwd.clone()));
    let spawn = hindsight_ptrace::SpawnOptions {
        disable_aslr: true,
        cpu: pin.then(hindsight_ptrace::thread::current_cpu),
        trap_syscalls: true,
        trap_rdtsc: true,
        env: Some(
            h.env
                .iter()
                .map(|e| OsString::from_vec(e.clone()))
                .collect(),
        ),
        cwd: cwd.is_dir().then_some(cwd),
        argv0: h.args.first().map(|a| OsString::from_vec(a.clone())),
        untraced_ips: match with_agent(reader) {
            true => hindsight_agent_host::image::image()?.addrs.untraced_ips(),
            false => Vec::new(),
        },
    };
    let mut inf = Inferior::spawn_with(&program, &arg_refs, &spawn)?;
    yield_to_tracer(inf.pid());
    // One thread runs at a time: nothing else can pass a lifted breakpoint, and no scratch
    // page (which would move the recorded memory map) is needed.
    inf.set_step_over_mode(StepOverMode::NoSwitch);
    let mem = ProcessMemory::open(inf.pid())?;
    let sp = Tid(inf.pid()).regs()?.sp();
    hindsight_ptrace::auxv::hide_vdso(&mem, sp)?;
    Ok((program, inf))
}

/// `HINDSIGHT_TRACE_REPLAY=1`: the replay says on stderr what it does (events consumed,
/// stops, the approach of asynchronous positions), for hindsight's developers.
/// After syscalls replay ran in place of the program's (at its syscall's exit): the
/// program's own registers `regs` back, with the recorded `result`.
fn return_result(tid: Tid, regs: Regs, result: i64) -> Result<(), ReplayError> {
    let mut back = regs;
    back.0.orig_rax = u64::MAX;
    back.0.rax = result as u64;
    tid.set_regs(&back)?;
    Ok(())
}

pub(crate) fn tracing() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("HINDSIGHT_TRACE_REPLAY").is_some())
}

/// Puts the replayed process in the SCHED_IDLE class (its threads inherit it): when the tracer
/// wakes up to look at a thread running freely towards a position, it gets the CPU at once
/// instead of after the program's time slice (milliseconds, during which the program would
/// run past the position). Scheduling does not change what a replay computes.
fn yield_to_tracer(pid: i32) {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: plain syscall on our own child with a valid parameter block.
    unsafe {
        libc::sched_setscheduler(pid, libc::SCHED_IDLE, &param);
    }
}

/// A hook that stops for nothing (replaying ancestors of a process on the way to it, moving
/// a replay one instruction for time travel).
pub struct Silent;

impl StopHook for Silent {
    fn breakpoint_hit(&mut self, _: &Inferior, _: Tid, _: u64) -> bool {
        false
    }
    fn watchpoint_hit(&mut self, _: &Inferior, _: Tid, _: u8) -> bool {
        false
    }
    fn notify(&mut self, _: Notification) {}
    fn stops_on_signal(&mut self, _: i32) -> bool {
        false
    }
}

/// The front end's hook, wrapped: the replayer's own breakpoint (an asynchronous position)
/// is checked first, and every signal comes back to the replayer.
/// Says on stderr which registers differ from those of `point` (`HINDSIGHT_TRACE_REPLAY`).
fn trace_differences(point: &AsyncPoint, regs: &Regs) {
    let now = regs.to_words();
    for (i, (a, b)) in point.regs.iter().zip(now.iter()).enumerate() {
        if a != b {
            eprintln!("replay: register {i}: recorded {a:#x}, replay {b:#x}");
        }
    }
}

/// Whether a thread of `inf` with registers `regs` is at asynchronous position `point`.
fn at_position(point: &AsyncPoint, inf: &Inferior, regs: &Regs) -> bool {
    hindsight_record::point::matches(point, regs, |a, b| inf.read_memory(a, b).is_ok())
}

struct Wrapper<'a> {
    user: &'a mut dyn StopHook,
    target: Option<(Tid, AsyncPoint)>,
    reached: bool,
    user_stop: bool,
    /// The running thread's tick count, read from the counter word (told to the user's hook).
    clock: Option<hindsight_ticks::counter::Clock>,
}

impl Wrapper<'_> {
    /// Tells the user's hook the running thread's tick count now.
    fn tell_clock(&mut self, inf: &Inferior) {
        let ticks = self
            .clock
            .and_then(|c| c.read(|a, b| inf.read_memory(a, b).is_ok()));
        self.user.clock(ticks);
    }
}

impl StopHook for Wrapper<'_> {
    fn breakpoint_hit(&mut self, inf: &Inferior, tid: Tid, addr: u64) -> bool {
        if let Some((t, point)) = &self.target {
            // The position's pc is where the CPU was (moved code keeps its own addresses).
            if *t == tid
                && inf
                    .raw_regs(tid)
                    .is_ok_and(|regs| regs.pc() == point.regs[16] && at_position(point, inf, &regs))
            {
                self.reached = true;
            }
        }
        self.tell_clock(inf);
        self.user_stop = self.user.breakpoint_hit(inf, tid, addr);
        self.reached || self.user_stop
    }

    fn watchpoint_hit(&mut self, inf: &Inferior, tid: Tid, slots: u8) -> bool {
        self.tell_clock(inf);
        self.user.watchpoint_hit(inf, tid, slots)
    }

    fn notify(&mut self, note: Notification) {
        self.user.notify(note)
    }

    fn stops_on_signal(&mut self, _signal: i32) -> bool {
        true
    }

    fn at_event(&mut self, inf: &Inferior, events: u64, tid: Tid) -> bool {
        self.user.at_event(inf, events, tid)
    }
}
