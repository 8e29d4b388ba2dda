//! A divergence: the replay did something other than what the recording says.

use std::fmt;

/// The first difference between the recording and the replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// Index of the recorded event that was expected.
    pub event: u64,
    /// Recorded id of the thread concerned.
    pub tid: i32,
    /// What the recording has there.
    pub recorded: String,
    /// What the replay did.
    pub replayed: String,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "replay diverged from the recording at event {} (thread {}): recorded {}, replay {}",
            self.event, self.tid, self.recorded, self.replayed
        )
    }
}

/// A syscall in words: `read(3, 0x7ffc…, 4096)`.
pub fn describe_syscall(nr: u64, args: &[u64; 6]) -> String {
    let name = hindsight_syscalls::name(nr)
        .map(str::to_string)
        .unwrap_or_else(|| format!("syscall {nr}"));
    format!(
        "{name}({:#x}, {:#x}, {:#x}, {:#x}, {:#x}, {:#x})",
        args[0], args[1], args[2], args[3], args[4], args[5]
    )
}

/// A recorded event in words.
pub fn describe_event(e: &hindsight_trace::Event) -> String {
    use hindsight_trace::Event;
    match e {
        Event::Syscall { nr, args, .. } | Event::SyscallEntry { nr, args, .. } => {
            describe_syscall(*nr, args)
        }
        Event::SyscallExit { nr, .. } => format!(
            "the return of {}",
            hindsight_syscalls::name(*nr).unwrap_or("a syscall")
        ),
        Event::Rdtsc { pc, .. } => format!("rdtsc at {pc:#x}"),
        Event::Signal { signo, .. } => format!("signal {}", signal_name(*signo)),
        Event::Preempt { point, .. } => format!("a thread switch at {:#x}", point.regs[16]),
        Event::Exec { path, .. } => format!("exec of {}", String::from_utf8_lossy(path)),
        Event::Buffered { calls, .. } => match calls.first() {
            Some(c) => format!(
                "{} buffered syscall(s), the first {}",
                calls.len(),
                describe_syscall(c.nr, &c.args)
            ),
            None => "no buffered syscalls".to_string(),
        },
        other => other.kind_name().to_string(),
    }
}

/// SIGSEGV, SIGALRM… (or the number).
pub fn signal_name(sig: i32) -> String {
    let names = [
        "",
        "SIGHUP",
        "SIGINT",
        "SIGQUIT",
        "SIGILL",
        "SIGTRAP",
        "SIGABRT",
        "SIGBUS",
        "SIGFPE",
        "SIGKILL",
        "SIGUSR1",
        "SIGSEGV",
        "SIGUSR2",
        "SIGPIPE",
        "SIGALRM",
        "SIGTERM",
        "SIGSTKFLT",
        "SIGCHLD",
        "SIGCONT",
        "SIGSTOP",
        "SIGTSTP",
        "SIGTTIN",
        "SIGTTOU",
        "SIGURG",
        "SIGXCPU",
        "SIGXFSZ",
        "SIGVTALRM",
        "SIGPROF",
        "SIGWINCH",
        "SIGIO",
        "SIGPWR",
        "SIGSYS",
    ];
    names
        .get(sig as usize)
        .filter(|n| !n.is_empty())
        .map(|n| n.to_string())
        .unwrap_or_else(|| format!("signal {sig}"))
}
