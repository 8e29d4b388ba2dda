//! The command interpreter: gdb's command names, abbreviations and argument syntax.
//!
//! A command word may be abbreviated to any unique prefix (`cont`, `disas`…), and gdb's
//! predefined aliases win over prefix matching (`c`, `n`, `s`, `b`, `p`, `bt`…).

mod breakpoints;
mod data;
pub(crate) mod display;
mod inferiors;
mod running;
mod stack;
mod threads;
mod time;

use anyhow::bail;
use hindsight_engine::Session;

use crate::console::{say, Console};

type Handler = fn(&mut Session, &mut Console, &str, Option<&str>) -> anyhow::Result<()>;

/// (name, handler, one-line help). Order matters for ambiguous prefixes only through aliases.
const COMMANDS: &[(&str, Handler, &str)] = &[
    (
        "advance",
        running::advance,
        "Run until a location is reached",
    ),
    (
        "awatch",
        breakpoints::awatch,
        "Set an access (read/write) watchpoint on an expression",
    ),
    (
        "backtrace",
        stack::backtrace,
        "Print the stack of the selected thread",
    ),
    (
        "break",
        breakpoints::break_,
        "Set a breakpoint: break [LOCATION] [if CONDITION]",
    ),
    (
        "condition",
        breakpoints::condition,
        "condition N [EXPR]: stop only if EXPR is true",
    ),
    (
        "call",
        data::call,
        "call FUNCTION(ARGS): run a function of the program",
    ),
    ("continue", running::continue_, "Continue the program"),
    (
        "delete",
        breakpoints::delete,
        "Delete breakpoints (all, or the numbers given)",
    ),
    ("disable", breakpoints::disable, "Disable breakpoints"),
    (
        "display",
        display::display,
        "display[/FMT] EXPR: show EXPR after every stop",
    ),
    (
        "undisplay",
        display::undisplay,
        "undisplay [N...]: stop displaying expressions",
    ),
    (
        "disassemble",
        data::disassemble,
        "disassemble [/r /s] [LOCATION | START,END]: machine code",
    ),
    (
        "bookmark",
        time::bookmark,
        "bookmark [NAME]: name the current position",
    ),
    (
        "checkpoint",
        time::checkpoint,
        "Keep the current position as a numbered checkpoint",
    ),
    ("down", stack::down, "Select the frame called by this one"),
    (
        "dprintf",
        time::dprintf,
        "dprintf LOCATION,\"FORMAT\",ARGS: print there and go on",
    ),
    (
        "every",
        time::every,
        "every K [ticks [thread M]] COMMAND: run COMMAND every K events, or whenever thread M has counted a multiple of K ticks (replay)",
    ),
    (
        "era",
        time::era,
        "era NAME from BOUND [to BOUND]: name a span of the replay (BOUND: start, here, event N, tick N [thread M], a bookmark, a position); then goto era NAME [end], break LOCATION era NAME, watch EXPR era NAME",
    ),
    ("echo", data::echo, "Print text"),
    ("enable", breakpoints::enable, "Enable breakpoints"),
    (
        "finish",
        running::finish,
        "Run until the selected frame returns",
    ),
    ("frame", stack::frame, "Select and print a frame"),
    (
        "goto",
        time::goto,
        "goto POSITION | event N | tick N [thread M] | era NAME [end] | BOOKMARK | start: travel there (replay)",
    ),
    ("help", help, "Print this list"),
    (
        "ignore",
        breakpoints::ignore,
        "ignore N COUNT: pass breakpoint N COUNT times",
    ),
    (
        "info",
        info,
        "info breakpoints|registers|threads|locals|args|frame|sharedlibrary",
    ),
    (
        "inferior",
        inferiors::inferior,
        "inferior [N]: switch to process N of a replayed tree",
    ),
    ("kill", running::kill, "Kill the program"),
    ("list", data::list, "List source lines"),
    (
        "next",
        running::next,
        "Step over calls to the next source line",
    ),
    ("nexti", running::nexti, "Step one instruction, over calls"),
    (
        "output",
        data::output,
        "Print a value without history or newline",
    ),
    ("print", data::print, "print[/FMT] EXPR: evaluate and print"),
    (
        "printf",
        time::printf,
        "printf \"FORMAT\", ARGS: formatted output",
    ),
    (
        "ptype",
        data::ptype,
        "Print the definition of an expression's type or of a type",
    ),
    (
        "quit",
        running::quit,
        "Exit hindsight (killing the program)",
    ),
    (
        "run",
        running::run,
        "Let the program run (restart it after it ended)",
    ),
    (
        "restart",
        time::restart,
        "restart N: go back to checkpoint N (replay)",
    ),
    (
        "reverse-continue",
        time::reverse_continue,
        "Run backward to the previous breakpoint hit or watched change",
    ),
    (
        "reverse-finish",
        time::reverse_finish,
        "Run backward to the call of the selected frame",
    ),
    (
        "reverse-next",
        time::reverse_next,
        "Run backward to the previous line, over calls",
    ),
    (
        "reverse-nexti",
        time::reverse_nexti,
        "Run backward one instruction, over calls",
    ),
    (
        "reverse-step",
        time::reverse_step,
        "Run backward to the previous line, into calls",
    ),
    (
        "reverse-stepi",
        time::reverse_stepi,
        "Run backward one instruction",
    ),
    (
        "rwatch",
        breakpoints::rwatch,
        "Set a read watchpoint on an expression",
    ),
    ("set", data::set, "set var EXPR = VALUE"),
    (
        "handle",
        running::handle,
        "handle SIGNAL [no]stop [no]print [no]pass: what a signal does",
    ),
    ("start", running::start, "Run to the beginning of main"),
    (
        "step",
        running::step,
        "Step to the next source line, into calls",
    ),
    ("stepi", running::stepi, "Step one instruction"),
    ("tbreak", breakpoints::tbreak, "Set a temporary breakpoint"),
    ("thread", threads::thread, "thread N: select a thread"),
    (
        "until",
        running::until,
        "Run until a line past the current one (or LOCATION)",
    ),
    ("up", stack::up, "Select the frame that called this one"),
    (
        "watch",
        breakpoints::watch,
        "Set a watchpoint on an expression (stops on change)",
    ),
    ("whatis", data::whatis, "Print the type of an expression"),
    ("when", time::when, "Print the current position (replay)"),
    ("x", data::examine, "x/FMT ADDRESS: examine memory"),
];

