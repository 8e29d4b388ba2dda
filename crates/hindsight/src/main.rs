//! The `hindsight` command: a thin layer that parses the command line and hands over to the
//! front end in `hindsight-cli`.

use std::ffi::OsString;
use std::process::ExitCode;

use hindsight_cli::DebugOptions;

const USAGE: &str = "\
usage: hindsight debug [--batch] [-q] [-ex CMD]... [-x FILE] [--no-pin] -- PROG [ARGS...]

Commands:
  debug   start PROG under the debugger, stopped before its first instruction

Options of debug:
  --batch      run the -ex/-x commands, then exit (the program is killed if still running)
  -ex CMD      execute CMD (gdb command syntax); may be repeated
  -x FILE      execute the commands in FILE
  -q           do not print the introduction
  --no-pin     do not pin hindsight and the program to one CPU";

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    match run(args) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("hindsight: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(args: Vec<OsString>) -> anyhow::Result<u8> {
    let mut it = args.into_iter();
    let Some(cmd) = it.next() else {
        eprintln!("{USAGE}");
        return Ok(2);
    };
    match cmd.to_str() {
        Some("debug") => {
            let opts = parse_debug(it.collect())?;
            hindsight_cli::run_debug(opts)
        }
        Some("help" | "--help" | "-h") => {
            println!("{USAGE}");
            Ok(0)
        }
        Some("--version" | "-V") => {
            println!("hindsight {}", env!("CARGO_PKG_VERSION"));
            Ok(0)
        }
        _ => anyhow::bail!(
            "unknown command '{}' (try 'hindsight help')",
            cmd.to_string_lossy()
        ),
    }
}

fn parse_debug(args: Vec<OsString>) -> anyhow::Result<DebugOptions> {
    let mut opts = DebugOptions::default();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.to_str() {
            Some("--batch" | "-batch") => opts.batch = true,
            Some("-q" | "--quiet" | "-quiet") => opts.quiet = true,
            Some("--no-pin") => opts.pin = false,
            Some("-ex" | "--ex" | "-eval-command" | "--eval-command") => {
                let c = it
                    .next()
                    .ok_or_else(|| anyhow::anyhow!("option -ex needs a command"))?;
                opts.commands.push(hindsight_cli::Script::Command(
                    c.to_string_lossy().into_owned(),
                ));
            }
            Some("-x" | "--command" | "-command") => {
                let f = it
                    .next()
                    .ok_or_else(|| anyhow::anyhow!("option -x needs a file"))?;
                opts.commands.push(hindsight_cli::Script::File(f.into()));
            }
            Some("--") => {
                let prog = it
                    .next()
                    .ok_or_else(|| anyhow::anyhow!("no program given after '--'"))?;
                opts.program = Some(prog.into());
                opts.args = it.collect();
                break;
            }
            Some(s) if s.starts_with('-') => {
                anyhow::bail!("unknown option '{s}' for debug (try 'hindsight help')")
            }
            _ => {
                opts.program = Some(a.into());
                opts.args = it.collect();
                break;
            }
        }
    }
    if opts.program.is_none() {
        anyhow::bail!("no program to debug (usage: hindsight debug [OPTIONS] -- PROG [ARGS...])");
    }
    Ok(opts)
}
