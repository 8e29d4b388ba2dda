//! The command-line front end of hindsight: a command interpreter with gdb's command names
//! and output shapes, interactive (with history and line editing) or batch (`-ex`, `-x`).
//!
//! Layering: the interpreter ([`commands`]) parses gdb's syntax, calls the engine
//! (`hindsight-engine`: the session, its motions and queries, all answering with data) and
//! shows the answers in gdb's words on a [`console::Console`] — the terminal (output to
//! stdout, each error one line on stderr, as gdb does), or a buffer when another front end
//! runs hindsight commands for its user (the gdb server's `monitor`, the DAP server's
//! debug console).

pub mod commands;
pub mod console;
pub mod messages;
mod printf;
mod report;
mod source;
pub mod traces;

pub use console::Console;
pub use hindsight_engine::Session;

use std::ffi::OsString;
use std::path::PathBuf;

use anyhow::Context as _;

/// One piece of a batch script.
#[derive(Debug, Clone)]
pub enum Script {
    /// A command given with `-ex`.
    Command(String),
    /// A file of commands given with `-x`.
    File(PathBuf),
}

/// Options of `hindsight debug`.
#[derive(Debug, Clone)]
pub struct DebugOptions {
    /// Run the scripts and exit.
    pub batch: bool,
    /// No introduction.
    pub quiet: bool,
    /// Pin hindsight and the program to one CPU.
    pub pin: bool,
    /// `-ex` and `-x`, in order.
    pub commands: Vec<Script>,
    /// The program.
    pub program: Option<PathBuf>,
    /// Its arguments.
    pub args: Vec<OsString>,
}

impl Default for DebugOptions {
    fn default() -> Self {
        DebugOptions {
            batch: false,
            quiet: false,
            pin: true,
            commands: Vec::new(),
            program: None,
            args: Vec::new(),
        }
    }
}

/// Runs `hindsight debug`; returns the process exit status.
pub fn run_debug(opts: DebugOptions) -> anyhow::Result<u8> {
    let program = opts.program.clone().context("no program to debug")?;
    let session = Session::start(&program, &opts.args, opts.pin)?;
    let mut console = Console::terminal();
    no_symbols_note(&session, &mut console);
    if !opts.quiet && !opts.batch {
        console.println(&format!(
            "hindsight: {} is stopped before its first instruction (process {}). \
             Type \"continue\" to run it, \"help\" for commands.",
            program.display(),
            session.pid().unwrap_or(0)
        ));
    }
    Ok(run_session(session, console, &opts))
}

/// Options of `hindsight replay`.
#[derive(Debug, Clone, Default)]
pub struct ReplayCliOptions {
    /// The trace as the user named it (None: the latest).
    pub trace: Option<String>,
    /// Recorded pid of the process to replay.
    pub process: Option<i32>,
    /// The session's options (batch, quiet, commands, pinning).
    pub session: DebugOptions,
    /// Serve the replay to gdb instead of the command line.
    pub gdb: Option<GdbMode>,
}

/// How `hindsight replay` serves gdb.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GdbMode {
    /// `--gdbserver [HOST:]PORT`: wait for gdb there.
    Server(String),
    /// `--gdb`: start gdb, connected.
    Launch,
}

/// gdb's note on a program without DWARF.
fn no_symbols_note(s: &Session, c: &mut Console) {
    if s.lacks_debug_info() {
        c.println(&format!(
            "(No debugging symbols found in {})",
            s.program().display()
        ));
    }
}

/// Opens the trace `hindsight replay` names and starts its replay, stopped before the
/// program's first instruction. Returns the session and the trace's directory.
pub fn open_replay(opts: &ReplayCliOptions) -> anyhow::Result<(Session, PathBuf)> {
    let root = hindsight_trace::default_root()?;
    let trace = hindsight_trace::resolve(&root, opts.trace.as_deref())?;
    let mut console = Console::terminal();
    for w in cut_streams(&trace) {
        console.eprintln(&w);
    }
    let replay = hindsight_replay::ReplayOptions {
        trace: trace.clone(),
        process: opts.process,
        quiet: opts.session.quiet,
        pin: opts.session.pin,
    };
    let session = Session::start_replay(replay)?;
    no_symbols_note(&session, &mut console);
    Ok((session, trace))
}

