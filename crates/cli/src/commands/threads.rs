//! Thread commands: info threads, thread N, thread apply.

use anyhow::bail;
use hindsight_engine::inferiors::TreeThread;
use hindsight_engine::Session;

use crate::console::{say, Console};
use crate::report::{self, PcShown};

/// `info threads`: gdb's table; in a replayed tree, the threads of every inferior that has a
/// process at the current stop, numbered `N.M` as gdb numbers them with several inferiors.
pub(crate) fn info_threads(s: &mut Session, c: &mut Console) -> anyhow::Result<()> {
    let rows: Vec<TreeThread> = if s.has_inferiors() {
        s.threads_of_every_inferior()?
    } else {
        let current = s.selected_thread();
        s.threads()
            .into_iter()
            .map(|t| TreeThread {
                inferior: 1,
                name: s.thread_name(t.tid),
                frame: s.top_frame(t.tid).ok(),
                current: Some(t.tid) == current,
                thread: t,
            })
            .collect()
    };
    if rows.is_empty() {
        say!(c, "No threads.");
        return Ok(());
    }
    let several = s.has_inferiors();
    // The Target Id column is as wide as its widest entry, as gdb's table is.
    let targets: Vec<String> = rows
        .iter()
        .map(|t| {
            format!(
                "Thread {:#x} (LWP {}) \"{}\"",
                t.thread.pthread,
                t.thread.tid,
                t.name.as_deref().unwrap_or_default()
            )
        })
        .collect();
    let width = targets.iter().map(|t| t.len()).max().unwrap_or(0).max(9);
    say!(c, "  Id   {:<width$} Frame ", "Target Id");
    for (t, target) in rows.iter().zip(targets) {
        let frame = match &t.frame {
            Some(f) => report::frame_line(f, PcShown::IfMidLine),
            None => "(running)".to_string(),
        };
        let mark = if t.current { "*" } else { " " };
        let id = match several {
            true => format!("{}.{}", t.inferior, t.thread.num),
            false => t.thread.num.to_string(),
        };
        say!(c, "{mark} {id:<4} {target:<width$} {frame}");
    }
    Ok(())
}

/// `thread apply all|N… CMD`: runs CMD with each thread selected in turn (highest first for
/// `all`, as gdb does), then selects the original thread again.
fn apply(s: &mut Session, c: &mut Console, rest: &str) -> anyhow::Result<()> {
    let threads = s.live()?.threads();
    if rest == "all" {
        bail!("Please specify a command following the thread ID list");
    }
    let (which, cmd) = match rest.split_once(char::is_whitespace) {
        Some(("all", cmd)) => ("all", cmd.trim()),
        _ => {
            let n = rest
                .split_whitespace()
                .take_while(|w| w.parse::<u32>().is_ok())
                .count();
            let words: Vec<&str> = rest.split_whitespace().collect();
            if n == 0 {
                bail!("Please specify a thread ID list");
            }
            let cmd_start = rest
                .find(words.get(n).copied().unwrap_or(""))
                .unwrap_or(rest.len());
            (&rest[..cmd_start], rest[cmd_start..].trim())
        }
    };
    if cmd.is_empty() {
        bail!("Please specify a command following the thread ID list");
    }
    let mut chosen: Vec<_> = if which == "all" {
        threads.iter().rev().cloned().collect()
    } else {
        let nums: Vec<u32> = which
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        threads
            .iter()
            .filter(|t| nums.contains(&t.num))
            .cloned()
            .collect()
    };
    if chosen.is_empty() {
        bail!("Invalid thread ID: {which}");
    }
    let saved = (s.selected_thread(), s.selected_frame_index());
    let mut result = Ok(());
    for t in chosen.drain(..) {
        let name = s
            .live()
            .ok()
            .and_then(|i| i.thread_name(t.tid))
            .unwrap_or_default();
        say!(
            c,
            "\nThread {} (Thread {:#x} (LWP {}) \"{name}\"):",
            t.num,
            t.pthread,
            t.tid
        );
        s.select_thread(t.tid);
        if let Err(e) = super::execute(s, c, cmd) {
            c.eprintln(&e.to_string());
            result = Err(e);
        }
    }
    if let Some(t) = saved.0 {
        s.select_thread(t);
        s.select_frame(saved.1);
    }
    result
}

pub(crate) fn thread(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    if let Some(rest) = args.trim().strip_prefix("apply") {
        return apply(s, c, rest.trim());
    }
    let inf = s.live()?;
    let threads = inf.threads();
    let a = args.trim();
    let current = s.selected_thread();
    if a.is_empty() {
        let Some(t) = threads.iter().find(|t| Some(t.tid) == current) else {
            bail!("No thread selected.");
        };
        say!(
            c,
            "[Current thread is {} (Thread {:#x} (LWP {}))]",
            t.num,
            t.pthread,
            t.tid
        );
        return Ok(());
    }
    // `thread N.M`: thread M of inferior N (switched to first).
    let (inferior, num) = match a.split_once('.') {
        Some((i, m)) => (Some(i), m),
        None => (None, a),
    };
    let Ok(n) = num.parse::<u32>() else {
        bail!("Invalid thread ID: {a}");
    };
    let threads = match inferior {
        Some(i) => {
            let Ok(i) = i.parse::<u32>() else {
                bail!("Invalid thread ID: {a}");
            };
            if s.inferior_number().unwrap_or(1) != i {
                s.switch_inferior(i)?;
            }
            s.live()?.threads()
        }
        None => threads,
    };
    let Some(t) = threads.iter().find(|t| t.num == n).cloned() else {
        bail!("Unknown thread {a}.");
    };
    s.select_thread(t.tid);
    let f = s.top_frame(t.tid)?;
    say!(
        c,
        "[Switching to thread {}{} (Thread {:#x} (LWP {}))]",
        s.inferior_number()
            .map(|n| format!("{n}."))
            .unwrap_or_default(),
        t.num,
        t.pthread,
        t.tid
    );
    say!(c, "#0  {}", report::frame_line(&f, PcShown::IfMidLine));
    if let Some(src) = report::source_line(c, &f) {
        say!(c, "{src}");
    }
    Ok(())
}
