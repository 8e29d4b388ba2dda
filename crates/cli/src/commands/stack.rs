//! Stack commands: backtrace, frame, up, down, info frame.

use anyhow::bail;
use hindsight_engine::frames::MAX_FRAMES;
use hindsight_engine::Session;

use crate::console::{say, Console};
use crate::report::{self, PcShown};

/// The selected thread, or gdb's "No stack." when there is no process.
fn stack_tid(s: &Session) -> anyhow::Result<hindsight_engine::Tid> {
    s.tid().map_err(|_| anyhow::anyhow!("No stack."))
}

pub(crate) fn backtrace(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
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
        say!(
            c,
            "#{i:<2} {}",
            report::frame_line(&s.frame_info(f, i), pcs)
        );
    }
    if shown < frames.len() {
        say!(c, "(More stack frames follow...)");
    }
    Ok(())
}

/// Prints the selected frame as `frame` does: `#1  0x… in main () at t.c:12` and its line.
pub(crate) fn print_selected(s: &mut Session, c: &mut Console) -> anyhow::Result<()> {
    let tid = stack_tid(s)?;
    let index = s.selected_frame_index();
    let frames = s.frames(tid, index + 1)?;
    let Some(f) = frames.get(index).cloned() else {
        bail!("No stack.");
    };
    let pcs = if index == 0 {
        PcShown::IfMidLine
    } else {
        PcShown::Always
    };
    let info = s.frame_info(&f, index);
    say!(c, "#{:<2} {}", index, report::frame_line(&info, pcs));
    if let Some(src) = report::source_line(c, &info) {
        say!(c, "{src}");
    }
    Ok(())
}

fn select(s: &mut Session, c: &mut Console, index: usize) -> anyhow::Result<()> {
    let tid = stack_tid(s)?;
    let depth = s.frames(tid, index + 1)?.len();
    if index >= depth {
        bail!("No frame at level {index}.");
    }
    s.select_frame(index);
    print_selected(s, c)
}

pub(crate) fn frame(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    let a = args.trim();
    if a.is_empty() {
        return print_selected(s, c);
    }
    let a = a.strip_prefix("level ").unwrap_or(a).trim();
    match a.parse::<usize>() {
        Ok(n) => select(s, c, n),
        Err(_) => bail!("Invalid frame specification \"{a}\"."),
    }
}

pub(crate) fn up(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    let n: usize = args.trim().parse().unwrap_or(1);
    let tid = stack_tid(s)?;
    let index = s.selected_frame_index();
    let depth = s.frames(tid, index + n + 1)?.len();
    if index + 1 >= depth {
        bail!("Initial frame selected; you cannot go up.");
    }
    select(s, c, (index + n).min(depth - 1))
}

pub(crate) fn down(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    let n: usize = args.trim().parse().unwrap_or(1);
    stack_tid(s)?;
    let index = s.selected_frame_index();
    if index == 0 {
        bail!("Bottom (innermost) frame selected; you cannot go down.");
    }
    select(s, c, index.saturating_sub(n))
}

pub(crate) fn info_frame(s: &mut Session, c: &mut Console) -> anyhow::Result<()> {
    stack_tid(s)?;
    let f = s.selected_frame()?;
    let index = s.selected_frame_index();
    let info = s.frame_info(&f, index);
    say!(
        c,
        "Stack level {index}, frame at {:#x}:",
        f.cfa.unwrap_or(0)
    );
    say!(
        c,
        " rip = {:#x} in {}",
        info.pc,
        report::frame_line(&info, PcShown::IfMidLine)
    );
    Ok(())
}
