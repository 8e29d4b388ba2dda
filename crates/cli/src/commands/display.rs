//! Auto-display: `display[/FMT] EXPR` (shown after every stop), `undisplay [N…]`,
//! `info display`. The expressions belong to the console (the engine only evaluates them).

use anyhow::bail;
use hindsight_engine::Session;

use crate::console::{say, Console};

/// One auto-display expression.
#[derive(Debug, Clone)]
pub(crate) struct Display {
    pub number: u32,
    pub expr: String,
    /// `/x`, `/i`… as typed (without the slash).
    pub fmt: Option<String>,
    pub enabled: bool,
}

/// `display[/FMT] EXPR`: remember it (and show it now when typed at a terminal, as gdb
/// does); `display` alone shows them all.
pub(crate) fn display(
    s: &mut Session,
    c: &mut Console,
    args: &str,
    fmt: Option<&str>,
) -> anyhow::Result<()> {
    let expr = args.trim();
    if expr.is_empty() {
        show_all(s, c);
        return Ok(());
    }
    hindsight_symbols::expr::parse(expr).map_err(|e| anyhow::anyhow!("{e}"))?;
    let number = c.displays.last().map(|d| d.number + 1).unwrap_or(1);
    let d = Display {
        number,
        expr: expr.to_string(),
        fmt: fmt.filter(|f| !f.is_empty()).map(str::to_string),
        enabled: true,
    };
    c.displays.push(d.clone());
    use std::io::IsTerminal;
    if s.pid().is_some() && std::io::stdin().is_terminal() {
        let text = show_one(s, &d)?;
        c.print(&text);
    }
    Ok(())
}

/// The text of one display (`1: v = 7`, `2: /x v = 0x7`, `3: x/i $pc` and its lines).
fn show_one(s: &mut Session, d: &Display) -> anyhow::Result<String> {
    match d.fmt.as_deref() {
        Some(f) if f.contains('i') || f.contains('s') => {
            let out = s.examine(&d.expr, f)?;
            Ok(format!("{}: x/{f} {}\n{out}", d.number, d.expr))
        }
        fmt => {
            let value = s.evaluate(&d.expr)?;
            let shown = s.format_value(&value, fmt)?;
            Ok(match fmt {
                Some(f) => format!("{}: /{f} {} = {shown}\n", d.number, d.expr),
                None => format!("{}: {} = {shown}\n", d.number, d.expr),
            })
        }
    }
}

/// Shows every enabled display (after a stop): those that cannot be evaluated here are
/// left out, as gdb leaves out a display whose variables are not in scope.
pub(crate) fn show_all(s: &mut Session, c: &mut Console) {
    let list = c.displays.clone();
    for d in list.iter().filter(|d| d.enabled) {
        if let Ok(text) = show_one(s, d) {
            c.print(&text);
        }
    }
}

/// `undisplay [N…]` (all of them without numbers).
pub(crate) fn undisplay(
    _: &mut Session,
    c: &mut Console,
    args: &str,
    _: Option<&str>,
) -> anyhow::Result<()> {
    let a = args.trim();
    if a.is_empty() {
        say!(
            c,
            "Delete all auto-display expressions? (y or n) [answered Y; input not from terminal]"
        );
        c.displays.clear();
        return Ok(());
    }
    for w in a.split_whitespace() {
        let Ok(n) = w.parse::<u32>() else {
            bail!("Arguments must be display numbers.");
        };
        match c.displays.iter().position(|d| d.number == n) {
            Some(i) => {
                c.displays.remove(i);
            }
            None => say!(c, "No display number {n}."),
        }
    }
    Ok(())
}

/// `info display`.
pub(crate) fn info_display(_: &mut Session, c: &mut Console) -> anyhow::Result<()> {
    if c.displays.is_empty() {
        say!(c, "There are no auto-display expressions now.");
        return Ok(());
    }
    say!(c, "Auto-display expressions now in effect:");
    say!(c, "Num Enb Expression");
    let list = c.displays.clone();
    for d in &list {
        let expr = match &d.fmt {
            Some(f) => format!("/{f} {}", d.expr),
            None => d.expr.clone(),
        };
        say!(
            c,
            "{}:   {}  {expr}",
            d.number,
            if d.enabled { "y" } else { "n" }
        );
    }
    Ok(())
}
