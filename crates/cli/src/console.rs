//! The command line's own state beside the engine's session: where its text goes (the
//! terminal, or a buffer for a front end that runs hindsight commands for its user — the gdb
//! server's `monitor`, the DAP server's debug console), where `list` goes on, and what
//! happens during a motion (the [`Observer`] that shows threads, dprintf text and periodic
//! commands in gdb's words).
//!
//! Invariant: every line the command line shows goes through a [`Console`]; nothing in this
//! crate writes to the process's stdout or stderr directly except through one.

use std::cell::RefCell;
use std::io::Write;
use std::path::PathBuf;
use std::rc::Rc;

use hindsight_engine::{Notice, Observer, Session};

use crate::report::{self, PcShown};
use crate::source::SourceCache;

/// Text shown by a console that captures it (see [`Console::capturing`]).
#[derive(Debug, Clone, Default)]
pub struct Captured(Rc<RefCell<Vec<u8>>>);

impl Captured {
    /// Takes what was written so far.
    pub fn take(&self) -> String {
        let bytes = std::mem::take(&mut *self.0.borrow_mut());
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The command line's side of a session.
pub struct Console {
    out: Box<dyn Write>,
    err: Box<dyn Write>,
    pub(crate) sources: SourceCache,
    /// Where a bare `list` continues: (file, first line to show).
    pub(crate) list_next: Option<(PathBuf, u32)>,
    /// The line the last stop showed (where a first `list` centres, and the file of a bare
    /// line number).
    pub(crate) list_center: Option<(PathBuf, u32)>,
    /// Inside `step N`: plain step ends are not shown.
    pub(crate) quiet_steps: bool,
    /// `quit` was typed.
    pub(crate) quit: bool,
    /// `set breakpoint pending on|off|auto` (`None`: auto, gdb's question).
    pub(crate) breakpoint_pending: Option<bool>,
    /// `display` expressions, shown after every stop.
    pub(crate) displays: Vec<crate::commands::display::Display>,
    /// A motion's `[Switching to inferior …]`, held until the processes that appeared or
    /// ended before its stop are announced (gdb announces a fork before switching to its
    /// child); shown by [`Console::show_held`].
    held_switch: Option<String>,
}

/// The process's stdout, failing as `println!` fails (a panic that names it), which the
/// binary turns into one line and status 1 (a full disk); a closed pipe ends it by SIGPIPE
/// before the write returns.
struct Stdout;

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match std::io::stdout().write(buf) {
            Err(e) if e.kind() != std::io::ErrorKind::Interrupted => {
                panic!("failed printing to stdout: {e}")
            }
            r => r,
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match std::io::stdout().flush() {
            Err(e) => panic!("failed printing to stdout: {e}"),
            r => r,
        }
    }
}

impl Console {
    /// A console on the process's stdout and stderr.
    pub fn terminal() -> Console {
        Console::new(Box::new(Stdout), Box::new(std::io::stderr()))
    }

    /// A console whose output and errors both go to the returned buffer.
    pub fn capturing() -> (Console, Captured) {
        let buf = Captured::default();
        (
            Console::new(Box::new(buf.clone()), Box::new(buf.clone())),
            buf,
        )
    }

    fn new(out: Box<dyn Write>, err: Box<dyn Write>) -> Console {
        Console {
            out,
            err,
            sources: SourceCache::default(),
            list_next: None,
            list_center: None,
            quiet_steps: false,
            quit: false,
            breakpoint_pending: None,
            displays: Vec::new(),
            held_switch: None,
        }
    }

    /// Shows what a motion held back (see `held_switch`).
    pub(crate) fn show_held(&mut self) {
        if let Some(line) = self.held_switch.take() {
            self.println(&line);
        }
    }

    /// Shows `text` as it is.
    pub fn print(&mut self, text: &str) {
        let r = self
            .out
            .write_all(text.as_bytes())
            .and_then(|_| self.out.flush());
        written(r, "stdout");
    }

