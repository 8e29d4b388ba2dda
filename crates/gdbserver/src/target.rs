//! The replay as a gdbstub target: gdb's requests become calls on the engine's session
//! (`hindsight_engine::remote`), and every motion — forward or reverse — runs when gdbstub
//! waits for the stop (`wait_for_stop_reason`), synchronously; gdb's ^C during it interrupts
//! it at the next event.
//!
//! Threads are named by their *recorded* tids (what the program saw): time travel starts the
//! replay again, with new live tids, and gdb must keep seeing the same threads.

use std::num::NonZeroUsize;

use gdbstub::common::{Signal, Tid as GdbTid};
use gdbstub::stub::MultiThreadStopReason;
use gdbstub::target::ext::base::multithread::{
    MultiThreadBase, MultiThreadResume, MultiThreadResumeOps, MultiThreadSingleStep,
    MultiThreadSingleStepOps,
};
use gdbstub::target::ext::base::reverse_exec::{
    ReplayLogPosition, ReverseCont, ReverseContOps, ReverseStep, ReverseStepOps,
};
use gdbstub::target::ext::base::BaseOps;
use gdbstub::target::ext::breakpoints::{
    Breakpoints, BreakpointsOps, HwBreakpoint, HwBreakpointOps, HwWatchpoint, HwWatchpointOps,
    SwBreakpoint, SwBreakpointOps, WatchKind,
};
use gdbstub::target::ext::monitor_cmd::{ConsoleOutput, MonitorCmd, MonitorCmdOps};
use gdbstub::target::{Target, TargetError, TargetResult};
use hindsight_breakpoints::table::WatchAccess;
use hindsight_engine::remote::{self, ClientBreakpoints, RemoteStop};
use hindsight_engine::{Session, Tid};

use crate::arch::{RegNum, Regs, X86_64Linux, ORIG_RAX};

/// What the next wait for a stop does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Motion {
    Continue,
    Step(Tid),
    ReverseContinue,
    ReverseStep(Tid),
}

/// Errors that gdbstub ends a protocol session for (the server answers with an error and goes
/// on with the same client; the replay itself stays usable). Motions never fail this way:
/// their failures are stops.
#[derive(Debug, thiserror::Error)]
pub enum TargetFailure {
    /// The replay failed (diverged, or the trace is damaged).
    #[error("{0}")]
    Replay(String),
}

/// A replay served to gdb.
pub struct ReplayTarget {
    pub(crate) session: Session,
    pub(crate) client: ClientBreakpoints,
    pub(crate) motion: Motion,
    /// What `qGetTLSAddr` answers from (the connection reads it).
    pub(crate) tls: crate::conn::TlsTable,
    /// The threads gdb may name (the connection refuses packets naming others).
    pub(crate) threads: crate::conn::Threads,
    /// The client flushes its caches after `monitor` (the gdb that `--gdb` starts has a hook
    /// for it); other clients are told how when a command moved the replay.
    pub(crate) client_refreshes: bool,
    /// The server's log (connections, failures) goes to stderr.
    pub(crate) chatty: bool,
    /// `monitor` commands: the command line's interpreter, its text captured.
    pub(crate) monitor: crate::monitor::Monitor,
    /// What motions tell on the way (threads, dprintf text, periodic commands): the server's
    /// log, on stdout as the command line shows them.
    pub(crate) log: hindsight_cli::Console,
    /// Watches the client's connection for its ^C while a motion runs.
    pub(crate) watch: Option<crate::conn::InterruptWatch>,
}

impl ReplayTarget {
    /// Serves `session`.
    pub fn new(session: Session) -> ReplayTarget {
        ReplayTarget {
            session,
            client: ClientBreakpoints::default(),
            motion: Motion::Continue,
            tls: Default::default(),
            threads: Default::default(),
            client_refreshes: false,
            chatty: true,
            monitor: Default::default(),
            log: hindsight_cli::Console::terminal(),
            watch: None,
        }
    }

