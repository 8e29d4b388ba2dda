//! Eras (seed 002, §4.1): named spans of a replay — a sequence of contiguous quanta — that
//! the user goes to (`goto era NAME`) and bounds breakpoints, dprintfs and watchpoints by
//! (`break LOCATION era NAME`: seed 002's era event, a PC event over a range of quanta).
//! Also `goto tick N [thread M]`, which names a bound by a thread's tick count.
//!
//! A bound is a [`Moment`] (event, and the running thread's tick count): between two events
//! one thread runs, so moments order the whole run, whatever thread a breakpoint is hit in. A
//! bound given as a tick count of a thread is found by running the replay there (silently:
//! no breakpoint stops, no debugger event acts), then the replay returns where it was.
//!
//! Invariant: an era starts at the start of the quantum of its first bound and ends at the
//! start of its second bound's quantum (excluded); a position inside a quantum stands for
//! the whole quantum (a quantum has no backward branch and no call: a few instructions).

use super::*;
use crate::observer::Quiet;
use hindsight_timeline::Moment;

/// A named era.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedEra {
    /// Its name.
    pub name: String,
    /// Where it starts.
    pub from: EraBound,
    /// Where it ends (excluded; None: at the end of the recording).
    pub to: Option<EraBound>,
}

/// One end of an era.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EraBound {
    /// The moment.
    pub moment: Moment,
    /// The instant `goto era` goes to (None: the moment's event).
    pub position: Option<Position>,
    /// How the user named it (`tick 5000 of thread 1`, `bookmark b1`, …).
    pub named: String,
}

/// What an era bound is named by, parsed.
enum BoundText {
    /// `start`.
    Start,
    /// `here`.
    Here,
    /// `event N`.
    Event(u64),
    /// `tick N [thread M]`.
    Tick(u64, Option<u32>),
    /// A bookmark or a position.
    Place(String),
}

/// Parses `start | here | event N | tick N [thread M] | BOOKMARK | POSITION`.
fn parse_bound(words: &[&str]) -> anyhow::Result<BoundText> {
    let number = |w: Option<&&str>, what: &str| -> anyhow::Result<u64> {
        let w = w.copied().unwrap_or("");
        w.parse()
            .map_err(|_| anyhow::anyhow!("Invalid {what} \"{w}\"."))
    };
    Ok(match words {
        ["start"] => BoundText::Start,
        ["here"] => BoundText::Here,
        ["event", n] => BoundText::Event(number(Some(n), "event number")?),
        ["tick", n] => BoundText::Tick(number(Some(n), "tick count")?, None),
        ["tick", n, "thread", m] => {
            let m = m
                .parse::<u32>()
                .map_err(|_| anyhow::anyhow!("Invalid thread ID: {m}"))?;
            BoundText::Tick(number(Some(n), "tick count")?, Some(m))
        }
        [one] => BoundText::Place(one.to_string()),
        _ => bail!(ERA_USAGE),
    })
}

/// How `era` is used.
pub const ERA_USAGE: &str = "Usage: era NAME from BOUND [to BOUND], a BOUND being start, here, event N, tick N [thread M], a bookmark or a position";

/// The recorded thread id of gdb's thread `num` (default: the selected thread).
pub(super) fn recorded_thread(s: &mut Session, num: Option<u32>) -> anyhow::Result<(i32, u32)> {
    let threads = s.inferior.as_ref().map(|i| i.threads()).unwrap_or_default();
    let info = match num {
        Some(n) => threads
            .iter()
            .find(|t| t.num == n)
            .ok_or_else(|| anyhow::anyhow!("Unknown thread {n}."))?,
        None => threads
            .iter()
            .find(|t| Some(t.tid) == s.thread)
            .or(threads.first())
            .ok_or_else(|| anyhow::anyhow!("The program is not being run."))?,
    };
    let replay = s.replay.as_ref().context(NEEDS_RECORDING)?;
    Ok((replay.recorded_tid_of(info.tid), info.num))
}

