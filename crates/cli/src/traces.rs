//! The commands that work on traces rather than on a session: `record`, `ls`, `info`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use hindsight_trace::{ExitStatus, TraceReader};

/// Options of `hindsight record`.
#[derive(Debug, Clone)]
pub struct RecordCliOptions {
    /// `-o DIR`.
    pub output: Option<PathBuf>,
    /// The program as typed.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Pin hindsight and the program to one CPU.
    pub pin: bool,
    /// `--time-slice MS`: how long a thread runs without a syscall before another ready
    /// thread gets the turn.
    pub time_slice_ms: u64,
    /// `--chaos`: random time slices and thread choices (rr's chaos mode).
    pub chaos: bool,
}

/// The shell's convention: the exit code, or 128 + the signal that killed the program.
pub fn exit_code(status: &ExitStatus) -> u8 {
    match status {
        ExitStatus::Exited(c) => *c as u8,
        ExitStatus::Killed(s) => (128 + *s) as u8,
    }
}

/// Records the program into a new trace (under `$HINDSIGHT_DIR` as `PROG-N`, marked the
/// latest, unless `-o` names the directory); the program runs with hindsight's stdin, stdout
/// and stderr. Returns how the recording ended.
pub fn record_trace(opts: &RecordCliOptions) -> anyhow::Result<hindsight_record::Outcome> {
    let program = hindsight_engine::session::resolve_recordable(&opts.program)?;
    let (dir, root) = match &opts.output {
        Some(d) => (d.clone(), None),
        None => {
            let root = hindsight_trace::default_root()?;
            let name = program
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "trace".into());
            (hindsight_trace::new_trace_path(&root, &name)?, Some(root))
        }
    };
    if dir.exists() {
        anyhow::bail!(
            "{} already exists: a trace is never overwritten (choose another -o)",
            dir.display()
        );
    }
    let outcome = hindsight_record::record(&hindsight_record::RecordOptions {
        program,
        argv0: opts.program.clone().into_os_string(),
        args: opts.args.clone(),
        trace_dir: dir.clone(),
        // Copies shared with the traces in the usual place, wherever this one goes.
        shared_copies: hindsight_trace::default_root()
            .ok()
            .map(|r| r.join(hindsight_trace::copies::STORE)),
        pin: opts.pin,
        time_slice: Duration::from_millis(opts.time_slice_ms),
        chaos: opts.chaos,
    })
    .context("recording")?;
    if let Some(root) = root {
        hindsight_trace::set_latest(&root, &outcome.trace)?;
    }
    Ok(outcome)
}

/// Runs `hindsight record`: records the program and returns its exit status.
pub fn record(opts: RecordCliOptions) -> anyhow::Result<u8> {
    let outcome = record_trace(&opts)?;
    if let Some(reason) = &outcome.incomplete {
        eprintln!("hindsight: the recording stopped: {reason}");
        eprintln!(
            "hindsight: trace saved to {} (incomplete: replayable up to there)",
            outcome.trace.display()
        );
        return Ok(2);
    }
    eprintln!("hindsight: trace saved to {}", outcome.trace.display());
    Ok(exit_code(&outcome.exit))
}

fn status_text(s: Option<&ExitStatus>, incomplete: bool) -> String {
    match (s, incomplete) {
        (_, true) => "incomplete".into(),
        (Some(ExitStatus::Exited(c)), _) => format!("exit {c}"),
        (Some(ExitStatus::Killed(sig)), _) => {
            format!(
                "killed by {}",
                hindsight_replay::divergence::signal_name(*sig)
            )
        }
        (None, _) => "?".into(),
    }
}

fn size_text(bytes: u64) -> String {
    if bytes >= 10 << 20 {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 10 << 10 {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} B")
    }
}

