//! The front end of hindsight: a command interpreter with gdb's command names and output
//! shapes, interactive (with history and line editing) or batch (`-ex`, `-x`).
//!
//! Layering: the interpreter ([`commands`]) works on a [`session::Session`], which owns the
//! live process (`hindsight-control`), the program's symbols (`hindsight-symbols`) and the
//! breakpoint table (`hindsight-breakpoints`). Output goes to stdout, errors to stderr, each
//! error one line, as gdb does.

pub mod commands;
mod context;
mod hook;
mod linkmap;
mod printf;
pub mod remote;
mod report;
pub mod session;
mod source;
mod stepping;
mod tls;
pub mod traces;
mod travel;

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
    let session = session::Session::start(&program, &opts.args, opts.pin)?;
    if !opts.quiet && !opts.batch {
        println!(
            "hindsight: {} is stopped before its first instruction (process {}). \
             Type \"continue\" to run it, \"help\" for commands.",
            program.display(),
            session.pid().unwrap_or(0)
        );
    }
    Ok(run_session(session, &opts))
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

/// Opens the trace `hindsight replay` names and starts its replay, stopped before the
/// program's first instruction. Returns the session and the trace's directory.
pub fn open_replay(opts: &ReplayCliOptions) -> anyhow::Result<(session::Session, PathBuf)> {
    let root = hindsight_trace::default_root()?;
    let trace = hindsight_trace::resolve(&root, opts.trace.as_deref())?;
    warn_of_cut_streams(&trace);
    let replay = hindsight_replay::ReplayOptions {
        trace: trace.clone(),
        process: opts.process,
        quiet: opts.session.quiet,
        pin: opts.session.pin,
    };
    Ok((session::Session::start_replay(replay)?, trace))
}

/// Says which event streams of the trace were cut off after the recording (the replay of
/// such a process stops with an error at its last whole frame).
fn warn_of_cut_streams(trace: &std::path::Path) {
    let Ok(r) = hindsight_trace::TraceReader::open(trace) else {
        return;
    };
    for (pid, have, listed) in r.cut_streams() {
        eprintln!(
            "hindsight: warning: {}: cut off ({have} of the {listed} bytes the trace lists): \
             the replay of process {pid} ends at its last whole frame",
            r.dir().join("events").join(pid.to_string()).display()
        );
    }
}

/// Runs `hindsight replay`; returns the process exit status.
pub fn run_replay(opts: ReplayCliOptions) -> anyhow::Result<u8> {
    let (session, trace) = open_replay(&opts)?;
    if !opts.session.quiet && !opts.session.batch {
        println!(
            "hindsight: replaying {} ({}), stopped before its first instruction. \
             Type \"continue\" to run it, \"help\" for commands.",
            trace.display(),
            session.program.display(),
        );
    }
    Ok(run_session(session, &opts.session))
}

/// Runs the scripts, then the prompt (unless in batch mode); returns the exit status.
fn run_session(mut session: session::Session, opts: &DebugOptions) -> u8 {
    let mut failed = false;
    for script in &opts.commands {
        let lines = match script {
            Script::Command(c) => vec![c.clone()],
            Script::File(f) => match std::fs::read_to_string(f) {
                Ok(text) => text.lines().map(str::to_string).collect(),
                Err(e) => {
                    eprintln!("{}: {e}.", f.display());
                    failed = true;
                    continue;
                }
            },
        };
        for line in lines {
            if session.quit_requested() {
                break;
            }
            if let Err(e) = commands::execute(&mut session, &line) {
                eprintln!("{e}");
                failed = true;
            }
        }
    }
    if !opts.batch && !session.quit_requested() {
        ignore_interrupts();
        commands::repl(&mut session);
    }
    session.kill();
    if failed {
        1
    } else {
        0
    }
}

/// ^C at the terminal goes to the whole foreground process group: the program stops with
/// SIGINT (reported as gdb does), and hindsight itself must survive it. A handler that does
/// nothing — not SIG_IGN, which the program would inherit through exec — does that.
fn ignore_interrupts() {
    extern "C" fn nothing(_: libc::c_int) {}
    // SAFETY: installs an async-signal-safe handler that touches nothing.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = nothing as *const () as usize;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigaction(libc::SIGINT, &sa, std::ptr::null_mut());
    }
}