/// `goto tick N [thread M]`: to the instant thread M (gdb's number; default the selected
/// thread) has counted N ticks — forward from here if it has not yet, else from the start of
/// the recording; silently (no breakpoint stops on the way, no debugger event acts). A count
/// the thread never reaches is refused and the replay stays where it was.
pub(crate) fn goto_tick(s: &mut Session, ticks: u64, thread: Option<u32>) -> anyhow::Result<Stop> {
    let Some(replay) = s.replay.as_ref() else {
        bail!(NEEDS_RECORDING);
    };
    if !replay.counts_ticks() {
        bail!("This recording has no tick counts (it was made without the instruction counter).");
    }
    let (recorded, num) = recorded_thread(s, thread)?;
    let tid = run_to_tick(s, recorded, ticks)?
        .with_context(|| format!("The recording has no tick {ticks} of thread {num}."))?;
    let at = Position::at_event(
        s.replay.as_ref().map(|r| r.events_replayed()).unwrap_or(0),
        Some(ticks),
        s.live()?.regs(tid).map(|r| r.pc()).unwrap_or(0),
    );
    arrived(s, Some(tid), Some(at));
    s.thread = Some(tid);
    arrive(s, &StopEvent::Stepped { tid }, None, true)
}

/// Runs the replay silently until recorded thread `thread` has counted `ticks` (from the
/// start of the recording if it has already); returns the thread. When the recording ends
/// first (None) or the user interrupts, the replay goes back where it was.
fn run_to_tick(s: &mut Session, thread: i32, ticks: u64) -> anyhow::Result<Option<Tid>> {
    let now = if s.started && s.pid().is_some() {
        Some(capture(s)?)
    } else {
        None
    };
    let counted = s.replay.as_mut().and_then(|r| r.ticks_of(thread));
    if now.is_none() || counted.is_some_and(|c| c >= ticks) {
        restart(s)?;
        s.started = true;
    }
    if let Some(r) = s.replay.as_mut() {
        r.set_quiet(true);
    }
    s.travel.run_to = Some((thread, ticks));
    let result = crate::hook::resume_raw(s, &mut Quiet, Resume::Continue, None);
    s.travel.run_to = None;
    let reached = match &result {
        Ok((StopEvent::Interrupted, Some(Reason::Tick(t)))) if *t == ticks => s.thread,
        _ => None,
    };
    let interrupted = matches!(&result, Ok((_, Some(Reason::Interrupted))));
    if let Some(tid) = reached {
        return Ok(Some(tid));
    }
    back_where_it_was(s, now)?;
    result?;
    if interrupted {
        bail!("Interrupted on the way; the replay went back where it was.");
    }
    Ok(None)
}

/// Brings the replay back to `now` (captured before a silent run), or to before the first
/// instruction when it had not started.
fn back_where_it_was(s: &mut Session, now: Option<Instant>) -> anyhow::Result<()> {
    match now {
        Some(now) => {
            let (tid, at) = back_to(s, &now)?;
            arrived(s, Some(tid), Some(at));
        }
        None => {
            restart(s)?;
            let tid = s.pid().map(Tid);
            arrived(s, tid, None);
            s.started = false;
        }
    }
    Ok(())
}

