//! Thread commands: info threads, thread N.

use anyhow::bail;
use hindsight_symbols::Frame;

use crate::report::{self, PcShown};
use crate::session::Session;

pub(crate) fn info_threads(s: &mut Session) -> anyhow::Result<()> {
    let Ok(inf) = s.live() else {
        println!("No threads.");
        return Ok(());
    };
    let threads = inf.threads();
    let current = s.thread;
    // The Target Id column is as wide as its widest entry, as gdb's table is.
    let targets: Vec<String> = threads
        .iter()
        .map(|t| {
            let name = s
                .inferior
                .as_ref()
                .and_then(|i| i.thread_name(t.tid))
                .unwrap_or_default();
            format!("Thread {:#x} (LWP {}) \"{}\"", t.pthread, t.tid, name)
        })
        .collect();
    let width = targets.iter().map(|t| t.len()).max().unwrap_or(0).max(9);
    println!("  Id   {:<width$} Frame ", "Target Id");
    for (t, target) in threads.into_iter().zip(targets) {
        let frame = match s.dwarf_regs(t.tid) {
            Ok(regs) => {
                let f = Frame {
                    regs,
                    cfa: None,
                    return_address: false,
                    inline: None,
                };
                report::frame_line(s, &f, 0, PcShown::IfMidLine)
            }
            Err(_) => "(running)".to_string(),
        };
        let mark = if Some(t.tid) == current { "*" } else { " " };
        println!("{mark} {:<4} {target:<width$} {frame}", t.num);
    }
    Ok(())
}

/// `thread apply all|N… CMD`: runs CMD with each thread selected in turn (highest first for
/// `all`, as gdb does), then selects the original thread again.
fn apply(s: &mut Session, rest: &str) -> anyhow::Result<()> {
    let threads = s.live()?.threads();
    if rest == "all" {
        bail!("Please specify a command following the thread ID list");
    }
    let (which, cmd) = match rest.split_once(char::is_whitespace) {
        Some(("all", c)) => ("all", c.trim()),
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
    let saved = (s.thread, s.frame);
    let mut result = Ok(());
    for t in chosen.drain(..) {
        let name = s
            .inferior
            .as_ref()
            .and_then(|i| i.thread_name(t.tid))
            .unwrap_or_default();
        println!(
            "\nThread {} (Thread {:#x} (LWP {}) \"{name}\"):",
            t.num, t.pthread, t.tid
        );
        s.thread = Some(t.tid);
        s.frame = 0;
        if let Err(e) = super::execute(s, cmd) {
            eprintln!("{e}");
            result = Err(e);
        }
    }
    (s.thread, s.frame) = saved;
    result
}

pub(crate) fn thread(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    if let Some(rest) = args.trim().strip_prefix("apply") {
        return apply(s, rest.trim());
    }
    let inf = s.live()?;
    let threads = inf.threads();
    let a = args.trim();
    let current = s.thread;
    if a.is_empty() {
        let Some(t) = threads.iter().find(|t| Some(t.tid) == current) else {
            bail!("No thread selected.");
        };
        println!(
            "[Current thread is {} (Thread {:#x} (LWP {}))]",
            t.num, t.pthread, t.tid
        );
        return Ok(());
    }
    let Ok(n) = a.parse::<u32>() else {
        bail!("Invalid thread ID: {a}");
    };
    let Some(t) = threads.iter().find(|t| t.num == n).cloned() else {
        bail!("Unknown thread {n}.");
    };
    s.thread = Some(t.tid);
    s.frame = 0;
    let regs = s.dwarf_regs(t.tid)?;
    let f = Frame {
        regs,
        cfa: None,
        return_address: false,
        inline: None,
    };
    println!(
        "[Switching to thread {} (Thread {:#x} (LWP {}))]",
        t.num, t.pthread, t.tid
    );
    println!("#0  {}", report::frame_line(s, &f, 0, PcShown::IfMidLine));
    if let Some(src) = report::source_line(s, &f, 0) {
        println!("{src}");
    }
    Ok(())
}
