//! Interrupting a long motion, forward or backward: ^C at `hindsight replay`'s prompt, and
//! gdb's interrupt (byte 0x03) through `--gdbserver`. The program (tests/programs/dap.c with
//! `long`) spends about 3 s in a CPU loop with a syscall every millisecond, so a replay's
//! motion across it has recorded events to stop at; the interrupt comes while it runs, and
//! the stop must be inside the loop, before the breakpoint the motion was heading for.

mod common;
use common::*;

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The 1-based line of dap.c marked `// @name`.
fn line(name: &str) -> u32 {
    let text = std::fs::read_to_string(programs().join("dap.c")).expect("dap.c");
    let i = text
        .lines()
        .position(|l| l.contains(&format!("// @{name}")))
        .unwrap_or_else(|| panic!("no @{name} in dap.c"));
    i as u32 + 1
}

/// Waits until `text` holds `pattern` (after `from`), up to `TIMEOUT`.
fn wait_for(text: &Arc<Mutex<String>>, from: usize, pattern: &str) -> usize {
    let start = Instant::now();
    loop {
        {
            let t = text.lock().expect("lock");
            if let Some(i) = t[from.min(t.len())..].find(pattern) {
                return from + i + pattern.len();
            }
            assert!(
                start.elapsed() < TIMEOUT,
                "no {pattern:?} after {from} in:\n{t}"
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Kills the hindsight it names when the test ends, failed or not (its tracees die with it:
/// PTRACE_O_EXITKILL), so that a failure leaves no replay spinning.
struct KillOnDrop(i32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        // SAFETY: a signal to the child this test started (already reaped: harmless ESRCH).
        unsafe { libc::kill(self.0, libc::SIGKILL) };
    }
}

#[test]
fn ctrl_c_at_the_prompt_stops_a_long_continue_and_a_long_reverse_continue() {
    let prog = compile("dap", &[]);
    let (trace, _) = record_trace(&prog, &["long"]);
    // The prompt, not --batch: ^C interrupts motions there. (Not -q: the program's output
    // says when the replay has reached the loop.)
    let mut child = Command::new(env!("CARGO_BIN_EXE_hindsight"))
        .arg("replay")
        .arg(&trace)
        .env("HINDSIGHT_DIR", scratch().join("hindsight-dir"))
        .env("HOME", scratch())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hindsight runs");
    let pid = child.id() as i32;
    let _reaper = KillOnDrop(pid);
    let out = Arc::new(Mutex::new(String::new()));
    for stream in [
        Box::new(child.stdout.take().expect("stdout")) as Box<dyn std::io::Read + Send>,
        Box::new(child.stderr.take().expect("stderr")),
    ] {
        let out = out.clone();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stream);
            let mut buf = String::new();
            while r.read_line(&mut buf).unwrap_or(0) > 0 {
                out.lock().expect("lock").push_str(&buf);
                buf.clear();
            }
        });
    }
    let mut stdin = child.stdin.take().expect("stdin");
    let mut say = |cmd: &str| {
        stdin
            .write_all(format!("{cmd}\n").as_bytes())
            .expect("a command");
    };
    // ^C at a terminal: SIGINT to hindsight, again every 300 ms until the motion says where
    // it stopped (a signal that comes between two commands is not meant for the next one).
    let interrupt = |from: usize, goal: &str| -> usize {
        let start = Instant::now();
        loop {
            std::thread::sleep(Duration::from_millis(300));
            {
                let t = out.lock().expect("lock");
                let rest = &t[from.min(t.len())..];
                if let Some(i) = rest.find("Program received signal SIGINT, Interrupt.") {
                    return from + i;
                }
                assert!(
                    !rest.contains(goal),
                    "the motion reached {goal:?} without being interrupted:\n{t}"
                );
                assert!(start.elapsed() < TIMEOUT, "no stop after ^C:\n{t}");
            }
            // SAFETY: a signal to the child this test started.
            unsafe { libc::kill(pid, libc::SIGINT) };
        }
    };
    let after_loop = line("bump4");
    let before_loop = line("print");
    // The line of main in the backtrace that `bt` printed after `from`.
    let main_line = |from: usize| -> u32 {
        let at = wait_for(&out, from, "in main (argc=");
        let at = wait_for(&out, at, " at dap.c:");
        let t = out.lock().expect("lock");
        let digits: String = t[at..].chars().take_while(char::is_ascii_digit).collect();
        digits.parse().expect("a line number")
    };
    say(&format!("break dap.c:{after_loop}"));
    say("continue");
    let at = wait_for(&out, 0, "Continuing.");
    // The line the program prints just before the loop.
    let at = wait_for(&out, at, "total 44 counter 6");
    let at = interrupt(at, "Breakpoint 1, main (");
    // Where it stopped is a place like any other: in the loop, which `bt` shows and `when`
    // names; the breakpoint is still ahead.
    say("bt");
    let l = main_line(at);
    assert!(
        before_loop < l && l < after_loop,
        "stopped at line {l}, not in the loop"
    );
    say("when");
    let at = wait_for(&out, at, "Current position: ");
    say("continue");
    let at = wait_for(&out, at, "Breakpoint 1, main (");
    let at = wait_for(&out, at, &format!("{after_loop}\t"));
    // Backward across the loop towards a breakpoint before it, interrupted on the way.
    say(&format!("break dap.c:{before_loop}"));
    say("reverse-continue");
    let at = wait_for(&out, at, "Continuing.");
    let at = interrupt(at, "Breakpoint 2, main (");
    say("bt");
    let l = main_line(at);
    assert!(
        before_loop < l && l < after_loop,
        "stopped at line {l}, not in the loop"
    );
    say("quit");
    drop(stdin);
    let _ = child.wait();
}

/// One gdb remote protocol packet.
fn packet(body: &str) -> Vec<u8> {
    let sum = body.bytes().fold(0u8, |a, b| a.wrapping_add(b));
    format!("${body}#{sum:02x}").into_bytes()
}

/// Reads until a whole packet (`$…#cc`) has come; acknowledges it; returns its body.
fn reply(s: &mut std::net::TcpStream) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        if let Some(start) = got.iter().position(|&b| b == b'$') {
            if let Some(end) = got[start..].iter().position(|&b| b == b'#') {
                if got.len() >= start + end + 3 {
                    s.write_all(b"+").expect("ack");
                    return String::from_utf8_lossy(&got[start + 1..start + end]).into_owned();
                }
            }
        }
        let n = s.read(&mut buf).expect("a reply");
        assert!(n > 0, "the server closed the connection");
        got.extend_from_slice(&buf[..n]);
    }
}

