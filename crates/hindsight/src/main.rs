//! The `hindsight` command: a thin layer that parses the command line (with `clap`) and hands
//! over to the front ends in `hindsight-cli`, `hindsight-gdbserver` and `hindsight-dap`.
//!
//! gdb's own spellings stay accepted (`-ex CMD`, `-batch`, `-quiet`, `-eval-command`,
//! `-command`): clap only knows one-letter short options, so [`gdb_spellings`] rewrites those
//! to their `--` forms before parsing, never touching the program's own arguments. `-ex` and
//! `-x` run in the order they were given, which clap keeps as argument indices.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use hindsight_cli::{DebugOptions, GdbMode, ReplayCliOptions, Script};

/// A time-travel debugger for Linux x86-64: record a run, then debug it forwards and
/// backwards with gdb's commands.
#[derive(Parser, Debug)]
#[command(
    name = "hindsight",
    version,
    arg_required_else_help = true,
    subcommand_required = true,
    after_help = "Traces live under $HINDSIGHT_DIR (default ~/.local/share/hindsight); the \
                  newest is `latest-trace`.\n'hindsight COMMAND --help' shows a command's options."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Start PROG under the debugger, stopped before its first instruction.
    Debug(DebugArgs),
    /// Run PROG and record it into a trace (exit status: PROG's).
    Record(RecordArgs),
    /// Debug a recorded run, as often as you like (default: the latest trace).
    Replay(ReplayArgs),
    /// List the traces.
    Ls,
    /// Show a trace: program, processes, events, size.
    Info(InfoArgs),
    /// Serve the Debug Adapter Protocol to an editor (VS Code, nvim-dap, Helix…), with
    /// reverse debugging.
    Dap(DapArgs),
    /// Print a completion script for SHELL (bash, zsh, fish, elvish, powershell).
    #[command(
        after_help = "For example: hindsight completions bash > ~/.local/share/bash-completion/completions/hindsight"
    )]
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// The options of a debugging session, shared by `debug` and `replay`.
#[derive(Args, Debug)]
struct SessionArgs {
    /// Run the -ex/-x commands, then exit (the program is killed if still running).
    #[arg(long)]
    batch: bool,
    /// Do not print the introduction (replay: nor the program's output).
    #[arg(short, long, alias = "silent")]
    quiet: bool,
    /// Execute CMD (gdb command syntax); may be repeated (also spelled -ex, as in gdb).
    #[arg(long = "ex", value_name = "CMD", visible_alias = "eval-command")]
    ex: Vec<String>,
    /// Execute the commands in FILE; may be repeated.
    #[arg(short = 'x', long = "command", value_name = "FILE")]
    command: Vec<PathBuf>,
    /// Do not pin hindsight and the program to one CPU.
    #[arg(long)]
    no_pin: bool,
}

#[derive(Args, Debug)]
#[command(
    override_usage = "hindsight debug [OPTIONS] [--] PROG [ARGS]...",
    after_help = "Without --batch a prompt follows the -ex/-x commands; the exit status is 1 \
                  if any of them failed."
)]
struct DebugArgs {
    #[command(flatten)]
    session: SessionArgs,
    /// The program, then its arguments.
    #[arg(
        value_name = "PROG",
        required = true,
        num_args = 1..,
        trailing_var_arg = true
    )]
    program: Vec<OsString>,
}

#[derive(Args, Debug)]
#[command(override_usage = "hindsight record [OPTIONS] [--] PROG [ARGS]...")]
struct RecordArgs {
    /// Save the trace in DIR (it must not exist).
    #[arg(short, long, value_name = "DIR")]
    output: Option<PathBuf>,
    /// A thread that runs MS milliseconds without a syscall while others are ready is
    /// preempted (doubles for a thread preempted again in code that does not count ticks).
    #[arg(
        long,
        value_name = "MS",
        default_value_t = 50,
        value_parser = positive_ms
    )]
    time_slice: u64,
    /// Chaos mode (as rr's): random time slices and a random ready thread at each turn, so
    /// that thread orders rare in a normal run show up; the recording replays as exactly.
    #[arg(long)]
    chaos: bool,
    /// Do not pin hindsight and the program to one CPU.
    #[arg(long)]
    no_pin: bool,
    /// The program, then its arguments.
    #[arg(
        value_name = "PROG",
        required = true,
        num_args = 1..,
        trailing_var_arg = true
    )]
    program: Vec<OsString>,
}

