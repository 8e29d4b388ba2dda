//! Auto-display: `display[/FMT] EXPR` (shown after every stop), `undisplay [N…]`,
//! `info display`.

use anyhow::bail;

use crate::context;
use crate::session::Session;

/// One auto-display expression.
#[derive(Debug, Clone)]
pub(crate) struct Display {
    pub number: u32,
    pub expr: String,
    /// `/x`, `/i`… as typed (without the slash).
    pub fmt: Option<String>,
    pub enabled: bool,
}

/// `display[/FMT] EXPR`: remember it and show it now; `display` alone shows them all.
pub(crate) fn display(s: &mut Session, args: &str, fmt: Option<&str>) -> anyhow::Result<()> {
    let expr = args.trim();
    if expr.is_empty() {
        show_all(s);
        return Ok(());
    }
    context::check_syntax(expr)?;
    let number = s.displays.last().map(|d| d.number + 1).unwrap_or(1);
    let d = Display {
        number,
        expr: expr.to_string(),
        fmt: fmt.filter(|f| !f.is_empty()).map(str::to_string),
        enabled: true,
    };
    s.displays.push(d.clone());
    // gdb shows it at once when typed at a terminal (not for `-ex` in batch mode).
    use std::io::IsTerminal;
    if s.pid().is_some() && std::io::stdin().is_terminal() {
        let text = show_one(s, &d)?;
        print!("{text}");
    }
    Ok(())
}

/// The text of one display (`1: v = 7`, `2: /x v = 0x7`, `3: x/i $pc` and its lines).
fn show_one(s: &mut Session, d: &Display) -> anyhow::Result<String> {
    match d.fmt.as_deref() {
        Some(f) if f.contains('i') || f.contains('s') => {
            let out = context::examine(s, &d.expr, f)?;
            Ok(format!("{}: x/{f} {}\n{out}", d.number, d.expr))
        }
        fmt => {
            let value = context::evaluate(s, &d.expr)?;
            let shown = context::format(s, &value, fmt)?;
            Ok(match fmt {
                Some(f) => format!("{}: /{f} {} = {shown}\n", d.number, d.expr),
                None => format!("{}: {} = {shown}\n", d.number, d.expr),
            })
        }
    }
}

/// Shows every enabled display (after a stop): those that cannot be evaluated here are
/// left out, as gdb leaves out a display whose variables are not in scope.
pub(crate) fn show_all(s: &mut Session) {
    let list = s.displays.clone();
    for d in list.iter().filter(|d| d.enabled) {
        if let Ok(text) = show_one(s, d) {
            print!("{text}");
        }
    }
}

/// `undisplay [N…]` (also `delete display`): all of them without numbers.
pub(crate) fn undisplay(s: &mut Session, args: &str, _: Option<&str>) -> anyhow::Result<()> {
    let a = args.trim();
    if a.is_empty() {
        println!(
            "Delete all auto-display expressions? (y or n) [answered Y; input not from terminal]"
        );
        s.displays.clear();
        return Ok(());
    }
    for w in a.split_whitespace() {
        let Ok(n) = w.parse::<u32>() else {
            bail!("Arguments must be display numbers.");
        };
        match s.displays.iter().position(|d| d.number == n) {
            Some(i) => {
                s.displays.remove(i);
            }
            None => println!("No display number {n}."),
        }
    }
    Ok(())
}

/// `info display`.
pub(crate) fn info_display(s: &mut Session) -> anyhow::Result<()> {
    if s.displays.is_empty() {
        println!("There are no auto-display expressions now.");
        return Ok(());
    }
    println!("Auto-display expressions now in effect:");
    println!("Num Enb Expression");
    for d in &s.displays {
        let expr = match &d.fmt {
            Some(f) => format!("/{f} {}", d.expr),
            None => d.expr.clone(),
        };
        println!(
            "{}:   {}  {expr}",
            d.number,
            if d.enabled { "y" } else { "n" }
        );
    }
    Ok(())
}
