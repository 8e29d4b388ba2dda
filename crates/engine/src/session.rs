//! A debugging session: the program, its process, its symbols and the user's breakpoints.
//!
//! Invariants: a session is live (`hindsight debug`: the program runs for real) or a replay
//! (`replay_opts` is set: every run of the process is a replay of the same recording, so
//! time travel may start it again and find every earlier state). The selected thread and
//! frame are the ones every query without an explicit thread answers for; every motion
//! ([`crate::stop`]) leaves the thread that stopped selected, at frame 0. Nothing here prints:
//! what a front end shows comes from the data these calls return.
//!
//! A session drives one process. A replay of several (gdb's inferiors, a recorded process
//! tree) keeps one session per process and swaps them (see [`crate::inferiors`]): the session
//! a front end holds is always the current inferior's.

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _};
use hindsight_breakpoints::table::BreakpointTable;
use hindsight_control::{Inferior, StopEvent};
use hindsight_ptrace::Tid;
use hindsight_symbols::target::DwarfRegs;
use hindsight_symbols::value::Value;
use hindsight_symbols::{Frame, Program};

/// Everything a command can act on.
pub struct Session {
    pub(crate) program: PathBuf,
    pub(crate) args: Vec<OsString>,
    pub(crate) pin: bool,
    pub(crate) inferior: Option<Inferior>,
    pub(crate) symbols: Program,
    /// (path, mapping start) of every module loaded into `symbols`.
    pub(crate) loaded: HashSet<(PathBuf, u64)>,
    pub(crate) breakpoints: BreakpointTable,
    /// Per watchpoint number: the last value seen (for Old/New value).
    pub(crate) watch_values: std::collections::HashMap<u32, Vec<u8>>,
    /// Per watchpoint number: the type of the watched expression.
    pub(crate) watch_types: std::collections::HashMap<u32, hindsight_symbols::value::TypeHandle>,
    /// The selected thread and frame.
    pub(crate) thread: Option<Tid>,
    pub(crate) frame: usize,
    /// The value history: `$1`, `$2`…
    pub(crate) history: Vec<Value>,
    /// True once the program was let go by `run`/`continue`/… (`run` then restarts it).
    pub(crate) started: bool,
    /// The main module has DWARF.
    pub(crate) has_debug_info: bool,
    /// The last stop was the plain end of a step (not a breakpoint, signal or exit).
    pub(crate) stepped_cleanly: bool,
    /// How threads step over breakpoints (`set displaced-stepping`).
    pub(crate) step_over: hindsight_control::StepOverMode,
    /// `set print pretty|elements|repeats`.
    pub(crate) print: hindsight_symbols::show::PrintOptions,
    /// Where the dynamic loader reports library loads (`_dl_debug_state`), while planted for
    /// pending breakpoints.
    pub(crate) library_event: Option<u64>,
    /// Runtime address of the executable's `_DYNAMIC` (the way to the loader's link map).
    pub(crate) dynamic: Option<u64>,
    /// The user breakpoint that caused the last stop (for `continue N`).
    pub(crate) last_breakpoint: Option<u32>,
    /// A replay session: what to replay, and the replay in progress.
    pub(crate) replay_opts: Option<hindsight_replay::ReplayOptions>,
    pub(crate) replay: Option<hindsight_replay::Replayer>,
    /// `handle SIGNAL stop|nostop`: the user's choices (others: gdb's defaults).
    pub(crate) signal_stops: std::collections::HashMap<i32, bool>,
    /// `handle SIG [no]print`, where the user said.
    pub(crate) signal_print: std::collections::HashMap<i32, bool>,
    /// `handle SIG [no]pass`, where the user said.
    pub(crate) signal_pass: std::collections::HashMap<i32, bool>,
    /// The last stop as front ends were told (see [`Session::last_stop`]).
    pub(crate) last_report: Option<crate::stop::Stop>,
    /// The last stop, and why.
    pub(crate) last_stop: Option<(StopEvent, Option<crate::hook::Reason>)>,
    /// Time travel: debugger events, bookmarks, checkpoints, the current position.
    pub(crate) travel: crate::travel::Travel,
    /// Breakpoint sites whose code was not mapped when the program (re)started: planted as
    /// soon as it is (replay tries at every event).
    pub(crate) pending_sites: Vec<u64>,
    /// Set by [`Interrupter::interrupt`] (^C, a front end's pause): the running motion stops
    /// at the next event (replay) or at once (a live program).
    pub(crate) interrupt: Interrupter,
    /// A live program's `continue` watches the interrupter (a front end that can pause it);
    /// otherwise the terminal's ^C reaches the program, which stops with SIGINT.
    pub(crate) live_pause: bool,
    /// A motion runs (the interrupt is heard only then: a query such as `when`, which replays
    /// up to now to name it, always gets back to now).
    pub(crate) in_motion: bool,
    /// A replay of several processes: the others (see [`crate::inferiors`]).
    pub(crate) inferiors: Option<crate::inferiors::Inferiors>,
    /// The replay was stopped at a buffered call to place its process (event, call: see
    /// [`crate::inferiors`]): no position names that instant yet, so time travel from it is
    /// refused until a forward motion leaves it.
    pub(crate) held_call: Option<(u64, u32)>,
    /// `break message` stops at a receive inside a batch of buffered calls: (the batch's
    /// event, the call). Its quantum event stops the replay before the batch; the replay is
    /// then run on to the call.
    pub(crate) message_calls: Vec<(u64, u32)>,
}