    /// A line of the server's log.
    pub(crate) fn log(&self, what: &str) {
        if self.chatty {
            eprintln!("hindsight: {what}");
        }
    }

    /// Refreshes the thread-local storage table and the list of threads (after a stop:
    /// threads and libraries change).
    pub(crate) fn refresh_tls(&mut self) {
        *self.tls.borrow_mut() = remote::tls_blocks(&self.session);
        *self.threads.borrow_mut() = remote::threads(&self.session)
            .into_iter()
            .map(|(_, tid)| remote::client_tid(&self.session, tid))
            .collect();
    }

    /// The client disconnected: its breakpoints go (and the watch on its connection), the
    /// replay stays where it is.
    pub fn forget_client(&mut self) {
        self.watch = None;
        self.client.clear(&mut self.session);
    }

    fn gdb_tid(&self, tid: Tid) -> GdbTid {
        let t = remote::client_tid(&self.session, tid).max(1) as usize;
        NonZeroUsize::new(t).unwrap_or(NonZeroUsize::MIN)
    }

    fn live(&self, tid: GdbTid) -> Option<Tid> {
        remote::live_tid(&self.session, tid.get() as i32).or_else(|| {
            // gdbstub's placeholder before gdb names a thread (a session started again after
            // a packet it could not parse): the selected thread.
            (tid == NonZeroUsize::MIN)
                .then(|| remote::selected_thread(&self.session))
                .flatten()
        })
    }

    /// A thread's registers now.
    fn current_registers(&self, tid: GdbTid) -> TargetResult<Regs, Self> {
        let live = self.live(tid).ok_or(TargetError::NonFatal)?;
        let (r, fp) = remote::registers(&self.session, live).map_err(|_| TargetError::NonFatal)?;
        Ok(Regs::from_ptrace(&r, fp.as_ref()))
    }

    /// Runs the planned motion; returns the stop for gdb, and why the motion failed if it
    /// did. A failure is a stop too, so that the session goes on: where the program is, as
    /// the end of the history in that direction (which ends gdb's own step loops), or its
    /// end if the failure lost it.
    pub(crate) fn run_motion(&mut self) -> (MultiThreadStopReason<u64>, Option<String>) {
        let s = &mut self.session;
        let log = &mut self.log;
        let r = match self.motion {
            Motion::Continue => remote::resume(s, log),
            Motion::Step(t) => remote::step(s, log, t),
            Motion::ReverseContinue => remote::reverse_resume(s),
            Motion::ReverseStep(t) => remote::reverse_step(s, log, t),
        };
        match r {
            Ok(stop) => (self.reason(stop), None),
            Err(e) => {
                let backward = matches!(
                    self.motion,
                    Motion::ReverseContinue | Motion::ReverseStep(_)
                );
                let here = remote::selected_thread(&self.session)
                    .or_else(|| remote::threads(&self.session).first().map(|t| t.1));
                let stop = match here {
                    Some(t) => MultiThreadStopReason::ReplayLog {
                        tid: Some(self.gdb_tid(t)),
                        pos: if backward {
                            ReplayLogPosition::Begin
                        } else {
                            ReplayLogPosition::End
                        },
                    },
                    None => MultiThreadStopReason::Terminated(Signal::SIGKILL),
                };
                (stop, Some(format!("{e:#}")))
            }
        }
    }