#[derive(Args, Debug)]
#[command(
    after_help = "With --gdbserver or --gdb the -ex/-x commands run first: gdb finds the \
                  replay where they left it."
)]
struct ReplayArgs {
    /// The trace: a directory, or a name under $HINDSIGHT_DIR (default: latest-trace).
    #[arg(value_name = "TRACE")]
    trace: Option<String>,
    /// Replay the recorded process PID (see 'hindsight info').
    #[arg(short, long, value_name = "PID")]
    process: Option<i32>,
    /// Serve the replay to gdb (`target remote HOST:PORT`; 127.0.0.1 by default).
    #[arg(long, value_name = "[HOST:]PORT", conflicts_with = "gdb")]
    gdbserver: Option<String>,
    /// Start gdb connected to the replay, with the program's symbols.
    #[arg(long)]
    gdb: bool,
    #[command(flatten)]
    session: SessionArgs,
}

#[derive(Args, Debug)]
struct InfoArgs {
    /// List every event.
    #[arg(long)]
    events: bool,
    /// Verify every file's checksum and decode every event.
    #[arg(long)]
    check: bool,
    /// List the channels between the recorded processes and the messages that went
    /// through them.
    #[arg(long)]
    messages: bool,
    /// The trace (default: latest-trace).
    #[arg(value_name = "TRACE")]
    trace: Option<String>,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Over stdio (the default) the editor starts `hindsight dap` itself; with --port \
                  it connects to 127.0.0.1:PORT (0: a free port, said on stderr), one client \
                  after another. The launch configuration says what to debug: a trace, a \
                  program to record then replay, or a program to debug live."
)]
struct DapArgs {
    /// Listen on TCP 127.0.0.1:PORT instead of speaking on stdin/stdout.
    #[arg(long, value_name = "PORT")]
    port: Option<u16>,
}

/// `--time-slice`: a positive number of milliseconds.
fn positive_ms(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err("wants a positive number of milliseconds".to_string()),
    }
}

fn main() -> ExitCode {
    end_on_output_errors();
    let args: Vec<OsString> = std::env::args_os().collect();
    let (cli, matches) = match parse(args) {
        Ok(parsed) => parsed,
        Err(code) => return ExitCode::from(code),
    };
    match run(cli, &matches) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("hindsight: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Output that cannot be written ends hindsight as it ends a filter: a closed pipe
/// (`hindsight info --events | head`) by SIGPIPE, quietly, as gdb's output does; any other
/// failure (a full disk) with one line saying so and status 1. The front ends print with
/// `println!`, whose failure is a panic: it is turned into that line here, before anything
/// unwinds (the program under hindsight dies with it, as on any exit of hindsight).
fn end_on_output_errors() {
    // SAFETY: restores the default disposition, which the Rust runtime had set to ignore.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let msg = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if let Some(what) = msg.strip_prefix("failed printing to ") {
            let line = format!("hindsight: cannot write to {what}\n");
            // SAFETY: a plain write of our own buffer; stderr may be what failed: ignored.
            unsafe {
                libc::write(2, line.as_ptr().cast(), line.len());
            }
            std::process::exit(1);
        }
        default(info);
    }));
}

