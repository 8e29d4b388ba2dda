//! A debugging session: the program, its process, its symbols and the user's breakpoints.

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _};
use hindsight_breakpoints::table::BreakpointTable;
use hindsight_control::{Inferior, Resume, StopEvent};
use hindsight_ptrace::Tid;
use hindsight_symbols::target::DwarfRegs;
use hindsight_symbols::value::Value;
use hindsight_symbols::{Frame, Program};

use crate::source::SourceCache;

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
    /// `$1`, `$2`…
    pub(crate) history: Vec<Value>,
    pub(crate) sources: SourceCache,
    /// Where a bare `list` continues: (file, first line to show).
    pub(crate) list_next: Option<(PathBuf, u32)>,
    /// The line the last stop showed (where a first `list` centres).
    pub(crate) list_center: Option<(PathBuf, u32)>,
    pub(crate) quit: bool,
    /// True once the program was let go by `run`/`continue`/… (`run` then restarts it).
    pub(crate) started: bool,
    /// The main module has DWARF.
    pub(crate) has_debug_info: bool,
    /// Inside `step N`: plain step ends are not printed.
    pub(crate) quiet_steps: bool,
    /// The last stop was the plain end of a step (not a breakpoint, signal or exit).
    pub(crate) stepped_cleanly: bool,
    /// How threads step over breakpoints (`set displaced-stepping`).
    pub(crate) step_over: hindsight_control::StepOverMode,
    /// `set print pretty|elements|repeats`.
    pub(crate) print: hindsight_symbols::show::PrintOptions,
    /// `display` expressions, shown after every stop.
    pub(crate) displays: Vec<crate::commands::display::Display>,
    /// `set breakpoint pending on|off|auto` (`None`: auto, gdb's question).
    pub(crate) breakpoint_pending: Option<bool>,
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
    /// The last stop reported to the user, and why (for front ends other than the CLI).
    pub(crate) last_stop: Option<(StopEvent, Option<crate::hook::Reason>)>,
    /// Time travel: debugger events, bookmarks, checkpoints, the current position.
    pub(crate) travel: crate::travel::Travel,
    /// Breakpoint sites whose code was not mapped when the program (re)started: planted as
    /// soon as it is (replay tries at every event).
    pub(crate) pending_sites: Vec<u64>,
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
            sources: SourceCache::default(),
            list_next: None,
            list_center: None,
            quit: false,
            started: false,
            has_debug_info: false,
            last_breakpoint: None,
            dynamic: None,
            step_over: hindsight_control::StepOverMode::Displaced,
            print: hindsight_symbols::show::PrintOptions::default(),
            breakpoint_pending: None,
            displays: Vec::new(),
            library_event: None,
            quiet_steps: false,
            stepped_cleanly: false,
            replay_opts,
            replay: None,
            signal_stops: Default::default(),
            signal_print: std::collections::HashMap::new(),
            signal_pass: std::collections::HashMap::new(),
            last_stop: None,
            travel: Default::default(),
            pending_sites: Vec::new(),
        };
        s.spawn()?;
        // (A recorded script is run by its interpreter: the script has no symbols to miss.)
        if !s.has_debug_info && is_elf(&s.program) {
            println!("(No debugging symbols found in {})", s.program.display());
        }
        Ok(s)
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
        crate::commands::breakpoints::replant_all(self)?;
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
                crate::commands::breakpoints::resolve_location(self, &spec)
                    .map(|l| l.addresses)
                    .unwrap_or_default()
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

    /// True after `quit`.
    pub fn quit_requested(&self) -> bool {
        self.quit
    }

    /// Kills the program if it still runs.
    pub fn kill(&mut self) {
        if let Some(inf) = self.inferior.as_mut() {
            inf.kill();
        }
        self.inferior = None;
    }

    /// The live process, or gdb's error when there is none.
    pub(crate) fn live(&self) -> anyhow::Result<&Inferior> {
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
    pub(crate) fn tid(&self) -> anyhow::Result<Tid> {
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

    /// Frame 0's registers of the selected thread, in DWARF numbering.
    pub(crate) fn dwarf_regs(&self, tid: Tid) -> anyhow::Result<DwarfRegs> {
        let r = self.live()?.regs(tid).map_err(|e| anyhow::anyhow!("{e}"))?;
        let mut d = DwarfRegs::default();
        for (i, v) in r.dwarf().iter().enumerate() {
            d.0[i] = Some(*v);
        }
        Ok(d)
    }

    /// The stack of the selected thread, innermost first (up to main, as gdb shows it).
    pub(crate) fn frames(&self, tid: Tid, max: usize) -> anyhow::Result<Vec<Frame>> {
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
    pub(crate) fn selected_frame(&self) -> anyhow::Result<Frame> {
        let tid = self.tid()?;
        let frames = self.frames(tid, self.frame + 1)?;
        frames
            .get(self.frame)
            .cloned()
            .or_else(|| frames.last().cloned())
            .context("No stack.")
    }

    /// The user breakpoint that caused the last stop.
    pub(crate) fn last_breakpoint(&self) -> Option<u32> {
        self.last_breakpoint
    }

    /// Resumes the program and prints what stopped it. Returns the stop.
    pub(crate) fn resume(&mut self, how: Resume) -> anyhow::Result<StopEvent> {
        crate::hook::resume(self, how)
    }
}

/// Finds the program as gdb does: a path with a slash as is, else in the current directory,
/// then on PATH. Says plainly what is wrong with it.
pub(crate) fn resolve_program(program: &Path) -> anyhow::Result<PathBuf> {
    resolve(program, false)
}

/// [`resolve_program`] that also accepts an executable script (`#!`): the kernel runs its
/// interpreter, which a recording follows as rr does (gdb refuses to debug one).
pub(crate) fn resolve_recordable(program: &Path) -> anyhow::Result<PathBuf> {
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
