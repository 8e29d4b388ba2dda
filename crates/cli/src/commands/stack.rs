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

/// `info frame`: the selected frame's addresses as gdb lists them.
pub(crate) fn info_frame(s: &mut Session) -> anyhow::Result<()> {
    let tid = stack_tid(s)?;
    let frames = s.frames(tid, s.frame + 2)?;
    let f = frames
        .get(s.frame)
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("No stack."))?;
    let pc = f.regs.pc().unwrap_or(0);
    let at = report::lookup_pc(&f, s.frame);
    let cfa = f.cfa.unwrap_or(0);
    println!("Stack level {}, frame at {cfa:#x}:", s.frame);
    let func = s.symbols.function_at(at);
    let name = match (&f.inline, &func) {
        (Some(i), _) => i.name.clone(),
        (None, Some(func)) => func.name.clone(),
        (None, None) => "??".into(),
    };
    let line = f
        .inline
        .as_ref()
        .and_then(|i| i.call_site.clone())
        .or_else(|| s.symbols.line_at(at))
        .filter(|_| func.as_ref().is_some_and(|f| f.has_debug_info));
    let place = match &line {
        Some(l) => format!(" ({}:{})", l.name, l.line),
        None => String::new(),
    };
    // The return address: the next machine frame's pc.
    let machine = |g: &hindsight_symbols::Frame| (g.regs.pc(), g.cfa);
    let caller = frames[s.frame + 1..]
        .iter()
        .find(|g| machine(g) != machine(&f));
    let saved = if f.inline.as_ref().is_some_and(|i| i.is_inlined()) {
        Vec::new()
    } else {
        s.symbols.saved_registers(&f)
    };
    // The return address: the caller's pc, or what the frame's return slot holds (the
    // outermost frame shown, `main`, has a caller too).
    let slot = saved.iter().find(|(r, _)| *r == 16).and_then(|&(_, a)| {
        let mut b = [0u8; 8];
        s.live().ok()?.read_memory(a, &mut b).ok()?;
        Some(u64::from_le_bytes(b))
    });
    let saved_rip = caller
        .and_then(|c| c.regs.pc())
        .or(slot)
        .map(|r| format!("; saved rip = {r:#x}"))
        .unwrap_or_default();
    println!(" rip = {pc:#x} in {name}{place}{saved_rip}");
    let inlined = f.inline.as_ref().is_some_and(|i| i.is_inlined());
    if inlined {
        println!(" inlined into frame {}", s.frame + 1);
    } else {
        let called_by = frames.get(s.frame + 1).and_then(|c| c.cfa);
        let caller_of = s
            .frame
            .checked_sub(1)
            .and_then(|i| frames.get(i))
            .and_then(|c| c.cfa);
        let mut parts = Vec::new();
        if let Some(c) = called_by {
            parts.push(format!(" called by frame at {c:#x}"));
        }
        if let Some(c) = caller_of {
            parts.push(format!(" caller of frame at {c:#x}"));
        }
        if !parts.is_empty() {
            println!("{}", parts.join(","));
        }
    }
    if let Some(facts) = s.symbols.unit_facts(at) {
        let lang = match facts.language {
            hindsight_symbols::types::Language::C => "c",
            hindsight_symbols::types::Language::Cpp => "c++",
            hindsight_symbols::types::Language::Rust => "rust",
        };
        println!(" source language {lang}.");
    }
    // The frame pointer where the function keeps one: gdb's argument and local base.
    let base = saved
        .iter()
        .find(|(r, _)| *r == 6)
        .and_then(|_| f.regs.get(6))
        .filter(|_| !inlined);
    match base {
        Some(b) => {
            let args = if func.as_ref().is_some_and(|f| f.has_debug_info) {
                crate::context::frame_args(s, &f)
            } else {
                String::new()
            };
            println!(" Arglist at {b:#x}, args: {args}");
            println!(" Locals at {b:#x}, Previous frame's sp is {cfa:#x}");
        }
        None => {
            println!(" Arglist at unknown address.");
            if inlined {
                println!(" Locals at unknown address, Previous frame's sp in rsp");
            } else {
                println!(" Locals at unknown address, Previous frame's sp is {cfa:#x}");
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
        println!(" Saved registers:");
        println!("  {}", list.join(", "));
    }
    Ok(())
}
