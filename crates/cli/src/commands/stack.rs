//! Stack commands: backtrace, frame, up, down, info frame.

use anyhow::bail;

use crate::report::{self, PcShown};
use crate::session::Session;

/// The most frames a backtrace walks (a corrupt stack must not loop forever).
const MAX_FRAMES: usize = 4096;

/// The selected thread, or gdb's "No stack." when there is no process.
fn stack_tid(s: &Session) -> anyhow::Result<hindsight_ptrace::Tid> {
    s.tid().map_err(|_| anyhow::anyhow!("No stack."))
}

pub(crate) fn backtrace(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    let tid = stack_tid(s)?;
    let limit = match args.trim() {
        "" | "full" => None,
        a => match a.trim_start_matches('-').parse::<usize>() {
            Ok(n) => Some(n),
            Err(_) => bail!("No symbol \"{a}\" in current context."),
        },
    };
    let frames = s.frames(tid, MAX_FRAMES)?;
    let shown = limit.unwrap_or(frames.len()).min(frames.len());
    for (i, f) in frames.iter().take(shown).enumerate() {
        let pcs = if i == 0 {
            PcShown::IfMidLine
        } else {
            PcShown::Always
        };
        println!("#{i:<2} {}", report::frame_line(s, f, i, pcs));
    }
    if shown < frames.len() {
        println!("(More stack frames follow...)");
    }
    Ok(())
}

/// Prints the selected frame as `frame` does: `#1  0x… in main () at t.c:12` and its line.
pub(crate) fn print_selected(s: &mut Session) -> anyhow::Result<()> {
    let tid = stack_tid(s)?;
    let frames = s.frames(tid, s.frame + 1)?;
    let Some(f) = frames.get(s.frame).cloned() else {
        bail!("No stack.");
    };
    let pcs = if s.frame == 0 {
        PcShown::IfMidLine
    } else {
        PcShown::Always
    };
    println!(
        "#{:<2} {}",
        s.frame,
        report::frame_line(s, &f, s.frame, pcs)
    );
    if let Some(src) = report::source_line(s, &f, s.frame) {
        println!("{src}");
    }
    Ok(())
}

fn select(s: &mut Session, index: usize) -> anyhow::Result<()> {
    let tid = stack_tid(s)?;
    let depth = s.frames(tid, index + 1)?.len();
    if index >= depth {
        bail!("No frame at level {index}.");
    }
    s.frame = index;
    print_selected(s)
}

pub(crate) fn frame(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    let a = args.trim();
    if a.is_empty() {
        return print_selected(s);
    }
    let a = a.strip_prefix("level ").unwrap_or(a).trim();
    match a.parse::<usize>() {
        Ok(n) => select(s, n),
        Err(_) => bail!("Invalid frame specification \"{a}\"."),
    }
}

pub(crate) fn up(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    let n: usize = args.trim().parse().unwrap_or(1);
    let tid = stack_tid(s)?;
    let depth = s.frames(tid, s.frame + n + 1)?.len();
    if s.frame + 1 >= depth {
        bail!("Initial frame selected; you cannot go up.");
    }
    select(s, (s.frame + n).min(depth - 1))
}

pub(crate) fn down(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    let n: usize = args.trim().parse().unwrap_or(1);
    stack_tid(s)?;
    if s.frame == 0 {
        bail!("Bottom (innermost) frame selected; you cannot go down.");
    }
    select(s, s.frame.saturating_sub(n))
}

pub(crate) fn info_frame(s: &mut Session) -> anyhow::Result<()> {
    stack_tid(s)?;
    let f = s.selected_frame()?;
    let pc = f.regs.pc().unwrap_or(0);
    println!(
        "Stack level {}, frame at {:#x}:",
        s.frame,
        f.cfa.unwrap_or(0)
    );
    println!(
        " rip = {pc:#x} in {}",
        report::frame_line(s, &f, s.frame, PcShown::IfMidLine)
    );
    Ok(())
}
