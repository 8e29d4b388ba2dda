//! Messages between recorded processes (issue 16, seed 001): what `hindsight info --messages`
//! lists for a real producer and consumer, and the consistent state that `info messages`
//! shows around a stop of one of them.

mod common;

use std::ffi::OsStr;
use std::path::Path;

use common::*;

/// Records without the agent: every read and write is then a traced syscall (the default
/// recording runs most of them inside the process, in batches of buffered calls).
fn record_unbuffered(prog: &Path, args: &[&str]) -> (std::path::PathBuf, Run) {
    record_trace_env(prog, args, &[("HINDSIGHT_NO_AGENT", "1")])
}

/// `hindsight info --messages TRACE`.
fn messages(trace: &Path) -> Run {
    hindsight(&[
        OsStr::new("info"),
        OsStr::new("--messages"),
        trace.as_os_str(),
    ])
}

/// The line `info --messages` shows for bytes `start..end` of a channel sent by process
/// `from` and received by process `to`.
fn bytes_sent(from: &str, to: &str, start: u64, end: u64) -> String {
    format!("  channel {{n}} bytes {start}..{end}: process {from} event {{n}}{{*}} -> process {to} event {{n}}{{*}}")
}

/// The recorded pids of `mp_acks`'s producer and consumer, from what it printed.
fn pids(recorded: &Run) -> (String, String) {
    let line = recorded
        .stdout
        .lines()
        .find(|l| l.starts_with("producer "))
        .unwrap_or_else(|| panic!("no producer line in {}", recorded.stdout));
    // "producer P: sent N, consumer C exited 0"
    let words: Vec<&str> = line.split_whitespace().collect();
    (
        words[1].trim_end_matches(':').to_string(),
        words[5].to_string(),
    )
}

/// `hindsight replay TRACE [--process PID] --batch -q -ex CMD…`.
fn replay_cmds(trace: &Path, process: Option<&str>, cmds: &[String]) -> Run {
    let mut args: Vec<&OsStr> = vec![OsStr::new("replay"), trace.as_os_str()];
    if let Some(pid) = process {
        args.extend([OsStr::new("--process"), OsStr::new(pid)]);
    }
    args.extend([OsStr::new("--batch"), OsStr::new("-q")]);
    for c in cmds {
        args.push(OsStr::new("-ex"));
        args.push(OsStr::new(c));
    }
    hindsight(&args)
}

/// `hindsight replay TRACE --process PID --batch -q -ex CMD…`.
fn replay_process(trace: &Path, pid: &str, cmds: &[String]) -> Run {
    replay_cmds(trace, Some(pid), cmds)
}

#[test]
fn info_lists_the_messages_of_a_producer_and_a_consumer() {
    let prog = compile("mp_acks", &[]);
    let (trace, rec) = record_trace(&prog, &["4"]);
    rec.has("consumer: sum=10");
    let (p, c) = pids(&rec);
    let info = messages(&trace);
    info.code(0)
        .line("Channels:   {n} between the recorded processes (messages through shared memory are not followed)")
        .line("  channel {n}: pipe pipe:[{n}]")
        .line(&format!("  channel {{n}}: exit status exit of {c}"))
        // 4 messages, 4 acks, the consumer's end reaped by the producer's waitpid.
        .line("Messages:   9");
    // Each process's reads and writes are calls of one batch that the agent buffered: each
    // call is a moment of its own.
    let in_batches = |from: &str, to: &str, start: u64, end: u64| {
        format!("  channel {{n}} bytes {start}..{end}: process {from} event {{n}} (buffered call {{n}}) -> process {to} event {{n}} (buffered call {{n}})")
    };
    for k in 0..4 {
        info.line(&in_batches(&p, &c, 8 * k, 8 * k + 8))
            .line(&in_batches(&c, &p, 4 * k, 4 * k + 4));
    }
    info.line(&format!(
        "  channel {{n}}: process {c} event {{n}} -> process {p} event {{n}}"
    ));
}

#[test]
fn a_stop_of_the_consumer_holds_the_producer_at_a_consistent_state() {
    let prog = compile("mp_acks", &[]);
    let (trace, rec) = record_trace(&prog, &["4"]);
    let (p, c) = pids(&rec);
    let got = marker_line("mp_acks.c", "CONSUMER-GOT");
    for k in [1, 3] {
        // The consumer has received message k and not acknowledged it yet.
        let mut cmds = vec![format!("break mp_acks.c:{got}"), "run".to_string()];
        cmds.extend((1..k).map(|_| "continue".to_string()));
        cmds.extend(["print got".to_string(), "info messages".to_string()]);
        let r = replay_process(&trace, &c, &cmds);
        r.has(&format!("$1 = {k}"))
            .line(&format!(
                "Consistent state of 2 processes around the stop of process {c} (messages through shared memory are not followed):"
            ))
            // The producer has sent exactly k messages and received k-1 acks.
            .line(&format!(
                "  process {p}: before event {{n}} of {{n}}{{*}}: sent {k} ({} bytes) on pipe pipe:[{{n}}]{}",
                8 * k,
                if k == 1 {
                    String::new()
                } else {
                    format!("; received {} ({} bytes) on pipe pipe:[{{n}}]", k - 1, 4 * (k - 1))
                }
            ))
            .line(&format!(
                "  process {c} (stopped here): before event {{n}} of {{n}}{{*}}: received {k} ({} bytes) on pipe pipe:[{{n}}]{}",
                8 * k,
                if k == 1 {
                    String::new()
                } else {
                    format!("; sent {} ({} bytes) on pipe pipe:[{{n}}]", k - 1, 4 * (k - 1))
                }
            ))
            .line("Messages in flight: none");
    }
}