fn date_text(unix: u64) -> String {
    // UTC, as `date -u` shows it: days since the epoch to a civil date.
    let days = (unix / 86400) as i64;
    let secs = unix % 86400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// Runs `hindsight ls`.
pub fn ls() -> anyhow::Result<u8> {
    let root = hindsight_trace::default_root()?;
    let traces = hindsight_trace::list(&root)?;
    if traces.is_empty() {
        println!(
            "No traces in {} (record one with 'hindsight record PROG').",
            root.display()
        );
        return Ok(0);
    }
    println!(
        "{:<24} {:<20} {:>9}  {:<14} PROGRAM",
        "TRACE", "DATE (UTC)", "SIZE", "EXIT"
    );
    for t in traces {
        let name = t
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match TraceReader::open(&t) {
            Ok(r) => {
                let h = r.header();
                println!(
                    "{:<24} {:<20} {:>9}  {:<14} {}",
                    name,
                    date_text(h.start_time),
                    size_text(r.size()),
                    status_text(r.summary().map(|s| &s.exit), r.incomplete().is_some()),
                    String::from_utf8_lossy(&h.program)
                );
            }
            Err(e) => println!("{name:<24} (unreadable: {e})"),
        }
    }
    Ok(0)
}

/// The happens-before of a trace's processes (None for a trace recorded before hindsight
/// wrote the links between them).
pub fn causality(r: &TraceReader) -> anyhow::Result<Option<hindsight_causal::Causality>> {
    let Some(links) = r.links()? else {
        return Ok(None);
    };
    Ok(Some(hindsight_causal::Causality::build(
        &links,
        r.processes(),
    )?))
}

/// Runs `hindsight info [--events] [--check] [--messages] [TRACE]`. Opening the trace checks
/// that every file is there with its size; `check` verifies every checksum and decodes every
/// event; `messages` lists the channels between processes and the messages matched on them.
pub fn info(name: Option<&str>, events: bool, check: bool, messages: bool) -> anyhow::Result<u8> {
    let root = hindsight_trace::default_root()?;
    let dir = hindsight_trace::resolve(&root, name)?;
    let r = TraceReader::open(&dir)?;
    print_info(&dir, &r)?;
    if !messages && r.processes().len() > 1 {
        println!("{}", messages_summary(&r));
    }
    if check {
        let c = r.check()?;
        let cut = if c.cut_off.is_empty() {
            String::new()
        } else {
            let pids: Vec<String> = c.cut_off.iter().map(|p| p.to_string()).collect();
            format!(
                "; the recording was cut off inside the last frame of process {}",
                pids.join(", ")
            )
        };
        println!(
            "Check:      whole: {} files ({}) match their checksums, {} events decoded{cut}",
            c.files,
            size_text(c.bytes),
            c.events
        );
    }
    if messages {
        match causality(&r)? {
            Some(c) => {
                for line in crate::messages::listing(&c) {
                    println!("{line}");
                }
            }
            None => println!(
                "Messages:   not recorded (this trace was made before hindsight followed \
                 messages between processes)"
            ),
        }
    }
    if events {
        for p in r.processes() {
            println!("Events of process {}:", p.pid);
            let mut stream = r.events(p.pid)?;
            loop {
                let i = stream.position();
                match stream.next_event()? {
                    Some(e) => println!("  {i:>6}  {}", event_line(&e)),
                    None => break,
                }
            }
            if stream.truncated() {
                println!("  (the stream is cut off here)");
            }
        }
    }
    Ok(0)
}

/// Where an asynchronous event landed, by the thread's ticks.
fn ticks_text(point: &hindsight_trace::AsyncPoint) -> String {
    match point.ticks {
        Some(t) => format!(" (tick {t})"),
        None => " (uncounted)".to_string(),
    }
}

/// One event in a line.
fn event_line(e: &hindsight_trace::Event) -> String {
    use hindsight_trace::Event;
    let what = hindsight_replay::divergence::describe_event(e);
    match e {
        Event::Syscall {
            tid,
            result,
            writes,
            ..
        } => {
            let bytes: usize = writes.iter().map(|w| w.data.len()).sum();
            format!(
                "[{tid}] {what} = {result:#x}{}",
                if bytes > 0 {
                    format!(" ({bytes} bytes written)")
                } else {
                    String::new()
                }
            )
        }
        Event::SyscallExit { tid, result, .. } => format!("[{tid}] {what} = {result:#x}"),
        Event::SyscallEntry { tid, .. } => format!("[{tid}] {what} (blocks)"),
        Event::Rdtsc { tid, tsc, .. } => format!("[{tid}] {what} = {tsc}"),
        Event::Preempt { tid, point } => format!("[{tid}] {what}{}", ticks_text(point)),
        Event::Signal {
            tid,
            point: hindsight_trace::SignalPoint::Async(point),
            ..
        } => format!("[{tid}] {what}{}", ticks_text(point)),
        Event::Buffered { tid, calls } => {
            // How many of each call, in the order each first appears.
            let mut counts: Vec<(&str, usize)> = Vec::new();
            for c in calls {
                let name = hindsight_syscalls::name(c.nr).unwrap_or("syscall");
                match counts.iter_mut().find(|(n, _)| *n == name) {
                    Some(e) => e.1 += 1,
                    None => counts.push((name, 1)),
                }
            }
            let list: Vec<String> = counts.iter().map(|(n, k)| format!("{n} ×{k}")).collect();
            format!(
                "[{tid}] {} buffered syscalls: {}",
                calls.len(),
                list.join(", ")
            )
        }
        Event::Output { pid, fd, data } => {
            format!("output of process {pid} to fd {fd}: {} bytes", data.len())
        }
        other => match other.tid() {
            Some(t) => format!("[{t}] {what}"),
            None => what,
        },
    }
}

/// The instruction counter the trace was recorded with, and for each module it copied, what
/// runs uncounted there (positions in that code are found by their registers instead).
fn print_counter(r: &TraceReader) {
    let header_clock = &r.header().clock;
    // The counter's name, then the agent's word when the recording used the agent.
    let mut words = header_clock.split_whitespace();
    let clock = words.next().unwrap_or("none");
    if let Some(agent) = words.next() {
        println!("Agent:      {agent} (the common syscalls ran inside the process, logged to its buffer)");
    }
    if clock != hindsight_ticks::CLOCK {
        println!(
            "Counter:    {} (recorded without this hindsight's instruction counter: positions \
             between events are found by registers and stack)",
            if clock == "none" { "none" } else { clock }
        );
        return;
    }
    println!("Counter:    {clock} (back edges, function entries and indirect jumps count ticks)");
    for l in &r.manifest().parts {
        let hindsight_trace::manifest::Part::Copy(id, name) = &l.part else {
            continue;
        };
        let Some(survey) = r
            .file_path(*id)
            .ok()
            .and_then(|p| std::fs::read(p).ok())
            .and_then(|b| hindsight_ticks::survey(&b))
        else {
            continue;
        };
        let shown = name.split_once('-').map(|(_, n)| n).unwrap_or(name);
        let left: usize = survey.uncounted.iter().map(|u| u.1).sum();
        let why: Vec<String> = survey
            .uncounted
            .iter()
            .map(|(w, n)| format!("{n}: {w}"))
            .collect();
        println!(
            "  {shown}: {} counted instructions patched, {left} uncounted{}",
            survey.patched,
            if why.is_empty() {
                String::new()
            } else {
                format!(" ({})", why.join("; "))
            }
        );
    }
}

/// One line on the messages between a trace's processes.
fn messages_summary(r: &TraceReader) -> String {
    match causality(r) {
        Ok(Some(c)) => format!(
            "Messages:   {} between the processes over {} channels ({}; --messages lists them)",
            c.messages().len(),
            c.channels().len(),
            crate::messages::NOT_FOLLOWED
        ),
        Ok(None) => "Messages:   not recorded (this trace was made before hindsight followed \
                     messages between processes)"
            .to_string(),
        Err(e) => format!("Messages:   unreadable ({e:#})"),
    }
}

fn print_info(dir: &Path, r: &TraceReader) -> anyhow::Result<()> {
    let h = r.header();
    let args: Vec<String> = h
        .args
        .iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    println!("Trace:      {}", dir.display());
    println!("Program:    {}", String::from_utf8_lossy(&h.program));
    println!("Arguments:  {}", args.join(" "));
    println!("Directory:  {}", String::from_utf8_lossy(&h.cwd));
    println!("Recorded:   {} UTC", date_text(h.start_time));
    match r.summary() {
        Some(s) => {
            println!("Exit:       {}", status_text(Some(&s.exit), false));
            println!(
                "Duration:   {:.3} s",
                Duration::from_nanos(s.duration_ns).as_secs_f64()
            );
            println!("Events:     {}", s.events);
            println!("Threads:    {}", s.threads);
        }
        None => println!(
            "Status:     incomplete{}",
            r.incomplete()
                .filter(|x| !x.is_empty())
                .map(|x| format!(" ({x})"))
                .unwrap_or_default()
        ),
    }
    let sizes = r.sizes();
    println!(
        "Size:       {} (events {}, copies of mapped files {}, {} of them shared with other traces)",
        size_text(sizes.total),
        size_text(sizes.total - sizes.copies),
        size_text(sizes.copies),
        size_text(sizes.shared)
    );
    print_counter(r);
    println!("Processes:  {}", r.processes().len());
    for p in r.processes() {
        let parent = p
            .parent
            .map(|pp| format!(", child of {pp}"))
            .unwrap_or_default();
        let args: Vec<String> = p
            .args
            .iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        println!(
            "  process {}{parent}: {} [{}] ({})",
            p.pid,
            String::from_utf8_lossy(&p.program),
            args.join(" "),
            status_text(r.process_end(p.pid), false)
        );
    }
    Ok(())
}
