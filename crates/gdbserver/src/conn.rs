//! The TCP connection to gdb, with packets answered on the way: `qGetTLSAddr` (where a
//! thread's thread-local variables live), which gdbstub does not know, and packets that name
//! a thread the replay does not have (`vCont`, `H`, `T`), which get an error reply here (in
//! gdbstub a resume action for an unknown thread can only end the session, or resume all).
//! Everything else passes through to gdbstub untouched. A packet is never longer than
//! [`MAX_PACKET`]: a longer one (gdb never sends one) is dropped, with its bytes up to the
//! next `$`.
//!
//! gdb asks it to print `errno` and other `__thread` variables when it has no libthread_db
//! (a remote target). The answers come from a table the target refreshes at every stop
//! ([`TlsTable`]). The session runs in acknowledged mode (no `QStartNoAckMode`), so this
//! layer acknowledges the packet it answers and swallows gdb's acknowledgement of its reply.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::net::TcpStream;
use std::rc::Rc;

use gdbstub::conn::{Connection, ConnectionExt};

/// (client tid, address of an object's `struct link_map`, address of its TLS block in that
/// thread), as of the last stop.
pub type TlsTable = Rc<RefCell<Vec<(i32, u64, u64)>>>;

/// The client tids of the replay's threads, as of the last stop.
pub type Threads = Rc<RefCell<Vec<i32>>>;

/// The longest packet accepted (gdb sends at most what `qSupported`'s `PacketSize` allows;
/// this is generous above gdbstub's buffer).
pub const MAX_PACKET: usize = 64 << 10;

enum State {
    Outside,
    Packet(Vec<u8>),
    Checksum(Vec<u8>, usize),
    /// In a packet longer than [`MAX_PACKET`]: its bytes are dropped up to the next `$`.
    Dropping,
}

/// gdb's connection, as gdbstub reads it.
pub struct GdbConnection {
    stream: TcpStream,
    tls: TlsTable,
    threads: Threads,
    /// Bytes for gdbstub.
    ready: VecDeque<u8>,
    state: State,
    /// gdb acknowledges our reply to a packet we answered: that `+` is ours.
    swallow_ack: bool,
    /// What gdbstub wrote since its last flush (it writes a byte at a time: one send each
    /// would cost a syscall and a TCP segment per byte).
    out: Vec<u8>,
}

impl GdbConnection {
    /// Wraps gdb's connection.
    pub fn new(stream: TcpStream, tls: TlsTable, threads: Threads) -> GdbConnection {
        GdbConnection {
            stream,
            tls,
            threads,
            ready: VecDeque::new(),
            state: State::Outside,
            swallow_ack: false,
            out: Vec::new(),
        }
    }