/// Parses the command line. Help and version go to stdout (status 0); a mistake is one line
/// on stderr that names the subcommand (status 2).
fn parse(args: Vec<OsString>) -> Result<(Cli, ArgMatches), u8> {
    let args = gdb_spellings(args);
    let sub = args
        .get(1)
        .and_then(|a| a.to_str())
        .filter(|s| Cli::command().find_subcommand(s).is_some())
        .map(str::to_string);
    let result = Cli::command()
        .try_get_matches_from(args)
        .and_then(|m| Ok((Cli::from_arg_matches(&m)?, m)));
    result.map_err(|e| {
        use clap::error::ErrorKind;
        match e.kind() {
            ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                let _ = e.print();
                e.exit_code() as u8
            }
            _ => {
                eprintln!("{}", one_line(&e, sub.as_deref()));
                2
            }
        }
    })
}

/// clap's error as one line: its first paragraph, then where to read more.
fn one_line(e: &clap::Error, sub: Option<&str>) -> String {
    let text = e.render().to_string();
    let first: Vec<&str> = text
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect();
    let what = first.join(" ");
    let what = what.strip_prefix("error: ").unwrap_or(&what);
    match sub {
        Some(s) => format!("hindsight {s}: {what} (try 'hindsight {s} --help')"),
        None => format!("hindsight: {what} (try 'hindsight --help')"),
    }
}

/// Rewrites gdb's single-dash long options of `debug` and `replay` to their `--` forms, up
/// to the program (whose arguments are its own).
fn gdb_spellings(args: Vec<OsString>) -> Vec<OsString> {
    let sub = args.get(1).and_then(|a| a.to_str()).map(str::to_string);
    if !matches!(sub.as_deref(), Some("debug" | "replay")) {
        return args;
    }
    // Options of debug and replay that take a value (the value is never rewritten).
    const WITH_VALUE: [&str; 6] = [
        "--ex",
        "--eval-command",
        "-x",
        "--command",
        "-p",
        "--process",
    ];
    let mut out = Vec::with_capacity(args.len());
    let mut it = args.into_iter();
    out.extend(it.by_ref().take(2));
    while let Some(a) = it.next() {
        let s = a.to_str().unwrap_or("").to_string();
        let s = s.as_str();
        let rewritten = match s {
            "-ex" | "-eval-command" | "-batch" | "-quiet" | "-command" => Some(format!("-{s}")),
            _ => None,
        };
        let spelled = rewritten.as_deref().unwrap_or(s).to_string();
        let takes_value = WITH_VALUE.contains(&spelled.as_str()) || spelled == "--gdbserver";
        out.push(rewritten.map(OsString::from).unwrap_or(a));
        if s == "--" {
            break;
        }
        if takes_value {
            out.extend(it.next());
        } else if !s.starts_with('-') && sub.as_deref() == Some("debug") {
            // The program: everything after it is its own.
            break;
        }
    }
    out.extend(it);
    out
}

/// `-ex` and `-x` in the order they were given.
fn scripts(session: &SessionArgs, m: &ArgMatches) -> Vec<Script> {
    let at =
        |id: &str| -> Vec<usize> { m.indices_of(id).map(Iterator::collect).unwrap_or_default() };
    let mut all: Vec<(usize, Script)> = at("ex")
        .into_iter()
        .zip(&session.ex)
        .map(|(i, c)| (i, Script::Command(c.clone())))
        .chain(
            at("command")
                .into_iter()
                .zip(&session.command)
                .map(|(i, f)| (i, Script::File(f.clone()))),
        )
        .collect();
    all.sort_by_key(|(i, _)| *i);
    all.into_iter().map(|(_, s)| s).collect()
}

fn session_options(session: &SessionArgs, m: &ArgMatches) -> DebugOptions {
    DebugOptions {
        batch: session.batch,
        quiet: session.quiet,
        pin: !session.no_pin,
        commands: scripts(session, m),
        program: None,
        args: Vec::new(),
    }
}