    /// How a stop reads in the protocol.
    pub(crate) fn reason(&self, stop: RemoteStop) -> MultiThreadStopReason<u64> {
        match stop {
            RemoteStop::Stepped(t) => MultiThreadStopReason::DoneStep.with_tid(self.gdb_tid(t)),
            RemoteStop::Breakpoint(t) => MultiThreadStopReason::SwBreak(self.gdb_tid(t)),
            RemoteStop::Watch { tid, addr, access } => MultiThreadStopReason::Watch {
                tid: self.gdb_tid(tid),
                kind: match access {
                    WatchAccess::Write => WatchKind::Write,
                    WatchAccess::Read => WatchKind::Read,
                    WatchAccess::Access => WatchKind::ReadWrite,
                },
                addr,
            },
            RemoteStop::Signal { tid, signal } => MultiThreadStopReason::SignalWithThread {
                tid: self.gdb_tid(tid),
                signal: gdb_signal(signal),
            },
            RemoteStop::Exited(code) => MultiThreadStopReason::Exited(code as u8),
            RemoteStop::Killed(sig) => MultiThreadStopReason::Terminated(gdb_signal(sig)),
            RemoteStop::HistoryStart(t) => MultiThreadStopReason::ReplayLog {
                tid: Some(self.gdb_tid(t)),
                pos: ReplayLogPosition::Begin,
            },
            RemoteStop::HistoryEnd(t) => MultiThreadStopReason::ReplayLog {
                tid: Some(self.gdb_tid(t)),
                pos: ReplayLogPosition::End,
            },
            // gdb's ^C: it expects the thread to stop with SIGINT.
            RemoteStop::Interrupted(t) => MultiThreadStopReason::SignalWithThread {
                tid: self.gdb_tid(t),
                signal: Signal::SIGINT,
            },
        }
    }
}

/// gdb's number for a Linux signal: the protocol has numbers of its own (gdb's
/// `signals.def`: SIGUSR1 is 30 there, 10 is SIGBUS).
pub fn gdb_signal(linux: i32) -> Signal {
    match linux {
        libc::SIGHUP => Signal::SIGHUP,
        libc::SIGINT => Signal::SIGINT,
        libc::SIGQUIT => Signal::SIGQUIT,
        libc::SIGILL => Signal::SIGILL,
        libc::SIGTRAP => Signal::SIGTRAP,
        libc::SIGABRT => Signal::SIGABRT,
        libc::SIGBUS => Signal::SIGBUS,
        libc::SIGFPE => Signal::SIGFPE,
        libc::SIGKILL => Signal::SIGKILL,
        libc::SIGUSR1 => Signal::SIGUSR1,
        libc::SIGSEGV => Signal::SIGSEGV,
        libc::SIGUSR2 => Signal::SIGUSR2,
        libc::SIGPIPE => Signal::SIGPIPE,
        libc::SIGALRM => Signal::SIGALRM,
        libc::SIGTERM => Signal::SIGTERM,
        libc::SIGCHLD => Signal::SIGCHLD,
        libc::SIGCONT => Signal::SIGCONT,
        libc::SIGSTOP => Signal::SIGSTOP,
        libc::SIGTSTP => Signal::SIGTSTP,
        libc::SIGTTIN => Signal::SIGTTIN,
        libc::SIGTTOU => Signal::SIGTTOU,
        libc::SIGURG => Signal::SIGURG,
        libc::SIGXCPU => Signal::SIGXCPU,
        libc::SIGXFSZ => Signal::SIGXFSZ,
        libc::SIGVTALRM => Signal::SIGVTALRM,
        libc::SIGPROF => Signal::SIGPROF,
        libc::SIGWINCH => Signal::SIGWINCH,
        libc::SIGIO => Signal::SIGIO,
        libc::SIGPWR => Signal::SIGPWR,
        libc::SIGSYS => Signal::SIGSYS,
        // Real-time signals: gdb numbers 33…63 from 45 on, 32 is 77, 64 on from 78.
        32 => Signal(77),
        33..=63 => Signal(45 + (linux - 33) as u8),
        64..=127 => Signal(78 + (linux - 64) as u8),
        // GDB_SIGNAL_UNKNOWN (SIGSTKFLT has no gdb number).
        _ => Signal(143),
    }
}

/// A stop reason for a given thread, where the reason has one.
trait WithTid {
    fn with_tid(self, tid: GdbTid) -> Self;
}

impl WithTid for MultiThreadStopReason<u64> {
    fn with_tid(self, tid: GdbTid) -> Self {
        match self {
            // A finished step is reported as SIGTRAP in that thread (gdb selects it).
            MultiThreadStopReason::DoneStep => MultiThreadStopReason::SignalWithThread {
                tid,
                signal: Signal::SIGTRAP,
            },
            other => other,
        }
    }
}