    /// Reads what the socket has (blocking for at least one byte unless `nonblocking`).
    fn fill(&mut self, nonblocking: bool) -> std::io::Result<()> {
        let mut buf = [0u8; 4096];
        self.stream.set_nonblocking(nonblocking)?;
        let r = std::io::Read::read(&mut self.stream, &mut buf);
        self.stream.set_nonblocking(false)?;
        let n = match r {
            Ok(0) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "gdb closed the connection",
                ))
            }
            Ok(n) => n,
            Err(e) if nonblocking && e.kind() == std::io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) => return Err(e),
        };
        for &b in &buf[..n] {
            self.take(b)?;
        }
        Ok(())
    }

    fn take(&mut self, b: u8) -> std::io::Result<()> {
        self.state = match std::mem::replace(&mut self.state, State::Outside) {
            State::Outside if b == b'$' => State::Packet(vec![b]),
            State::Outside if b == b'+' && self.swallow_ack => {
                self.swallow_ack = false;
                State::Outside
            }
            State::Outside => {
                self.ready.push_back(b);
                State::Outside
            }
            State::Packet(mut p) => {
                p.push(b);
                if b == b'#' {
                    State::Checksum(p, 0)
                } else if p.len() > MAX_PACKET {
                    // Not a packet gdb sends: dropped, its memory with it.
                    State::Dropping
                } else {
                    State::Packet(p)
                }
            }
            State::Dropping if b == b'$' => State::Packet(vec![b]),
            State::Dropping => State::Dropping,
            State::Checksum(mut p, n) => {
                p.push(b);
                if n + 1 < 2 {
                    State::Checksum(p, n + 1)
                } else {
                    self.packet(p)?;
                    State::Outside
                }
            }
        };
        Ok(())
    }

    /// A whole packet (`$…#cc`): answered here, or passed on.
    fn packet(&mut self, p: Vec<u8>) -> std::io::Result<()> {
        let body = &p[1..p.len() - 3];
        let reply = if let Some(args) = body.strip_prefix(b"qGetTLSAddr:") {
            self.tls_reply(args).unwrap_or_else(|| "E01".to_string())
        } else if self.names_unknown_thread(body) {
            "E01".to_string()
        } else {
            self.ready.extend(p);
            return Ok(());
        };
        let sum = reply.bytes().fold(0u8, |a, b| a.wrapping_add(b));
        let out = format!("+${reply}#{sum:02x}");
        self.send_now(out.as_bytes())?;
        self.swallow_ack = true;
        Ok(())
    }

    /// Shows `text` on gdb's console (an `O` packet, which gdb accepts while it waits for a
    /// stop).
    pub fn console(&mut self, text: &str) -> std::io::Result<()> {
        let body: String = std::iter::once("O".to_string())
            .chain(text.bytes().map(|b| format!("{b:02x}")))
            .collect();
        let sum = body.bytes().fold(0u8, |a, b| a.wrapping_add(b));
        let out = format!("${body}#{sum:02x}");
        self.send_now(out.as_bytes())?;
        // gdb acknowledges it; gdbstub has nothing to do with that.
        self.swallow_ack = true;
        Ok(())
    }

    /// Sends what gdbstub wrote so far, then `bytes` (in that order: gdb reads one stream).
    fn send_now(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.out.extend_from_slice(bytes);
        Connection::flush(self)
    }

    /// Whether packet `body` names a thread the replay does not have: a `vCont` action for
    /// one, `Hg`/`Hc` selecting one, `T` asking whether one is alive. `-1` (all) and `0` (any)
    /// name none.
    fn names_unknown_thread(&self, body: &[u8]) -> bool {
        let Ok(text) = std::str::from_utf8(body) else {
            return false;
        };
        let ids: Vec<&str> = if let Some(actions) = text.strip_prefix("vCont;") {
            actions
                .split(';')
                .filter_map(|a| a.split_once(':').map(|(_, id)| id))
                .collect()
        } else if let Some(id) = text.strip_prefix("Hg").or_else(|| text.strip_prefix("Hc")) {
            vec![id]
        } else if let Some(id) = text.strip_prefix('T') {
            vec![id]
        } else {
            return false;
        };
        let threads = self.threads.borrow();
        ids.into_iter().any(|id| {
            // `TID` or `pPID.TID`, in hex.
            let tid = id.rsplit('.').next().unwrap_or(id).trim_start_matches('p');
            match tid {
                "-1" | "0" | "" => false,
                t => i32::from_str_radix(t, 16).map_or(true, |t| !threads.contains(&t)),
            }
        })
    }

    /// `thread-id,offset,lm` → the variable's address in hex.
    fn tls_reply(&self, args: &[u8]) -> Option<String> {
        let text = std::str::from_utf8(args).ok()?;
        let mut parts = text.split(',');
        let thread = parts.next()?;
        let offset = u64::from_str_radix(parts.next()?, 16).ok()?;
        let lm = u64::from_str_radix(parts.next()?, 16).ok()?;
        // Thread ids are `TID` or `pPID.TID` (multiprocess), in hex.
        let tid_hex = thread.rsplit('.').next()?.trim_start_matches('p');
        let tid = i32::from_str_radix(tid_hex, 16).ok()?;
        let table = self.tls.borrow();
        let &(_, _, base) = table.iter().find(|(t, l, _)| *t == tid && *l == lm)?;
        Some(format!("{:x}", base.wrapping_add(offset)))
    }
}

