//! Nothing lost, nothing silently wrong: damaged traces are errors naming the file (or a true
//! prefix of the recording followed by one), never a hang, a panic or another story.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

fn os(s: &str) -> &std::ffi::OsStr {
    s.as_ref()
}

/// `hindsight replay TRACE --batch -ex continue`: the program's output and
/// hindsight's notices on stdout.
fn replay_to_end(trace: &Path) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hindsight"));
    cmd.arg("replay")
        .arg(trace)
        .args(["--batch", "-ex", "continue"])
        .env("HINDSIGHT_DIR", scratch().join("hindsight-dir"))
        .stdin(std::process::Stdio::null());
    let (r, finished) = collect_with_timeout(&mut cmd);
    assert!(finished, "the replay of {} hangs", trace.display());
    r
}

fn copy_dir(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// Every file of a trace (relative paths).
fn trace_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        for e in std::fs::read_dir(dir.join(&rel)).unwrap() {
            let e = e.unwrap();
            let r = rel.join(e.file_name());
            if e.file_type().unwrap().is_dir() {
                todo.push(r);
            } else {
                out.push(r);
            }
        }
    }
    out.sort();
    out
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
}

/// Damages one file of the trace in `dir` at random (never leaving it as it was); says what
/// it did.
fn damage(dir: &Path, rng: &mut Rng) -> String {
    loop {
        let files = trace_files(dir);
        let before: Vec<Vec<u8>> = files
            .iter()
            .map(|f| std::fs::read(dir.join(f)).unwrap())
            .collect();
        let what = damage_once(dir, rng);
        let changed = files
            .iter()
            .zip(&before)
            .any(|(f, b)| std::fs::read(dir.join(f)).ok().as_ref() != Some(b));
        if changed {
            return what;
        }
    }
}

fn damage_once(dir: &Path, rng: &mut Rng) -> String {
    let files = trace_files(dir);
    let rel = &files[rng.below(files.len() as u64) as usize];
    let p = dir.join(rel);
    let mut data = std::fs::read(&p).unwrap();
    let n = data.len() as u64;
    let what = match rng.below(8) {
        0 => {
            std::fs::remove_file(&p).unwrap();
            return format!("deleted {}", rel.display());
        }
        1 => {
            let at = rng.below(n);
            data.truncate(at as usize);
            format!("cut at {at}")
        }
        2 => {
            let k = 1 + rng.below(64);
            data.extend((0..k).map(|_| rng.next() as u8));
            format!("{k} bytes appended")
        }
        3 => {
            // Another file of the trace in its place.
            let other = &files[rng.below(files.len() as u64) as usize];
            data = std::fs::read(dir.join(other)).unwrap();
            format!("replaced by {}", other.display())
        }
        4 => {
            let at = rng.below(n);
            let k = (1 + rng.below(256)).min(n - at.min(n));
            for b in &mut data[at as usize..(at + k) as usize] {
                *b = 0;
            }
            format!("{k} bytes zeroed at {at}")
        }
        _ => {
            let flips = 1 + rng.below(4);
            for _ in 0..flips {
                if n > 0 {
                    let at = rng.below(n) as usize;
                    data[at] ^= 1 << rng.below(8);
                }
            }
            format!("{flips} bits flipped")
        }
    };
    std::fs::write(&p, &data).unwrap();
    format!("{}: {what}", rel.display())
}

/// Checks one replay of a damaged trace against the intact one's: no panic, no death by a
/// signal, no exit 0 with another output; otherwise what the program printed is a prefix of
/// what it printed in the intact replay, and something on stderr says why it stopped.
fn judge(good: &Run, r: &Run, what: &str) {
    let show = || {
        format!(
            "{what}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            r.stdout, r.stderr
        )
    };
    assert!(r.code >= 0, "hindsight died: {}", show());
    assert_ne!(r.code, 101, "hindsight panicked: {}", show());
    assert!(!r.stderr.contains("panicked"), "panic: {}", show());
    if r.code == 0 {
        // (How another process of the tree ended is told as its stream says: a cut-off
        // stream ends where it was cut.)
        let root_story = |out: &str| -> Vec<String> {
            out.lines()
                .filter(|l| {
                    l.starts_with("[Inferior 1 ") || !matches("[Inferior {n} (process {n}) {*}]", l)
                })
                .map(str::to_string)
                .collect()
        };
        assert_eq!(
            root_story(&r.stdout),
            root_story(&good.stdout),
            "exit 0 with another story: {}",
            show()
        );
        // A stream of another process, cut off: the root's replay is whole, and says so.
        assert!(r.stderr.contains("cut off"), "damage not said: {}", show());
        return;
    }
    let lines: Vec<&str> = r.stdout.lines().collect();
    let want: Vec<&str> = good.stdout.lines().collect();
    let whole = lines.len().saturating_sub(1);
    assert!(
        lines.len() <= want.len()
            && lines[..whole] == want[..whole]
            && lines
                .last()
                .is_none_or(|l| want.get(whole).is_some_and(|w| w.starts_with(l))),
        "another story: {}\n--- intact replay ---\n{}",
        show(),
        good.stdout
    );
    let errs: Vec<&str> = r.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(!errs.is_empty(), "nothing said: {}", show());
}

