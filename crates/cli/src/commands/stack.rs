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

/// `info frame`: the selected frame's addresses as gdb lists them.
pub(crate) fn info_frame(s: &mut Session, c: &mut Console) -> anyhow::Result<()> {
    let tid = stack_tid(s)?;
    let index = s.selected_frame_index();
    let frames = s.frames(tid, index + 2)?;
    let f = frames
        .get(index)
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("No stack."))?;
    let info = s.frame_info(&f, index);
    let cfa = f.cfa.unwrap_or(0);
    say!(c, "Stack level {index}, frame at {cfa:#x}:");
    let name = info
        .function
        .as_ref()
        .map(|f| f.name.clone())
        .unwrap_or_else(|| "??".into());
    let place = match &info.line {
        Some(l) => format!(" ({}:{})", l.name, l.line),
        None => String::new(),
    };
    let inlined = f.inline.as_ref().is_some_and(|i| i.is_inlined());
    let saved = if inlined {
        Vec::new()
    } else {
        s.symbols().saved_registers(&f)
    };
    // The return address: the next machine frame's pc, or what the frame's return slot
    // holds (the outermost frame shown, `main`, has a caller too).
    let machine = |g: &hindsight_symbols::Frame| (g.regs.pc(), g.cfa);
    let caller = frames[index + 1..]
        .iter()
        .find(|g| machine(g) != machine(&f));
    let slot = saved.iter().find(|(r, _)| *r == 16).and_then(|&(_, a)| {
        let mut b = [0u8; 8];
        s.read_memory(a, &mut b).ok()?;
        Some(u64::from_le_bytes(b))
    });
    let saved_rip = caller
        .and_then(|g| g.regs.pc())
        .or(slot)
        .map(|r| format!("; saved rip = {r:#x}"))
        .unwrap_or_default();
    say!(c, " rip = {:#x} in {name}{place}{saved_rip}", info.pc);
    if inlined {
        say!(c, " inlined into frame {}", index + 1);
    } else {
        let called_by = frames.get(index + 1).and_then(|g| g.cfa);
        let caller_of = index
            .checked_sub(1)
            .and_then(|i| frames.get(i))
            .and_then(|g| g.cfa);
        let mut parts = Vec::new();
        if let Some(a) = called_by {
            parts.push(format!(" called by frame at {a:#x}"));
        }
        if let Some(a) = caller_of {
            parts.push(format!(" caller of frame at {a:#x}"));
        }
        if !parts.is_empty() {
            say!(c, "{}", parts.join(","));
        }
    }
    if let Some(facts) = s
        .symbols()
        .unit_facts(info.pc.saturating_sub(u64::from(index > 0)))
    {
        say!(
            c,
            " source language {}.",
            super::data::language_name(facts.language)
        );
    }
    // The frame pointer where the function keeps one: gdb's argument and local base.
    let base = saved
        .iter()
        .find(|(r, _)| *r == 6)
        .and_then(|_| f.regs.get(6))
        .filter(|_| !inlined);
    match base {
        Some(b) => {
            let args: Vec<String> = info
                .args
                .iter()
                .map(|a| format!("{}={}", a.name, a.text))
                .collect();
            say!(c, " Arglist at {b:#x}, args: {}", args.join(", "));
            say!(c, " Locals at {b:#x}, Previous frame's sp is {cfa:#x}");
        }
        None => {
            say!(c, " Arglist at unknown address.");
            if inlined {
                say!(c, " Locals at unknown address, Previous frame's sp in rsp");
            } else {
                say!(
                    c,
                    " Locals at unknown address, Previous frame's sp is {cfa:#x}"
                );
            }
        }
    }
    if !saved.is_empty() {
        // gdb's register order: rax rbx rcx rdx rsi rdi rbp rsp r8-r15 rip.
        const ORDER: [(u16, &str); 17] = [
            (0, "rax"),
            (3, "rbx"),
            (2, "rcx"),
            (1, "rdx"),
            (4, "rsi"),
            (5, "rdi"),
            (6, "rbp"),
            (7, "rsp"),
            (8, "r8"),
            (9, "r9"),
            (10, "r10"),
            (11, "r11"),
            (12, "r12"),
            (13, "r13"),
            (14, "r14"),
            (15, "r15"),
            (16, "rip"),
        ];
        let list: Vec<String> = ORDER
            .iter()
            .filter_map(|(n, name)| {
                let (_, a) = saved.iter().find(|(r, _)| r == n)?;
                Some(format!("{name} at {a:#x}"))
            })
            .collect();
        say!(c, " Saved registers:");
        say!(c, "  {}", list.join(", "));
    }
    Ok(())
}
