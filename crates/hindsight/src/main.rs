//! The `hindsight` command: a thin layer that parses the command line and hands over to the
//! front end in `hindsight-cli`.

use std::ffi::OsString;
use std::process::ExitCode;

use hindsight_cli::DebugOptions;

const USAGE: &str = "\
usage: hindsight debug [--batch] [-q] [-ex CMD]... [-x FILE] [--no-pin] -- PROG [ARGS...]
       hindsight record [-o DIR] [--time-slice MS] [--no-pin] [--] PROG [ARGS...]
       hindsight replay [TRACE] [--process PID] [--batch] [-q] [-ex CMD]... [-x FILE]
       hindsight replay [TRACE] [--process PID] --gdbserver [HOST:]PORT | --gdb
       hindsight ls
       hindsight info [--events] [TRACE]
       hindsight dap [--port PORT]

Commands:
  debug   start PROG under the debugger, stopped before its first instruction
  record  run PROG and record it into a trace (exit status: PROG's)
  replay  debug a recorded run, as often as you like (default: the latest trace)
  ls      list the traces
  info    show a trace: program, processes, events, size (--events: every event)
  dap     serve the Debug Adapter Protocol to an editor (stdio; --port: TCP on 127.0.0.1)

Traces live under $HINDSIGHT_DIR (default ~/.local/share/hindsight); the newest is
`latest-trace`.

Options of debug and replay:
  --batch      run the -ex/-x commands, then exit (the program is killed if still running)
  -ex CMD      execute CMD (gdb command syntax); may be repeated
  -x FILE      execute the commands in FILE
  -q           do not print the introduction (replay: nor the program's output)
  --process P  replay: the recorded process P (see 'hindsight info')
  --gdbserver [HOST:]PORT
               replay: serve the replay to gdb (`target remote HOST:PORT`; 127.0.0.1 by default)
  --gdb        replay: start gdb connected to the replay, with the program's symbols
               (with either, -ex/-x commands run first: gdb finds the replay where they left it)
  --no-pin     do not pin hindsight and the program to one CPU

Options of record:
  -o DIR       save the trace in DIR (it must not exist)
  --time-slice MS
               a thread that runs MS milliseconds without a syscall while others are
               ready is preempted (default 50; doubles for a thread preempted again)";

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
        Some("record") => hindsight_cli::traces::record(parse_record(it.collect())?),
        Some("replay") => {
            let opts = parse_replay(it.collect())?;
            match opts.gdb.clone() {
                None => hindsight_cli::run_replay(opts),
                Some(mode) => {
                    let (mut session, _) = hindsight_cli::open_replay(&opts)?;
                    // -ex/-x: where the replay is when gdb first sees it.
                    hindsight_gdbserver::prepare(&mut session, &opts.session.commands)?;
                    let program = session.program().to_path_buf();
                    match mode {
                        hindsight_cli::GdbMode::Server(spec) => {
                            hindsight_gdbserver::serve(session, &spec, &program)
                        }
                        hindsight_cli::GdbMode::Launch => {
                            hindsight_gdbserver::serve_with_gdb(session, &program)
                        }
                    }
                }
            }
        }
        Some("ls") => {
            if let Some(extra) = it.next() {
                anyhow::bail!("ls takes no arguments (got '{}')", extra.to_string_lossy());
            }
            hindsight_cli::traces::ls()
        }
        Some("info") => {
            let mut name = None;
            let mut events = false;
            for a in it {
                match a.to_str() {
                    Some("--events") => events = true,
                    Some(s) if s.starts_with('-') => {
                        anyhow::bail!("unknown option '{s}' for info (try 'hindsight help')")
                    }
                    _ if name.is_some() => {
                        anyhow::bail!("info takes one trace (got also '{}')", a.to_string_lossy())
                    }
                    _ => name = Some(a.to_string_lossy().into_owned()),
                }
            }
            hindsight_cli::traces::info(name.as_deref(), events)
        }
        Some("dap") => {
            let mut port = None;
            let mut it = it;
            while let Some(a) = it.next() {
                match a.to_str() {
                    Some("--port") => {
                        let p = it
                            .next()
                            .ok_or_else(|| anyhow::anyhow!("option --port needs a port number"))?;
                        let p = p.to_string_lossy();
                        port = Some(p.parse::<u16>().map_err(|_| {
                            anyhow::anyhow!("--port wants a port number (0 to 65535), not '{p}'")
                        })?);
                    }
                    _ => anyhow::bail!(
                        "unknown argument '{}' for dap (usage: hindsight dap [--port PORT])",
                        a.to_string_lossy()
                    ),
                }
            }
            match port {
                None => hindsight_dap::run_stdio(),
                Some(p) => hindsight_dap::run_tcp(p, || false),
            }
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

fn parse_record(args: Vec<OsString>) -> anyhow::Result<hindsight_cli::traces::RecordCliOptions> {
    let mut output = None;
    let mut pin = true;
    let mut time_slice_ms = 50;
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.to_str() {
            Some("-o" | "--output") => {
                let d = it
                    .next()
                    .ok_or_else(|| anyhow::anyhow!("option -o needs a directory"))?;
                output = Some(d.into());
            }
            Some("--no-pin") => pin = false,
            Some("--time-slice") => {
                let ms = it
                    .next()
                    .ok_or_else(|| anyhow::anyhow!("option --time-slice needs milliseconds"))?;
                let ms = ms.to_string_lossy();
                time_slice_ms = match ms.parse::<u64>() {
                    Ok(n) if n > 0 => n,
                    _ => anyhow::bail!(
                        "--time-slice wants a positive number of milliseconds, not '{ms}'"
                    ),
                };
            }
            Some("--") => {
                let prog = it
                    .next()
                    .ok_or_else(|| anyhow::anyhow!("no program given after '--'"))?;
                return Ok(hindsight_cli::traces::RecordCliOptions {
                    output,
                    program: prog.into(),
                    args: it.collect(),
                    pin,
                    time_slice_ms,
                });
            }
            Some(s) if s.starts_with('-') => {
                anyhow::bail!("unknown option '{s}' for record (try 'hindsight help')")
            }
            _ => {
                return Ok(hindsight_cli::traces::RecordCliOptions {
                    output,
                    program: a.into(),
                    args: it.collect(),
                    pin,
                    time_slice_ms,
                })
            }
        }
    }
    anyhow::bail!("no program to record (usage: hindsight record [-o DIR] [--] PROG [ARGS...])")
}

fn parse_replay(args: Vec<OsString>) -> anyhow::Result<hindsight_cli::ReplayCliOptions> {
    let mut opts = hindsight_cli::ReplayCliOptions::default();
    let mut rest = Vec::new();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.to_str() {
            Some("--gdbserver") => {
                let spec = it.next().ok_or_else(|| {
                    anyhow::anyhow!("option --gdbserver needs [HOST:]PORT (e.g. --gdbserver 9999)")
                })?;
                if opts.gdb.is_some() {
                    anyhow::bail!("--gdbserver and --gdb go alone (one gdb front end at a time)");
                }
                opts.gdb = Some(hindsight_cli::GdbMode::Server(
                    spec.to_string_lossy().into_owned(),
                ));
            }
            Some("--gdb") => {
                if opts.gdb.is_some() {
                    anyhow::bail!("--gdbserver and --gdb go alone (one gdb front end at a time)");
                }
                opts.gdb = Some(hindsight_cli::GdbMode::Launch);
            }
            Some("--process" | "-p") => {
                let p = it
                    .next()
                    .ok_or_else(|| anyhow::anyhow!("option --process needs a process id"))?;
                let pid = p.to_str().and_then(|s| s.parse().ok()).ok_or_else(|| {
                    anyhow::anyhow!("--process: '{}' is not a process id", p.to_string_lossy())
                })?;
                opts.process = Some(pid);
            }
            Some(
                "-ex" | "--ex" | "-eval-command" | "--eval-command" | "-x" | "--command"
                | "-command",
            ) => {
                rest.push(a);
                if let Some(v) = it.next() {
                    rest.push(v);
                }
            }
            Some(s) if s.starts_with('-') => rest.push(a),
            _ => {
                if opts.trace.is_some() {
                    anyhow::bail!(
                        "replay takes one trace (got also '{}')",
                        a.to_string_lossy()
                    );
                }
                opts.trace = Some(a.to_string_lossy().into_owned());
            }
        }
    }
    // The session options are those of debug (with no program).
    rest.push("--".into());
    rest.push("-".into());
    let mut session = parse_debug(rest)?;
    session.program = None;
    if opts.gdb.is_some() && session.batch {
        anyhow::bail!(
            "--batch is for the command line; with --gdbserver or --gdb, gdb runs the session"
        );
    }
    opts.session = session;
    Ok(opts)
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