#[test]
fn random_damage_gives_an_error_or_a_true_prefix_never_another_story() {
    let prog = compile("rr_forkpipe", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let good = replay_to_end(&trace);
    assert_eq!(good.code, 0, "{}\n{}", good.stdout, good.stderr);
    assert!(good.stdout.contains("child "), "{}", good.stdout);
    let work = scratch().join(format!("damaged-{}", std::process::id()));
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut refused, mut whole) = (0, 0);
    for i in 0..300 {
        copy_dir(&trace, &work);
        let what = damage(&work, &mut rng);
        let r = replay_to_end(&work);
        judge(&good, &r, &format!("damage {i}: {what}"));
        if r.code == 0 {
            whole += 1;
        } else {
            refused += 1;
        }
    }
    // Most damages stop the replay; the others are streams of the child, cut off.
    assert!(refused >= 250, "{refused} refused, {whole} replayed whole");
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn info_check_verifies_everything_and_names_the_damage() {
    let prog = compile("rr_forkpipe", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let r = hindsight(&[os("info"), os("--check"), trace.as_os_str()]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    r.line("Check:      whole: {n} files ({*}) match their checksums, {n} events decoded");
    // A copy of a library with one byte changed: sizes are right, only the checksum tells.
    let bad = scratch().join(format!("check-{}", std::process::id()));
    copy_dir(&trace, &bad);
    let lib = trace_files(&bad)
        .into_iter()
        .find(|f| f.to_string_lossy().contains("libc.so"))
        .expect("libc is copied");
    let p = bad.join(&lib);
    let mut data = std::fs::read(&p).unwrap();
    data[4096] ^= 1;
    std::fs::write(&p, &data).unwrap();
    let plain = hindsight(&[os("info"), bad.as_os_str()]);
    assert_eq!(
        plain.code, 0,
        "sizes are checked, not sums: {}",
        plain.stderr
    );
    let r = hindsight(&[os("info"), os("--check"), bad.as_os_str()]);
    assert_ne!(r.code, 0);
    let errs: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(errs.len(), 1, "{}", r.stderr);
    assert!(
        errs[0].contains(&p.display().to_string()) && errs[0].contains("checksum mismatch"),
        "{}",
        errs[0]
    );
    // The replay refuses the copy before mapping it.
    let r = replay_to_end(&bad);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("checksum mismatch"), "{}", r.stderr);
    r.lacks("child ");
    // A deleted event stream: info itself refuses the trace, naming the file.
    copy_dir(&trace, &bad);
    let ev = trace_files(&bad)
        .into_iter()
        .rfind(|f| f.starts_with("events"))
        .unwrap();
    std::fs::remove_file(bad.join(&ev)).unwrap();
    for args in [&["info"][..], &["info", "--check"], &["info", "--events"]] {
        let mut v: Vec<&std::ffi::OsStr> = args.iter().map(|a| os(a)).collect();
        v.push(bad.as_os_str());
        let r = hindsight(&v);
        assert_ne!(r.code, 0, "{args:?}");
        assert!(
            r.stderr.contains(&bad.join(&ev).display().to_string()) && r.stderr.contains("missing"),
            "{}",
            r.stderr
        );
    }
    let r = replay_to_end(&bad);
    assert_ne!(r.code, 0);
    r.lacks("child ");
    let _ = std::fs::remove_dir_all(&bad);
}

#[test]
fn a_trace_is_private_to_its_owner() {
    let prog = compile("rr_forkpipe", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    use std::os::unix::fs::PermissionsExt as _;
    let mut n = 0;
    for rel in std::iter::once(PathBuf::new()).chain(trace_files(&trace)) {
        let m = std::fs::metadata(trace.join(&rel)).unwrap();
        assert_eq!(
            m.permissions().mode() & 0o077,
            0,
            "{} is {:o}",
            rel.display(),
            m.permissions().mode()
        );
        n += 1;
    }
    assert!(n > 6, "{n} files");
    for sub in ["events", "files"] {
        let m = std::fs::metadata(trace.join(sub)).unwrap();
        assert_eq!(m.permissions().mode() & 0o777, 0o700);
    }
}

#[test]
fn a_relative_trace_path_works_from_any_directory() {
    let prog = compile("rr_forkpipe", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let good = replay_to_end(&trace);
    // From the trace's parent, from inside it, and from elsewhere through `..`: the program
    // was recorded in another working directory, where these paths mean nothing.
    let parent = trace.parent().unwrap();
    let name = trace.file_name().unwrap();
    let inside = trace.join("events");
    let rel_from_inside = Path::new("..").join("..").join(name);
    for (cwd, rel) in [
        (parent, Path::new(name)),
        (trace.as_path(), Path::new(".")),
        (inside.as_path(), rel_from_inside.as_path()),
    ] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hindsight"));
        cmd.current_dir(cwd)
            .arg("replay")
            .arg(rel)
            .args(["--batch", "-ex", "continue"])
            .env("HINDSIGHT_DIR", scratch().join("hindsight-dir"))
            .stdin(std::process::Stdio::null());
        let (r, finished) = collect_with_timeout(&mut cmd);
        assert!(finished);
        assert_eq!(
            r.code,
            0,
            "from {}: {}\n{}",
            cwd.display(),
            r.stdout,
            r.stderr
        );
        assert_eq!(r.stdout, good.stdout, "from {}", cwd.display());
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hindsight"));
        cmd.current_dir(cwd).arg("info").arg("--check").arg(rel);
        let (r, _) = collect_with_timeout(&mut cmd);
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
}

/// Runs `script` with bash, `$HS` set to hindsight and `$T` to a recorded trace.
fn bash(script: &str, trace: &Path) -> Run {
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(script)
        .env("HS", env!("CARGO_BIN_EXE_hindsight"))
        .env("T", trace)
        .env("HINDSIGHT_DIR", scratch().join("hindsight-dir"))
        .stdin(std::process::Stdio::null());
    let (r, finished) = collect_with_timeout(&mut cmd);
    assert!(finished, "{script}");
    r
}

#[test]
fn a_closed_pipe_ends_hindsight_quietly_and_a_full_disk_in_one_line() {
    let prog = compile("rr_chatty", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    // `| head -1`: hindsight ends by SIGPIPE (status 141), saying nothing.
    for cmd in [
        r#""$HS" info --events "$T""#,
        r#""$HS" replay "$T" --batch -ex continue"#,
    ] {
        let r = bash(
            &format!("{cmd} | head -1 >/dev/null; echo \"status ${{PIPESTATUS[0]}}\""),
            &trace,
        );
        assert_eq!(r.stdout, "status 141\n", "{cmd}\n{}", r.stderr);
        assert_eq!(r.stderr, "", "{cmd}");
    }
    // stdout on a full disk: one line, status 1.
    for cmd in [
        r#""$HS" info --events "$T""#,
        r#""$HS" replay "$T" --batch -ex continue"#,
        r#""$HS" ls"#,
    ] {
        let r = bash(&format!("{cmd} >/dev/full; echo \"status $?\""), &trace);
        assert_eq!(r.stdout, "status 1\n", "{cmd}\n{}", r.stderr);
        assert_eq!(
            r.stderr, "hindsight: cannot write to stdout: No space left on device (os error 28)\n",
            "{cmd}"
        );
    }
}

#[test]
fn recording_onto_a_full_disk_stops_in_one_line_and_keeps_what_fits() {
    // A 256 KiB file system of its own (in a mount namespace of its own): the copy of libc
    // does not fit.
    let prog = compile("rr_chatty", &[]);
    let dir = scratch().join(format!("tiny-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let r = bash(
        &format!(
            r#"unshare -m bash -c 'mount -t tmpfs -o size=256k tmpfs "{d}" || exit 99
               "$HS" record -o "{d}/t" -- "{p}" >/dev/null; echo "record $?"
               "$HS" info "{d}/t" | grep Status; echo "info $?"'"#,
            d = dir.display(),
            p = prog.display()
        ),
        &dir,
    );
    assert_ne!(r.code, 99, "cannot mount a tmpfs here: {}", r.stderr);
    assert_eq!(
        r.stdout.lines().next(),
        Some("record 2"),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
    let errs: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(errs.len(), 2, "{}", r.stderr);
    assert!(
        errs[0].starts_with("hindsight: the recording stopped: ")
            && errs[0].ends_with("No space left on device (os error 28)"),
        "{}",
        errs[0]
    );
    assert!(
        errs[1].ends_with("(incomplete: replayable up to there)"),
        "{}",
        errs[1]
    );
    assert!(
        r.stdout.contains("Status:     incomplete ("),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("info 0"), "{}", r.stdout);
}