#[test]
fn a_stop_of_the_producer_holds_the_consumer_before_its_receive_forward_and_back() {
    let prog = compile("mp_acks", &[]);
    let (trace, rec) = record_trace(&prog, &["4"]);
    let (p, c) = pids(&rec);
    let send = marker_line("mp_acks.c", "PRODUCER-SEND");
    let r = replay_process(
        &trace,
        &p,
        &[
            format!("break mp_acks.c:{send}"),
            "run".into(),
            "continue".into(),
            "continue".into(),
            "print k".into(),
            "info messages".into(),
            "reverse-continue".into(),
            "print k".into(),
            "info messages".into(),
        ],
    );
    // Before message 3: the consumer has taken 2 and acknowledged them, and waits for the
    // third; after going back to message 2, it has taken 1.
    r.has("$1 = 3").has("$2 = 2").seq(&[
        &format!("  process {p} (stopped here): before event {{n}} of {{n}}{{*}}: sent 2 (16 bytes) on pipe pipe:[{{n}}]; received 2 (8 bytes) on pipe pipe:[{{n}}]"),
        &format!("  process {c}: before event {{n}} of {{n}}{{*}}: received 2 (16 bytes) on pipe pipe:[{{n}}]; sent 2 (8 bytes) on pipe pipe:[{{n}}]"),
        "Messages in flight: none",
        &format!("  process {p} (stopped here): before event {{n}} of {{n}}{{*}}: sent 1 (8 bytes) on pipe pipe:[{{n}}]; received 1 (4 bytes) on pipe pipe:[{{n}}]"),
        &format!("  process {c}: before event {{n}} of {{n}}{{*}}: received 1 (8 bytes) on pipe pipe:[{{n}}]; sent 1 (4 bytes) on pipe pipe:[{{n}}]"),
        "Messages in flight: none",
    ]);
}

