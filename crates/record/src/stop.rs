//! Signals to the recorder itself, and what they do to a recording.
//!
//! - SIGTERM and SIGHUP end the recording cleanly: the recorder notices them at its next
//!   wait (the handlers interrupt it: no `SA_RESTART`), stops the threads that run and
//!   records what they had done (a syscall that completed, calls in the agent's buffer: see
//!   `recorder/ending.rs`), kills the program, writes everything out and ends the trace
//!   saying which signal ended it.
//! - SIGINT is not for the recorder: a ^C at the terminal reaches the program too (it is in
//!   the same process group) and is recorded like any signal, as rr does. A handler that does
//!   nothing is installed rather than `SIG_IGN`, which the program would inherit through exec.
//! - SIGKILL cannot be caught: the writer's thread has written the events out at most
//!   [`hindsight_trace::writer::FLUSH_EVERY`] before, and the trace reads up to its last
//!   whole frame.

use std::sync::atomic::{AtomicI32, Ordering};

/// The signal that asked the recording to end (0: none yet).
static REQUESTED: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_end(sig: libc::c_int) {
    REQUESTED.store(sig, Ordering::Relaxed);
}

extern "C" fn on_interrupt(_: libc::c_int) {}

/// Installs the handlers (for the rest of the process: hindsight records once and exits).
pub fn install() {
    let set = |sig: libc::c_int, handler: extern "C" fn(libc::c_int)| {
        // SAFETY: the handlers only store to an atomic; the struct is fully initialised.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = handler as *const () as usize;
            sa.sa_flags = 0;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    };
    set(libc::SIGTERM, on_end);
    set(libc::SIGHUP, on_end);
    set(libc::SIGINT, on_interrupt);
}

/// The signal that asked the recording to end, if one did.
pub fn requested() -> Option<i32> {
    match REQUESTED.load(Ordering::Relaxed) {
        0 => None,
        s => Some(s),
    }
}

/// Why the recording ended, in the trace's words.
pub fn reason(sig: i32) -> String {
    let name = match sig {
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    };
    format!("the recorder received {name}: the recording ends there (the program was killed)")
}