/// A request the replay cannot honour: an error reply, the session goes on.
fn refused<T>() -> TargetResult<T, ReplayTarget> {
    Err(TargetError::NonFatal)
}

impl Target for ReplayTarget {
    type Arch = X86_64Linux;
    type Error = TargetFailure;

    fn base_ops(&mut self) -> BaseOps<'_, Self::Arch, Self::Error> {
        BaseOps::MultiThread(self)
    }

    fn support_breakpoints(&mut self) -> Option<BreakpointsOps<'_, Self>> {
        Some(self)
    }

    fn support_monitor_cmd(&mut self) -> Option<MonitorCmdOps<'_, Self>> {
        Some(self)
    }

    fn support_auxv(&mut self) -> Option<gdbstub::target::ext::auxv::AuxvOps<'_, Self>> {
        Some(self)
    }

    fn support_extended_mode(
        &mut self,
    ) -> Option<gdbstub::target::ext::extended_mode::ExtendedModeOps<'_, Self>> {
        Some(self)
    }

    fn support_exec_file(
        &mut self,
    ) -> Option<gdbstub::target::ext::exec_file::ExecFileOps<'_, Self>> {
        Some(self)
    }

    // gdb's software breakpoints are planted by the replay itself (Z0), never written by gdb.
    fn guard_rail_implicit_sw_breakpoints(&self) -> bool {
        true
    }

    // Acknowledged mode: the connection answers qGetTLSAddr itself (see `conn`).
    fn use_no_ack_mode(&self) -> bool {
        false
    }
}

impl MultiThreadBase for ReplayTarget {
    fn read_registers(&mut self, regs: &mut Regs, tid: GdbTid) -> TargetResult<(), Self> {
        *regs = self.current_registers(tid)?;
        Ok(())
    }

    fn write_registers(&mut self, regs: &Regs, tid: GdbTid) -> TargetResult<(), Self> {
        // The recorded past cannot change; writing what is there already changes nothing
        // (gdb rewrites every register to set orig_rax).
        let now = self.current_registers(tid)?;
        if now.gpr == regs.gpr && now.rip == regs.rip {
            return Ok(());
        }
        refused()
    }

    fn support_single_register_access(
        &mut self,
    ) -> Option<
        gdbstub::target::ext::base::single_register_access::SingleRegisterAccessOps<
            '_,
            GdbTid,
            Self,
        >,
    > {
        Some(self)
    }

    fn read_addrs(&mut self, start: u64, data: &mut [u8], _: GdbTid) -> TargetResult<usize, Self> {
        let n = remote::read_memory(&self.session, start, data);
        if n == 0 && !data.is_empty() {
            return refused();
        }
        Ok(n)
    }

    fn write_addrs(&mut self, _: u64, _: &[u8], _: GdbTid) -> TargetResult<(), Self> {
        refused()
    }

    fn list_active_threads(
        &mut self,
        thread_is_active: &mut dyn FnMut(GdbTid),
    ) -> Result<(), Self::Error> {
        for (_, tid) in remote::threads(&self.session) {
            thread_is_active(self.gdb_tid(tid));
        }
        Ok(())
    }

    fn support_resume(&mut self) -> Option<MultiThreadResumeOps<'_, Self>> {
        Some(self)
    }

    fn support_thread_extra_info(
        &mut self,
    ) -> Option<gdbstub::target::ext::thread_extra_info::ThreadExtraInfoOps<'_, Self>> {
        Some(self)
    }
}

// `info threads` shows each thread's name: `Thread 1234.1235 (worker)`.
impl gdbstub::target::ext::thread_extra_info::ThreadExtraInfo for ReplayTarget {
    fn thread_extra_info(&self, tid: GdbTid, buf: &mut [u8]) -> Result<usize, Self::Error> {
        let name = self
            .live(tid)
            .and_then(|t| remote::thread_name(&self.session, t))
            .unwrap_or_default();
        Ok(copy_range(name.as_bytes(), 0, buf.len(), buf))
    }
}