/// Asks the motion that runs to stop (from a signal handler or another thread): a replay
/// stops at its next event, a live program at once, and the motion reports where it stopped
/// with [`crate::stop::StopReason::Interrupted`]. A request is forgotten when a motion ends,
/// and by [`Interrupter::forget`], which a front end calls when the user starts a command (a
/// ^C typed at the prompt is not meant for the next command; a pause sent right after the
/// answer to a `continue` is meant for that continue, even if it has not begun yet).
#[derive(Debug, Clone, Default)]
pub struct Interrupter(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Interrupter {
    /// Asks the running motion to stop (async-signal-safe: one atomic store).
    pub fn interrupt(&self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether an interrupt was asked for since the motion began.
    pub fn requested(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Forgets a request (the user starts a command; a motion ended).
    pub fn forget(&self) {
        self.0.store(false, std::sync::atomic::Ordering::SeqCst);
    }

    /// The same flag as a raw atomic (for a signal handler that must not allocate).
    pub fn flag(&self) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
        self.0.clone()
    }
}

impl Session {
    /// Starts `program` stopped before its first instruction and loads its symbols.
    pub fn start(program: &Path, args: &[OsString], pin: bool) -> anyhow::Result<Session> {
        let program = resolve_program(program)?;
        Session::create(program, args, pin, None)
    }

    /// Starts replaying a trace, stopped before the program's first instruction.
    pub fn start_replay(opts: hindsight_replay::ReplayOptions) -> anyhow::Result<Session> {
        let pin = opts.pin;
        Session::create(PathBuf::new(), &[], pin, Some(opts))
    }

    fn create(
        program: PathBuf,
        args: &[OsString],
        pin: bool,
        replay_opts: Option<hindsight_replay::ReplayOptions>,
    ) -> anyhow::Result<Session> {
        let mut s = Session {
            program,
            args: args.to_vec(),
            pin,
            inferior: None,
            symbols: Program::new(),
            loaded: HashSet::new(),
            breakpoints: BreakpointTable::new(),
            watch_values: Default::default(),
            watch_types: Default::default(),
            thread: None,
            frame: 0,
            history: Vec::new(),
            started: false,
            has_debug_info: false,
            last_breakpoint: None,
            dynamic: None,
            step_over: hindsight_control::StepOverMode::Displaced,
            print: hindsight_symbols::show::PrintOptions::default(),
            library_event: None,
            stepped_cleanly: false,
            replay_opts,
            replay: None,
            signal_stops: Default::default(),
            signal_print: std::collections::HashMap::new(),
            signal_pass: std::collections::HashMap::new(),
            last_stop: None,
            last_report: None,
            travel: Default::default(),
            pending_sites: Vec::new(),
            interrupt: Interrupter::default(),
            live_pause: false,
            in_motion: false,
            inferiors: None,
            held_call: None,
            message_calls: Vec::new(),
        };
        s.spawn()?;
        if let Some(opts) = s.replay_opts.as_ref().filter(|o| o.process.is_none()) {
            s.inferiors = crate::inferiors::Inferiors::of_trace(&opts.trace, s.user_pid())?;
        }
        Ok(s)
    }

    /// True when the program is an ELF file without DWARF (gdb says "No debugging symbols
    /// found"). A recorded script is run by its interpreter: the script has no symbols to miss.
    pub fn lacks_debug_info(&self) -> bool {
        !self.has_debug_info && is_elf(&self.program)
    }

    /// The program being debugged (in a replay: the recorded one).
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// The program's arguments (argv[1..]).
    pub fn args(&self) -> &[OsString] {
        &self.args
    }

    /// Replaces the program's arguments for its next start (gdb's `run ARGS`, live only).
    pub fn set_args(&mut self, args: Vec<OsString>) {
        self.args = args;
    }

    /// Whether this session replays a recording (time travel works) rather than debugging a
    /// live program.
    pub fn is_replay(&self) -> bool {
        self.replay_opts.is_some()
    }

    /// Whether the program was let go since it (re)started (`run` then restarts it).
    pub fn started(&self) -> bool {
        self.started
    }

    /// The program's symbols (functions, lines, types) as loaded from the process's modules.
    pub fn symbols(&self) -> &Program {
        &self.symbols
    }

    /// What a front end calls to interrupt motions of this session (^C, DAP `pause`).
    pub fn interrupter(&self) -> Interrupter {
        self.interrupt.clone()
    }

    /// Lets the interrupter stop a running live program too (a front end with a pause
    /// button). The program is then checked every 50 ms, and every stop on the way costs a
    /// little more; without it, the terminal's ^C reaches the program, which stops with
    /// SIGINT as under gdb.
    pub fn enable_live_pause(&mut self) {
        self.live_pause = true;
    }

    /// The selected thread, if the program runs.
    pub fn selected_thread(&self) -> Option<Tid> {
        self.thread.filter(|_| self.pid().is_some())
    }

    /// The selected frame's index (0: innermost).
    pub fn selected_frame_index(&self) -> usize {
        self.frame
    }

    /// Selects thread `tid` (frame 0).
    pub fn select_thread(&mut self, tid: Tid) {
        self.thread = Some(tid);
        self.frame = 0;
    }

    /// Selects frame `index` of the selected thread (the caller checked that it exists).
    pub fn select_frame(&mut self, index: usize) {
        self.frame = index;
    }

    /// The last stop a motion ended with (also one that a command of a front end's own
    /// language made, such as `goto` typed in an editor's debug console).
    pub fn last_stop(&self) -> Option<&crate::stop::Stop> {
        self.last_report.as_ref()
    }

    /// The program's threads (gdb's numbers, tids, pthread ids); none when it is not running.
    pub fn threads(&self) -> Vec<hindsight_control::ThreadInfo> {
        self.live().map(|i| i.threads()).unwrap_or_default()
    }

    /// A thread's name (what `/proc/…/comm` says).
    pub fn thread_name(&self, tid: Tid) -> Option<String> {
        self.live().ok()?.thread_name(tid)
    }

    /// The user breakpoint that caused the last stop (for `continue N`).
    pub fn last_breakpoint(&self) -> Option<u32> {
        self.last_breakpoint
    }

    /// Whether the last stop was the plain end of a step (not a breakpoint, a signal or the
    /// end): `step N` goes on only then.
    pub fn stepped_cleanly(&self) -> bool {
        self.stepped_cleanly
    }

    /// How threads step over breakpoints (gdb's `set displaced-stepping`); kept across runs.
    pub fn set_step_over_mode(&mut self, mode: hindsight_control::StepOverMode) {
        self.step_over = mode;
        if let Some(inf) = self.inferior.as_mut() {
            inf.set_step_over_mode(mode);
        }
    }

    /// Whether signal `signal` stops the program (gdb's `handle`): the user's choice, else
    /// gdb's default.
    pub fn signal_stops(&self, signal: i32) -> bool {
        self.signal_stops
            .get(&signal)
            .copied()
            .unwrap_or_else(|| hindsight_control::stops_by_default(signal))
    }

    /// Sets whether signal `signal` stops the program (gdb's `handle SIG stop|nostop`).
    pub fn set_signal_stops(&mut self, signal: i32, stops: bool) {
        self.signal_stops.insert(signal, stops);
    }

    /// Whether signal `signal` is mentioned when it does not stop the program (gdb's
    /// `handle SIG print|noprint`; by default, as it stops).
    pub fn signal_prints(&self, signal: i32) -> bool {
        self.signal_print
            .get(&signal)
            .copied()
            .unwrap_or_else(|| hindsight_control::stops_by_default(signal))
    }

    /// Sets whether signal `signal` is mentioned (`handle SIG print|noprint`).
    pub fn set_signal_prints(&mut self, signal: i32, prints: bool) {
        self.signal_print.insert(signal, prints);
    }

    /// Whether signal `signal` is given to the program (gdb's `handle SIG pass|nopass`; SIGINT
    /// and SIGTRAP are not by default). A replay delivers what was recorded whatever this says.
    pub fn signal_passes(&self, signal: i32) -> bool {
        self.signal_pass
            .get(&signal)
            .copied()
            .unwrap_or(signal != libc::SIGINT && signal != libc::SIGTRAP)
    }

    /// Sets whether signal `signal` is given to the program (`handle SIG pass|nopass`).
    pub fn set_signal_passes(&mut self, signal: i32, passes: bool) {
        self.signal_pass.insert(signal, passes);
    }

    /// The process id the user knows: the recorded one in a replay (what getpid() returned
    /// in the recording, as gdb on rr shows it), else the live one (0 when none ever ran).
    pub fn user_pid(&self) -> i32 {
        match &self.replay {
            Some(r) => r.recorded_pid(),
            None => self.inferior.as_ref().map(|i| i.pid()).unwrap_or(0),
        }
    }

    /// (Re)starts the process and re-plants every breakpoint.
    pub(crate) fn spawn(&mut self) -> anyhow::Result<()> {
        self.spawn_with(false)
    }

    /// [`Session::spawn`]; `keep_symbols`: a replay started again maps every file where it
    /// did before, so the symbols already read stay valid (time travel restarts replays often,
    /// and reading DWARF again each time would dominate).
    pub(crate) fn spawn_with(&mut self, keep_symbols: bool) -> anyhow::Result<()> {
        let keep_symbols = keep_symbols && self.replay_opts.is_some();
        if !keep_symbols {
            // A new run from the start: no exec has happened in it yet, and the debugger
            // events that were spent come back.
            self.travel.exec_at = None;
            self.travel.engine.rewind(0);
        }
        let inf = if let Some(opts) = &self.replay_opts {
            let (replay, inf) = hindsight_replay::Replayer::start(opts)
                .with_context(|| format!("replaying {}", opts.trace.display()))?;
            self.program = replay.program().to_path_buf();
            self.args = replay
                .reader()
                .header()
                .args
                .iter()
                .skip(1)
                .map(|a| std::os::unix::ffi::OsStrExt::from_bytes(a.as_slice()))
                .map(|a: &OsStr| a.to_os_string())
                .collect();
            self.replay = Some(replay);
            inf
        } else {
            let args: Vec<&OsStr> = self.args.iter().map(|a| a.as_os_str()).collect();
            let mut inf = Inferior::spawn(&self.program, &args, self.pin)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            // `set displaced-stepping` outlives a restart.
            inf.set_step_over_mode(self.step_over);
            inf
        };
        self.inferior = Some(inf);
        self.started = false;
        if keep_symbols {
            self.keep_symbols();
        } else {
            self.load_symbols();
        }
        crate::breakpoints::replant_all(self)?;
        Ok(())
    }

    /// After a replay was started again from the start or a checkpoint: the symbols stay;
    /// modules mapped since are added; the main thread is selected.
    pub(crate) fn keep_symbols(&mut self) {
        self.thread = self.pid().map(Tid);
        self.frame = 0;
        self.refresh_modules();
    }

    /// Forgets the symbols of the previous program image and loads those of the process as
    /// it is now (after a spawn or an exec), selecting its main thread.
    pub(crate) fn load_symbols(&mut self) {
        self.thread = self.pid().map(Tid);
        self.frame = 0;
        self.symbols = Program::new();
        self.loaded.clear();
        self.dynamic = None;
        self.refresh_modules();
        self.has_debug_info = self
            .symbols
            .modules()
            .next()
            .map(|m| self.symbols.has_debug_info(m))
            .unwrap_or(false);
    }

    /// After the program executed another one: its symbols replace the old ones and every
    /// enabled breakpoint is resolved and planted again (one that no longer resolves keeps
    /// no location). Watchpoints watched the old memory and stay inert.
    pub(crate) fn reload_after_exec(&mut self) {
        self.load_symbols();
        let numbers: Vec<(u32, String)> = self
            .breakpoints
            .iter()
            .filter(|b| {
                b.enabled && b.kind == hindsight_breakpoints::table::BreakpointKind::Breakpoint
            })
            .map(|b| (b.number, b.spec.clone()))
            .collect();
        for (n, spec) in numbers {
            let addrs = if spec.is_empty() {
                Vec::new()
            } else {
                crate::breakpoints::resolve_location(self, &spec, None).unwrap_or_default()
            };
            if let Some(inf) = self.inferior.as_mut() {
                for &a in &addrs {
                    let _ = inf.insert_site(a);
                }
            }
            if let Some(bp) = self.breakpoints.get_mut(n) {
                bp.locations = addrs;
            }
        }
    }

    /// Plants the pending breakpoint sites whose code is mapped now.
    pub(crate) fn plant_pending(&mut self) {
        let Some(inf) = self.inferior.as_mut().filter(|i| i.is_alive()) else {
            return;
        };
        self.pending_sites = inf.insert_sites_in_code(&self.pending_sites);
    }

    /// The process id, while the program runs.
    pub fn pid(&self) -> Option<i32> {
        self.inferior
            .as_ref()
            .filter(|i| i.is_alive())
            .map(|i| i.pid())
    }

    /// Kills the program if it still runs.
    pub fn kill(&mut self) {
        if let Some(inf) = self.inferior.as_mut() {
            inf.kill();
        }
        self.inferior = None;
    }

    /// The live process, or gdb's error when there is none.
    pub fn live(&self) -> anyhow::Result<&Inferior> {
        match self.inferior.as_ref() {
            Some(i) if i.is_alive() => Ok(i),
            _ => bail!("The program is not being run."),
        }
    }

    pub(crate) fn live_mut(&mut self) -> anyhow::Result<&mut Inferior> {
        match self.inferior.as_mut() {
            Some(i) if i.is_alive() => Ok(i),
            _ => bail!("The program is not being run."),
        }
    }

    /// The selected thread (the live process must exist).
    pub fn tid(&self) -> anyhow::Result<Tid> {
        self.live()?;
        self.thread.context("No thread selected.")
    }

    /// Loads the symbols of every file mapped into the process that is not loaded yet.
    pub(crate) fn refresh_modules(&mut self) {
        let Some(pid) = self.pid() else { return };
        // Through a live thread: a leader that called pthread_exit is a zombie whose own
        // maps file reads empty.
        let tid = self.thread.map(|t| t.0).unwrap_or(pid);
        let Ok(maps) = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/maps")) else {
            return;
        };
        let mut fresh = false;
        for (path, start) in file_mappings(&maps) {
            if !self.loaded.insert((path.clone(), start)) {
                continue;
            }
            // A module whose symbols cannot be read simply has none: not an error.
            if let Some((bias, dynamic)) = load_bias(&path, start) {
                if self.symbols.load_module(&path, bias).is_ok() {
                    fresh = true;
                }
                if self.dynamic.is_none() {
                    // The executable is the first mapping; its _DYNAMIC leads to the loader's
                    // list of objects.
                    self.dynamic = dynamic.map(|d| d.wrapping_add(bias));
                }
            }
        }
        // The loader may list an object only after it mapped it: look again at every stop
        // until every library has its name (a few small reads).
        if fresh || self.symbols.has_unnamed_libraries() {
            if let (Some(dynamic), Some(inf)) = (self.dynamic, self.inferior.as_ref()) {
                for (bias, name) in crate::linkmap::loaded_objects(inf, dynamic) {
                    self.symbols.set_loader_name(bias, name.into());
                }
            }
        }
    }

    /// Frame 0's registers of thread `tid`, in DWARF numbering.
    pub fn dwarf_regs(&self, tid: Tid) -> anyhow::Result<DwarfRegs> {
        let r = self.live()?.regs(tid).map_err(|e| anyhow::anyhow!("{e}"))?;
        let mut d = DwarfRegs::default();
        for (i, v) in r.dwarf().iter().enumerate() {
            d.0[i] = Some(*v);
        }
        Ok(d)
    }

    /// The stack of thread `tid`, innermost first, at most `max` frames (up to main, as gdb
    /// shows it).
    pub fn frames(&self, tid: Tid, max: usize) -> anyhow::Result<Vec<Frame>> {
        let regs = self.dwarf_regs(tid)?;
        let mem = crate::context::Memory(self.live()?);
        let mut frames = self.symbols.unwind(&regs, &mem, max);
        // gdb stops at main (backtrace past-main off).
        if let Some(i) = frames.iter().position(|f| {
            let pc = f.regs.pc().unwrap_or(0);
            let lookup = if pc > 0 { pc } else { 0 };
            self.symbols
                .function_at(lookup)
                .map(|fi| fi.name == "main")
                .unwrap_or(false)
        }) {
            frames.truncate(i + 1);
        }
        // Inlined code shows as frames of its own, as in gdb.
        Ok(self.symbols.expand_inline(frames))
    }

    /// The selected frame of the selected thread.
    pub fn selected_frame(&self) -> anyhow::Result<Frame> {
        let tid = self.tid()?;
        let frames = self.frames(tid, self.frame + 1)?;
        frames
            .get(self.frame)
            .cloned()
            .or_else(|| frames.last().cloned())
            .context("No stack.")
    }
}

/// Finds the program as gdb does: a path with a slash as is, else in the current directory,
/// then on PATH. Says plainly what is wrong with it.
pub fn resolve_program(program: &Path) -> anyhow::Result<PathBuf> {
    resolve(program, false)
}

/// [`resolve_program`] that also accepts an executable script (`#!`): the kernel runs its
/// interpreter, which a recording follows as rr does (gdb refuses to debug one).
pub fn resolve_recordable(program: &Path) -> anyhow::Result<PathBuf> {
    resolve(program, true)
}

fn resolve(program: &Path, scripts: bool) -> anyhow::Result<PathBuf> {
    let candidates: Vec<PathBuf> = if program.components().count() > 1 || program.exists() {
        vec![program.to_path_buf()]
    } else {
        std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).map(|d| d.join(program)).collect())
            .unwrap_or_default()
    };
    let Some(path) = candidates.into_iter().find(|p| p.exists()) else {
        bail!("{}: No such file or directory.", program.display());
    };
    let meta = std::fs::metadata(&path).with_context(|| format!("{}", path.display()))?;
    if meta.is_dir() {
        bail!("{}: Is a directory.", path.display());
    }
    let mut magic = [0u8; 4];
    let _ =
        std::fs::File::open(&path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic));
    if magic != *b"\x7fELF" && !(scripts && magic.starts_with(b"#!")) {
        bail!(
            "\"{}\": not in executable format: file format not recognized",
            path.display()
        );
    }
    use std::os::unix::fs::PermissionsExt;
    if meta.permissions().mode() & 0o111 == 0 {
        bail!("{}: Permission denied (not executable).", path.display());
    }
    Ok(std::fs::canonicalize(&path).unwrap_or(path))
}