    /// Shows a line.
    pub fn println(&mut self, line: &str) {
        // One write with its newline: the program's own output (a live session shares the
        // terminal) cannot come between the line and its end.
        let mut text = String::with_capacity(line.len() + 1);
        text.push_str(line);
        text.push('\n');
        let r = self
            .out
            .write_all(text.as_bytes())
            .and_then(|_| self.out.flush());
        written(r, "stdout");
    }

    /// Shows an error line.
    pub fn eprintln(&mut self, line: &str) {
        // One write with its newline: the program's own output (a live session shares the
        // terminal) cannot come between the line and its end.
        let mut text = String::with_capacity(line.len() + 1);
        text.push_str(line);
        text.push('\n');
        let r = self
            .err
            .write_all(text.as_bytes())
            .and_then(|_| self.err.flush());
        written(r, "stderr");
    }

    /// True after `quit`.
    pub fn quit_requested(&self) -> bool {
        self.quit
    }

    /// The file a bare line number refers to: where the program last stopped.
    pub(crate) fn default_file(&self) -> Option<&std::path::Path> {
        self.list_center.as_ref().map(|(f, _)| f.as_path())
    }
}

/// Output that cannot be written fails as `println!` fails: a panic naming the stream, which
/// the binary turns into one line and status 1 (a session whose output went to a full disk
/// must not end as if it had shown everything). A closed pipe ends the process by SIGPIPE
/// before this.
fn written(r: std::io::Result<()>, stream: &str) {
    if let Err(e) = r {
        panic!("failed printing to {stream}: {e}");
    }
}

/// `say!(console, "format", args…)`: one line of output.
macro_rules! say {
    ($c:expr, $($arg:tt)*) => {
        $c.println(&format!($($arg)*))
    };
}
pub(crate) use say;

impl Observer for Console {
    fn notice(&mut self, notice: Notice) {
        match notice {
            Notice::NewThread { tid, pthread, .. } => {
                say!(self, "[New Thread {pthread:#x} (LWP {tid})]")
            }
            Notice::ThreadExited { tid, pthread, .. } => {
                say!(self, "[Thread {pthread:#x} (LWP {tid}) exited]")
            }
            Notice::SwitchedInferior { num, pid, program } => {
                self.show_held();
                self.held_switch = Some(format!(
                    "[Switching to inferior {num} [process {pid}] ({program})]"
                ));
            }
            Notice::Detached { pid } => {
                say!(self, "[Detaching after fork from child process {pid}]")
            }
            Notice::Exec { pid, path } => {
                say!(self, "process {pid} is executing new program: {path}")
            }
            Notice::Dprintf { text, .. } => self.print(&text),
            Notice::DprintfError { error, .. } => self.eprintln(&error),
            Notice::Finishing { frame, backward } => {
                let what = if backward {
                    "Run back to call of"
                } else {
                    "Run till exit from"
                };
                let line = report::frame_line(&frame, PcShown::IfMidLine);
                say!(self, "{what} #{}  {line}", frame.index);
            }
            Notice::SignalReceived { thread, signal } => {
                let (name, desc) = hindsight_engine::signals::signal_name(signal);
                match thread {
                    Some((num, tname)) => say!(
                        self,
                        "\nThread {num} \"{tname}\" received signal {name}, {desc}."
                    ),
                    None => say!(self, "\nProgram received signal {name}, {desc}."),
                }
            }
            Notice::ProgramOutput { fd, data, .. } => {
                // Where the replay writes the program's output itself.
                let (w, name) = match fd {
                    2 => (&mut self.err, "stderr"),
                    _ => (&mut self.out, "stdout"),
                };
                written(w.write_all(&data).and_then(|_| w.flush()), name);
            }
            Notice::SteppingOutOf { function } => say!(
                self,
                "Single stepping until exit from function {function},\nwhich has no line number information."
            ),
        }
    }

    fn run_commands(&mut self, session: &mut Session, commands: &[String]) {
        for c in commands {
            if let Err(e) = crate::commands::execute(session, self, c) {
                self.eprintln(&e.to_string());
            }
        }
    }
}
