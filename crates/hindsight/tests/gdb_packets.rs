//! The gdb server under packets gdb would not send: threads that do not exist, and thousands
//! of random ones. Each gets an answer (an error where gdb would get one), the server stays
//! up, and its memory stays bounded.

mod common;
use common::*;

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::process::Child;
use std::time::Duration;

/// A replay served on a free local port.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(trace: &Path) -> Server {
        let (child, port, _) = start_gdbserver(trace, &[]);
        Server { child, port }
    }

    fn connect(&self) -> Client {
        let s = TcpStream::connect(("127.0.0.1", self.port)).expect("connects to the server");
        s.set_read_timeout(Some(Duration::from_secs(60)))
            .expect("timeout");
        // A packet follows each acknowledgement at once (Nagle would hold it back).
        s.set_nodelay(true).expect("nodelay");
        Client { s }
    }

    /// The server's resident memory, in KiB.
    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("the server runs");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Client {
    s: TcpStream,
}

impl Client {
    /// Sends one packet (`$body#cc`), acknowledges the reply, returns it.
    fn exchange(&mut self, body: &[u8]) -> String {
        let sum = body.iter().fold(0u8, |a, b| a.wrapping_add(*b));
        let mut p = vec![b'$'];
        p.extend_from_slice(body);
        p.extend_from_slice(format!("#{sum:02x}").as_bytes());
        self.s.write_all(&p).expect("send");
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        // Until a whole reply packet ($...#cc) has come.
        while !got
            .iter()
            .rposition(|&b| b == b'#')
            .is_some_and(|i| got.len() >= i + 3 && got.contains(&b'$'))
        {
            let n = self.s.read(&mut buf).expect("a reply");
            assert!(n > 0, "the server closed the connection after {body:?}");
            got.extend_from_slice(&buf[..n]);
        }
        self.s.write_all(b"+").expect("ack");
        String::from_utf8_lossy(&got).into_owned()
    }
}

#[test]
fn a_thread_that_does_not_exist_gets_an_error_reply() {
    let prog = compile("tt_loop", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let server = Server::start(&trace);
    let mut c = server.connect();
    assert!(c
        .exchange(b"qSupported:multiprocess+")
        .contains("multiprocess+"));
    let stop = c.exchange(b"?");
    assert!(stop.contains("$T05"), "{stop}");
    for packet in [
        &b"vCont;c:p99999.99999"[..],
        b"vCont;s:p99999.99999",
        b"vCont;s:p99999.99999;c",
        b"Hgp99999.99999",
        b"Hcp99999.99999",
        b"Tp99999.99999",
    ] {
        let r = c.exchange(packet);
        assert!(r.contains("$E"), "{}: {r}", String::from_utf8_lossy(packet));
    }
    // The replay has not moved: the same stop, and the session goes on.
    assert_eq!(c.exchange(b"?"), stop);
    let g = c.exchange(b"g");
    assert!(!g.contains("$E"), "{g}");
}

#[test]
fn thousands_of_random_packets_keep_memory_bounded() {
    let prog = compile("tt_loop", &[]);
    let (trace, _) = record_trace(&prog, &[]);
    let server = Server::start(&trace);
    let mut c = server.connect();
    c.exchange(b"qSupported:multiprocess+");
    c.exchange(b"?");
    let before = server.rss_kib();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    // Packets of the kinds that read and write state, with random arguments (no `k`/`D`,
    // which end the session).
    const KINDS: [&str; 14] = [
        "m", "M", "X", "g", "G", "p", "P", "Z0,", "z0,", "Z2,", "z2,", "qRcmd,", "H", "qXfer:",
    ];
    // And motions, one packet in eight: steps forward and back and reverse continues, which
    // take checkpoints and keep history (a continue would reach the program's end, and a
    // second one end the session).
    const MOTIONS: [&str; 4] = ["s", "bs", "bc", "vCont;s:-1"];
    // And hindsight's own commands through `monitor`, one packet in sixteen.
    const MONITOR: [&str; 5] = [
        "when",
        "info checkpoints",
        "bookmark b",
        "info bookmarks",
        "print $pc",
    ];
    let hex = |t: &str| t.bytes().map(|b| format!("{b:02x}")).collect::<String>();
    for i in 0..4000 {
        if next() % 16 == 0 {
            let m = MONITOR[(next() % MONITOR.len() as u64) as usize];
            let r = c.exchange(format!("qRcmd,{}", hex(m)).as_bytes());
            assert!(r.contains('$'), "packet {i}: {r}");
            continue;
        }
        if next() % 8 == 0 {
            let m = MOTIONS[(next() % MOTIONS.len() as u64) as usize];
            let r = c.exchange(m.as_bytes());
            assert!(r.contains('$'), "packet {i}: {r}");
            continue;
        }
        let kind = KINDS[(next() % KINDS.len() as u64) as usize];
        let mut body = kind.as_bytes().to_vec();
        let len = (next() % 600) as usize;
        body.extend((0..len).map(|_| {
            let b = (next() % 94) as u8 + 33;
            // '$', '#' and '}' frame and escape packets.
            if matches!(b, b'$' | b'#' | b'}' | b'*') {
                b'0'
            } else {
                b
            }
        }));
        let r = c.exchange(&body);
        assert!(r.contains('$'), "packet {i}: {r}");
    }
    // A packet that never ends: 32 MiB without its '#'.
    let junk = vec![b'a'; 32 << 20];
    c.s.write_all(b"$").expect("send");
    c.s.write_all(&junk).expect("send");
    let after = server.rss_kib();
    assert!(
        after < before + 20 * 1024,
        "memory grew from {before} KiB to {after} KiB"
    );
    // Still serving.
    let r = c.exchange(b"?");
    assert!(r.contains("$T05"), "{r}");
}