/// Watches gdb's connection for a ^C (byte 0x03) while a motion runs ([`InterruptWatch::arm`]
/// until [`InterruptWatch::disarm`]), and interrupts the session's motion when one comes. One
/// thread per connection, so that gdb's step loops (a motion per instruction) pay nothing for
/// it. The byte stays in the socket for [`GdbConnection::take_interrupt`].
pub struct InterruptWatch {
    armed: std::sync::Arc<std::sync::atomic::AtomicBool>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for InterruptWatch {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl InterruptWatch {
    /// Watches `stream` for the session whose motions `interrupter` stops.
    pub fn start(stream: &TcpStream, interrupter: hindsight_engine::Interrupter) -> InterruptWatch {
        use std::os::fd::AsRawFd;
        use std::sync::atomic::{AtomicBool, Ordering};
        let armed = std::sync::Arc::new(AtomicBool::new(false));
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let thread = stream.try_clone().ok().map(|stream| {
            let (armed, stop) = (armed.clone(), stop.clone());
            std::thread::spawn(move || {
                // The replay's SIGCHLD is read through a signalfd: this thread must not take it.
                block_sigchld();
                let fd = stream.as_raw_fd();
                while !stop.load(Ordering::SeqCst) {
                    if !armed.load(Ordering::SeqCst) {
                        std::thread::sleep(std::time::Duration::from_millis(5));
                        continue;
                    }
                    let mut pfd = libc::pollfd {
                        fd,
                        events: libc::POLLIN,
                        revents: 0,
                    };
                    // SAFETY: one valid pollfd.
                    if unsafe { libc::poll(&mut pfd, 1, 20) } <= 0 {
                        continue;
                    }
                    let mut buf = [0u8; 64];
                    // SAFETY: peeks into a local buffer; the bytes stay in the socket.
                    let got = unsafe {
                        libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_PEEK)
                    };
                    if got <= 0 {
                        // gdb went away: the motion finishes, the server notices then.
                        return;
                    }
                    if buf[..got as usize].contains(&0x03) {
                        interrupter.interrupt();
                        armed.store(false, Ordering::SeqCst);
                        continue;
                    }
                    // Something else (an acknowledgement): look again a little later.
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
            })
        });
        InterruptWatch {
            armed,
            stop,
            thread,
        }
    }

    /// A motion starts: gdb's ^C interrupts it.
    pub fn arm(&self) {
        self.armed.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// The motion ended.
    pub fn disarm(&self) {
        self.armed.store(false, std::sync::atomic::Ordering::SeqCst);
    }
}

impl GdbConnection {
    /// Consumes gdb's ^C (and acknowledgements before it), if it sent one.
    pub fn take_interrupt(&mut self) -> std::io::Result<()> {
        while let Some(b) = ConnectionExt::peek(self)? {
            match b {
                0x03 => {
                    ConnectionExt::read(self)?;
                    return Ok(());
                }
                b'+' => {
                    ConnectionExt::read(self)?;
                }
                _ => return Ok(()),
            }
        }
        Ok(())
    }
}

/// Blocks SIGCHLD in the calling thread (hindsight reads it through a signalfd, which sees a
/// signal only while every thread blocks it).
fn block_sigchld() {
    // SAFETY: plain signal-mask calls on a local set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCHLD);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

impl Connection for GdbConnection {
    type Error = std::io::Error;

    fn write(&mut self, byte: u8) -> Result<(), Self::Error> {
        self.out.push(byte);
        // An acknowledgement goes at once: the answer to a resume comes only when the
        // program stops, and gdb would take the silence for a lost packet.
        if byte == b'+' && self.out.len() == 1 {
            return Connection::flush(self);
        }
        Ok(())
    }

    fn write_all(&mut self, buf: &[u8]) -> Result<(), Self::Error> {
        self.out.extend_from_slice(buf);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Self::Error> {
        let out = std::mem::take(&mut self.out);
        std::io::Write::write_all(&mut self.stream, &out)?;
        std::io::Write::flush(&mut self.stream)
    }

    fn on_session_start(&mut self) -> Result<(), Self::Error> {
        self.stream.set_nodelay(true)
    }
}

impl ConnectionExt for GdbConnection {
    fn read(&mut self) -> Result<u8, Self::Error> {
        loop {
            if let Some(b) = self.ready.pop_front() {
                return Ok(b);
            }
            self.fill(false)?;
        }
    }

    fn peek(&mut self) -> Result<Option<u8>, Self::Error> {
        if self.ready.is_empty() {
            self.fill(true)?;
        }
        Ok(self.ready.front().copied())
    }
}
