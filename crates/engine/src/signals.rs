//! Signals by name, as gdb names and describes them (`SIGSEGV`, "Segmentation fault"):
//! what stops report and what `handle` accepts.

/// A signal's name and gdb's description of it: (`SIGSEGV`, `Segmentation fault`).
pub fn signal_name(sig: i32) -> (String, String) {
    // Real-time signals are named by number, as gdb does ("SIG34, Real-time event 34").
    if (32..=64).contains(&sig) {
        return (format!("SIG{sig}"), format!("Real-time event {sig}"));
    }
    let (n, d) = signal_name_static(sig);
    (n.to_string(), d.to_string())
}

/// The signal named by `name` as gdb writes it (SIGALRM, ALRM, SIG34, 14).
pub fn signal_number(name: &str) -> Option<i32> {
    if let Ok(n) = name.parse::<i32>() {
        return (1..=64).contains(&n).then_some(n);
    }
    let upper = name.to_ascii_uppercase();
    let full = if upper.starts_with("SIG") {
        upper
    } else {
        format!("SIG{upper}")
    };
    (1..=64).find(|&n| signal_name(n).0 == full)
}

fn signal_name_static(sig: i32) -> (&'static str, &'static str) {
    match sig {
        libc::SIGHUP => ("SIGHUP", "Hangup"),
        libc::SIGINT => ("SIGINT", "Interrupt"),
        libc::SIGQUIT => ("SIGQUIT", "Quit"),
        libc::SIGILL => ("SIGILL", "Illegal instruction"),
        libc::SIGTRAP => ("SIGTRAP", "Trace/breakpoint trap"),
        libc::SIGABRT => ("SIGABRT", "Aborted"),
        libc::SIGBUS => ("SIGBUS", "Bus error"),
        libc::SIGFPE => ("SIGFPE", "Arithmetic exception"),
        libc::SIGKILL => ("SIGKILL", "Killed"),
        libc::SIGUSR1 => ("SIGUSR1", "User defined signal 1"),
        libc::SIGSEGV => ("SIGSEGV", "Segmentation fault"),
        libc::SIGUSR2 => ("SIGUSR2", "User defined signal 2"),
        libc::SIGPIPE => ("SIGPIPE", "Broken pipe"),
        libc::SIGALRM => ("SIGALRM", "Alarm clock"),
        libc::SIGTERM => ("SIGTERM", "Terminated"),
        libc::SIGCHLD => ("SIGCHLD", "Child status changed"),
        libc::SIGCONT => ("SIGCONT", "Continued"),
        libc::SIGSTOP => ("SIGSTOP", "Stopped (signal)"),
        libc::SIGTSTP => ("SIGTSTP", "Stopped (user)"),
        libc::SIGTTIN => ("SIGTTIN", "Stopped (tty input)"),
        libc::SIGTTOU => ("SIGTTOU", "Stopped (tty output)"),
        libc::SIGURG => ("SIGURG", "Urgent I/O condition"),
        libc::SIGSTKFLT => ("SIGSTKFLT", "Stack fault"),
        libc::SIGPWR => ("SIGPWR", "Power fail/restart"),
        libc::SIGXCPU => ("SIGXCPU", "CPU time limit exceeded"),
        libc::SIGXFSZ => ("SIGXFSZ", "File size limit exceeded"),
        libc::SIGVTALRM => ("SIGVTALRM", "Virtual timer expired"),
        libc::SIGPROF => ("SIGPROF", "Profiling timer expired"),
        libc::SIGWINCH => ("SIGWINCH", "Window size changed"),
        libc::SIGIO => ("SIGIO", "I/O possible"),
        libc::SIGSYS => ("SIGSYS", "Bad system call"),
        _ => ("SIG?", "Unknown signal"),
    }
}