/// gdb's predefined abbreviations.
const ALIASES: &[(&str, &str)] = &[
    ("b", "break"),
    ("br", "break"),
    ("bre", "break"),
    ("brea", "break"),
    ("bt", "backtrace"),
    ("where", "backtrace"),
    ("c", "continue"),
    ("cont", "continue"),
    ("fg", "continue"),
    ("d", "delete"),
    ("dis", "disable"),
    ("disa", "disable"),
    ("e", "enable"),
    ("en", "enable"),
    ("f", "frame"),
    ("fin", "finish"),
    ("i", "info"),
    ("inf", "info"),
    ("inspect", "print"),
    ("k", "kill"),
    ("l", "list"),
    ("n", "next"),
    ("ni", "nexti"),
    ("p", "print"),
    ("q", "quit"),
    ("exit", "quit"),
    ("r", "run"),
    ("s", "step"),
    ("si", "stepi"),
    ("tb", "tbreak"),
    ("t", "thread"),
    ("u", "until"),
    ("rc", "reverse-continue"),
    ("rs", "reverse-step"),
    ("rn", "reverse-next"),
    ("rsi", "reverse-stepi"),
    ("rni", "reverse-nexti"),
];

/// Splits `print/x foo` into ("print", Some("x"), "foo").
fn split_command(line: &str) -> (&str, Option<&str>, &str) {
    let line = line.trim();
    let end = line
        .find(|c: char| c.is_whitespace() || c == '/')
        .unwrap_or(line.len());
    let word = &line[..end];
    let rest = &line[end..];
    if let Some(after) = rest.strip_prefix('/') {
        let fend = after.find(char::is_whitespace).unwrap_or(after.len());
        return (word, Some(&after[..fend]), after[fend..].trim());
    }
    (word, None, rest.trim())
}

fn lookup(word: &str) -> anyhow::Result<Handler> {
    if let Some((_, full)) = ALIASES.iter().find(|(a, _)| *a == word) {
        return lookup(full);
    }
    if let Some((_, h, _)) = COMMANDS.iter().find(|(n, _, _)| *n == word) {
        return Ok(*h);
    }
    let matches: Vec<&(&str, Handler, &str)> = COMMANDS
        .iter()
        .filter(|(n, _, _)| n.starts_with(word))
        .collect();
    match matches.as_slice() {
        [(_, h, _)] => Ok(*h),
        [] => bail!("Undefined command: \"{word}\".  Try \"help\"."),
        many => {
            let names: Vec<&str> = many.iter().map(|(n, _, _)| *n).collect();
            bail!("Ambiguous command \"{word}\": {}.", names.join(", "))
        }
    }
}

