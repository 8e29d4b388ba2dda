//! The processes of a replayed tree as gdb's inferiors: `info inferiors`, `inferior [N]`.

use hindsight_engine::inferiors::{InferiorInfo, InferiorPlace};
use hindsight_engine::Session;

use crate::console::{say, Console};
use crate::report::{self, PcShown};

/// Where an inferior stands, in words (the column gdb does not have).
fn place_text(i: &InferiorInfo) -> String {
    let place = match i.place {
        InferiorPlace::NotCreated => "not created yet".to_string(),
        InferiorPlace::Before {
            event,
            total,
            calls,
            ..
        } => match calls {
            Some((0, _)) | None => format!("before event {event} of {total}"),
            Some((made, n)) => {
                format!("before event {event} of {total}, after {made} of its {n} buffered calls")
            }
        },
        InferiorPlace::End { total } => format!("at its end ({total} events)"),
    };
    if i.stopped {
        format!("{place}, stopped here")
    } else {
        place
    }
}

/// `info inferiors`: gdb's columns, and where each process stands in the consistent state
/// around the current stop.
pub(crate) fn info_inferiors(s: &mut Session, c: &mut Console) -> anyhow::Result<()> {
    if !s.has_inferiors() {
        // One process: gdb's single line.
        let program = s.program().display().to_string();
        let desc = match s.pid() {
            Some(_) => format!("process {}", s.user_pid()),
            None => "<null>".to_string(),
        };
        say!(
            c,
            "  Num  Description       Connection           Executable        "
        );
        say!(c, "* 1    {desc:<17} {:<20} {program} ", "1 (replay)");
        return Ok(());
    }
    let list = s.inferiors()?;
    let width = list
        .iter()
        .map(|i| i.program.display().to_string().len())
        .max()
        .unwrap_or(0)
        .max(17);
    say!(
        c,
        "  Num  Description       Connection           {:<width$} Position",
        "Executable"
    );
    for i in &list {
        let mark = if i.current { "*" } else { " " };
        say!(
            c,
            "{mark} {:<4} {:<17} {:<20} {:<width$} {}",
            i.num,
            format!("process {}", i.pid),
            "1 (replay)",
            i.program.display(),
            place_text(i)
        );
    }
    Ok(())
}

/// `inferior [N]`: says which is current, or switches to inferior N, moved to where the
/// consistent state around the current stop places it, and shows its thread and frame as
/// gdb does.
pub(crate) fn inferior(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    let a = args.trim();
    if a.is_empty() {
        let num = s.inferior_number().unwrap_or(1);
        let desc = match s.pid() {
            Some(_) => format!("process {}", s.user_pid()),
            None => "<null>".to_string(),
        };
        say!(
            c,
            "[Current inferior is {num} [{desc}] ({})]",
            s.program().display()
        );
        return Ok(());
    }
    let Ok(num) = a.parse::<u32>() else {
        anyhow::bail!("Invalid inferior ID \"{a}\".");
    };
    let info = s.switch_inferior(num)?;
    say!(
        c,
        "[Switching to inferior {num} [process {}] ({})]",
        info.pid,
        info.program.display()
    );
    match info.place {
        InferiorPlace::NotCreated => say!(
            c,
            "[Process {} is not created yet at this stop: shown at its creation]",
            info.pid
        ),
        _ if !info.stopped => say!(
            c,
            "[Process {} placed {}: the latest state consistent with the stop]",
            info.pid,
            place_text(&info)
        ),
        _ => {}
    }
    let Some(tid) = s.selected_thread() else {
        return Ok(());
    };
    let Some(t) = s.threads().into_iter().find(|t| t.tid == tid) else {
        return Ok(());
    };
    say!(
        c,
        "[Switching to thread {num}.{} (Thread {:#x} (LWP {}))]",
        t.num,
        t.pthread,
        t.tid
    );
    if let Ok(f) = s.top_frame(tid) {
        say!(c, "#0  {}", report::frame_line(&f, PcShown::IfMidLine));
        if let Some(src) = report::source_line(c, &f) {
            say!(c, "{src}");
        }
    }
    Ok(())
}
