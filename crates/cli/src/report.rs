//! How stops and frames are shown: gdb's shapes, line for line, made from the engine's data.

use hindsight_engine::frames::FrameInfo;
use hindsight_engine::inferiors::InferiorChange;
use hindsight_engine::signals::signal_name;
use hindsight_engine::{Session, Stop, StopReason, WatchAccess};

use crate::console::{say, Console};

/// Whether a frame line shows its pc.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum PcShown {
    /// Only when the pc is not at the start of a line (stop reports, frame 0 of backtraces).
    IfMidLine,
    /// Always (outer frames of a backtrace, whose pc is a return address).
    Always,
}

/// `add (a=1, b=2) at t.c:5`, `0x0000555555555170 in main () at t.c:12`,
/// `0x00007ffff7e4a1a0 in write () from /lib/x86_64-linux-gnu/libc.so.6`.
pub(crate) fn frame_line(f: &FrameInfo, shown: PcShown) -> String {
    let mut out = String::new();
    // A frame whose callee was inlined shares the pc: gdb shows no address for it.
    if (shown == PcShown::Always && !f.calls_inlined) || f.mid_line() {
        out.push_str(&format!("{:#018x} in ", f.pc));
    }
    match &f.function {
        Some(func) => {
            out.push_str(&func.name);
            out.push_str(" (");
            // gdb's `print frame-arguments scalars`: aggregates show as `...` in frame lines.
            let args: Vec<String> = f
                .args
                .iter()
                .map(|a| format!("{}={}", a.name, a.frame_text))
                .collect();
            out.push_str(&args.join(", "));
            out.push(')');
        }
        None => out.push_str("?? ()"),
    }
    match (&f.line, &f.library) {
        (Some(l), _) => out.push_str(&format!(" at {}:{}", l.name, l.line)),
        // gdb names the file only for shared libraries, not for the executable.
        (None, Some(lib)) => out.push_str(&format!(" from {}", lib.display())),
        (None, None) => {}
    }
    out
}

/// The source line under a stop (`12\t  int r = add(1, 2);`), if there is line info; the
/// listing centres there from now on.
pub(crate) fn source_line(c: &mut Console, f: &FrameInfo) -> Option<String> {
    let l = f.line.as_ref()?;
    c.list_next = None;
    c.list_center = Some((l.file.clone(), l.line));
    match c.sources.show(&l.file, &l.name, l.line) {
        Ok(text) => Some(text),
        // gdb reports a missing source file as an error, once.
        Err(e) => {
            c.eprintln(&e);
            None
        }
    }
}

/// Shows where the selected frame is, as gdb does after a stop: the frame line (unless the
/// stop stayed in the same function and only the line is worth showing) and the source line.
/// `with_frame`: show the frame line; otherwise only the source line (gdb's `next`/`step`
/// within one function), or `0x… <tab>LINE` when the pc is mid-line.
pub(crate) fn print_stop_location(c: &mut Console, f: &FrameInfo, with_frame: bool) {
    if with_frame || f.line.is_none() {
        say!(c, "{}", frame_line(f, PcShown::IfMidLine));
        if let Some(src) = source_line(c, f) {
            say!(c, "{src}");
        }
        return;
    }
    let mid = f.mid_line();
    if let Some(src) = source_line(c, f) {
        if mid {
            say!(c, "{:#018x}\t{src}", f.pc);
        } else {
            say!(c, "{src}");
        }
    }
}

/// The innermost frame of the selected thread, described.
fn stop_frame(s: &Session) -> anyhow::Result<FrameInfo> {
    let frame = s.selected_frame()?;
    Ok(s.frame_info(&frame, 0))
}

/// gdb's line for the end of inferior `num` (process `pid`) with exit code `code`.
fn exited(c: &mut Console, num: u32, pid: i32, code: i32) {
    if code == 0 {
        say!(c, "[Inferior {num} (process {pid}) exited normally]");
    } else {
        // gdb prints the status in octal with a leading zero: 3 is 03, 10 is 012.
        say!(
            c,
            "[Inferior {num} (process {pid}) exited with code 0{code:o}]"
        );
    }
}

/// gdb's lines for a process that a signal killed.
fn terminated(c: &mut Console, signal: i32) {
    let (name, desc) = signal_name(signal);
    say!(c, "\nProgram terminated with signal {name}, {desc}.");
    say!(c, "The program no longer exists.");
}

/// In a replayed tree, before a stop is shown: the processes that appeared or ended in the
/// consistent state around it, as gdb announces forks and exits of its inferiors (the end
/// of the current one is the stop itself, shown by [`show_stop`]).
pub(crate) fn show_inferior_changes(s: &mut Session, c: &mut Console, stop: &Stop) {
    if !s.has_inferiors() {
        c.show_held();
        return;
    }
    let current = s.inferior_number();
    // (When the placement cannot be computed, the commands that need it say why.)
    for change in s.inferior_changes().unwrap_or_default() {
        match change {
            InferiorChange::New { num, pid } => say!(c, "[New inferior {num} (process {pid})]"),
            _ if stop.ended() && current == Some(change_num(&change)) => {}
            InferiorChange::Exited {
                num,
                pid,
                code: Some(code),
            } => exited(c, num, pid, code),
            InferiorChange::Exited {
                num,
                pid,
                code: None,
            } => say!(
                c,
                "[Inferior {num} (process {pid}) ends here: its recording was cut off]"
            ),
            InferiorChange::Killed { signal, .. } => terminated(c, signal),
        }
    }
    c.show_held();
}

/// The inferior a change is about.
fn change_num(change: &InferiorChange) -> u32 {
    match change {
        InferiorChange::New { num, .. }
        | InferiorChange::Exited { num, .. }
        | InferiorChange::Killed { num, .. } => *num,
    }
}