fn run(cli: Cli, matches: &ArgMatches) -> anyhow::Result<u8> {
    let sub = matches.subcommand().map(|(_, m)| m);
    match cli.command {
        Command::Debug(a) => {
            let mut opts = session_options(&a.session, sub.unwrap_or(matches));
            let mut program = a.program.into_iter();
            opts.program = program.next().map(PathBuf::from);
            opts.args = program.collect();
            hindsight_cli::run_debug(opts)
        }
        Command::Record(a) => {
            let mut program = a.program.into_iter();
            let Some(prog) = program.next() else {
                anyhow::bail!("no program to record");
            };
            hindsight_cli::traces::record(hindsight_cli::traces::RecordCliOptions {
                output: a.output,
                program: prog.into(),
                args: program.collect(),
                pin: !a.no_pin,
                time_slice_ms: a.time_slice,
                chaos: a.chaos,
            })
        }
        Command::Replay(a) => {
            let session = session_options(&a.session, sub.unwrap_or(matches));
            let gdb = match (a.gdbserver, a.gdb) {
                (Some(spec), _) => Some(GdbMode::Server(spec)),
                (None, true) => Some(GdbMode::Launch),
                (None, false) => None,
            };
            if gdb.is_some() && session.batch {
                anyhow::bail!(
                    "--batch is for the command line; with --gdbserver or --gdb, gdb runs the \
                     session"
                );
            }
            let opts = ReplayCliOptions {
                trace: a.trace,
                process: a.process,
                session,
                gdb,
            };
            match opts.gdb.clone() {
                None => hindsight_cli::run_replay(opts),
                Some(mode) => {
                    let (mut session, _) = hindsight_cli::open_replay(&opts)?;
                    // -ex/-x: where the replay is when gdb first sees it.
                    hindsight_gdbserver::prepare(&mut session, &opts.session.commands)?;
                    let program = session.program().to_path_buf();
                    match mode {
                        GdbMode::Server(spec) => {
                            hindsight_gdbserver::serve(session, &spec, &program)
                        }
                        GdbMode::Launch => hindsight_gdbserver::serve_with_gdb(session, &program),
                    }
                }
            }
        }
        Command::Ls => hindsight_cli::traces::ls(),
        Command::Dap(a) => match a.port {
            None => hindsight_dap::run_stdio(),
            Some(p) => hindsight_dap::run_tcp(p, || false),
        },
        Command::Info(a) => {
            hindsight_cli::traces::info(a.trace.as_deref(), a.events, a.check, a.messages)
        }
        Command::Completions { shell } => {
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "hindsight",
                &mut std::io::stdout(),
            );
            Ok(0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Vec<OsString> {
        std::iter::once("hindsight")
            .chain(v.iter().copied())
            .map(OsString::from)
            .collect()
    }

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn gdb_spellings_stop_at_the_program() {
        let got = gdb_spellings(args(&[
            "debug", "-batch", "-ex", "-ex", "prog", "-ex", "-batch",
        ]));
        assert_eq!(
            got,
            args(&["debug", "--batch", "--ex", "-ex", "prog", "-ex", "-batch"])
        );
        let got = gdb_spellings(args(&["replay", "t", "-ex", "c", "-batch", "-quiet"]));
        assert_eq!(
            got,
            args(&["replay", "t", "--ex", "c", "--batch", "--quiet"])
        );
        let got = gdb_spellings(args(&["record", "-ex", "prog"]));
        assert_eq!(got, args(&["record", "-ex", "prog"]));
    }

    #[test]
    fn scripts_keep_their_order() {
        let (cli, m) = parse(args(&[
            "debug", "-x", "a", "-ex", "b", "-x", "c", "--", "p", "-x",
        ]))
        .expect("parses");
        let Command::Debug(d) = cli.command else {
            panic!("not debug")
        };
        let (_, sub) = m.subcommand().expect("subcommand");
        let s: Vec<String> = scripts(&d.session, sub)
            .into_iter()
            .map(|s| match s {
                Script::Command(c) => format!("ex:{c}"),
                Script::File(f) => format!("x:{}", f.display()),
            })
            .collect();
        assert_eq!(s, ["x:a", "ex:b", "x:c"]);
        assert_eq!(d.program, args(&["p", "-x"])[1..]);
    }
}