impl gdbstub::target::ext::base::single_register_access::SingleRegisterAccess<GdbTid>
    for ReplayTarget
{
    fn read_register(
        &mut self,
        tid: GdbTid,
        reg: RegNum,
        buf: &mut [u8],
    ) -> TargetResult<usize, Self> {
        let bytes = self
            .current_registers(tid)?
            .register_bytes(reg)
            .ok_or(TargetError::NonFatal)?;
        let n = bytes.len().min(buf.len());
        buf[..n].copy_from_slice(&bytes[..n]);
        Ok(n)
    }

    fn write_register(&mut self, tid: GdbTid, reg: RegNum, val: &[u8]) -> TargetResult<(), Self> {
        // gdb sets orig_rax to -1 when it starts a program (so that no syscall restarts):
        // the replay decides what syscalls do, so that is accepted and changes nothing.
        if reg == ORIG_RAX {
            return Ok(());
        }
        let now = self.current_registers(tid)?.register_bytes(reg);
        if now.as_deref() == Some(val) {
            return Ok(());
        }
        // The recorded past cannot change.
        refused()
    }
}

impl MultiThreadResume for ReplayTarget {
    fn resume(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }

    fn clear_resume_actions(&mut self) -> Result<(), Self::Error> {
        self.motion = Motion::Continue;
        Ok(())
    }

    fn set_resume_action_continue(
        &mut self,
        _: GdbTid,
        _signal: Option<Signal>,
    ) -> Result<(), Self::Error> {
        // A step planned for one thread wins over "the others continue" (vCont;s:T;c).
        if !matches!(self.motion, Motion::Step(_)) {
            self.motion = Motion::Continue;
        }
        Ok(())
    }

    fn support_single_step(&mut self) -> Option<MultiThreadSingleStepOps<'_, Self>> {
        Some(self)
    }

    fn support_reverse_cont(&mut self) -> Option<ReverseContOps<'_, GdbTid, Self>> {
        Some(self)
    }

    fn support_reverse_step(&mut self) -> Option<ReverseStepOps<'_, GdbTid, Self>> {
        Some(self)
    }

    fn support_scheduler_locking(
        &mut self,
    ) -> Option<gdbstub::target::ext::base::multithread::MultiThreadSchedulerLockingOps<'_, Self>>
    {
        Some(self)
    }
}

// A replay runs one thread at a time anyway (the recorded order): a step of one thread never
// lets another run, so gdb's scheduler locking is what happens already.
impl gdbstub::target::ext::base::multithread::MultiThreadSchedulerLocking for ReplayTarget {
    fn set_resume_action_scheduler_lock(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

impl MultiThreadSingleStep for ReplayTarget {
    fn set_resume_action_step(
        &mut self,
        tid: GdbTid,
        _signal: Option<Signal>,
    ) -> Result<(), Self::Error> {
        if let Some(t) = self.live(tid) {
            self.motion = Motion::Step(t);
        }
        Ok(())
    }
}

impl ReverseCont<GdbTid> for ReplayTarget {
    fn reverse_cont(&mut self) -> Result<(), Self::Error> {
        self.motion = Motion::ReverseContinue;
        Ok(())
    }
}

impl ReverseStep<GdbTid> for ReplayTarget {
    fn reverse_step(&mut self, tid: GdbTid) -> Result<(), Self::Error> {
        let t = self
            .live(tid)
            .or_else(|| remote::selected_thread(&self.session))
            .unwrap_or(Tid(0));
        self.motion = Motion::ReverseStep(t);
        Ok(())
    }
}

impl Breakpoints for ReplayTarget {
    fn support_sw_breakpoint(&mut self) -> Option<SwBreakpointOps<'_, Self>> {
        Some(self)
    }

    fn support_hw_breakpoint(&mut self) -> Option<HwBreakpointOps<'_, Self>> {
        Some(self)
    }

