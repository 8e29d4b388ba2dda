//! Named places in time: `goto`, `when`, bookmarks and checkpoints by hand.

use super::*;

/// What `goto` accepts: `event N`, a bookmark's name, a position as `when` prints it.
pub(super) fn parse_goal(s: &Session, args: &str) -> anyhow::Result<(Goal, String)> {
    let a = args.trim();
    if a.is_empty() {
        bail!("Argument required (a position as 'when' prints it, 'event N', 'start', or a bookmark).");
    }
    if let Some(n) = a.strip_prefix("event") {
        let n = n.trim();
        let e: u64 = n
            .parse()
            .map_err(|_| anyhow::anyhow!("Invalid event number \"{n}\"."))?;
        return Ok((Goal::Event(e), format!("event {e}")));
    }
    if let Some((_, p)) = s.travel.bookmarks.get(a) {
        return Ok((Goal::Position(*p), format!("bookmark {a}")));
    }
    if a.contains(':') {
        let p: Position = a.parse().map_err(|e| anyhow::anyhow!("{e}"))?;
        return Ok((Goal::Position(p), format!("position {p}")));
    }
    bail!("No bookmark named \"{a}\"; a position looks like 12:0x401136:3 (see 'when').")
}

/// `goto POSITION | event N | BOOKMARK | start`.
pub(crate) fn goto(s: &mut Session, args: &str) -> anyhow::Result<Stop> {
    if s.replay.is_none() {
        bail!(NEEDS_RECORDING);
    }
    if args.trim() == "start" {
        return go_to_start(s, false);
    }
    let (goal, what) = parse_goal(s, args)?;
    if let Goal::Event(e) = goal {
        check_event(s, e)?;
    }
    let now = if s.started && s.pid().is_some() {
        Some(capture(s)?)
    } else {
        None
    };
    match seek(s, goal, &[])? {
        Some((tid, _)) => {
            let stop = StopEvent::Stepped { tid };
            arrive(s, &stop, None, true)
        }
        None => {
            // Stay where we were.
            match now {
                Some(now) => {
                    back_to(s, &now)?;
                }
                None => {
                    restart(s)?;
                    let tid = s.pid().map(Tid);
                    arrived(s, tid, None);
                    s.started = false;
                }
            }
            bail!("The recording has no {what}.")
        }
    }
}

/// `bookmark [NAME]`: names the current position; returns the name (a number when none is
/// given) and the position.
pub(crate) fn bookmark(s: &mut Session, args: &str) -> anyhow::Result<(String, Position)> {
    let p = here(s)?;
    s.travel.next_bookmark += 1;
    let n = s.travel.next_bookmark;
    let name = match args.trim() {
        "" => n.to_string(),
        a if a.contains(char::is_whitespace) || a.contains(':') => {
            bail!("A bookmark name is one word without ':' (got \"{a}\").")
        }
        a => a.to_string(),
    };
    s.travel.engine.add(
        Spec::ControlPoint { position: p },
        Action::Mark(name.clone()),
        false,
    );
    s.travel.bookmarks.insert(name.clone(), (n, p));
    Ok((name, p))
}

/// The bookmarks, in the order they were made.
pub(crate) fn bookmarks(s: &Session) -> Vec<(String, Position)> {
    let mut list: Vec<(&String, &(u32, Position))> = s.travel.bookmarks.iter().collect();
    list.sort_by_key(|(_, (n, _))| *n);
    list.into_iter()
        .map(|(name, (_, p))| (name.clone(), *p))
        .collect()
}

/// `checkpoint`: keeps the current position under a number; returns both.
pub(crate) fn checkpoint(s: &mut Session) -> anyhow::Result<(u32, Position)> {
    let p = here(s)?;
    s.travel.next_checkpoint += 1;
    let n = s.travel.next_checkpoint;
    s.travel.checkpoints.insert(n, p);
    Ok((n, p))
}

/// `restart N`: back to checkpoint N (0: the start).
pub(crate) fn restart_checkpoint(s: &mut Session, n: u32) -> anyhow::Result<Stop> {
    if n == 0 {
        return goto(s, "start");
    }
    let Some(p) = s.travel.checkpoints.get(&n).copied() else {
        bail!("Not found: checkpoint id {n}");
    };
    goto(s, &p.to_string())
}

/// `delete checkpoint N`.
pub(crate) fn delete_checkpoint(s: &mut Session, n: u32) -> anyhow::Result<()> {
    if s.travel.checkpoints.remove(&n).is_none() {
        bail!("Not found: checkpoint id {n}");
    }
    Ok(())
}

/// `delete bookmark NAME`.
pub(crate) fn delete_bookmark(s: &mut Session, args: &str) -> anyhow::Result<()> {
    let name = args.trim();
    let Some((_, p)) = s.travel.bookmarks.remove(name) else {
        bail!("No bookmark named \"{name}\".");
    };
    let ids: Vec<u32> = s
        .travel
        .engine
        .iter()
        .filter(|e| {
            e.spec == Spec::ControlPoint { position: p }
                && e.action == Action::Mark(name.to_string())
        })
        .map(|e| e.id)
        .collect();
    for id in ids {
        let _ = s.travel.engine.remove(id);
    }
    Ok(())
}

/// gdb-like refusal of an event number past the recording's last event.
pub(super) fn check_event(s: &Session, e: u64) -> anyhow::Result<()> {
    let total = s
        .replay
        .as_ref()
        .and_then(|r| r.reader().summary().map(|x| x.events))
        .unwrap_or(u64::MAX);
    if e > total {
        bail!("There is no event {e} in the recording (it has {total} events).");
    }
    Ok(())
}
