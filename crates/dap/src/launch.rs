//! Launch configurations: what a `launch` request asks for, and the session it starts.
//!
//! Three kinds, by `mode` (or by what is given):
//! - `replay`: replay a trace (`trace`, default the latest) — the default without `program`;
//! - `record`: run `program` with `args` under the recorder, then replay the new trace — the
//!   default with `program`;
//! - `live`: debug `program` live (no recording, no time travel).
//!
//! Invariant: a session starts stopped before the program's first instruction; the adapter
//! lets it run at `configurationDone`.

use std::ffi::OsString;
use std::path::PathBuf;

use anyhow::{bail, Context as _};
use hindsight_engine::Session;
use serde::Deserialize;

/// A `launch` request's arguments.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LaunchArgs {
    /// `replay`, `record` or `live` (see the module's documentation).
    pub mode: Option<String>,
    /// The trace to replay (a directory, or a name under `$HINDSIGHT_DIR`).
    pub trace: Option<String>,
    /// The program to record or debug.
    pub program: Option<String>,
    /// Its arguments.
    pub args: Vec<String>,
    /// The working directory of the program (and of hindsight).
    pub cwd: Option<String>,
    /// Where `record` writes its trace (default: a new one under `$HINDSIGHT_DIR`).
    pub trace_dir: Option<String>,
    /// Replay a child process of the trace (its recorded pid).
    pub process: Option<i32>,
    /// Stop at the start of `main` instead of running to the first breakpoint.
    pub stop_on_entry: bool,
    /// Pin hindsight and the program to one CPU (default true, as on the command line).
    pub pin: Option<bool>,
    /// The time slice of a recording, in milliseconds (`hindsight record --time-slice`).
    pub time_slice: Option<u64>,
    /// Do not show the replayed program's output.
    pub quiet: bool,
}

/// What the session is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A replay of a trace.
    Replay,
    /// Record, then replay.
    Record,
    /// A live program.
    Live,
}

impl LaunchArgs {
    /// The kind of session asked for.
    pub fn mode(&self) -> anyhow::Result<Mode> {
        match self.mode.as_deref() {
            Some("replay") => Ok(Mode::Replay),
            Some("record") => Ok(Mode::Record),
            Some("live") => Ok(Mode::Live),
            Some(other) => {
                bail!("unknown mode \"{other}\" (launch modes: \"replay\", \"record\", \"live\")")
            }
            None if self.program.is_some() => Ok(Mode::Record),
            None => Ok(Mode::Replay),
        }
    }

    fn program(&self) -> anyhow::Result<PathBuf> {
        match &self.program {
            Some(p) if !p.is_empty() => Ok(PathBuf::from(p)),
            _ => bail!(
                "\"program\" is required to {} (the program to run)",
                if self.mode().ok() == Some(Mode::Live) {
                    "debug live"
                } else {
                    "record"
                }
            ),
        }
    }
}

/// What starting a session tells the user on the way.
pub struct Started {
    /// The session, stopped before the program's first instruction.
    pub session: Session,
    /// Lines for the debug console (where the trace is, a program without symbols).
    pub notes: Vec<String>,
}

/// Starts the session a launch configuration asks for.
pub fn start(args: &LaunchArgs) -> anyhow::Result<Started> {
    if let Some(cwd) = &args.cwd {
        std::env::set_current_dir(cwd).with_context(|| format!("cwd {cwd}"))?;
    }
    let pin = args.pin.unwrap_or(true);
    let mut notes = Vec::new();
    let trace = match args.mode()? {
        Mode::Live => {
            let program = args.program()?;
            let argv: Vec<OsString> = args.args.iter().map(OsString::from).collect();
            let mut session = Session::start(&program, &argv, pin)?;
            // The pause button must stop a running program (there is no terminal ^C here).
            session.enable_live_pause();
            if session.lacks_debug_info() {
                notes.push(format!(
                    "(No debugging symbols found in {})",
                    session.program().display()
                ));
            }
            return Ok(Started { session, notes });
        }
        Mode::Record => {
            // The recorder takes SIGTERM, SIGHUP and SIGINT for itself, for the rest of the
            // process (the command line records once and exits); the adapter lives on, and an
            // editor stops it with SIGTERM.
            let _signals = KeptSignals::keep(&[libc::SIGTERM, libc::SIGHUP, libc::SIGINT]);
            let outcome =
                hindsight_cli::traces::record_trace(&hindsight_cli::traces::RecordCliOptions {
                    output: args.trace_dir.as_ref().map(PathBuf::from),
                    program: args.program()?,
                    args: args.args.iter().map(OsString::from).collect(),
                    pin,
                    time_slice_ms: args.time_slice.unwrap_or(50).max(1),
                    chaos: false,
                })?;
            match &outcome.incomplete {
                Some(why) => notes.push(format!(
                    "hindsight: the recording stopped: {why}; trace saved to {} (replayable up to there)",
                    outcome.trace.display()
                )),
                None => notes.push(format!(
                    "hindsight: trace saved to {}",
                    outcome.trace.display()
                )),
            }
            outcome.trace
        }
        Mode::Replay => {
            let root = hindsight_trace::default_root()?;
            hindsight_trace::resolve(&root, args.trace.as_deref())?
        }
    };
    notes.extend(hindsight_cli::cut_streams(&trace));
    let session = Session::start_replay(hindsight_replay::ReplayOptions {
        trace: trace.clone(),
        process: args.process,
        quiet: args.quiet,
        pin,
    })?;
    notes.push(format!(
        "hindsight: replaying {} ({})",
        trace.display(),
        session.program().display()
    ));
    if session.lacks_debug_info() {
        notes.push(format!(
            "(No debugging symbols found in {})",
            session.program().display()
        ));
    }
    Ok(Started { session, notes })
}

/// Signal dispositions saved, and put back when dropped.
struct KeptSignals(Vec<(libc::c_int, libc::sigaction)>);

impl KeptSignals {
    fn keep(signals: &[libc::c_int]) -> KeptSignals {
        KeptSignals(
            signals
                .iter()
                .map(|&sig| {
                    // SAFETY: reads the current disposition into a zeroed struct.
                    unsafe {
                        let mut old: libc::sigaction = std::mem::zeroed();
                        libc::sigaction(sig, std::ptr::null(), &mut old);
                        (sig, old)
                    }
                })
                .collect(),
        )
    }
}

impl Drop for KeptSignals {
    fn drop(&mut self) {
        for (sig, old) in &self.0 {
            // SAFETY: puts back a disposition read by `keep`.
            unsafe {
                libc::sigaction(*sig, old, std::ptr::null_mut());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_follows_what_is_given() {
        let mut a = LaunchArgs::default();
        assert_eq!(a.mode().expect("mode"), Mode::Replay);
        a.program = Some("/bin/true".into());
        assert_eq!(a.mode().expect("mode"), Mode::Record);
        a.mode = Some("live".into());
        assert_eq!(a.mode().expect("mode"), Mode::Live);
        a.mode = Some("fly".into());
        let e = a.mode().expect_err("unknown");
        assert!(e.to_string().contains("unknown mode \"fly\""), "{e}");
        let a = LaunchArgs {
            mode: Some("record".into()),
            ..Default::default()
        };
        let e = a.program().expect_err("no program");
        assert!(
            e.to_string().contains("\"program\" is required to record"),
            "{e}"
        );
    }
}