    fn support_hw_watchpoint(&mut self) -> Option<HwWatchpointOps<'_, Self>> {
        Some(self)
    }
}

impl SwBreakpoint for ReplayTarget {
    fn add_sw_breakpoint(&mut self, addr: u64, _: usize) -> TargetResult<bool, Self> {
        Ok(self
            .client
            .insert_breakpoint(&mut self.session, addr)
            .is_ok())
    }

    fn remove_sw_breakpoint(&mut self, addr: u64, _: usize) -> TargetResult<bool, Self> {
        Ok(self
            .client
            .remove_breakpoint(&mut self.session, addr)
            .unwrap_or(false))
    }
}

// A hardware breakpoint is a breakpoint here: the replay plants it the same way (the debug
// registers are kept for watchpoints).
impl HwBreakpoint for ReplayTarget {
    fn add_hw_breakpoint(&mut self, addr: u64, kind: usize) -> TargetResult<bool, Self> {
        self.add_sw_breakpoint(addr, kind)
    }

    fn remove_hw_breakpoint(&mut self, addr: u64, kind: usize) -> TargetResult<bool, Self> {
        self.remove_sw_breakpoint(addr, kind)
    }
}

fn access(kind: WatchKind) -> WatchAccess {
    match kind {
        WatchKind::Write => WatchAccess::Write,
        WatchKind::Read => WatchAccess::Read,
        WatchKind::ReadWrite => WatchAccess::Access,
    }
}

impl HwWatchpoint for ReplayTarget {
    fn add_hw_watchpoint(
        &mut self,
        addr: u64,
        len: u64,
        kind: WatchKind,
    ) -> TargetResult<bool, Self> {
        Ok(self
            .client
            .insert_watchpoint(&mut self.session, addr, len, access(kind))
            .is_ok())
    }

    fn remove_hw_watchpoint(
        &mut self,
        addr: u64,
        len: u64,
        kind: WatchKind,
    ) -> TargetResult<bool, Self> {
        Ok(self
            .client
            .remove_watchpoint(&mut self.session, addr, len, access(kind))
            .unwrap_or(false))
    }
}

impl MonitorCmd for ReplayTarget {
    fn handle_monitor_cmd(
        &mut self,
        cmd: &[u8],
        mut out: ConsoleOutput<'_>,
    ) -> Result<(), Self::Error> {
        let cmd = String::from_utf8_lossy(cmd).into_owned();
        let result = self.monitor.run(&mut self.session, cmd.trim());
        out.write_raw(result.text.as_bytes());
        if result.moved {
            self.refresh_tls();
            if !self.client_refreshes {
                // gdb does not know that the replay moved: it keeps the registers and frames
                // it read before until it is told to forget them.
                out.write_raw(REFRESH_HINT.as_bytes());
            }
        }
        Ok(())
    }
}

/// Told to a client after a `monitor` command that moved the replay.
const REFRESH_HINT: &str = "(The replay moved: gdb shows where it is now after \
'maintenance flush register-cache' and 'maintenance flush dcache'.)\n";

/// The gdb commands that make gdb forget what it read of the target (registers, frames and
/// the stack it cached) after any `monitor` command, quietly: one may have moved the replay.
pub const GDB_REFRESH_HOOK: &str = "define hookpost-monitor
python gdb.execute('maintenance flush register-cache', to_string=True); \
gdb.execute('maintenance flush dcache', to_string=True)
end
";

impl gdbstub::target::ext::auxv::Auxv for ReplayTarget {
    fn get_auxv(&self, offset: u64, length: usize, buf: &mut [u8]) -> TargetResult<usize, Self> {
        Ok(copy_range(
            &remote::auxv(&self.session),
            offset,
            length,
            buf,
        ))
    }
}

