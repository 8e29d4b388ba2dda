//! gdb's `monitor CMD`: the hindsight commands gdb has no word for (`when`, `goto`,
//! `bookmark`, `info checkpoints`…), run by the command line's interpreter with their text
//! captured for gdb's console (no process-wide output is redirected).
//!
//! Invariant: a command that would run or end the program behind gdb's back is refused —
//! gdb must do those itself, with its own breakpoints.

use hindsight_cli::console::{Captured, Console};
use hindsight_engine::Session;

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

/// The command line's state for `monitor` commands (its listing position, its value
/// history's display), kept across commands, with what they print captured.
pub struct Monitor {
    console: Console,
    captured: Captured,
}

impl Default for Monitor {
    fn default() -> Self {
        let (console, captured) = Console::capturing();
        Monitor { console, captured }
    }
}

impl Monitor {
    /// Runs a hindsight command and returns what it printed, errors included. Commands that
    /// gdb has words of its own for, which run or end the program (`continue`, `kill`…), are
    /// refused: gdb must do those.
    pub fn run(&mut self, s: &mut Session, command: &str) -> MonitorOutput {
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
        if let Some(refusal) = other_process(s, command) {
            return MonitorOutput {
                text: refusal,
                moved: false,
            };
        }
        let before = hindsight_engine::remote::instant(s);
        let r = hindsight_cli::commands::execute(s, &mut self.console, command);
        let mut text = self.captured.take();
        if let Err(e) = r {
            text.push_str(&format!("{e}\n"));
        }
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        if s.has_inferiors() && is_info_inferiors(command) {
            text.push_str(&served_alone(s));
        }
        let moved = hindsight_engine::remote::instant(s) != before;
        MonitorOutput { text, moved }
    }
}

/// What gdb's user is told of a trace of several processes: the server serves one.
pub fn served_alone(s: &Session) -> String {
    format!(
        "This gdb server serves process {} alone (gdb's multiprocess extensions are not \
         offered): to debug another process of the trace, serve it with --process PID; \
         'monitor info inferiors' and 'monitor info messages' show where the others stand \
         at this stop.\n",
        s.user_pid()
    )
}

/// `info inferiors` (gdb's abbreviations of both words).
fn is_info_inferiors(command: &str) -> bool {
    let mut words = command.split_whitespace();
    let (Some(a), Some(b)) = (words.next(), words.next()) else {
        return false;
    };
    ["i", "in", "inf", "info"].contains(&a) && b.len() >= 3 && "inferiors".starts_with(b)
}

/// The refusal of a command that would make another process of a replayed tree the one
/// served (`inferior N`, `thread N.M` of another inferior): gdb would go on with the other
/// process's threads and memory under the served one's name.
fn other_process(s: &Session, command: &str) -> Option<String> {
    let current = s.inferior_number()?;
    let mut words = command.split_whitespace();
    let word = words.next()?;
    let arg = words.next();
    let target = match word {
        "inferior" => arg.and_then(|a| a.parse::<u32>().ok()),
        "thread" | "t" => arg
            .and_then(|a| a.split_once('.'))
            .and_then(|(n, _)| n.parse::<u32>().ok()),
        _ => None,
    }?;
    (target != current).then(|| served_alone(s))
}

#[cfg(test)]
mod tests {
    use super::{gdb_own, is_info_inferiors};

    #[test]
    fn info_inferiors_in_gdbs_spellings() {
        assert!(is_info_inferiors("info inferiors"));
        assert!(is_info_inferiors("i inf"));
        assert!(!is_info_inferiors("info inferior-calls"));
        assert!(!is_info_inferiors("info threads"));
        assert!(!is_info_inferiors("inferior 2"));
    }

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