#[test]
fn gdbs_interrupt_stops_a_long_continue_and_a_long_reverse_continue() {
    let prog = compile("dap", &[]);
    let (trace, _) = record_trace(&prog, &["long"]);
    let (mut child, port, _) = start_gdbserver(&trace, &[]);
    let _reaper = KillOnDrop(child.id() as i32);
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connects");
    s.set_read_timeout(Some(TIMEOUT)).expect("timeout");
    let exchange = |s: &mut std::net::TcpStream, body: &str| {
        s.write_all(&packet(body)).expect("send");
        reply(s)
    };
    assert!(exchange(&mut s, "qSupported:multiprocess+").contains("ReverseContinue+"));
    assert!(exchange(&mut s, "?").starts_with("T05"));
    // A breakpoint after the loop: the continue is heading there.
    let after = nm_line_address(&prog, line("bump4"));
    assert_eq!(exchange(&mut s, &format!("Z0,{after:x},1")), "OK");
    let run = |s: &mut std::net::TcpStream, motion: &str| -> String {
        s.write_all(&packet(motion)).expect("send");
        std::thread::sleep(Duration::from_millis(800));
        s.write_all(&[0x03]).expect("interrupt");
        reply(s)
    };
    // gdb's ^C: the stop is a SIGINT (gdb's signal 2), not the breakpoint.
    let stop = run(&mut s, "vCont;c");
    assert!(stop.starts_with("T02"), "{stop}");
    assert!(!stop.contains("swbreak"), "{stop}");
    // The session goes on: the breakpoint is reached, then back towards the start,
    // interrupted again.
    let stop = exchange(&mut s, "vCont;c");
    assert!(
        stop.starts_with("T05") && stop.contains("swbreak"),
        "{stop}"
    );
    let stop = run(&mut s, "bc");
    assert!(stop.starts_with("T02"), "{stop}");
    let g = exchange(&mut s, "g");
    assert!(!g.starts_with('E'), "{g}");
    let _ = child.kill();
    let _ = child.wait();
}

/// The address of the first instruction of `line` in dap.c, from gdb's `info line`.
fn nm_line_address(prog: &std::path::Path, line: u32) -> u64 {
    let out = Command::new("gdb")
        .args(["-batch", "-nx", "-ex"])
        .arg(format!("info line dap.c:{line}"))
        .arg(prog)
        .output()
        .expect("gdb runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let addr = text
        .split("starts at address ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok())
        .unwrap_or_else(|| panic!("no address for line {line}: {text}"));
    // A PIE is loaded at gdb's (and hindsight's) 0x555555554000 without ASLR.
    if addr < 0x5555_5555_4000 {
        addr + 0x5555_5555_4000
    } else {
        addr
    }
}
