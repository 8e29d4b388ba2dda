//! The program's output as `output` events. Over stdio the protocol owns hindsight's stdout,
//! so nothing else may write there: before a session starts, file descriptors 1 and 2 are
//! pointed at pipes (the live program, a recorded one and the replay's echo of recorded
//! output all write there, as does anything hindsight itself logs), and a thread per pipe
//! turns what arrives into `output` events (`stdout`, `stderr`). Standard input becomes
//! /dev/null over stdio (it carries the protocol).
//!
//! Invariant: [`Output::drain`] returns only when everything written to the pipes before it
//! was called has been sent, so the program's output comes before the stop that follows it.

use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::Context as _;

use crate::protocol::Writer;

/// One redirected stream.
struct Pipe {
    /// Its reading end (the forwarding thread reads it too).
    read: RawFd,
    /// True from the moment the thread starts reading until what it read is sent.
    busy: Arc<AtomicBool>,
}

/// The redirected stdout and stderr.
pub struct Output {
    pipes: Vec<Pipe>,
}

/// The real stdin and stdout, kept for the protocol before they are redirected.
pub struct Saved {
    /// The client's requests.
    pub input: std::fs::File,
    /// Where the messages go.
    pub output: std::fs::File,
}

fn check(r: libc::c_int, what: &str) -> anyhow::Result<libc::c_int> {
    if r < 0 {
        Err(std::io::Error::last_os_error()).with_context(|| what.to_string())
    } else {
        Ok(r)
    }
}

/// Keeps copies of fds 0 and 1 for the protocol and puts /dev/null on 0 (the program must
/// not read the client's requests).
pub fn take_stdio() -> anyhow::Result<Saved> {
    // SAFETY: plain descriptor calls; the new descriptors are owned by the returned files.
    unsafe {
        let input = check(libc::fcntl(0, libc::F_DUPFD_CLOEXEC, 3), "keeping stdin")?;
        let output = check(libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3), "keeping stdout")?;
        let null = check(
            libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY),
            "opening /dev/null",
        )?;
        check(libc::dup2(null, 0), "redirecting stdin")?;
        libc::close(null);
        Ok(Saved {
            input: std::fs::File::from_raw_fd(input),
            output: std::fs::File::from_raw_fd(output),
        })
    }
}

impl Output {
    /// Points fds 1 and 2 at pipes whose contents become `output` events on `writer`.
    pub fn redirect(writer: Arc<Mutex<Writer>>) -> anyhow::Result<Output> {
        let mut pipes = Vec::new();
        for (fd, category) in [(1, "stdout"), (2, "stderr")] {
            let mut p = [0; 2];
            // SAFETY: creates a pipe into a local array; the write end replaces `fd`.
            unsafe {
                check(
                    libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC),
                    "creating a pipe",
                )?;
                check(libc::dup2(p[1], fd), "redirecting output")?;
                libc::close(p[1]);
            }
            let busy = Arc::new(AtomicBool::new(false));
            let (read, flag, w) = (p[0], busy.clone(), writer.clone());
            std::thread::Builder::new()
                .name(format!("dap-{category}"))
                .spawn(move || forward(read, flag, w, category))
                .context("starting the output thread")?;
            pipes.push(Pipe { read: p[0], busy });
        }
        Ok(Output { pipes })
    }

    /// Waits until what was written to the pipes so far has been sent.
    pub fn drain(&self) {
        use std::io::Write;
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
        for p in &self.pipes {
            // At most about a second: a writer that keeps the pipe full must not hang us.
            for _ in 0..1000 {
                let mut pending: libc::c_int = 0;
                // SAFETY: FIONREAD into a local int on our own pipe.
                let r = unsafe { libc::ioctl(p.read, libc::FIONREAD, &mut pending) };
                if r < 0 || (pending == 0 && !p.busy.load(Ordering::SeqCst)) {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
    }
}

/// The forwarding thread: waits for data, marks itself busy before reading it, sends it.
fn forward(fd: RawFd, busy: Arc<AtomicBool>, writer: Arc<Mutex<Writer>>, category: &str) {
    // The replay's SIGCHLD is read through a signalfd: this thread must not take it.
    crate::block_sigchld();
    // SAFETY: the thread owns the read end from here on.
    let _owner = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut buf = vec![0u8; 64 * 1024];
    let mut partial: Vec<u8> = Vec::new();
    loop {
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        if unsafe { libc::poll(&mut pfd, 1, -1) } < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        busy.store(true, Ordering::SeqCst);
        // SAFETY: reads into our own buffer.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            busy.store(false, Ordering::SeqCst);
            if n == 0 {
                return;
            }
            continue;
        }
        partial.extend_from_slice(&buf[..n as usize]);
        // Whole UTF-8 characters only (a write may end inside one).
        let cut = match std::str::from_utf8(&partial) {
            Ok(_) => partial.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => partial.len(),
        };
        let text = String::from_utf8_lossy(&partial[..cut]).into_owned();
        partial.drain(..cut);
        if !text.is_empty() {
            if let Ok(mut w) = writer.lock() {
                let _ = w.event(
                    "output",
                    serde_json::json!({ "category": category, "output": text }),
                );
            }
        }
        busy.store(false, Ordering::SeqCst);
    }
}