impl gdbstub::target::ext::exec_file::ExecFile for ReplayTarget {
    fn get_exec_file(
        &self,
        _: Option<gdbstub::common::Pid>,
        offset: u64,
        length: usize,
        buf: &mut [u8],
    ) -> TargetResult<usize, Self> {
        let path = remote::program(&self.session);
        let bytes = std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()).to_vec();
        Ok(copy_range(&bytes, offset, length, buf))
    }
}

/// Copies `data[offset..offset+length]` into `buf` (qXfer reads come in pieces).
fn copy_range(data: &[u8], offset: u64, length: usize, buf: &mut [u8]) -> usize {
    let start = (offset as usize).min(data.len());
    let end = start.saturating_add(length).min(data.len());
    let n = (end - start).min(buf.len());
    buf[..n].copy_from_slice(&data[start..start + n]);
    n
}

// `target extended-remote` makes `run` start the replay again from the beginning, as with rr;
// and the process is named by its recorded pid either way.
impl gdbstub::target::ext::extended_mode::ExtendedMode for ReplayTarget {
    fn run(
        &mut self,
        _filename: Option<&[u8]>,
        _args: gdbstub::target::ext::extended_mode::Args<'_, '_>,
    ) -> TargetResult<gdbstub::common::Pid, Self> {
        if let Err(e) = remote::restart(&mut self.session) {
            self.log(&format!("could not start the replay again: {e:#}"));
            return Err(TargetError::NonFatal);
        }
        self.refresh_tls();
        Ok(self.pid())
    }

    fn attach(&mut self, _pid: gdbstub::common::Pid) -> TargetResult<(), Self> {
        // Only the recorded process is there.
        refused()
    }

    fn query_if_attached(
        &mut self,
        _pid: gdbstub::common::Pid,
    ) -> TargetResult<gdbstub::target::ext::extended_mode::AttachKind, Self> {
        // Killing it (gdb asks before `run`) ends no real process.
        Ok(gdbstub::target::ext::extended_mode::AttachKind::Run)
    }

    fn kill(
        &mut self,
        _pid: Option<gdbstub::common::Pid>,
    ) -> TargetResult<gdbstub::target::ext::extended_mode::ShouldTerminate, Self> {
        // gdb's `kill` (and `quit`, and `run` in extended-remote, which starts with it): a
        // replay cannot die, it starts again; the server stays for the next client (or `run`).
        if let Err(e) = remote::restart(&mut self.session) {
            self.log(&format!("could not start the replay again: {e:#}"));
        }
        self.refresh_tls();
        Ok(gdbstub::target::ext::extended_mode::ShouldTerminate::No)
    }

    fn restart(&mut self) -> Result<(), Self::Error> {
        remote::restart(&mut self.session).map_err(|e| TargetFailure::Replay(format!("{e:#}")))?;
        self.refresh_tls();
        Ok(())
    }

    fn support_current_active_pid(
        &mut self,
    ) -> Option<gdbstub::target::ext::extended_mode::CurrentActivePidOps<'_, Self>> {
        Some(self)
    }
}

impl gdbstub::target::ext::extended_mode::CurrentActivePid for ReplayTarget {
    fn current_active_pid(&mut self) -> Result<gdbstub::common::Pid, Self::Error> {
        Ok(self.pid())
    }
}

impl ReplayTarget {
    /// The pid gdb sees: the recorded one (what getpid() returned in the recording).
    fn pid(&self) -> gdbstub::common::Pid {
        usize::try_from(remote::pid(&self.session))
            .ok()
            .and_then(gdbstub::common::Pid::new)
            .unwrap_or(gdbstub::common::Pid::MIN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_have_gdb_numbers() {
        assert_eq!(gdb_signal(libc::SIGUSR1), Signal(30));
        assert_eq!(gdb_signal(libc::SIGBUS), Signal(10));
        assert_eq!(gdb_signal(libc::SIGSEGV), Signal(11));
        assert_eq!(gdb_signal(libc::SIGCHLD), Signal(20));
        assert_eq!(gdb_signal(34), Signal(46));
        assert_eq!(gdb_signal(16), Signal(143));
    }
}
