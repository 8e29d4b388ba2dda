//! How stops and frames are shown: gdb's shapes, line for line.

use hindsight_symbols::Frame;

use crate::session::Session;

/// Whether a frame line shows its pc.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum PcShown {
    /// Only when the pc is not at the start of a line (stop reports, frame 0 of backtraces).
    IfMidLine,
    /// Always (outer frames of a backtrace, whose pc is a return address).
    Always,
}

/// The pc a frame is "in" for symbol lookup: outer frames' pcs are return addresses, which
/// may already belong to the next line or function.
pub(crate) fn lookup_pc(frame: &Frame, index: usize) -> u64 {
    if let Some(i) = &frame.inline {
        return i.lookup_pc;
    }
    let pc = frame.regs.pc().unwrap_or(0);
    if index > 0 {
        pc.saturating_sub(1)
    } else {
        pc
    }
}

/// `add (a=1, b=2) at t.c:5`, `0x0000555555555170 in main () at t.c:12`,
/// `0x00007ffff7e4a1a0 in write () from /lib/x86_64-linux-gnu/libc.so.6`.
pub(crate) fn frame_line(s: &Session, frame: &Frame, index: usize, shown: PcShown) -> String {
    let pc = frame.regs.pc().unwrap_or(0);
    let at = lookup_pc(frame, index);
    let mut func = s.symbols.function_at(at);
    let mut line = if func.as_ref().map(|f| f.has_debug_info).unwrap_or(false) {
        s.symbols.line_at(at)
    } else {
        None
    };
    // Frames of inlined code: their function, and the line of the call inlined into them.
    let mut calls_inlined = false;
    if let (Some(i), Some(f)) = (&frame.inline, func.as_mut()) {
        f.name = i.name.clone();
        if let Some(c) = &i.call_site {
            line = Some(c.clone());
            calls_inlined = true;
        }
    }
    let mid_line = match &line {
        // A frame whose callee was inlined shares the pc: gdb shows no address for it.
        _ if calls_inlined => false,
        // gdb shows the pc where it is not at the start of a statement.
        Some(l) => index > 0 || l.address != pc || !l.is_stmt,
        None => true,
    };
    let shown = if calls_inlined {
        PcShown::IfMidLine
    } else {
        shown
    };
    let mut out = String::new();
    if shown == PcShown::Always || mid_line {
        out.push_str(&format!("{pc:#018x} in "));
    }
    match &func {
        Some(f) => {
            out.push_str(&f.name);
            out.push_str(" (");
            if f.has_debug_info {
                out.push_str(&crate::context::frame_args(s, frame));
            }
            out.push(')');
        }
        None => out.push_str("?? ()"),
    }
    match (&line, &func) {
        (Some(l), _) => out.push_str(&format!(" at {}:{}", l.name.clone(), l.line)),
        // gdb names the file only for shared libraries, not for the executable.
        (None, Some(f)) if f.module.0 > 0 => out.push_str(&format!(
            " from {}",
            s.symbols.module_path(f.module).display()
        )),
        (None, Some(_)) => {}
        (None, None) => {
            if let Some(m) = s.symbols.module_containing(pc).filter(|m| m.0 > 0) {
                out.push_str(&format!(" from {}", s.symbols.module_path(m).display()));
            }
        }
    }
    out
}

/// The source line under a stop (`12\t  int r = add(1, 2);`), if there is line info.
pub(crate) fn source_line(s: &mut Session, frame: &Frame, index: usize) -> Option<String> {
    let at = lookup_pc(frame, index);
    let f = s.symbols.function_at(at)?;
    if !f.has_debug_info {
        return None;
    }
    // A frame whose callee was inlined shows the call's line.
    let call = frame.inline.as_ref().and_then(|i| i.call_site.clone());
    let l = match call {
        Some(c) => c,
        None => s.symbols.line_at(at)?,
    };
    s.list_next = None;
    s.list_center = Some((l.file.clone(), l.line));
    match s.sources.show(&l.file, &l.name, l.line) {
        Ok(text) => Some(text),
        // gdb reports a missing source file as an error, once.
        Err(e) => {
            eprintln!("{e}");
            None
        }
    }
}

/// Prints where frame `index` is, as gdb does after a stop: the frame line (unless the stop
/// stayed in the same function and only the line is worth showing) and the source line.
/// `with_frame`: print the frame line; otherwise only the source line (gdb's `next`/`step`
/// within one function), or `0x… <tab>LINE` when the pc is mid-line.
pub(crate) fn print_stop_location(s: &mut Session, frame: &Frame, with_frame: bool) {
    let pc = frame.regs.pc().unwrap_or(0);
    let line = s.symbols.line_at(pc);
    let has_source = s
        .symbols
        .function_at(pc)
        .map(|f| f.has_debug_info)
        .unwrap_or(false)
        && line.is_some();
    if with_frame || !has_source {
        println!("{}", frame_line(s, frame, 0, PcShown::IfMidLine));
        if let Some(src) = source_line(s, frame, 0) {
            println!("{src}");
        }
        return;
    }
    let mid = line.as_ref().map(|l| l.address != pc).unwrap_or(true);
    if let Some(src) = source_line(s, frame, 0) {
        if mid {
            println!("{pc:#018x}\t{src}");
        } else {
            println!("{src}");
        }
    }
}

/// A path's last component (for files that have no line-table name).
pub(crate) fn display_file(path: &std::path::Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// Signal names and gdb's descriptions.
pub(crate) fn signal_name(sig: i32) -> (String, String) {
    // Real-time signals are named by number, as gdb does ("SIG34, Real-time event 34").
    if (32..=64).contains(&sig) {
        return (format!("SIG{sig}"), format!("Real-time event {sig}"));
    }
    let (n, d) = signal_name_static(sig);
    (n.to_string(), d.to_string())
}

/// The signal named by `name` as gdb writes it (SIGALRM, ALRM, SIG34, 14).
pub(crate) fn signal_number(name: &str) -> Option<i32> {
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
