//! What a front end other than the command line needs of a session — the gdb remote protocol
//! server (`hindsight-gdbserver`) drives a replay through this: threads, registers, memory,
//! breakpoints and watchpoints by address, forward and reverse motion, and any hindsight
//! command with its output captured (`monitor`).
//!
//! Every motion goes through the same code as the command line's (`continue`, `stepi`,
//! `reverse-continue`, `reverse-stepi`), which also prints its usual report on stdout (the
//! server's log); the stop comes back as a [`RemoteStop`].

use std::collections::HashMap;
use std::io::{Read as _, Seek as _, Write as _};
use std::os::fd::AsRawFd as _;
use std::path::PathBuf;

use anyhow::{bail, Context as _};
use hindsight_breakpoints::table::{BreakpointKind, WatchAccess};
use hindsight_control::{Resume, StopEvent};
use hindsight_ptrace::{FpRegs, Regs, Tid};

use crate::hook::Reason;
use crate::session::Session;

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
        crate::commands::breakpoints::delete_one(s, n)?;
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
        if let Err(e) = crate::commands::breakpoints::apply_watchpoints(s) {
            let _ = crate::commands::breakpoints::delete_one(s, n);
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
        crate::commands::breakpoints::delete_one(s, n)?;
        Ok(true)
    }

    /// Forgets everything the client planted (it disconnected).
    pub fn clear(&mut self, s: &mut Session) {
        for (_, n) in self.breakpoints.drain() {
            let _ = crate::commands::breakpoints::delete_one(s, n);
        }
        for (_, n) in self.watchpoints.drain() {
            let _ = crate::commands::breakpoints::delete_one(s, n);
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

/// Runs the program forward until something stops it. (The program's output shows as
/// usual; the command line's report of the stop does not: gdb reports it.)
///
/// A replay that runs into the program's exit stops at the exit syscall instead, alive, as
/// the end of its history (gdb says "No more reverse-execution history"): from there the
/// client can still go back. Continuing from that stop lets the program exit.
pub fn resume(s: &mut Session) -> anyhow::Result<RemoteStop> {
    s.travel.forget_selection();
    // (The recording is read only when the program is at an exit syscall, or exited.)
    let from_the_end = on_an_exit_syscall(s) && recorded_exit(s).is_some_and(|e| at_exit(s, e));
    let (stop, reason) = crate::hook::resume_raw(s, Resume::Continue, None)?;
    if matches!(stop, StopEvent::Exited(_)) && !from_the_end {
        if let Some(exit) = recorded_exit(s) {
            if let Some(stop) = back_to_the_exit(s, exit)? {
                return Ok(stop);
            }
        }
    }
    capture_stdout(|| crate::hook::report_stop(s, &stop, reason.as_ref(), true))?.1?;
    Ok(last_stop(s))
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
fn back_to_the_exit(s: &mut Session, exit: (u64, i32, u64)) -> anyhow::Result<Option<RemoteStop>> {
    if !to_the_event_before(s, exit)? {
        return Ok(None);
    }
    match steps_to_the_exit(s, exit, EXIT_STEPS)? {
        Some(_) => {
            let Some(live) = live_tid(s, exit.1) else {
                return Ok(None);
            };
            let stop = StopEvent::Stepped { tid: live };
            let why = Reason::EndOfHistory("the program exits here".to_string());
            capture_stdout(|| crate::hook::report_stop(s, &stop, Some(&why), true))?.1?;
        }
        // Too far, or it ended otherwise: let it end.
        None if is_alive(s) => {
            let (stop, reason) = crate::hook::resume_raw(s, Resume::Continue, None)?;
            capture_stdout(|| crate::hook::report_stop(s, &stop, reason.as_ref(), true))?.1?;
        }
        None => {}
    }
    Ok(Some(last_stop(s)))
}

/// Goes to the last event boundary before the exit (a place time travel knows exactly).
fn to_the_event_before(s: &mut Session, (event, ..): (u64, i32, u64)) -> anyhow::Result<bool> {
    let went = capture_stdout(|| crate::commands::execute(s, &format!("goto event {event}")))?.1;
    Ok(went.is_ok() && is_alive(s))
}

/// Steps the exiting thread until it stands on its exit syscall, at most `max` instructions;
/// returns how many it took (None if it did not get there).
fn steps_to_the_exit(
    s: &mut Session,
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
        let (stop, _) = crate::hook::resume_raw(s, Resume::Step(live), None)?;
        if !matches!(stop, StopEvent::Stepped { .. }) {
            capture_stdout(|| crate::hook::report_stop(s, &stop, None, true))?.1?;
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
pub fn step(s: &mut Session, tid: Tid) -> anyhow::Result<RemoteStop> {
    s.travel.forget_selection();
    s.thread = Some(tid);
    let (stop, reason) = crate::hook::resume_raw(s, Resume::Step(tid), None)?;
    match (&stop, &reason) {
        // The common case, many times over in gdb's step loops: the state the command line's
        // report leaves, without the report (working out a frame to print costs far more
        // than the step).
        (StopEvent::Stepped { tid }, None) => {
            s.stepped_cleanly = true;
            s.last_stop = Some((stop.clone(), None));
            s.thread = Some(*tid);
            s.frame = 0;
            s.list_next = None;
            s.last_breakpoint = None;
            s.refresh_modules();
        }
        _ => capture_stdout(|| crate::hook::report_stop(s, &stop, reason.as_ref(), true))?.1?,
    }
    Ok(last_stop(s))
}

/// Back to the previous breakpoint hit, watched change or stopping signal.
pub fn reverse_resume(s: &mut Session) -> anyhow::Result<RemoteStop> {
    // From the end of the history (the exit syscall), time travel starts at the event
    // boundary before it: only the exit path of the C library runs in between.
    if let Some(exit) = at_the_end(s) {
        to_the_event_before(s, exit)?;
    }
    reverse(s, "reverse-continue")
}

/// One instruction of `tid`, backward.
pub fn reverse_step(s: &mut Session, tid: Tid) -> anyhow::Result<RemoteStop> {
    s.thread = Some(tid);
    if let Some(exit) = at_the_end(s) {
        // The instruction before the exit syscall: one fewer step from the event before it.
        if to_the_event_before(s, exit)? {
            if let Some(n) = steps_to_the_exit(s, exit, EXIT_STEPS)?.filter(|&n| n > 0) {
                to_the_event_before(s, exit)?;
                steps_to_the_exit(s, exit, n - 1)?;
                let stop = StopEvent::Stepped {
                    tid: s.thread.unwrap_or(tid),
                };
                capture_stdout(|| crate::hook::report_stop(s, &stop, None, true))?.1?;
                return Ok(last_stop(s));
            }
        }
    }
    reverse(s, "reverse-stepi")
}

/// Runs a reverse command of the command line. If it fails and leaves the program elsewhere
/// or nowhere (time travel could not find the way back), the replay goes to the last event
/// boundary it had passed, so that the client goes on from near where it was.
fn reverse(s: &mut Session, command: &str) -> anyhow::Result<RemoteStop> {
    let time = s.replay.as_ref().map(|r| r.events_replayed());
    let before = instant(s);
    let r = capture_stdout(|| crate::commands::execute(s, command))?.1;
    if let Err(e) = r {
        if let (Some(time), true) = (time, instant(s) != before) {
            let _ = capture_stdout(|| crate::commands::execute(s, &format!("goto event {time}")));
        }
        return Err(e);
    }
    Ok(last_stop(s))
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

/// What a `monitor` command printed, and whether it moved the replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonitorOutput {
    /// Its output, errors included.
    pub text: String,
    /// The replay is somewhere else in time now (`goto`, `reverse-step`…): a client's cached
    /// registers and frames are stale.
    pub moved: bool,
}

/// Commands that gdb has words of its own for, which run or end the program: through
/// `monitor` they would do it behind gdb's back (without its breakpoints, or leaving it with
/// a program it thinks alive).
const GDB_OWN: &[&str] = &[
    "continue",
    "next",
    "step",
    "stepi",
    "nexti",
    "finish",
    "until",
    "advance",
    "run",
    "start",
    "kill",
    "quit",
    "jump",
    "signal",
    "reverse-continue",
    "reverse-step",
    "reverse-next",
    "reverse-stepi",
    "reverse-nexti",
    "reverse-finish",
];

/// Their short forms.
const GDB_OWN_ALIASES: &[&str] = &[
    "c", "n", "s", "si", "ni", "r", "k", "q", "exit", "u", "fin", "j", "rc", "rs", "rn", "rsi",
    "rni",
];

/// The gdb command that `command` is, if it is one of [`GDB_OWN`] (by name, alias or an
/// unambiguous-looking prefix of three letters or more).
fn gdb_own(command: &str) -> Option<&'static str> {
    let word = command.split_whitespace().next()?;
    let word = word.split('/').next().unwrap_or(word);
    if let Some(i) = GDB_OWN_ALIASES.iter().position(|a| *a == word) {
        return Some(GDB_OWN_ALIASES[i]);
    }
    GDB_OWN
        .iter()
        .find(|n| **n == word || (word.len() >= 3 && n.starts_with(word)))
        .copied()
}

/// Runs a hindsight command (`when`, `goto …`, `bookmark NAME`, `info checkpoints`…) and
/// returns what it printed, errors included. Commands that gdb has words of its own for,
/// which run or end the program (`continue`, `kill`…), are refused: gdb must do those.
pub fn monitor(s: &mut Session, command: &str) -> MonitorOutput {
    if let Some(own) = gdb_own(command) {
        return MonitorOutput {
            text: format!(
                "'{own}' is gdb's own command: type it without 'monitor' (monitor runs the \
                 hindsight commands gdb has no word for: when, goto, bookmark, info \
                 checkpoints…).\n"
            ),
            moved: false,
        };
    }
    let before = instant(s);
    let mut text = match capture_stdout(|| crate::commands::execute(s, command)) {
        Ok((text, Ok(()))) => text,
        Ok((text, Err(e))) => format!("{text}{e}\n"),
        Err(e) => format!("{e}\n"),
    };
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    let moved = instant(s) != before;
    MonitorOutput { text, moved }
}

/// What tells two instants of a replay apart, as far as a client sees: events replayed, the
/// selected thread, and its registers.
fn instant(s: &Session) -> Option<(u64, i32, Vec<u64>)> {
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
    capture_stdout(|| crate::commands::execute(s, "goto start"))?.1
}

/// Runs `f` with the process's stdout going to a temporary file; returns what was written.
fn capture_stdout<T>(f: impl FnOnce() -> T) -> anyhow::Result<(String, T)> {
    let mut file = tempfile_in_tmp()?;
    let _ = std::io::stdout().flush();
    // SAFETY: dup/dup2 on valid descriptors; stdout is restored before returning.
    let saved = unsafe { libc::dup(1) };
    if saved < 0 {
        bail!("cannot capture the output (dup failed)");
    }
    unsafe { libc::dup2(file.as_raw_fd(), 1) };
    let r = f();
    let _ = std::io::stdout().flush();
    unsafe {
        libc::dup2(saved, 1);
        libc::close(saved);
    }
    let mut text = String::new();
    file.rewind().context("reading the captured output")?;
    file.read_to_string(&mut text)
        .context("reading the captured output")?;
    Ok((text, r))
}

/// An unnamed temporary file (removed as soon as it is created).
fn tempfile_in_tmp() -> anyhow::Result<std::fs::File> {
    let dir = std::env::temp_dir();
    let path = dir.join(format!(
        "hindsight-monitor-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .with_context(|| format!("{}", path.display()))?;
    let _ = std::fs::remove_file(&path);
    Ok(file)
}

/// Runs hindsight commands before any client connects (`hindsight replay --gdbserver PORT
/// -ex CMD…`: to serve the replay from a breakpoint, an event or a bookmark). Their output
/// goes to stdout as usual; the first that fails stops the rest and is the error. The
/// breakpoints they set go afterwards (gdb plants its own).
pub fn run_commands(s: &mut Session, scripts: &[crate::Script]) -> anyhow::Result<()> {
    for script in scripts {
        let lines = match script {
            crate::Script::Command(c) => vec![c.clone()],
            crate::Script::File(f) => std::fs::read_to_string(f)
                .with_context(|| format!("{}", f.display()))?
                .lines()
                .map(str::to_string)
                .collect(),
        };
        for line in lines {
            crate::commands::execute(s, &line).with_context(|| format!("'{line}'"))?;
        }
    }
    let _ = std::io::stdout().flush();
    // Their breakpoints would stop the program where gdb has none.
    if s.breakpoints.iter().next().is_some() {
        capture_stdout(|| crate::commands::execute(s, "delete"))?.1?;
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::gdb_own;

    #[test]
    fn gdb_runs_the_program_itself() {
        assert_eq!(gdb_own("continue"), Some("continue"));
        assert_eq!(gdb_own("cont 3"), Some("continue"));
        assert_eq!(gdb_own("c"), Some("c"));
        assert_eq!(gdb_own("reverse-fin"), Some("reverse-finish"));
        assert_eq!(gdb_own("kill"), Some("kill"));
        assert_eq!(gdb_own("goto start"), None);
        assert_eq!(gdb_own("when"), None);
        assert_eq!(gdb_own("bookmark here"), None);
        assert_eq!(gdb_own("info checkpoints"), None);
        assert_eq!(gdb_own("print/x counter"), None);
        assert_eq!(gdb_own("restart 1"), None);
    }
}
