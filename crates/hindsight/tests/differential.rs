//! Differential test of time travel: random sequences of forward and reverse motions
//! (step/next/finish/stepi/nexti/continue and their reverse forms, with breakpoints and a
//! watched global) run by gdb's own reverse debugging (`record full`, natively) and by
//! hindsight on a recording of the same program — from its command line and through its gdb
//! server with real gdb as the client. Every stop must be at the same pc and line, up to where
//! gdb's history ends.
//!
//! gdb's history: gdb records from main to the last line of main (`record full`, then
//! `continue` to there), then goes back to its start (`record goto begin`); every sequence
//! runs inside that history, so a forward motion replays as a reverse one does. A motion that
//! runs out of it ("No more reverse-execution history.") ends the comparison: hindsight's
//! recording goes on beyond (into the loader before main, into the C library after).
//!
//! gdb's record full does not see hardware watchpoints while it replays (gdb 13), so natively
//! the watchpoint is a software one (`set can-use-hw-watchpoints 0`: checked after every
//! instruction, in both directions); hindsight's are hardware ones. Both stop only when the
//! value changes.
//!
//! Sequences come from proptest's generator with fixed seeds: a failure names its sequence,
//! and the commands printed with it reproduce it by hand.

mod common;
use common::*;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::strategy::ValueTree as _;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// How many sequences per program, and how many motions in each.
const SEQUENCES: usize = 12;
const MOTIONS: usize = 24;

/// The motions a sequence is made of.
const MOTION_NAMES: [&str; 12] = [
    "step",
    "next",
    "finish",
    "stepi",
    "nexti",
    "continue",
    "reverse-step",
    "reverse-next",
    "reverse-finish",
    "reverse-stepi",
    "reverse-nexti",
    "reverse-continue",
];

/// A program under test: its source, where gdb's history ends, and where sequences may put
/// breakpoints.
struct Subject {
    name: &'static str,
    /// A text on the last line of main.
    end_marker: &'static str,
    /// Breakpoint locations (gdb's syntax: functions, lines, conditions).
    breaks: &'static [&'static str],
    /// The watched global.
    watched: &'static str,
}

const REV_DIFF: Subject = Subject {
    name: "rev_diff",
    end_marker: "the end of gdb's history",
    breaks: &[
        "bump",
        "leaf",
        "fib if n == 1",
        "work",
        "rev_diff.c:25",
        "rev_diff.c:35",
        "rev_diff.c:13",
    ],
    watched: "g",
};

/// One generated sequence: a prelude that gets somewhere into the run (a breakpoint hit a few
/// times, then deleted), the stops armed for the rest, and the motions.
#[derive(Debug, Clone)]
struct Sequence {
    prelude: (usize, usize),
    breaks: Vec<usize>,
    watch: bool,
    motions: Vec<usize>,
}

impl Sequence {
    /// The commands after the stop at main, as typed to gdb or hindsight.
    fn commands(&self, subject: &Subject) -> Vec<Cmd> {
        let mut v = Vec::new();
        let (at, times) = self.prelude;
        v.push(Cmd::setup(format!("tbreak {}", subject.breaks[at])));
        v.push(Cmd::motion("continue"));
        v.push(Cmd::setup(format!("break {}", subject.breaks[at])));
        for _ in 1..times {
            v.push(Cmd::motion("continue"));
        }
        v.push(Cmd::setup("delete".into()));
        for &b in &self.breaks {
            v.push(Cmd::setup(format!("break {}", subject.breaks[b])));
        }
        if self.watch {
            v.push(Cmd::setup(format!("watch {}", subject.watched)));
        }
        for &m in &self.motions {
            v.push(Cmd::motion(MOTION_NAMES[m]));
        }
        v
    }
}

/// A command of a sequence; motions are followed by questions about where they stopped.
#[derive(Debug, Clone)]
struct Cmd {
    text: String,
    motion: bool,
}

impl Cmd {
    fn setup(text: String) -> Cmd {
        Cmd {
            text,
            motion: false,
        }
    }
    fn motion(text: &str) -> Cmd {
        Cmd {
            text: text.to_string(),
            motion: true,
        }
    }
}

/// The sequences of a subject, the same in every run (seeded per subject and index).
fn sequences(subject: &Subject) -> Vec<Sequence> {
    let n = subject.breaks.len();
    let strategy = (
        (0..n, 1usize..4),
        proptest::collection::vec(0..n, 0..3),
        proptest::bool::weighted(0.4),
        proptest::collection::vec(0..MOTION_NAMES.len(), MOTIONS),
    )
        .prop_map(|(prelude, breaks, watch, motions)| Sequence {
            prelude,
            breaks,
            watch,
            motions,
        });
    (0..SEQUENCES)
        .map(|i| {
            let mut seed = [0u8; 32];
            seed[..subject.name.len()].copy_from_slice(subject.name.as_bytes());
            seed[31] = i as u8;
            let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed);
            let mut runner = TestRunner::new_with_rng(Config::default(), rng);
            strategy
                .new_tree(&mut runner)
                .expect("a sequence")
                .current()
        })
        .collect()
}