/// Warnings about the event streams of the trace that were cut off after the recording (the
/// replay of such a process stops with an error at its last whole frame).
pub fn cut_streams(trace: &std::path::Path) -> Vec<String> {
    let Ok(r) = hindsight_trace::TraceReader::open(trace) else {
        return Vec::new();
    };
    r.cut_streams()
        .into_iter()
        .map(|(pid, have, listed)| {
            format!(
                "hindsight: warning: {}: cut off ({have} of the {listed} bytes the trace lists): \
                 the replay of process {pid} ends at its last whole frame",
                r.dir().join("events").join(pid.to_string()).display()
            )
        })
        .collect()
}

/// Runs `hindsight replay`; returns the process exit status.
pub fn run_replay(opts: ReplayCliOptions) -> anyhow::Result<u8> {
    let (session, trace) = open_replay(&opts)?;
    let mut console = Console::terminal();
    if !opts.session.quiet && !opts.session.batch {
        console.println(&format!(
            "hindsight: replaying {} ({}), stopped before its first instruction. \
             Type \"continue\" to run it, \"help\" for commands.",
            trace.display(),
            session.program().display(),
        ));
    }
    Ok(run_session(session, console, &opts.session))
}

/// Runs the scripts, then the prompt (unless in batch mode); returns the exit status.
fn run_session(mut session: Session, mut console: Console, opts: &DebugOptions) -> u8 {
    let mut failed = false;
    for script in &opts.commands {
        let lines = match script {
            Script::Command(c) => vec![c.clone()],
            Script::File(f) => match std::fs::read_to_string(f) {
                Ok(text) => text.lines().map(str::to_string).collect(),
                Err(e) => {
                    console.eprintln(&format!("{}: {e}.", f.display()));
                    failed = true;
                    continue;
                }
            },
        };
        for line in lines {
            if console.quit_requested() {
                break;
            }
            session.interrupter().forget();
            if let Err(e) = commands::execute(&mut session, &mut console, &line) {
                console.eprintln(&e.to_string());
                failed = true;
            }
        }
    }
    if !opts.batch && !console.quit_requested() {
        interrupt_on_ctrl_c(&session);
        commands::repl(&mut session, &mut console);
    }
    session.kill();
    if failed {
        1
    } else {
        0
    }
}

/// The flag that ^C sets (the session's interrupter), for the signal handler.
static INTERRUPT: std::sync::OnceLock<std::sync::Arc<std::sync::atomic::AtomicBool>> =
    std::sync::OnceLock::new();

/// ^C at the terminal goes to the whole foreground process group: a live program stops with
/// SIGINT (reported as gdb does); a replay's motion — forward or backward — stops at its next
/// event; hindsight itself must survive it. The handler only sets the session's interrupt
/// flag — not SIG_IGN, which the program would inherit through exec.
fn interrupt_on_ctrl_c(session: &Session) {
    let _ = INTERRUPT.set(session.interrupter().flag());
    extern "C" fn on_sigint(_: libc::c_int) {
        if let Some(flag) = INTERRUPT.get() {
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }
    // SAFETY: installs an async-signal-safe handler (one atomic load and store).
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_sigint as *const () as usize;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigaction(libc::SIGINT, &sa, std::ptr::null_mut());
    }
}

/// Runs hindsight commands on `s`, their output and errors on `c`; the first that fails
/// stops the rest and is the error (`hindsight replay --gdbserver PORT -ex CMD…`: to serve
/// the replay from a breakpoint, an event or a bookmark).
pub fn run_scripts(s: &mut Session, c: &mut Console, scripts: &[Script]) -> anyhow::Result<()> {
    for script in scripts {
        let lines = match script {
            Script::Command(cmd) => vec![cmd.clone()],
            Script::File(f) => std::fs::read_to_string(f)
                .with_context(|| format!("{}", f.display()))?
                .lines()
                .map(str::to_string)
                .collect(),
        };
        for line in lines {
            commands::execute(s, c, &line).with_context(|| format!("'{line}'"))?;
        }
    }
    Ok(())
}
