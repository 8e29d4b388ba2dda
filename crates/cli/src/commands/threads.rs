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
    let pid = inf.pid();
    let current = s.thread;
    println!("  Id   Target Id{:39}Frame ", "");
    for t in threads {
        let name = s
            .inferior
            .as_ref()
            .and_then(|i| i.thread_name(t.tid))
            .unwrap_or_default();
        let target = format!("Thread {:#x} (LWP {}) \"{}\"", t.pthread, t.tid, name);
        let frame = match s.dwarf_regs(t.tid) {
            Ok(regs) => {
                let f = Frame { regs, cfa: None };
                report::frame_line(s, &f, 0, PcShown::IfMidLine)
            }
            Err(_) => "(running)".to_string(),
        };
        let mark = if Some(t.tid) == current { "*" } else { " " };
        println!("{mark} {:<4} {target:<47} {frame}", t.num);
        let _ = pid;
    }
    Ok(())
}

pub(crate) fn thread(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
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
        bail!("Invalid thread ID: {n}");
    };
    s.thread = Some(t.tid);
    s.frame = 0;
    let regs = s.dwarf_regs(t.tid)?;
    let f = Frame { regs, cfa: None };
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