/// Where one motion stopped, as the debugger told it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Where {
    pc: Option<u64>,
    /// `FILE:LINE` of frame 0, if it has one.
    line: Option<String>,
}

impl std::fmt::Display for Where {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.pc {
            Some(pc) => write!(f, "{pc:#x}")?,
            None => write!(f, "no pc")?,
        }
        write!(f, " {}", self.line.as_deref().unwrap_or("(no line)"))
    }
}

/// The outcome of each motion of a sequence, by command index.
type Outcomes = Vec<(usize, Outcome)>;

/// A front end running a sequence: the outcomes and what it printed.
type FrontEnd = dyn Fn(&Prepared, &[Cmd]) -> (Outcomes, Run);

/// One motion's outcome: where it stopped, whether gdb said its history ended there, and
/// the text printed (for the failure report).
#[derive(Debug, Clone)]
struct Outcome {
    at: Where,
    end_of_history: bool,
    text: String,
}

const MARK: &str = "@@diff@@ ";

/// The debugger commands for a sequence: each motion, then `info registers rip` and `frame`,
/// all after a marker line that splits the output.
fn script(cmds: &[Cmd]) -> Vec<String> {
    let mut v = Vec::new();
    for (k, c) in cmds.iter().enumerate() {
        if c.motion {
            v.push(format!("echo {MARK}{k}\\n"));
            v.push(c.text.clone());
            v.push("info registers rip".into());
            v.push("frame".into());
        } else {
            v.push(c.text.clone());
        }
    }
    v.push(format!("echo {MARK}end\\n"));
    v
}

/// Splits a run's stdout at the markers: the outcome of each motion, by command index.
fn outcomes(stdout: &str) -> Vec<(usize, Outcome)> {
    let mut v = Vec::new();
    let mut chunks = stdout.split(MARK).skip(1);
    for chunk in chunks.by_ref() {
        let (k, text) = chunk.split_once('\n').unwrap_or((chunk, ""));
        let Ok(k) = k.trim().parse::<usize>() else {
            break;
        };
        let pc = text.lines().find_map(|l| {
            let rest = l.strip_prefix("rip ")?;
            let hex = rest.split_whitespace().next()?.strip_prefix("0x")?;
            u64::from_str_radix(hex, 16).ok()
        });
        let line = text
            .lines()
            .find(|l| l.starts_with("#0  "))
            .and_then(|l| l.rsplit_once(" at "))
            .map(|(_, at)| at.trim().to_string());
        v.push((
            k,
            Outcome {
                at: Where { pc, line },
                end_of_history: text.contains("No more reverse-execution history."),
                text: text.to_string(),
            },
        ));
    }
    v
}

/// gdb's `record full` on the program, natively: the outcome of every motion.
fn under_record_full(prog: &Path, end_line: u32, cmds: &[Cmd]) -> Vec<(usize, Outcome)> {
    let mut c = Command::new("gdb");
    c.args(["-batch", "-nx"]).arg(prog);
    let prelude = [
        "break main".to_string(),
        "run".into(),
        "record full".into(),
        "set record full insn-number-max unlimited".into(),
        format!("break {end_line}"),
        "continue".into(),
        "record goto begin".into(),
        "delete".into(),
        "set can-use-hw-watchpoints 0".into(),
    ];
    for a in prelude.iter().chain(script(cmds).iter()) {
        c.arg("-ex").arg(a);
    }
    let (r, finished) = collect_with_timeout(c.stdin(Stdio::null()));
    assert!(finished, "gdb did not finish: {}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("Go backward to insn number"),
        "gdb did not record the program:\n{}\n{}",
        r.stdout,
        r.stderr
    );
    outcomes(&r.stdout)
}

/// hindsight's command line on the recording.
fn by_cli(trace: &Path, cmds: &[Cmd]) -> (Vec<(usize, Outcome)>, Run) {
    let mut all = vec!["break main".to_string(), "continue".into(), "delete".into()];
    all.extend(script(cmds));
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    let r = replay_batch(trace, &refs);
    r.clean();
    (outcomes(&r.stdout), r)
}

/// A replay served on a free local port for one client.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(trace: &Path) -> Server {
        let (child, port, _) = start_gdbserver(trace, &[]);
        Server { child, port }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Real gdb driving hindsight's gdb server on the recording.