/// Shows a stop as gdb does.
pub(crate) fn show_stop(s: &Session, c: &mut Console, stop: &Stop) -> anyhow::Result<()> {
    let pid = stop.pid;
    match &stop.reason {
        StopReason::Exited { code } => {
            exited(c, s.inferior_number().unwrap_or(1), pid, *code);
            return Ok(());
        }
        StopReason::Killed { signal } => {
            terminated(c, *signal);
            return Ok(());
        }
        _ => {}
    }
    let Some(tid) = stop.thread else {
        return Ok(());
    };
    let threads = s.live()?.threads();
    // gdb announces a stop in another thread than the selected one.
    if stop.switched_thread {
        let pthread = threads
            .iter()
            .find(|t| t.tid == tid)
            .map(|t| t.pthread)
            .unwrap_or(0);
        say!(c, "[Switching to Thread {pthread:#x} (LWP {tid})]");
    }
    c.list_next = None;
    let multi = threads.len() > 1;
    let thread_prefix = || -> String {
        let num = threads
            .iter()
            .find(|t| t.tid == tid)
            .map(|t| t.num)
            .unwrap_or(1);
        let name = s
            .live()
            .ok()
            .and_then(|i| i.thread_name(tid))
            .unwrap_or_default();
        format!("Thread {num} \"{name}\" ")
    };
    match &stop.reason {
        StopReason::Breakpoint { number, temporary } => {
            let what = if *temporary {
                "Temporary breakpoint"
            } else {
                "Breakpoint"
            };
            let frame = stop_frame(s)?;
            // A breakpoint with several locations names the one hit: `Breakpoint 1.2`.
            let number = match s.breakpoint_table().get(*number) {
                Some(b) if b.locations.len() > 1 => {
                    match b.locations.iter().position(|a| *a == frame.pc) {
                        Some(k) => format!("{number}.{}", k + 1),
                        None => number.to_string(),
                    }
                }
                _ => number.to_string(),
            };
            let line = frame_line(&frame, PcShown::IfMidLine);
            if multi {
                say!(c, "\n{}hit {what} {number}, {line}", thread_prefix());
            } else {
                say!(c, "\n{what} {number}, {line}");
            }
            if let Some(src) = source_line(c, &frame) {
                say!(c, "{src}");
            }
        }
        StopReason::ConditionError { number, error } => {
            c.eprintln(&format!(
                "Error in testing condition for breakpoint {number}:"
            ));
            c.eprintln(error);
            let frame = stop_frame(s)?;
            print_stop_location(c, &frame, true);
        }
        StopReason::Watchpoint {
            number,
            access,
            expr,
            old,
            new,
        } => {
            let title = watch_title(*access);
            if multi {
                say!(c, "\n{}hit {title} {number}: {expr}\n", thread_prefix());
            } else {
                say!(c, "\n{title} {number}: {expr}\n");
            }
            let new = s.format_value(new, None)?;
            match old {
                Some(o) => {
                    say!(c, "Old value = {}", s.format_value(o, None)?);
                    say!(c, "New value = {new}");
                }
                None => say!(c, "Value = {new}"),
            }
            let frame = stop_frame(s)?;
            print_stop_location(c, &frame, true);
        }
        StopReason::EndOfHistory { why } => {
            say!(c, "\nNo more reverse-execution history ({why}).");
            let frame = stop_frame(s)?;
            print_stop_location(c, &frame, true);
        }
        StopReason::StartOfHistory => {
            say!(c, "\nNo more reverse-execution history.");
            let frame = stop_frame(s)?;
            print_stop_location(c, &frame, true);
        }
        StopReason::EventReached { event } => {
            say!(c, "\nStopped at event {event}.");
            let frame = stop_frame(s)?;
            print_stop_location(c, &frame, true);
        }
        StopReason::TickReached { ticks } => {
            if multi {
                say!(c, "\n{}stopped at tick {ticks}.", thread_prefix());
            } else {
                say!(c, "\nStopped at tick {ticks}.");
            }
            let frame = stop_frame(s)?;
            print_stop_location(c, &frame, true);
        }
        StopReason::Signal { signal } => {
            let (name, desc) = signal_name(*signal);
            if multi {
                say!(c, "\n{}received signal {name}, {desc}.", thread_prefix());
            } else {
                say!(c, "\nProgram received signal {name}, {desc}.");
            }
            let frame = stop_frame(s)?;
            print_stop_location(c, &frame, true);
        }
        StopReason::Interrupted => {
            // What gdb shows after ^C.
            if multi {
                say!(c, "\n{}received signal SIGINT, Interrupt.", thread_prefix());
            } else {
                say!(c, "\nProgram received signal SIGINT, Interrupt.");
            }
            let frame = stop_frame(s)?;
            print_stop_location(c, &frame, true);
        }
        StopReason::Step => {
            let frame = stop_frame(s)?;
            if !c.quiet_steps {
                print_stop_location(c, &frame, stop.new_frame);
            }
        }
        StopReason::Exited { .. } | StopReason::Killed { .. } => {}
    }
    if let Some((n, v)) = &stop.returned {
        say!(c, "Value returned is ${n} = {}", s.format_value(v, None)?);
    }
    Ok(())
}

/// gdb's title of a watchpoint.
pub(crate) fn watch_title(access: WatchAccess) -> &'static str {
    match access {
        WatchAccess::Write => "Hardware watchpoint",
        WatchAccess::Read => "Hardware read watchpoint",
        WatchAccess::Access => "Hardware access (read/write) watchpoint",
    }
}

/// A path's last component (for files that have no line-table name).
pub(crate) fn display_file(path: &std::path::Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}