/// Whether the file at `path` starts as an ELF file does.
fn is_elf(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic))
        .is_ok()
        && magic == *b"\x7fELF"
}

/// (path, start address) of the mapping at file offset 0 of every file mapped in `maps`.
fn file_mappings(maps: &str) -> Vec<(PathBuf, u64)> {
    let mut out = Vec::new();
    for line in maps.lines() {
        let mut parts = line.split_whitespace();
        let (Some(range), Some(_perms), Some(offset), Some(_dev), Some(_inode)) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            continue;
        };
        let Some(path) = parts.next() else { continue };
        if !path.starts_with('/') || !offset.trim_start_matches('0').is_empty() {
            continue;
        }
        let Some(start) = range
            .split('-')
            .next()
            .and_then(|s| u64::from_str_radix(s, 16).ok())
        else {
            continue;
        };
        out.push((PathBuf::from(path), start));
    }
    out
}

/// The load bias of an ELF file whose offset-0 page is mapped at `start` (`start` minus the
/// page-aligned virtual address of the PT_LOAD segment that contains file offset 0), and the
/// file address of its PT_DYNAMIC, if it has one.
fn load_bias(path: &Path, start: u64) -> Option<(u64, Option<u64>)> {
    use hindsight_symbols::elf_headers::{file_program_headers, load_bias, PT_DYNAMIC};
    let headers = file_program_headers(path)?;
    let dynamic = headers
        .iter()
        .find(|h| h.kind == PT_DYNAMIC)
        .map(|h| h.vaddr);
    Some((load_bias(&headers, start)?, dynamic))
}

/// The live process and its replay, from the fields of a session that a motion has taken
/// apart (it borrows other fields at the same time): gdb's errors when either is missing.
pub(crate) fn live_replay<'a>(
    inferior: &'a mut Option<Inferior>,
    replay: &'a mut Option<hindsight_replay::Replayer>,
) -> anyhow::Result<(&'a mut Inferior, &'a mut hindsight_replay::Replayer)> {
    let inf = inferior
        .as_mut()
        .filter(|i| i.is_alive())
        .context("The program is not being run.")?;
    let replay = replay.as_mut().context(crate::travel::NEEDS_RECORDING)?;
    Ok((inf, replay))
}