/// Whether `line` starts with a command's name (an alias, or a unique prefix of one).
pub fn is_command(line: &str) -> bool {
    let (word, _, _) = split_command(line);
    !word.is_empty() && lookup(word).is_ok()
}

/// Executes one command line, its output and errors shown on `c` (the failure is also the
/// result, for the caller to show). Empty lines and `#` comments do nothing.
pub fn execute(s: &mut Session, c: &mut Console, line: &str) -> anyhow::Result<()> {
    let trimmed = line.trim();
    if trimmed.is_empty() || trimmed.starts_with('#') {
        return Ok(());
    }
    let (word, fmt, args) = split_command(trimmed);
    let handler = lookup(word)?;
    let r = handler(s, c, args, fmt);
    // (A motion that ended in an error still shows where it switched to.)
    c.show_held();
    r
}

/// The interactive prompt, with history and line editing; an empty line repeats the last
/// command, as in gdb.
pub fn repl(s: &mut Session, c: &mut Console) {
    let mut editor = match rustyline::DefaultEditor::new() {
        Ok(e) => e,
        Err(e) => {
            c.eprintln(&format!("hindsight: cannot start the prompt: {e}"));
            return;
        }
    };
    let history =
        std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".hindsight_history"));
    if let Some(h) = &history {
        let _ = editor.load_history(h);
    }
    let mut last = String::new();
    while !c.quit_requested() {
        match editor.readline("(hindsight) ") {
            Ok(line) => {
                let line = if line.trim().is_empty() {
                    last.clone()
                } else {
                    let _ = editor.add_history_entry(line.as_str());
                    last = line.clone();
                    line
                };
                // A ^C typed at the prompt is not meant for this command.
                s.interrupter().forget();
                if let Err(e) = execute(s, c, &line) {
                    c.eprintln(&e.to_string());
                }
            }
            Err(rustyline::error::ReadlineError::Interrupted) => say!(c, "Quit"),
            Err(_) => break,
        }
    }
    if let Some(h) = &history {
        let _ = editor.save_history(h);
    }
}

fn help(_: &mut Session, c: &mut Console, _: &str, _: Option<&str>) -> anyhow::Result<()> {
    say!(
        c,
        "List of commands (gdb's names; any unique prefix works):\n"
    );
    for (name, _, text) in COMMANDS {
        say!(c, "{name:<10} -- {text}");
    }
    Ok(())
}

/// `info SUBCOMMAND`.
fn info(s: &mut Session, c: &mut Console, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    let (sub, rest) = args.split_once(char::is_whitespace).unwrap_or((args, ""));
    const SUBS: &[&str] = &[
        "args",
        "all-registers",
        "bookmarks",
        "breakpoints",
        "checkpoints",
        "display",
        "eras",
        "events",
        "frame",
        "inferiors",
        "line",
        "locals",
        "messages",
        "registers",
        "sharedlibrary",
        "signals",
        "source",
        "threads",
        "watchpoints",
    ];
    let full = match sub {
        "" => bail!("List of info subcommands: {}", SUBS.join(", ")),
        "b" | "br" | "break" => "breakpoints",
        "r" | "reg" => "registers",
        "s" | "stack" => return stack::backtrace(s, c, rest, None),
        w => {
            let m: Vec<&'static str> = SUBS.iter().copied().filter(|n| n.starts_with(w)).collect();
            match m.as_slice() {
                [one] => *one,
                [] => bail!("Undefined info command: \"{w}\".  Try \"help info\"."),
                _ => bail!("Ambiguous info command \"{w}\"."),
            }
        }
    };
    match full {
        "args" => data::info_args(s, c),
        "breakpoints" => breakpoints::info_breakpoints(s, c, false),
        "watchpoints" => breakpoints::info_breakpoints(s, c, true),
        "registers" | "all-registers" => data::info_registers(s, c, rest.trim()),
        "threads" => threads::info_threads(s, c),
        "locals" => data::info_locals(s, c),
        "frame" => stack::info_frame(s, c),
        "line" => data::info_line(s, c, rest),
        "source" => data::info_source(s, c),
        "display" => display::info_display(s, c),
        "signals" | "handle" => running::info_signals(s, c, rest),
        "sharedlibrary" => data::info_sharedlibrary(s, c),
        "bookmarks" => time::info_bookmarks(s, c),
        "checkpoints" => time::info_checkpoints(s, c),
        "events" => time::info_events(s, c),
        "eras" => time::info_eras(s, c),
        "messages" => time::info_messages(s, c),
        "inferiors" => inferiors::info_inferiors(s, c),
        _ => bail!("Undefined info command: \"{sub}\"."),
    }
}
