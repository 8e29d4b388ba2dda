//! What a machine-level front end needs of a session — the gdb remote protocol server
//! (`hindsight-gdbserver`) drives a replay through this: threads, registers, memory,
//! breakpoints and watchpoints by address, forward and reverse motion by instructions, and
//! the end of the history at the program's exit.
//!
//! Every motion goes through the same calls as the command line's (`continue`, `stepi`,
//! `reverse-continue`, `reverse-stepi`); the stop comes back as a [`RemoteStop`].
//!
//! Invariant: a replay that runs into the program's exit stops at its exit syscall instead,
//! alive, as the end of its history: a client can still go back from there.

use std::collections::HashMap;
use std::path::PathBuf;

use hindsight_breakpoints::table::{BreakpointKind, WatchAccess};
use hindsight_control::{Resume, StopEvent};
use hindsight_ptrace::{FpRegs, Regs, Tid};

use crate::hook::Reason;
use crate::motion::Place;
use crate::observer::Observer;
use crate::session::Session;
use crate::stop::arrive;

/// Why the program stopped, as a remote client needs to know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteStop {
    /// A step ended, or the program stopped for no reason of the client's (a quantum event).
    Stepped(Tid),
    /// A breakpoint stopped this thread.
    Breakpoint(Tid),
    /// A watchpoint on `addr` fired in this thread.
    Watch {
        /// The thread.
        tid: Tid,
        /// The watched address.
        addr: u64,
        /// How it was watched.
        access: WatchAccess,
    },
    /// A signal stopped this thread.
    Signal {
        /// The thread.
        tid: Tid,
        /// The signal.
        signal: i32,
    },
    /// The program exited with this status.
    Exited(i32),
    /// A signal killed the program.
    Killed(i32),
    /// Going back reached the start of the recording.
    HistoryStart(Tid),
    /// Going forward reached the end of the recording.
    HistoryEnd(Tid),
    /// The client interrupted the motion; the replay stopped here.
    Interrupted(Tid),
}

/// Breakpoints and watchpoints that the client planted, by address (they live in the
/// session's table like the user's, under numbers of their own).
#[derive(Debug, Default)]
pub struct ClientBreakpoints {
    breakpoints: HashMap<u64, u32>,
    watchpoints: HashMap<(u64, u64, u8), u32>,
}

/// The program's threads: (gdb's number, tid).
pub fn threads(s: &Session) -> Vec<(u32, Tid)> {
    s.inferior
        .as_ref()
        .filter(|i| i.is_alive())
        .map(|i| i.threads().into_iter().map(|t| (t.num, t.tid)).collect())
        .unwrap_or_default()
}

/// A thread's name (what `/proc/…/comm` says, as `info threads` shows it).
pub fn thread_name(s: &Session, tid: Tid) -> Option<String> {
    s.live().ok()?.thread_name(tid)
}

/// The selected thread (the one that stopped last).
pub fn selected_thread(s: &Session) -> Option<Tid> {
    s.thread.filter(|_| s.pid().is_some())
}

/// A thread's general and floating-point registers.
pub fn registers(s: &Session, tid: Tid) -> anyhow::Result<(Regs, Option<FpRegs>)> {
    let inf = s.live()?;
    let regs = inf.regs(tid).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok((regs, inf.fp_regs(tid).ok()))
}

/// Reads program memory (breakpoints hidden); returns how many bytes could be read from
/// `addr` on (0 when none).
pub fn read_memory(s: &Session, addr: u64, buf: &mut [u8]) -> usize {
    let Ok(inf) = s.live() else { return 0 };
    if inf.read_memory(addr, buf).is_ok() {
        return buf.len();
    }
    // A range that runs into unmapped memory: as much as can be read.
    let mut n = 0;
    for chunk in buf.chunks_mut(64) {
        if inf.read_memory(addr + n as u64, chunk).is_err() {
            for b in chunk.iter_mut() {
                if inf
                    .read_memory(addr + n as u64, std::slice::from_mut(b))
                    .is_err()
                {
                    return n;
                }
                n += 1;
            }
            return n;
        }
        n += chunk.len();
    }
    n
}

