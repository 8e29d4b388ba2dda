//! Recorders that are killed, terminated or interrupted: the trace keeps what happened.

mod common;

use std::io::BufRead as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::*;

/// A recording of `ticker COUNT [int]` running in a process group of its own (hindsight and
/// the program), its stdout read line by line as it comes.
struct Recording {
    child: std::process::Child,
    trace: PathBuf,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Recording {
    fn start(tag: &str, args: &[&str]) -> Recording {
        let prog = compile("ticker", &[]);
        let trace = scratch().join(format!("killed-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&trace);
        let mut child = Command::new(env!("CARGO_BIN_EXE_hindsight"))
            .arg("record")
            .arg("-o")
            .arg(&trace)
            .arg("--")
            .arg(&prog)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("hindsight runs");
        let out = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for l in std::io::BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        Recording {
            child,
            trace,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits until the program has printed `n` lines.
    fn wait_lines(&mut self, n: usize) {
        let deadline = Instant::now() + TIMEOUT;
        while self.seen.len() < n {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) => self.seen.push(l),
                Err(_) => panic!("the program printed only {:?}", self.seen),
            }
        }
    }

    /// Sends `sig` to hindsight (`group`: to its whole process group, as a terminal does).
    fn signal(&self, sig: i32, group: bool) {
        let pid = self.child.id() as i32;
        // SAFETY: kill of our own child (or its process group, which it leads).
        unsafe {
            libc::kill(if group { -pid } else { pid }, sig);
        }
    }

    /// Waits for hindsight to end: its exit status (-1: killed) and stderr.
    fn finish(mut self) -> (i32, String, Vec<String>, PathBuf) {
        let deadline = Instant::now() + TIMEOUT;
        let status = loop {
            if let Some(st) = self.child.try_wait().expect("wait") {
                break st;
            }
            if Instant::now() > deadline {
                self.signal(libc::SIGKILL, true);
                panic!("hindsight record did not end");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        // The program dies with hindsight (PTRACE_O_EXITKILL); its pipe closes.
        while let Ok(l) = self.lines.recv_timeout(Duration::from_secs(10)) {
            self.seen.push(l);
        }
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut err);
        }
        (status.code().unwrap_or(-1), err, self.seen, self.trace)
    }
}

/// The program's lines in a replay of `trace` run to its end.
fn replayed_lines(trace: &Path) -> Run {
    let r = hindsight(&[
        "replay".as_ref(),
        trace.as_os_str(),
        "--batch".as_ref(),
        "-ex".as_ref(),
        "continue".as_ref(),
    ]);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    r
}

fn ticks(r: &Run) -> Vec<&str> {
    r.stdout
        .lines()
        .filter(|l| l.starts_with("tick ") || l.starts_with("interrupted") || *l == "done")
        .collect()
}

fn info(trace: &Path) -> Run {
    let r = hindsight(&["info".as_ref(), trace.as_os_str()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    r
}

#[test]
fn after_sigkill_the_trace_replays_what_was_recorded_up_to_a_second_before() {
    let mut rec = Recording::start("kill", &["400"]);
    rec.wait_lines(5);
    // Everything printed until now was recorded more than the flush period ago when the
    // recorder dies (2.5 s later, the program printing all the while).
    let before: Vec<String> = rec.seen.clone();
    std::thread::sleep(Duration::from_millis(2500));
    rec.signal(libc::SIGKILL, false);
    let (code, _, printed, trace) = rec.finish();
    assert_eq!(code, -1, "hindsight was killed");
    assert!(printed.len() >= before.len() + 10, "{printed:?}");
    info(&trace).line(
        "Status:     incomplete (the recorder was stopped before it could end the recording)",
    );
    let r = replayed_lines(&trace);
    let got = ticks(&r);
    assert!(
        got.len() >= before.len() + 10 && got.len() <= printed.len(),
        "replayed {} lines of the {} printed: {}\n{}",
        got.len(),
        printed.len(),
        r.stdout,
        r.stderr
    );
    assert_eq!(got[..], printed[..got.len()]);
    r.line("No more reverse-execution history (the recording was cut short: the recorder was stopped before it could end the recording).");
    // The trace checks out as it is: a cut-off recording, not a damaged one.
    let c = hindsight(&["info".as_ref(), "--check".as_ref(), trace.as_os_str()]);
    assert_eq!(c.code, 0, "{}", c.stderr);
}

#[test]
fn sigterm_and_sighup_end_the_recording_cleanly() {
    for (sig, name) in [(libc::SIGTERM, "SIGTERM"), (libc::SIGHUP, "SIGHUP")] {
        let mut rec = Recording::start(name, &["400"]);
        rec.wait_lines(5);
        rec.signal(sig, false);
        let (code, err, printed, trace) = rec.finish();
        assert_eq!(code, 2, "{err}");
        let reason = format!(
            "the recorder received {name}: the recording ends there (the program was killed)"
        );
        assert!(
            err.contains(&format!("hindsight: the recording stopped: {reason}")),
            "{err}"
        );
        info(&trace).line(&format!("Status:     incomplete ({reason})"));
        // Nothing lost: every line the program printed is replayed.
        let r = replayed_lines(&trace);
        assert_eq!(ticks(&r), printed, "{}\n{}", r.stdout, r.stderr);
        r.line(&format!(
            "No more reverse-execution history (the recording was cut short: {reason})."
        ));
        let c = hindsight(&["info".as_ref(), "--check".as_ref(), trace.as_os_str()]);
        assert_eq!(c.code, 0, "{}", c.stderr);
    }
}

#[test]
fn ctrl_c_reaches_the_program_and_is_recorded() {
    let mut rec = Recording::start("ctrlc", &["400", "int"]);
    rec.wait_lines(3);
    // What the terminal does on ^C: SIGINT to the foreground process group.
    rec.signal(libc::SIGINT, true);
    let (code, err, printed, trace) = rec.finish();
    // The program handled it and exited with 3, as it does without hindsight.
    assert_eq!(code, 3, "{err}");
    assert!(printed
        .last()
        .is_some_and(|l| l.starts_with("interrupted after tick")));
    assert!(err.contains("hindsight: trace saved to"), "{err}");
    info(&trace).line("Exit:       exit 3");
    // Replay: gdb stops at the SIGINT, then the handler runs as recorded.
    let r = hindsight(&[
        "replay".as_ref(),
        trace.as_os_str(),
        "--batch".as_ref(),
        "-ex".as_ref(),
        "continue".as_ref(),
        "-ex".as_ref(),
        "continue".as_ref(),
    ]);
    r.line("Program received signal SIGINT, Interrupt.")
        .line("[Inferior 1 (process {n}) exited with code 03]");
    assert_eq!(ticks(&r), printed);
}

#[test]
fn sigint_to_the_recorder_alone_is_ignored() {
    let mut rec = Recording::start("int-alone", &["30"]);
    rec.wait_lines(3);
    rec.signal(libc::SIGINT, false);
    let (code, err, printed, trace) = rec.finish();
    assert_eq!(code, 0, "{err}");
    assert_eq!(printed.last().map(String::as_str), Some("done"));
    let r = replayed_lines(&trace);
    assert_eq!(ticks(&r), printed);
    r.line("[Inferior 1 (process {n}) exited normally]");
}

#[test]
fn reverse_commands_work_from_the_end_of_a_recording_cut_short() {
    let mut rec = Recording::start("cut-reverse", &["400"]);
    rec.wait_lines(4);
    rec.signal(libc::SIGTERM, false);
    let (_, err, printed, trace) = rec.finish();
    let last: u32 = printed
        .iter()
        .rev()
        .find_map(|l| l.strip_prefix("tick ")?.parse().ok())
        .unwrap_or_else(|| panic!("no tick printed: {printed:?}\n{err}"));
    let line = marker_line("ticker.c", "printf(\"tick %d");
    let r = replay_batch(
        &trace,
        &[
            "continue",
            "info registers rip",
            "reverse-stepi",
            "info registers rip",
            "continue",
            &format!("break ticker.c:{line}"),
            "reverse-continue",
            "print i",
            "reverse-next",
            "print i",
            "continue",
            "print i",
            "delete",
            "continue",
            "reverse-finish",
            "reverse-step",
        ],
    );
    r.line("No more reverse-execution history (the recording was cut short: {*}).");
    // The recording ends just after a syscall: one instruction back is that syscall.
    let rips: Vec<u64> = r
        .stdout
        .lines()
        .filter_map(|l| {
            let hex = l.strip_prefix("rip ")?.split_whitespace().next()?;
            u64::from_str_radix(hex.strip_prefix("0x")?, 16).ok()
        })
        .collect();
    assert_eq!(rips.len(), 2, "{}", r.dump());
    assert_eq!(rips[1], rips[0] - 2, "{}", r.dump());
    // Back to the last tick printed, the one before, and forward to the last again.
    let want = [last, last - 1, last];
    let got: Vec<u32> = r
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("$")?.split_once(" = ")?.1.parse().ok())
        .collect();
    assert_eq!(got, want, "{}", r.dump());
    r.line("Run back to call of #0 {*}");
    assert!(!r.stderr.contains("could not"), "{}", r.dump());
}