fn by_gdbserver(prog: &Path, trace: &Path, cmds: &[Cmd]) -> (Vec<(usize, Outcome)>, Run) {
    let server = Server::start(trace);
    let mut c = Command::new("gdb");
    c.args(["-batch", "-nx"])
        .arg("-ex")
        .arg(format!("file {}", prog.display()))
        .args(["-ex", "set remotetimeout 30"])
        .arg("-ex")
        .arg(format!("target remote 127.0.0.1:{}", server.port));
    for a in ["break main", "continue", "delete"]
        .iter()
        .map(|s| s.to_string())
        .chain(script(cmds))
    {
        c.arg("-ex").arg(a);
    }
    let (mut r, finished) = collect_with_timeout(c.stdin(Stdio::null()));
    drop(server);
    if !finished {
        // The motions it answered are compared; the one it hung in has no answer.
        r.stderr.push_str("\n(gdb did not finish in time: killed)");
    }
    (outcomes(&r.stdout), r)
}

/// The first disagreement of a sequence, as a readable report (None: they agree up to the end
/// of gdb's history).
fn compare(
    cmds: &[Cmd],
    gdb: &[(usize, Outcome)],
    ours: &[(usize, Outcome)],
    ours_run: &Run,
) -> Option<String> {
    let mut table = String::new();
    for (i, (k, want)) in gdb.iter().enumerate() {
        if want.end_of_history {
            return None;
        }
        let got = ours.get(i).filter(|(k2, _)| k2 == k).map(|(_, o)| o);
        let line = format!(
            "  {k:>3} {:<17} gdb: {:<40} hindsight: {}\n",
            cmds[*k].text,
            want.at.to_string(),
            got.map(|o| o.at.to_string())
                .unwrap_or_else(|| "(no answer)".into())
        );
        table.push_str(&line);
        if got.map(|o| &o.at) != Some(&want.at) {
            let typed: Vec<&str> = cmds[..=*k].iter().map(|c| c.text.as_str()).collect();
            return Some(format!(
                "stops (command index, command, where gdb and hindsight stopped):\n{table}\
                 first difference at command {k} ({:?}).\n\
                 reproduce: break main, continue, delete, then {typed:?}\n\
                 --- gdb printed ---\n{}\n--- hindsight printed ---\n{}\n--- hindsight's stderr ---\n{}",
                cmds[*k].text,
                want.text.trim_end(),
                got.map(|o| o.text.trim_end()).unwrap_or(""),
                ours_run.stderr.trim_end(),
            ));
        }
    }
    None
}

/// A subject compiled and recorded once per test process, with gdb's outcomes of its
/// sequences (shared by the front ends' tests).
struct Prepared {
    prog: PathBuf,
    trace: PathBuf,
    sequences: Vec<(Vec<Cmd>, Outcomes)>,
}

fn prepared(subject: &'static Subject, cell: &'static OnceLock<Prepared>) -> &'static Prepared {
    cell.get_or_init(|| {
        let prog = compile(subject.name, &[]);
        let (trace, _) = record_trace(&prog, &[]);
        let end_line = marker_line(&format!("{}.c", subject.name), subject.end_marker);
        let sequences = sequences(subject)
            .iter()
            .map(|s| {
                let cmds = s.commands(subject);
                let gdb = under_record_full(&prog, end_line, &cmds);
                (cmds, gdb)
            })
            .collect();
        Prepared {
            prog,
            trace,
            sequences,
        }
    })
}

/// Runs every sequence through one front end; fails with the report of each one that
/// disagrees, after saying how many agree.
fn check(
    subject: &'static Subject,
    cell: &'static OnceLock<Prepared>,
    front: &str,
    run: &FrontEnd,
) {
    let p = prepared(subject, cell);
    let mut failures = Vec::new();
    let mut compared = 0;
    for (i, (cmds, gdb)) in p.sequences.iter().enumerate() {
        let (ours, run) = run(p, cmds);
        compared += gdb.iter().take_while(|(_, o)| !o.end_of_history).count();
        if let Some(report) = compare(cmds, gdb, &ours, &run) {
            failures.push(format!("=== {} sequence {i} ===\n{report}", subject.name));
        }
    }
    let n = p.sequences.len();
    eprintln!(
        "{} through {front}: {} of {n} sequences agree with gdb's record full ({compared} stops compared)",
        subject.name,
        n - failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {n} sequences differ from gdb's record full through {front}:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

static REV_DIFF_PREPARED: OnceLock<Prepared> = OnceLock::new();

#[test]
fn random_motions_stop_where_gdb_record_full_stops_in_the_cli() {
    check(
        &REV_DIFF,
        &REV_DIFF_PREPARED,
        "the command line",
        &|p, cmds| by_cli(&p.trace, cmds),
    );
}

#[test]
fn random_motions_stop_where_gdb_record_full_stops_through_the_gdb_server() {
    check(
        &REV_DIFF,
        &REV_DIFF_PREPARED,
        "the gdb server",
        &|p, cmds| by_gdbserver(&p.prog, &p.trace, cmds),
    );
}
