//! `hindsight replay --gdbserver`: the installed gdb drives recorded programs over the remote
//! protocol (`gdb -batch -ex 'target remote …'`), and the tests assert on gdb's own output:
//! breakpoint stops, values, backtraces, registers (orig_rax, fs_base), `errno`, threads,
//! watchpoints, reverse execution (landing where gdb's own `record full` lands on the same
//! program), `monitor` commands, refused writes, and a second client after the first.

mod common;
use common::*;

use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A replay served on a free local port.
struct Server {
    child: Child,
    port: u16,
    /// What the server wrote to stderr up to the address line.
    _log: Vec<String>,
}

impl Server {
    fn start(trace: &Path) -> Server {
        Server::start_with(trace, &[])
    }

    /// A server with more options (`-ex CMD`…).
    fn start_with(trace: &Path, extra: &[&str]) -> Server {
        let (child, port, log) = start_gdbserver(trace, extra);
        Server {
            child,
            port,
            _log: log,
        }
    }

    /// gdb in batch mode on this server, with `prog`'s symbols and these commands.
    fn gdb(&self, prog: &Path, cmds: &[&str]) -> Run {
        let mut cmd = Command::new("gdb");
        cmd.args(["-batch", "-nx"])
            .arg("-ex")
            .arg(format!("file {}", prog.display()))
            // A loaded machine can be slower than gdb's 2 s for an answer.
            .args(["-ex", "set remotetimeout 30"])
            .arg("-ex")
            .arg(format!("target remote 127.0.0.1:{}", self.port));
        for c in cmds {
            cmd.arg("-ex").arg(c);
        }
        let (r, finished) = collect_with_timeout(cmd.stdin(Stdio::null()));
        assert!(finished, "gdb did not finish: {}\n{}", r.stdout, r.stderr);
        r
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn breakpoints_values_backtraces_and_registers() {
    let prog = compile("tt_loop", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let server = Server::start(&trace);
    let r = server.gdb(
        &prog,
        &[
            "break square",
            "continue",
            "continue",
            "print x",
            "backtrace",
            "info registers rip orig_rax fs_base gs_base",
            "print counter",
            "x/2dw &counter",
            "kill",
        ],
    );
    r.line("Breakpoint 1, square (x=1) at tt_loop.c:{n}");
    r.line("$1 = 1");
    r.line("#0  square (x=1) at tt_loop.c:{n}");
    r.line("#1  {hex} in main () at tt_loop.c:{n}");
    r.line("rip            {hex}      {hex} <square+{n}>");
    r.line("orig_rax       0xffffffffffffffff  -1");
    r.line("fs_base        {hex}      {n}");
    r.line("$2 = 1");
}

#[test]
fn reverse_execution_lands_where_gdb_record_full_lands() {
    let prog = compile("tt_steps", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let server = Server::start(&trace);
    let r = server.gdb(
        &prog,
        &[
            "break 20",
            "continue",
            "reverse-next",
            "reverse-next",
            "reverse-next",
            "reverse-step",
            "reverse-step",
            "reverse-step",
            "reverse-step",
            "reverse-finish",
            "kill",
        ],
    );
    // gdb 13's own `record full` on the same program gives these lines (the CLI test of the
    // same commands asserts them too).
    r.seq(&[
        "Breakpoint 1, main () at tt_steps.c:20",
        "20\t    g = g * 2;",
        "16\t    for (int i = 0; i < 3; i++) {",
        "18\t        g = acc + 1;",
        "17\t        acc = twice(i);",
        "16\t    for (int i = 0; i < 3; i++) {",
        "18\t        g = acc + 1;",
        "twice (x=1) at tt_steps.c:12",
        "12\t}",
        "11\t    return y;",
        "{hex} in main () at tt_steps.c:17",
    ]);
}

#[test]
fn reverse_continue_to_the_previous_hit_and_the_start() {
    let prog = compile("tt_loop", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let server = Server::start(&trace);
    let r = server.gdb(
        &prog,
        &[
            "break square",
            "continue",
            "continue",
            "continue",
            "print x",
            "reverse-continue",
            "print x",
            "reverse-continue",
            "print x",
            "delete",
            "reverse-continue",
            "kill",
        ],
    );
    let values: Vec<&str> = r
        .stdout
        .lines()
        .filter_map(|l| {
            l.split_once(" = ")
                .filter(|(k, _)| k.starts_with('$'))
                .map(|(_, v)| v)
        })
        .collect();
    assert_eq!(values, ["2", "1", "0"], "{}", r.stdout);
    r.line("No more reverse-execution history.");
}

#[test]
fn watchpoints_forward_and_in_reverse() {
    let prog = compile("tt_loop", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let server = Server::start(&trace);
    let r = server.gdb(
        &prog,
        &[
            "break tt_loop.c:26",
            "continue",
            "watch total",
            "reverse-continue",
            "print total",
            "reverse-continue",
            "continue",
            "kill",
        ],
    );
    r.block(&["Old value = 140", "New value = 91"]);
    r.block(&["Old value = 91", "New value = 55"]);
    r.block(&["Old value = 55", "New value = 91"]);
    r.line("$1 = 91");
}

#[test]
fn threads_and_errno() {
    let prog = compile("tt_threads", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let server = Server::start(&trace);
    let r = server.gdb(
        &prog,
        &[
            "break bump",
            "continue",
            "info threads",
            "print errno",
            "print id",
            "continue",
            "thread 1",
            "print errno",
            "kill",
        ],
    );
    // Three threads; the one that stopped is selected.
    r.line("* {n}    Thread {n}.{n} (tt_threads) bump (id={n}) at tt_threads.c:{n}");
    assert_eq!(
        r.count("  {n}    Thread {*}") + r.count("* {n}    Thread {*}"),
        3,
        "{}",
        r.stdout
    );
    // errno is thread-local (found through fs_base).
    r.line("$1 = 0");
    r.line("[Switching to thread 1 {*}");
}

#[test]
fn refused_writes_monitor_commands_and_a_second_client() {
    let prog = compile("tt_loop", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let server = Server::start(&trace);
    let first = server.gdb(
        &prog,
        &[
            "break square",
            "continue",
            "set var counter = 99",
            "print counter",
            "monitor when",
            "monitor bookmark here",
            "monitor info bookmarks",
            "continue",
            "monitor goto here",
            "monitor nonsense",
            "detach",
        ],
    );
    // The recorded past cannot change: gdb reports the refused write, and goes on.
    assert!(
        first.stderr.contains("Cannot access memory")
            || first.stdout.contains("Cannot access memory"),
        "{}\n{}",
        first.stdout,
        first.stderr
    );
    first.line("$1 = 0");
    // gdb shows what monitor commands print on its stderr.
    first.err_line("Current position: {n}:{n}:{hex}:{n}");
    first.err_line("Bookmark here at {n}:{n}:{hex}:{n}.");
    first.err_line("here       {n}:{n}:{hex}:{n}");
    first.err_line("square (x=0) at tt_loop.c:{n}");
    first.err_line("Undefined command: \"nonsense\".  Try \"help\".");
    // A second client finds the replay where the first left it (at the bookmark).
    let second = server.gdb(&prog, &["print x", "monitor when", "kill"]);
    second.line("$1 = 0");
    let pos = |r: &Run| {
        r.stderr
            .lines()
            .find_map(|l| l.strip_prefix("Current position: "))
            .map(str::to_string)
    };
    assert!(pos(&first).is_some());
    assert_eq!(
        pos(&first),
        pos(&second),
        "{}\n{}",
        first.stderr,
        second.stderr
    );
    // gdb's `kill` does not end the server: a replay starts again, for the next client.
    let third = server.gdb(&prog, &["break square", "continue", "print x", "kill"]);
    third.line("Breakpoint 1, square (x=0) at tt_loop.c:{n}");
    third.line("$1 = 0");
}

#[test]
fn replay_with_gdb_starts_gdb_connected_with_the_symbols() {
    let prog = compile("tt_loop", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let commands = scratch().join("gdb-commands-for-replay-gdb");
    std::fs::write(
        &commands,
        "break square\ncontinue\ncontinue\nprint x\nmonitor bookmark b\ncontinue\nmonitor goto b\n\
         print x\nreverse-continue\nprint x\nkill\nquit\n",
    )
    .expect("commands file");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hindsight"));
    cmd.arg("replay")
        .arg(&trace)
        .args(["-q", "--gdb"])
        .env("HINDSIGHT_DIR", scratch().join("hindsight-dir"))
        .stdin(std::fs::File::open(&commands).expect("commands"));
    let (r, finished) = collect_with_timeout(&mut cmd);
    assert!(finished, "{}\n{}", r.stdout, r.stderr);
    r.line("Breakpoint 1, square (x=1) at tt_loop.c:{n}");
    r.line("(gdb) $1 = 1");
    // gdb forgets what it read before a monitor command (the one that --gdb starts does).
    r.line("(gdb) {*}$2 = 1");
    r.line("(gdb) $3 = 0");
    assert!(!r.stderr.contains("(The replay moved"), "{}", r.stderr);
    // gdb has the terminal: no server log in it.
    assert!(!r.stderr.contains("hindsight: gdb"), "{}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
}

#[test]
fn a_malformed_packet_gets_an_error_and_the_session_goes_on() {
    use std::io::{Read as _, Write as _};
    let prog = compile("tt_loop", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let server = Server::start(&trace);
    let mut s =
        std::net::TcpStream::connect(("127.0.0.1", server.port)).expect("connects to the server");
    s.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .expect("timeout");
    // Sends one packet, acknowledges the reply, returns it.
    let mut exchange = |body: &str| -> String {
        let sum = body.bytes().fold(0u8, |a, b| a.wrapping_add(b));
        s.write_all(format!("${body}#{sum:02x}").as_bytes())
            .expect("send");
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        // Until a whole reply packet ($...#cc) has come.
        while !got
            .iter()
            .rposition(|&b| b == b'#')
            .is_some_and(|i| got.len() >= i + 3 && got.contains(&b'$'))
        {
            let n = s.read(&mut buf).expect("reply");
            assert!(n > 0, "the server closed the connection");
            got.extend_from_slice(&buf[..n]);
        }
        s.write_all(b"+").expect("ack");
        String::from_utf8_lossy(&got).into_owned()
    };
    assert!(exchange("qSupported:multiprocess+").contains("ReverseContinue+"));
    assert!(exchange("Zq,zz").contains("$E01#"), "a malformed packet");
    // The session goes on: a stop reply, memory, and a refused write.
    assert!(exchange("?").contains("$T05"));
    // The registers of the thread that stopped, though this session has not named one yet.
    let g = exchange("g");
    assert!(!g.contains("$E") && g.contains("$da"), "{g}");
    assert!(exchange("M0,1:00").contains("$E"));
}

/// gdb run natively on `prog` (no recording) with the same commands, where the remote
/// session's first `continue` is gdb's `run`.
fn native_gdb(prog: &Path, cmds: &[&str]) -> Run {
    let mut cmd = Command::new("gdb");
    cmd.args(["-batch", "-nx"]).arg(prog);
    let mut ran = false;
    for c in cmds {
        let c = if *c == "continue" && !ran {
            ran = true;
            "run"
        } else {
            c
        };
        cmd.arg("-ex").arg(c);
    }
    let (r, finished) = collect_with_timeout(cmd.stdin(Stdio::null()));
    assert!(finished, "gdb did not finish: {}\n{}", r.stdout, r.stderr);
    r
}

/// What gdb says about where the program is and what it holds: stop lines, source lines,
/// frames and values, with addresses blanked (stack addresses differ between a recording
/// and a run of gdb's own).
fn where_and_what(out: &str) -> Vec<String> {
    let mut kept = Vec::new();
    for line in out.lines() {
        let interesting = line.starts_with("Breakpoint ")
            || line.starts_with("Run till exit")
            || line.starts_with("Value returned")
            || line.starts_with('$')
            || line.starts_with('#')
            || line.contains(" at gdb_calls.c:")
            || line.contains(" at gdb_rsteps.c:")
            || line.starts_with("Old value")
            || line.starts_with("New value")
            || line.starts_with("Value = ")
            || line.starts_with("Hardware ")
            || line
                .split_once('\t')
                .is_some_and(|(n, _)| n.parse::<u32>().is_ok());
        if !interesting {
            continue;
        }
        let mut blanked = String::new();
        let mut rest = line;
        while let Some(i) = rest.find("0x") {
            blanked.push_str(&rest[..i]);
            blanked.push_str("0x?");
            rest = rest[i + 2..].trim_start_matches(|c: char| c.is_ascii_hexdigit());
        }
        blanked.push_str(rest);
        kept.push(blanked);
    }
    kept
}

#[test]
fn forward_stepping_and_watchpoints_print_what_gdb_prints_natively() {
    let prog = compile("gdb_calls", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let server = Server::start(&trace);
    let cmds = [
        "break main",
        "continue",
        "next",
        "next",
        "next",
        "next",
        "next",
        "print errno",
        "print e",
        "print fd",
        "print buf",
        "x/s buf",
        "next",
        "next",
        "step",
        "print *p",
        "next",
        "print p->x",
        "finish",
        "hbreak fact",
        "continue",
        "print n",
        "backtrace",
        "delete",
        "watch calls",
        "continue",
        "continue",
        "delete",
        "rwatch calls",
        "continue",
        "delete",
        "awatch calls",
        "continue",
        "continue",
        "delete",
        "break 35",
        "continue",
        "print f",
        "print pt",
        "info sharedlibrary",
    ];
    let remote = server.gdb(&prog, &cmds);
    let native = native_gdb(&prog, &cmds);
    let (r, n) = (
        where_and_what(&remote.stdout),
        where_and_what(&native.stdout),
    );
    assert_eq!(
        r, n,
        "\n--- over the replay ---\n{}\n--- natively ---\n{}",
        remote.stdout, native.stdout
    );
    // errno is thread-local: found through fs_base.
    remote.line("$1 = 2");
    remote.line("$8 = 120");
    remote.line("Breakpoint {n}, fact (n=5) at gdb_calls.c:14");
    // The C library's symbols are there.
    remote.line("{hex}  {hex}  Yes{*}libc.so.6");
}

#[test]
fn the_end_of_the_recording_is_the_end_of_history_and_a_next_client_starts_again() {
    let prog = compile("gdb_calls", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let server = Server::start(&trace);
    let r = server.gdb(
        &prog,
        &[
            "break fact",
            "continue",
            "continue",
            "delete",
            "continue",
            "x/i $pc",
            "reverse-stepi",
            "x/i $pc",
            "stepi",
            "x/i $pc",
            "break fact",
            "reverse-continue",
            "print n",
            "continue",
            "continue",
            "continue",
            "continue",
            "continue",
            "continue",
        ],
    );
    // The exit syscall, not executed yet: the program is there to go back from.
    r.seq(&[
        "Breakpoint 1, fact (n=4) at gdb_calls.c:14",
        "No more reverse-execution history.",
        "{*}_exit{*}",
        "=> {hex} <{*}_exit+{n}>:\tsyscall",
        // One instruction back, and forward again.
        "=> {hex} <{*}_exit+{n}>:\tmov{*}",
        "=> {hex} <{*}_exit+{n}>:\tsyscall",
        // Back to the last hit of the breakpoint: the innermost call.
        "Breakpoint 2, fact (n=1) at gdb_calls.c:14",
        "$1 = 1",
        "No more reverse-execution history.",
        "[Inferior 1 (process {n}) exited with code 03]",
    ]);
    // The next client finds the replay at its start again.
    let second = server.gdb(&prog, &["break fact", "continue", "print n", "kill"]);
    second.line("Breakpoint 1, fact (n=5) at gdb_calls.c:14");
    second.line("$1 = 5");
}

#[test]
fn extended_remote_run_starts_the_replay_again_and_writes_that_change_nothing_pass() {
    let prog = compile("gdb_calls", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let server = Server::start(&trace);
    let mut cmd = Command::new("gdb");
    cmd.args(["-batch", "-nx"])
        .arg("-ex")
        .arg(format!("file {}", prog.display()))
        .args(["-ex", "set remotetimeout 30"])
        .arg("-ex")
        .arg(format!("target extended-remote 127.0.0.1:{}", server.port));
    for c in [
        "break fact",
        "continue",
        "continue",
        "run",
        "print n",
        "info threads",
        "set var n = 7",
        "print n",
        "set $rip = $rip",
        "set $rip = $rip + 1",
        "jump 36",
        "print n",
        "kill",
    ] {
        cmd.arg("-ex").arg(c);
    }
    let (r, finished) = collect_with_timeout(cmd.stdin(Stdio::null()));
    assert!(finished, "{}\n{}", r.stdout, r.stderr);
    r.seq(&[
        "Breakpoint 1, fact (n=5) at gdb_calls.c:14",
        "Breakpoint 1, fact (n=4) at gdb_calls.c:14",
        // `run`: from the start again, to the first hit.
        "Breakpoint 1, fact (n=5) at gdb_calls.c:14",
        "$1 = 5",
        "$2 = 5",
        "$3 = 5",
    ]);
    // The process is named by its recorded pid, which is its thread's id.
    let thread = r
        .stdout
        .lines()
        .find_map(|l| l.split("Thread ").nth(1)?.split_whitespace().next())
        .unwrap_or_else(|| panic!("no thread in {}", r.stdout));
    let (pid, tid) = thread.split_once('.').expect("pid.tid");
    assert_eq!(pid, tid, "{}", r.stdout);
    assert_ne!(pid, "1", "{}", r.stdout);
    // Writes refused with an error each (gdb's `run` writes orig_rax; that passes).
    assert!(!r.stderr.contains("orig_rax"), "{}", r.stderr);
    assert_eq!(
        r.stderr.matches("Cannot access memory").count(),
        1,
        "{}",
        r.stderr
    );
    assert_eq!(
        r.stderr.matches("Could not write register \"rip\"").count(),
        2,
        "{}",
        r.stderr
    );
}

#[test]
fn gdb_is_told_when_a_monitor_command_moved_the_replay() {
    let prog = compile("gdb_calls", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let server = Server::start(&trace);
    let r = server.gdb(
        &prog,
        &[
            "break fact",
            "continue",
            "continue",
            "monitor bookmark second",
            "continue",
            "print n",
            "monitor when",
            "monitor goto second",
            "monitor continue",
            "monitor kill",
            "maintenance flush register-cache",
            "maintenance flush dcache",
            "print n",
            "backtrace",
            "continue",
            "print n",
            "kill",
        ],
    );
    r.seq(&[
        "Breakpoint 1, fact (n=3) at gdb_calls.c:14",
        "$1 = 3",
        "$2 = 4",
        "#0  fact (n=4) at gdb_calls.c:14",
        "#1  {hex} in fact (n=5) at gdb_calls.c:17",
        "#2  {hex} in main () at gdb_calls.c:34",
        "Breakpoint 1, fact (n=3) at gdb_calls.c:14",
        "$3 = 3",
    ]);
    // gdb runs the program itself: monitor does not do it behind its back.
    r.err_line("'continue' is gdb's own command: type it without 'monitor'{*}");
    r.err_line("'kill' is gdb's own command: type it without 'monitor'{*}");
    // Only the command that moved says so.
    assert_eq!(
        r.stderr.matches("(The replay moved").count(),
        1,
        "{}",
        r.stderr
    );
}

#[test]
fn reverse_commands_land_where_gdb_record_full_lands() {
    let prog = compile("gdb_rsteps", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let server = Server::start(&trace);
    // From the last line of main, back through the loop, the calls and the recursion, and
    // forward again.
    let steps = [
        "break 31",
        "continue",
        "print g",
        "print a",
        "reverse-next",
        "reverse-next",
        "reverse-next",
        "print i",
        "reverse-step",
        "reverse-step",
        "reverse-step",
        "reverse-step",
        "backtrace",
        "reverse-finish",
        "reverse-step",
        "reverse-step",
        "reverse-step",
        "backtrace",
        "reverse-finish",
        "reverse-finish",
        "reverse-stepi",
        "reverse-stepi",
        "reverse-nexti",
        "print $pc == $pc",
        "next",
        "step",
        "finish",
    ];
    // Then watchpoints and a conditional breakpoint in reverse (gdb's record full does not
    // report watchpoints going back: these are checked by hand).
    let more = [
        "watch g",
        "reverse-continue",
        "reverse-continue",
        "reverse-continue",
        "delete",
        "break depth if n == 0",
        "reverse-continue",
        "backtrace",
        "continue",
        "backtrace",
    ];
    let all: Vec<&str> = steps.iter().chain(more.iter()).copied().collect();
    let remote = server.gdb(&prog, &all);
    // gdb natively: recording from main on, then the same commands.
    let mut native_cmds = vec!["break main", "continue", "record full"];
    native_cmds.extend(steps);
    let native = native_gdb(&prog, &native_cmds);
    let r: Vec<String> = where_and_what(&remote.stdout)
        .into_iter()
        .skip_while(|l| !l.starts_with("Breakpoint 1,"))
        .collect();
    // The native run's first lines are its stop at main (its breakpoint 1).
    let n: Vec<String> = where_and_what(&native.stdout)
        .into_iter()
        .skip_while(|l| !l.starts_with("Breakpoint 2,"))
        .map(|l| l.replace("Breakpoint 2,", "Breakpoint 1,"))
        .collect();
    assert!(n.len() > 30, "{}\n{}", native.stdout, native.stderr);
    assert_eq!(
        r[..n.len().min(r.len())],
        n[..],
        "\n--- over the replay ---\n{}\n--- gdb's record full ---\n{}",
        remote.stdout,
        native.stdout
    );
    // g: 0, -1, 2, 1, 7, 6, 15 at the `finish` in mix(3); going back, gdb shows each write
    // undone (the old value is the later one).
    remote.block(&[
        "Hardware watchpoint 2: g",
        "Old value = 15",
        "New value = 6",
        "{hex} in mix (x=3) at gdb_rsteps.c:20",
        "20\t    g += y;",
    ]);
    remote.block(&[
        "Hardware watchpoint 2: g",
        "Old value = 6",
        "New value = 7",
        "{hex} in main () at gdb_rsteps.c:29",
    ]);
    remote.block(&[
        "Hardware watchpoint 2: g",
        "Old value = 7",
        "New value = 1",
        "{hex} in mix (x=2) at gdb_rsteps.c:20",
    ]);
    // The last depth(0) before that is mix(1)'s; the next one, mix(2)'s.
    remote.seq(&[
        "Breakpoint 3, depth (n=0) at gdb_rsteps.c:13",
        "#2  {hex} in mix (x=1) at gdb_rsteps.c:21",
        "Breakpoint 3, depth (n=0) at gdb_rsteps.c:13",
        "#3  {hex} in mix (x=2) at gdb_rsteps.c:21",
    ]);
}

#[test]
fn commands_given_to_the_server_run_before_gdb_sees_the_replay() {
    let prog = compile("gdb_calls", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let server = Server::start_with(
        &trace,
        &["-ex", "break fact", "-ex", "continue", "-ex", "continue"],
    );
    let r = server.gdb(&prog, &["backtrace 1", "print n", "continue", "kill"]);
    r.line("#0  fact (n=4) at gdb_calls.c:14");
    r.line("$1 = 4");
    // The server's own breakpoint went: gdb's continue runs to the end.
    r.line("No more reverse-execution history.");
}

#[test]
fn signals_have_their_names_in_gdb() {
    let prog = compile("tt_signals", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let server = Server::start(&trace);
    let r = server.gdb(
        &prog,
        &[
            "continue",
            "print handled",
            "break on_usr1",
            "continue",
            "backtrace",
            "delete",
            "continue",
            "print handled",
            "continue",
            "continue",
            "backtrace",
            "continue",
        ],
    );
    r.seq(&[
        // The protocol numbers signals its own way (SIGUSR1 is 30 there, 10 is SIGBUS).
        "Program received signal SIGUSR1, User defined signal 1.",
        "$1 = 0",
        "Breakpoint 1, on_usr1 (sig=10) at tt_signals.c:11",
        "#1  <signal handler called>",
        "Program received signal SIGUSR1, User defined signal 1.",
        "$2 = 1",
        "Program received signal SIGUSR1, User defined signal 1.",
        "Program received signal SIGSEGV, Segmentation fault.",
        "#0  {hex} in main () at tt_signals.c:23",
        "Program terminated with signal SIGSEGV, Segmentation fault.",
    ]);
}

#[test]
fn reverse_continue_across_signals() {
    let prog = compile("tt_signals", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let server = Server::start(&trace);
    let r = server.gdb(
        &prog,
        &[
            "break on_usr1",
            "continue",
            "continue",
            "continue",
            "continue",
            "print handled",
            "reverse-continue",
            "print handled",
            "reverse-continue",
            "print handled",
        ],
    );
    assert!(!r.stderr.contains("diverged"), "{}", r.stderr);
    // At the second hit of the handler; back to the signal that called it, then to the
    // first hit.
    r.seq(&["$1 = 1", "$2 = 1", "$3 = 0"]);
}

#[test]
fn a_second_gdb_is_turned_away_while_one_is_connected() {
    let prog = compile("gdb_calls", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let server = std::sync::Arc::new(Server::start(&trace));
    // The first client stays connected a while (gdb's `shell sleep`): the second is turned
    // away while it is (not made to wait for it; loaded machines start gdb slowly, hence
    // the generous margins instead of a time limit).
    let first = {
        let (server, prog) = (server.clone(), prog.clone());
        std::thread::spawn(move || {
            server.gdb(
                &prog,
                &[
                    "shell sleep 12",
                    "break fact",
                    "continue",
                    "print n",
                    "detach",
                ],
            )
        })
    };
    std::thread::sleep(std::time::Duration::from_secs(4));
    let second = server.gdb(&prog, &["print calls"]);
    assert!(!first.is_finished(), "the second gdb waited for the first");
    assert!(
        second.stderr.contains("Target disconnected") || second.stderr.contains("closed"),
        "{}\n{}",
        second.stdout,
        second.stderr
    );
    let first = first.join().expect("the first client");
    first.line("Breakpoint 1, fact (n=5) at gdb_calls.c:14");
    first.line("$1 = 5");
}

#[test]
fn a_client_that_vanishes_mid_command_leaves_the_server_ready() {
    use std::io::Write as _;
    let prog = compile("tt_long", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let server = Server::start(&trace);
    {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", server.port))
            .expect("connects to the server");
        let packet = |body: &str| {
            let sum = body.bytes().fold(0u8, |a, b| a.wrapping_add(b));
            format!("${body}#{sum:02x}")
        };
        // Runs the program (a while), and goes before the answer comes.
        s.write_all(packet("vCont;c").as_bytes()).expect("send");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // The server finishes that run first (another client meanwhile is turned away).
    let mut tries = 0;
    let r = loop {
        let r = server.gdb(
            &prog,
            &["break mark", "reverse-continue", "print i", "kill"],
        );
        tries += 1;
        if !r.stderr.contains("Target disconnected") || tries == 20 {
            break r;
        }
        std::thread::sleep(std::time::Duration::from_millis(300));
    };
    // The run went to the end of the recording; back from there to the last mark.
    r.line("Breakpoint 1, mark (i=507, acc={n}) at tt_long.c:11");
    r.line("$1 = 507");
}