/// `era NAME from BOUND [to BOUND]`: defines (or redefines) era NAME. Bounds named by ticks
/// are found by running there (then the replay comes back).
pub(crate) fn define_era(s: &mut Session, args: &str) -> anyhow::Result<NamedEra> {
    if s.replay.is_none() {
        bail!(NEEDS_RECORDING);
    }
    let words: Vec<&str> = args.split_whitespace().collect();
    let (name, rest) = match words.split_first() {
        Some((name, rest)) if rest.first() == Some(&"from") => (*name, &rest[1..]),
        _ => bail!(ERA_USAGE),
    };
    if name.contains(':') || name.parse::<u64>().is_ok() {
        bail!("An era's name is a word that is not a number and has no ':' (got \"{name}\").");
    }
    let (from, to) = match rest.iter().position(|w| *w == "to") {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let from = parse_bound(from)?;
    let to = to.map(parse_bound).transpose()?;
    let from = resolve(s, from)?;
    let to = to.map(|t| resolve(s, t)).transpose()?;
    if let Some(t) = &to {
        if t.moment <= from.moment {
            bail!(
                "An era must end after it starts (from {} to {}).",
                from.moment,
                t.moment
            );
        }
    }
    let era = NamedEra {
        name: name.to_string(),
        from,
        to,
    };
    s.travel.eras.insert(name.to_string(), era.clone());
    Ok(era)
}

/// Where a bound is.
fn resolve(s: &mut Session, b: BoundText) -> anyhow::Result<EraBound> {
    Ok(match b {
        BoundText::Start => EraBound {
            moment: Moment::event(0),
            position: None,
            named: "start".into(),
        },
        BoundText::Event(e) => {
            super::places::check_event(s, e)?;
            EraBound {
                moment: Moment::event(e),
                position: None,
                named: format!("event {e}"),
            }
        }
        BoundText::Here => {
            let p = here(s)?;
            EraBound {
                moment: Moment::of(&p),
                position: Some(p),
                named: "here".into(),
            }
        }
        BoundText::Place(text) => {
            let (goal, what) = parse_goal(s, &text)?;
            let Goal::Position(p) = goal else {
                bail!(ERA_USAGE);
            };
            EraBound {
                moment: Moment::of(&p),
                position: Some(p),
                named: what,
            }
        }
        BoundText::Tick(ticks, thread) => {
            if !s.replay.as_ref().is_some_and(|r| r.counts_ticks()) {
                bail!("This recording has no tick counts (it was made without the instruction counter).");
            }
            let (recorded, num) = recorded_thread(s, thread)?;
            // There and back: the replay stays where the user is.
            let now = if s.started && s.pid().is_some() {
                Some(capture(s)?)
            } else {
                None
            };
            let tid = run_to_tick(s, recorded, ticks)?
                .with_context(|| format!("The recording has no tick {ticks} of thread {num}."))?;
            let event = s.replay.as_ref().map(|r| r.events_replayed()).unwrap_or(0);
            let pc = s.live()?.regs(tid).map(|r| r.pc()).unwrap_or(0);
            let p = Position::at_event(event, Some(ticks), pc);
            back_where_it_was(s, now)?;
            EraBound {
                moment: Moment::of(&p),
                position: Some(p),
                named: format!("tick {ticks} of thread {num}"),
            }
        }
    })
}

/// `goto era NAME [end]`: to the start of era NAME (or its end).
pub(crate) fn goto_era(s: &mut Session, name: &str, end: bool) -> anyhow::Result<Stop> {
    let Some(era) = s.travel.eras.get(name).cloned() else {
        bail!("No era named \"{name}\".");
    };
    let bound = if end {
        era.to
            .ok_or_else(|| anyhow::anyhow!("Era {name} lasts to the end of the recording."))?
    } else {
        era.from
    };
    match bound.position {
        Some(p) => goto(s, &p.to_string()),
        None if bound.moment.event == 0 => goto(s, "start"),
        None => goto(s, &format!("event {}", bound.moment.event)),
    }
}

/// The bounds of era NAME, for a breakpoint it bounds.
pub(crate) fn era_bounds(s: &Session, name: &str) -> anyhow::Result<(Moment, Option<Moment>)> {
    let era = s
        .travel
        .eras
        .get(name)
        .ok_or_else(|| anyhow::anyhow!("No era named \"{name}\"."))?;
    Ok((era.from.moment, era.to.as_ref().map(|t| t.moment)))
}

/// `delete era NAME`: the breakpoints it bounds keep their bounds.
pub(crate) fn delete_era(s: &mut Session, name: &str) -> anyhow::Result<()> {
    let name = name.trim();
    if s.travel.eras.remove(name).is_none() {
        bail!("No era named \"{name}\".");
    }
    Ok(())
}