impl ClientBreakpoints {
    /// Plants a breakpoint at `addr` for the client.
    pub fn insert_breakpoint(&mut self, s: &mut Session, addr: u64) -> anyhow::Result<()> {
        if self.breakpoints.contains_key(&addr) {
            return Ok(());
        }
        if let Some(inf) = s.inferior.as_mut().filter(|i| i.is_alive()) {
            inf.insert_site(addr).map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        let n = s
            .breakpoints
            .add_breakpoint(format!("*{addr:#x}"), vec![addr], false, None);
        self.breakpoints.insert(addr, n);
        Ok(())
    }

    /// Removes the client's breakpoint at `addr`; false if it had none there.
    pub fn remove_breakpoint(&mut self, s: &mut Session, addr: u64) -> anyhow::Result<bool> {
        let Some(n) = self.breakpoints.remove(&addr) else {
            return Ok(false);
        };
        crate::breakpoints::delete_one(s, n)?;
        Ok(true)
    }

    /// Watches `len` bytes at `addr` for the client (DR0–DR3).
    pub fn insert_watchpoint(
        &mut self,
        s: &mut Session,
        addr: u64,
        len: u64,
        access: WatchAccess,
    ) -> anyhow::Result<()> {
        let key = (addr, len, access_code(access));
        if self.watchpoints.contains_key(&key) {
            return Ok(());
        }
        let mut bytes = vec![0u8; len as usize];
        let _ = s.live()?.read_memory(addr, &mut bytes);
        let n = s
            .breakpoints
            .add_watchpoint(format!("*{addr:#x}"), access, addr, len, None);
        s.watch_values.insert(n, bytes);
        if let Err(e) = crate::breakpoints::apply_watchpoints(s) {
            let _ = crate::breakpoints::delete_one(s, n);
            return Err(e);
        }
        self.watchpoints.insert(key, n);
        Ok(())
    }

    /// Removes the client's watchpoint; false if there was none.
    pub fn remove_watchpoint(
        &mut self,
        s: &mut Session,
        addr: u64,
        len: u64,
        access: WatchAccess,
    ) -> anyhow::Result<bool> {
        let Some(n) = self.watchpoints.remove(&(addr, len, access_code(access))) else {
            return Ok(false);
        };
        crate::breakpoints::delete_one(s, n)?;
        Ok(true)
    }

    /// Forgets everything the client planted (it disconnected).
    pub fn clear(&mut self, s: &mut Session) {
        for (_, n) in self.breakpoints.drain() {
            let _ = crate::breakpoints::delete_one(s, n);
        }
        for (_, n) in self.watchpoints.drain() {
            let _ = crate::breakpoints::delete_one(s, n);
        }
    }
}

fn access_code(a: WatchAccess) -> u8 {
    match a {
        WatchAccess::Write => 0,
        WatchAccess::Read => 1,
        WatchAccess::Access => 2,
    }
}

/// Runs the program forward until something stops it.
///
/// A replay that runs into the program's exit stops at the exit syscall instead, alive, as
/// the end of its history (gdb says "No more reverse-execution history"): from there the
/// client can still go back. Continuing from that stop lets the program exit.
///
/// The client is served one process (no multiprocess extensions): breakpoints that other
/// processes of a replayed tree have (set through `monitor`) do not stop it, as they would
/// make another process the current one behind the client's back.
pub fn resume(s: &mut Session, obs: &mut dyn Observer) -> anyhow::Result<RemoteStop> {
    let stop = forward(s, obs, |s, obs| s.resume_alone(obs))?;
    if stop.was_interrupted() {
        return Ok(RemoteStop::Interrupted(stop.thread.unwrap_or(Tid(0))));
    }
    Ok(last_stop(s))
}

/// Runs a forward motion (`continue`, a step, `finish`…). In a replay, one that runs into the
/// program's exit stops at the exit syscall instead, as the end of its history (see
/// [`resume`]); one that starts there lets the program exit.
pub fn forward(
    s: &mut Session,
    obs: &mut dyn Observer,
    motion: impl FnOnce(&mut Session, &mut dyn Observer) -> anyhow::Result<crate::stop::Stop>,
) -> anyhow::Result<crate::stop::Stop> {
    s.travel.forget_selection();
    // (The recording is read only when the program is at an exit syscall, or exited.)
    let from_the_end = on_an_exit_syscall(s) && recorded_exit(s).is_some_and(|e| at_exit(s, e));
    let stop = motion(s, obs)?;
    if matches!(stop.reason, crate::stop::StopReason::Exited { .. }) && !from_the_end {
        if let Some(exit) = recorded_exit(s) {
            if back_to_the_exit(s, obs, exit)?.is_some() {
                if let Some(stop) = s.last_stop() {
                    return Ok(stop.clone());
                }
            }
        }
    }
    Ok(stop)
}

/// exit(2) and exit_group(2).
const EXIT_SYSCALLS: [u64; 2] = [60, 231];

/// At most this many instructions are stepped from the last event before the exit to the
/// exit syscall (a program rarely computes long after its last syscall; past this, the
/// exit is reported as an exit).
const EXIT_STEPS: u32 = 100_000;

/// The recorded end of the program: (events replayed before its exit syscall, recorded tid,
/// syscall number), if the recording has one.
fn recorded_exit(s: &Session) -> Option<(u64, i32, u64)> {
    let r = s.replay.as_ref()?;
    let mut events = r.reader().events(r.recorded_pid()).ok()?;
    let (mut n, mut last) = (0u64, None);
    while let Ok(Some(e)) = events.next_event() {
        match e {
            hindsight_trace::Event::Syscall { tid, nr, .. }
            | hindsight_trace::Event::SyscallEntry { tid, nr, .. }
                if EXIT_SYSCALLS.contains(&nr) =>
            {
                last = Some((n, tid, nr));
            }
            _ => {}
        }
        n += 1;
    }
    last
}

/// Whether thread `tid` stands on a `syscall` instruction (not yet executed) for syscall
/// `nr` (any exit syscall if None).
fn on_syscall(s: &Session, tid: Tid, nr: Option<u64>) -> bool {
    let Ok(inf) = s.live() else { return false };
    let Ok(regs) = inf.regs(tid) else {
        return false;
    };
    let mut insn = [0u8; 2];
    nr.map_or(EXIT_SYSCALLS.contains(&regs.0.rax), |nr| regs.0.rax == nr)
        && inf.read_memory(regs.0.rip, &mut insn).is_ok()
        && insn == [0x0f, 0x05]
}

/// Whether the selected thread of a replay stands on an exit syscall, not yet executed.
fn on_an_exit_syscall(s: &Session) -> bool {
    s.replay.is_some() && selected_thread(s).is_some_and(|t| on_syscall(s, t, None))
}

/// Whether the replay stands on the exit syscall instruction of `exit`, not yet executed.
fn at_exit(s: &Session, (event, tid, nr): (u64, i32, u64)) -> bool {
    let (Some(r), Some(live)) = (s.replay.as_ref(), live_tid(s, tid)) else {
        return false;
    };
    r.events_replayed() == event && on_syscall(s, live, Some(nr))
}

/// The program has just exited: goes back to its exit syscall (the last event boundary
/// before it, then instruction by instruction). None if that cannot be done; the replay is
/// then at the exit, as before.
fn back_to_the_exit(
    s: &mut Session,
    obs: &mut dyn Observer,
    exit: (u64, i32, u64),
) -> anyhow::Result<Option<RemoteStop>> {
    if !to_the_event_before(s, exit) {
        return Ok(None);
    }
    match steps_to_the_exit(s, obs, exit, EXIT_STEPS)? {
        Some(_) => {
            let Some(live) = live_tid(s, exit.1) else {
                return Ok(None);
            };
            let stop = StopEvent::Stepped { tid: live };
            let why = Reason::EndOfHistory("the program exits here".to_string());
            arrive(s, &stop, Some(&why), true)?;
        }
        // Too far, or it ended otherwise: let it end.
        None if is_alive(s) => {
            s.resume(obs)?;
        }
        None => {}
    }
    Ok(Some(last_stop(s)))
}

/// After the program exited in a replay: goes back to its exit syscall instruction (not yet
/// executed), where reverse motions start from; the exiting thread, or None if the recording
/// has no exit or it cannot be reached (the replay is then left as it is).
pub(crate) fn to_the_exit(s: &mut Session) -> anyhow::Result<Option<Tid>> {
    let Some(exit) = recorded_exit(s) else {
        return Ok(None);
    };
    if !to_the_event_before(s, exit) {
        return Ok(None);
    }
    if steps_to_the_exit(s, &mut crate::observer::Quiet, exit, EXIT_STEPS)?.is_none() {
        return Ok(None);
    }
    Ok(live_tid(s, exit.1))
}

/// Goes to the last event boundary before the exit (a place time travel knows exactly).
fn to_the_event_before(s: &mut Session, (event, ..): (u64, i32, u64)) -> bool {
    let went = s.goto(&Place::Event(event));
    went.is_ok() && is_alive(s)
}

/// Steps the exiting thread until it stands on its exit syscall, at most `max` instructions;
/// returns how many it took (None if it did not get there).
fn steps_to_the_exit(
    s: &mut Session,
    obs: &mut dyn Observer,
    exit: (u64, i32, u64),
    max: u32,
) -> anyhow::Result<Option<u32>> {
    let Some(live) = live_tid(s, exit.1) else {
        return Ok(None);
    };
    s.thread = Some(live);
    for n in 0..=max {
        if at_exit(s, exit) {
            return Ok(Some(n));
        }
        if n == max {
            break;
        }
        let (stop, _) = crate::hook::resume_raw(s, obs, Resume::Step(live), None)?;
        if !matches!(stop, StopEvent::Stepped { .. }) {
            arrive(s, &stop, None, true)?;
            return Ok(None);
        }
    }
    Ok(None)
}

/// The recorded exit, if the replay stands on it (the end of its history).
fn at_the_end(s: &Session) -> Option<(u64, i32, u64)> {
    if !on_an_exit_syscall(s) {
        return None;
    }
    recorded_exit(s).filter(|&e| at_exit(s, e))
}

/// One instruction of `tid`, forward.
pub fn step(s: &mut Session, obs: &mut dyn Observer, tid: Tid) -> anyhow::Result<RemoteStop> {
    s.travel.forget_selection();
    s.thread = Some(tid);
    // One instruction of the program (a replay steps through the agent's stubs).
    let (stop, reason) = crate::hook::resume_raw(s, obs, Resume::Step(tid), None)?;
    match (&stop, &reason) {
        // The common case, many times over in gdb's step loops: the state the command line's
        // report leaves, without the report (working out a frame to print costs far more
        // than the step).
        (StopEvent::Stepped { tid }, None) => {
            s.stepped_cleanly = true;
            s.last_stop = Some((stop.clone(), None));
            s.thread = Some(*tid);
            s.frame = 0;
            s.last_breakpoint = None;
            s.refresh_modules();
        }
        _ => {
            arrive(s, &stop, reason.as_ref(), true)?;
        }
    }
    Ok(last_stop(s))
}

/// Back to the previous breakpoint hit, watched change or stopping signal.
pub fn reverse_resume(s: &mut Session) -> anyhow::Result<RemoteStop> {
    // From the end of the history (the exit syscall), time travel starts at the event
    // boundary before it: only the exit path of the C library runs in between.
    if let Some(exit) = at_the_end(s) {
        to_the_event_before(s, exit);
    }
    // (In this process alone: see `resume`.)
    reverse(s, |s| s.reverse_continue_alone())
}

/// One instruction of `tid`, backward.
pub fn reverse_step(
    s: &mut Session,
    obs: &mut dyn Observer,
    tid: Tid,
) -> anyhow::Result<RemoteStop> {
    s.thread = Some(tid);
    if let Some(exit) = at_the_end(s) {
        // The instruction before the exit syscall: one fewer step from the event before it.
        if to_the_event_before(s, exit) {
            if let Some(n) = steps_to_the_exit(s, obs, exit, EXIT_STEPS)?.filter(|&n| n > 0) {
                to_the_event_before(s, exit);
                steps_to_the_exit(s, obs, exit, n - 1)?;
                let stop = StopEvent::Stepped {
                    tid: s.thread.unwrap_or(tid),
                };
                arrive(s, &stop, None, true)?;
                return Ok(last_stop(s));
            }
        }
    }
    reverse(s, |s| s.reverse_step_instruction(false))
}

/// Runs a reverse motion. If it fails and leaves the program elsewhere or nowhere (time
/// travel could not find the way back), the replay goes to the last event boundary it had
/// passed, so that the client goes on from near where it was.
fn reverse(
    s: &mut Session,
    motion: impl FnOnce(&mut Session) -> anyhow::Result<crate::stop::Stop>,
) -> anyhow::Result<RemoteStop> {
    let time = s.replay.as_ref().map(|r| r.events_replayed());
    let before = instant(s);
    match motion(s) {
        Ok(stop) if stop.was_interrupted() => {
            Ok(RemoteStop::Interrupted(stop.thread.unwrap_or(Tid(0))))
        }
        Ok(_) => Ok(last_stop(s)),
        Err(e) => {
            if let (Some(time), true) = (time, instant(s) != before) {
                let _ = s.goto(&Place::Event(time));
            }
            Err(e)
        }
    }
}

/// The last stop, as a remote client sees it.
fn last_stop(s: &Session) -> RemoteStop {
    let fallback = s.thread.or(s.pid().map(Tid)).unwrap_or(Tid(0));
    let Some((stop, reason)) = s.last_stop.clone() else {
        return RemoteStop::Stepped(fallback);
    };
    match (stop, reason) {
        (_, Some(Reason::StartOfHistory)) => RemoteStop::HistoryStart(fallback),
        (_, Some(Reason::EndOfHistory(_))) => RemoteStop::HistoryEnd(fallback),
        (StopEvent::Watchpoint { tid, .. }, Some(Reason::Watch { number, .. })) => {
            match s.breakpoints.get(number).map(|b| b.kind.clone()) {
                Some(BreakpointKind::Watchpoint {
                    address, access, ..
                }) => RemoteStop::Watch {
                    tid,
                    addr: address,
                    access,
                },
                _ => RemoteStop::Stepped(tid),
            }
        }
        (StopEvent::Breakpoint { tid, .. }, _) => RemoteStop::Breakpoint(tid),
        (StopEvent::Signal { tid, signal }, _) => RemoteStop::Signal { tid, signal },
        (StopEvent::Exited(code), _) => RemoteStop::Exited(code),
        (StopEvent::Killed(sig), _) => RemoteStop::Killed(sig),
        (
            StopEvent::Stepped { tid }
            | StopEvent::Watchpoint { tid, .. }
            | StopEvent::Syscall { tid }
            | StopEvent::Exec { tid, .. },
            _,
        ) => RemoteStop::Stepped(tid),
        (StopEvent::Interrupted, _) => RemoteStop::Stepped(fallback),
    }
}

/// What tells two instants of a replay apart, as far as a client sees: events replayed, the
/// selected thread, and its registers. (A command that changed it moved the replay: a
/// client's cached registers and frames are stale.)
pub fn instant(s: &Session) -> Option<(u64, i32, Vec<u64>)> {
    let tid = selected_thread(s)?;
    let regs = s.live().ok()?.regs(tid).ok()?.0;
    let time = s.replay.as_ref().map_or(0, |r| r.events_replayed());
    Some((
        time,
        client_tid(s, tid),
        vec![regs.rip, regs.rsp, regs.rax, regs.rbp],
    ))
}

/// Whether the program is there to debug (not exited, killed or never started).
pub fn is_alive(s: &Session) -> bool {
    s.pid().is_some()
}

/// Back to the start of the recording (a new client of a replay whose program exited, or
/// gdb's `run`).
pub fn restart(s: &mut Session) -> anyhow::Result<()> {
    s.travel.forget_selection();
    s.goto(&Place::Start).map(|_| ())
}

/// The program being debugged (for gdb's `file`).
pub fn program(s: &Session) -> PathBuf {
    s.program.clone()
}

/// The program's auxiliary vector, as the kernel gave it (gdb relocates a PIE with it).
pub fn auxv(s: &Session) -> Vec<u8> {
    s.pid()
        .and_then(|pid| std::fs::read(format!("/proc/{pid}/auxv")).ok())
        .unwrap_or_default()
}

/// The pid a client should see: the recorded one in a replay.
pub fn pid(s: &Session) -> i32 {
    match &s.replay {
        Some(r) => r.recorded_pid(),
        None => s.pid().unwrap_or(0),
    }
}

/// The tid a client should see for live thread `tid`: the recorded one in a replay (it stays
/// the same when time travel starts the replay again, where live tids change).
pub fn client_tid(s: &Session, tid: Tid) -> i32 {
    match &s.replay {
        Some(r) => r.recorded_tid_of(tid),
        None => tid.0,
    }
}

/// The live thread of a tid the client knows (see [`client_tid`]).
pub fn live_tid(s: &Session, client: i32) -> Option<Tid> {
    match &s.replay {
        Some(r) => r.live_tid_of(client),
        None => Some(Tid(client)),
    }
}

/// Where thread `tid`'s copy of the thread-local variable at `offset` of the object whose
/// `struct link_map` is at `lm` lives (gdb's `qGetTLSAddr`).
pub fn tls_address(s: &Session, tid: Tid, offset: u64, lm: u64) -> Option<u64> {
    crate::tls::address(s, tid, offset, lm)
}

/// The TLS blocks of every thread: (client tid, address of the object's `struct link_map`,
/// address of the block in that thread) — what `qGetTLSAddr` answers from.
pub fn tls_blocks(s: &Session) -> Vec<(i32, u64, u64)> {
    let offsets = crate::tls::offsets(s);
    let Ok(inf) = s.live() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (_, tid) in threads(s) {
        let Ok(regs) = inf.regs(tid) else { continue };
        for &(lm, off) in &offsets {
            out.push((client_tid(s, tid), lm, regs.0.fs_base.wrapping_sub(off)));
        }
    }
    out
}