/// A word after `prefix` in the line of `recorded`'s output that starts with it.
fn word_after(recorded: &Run, starts: &str, prefix: &str) -> String {
    let line = recorded
        .stdout
        .lines()
        .find(|l| l.starts_with(starts))
        .unwrap_or_else(|| panic!("no {starts:?} line in {}", recorded.stdout));
    let rest = &line[line.find(prefix).expect("prefix") + prefix.len()..];
    rest.split(|ch: char| !ch.is_ascii_digit())
        .next()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_client_and_a_server_over_a_unix_socket() {
    let prog = compile("mp_unix", &[]);
    let sock = scratch().join("mp_unix.sock");
    let sock = sock.to_str().expect("a text path");
    let (trace, rec) = record_trace(&prog, &[sock, "4"]);
    let server = word_after(&rec, "server ", "server ");
    let client = word_after(&rec, "server ", "client ");
    // Each direction of the connection is a channel named by both sockets and the path.
    let info = messages(&trace);
    info.code(0)
        .line(&format!(
            "  channel {{n}}: unix stream socket socket:[{{n}}] -> socket:[{{n}}] ({sock})"
        ))
        .line("Messages:   9");
    for k in 0..4 {
        info.line(&bytes_sent(&client, &server, 8 * k, 8 * k + 8))
            .line(&bytes_sent(&server, &client, 8 * k, 8 * k + 8));
    }
    // The server has request 2 and has not answered it: the client has sent 2 requests and
    // received 1 reply, and waits for the second.
    let got = marker_line("mp_unix.c", "SERVER-GOT");
    let r = replay_process(
        &trace,
        &server,
        &[
            format!("break mp_unix.c:{got}"),
            "run".into(),
            "continue".into(),
            "print k".into(),
            "info messages".into(),
        ],
    );
    r.has("$1 = 2")
        .line(&format!(
            "  process {server} (stopped here): before event {{n}} of {{n}}{{*}}: received 2 (16 bytes) on unix stream socket {{*}}; sent 1 (8 bytes) on unix stream socket {{*}}"
        ))
        .line(&format!(
            "  process {client}: before event {{n}} of {{n}}{{*}}: sent 2 (16 bytes) on unix stream socket {{*}}; received 1 (8 bytes) on unix stream socket {{*}}"
        ))
        .line("Messages in flight: none");
}

#[test]
fn a_stop_in_the_middle_of_a_three_process_pipeline() {
    let prog = compile("mp_pipeline", &[]);
    let (trace, rec) = record_trace(&prog, &["4"]);
    rec.has("sum=20");
    let producer = word_after(&rec, "producer ", "producer ");
    let filter = word_after(&rec, "producer ", "filter ");
    let consumer = word_after(&rec, "producer ", "consumer ");
    let got = marker_line("mp_pipeline.c", "FILTER-GOT");
    // The filter has read number 2 and not passed it on. Nothing the producer does depends
    // on the filter until it reaps it: it has sent all four. The consumer has taken only
    // what the filter passed on: one. Numbers 3 and 4 are in the first pipe.
    let r = replay_process(
        &trace,
        &filter,
        &[
            format!("break mp_pipeline.c:{got}"),
            "run".into(),
            "continue".into(),
            "print v".into(),
            "info messages".into(),
        ],
    );
    r.has("$1 = 2").seq(&[
        "Consistent state of 3 processes around the stop of process {n} (messages through shared memory are not followed):",
        &format!("  process {producer}: before event {{n}} of {{n}}{{*}}: sent 4 (32 bytes) on pipe pipe:[{{n}}]"),
        &format!("  process {filter} (stopped here): before event {{n}} of {{n}}{{*}}: received 2 (16 bytes) on pipe pipe:[{{n}}]; sent 1 (8 bytes) on pipe pipe:[{{n}}]"),
        &format!("  process {consumer}: before event {{n}} of {{n}}{{*}}: received 1 (8 bytes) on pipe pipe:[{{n}}]"),
        "Messages in flight: 2",
        &bytes_sent(&producer, &filter, 16, 24),
        &bytes_sent(&producer, &filter, 24, 32),
    ]);
}

#[test]
fn info_and_the_gdb_server_say_what_they_show_of_several_processes() {
    let prog = compile("mp_acks", &[]);
    let (trace, rec) = record_trace(&prog, &["2"]);
    let (p, c) = pids(&rec);
    // `info` counts the messages and says what is not followed.
    hindsight(&[OsStr::new("info"), trace.as_os_str()])
        .code(0)
        .line("Messages:   5 between the processes over {n} channels (messages through shared memory are not followed; --messages lists them)");
    // gdb is served one process, and told so; the others are shown by `monitor`.
    let commands = scratch().join("gdb-commands-for-mp-acks");
    std::fs::write(&commands, "monitor info messages\nquit\n").expect("commands file");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_hindsight"));
    cmd.arg("replay")
        .arg(&trace)
        .args(["-q", "--gdb", "--process", &c])
        .env("HINDSIGHT_DIR", scratch().join("hindsight-dir"))
        .stdin(std::fs::File::open(&commands).expect("commands"));
    let (r, finished) = collect_with_timeout(&mut cmd);
    assert!(finished, "{}\n{}", r.stdout, r.stderr);
    let served_alone = |pid: &str| {
        format!(
            "This gdb server serves process {pid} alone (gdb's multiprocess extensions are not offered): to debug another process of the trace, serve it with --process PID; 'monitor info inferiors' and 'monitor info messages' show where the others stand at this stop."
        )
    };
    r.err_has(&format!(
        "hindsight: the trace has 2 processes. {}",
        served_alone(&c)
    ));
    // Before the consumer's first instruction, the producer can have run to its first
    // wait for an ack: it has sent message 1, which is in flight (gdb shows a monitor
    // command's output on stderr).
    r.err_has(&format!("  process {p}: before event "))
        .err_has(": sent 1 (8 bytes) on pipe pipe:[")
        .err_has(&format!("  process {c} (stopped here): before event 0 of"))
        .err_has("Messages in flight: 1")
        .err_has(&format!("  channel 0 bytes 0..8: process {p} event "));
    // Served the whole tree (no --process), gdb is given the first process; `monitor`
    // says so with the inferiors, and refuses to make another one the served process
    // (gdb would go on with its threads and memory under the first one's name).
    std::fs::write(
        &commands,
        "monitor info inferiors\nmonitor inferior 2\nmonitor thread 2.1\ninfo inferiors\nquit\n",
    )
    .expect("commands file");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_hindsight"));
    cmd.arg("replay")
        .arg(&trace)
        .args(["-q", "--gdb"])
        .env("HINDSIGHT_DIR", scratch().join("hindsight-dir"))
        .stdin(std::fs::File::open(&commands).expect("commands"));
    let (r, finished) = collect_with_timeout(&mut cmd);
    assert!(finished, "{}\n{}", r.stdout, r.stderr);
    r.err_has(&format!(
        "hindsight: the trace has 2 processes. {}",
        served_alone(&p)
    ))
    .err_line(&format!("* 1    process {p} {{*}}stopped here"))
    .err_line(&format!("  2    process {c} {{*}}not created yet"));
    assert_eq!(
        r.stderr.matches(&served_alone(&p)).count(),
        4,
        "told on start, with info inferiors, and at both refusals: {}",
        r.stderr
    );
    // gdb still debugs the first process.
    r.line(&format!("* 1    process {p} {{*}}"));
    assert!(
        !r.stdout.contains(&format!("process {c}")),
        "gdb was shown another process: {}",
        r.stdout
    );
}

#[test]
fn a_loopback_tcp_connection_is_two_channels() {
    let prog = compile("mp_tcp", &[]);
    let (trace, rec) = record_trace(&prog, &["3"]);
    rec.has("served 3");
    let server = word_after(&rec, "server ", "server ");
    let client = word_after(&rec, "server ", "client ");
    let info = messages(&trace);
    info.code(0)
        .line("  channel {n}: tcp connection 127.0.0.1:{n} -> 127.0.0.1:{n}")
        .line("Messages:   7");
    for k in 0..3 {
        info.line(&bytes_sent(&client, &server, 8 * k, 8 * k + 8))
            .line(&bytes_sent(&server, &client, 4 * k, 4 * k + 4));
    }
}

/// `hindsight replay TRACE --batch -q -ex CMD…`: every process of the trace together.
fn replay_tree(trace: &Path, cmds: &[String]) -> Run {
    replay_cmds(trace, None, cmds)
}

#[test]
fn a_breakpoint_in_the_consumer_places_the_producer_at_the_consistent_state() {
    let prog = compile("mp_acks", &[]);
    // With the agent, each process's reads and writes are one batch of buffered calls: the
    // producer is placed between two of them. Without it, each is an event.
    for buffered in [true, false] {
        let (trace, rec) = match buffered {
            true => record_trace(&prog, &["4"]),
            false => record_unbuffered(&prog, &["4"]),
        };
        consumer_stops_place_the_producer(&prog, &trace, &rec);
    }
}

fn consumer_stops_place_the_producer(prog: &Path, trace: &Path, rec: &Run) {
    let trace = trace.to_path_buf();
    let (p, c) = pids(rec);
    let got = marker_line("mp_acks.c", "CONSUMER-GOT");
    let ack = marker_line("mp_acks.c", "PRODUCER-ACK");
    let prog = prog.display().to_string();
    for k in [1u32, 3] {
        let mut cmds = vec![
            "info inferiors".to_string(),
            "inferior 2".to_string(),
            format!("break mp_acks.c:{got} if got == {k}"),
            "continue".to_string(),
            "print got".to_string(),
            "print sum".to_string(),
            "info inferiors".to_string(),
            "inferior 1".to_string(),
            // It stands where its last syscall returned, in libc.
            "up".to_string(),
            "print k".to_string(),
            "info threads".to_string(),
            "info messages".to_string(),
        ];
        cmds.push("inferior 2".to_string());
        cmds.push("print got".to_string());
        let r = replay_tree(&trace, &cmds);
        r.code(0)
            .seq(&[
                // Before anything ran: the consumer is not created yet.
                "  Num  Description       Connection           Executable{*}Position",
                &format!("* 1    process {p}{{*}} 1 (replay){{*}}{prog}{{*}} before event {{n}} of {{n}}{{*}}, stopped here"),
                &format!("  2    process {c}{{*}} 1 (replay){{*}}{prog}{{*}} not created yet"),
                &format!("[Switching to inferior 2 [process {c}] ({prog})]"),
                &format!("[Process {c} is not created yet at this stop: shown at its creation]"),
                "[Switching to thread 2.1 {*}",
            ])
            .seq(&[
                &format!("$1 = {k}"),
                &format!("$2 = {}", k * (k - 1) / 2),
                &format!("  1    process {p}{{*}} before event {{n}} of {{n}}{{*}}"),
                &format!("* 2    process {c}{{*}} before event {{n}} of {{n}}{{*}}, stopped here"),
                &format!("[Switching to inferior 1 [process {p}] ({prog})]"),
                &format!("[Process {p} placed before event {{n}} of {{n}}{{*}}: the latest state consistent with the stop]"),
                "[Switching to thread 1.1 {*}",
                // The producer sent message k and waits for its acknowledgement: it stands
                // at its read, the latest instant before it receives.
                &format!("#1  {{hex}} in main (argc=2, argv={{hex}}) at mp_acks.c:{ack}"),
                // (Each inferior has its own value history.)
                &format!("$1 = {k}"),
                "* 1.1  Thread {*}",
            ])
            .line(&format!(
                "Consistent state of 2 processes around the stop of process {c} (messages through shared memory are not followed):"
            ))
            // The producer has sent exactly k messages and received k-1 acks.
            .line(&format!(
                "  process {p}: before event {{n}} of {{n}}{{*}}: sent {k} ({} bytes) on pipe pipe:[{{n}}]{}",
                8 * k,
                if k == 1 {
                    String::new()
                } else {
                    format!("; received {} ({} bytes) on pipe pipe:[{{n}}]", k - 1, 4 * (k - 1))
                }
            ))
            .line(&format!("  process {c} (stopped here): {{*}}"))
            .line("Messages in flight: none")
            // Back in the consumer: where the breakpoint stopped it.
            .has(&format!("$3 = {k}"));
    }
}

#[test]
fn a_producer_placed_between_its_buffered_calls_goes_on_from_there() {
    let prog = compile("mp_acks", &[]);
    let (trace, rec) = record_trace(&prog, &["4"]);
    let (p, c) = pids(&rec);
    let got = marker_line("mp_acks.c", "CONSUMER-GOT");
    let send = marker_line("mp_acks.c", "PRODUCER-SEND");
    let r = replay_tree(
        &trace,
        &[
            "inferior 2".into(),
            format!("break mp_acks.c:{got} if got == 2"),
            "continue".into(),
            "info inferiors".into(),
            "inferior 1".into(),
            "reverse-stepi".into(),
            format!("break mp_acks.c:{send}"),
            "continue".into(),
            "print k".into(),
            "info messages".into(),
        ],
    );
    // The producer's reads and writes are calls of one batch: it is stopped at its third
    // (sent 2, received 1), going back from there is refused (an error: the batch's exit
    // status says so), going on works (to message 3; the consumer then stands having
    // acknowledged 2).
    r.seq(&[
        &format!("  1    process {p}{{*}} before event {{n}} of {{n}}, after 3 of its {{n}} buffered calls"),
        &format!("* 2    process {c}{{*}} before event {{n}} of {{n}}, after 3 of its {{n}} buffered calls, stopped here"),
        &format!("[Process {p} placed before event {{n}} of {{n}}, after 3 of its {{n}} buffered calls: the latest state consistent with the stop]"),
        &format!("Breakpoint 2, main (argc=2, argv={{hex}}) at mp_acks.c:{send}"),
        "$1 = 3",
        &format!("  process {p} (stopped here): before event {{n}} of {{n}}, after 4 of its {{n}} buffered calls: sent 2 (16 bytes) on pipe pipe:[{{n}}]; received 2 (8 bytes) on pipe pipe:[{{n}}]"),
        &format!("  process {c}: before event {{n}} of {{n}}, after 4 of its {{n}} buffered calls: received 2 (16 bytes) on pipe pipe:[{{n}}]; sent 2 (8 bytes) on pipe pipe:[{{n}}]"),
    ]);
    r.err_has("This process was placed at call 4 of the buffered calls of its event");
}

#[test]
fn continue_and_reverse_continue_go_across_processes_in_happens_before_order() {
    let prog = compile("mp_acks", &[]);
    let (trace, rec) = record_trace(&prog, &["4"]);
    let (p, c) = pids(&rec);
    let send = marker_line("mp_acks.c", "PRODUCER-SEND");
    let got = marker_line("mp_acks.c", "CONSUMER-GOT");
    let prog = prog.display().to_string();
    let mut cmds = vec![
        format!("break mp_acks.c:{send} inferior 1"),
        format!("break mp_acks.c:{got} inferior 2"),
    ];
    // Message k is sent before it is received, and received before message k+1 is sent
    // (the producer waits for its acknowledgement): the hits are ordered by happens-before.
    for _ in 0..8 {
        cmds.extend(["continue".to_string(), "print k".to_string()]);
    }
    for _ in 0..7 {
        cmds.extend(["reverse-continue".to_string(), "print k".to_string()]);
    }
    cmds.push("info inferiors".to_string());
    let r = replay_tree(&trace, &cmds);
    let producer = format!("[Switching to inferior 1 [process {p}] ({prog})]");
    let consumer = format!("[Switching to inferior 2 [process {c}] ({prog})]");
    let mut want: Vec<String> = Vec::new();
    for k in 1..=4 {
        if k > 1 {
            want.push(producer.clone());
        }
        want.push(format!(
            "Breakpoint 1, main (argc=2, argv={{hex}}) at mp_acks.c:{send}"
        ));
        want.push(format!("${{n}} = {k}"));
        want.push(consumer.clone());
        want.push(format!(
            "Breakpoint 2, consume (in={{n}}, ack={{n}}, n=4) at mp_acks.c:{got}"
        ));
        want.push(format!("${{n}} = {k}"));
    }
    // And back, the other way round.
    for k in (1..=4).rev() {
        want.push(producer.clone());
        want.push(format!(
            "Breakpoint 1, main (argc=2, argv={{hex}}) at mp_acks.c:{send}"
        ));
        want.push(format!("${{n}} = {k}"));
        if k > 1 {
            want.push(consumer.clone());
            want.push(format!(
                "Breakpoint 2, consume (in={{n}}, ack={{n}}, n=4) at mp_acks.c:{got}"
            ));
            want.push(format!("${{n}} = {}", k - 1));
        }
    }
    want.push(format!("* 1    process {p}{{*}} stopped here"));
    // The consumer waits for the first message.
    want.push(format!(
        "  2    process {c}{{*}} before event {{n}} of {{n}}{{*}}"
    ));
    let want: Vec<&str> = want.iter().map(String::as_str).collect();
    r.code(0).seq(&want);
}

#[test]
fn break_message_stops_before_the_kth_receive_at_the_consistent_state() {
    let prog = compile("mp_acks", &[]);
    let (trace, rec) = record_trace(&prog, &["4"]);
    let (p, c) = pids(&rec);
    let prog = prog.display().to_string();
    let r = replay_tree(
        &trace,
        &[
            format!("break message {p} {c} 3"),
            "continue".into(),
            "info inferiors".into(),
            "info messages".into(),
            "inferior 1".into(),
            "up".into(),
            "print k".into(),
        ],
    );
    // The consumer has taken two messages and acknowledged them; the producer has sent the
    // third, which is in flight, and waits for its acknowledgement.
    r.code(0).seq(&[
        &format!("Quantum event 1: stop before process {c} receives message 3 from process {p} (its event {{n}})"),
        &format!("[Switching to inferior 2 [process {c}] ({prog})]"),
        &format!("* 2    process {c}{{*}} stopped here"),
        &format!("  process {p}: before event {{n}} of {{n}}{{*}}: sent 3 (24 bytes) on pipe pipe:[{{n}}]; received 2 (8 bytes) on pipe pipe:[{{n}}]"),
        &format!("  process {c} (stopped here): before event {{n}} of {{n}}{{*}}: received 2 (16 bytes) on pipe pipe:[{{n}}]; sent 2 (8 bytes) on pipe pipe:[{{n}}]"),
        "Messages in flight: 1",
        &bytes_sent(&p, &c, 16, 24),
        &format!("[Switching to inferior 1 [process {p}] ({prog})]"),
        "$1 = 3",
    ]);
    // A message that was never sent is refused, saying how many there were.
    let r = replay_tree(&trace, &[format!("break message {p} {c} 9")]);
    r.err_has(&format!(
        "Process {c} received 4 messages from process {p}; there is no message 9."
    ));
}

#[test]
fn a_breakpoint_in_the_producer_holds_the_consumer_before_its_receive() {
    let prog = compile("mp_acks", &[]);
    let (trace, rec) = record_trace(&prog, &["4"]);
    let (p, c) = pids(&rec);
    let send = marker_line("mp_acks.c", "PRODUCER-SEND");
    let read = marker_line("mp_acks.c", "CONSUMER-READ");
    let prog = prog.display().to_string();
    let k = 3;
    let r = replay_tree(
        &trace,
        &[
            format!("break mp_acks.c:{send} if k == {k}"),
            "continue".into(),
            "inferior 2".into(),
            "up".into(),
            "print k".into(),
            "print sum".into(),
            "info inferiors".into(),
            "info messages".into(),
        ],
    );
    // The producer is about to send message 3, having had 2 acknowledgements: the consumer
    // has taken 2 messages (sum 1+2) and stands at its read of the third.
    r.code(0).seq(&[
        &format!("[Switching to inferior 2 [process {c}] ({prog})]"),
        &format!("[Process {c} placed before event {{n}} of {{n}}{{*}}: the latest state consistent with the stop]"),
        &format!("#1  {{hex}} in consume (in=3, ack=6, n=4) at mp_acks.c:{read}"),
        &format!("$1 = {k}"),
        "$2 = 3",
        &format!("  1    process {p}{{*}} stopped here"),
        &format!("* 2    process {c}{{*}} before event {{n}} of {{n}}{{*}}"),
        &format!("  process {p} (stopped here): before event {{n}} of {{n}}{{*}}: sent 2 (16 bytes) on pipe pipe:[{{n}}]; received 2 (8 bytes) on pipe pipe:[{{n}}]"),
        &format!("  process {c}: before event {{n}} of {{n}}{{*}}: received 2 (16 bytes) on pipe pipe:[{{n}}]; sent 2 (8 bytes) on pipe pipe:[{{n}}]"),
        "Messages in flight: none",
    ]);
}

#[test]
fn a_three_process_pipeline_replayed_together() {
    let prog = compile("mp_pipeline", &[]);
    let (trace, rec) = record_trace(&prog, &["4"]);
    let producer = word_after(&rec, "producer ", "producer ");
    let filter = word_after(&rec, "producer ", "filter ");
    let consumer = word_after(&rec, "producer ", "consumer ");
    let got = marker_line("mp_pipeline.c", "FILTER-GOT");
    let wait = marker_line("mp_pipeline.c", "PRODUCER-WAIT");
    // The processes are inferiors in the order they were created: the producer, the filter
    // (its first child), the consumer.
    let r = replay_tree(
        &trace,
        &[
            format!("break mp_pipeline.c:{got} inferior 2 if v == 2"),
            "continue".into(),
            "print v".into(),
            "info inferiors".into(),
            "info messages".into(),
            "inferior 3".into(),
            "up".into(),
            "print sum".into(),
            "inferior 1".into(),
            "up".into(),
        ],
    );
    // The filter has read number 2 and not passed it on. Nothing the producer does depends
    // on the filter until it reaps it: it has sent all four and waits for the filter's end.
    // The consumer has taken only what the filter passed on: one number, doubled.
    r.code(0).seq(&[
        &format!("[Switching to inferior 2 [process {filter}] {{*}}"),
        "$1 = 2",
        &format!("  1    process {producer}{{*}} before event {{n}} of {{n}}{{*}}"),
        &format!("* 2    process {filter}{{*}} stopped here"),
        &format!("  3    process {consumer}{{*}} before event {{n}} of {{n}}{{*}}"),
        &format!("  process {producer}: before event {{n}} of {{n}}{{*}}: sent 4 (32 bytes) on pipe pipe:[{{n}}]"),
        &format!("  process {filter} (stopped here): before event {{n}} of {{n}}{{*}}: received 2 (16 bytes) on pipe pipe:[{{n}}]; sent 1 (8 bytes) on pipe pipe:[{{n}}]"),
        &format!("  process {consumer}: before event {{n}} of {{n}}{{*}}: received 1 (8 bytes) on pipe pipe:[{{n}}]"),
        "Messages in flight: 2",
        &format!("[Switching to inferior 3 [process {consumer}] {{*}}"),
        "$1 = 2",
        &format!("[Switching to inferior 1 [process {producer}] {{*}}"),
        &format!("#1  {{hex}} in main (argc=2, argv={{hex}}) at mp_pipeline.c:{wait}"),
    ]);
}

#[test]
fn a_unix_socket_client_and_server_replayed_together() {
    let prog = compile("mp_unix", &[]);
    let sock = scratch().join("mp_unix_tree.sock");
    let sock = sock.to_str().expect("a text path");
    let (trace, rec) = record_trace(&prog, &[sock, "4"]);
    let server = word_after(&rec, "server ", "server ");
    let client = word_after(&rec, "server ", "client ");
    let got = marker_line("mp_unix.c", "SERVER-GOT");
    let send = marker_line("mp_unix.c", "CLIENT-SEND");
    let r = replay_tree(
        &trace,
        &[
            format!("break mp_unix.c:{got} if k == 2"),
            "continue".into(),
            "info messages".into(),
            "inferior 2".into(),
            "up".into(),
            "print k".into(),
            // Forward across both: the client's next request comes after the server's reply.
            format!("break mp_unix.c:{send}"),
            "continue".into(),
            "print k".into(),
            "reverse-continue".into(),
            "print served".into(),
        ],
    );
    // The server has request 2 and has not answered it: the client has sent 2 requests and
    // received 1 reply, and waits for the second.
    r.code(0).seq(&[
        &format!("  process {server} (stopped here): before event {{n}} of {{n}}{{*}}: received 2 (16 bytes) on unix stream socket {{*}}; sent 1 (8 bytes) on unix stream socket {{*}}"),
        &format!("  process {client}: before event {{n}} of {{n}}{{*}}: sent 2 (16 bytes) on unix stream socket {{*}}; received 1 (8 bytes) on unix stream socket {{*}}"),
        "Messages in flight: none",
        &format!("[Switching to inferior 2 [process {client}] {{*}}"),
        "$1 = 2",
        // The client's third request, after the server answered the second (one numbering
        // across the processes).
        "Breakpoint 2, client {*}",
        "$2 = 3",
        // Back: the server's hit on request 2 is the one before.
        &format!("[Switching to inferior 1 [process {server}] {{*}}"),
        "Breakpoint 1, main {*}",
        "$1 = 1",
    ]);
}

#[test]
fn a_shell_pipeline_of_installed_programs_replayed_together() {
    // `sh -c 'echo hello | cat'`: the shell forks a child that writes (the builtin echo) and
    // one that executes cat. Inferiors in the order they were created.
    let sh = Path::new("/bin/sh");
    let (trace, rec) = record_trace(sh, &["-c", "echo hello | cat"]);
    rec.has("hello");
    let r = replay_tree(
        &trace,
        &[
            "break message 2 3 1".into(),
            "continue".into(),
            "info inferiors".into(),
            "info messages".into(),
            "inferior 2".into(),
            "inferior 1".into(),
            "info inferiors".into(),
        ],
    );
    // cat stops before it reads what the echo wrote: the echo has ended (nothing it did
    // waited for cat), the shell waits for its children, the line is in the pipe.
    r.code(0).seq(&[
        "Quantum event 1: stop before process {n} receives message 1 from process {n} (its event {n})",
        "[Switching to inferior 3 [process {n}] ({*}/cat)]",
        "  1    process {n}{*} before event {n} of {n}{*}",
        "  2    process {n}{*} at its end ({n} events)",
        "* 3    process {n}{*}/cat{*} before event {n} of {n}{*}, stopped here",
        "  process {n}: at its end ({n} events): sent 1 (6 bytes) on pipe pipe:[{n}]{*}",
        "Messages in flight: 1",
        "[Switching to inferior 2 [process {n}] {*}",
        "[Process {n} placed at its end ({n} events): the latest state consistent with the stop]",
        "[Switching to inferior 1 [process {n}] {*}",
        "[Process {n} placed before event {n} of {n}{*}: the latest state consistent with the stop]",
        "* 1    process {n}{*} before event {n} of {n}{*}",
        "  3    process {n}{*}/cat{*} before event {n} of {n}{*}, stopped here",
    ]);
}

#[test]
fn a_client_that_sends_before_the_server_accepts_is_matched_from_its_first_byte() {
    // The client's socket has no peer inode until the accept: its first sends used to be
    // left out, its later ones counted from 0, and the links made a cycle.
    let prog = compile("mp_late_accept", &[]);
    let sock = scratch().join("mp_late_accept.sock");
    let sock = sock.to_str().expect("a text path");
    let (trace, rec) = record_trace(&prog, &[sock]);
    let server = word_after(&rec, "server ", "server ");
    let client = word_after(&rec, "client ", "client ");
    let info = messages(&trace);
    info.code(0)
        .line(&format!(
            "  channel {{n}}: unix stream socket socket:[{{n}}] -> socket:[{{n}}] ({sock})"
        ))
        .line("Messages:   5");
    for k in 0..3 {
        info.line(&bytes_sent(&client, &server, 3 * k, 3 * k + 3));
    }
    info.line(&bytes_sent(&server, &client, 0, 3));
    assert!(!info.stdout.contains("socket:[?]"), "{}", info.stdout);
}

#[test]
fn a_descriptor_closed_and_reopened_inside_a_batch_names_what_it_named_at_each_call() {
    let prog = compile("mp_fifo_reuse", &[]);
    let fifo = scratch().join(format!("fifo-reuse-{}", std::process::id()));
    let _ = std::fs::remove_file(&fifo);
    let fifo = fifo.display().to_string();
    let (trace, rec) = record_trace(&prog, &[&fifo]);
    // The same descriptor number for the program file, then the FIFO.
    rec.has("child read 5: hello")
        .line("parent: file 16 bytes, descriptors {n} then {n}, wrote 5");
    let info = messages(&trace);
    // The parent's read of its file (the descriptor was closed later in the same batch) is
    // no receive; its write to the FIFO is the one message to the child.
    info.code(0)
        .line(&format!("  channel {{n}}: fifo {fifo} (fifo:[{{n}}])"))
        .line("Messages:   2")
        .line("  channel {n} bytes 0..5: process {n} event {n} (buffered call {n}) -> process {n} event {n} (buffered call {n})")
        .nowhere("received from outside the recording");
}

#[test]
fn a_breakpoint_without_inferior_is_in_every_process() {
    let prog = compile("mp_acks", &[]);
    let (trace, rec) = record_trace(&prog, &["2"]);
    let (p, c) = pids(&rec);
    let prog = prog.display().to_string();
    let mut cmds: Vec<String> = ["break main", "continue", "break write", "info breakpoints"]
        .map(String::from)
        .to_vec();
    cmds.extend((0..5).map(|_| "continue".to_string()));
    cmds.extend(
        [
            "reverse-continue",
            "reverse-continue",
            "info inferiors",
            "delete 2",
        ]
        .map(String::from),
    );
    cmds.extend((0..2).map(|_| "continue".to_string()));
    let r = replay_tree(&trace, &cmds);
    let producer = format!("[Switching to inferior 1 [process {p}] ({prog})]");
    let consumer = format!("[Switching to inferior 2 [process {c}] ({prog})]");
    // One number across the processes; the producer's sends (8 bytes) and the consumer's
    // acknowledgements (4 bytes) in happens-before order, then the consumer's own output;
    // back, the other way.
    let send = "Breakpoint 2, __GI___libc_write (fd={n}, buf={hex}, nbytes=8) at {*}";
    let ack = "Breakpoint 2, __GI___libc_write (fd={n}, buf={hex}, nbytes=4) at {*}";
    r.seq(&[
        "Breakpoint 2 at {hex}: file {*}write.c, line {n}.",
        "2       breakpoint     keep y   <MULTIPLE>         ",
        "2.1                         y   {hex} in __GI___libc_write at {*} inf 1",
        "2.2                         y   {hex} in __GI___libc_write at {*} inf 2",
        send,
        &consumer,
        ack,
        &producer,
        send,
        &consumer,
        ack,
        "Breakpoint 2, __GI___libc_write (fd=1, buf={hex}, nbytes=16) at {*}",
        ack,
        &producer,
        send,
        &format!("* 1    process {p}{{*}}, stopped here"),
    ]);
    // Deleted in every process: the replay goes on to the end.
    let after_delete = r.stdout.rsplit("process ").next().unwrap_or("").to_string();
    assert!(!after_delete.contains("Breakpoint 2,"), "{}", r.stdout);
    assert_eq!(r.count("Breakpoint 2, {*}"), 7, "{}", r.stdout);
}

/// The recorded pids of `mp_tree`'s parent, worker and second child, from what it printed.
fn tree_pids(recorded: &Run) -> (String, String, String) {
    let line = recorded
        .stdout
        .lines()
        .find(|l| l.starts_with("parent "))
        .unwrap_or_else(|| panic!("no parent line in {}", recorded.stdout));
    // "parent P: worker A exited 3, child B exited 0"
    let words: Vec<&str> = line.split_whitespace().collect();
    (
        words[1].trim_end_matches(':').to_string(),
        words[3].to_string(),
        words[7].to_string(),
    )
}

#[test]
fn info_threads_lists_the_threads_of_every_inferior_as_n_m() {
    let prog = compile("mp_tree", &[]);
    let (trace, rec) = record_trace(&prog, &[]);
    rec.code(0);
    let (_, worker, _) = tree_pids(&rec);
    let helper = marker_line("mp_tree.c", "HELPER-WRITE");
    let cmds = [
        "info threads",
        "break helper",
        "continue",
        "info threads",
        "thread 1.1",
        "info threads",
        "thread 2.2",
        "print arg",
    ]
    .map(String::from);
    let r = replay_tree(&trace, &cmds);
    r.code(0);
    let thread = "Thread {hex} (LWP {n}) \"mp_tree\"";
    let parent_reads = format!("  1.1  {thread} {{hex}} in __GI___libc_read (fd={{n}}, {{*}}");
    r.seq(&[
        // At the start only the parent exists.
        "  Id   Target Id{*}Frame ",
        &format!("* 1.1  {thread} {{*}}"),
        &format!("Breakpoint 1 at {{hex}}: file mp_tree.c, line {helper}."),
        &format!("Thread 2 \"mp_tree\" hit Breakpoint 1, helper (arg=0x0) at mp_tree.c:{helper}"),
        // Every inferior's threads: the parent placed at its read (it has not received
        // what the helper is about to write), the worker's two threads, the helper current.
        "  Id   Target Id{*}Frame ",
        &parent_reads,
        &format!("  2.1  {thread} {{*}}"),
        &format!("* 2.2  {thread} helper (arg=0x0) at mp_tree.c:{helper}"),
        // `thread N.M` switches inferior and thread.
        "[Switching to thread 1.1 (Thread {hex} (LWP {n}))]",
        "#0  {hex} in __GI___libc_read (fd={n}, {*}",
        "  Id   Target Id{*}Frame ",
        &format!("* 1.1  {thread} {{hex}} in __GI___libc_read {{*}}"),
        &format!("  2.1  {thread} {{*}}"),
        &format!("  2.2  {thread} helper (arg=0x0) at mp_tree.c:{helper}"),
        "[Switching to thread 2.2 (Thread {hex} (LWP {n}))]",
        &format!("#0  helper (arg=0x0) at mp_tree.c:{helper}"),
        "$1 = (void *) 0x0",
    ]);
    // The second child is not created yet at the stop: none of its threads.
    assert_eq!(r.count("{*}3.1  Thread {*}"), 0, "{}", r.stdout);
    assert_eq!(
        r.count("* {*}"),
        3,
        "one current thread per table: {}",
        r.stdout
    );
    // One process alone keeps gdb's plain numbers.
    let alone = replay_process(&trace, &worker, &cmds[1..4]);
    alone.code(0).seq(&[
        "  Id   Target Id{*}Frame ",
        &format!("  1    {thread} {{*}}"),
        &format!("* 2    {thread} helper (arg=0x0) at mp_tree.c:{helper}"),
    ]);
}

#[test]
fn forks_and_exits_in_the_replay_are_announced_as_gdb_does() {
    let prog = compile("mp_tree", &[]);
    let (trace, rec) = record_trace(&prog, &[]);
    rec.code(0);
    let (parent, worker, child) = tree_pids(&rec);
    let new_worker = format!("[New inferior 2 (process {worker})]");
    let worker_exits = format!("[Inferior 2 (process {worker}) exited with code 03]");
    let new_child = format!("[New inferior 3 (process {child})]");
    let child_exits = format!("[Inferior 3 (process {child}) exited normally]");
    let parent_exits = format!("[Inferior 1 (process {parent}) exited normally]");
    // The parent runs to its end: every process appears where it was forked and ends.
    let r = replay_tree(&trace, &["continue".to_string()]);
    r.code(0)
        .seq(&[&new_worker, &worker_exits, &parent_exits])
        .seq(&[&new_child, &child_exits, &parent_exits]);
    for line in [
        &new_worker,
        &worker_exits,
        &new_child,
        &child_exits,
        &parent_exits,
    ] {
        assert_eq!(r.count(line), 1, "{line}: {}", r.stdout);
    }
    // A stop in the worker: created, not ended; it then runs to its end (announced once,
    // by the stop itself). Back at its start, nothing is announced; from there, the parent
    // runs to its end: what going back undid (the worker's end, the second child's life) is
    // announced again, the worker's creation (not undone) is not.
    let cmds = [
        "break worker",
        "continue",
        "info inferiors",
        "delete",
        "continue",
        "reverse-continue",
        "inferior 1",
        "continue",
    ]
    .map(String::from);
    let r = replay_tree(&trace, &cmds);
    // (gdb announces the fork before it switches to the child.)
    let to_worker = format!("[Switching to inferior 2 [process {worker}] {{*}}");
    r.code(0).seq(&[
        &new_worker,
        &to_worker,
        "Breakpoint 1, worker () at mp_tree.c:{n}",
        "  3    process {n}{*} not created yet",
        &worker_exits,
        "No more reverse-execution history.",
        &format!("[Switching to inferior 1 [process {parent}] {{*}}"),
        &worker_exits,
        &new_child,
        &child_exits,
        &parent_exits,
    ]);
    assert_eq!(r.count(&new_worker), 1, "{}", r.stdout);
    assert_eq!(r.count(&worker_exits), 2, "{}", r.stdout);
    assert_eq!(r.count(&new_child), 2, "{}", r.stdout);
}

#[test]
fn info_breakpoints_shows_a_breakpoint_of_every_inferior_with_a_location_in_each() {
    let prog = compile("mp_acks", &[]);
    let (trace, rec) = record_trace(&prog, &["2"]);
    let (_, c) = pids(&rec);
    let got = marker_line("mp_acks.c", "CONSUMER-GOT");
    let cmds = [
        "break main",
        "continue",
        "delete 1",
        "break write",
        &format!("break mp_acks.c:{got} inferior 2"),
        "info breakpoints",
        "delete 3",
        "continue",
        "continue",
        "continue",
        "info breakpoints",
        "ignore 2 2",
        "info breakpoints",
        "continue",
        "info breakpoints",
    ]
    .map(String::from);
    let r = replay_tree(&trace, &cmds);
    r.code(0);
    let header = "Num     Type           Disp Enb Address            What";
    let multiple = "2       breakpoint     keep y   <MULTIPLE>         ";
    let location = |k: u32, inf: u32| {
        format!("2.{k}                         y   {{hex}} in __GI___libc_write at {{*}}write.c:{{n}} inf {inf}")
    };
    let send = "Breakpoint 2, __GI___libc_write (fd={n}, buf={hex}, nbytes=8) at {*}";
    let ack = "Breakpoint 2, __GI___libc_write (fd={n}, buf={hex}, nbytes=4) at {*}";
    r.seq(&[
        // gdb's breakpoint with several locations: one in each inferior; a breakpoint of
        // one inferior says whose.
        header,
        multiple,
        &location(1, 1),
        &location(2, 2),
        &format!("3       breakpoint     keep y   {{hex}} in consume at mp_acks.c:{got} inf 2"),
        // Hits in both processes, in happens-before order, counted together.
        send,
        ack,
        send,
        header,
        multiple,
        "\tbreakpoint already hit 3 times",
        &location(1, 1),
        &location(2, 2),
        // The next two hits (the consumer's second ack, its output) pass, in whichever
        // process they are: the consumer runs to its end.
        "Will ignore next 2 crossings of breakpoint 2.",
        multiple,
        "\tbreakpoint already hit 3 times",
        "\tignore next 2 hits",
        &location(1, 1),
        &format!("[Inferior 2 (process {c}) exited normally]"),
        multiple,
        "\tbreakpoint already hit 5 times",
        &location(1, 1),
    ]);
    assert_eq!(r.count(ack), 1, "the second ack passed: {}", r.stdout);
    assert_eq!(r.count("\tignore next {*}"), 1, "{}", r.stdout);
}

#[test]
fn a_dprintf_without_inferior_prints_in_every_process() {
    let prog = compile("mp_acks", &[]);
    let (trace, _) = record_trace(&prog, &["2"]);
    let got = marker_line("mp_acks.c", "CONSUMER-GOT");
    let cmds = [
        "break main",
        "continue",
        "delete 1",
        "dprintf write,\"wrote %lu\\n\", nbytes",
        "info breakpoints",
        &format!("break mp_acks.c:{got} inferior 2"),
        "continue",
        "continue",
        "continue",
    ]
    .map(String::from);
    let r = replay_tree(&trace, &cmds);
    let stop = format!("Breakpoint 3, consume (in={{n}}, ack={{n}}, n=2) at mp_acks.c:{got}");
    r.code(0).seq(&[
        "Dprintf 2 at {hex}: file {*}write.c, line {n}.",
        "2       dprintf        keep y   <MULTIPLE>         ",
        "        printf \"wrote %lu\\n\",nbytes",
        "2.1                         y   {hex} in __GI___libc_write at {*} inf 1",
        "2.2                         y   {hex} in __GI___libc_write at {*} inf 2",
        // Each process's texts as far as the consistent state around each stop goes, in
        // happens-before order: the producer's message before the consumer's stop at it,
        // the consumer's ack before the producer's next message.
        "wrote 8",
        &stop,
        "wrote 4",
        "wrote 8",
        &stop,
        "wrote 4",
        "wrote 16",
    ]);
    // Each call of each process printed once, though the producer's replay ran past the
    // consumer's stops.
    assert_eq!(r.count("wrote 8"), 2, "{}", r.stdout);
    assert_eq!(r.count("wrote 4"), 2, "{}", r.stdout);
    assert_eq!(r.count("wrote 16"), 1, "{}", r.stdout);
}

#[test]
fn output_of_processes_replayed_together_comes_once_in_the_recorded_order() {
    // A parent and a child take turns over two pipes, each printing a line at its turn.
    let prog = compile("mp_talk", &[]);
    let (trace, rec) = record_trace(&prog, &["3"]);
    rec.code(0);
    let native = [
        "parent: turn 1",
        "child: turn 1",
        "parent: turn 2",
        "child: turn 2",
        "parent: turn 3",
        "child: turn 3",
        "parent: done",
    ];
    let program_lines = |r: &Run| -> Vec<String> {
        r.stdout
            .lines()
            .filter(|l| l.starts_with("parent: ") || l.starts_with("child: "))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(program_lines(&rec), native, "the recorded run");
    // Breakpoints in both processes: every `continue` runs both replays, each as far as its
    // next hit, and the one that ran past the stop goes back there. What both printed is
    // told once, in the recording's order (it came twice, and out of order, before), and
    // the parent's own lines come between its stops as they did in the run.
    let mut cmds: Vec<String> = vec![
        "break take_turn if k == 2".into(),
        "tbreak take_turn if k == 3".into(),
    ];
    cmds.extend(std::iter::repeat_n("continue".to_string(), 4));
    cmds.push("info breakpoints".into());
    // (Not -q: the program's output is shown again.)
    let mut args: Vec<&OsStr> = vec![
        OsStr::new("replay"),
        trace.as_os_str(),
        OsStr::new("--batch"),
    ];
    for c in &cmds {
        args.extend([OsStr::new("-ex"), OsStr::new(c)]);
    }
    let r = hindsight(&args);
    r.code(0);
    assert_eq!(program_lines(&r), native, "the replay of both{}", r.dump());
    // Each line comes between the stops it came between in the run: after what happened
    // before it, before the stop of a process that had not written it yet.
    r.seq(&[
        "parent: turn 1",
        "child: turn 1",
        "Breakpoint 1, take_turn (who={*}\"parent\", k=2) at {*}",
        "parent: turn 2",
        "Breakpoint 1, take_turn (who={*}\"child\", k=2) at {*}",
        "child: turn 2",
        // The temporary breakpoint stops at its first hit in any process: the parent's
        // (the child, which ran past the last stop, hit it there first and lost it).
        "Temporary breakpoint 2, take_turn (who={*}\"parent\", k=3) at {*}",
        "parent: turn 3",
        "child: turn 3",
        "parent: done",
    ]);
    // Then it is gone from every process, as gdb's temporary breakpoint is.
    assert_eq!(
        r.count("Temporary breakpoint 2, {*}"),
        1,
        "one hit of the temporary breakpoint{}",
        r.dump()
    );
    r.no_line("2{*}breakpoint{*}del{*}");
    r.line("1       breakpoint     keep y   <MULTIPLE>{*}");
}
