//! Stops as data: what every motion (forward or backward) returns, and how the session takes
//! one in (the thread that stopped becomes the selected one, at frame 0; temporary breakpoints
//! that stopped it are deleted; the last stop is remembered for `continue N`, reverse motions
//! and the gdb server).
//!
//! Invariant: a motion ends with exactly one [`Stop`], made by [`arrive`]; what happened on the
//! way (threads, dprintf text, an exec) went to the front end's observer as it happened.

use hindsight_breakpoints::table::{BreakpointKind, WatchAccess};
use hindsight_control::StopEvent;
use hindsight_ptrace::Tid;
use hindsight_symbols::value::Value;

use crate::hook::Reason;
use crate::session::Session;

/// Why the program stopped, in the terms a user is told.
#[derive(Debug, Clone, PartialEq)]
pub enum StopReason {
    /// The motion ended where it was meant to (a step, `finish`, `goto`…), or for no reason
    /// of the user's.
    Step,
    /// A user breakpoint.
    Breakpoint {
        /// Its number.
        number: u32,
        /// It was temporary (`tbreak`, `start`): it is deleted now.
        temporary: bool,
    },
    /// A breakpoint's condition could not be evaluated (gdb stops and says why).
    ConditionError {
        /// The breakpoint's number.
        number: u32,
        /// Why the condition failed.
        error: String,
    },
    /// A watchpoint saw its value change (or be read, for read/access watchpoints).
    Watchpoint {
        /// Its number.
        number: u32,
        /// How it watches.
        access: WatchAccess,
        /// The watched expression as the user gave it.
        expr: String,
        /// The value before (None for a read, or an access that did not change it). Going
        /// backward, the later value.
        old: Option<Value>,
        /// The value now.
        new: Value,
    },
    /// A signal that stops the program (`handle SIG stop`).
    Signal {
        /// The signal number.
        signal: i32,
    },
    /// The program exited with this status.
    Exited {
        /// The exit status.
        code: i32,
    },
    /// A signal killed the program.
    Killed {
        /// The signal number.
        signal: i32,
    },
    /// Going forward reached the end of the recording.
    EndOfHistory {
        /// Why, in words ("no more events", "the program exits here").
        why: String,
    },
    /// Going backward reached the start of the recording.
    StartOfHistory,
    /// A quantum debugger event (`break event N`) stopped the replay at this event.
    EventReached {
        /// The event.
        event: u64,
    },
    /// A tick quantum (`break tick N`) stopped the replay: the stopped thread counted this
    /// many ticks.
    TickReached {
        /// Its tick count.
        ticks: u64,
    },
    /// The user interrupted the motion (^C, a front end's pause); it stopped here.
    Interrupted,
}

/// Where and why a motion ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Stop {
    /// Why.
    pub reason: StopReason,
    /// The thread that stopped, now selected (None when the program is gone, or nothing ran).
    pub thread: Option<Tid>,
    /// The stop is in another thread than the one selected before (gdb announces it).
    pub switched_thread: bool,
    /// The stop is in another function than the motion started in, or is not the end of a
    /// step: gdb shows the frame line, not only the source line.
    pub new_frame: bool,
    /// The process as its user knows it (in a replay, the recorded pid).
    pub pid: i32,
    /// After `finish`: the value the function returned and its number in the value history
    /// (`$N`).
    pub returned: Option<(usize, Value)>,
}

impl Stop {
    /// Whether the program ended with this stop (exited or killed).
    pub fn ended(&self) -> bool {
        matches!(
            self.reason,
            StopReason::Exited { .. } | StopReason::Killed { .. }
        )
    }

    /// The plain end of a step (what `step N` goes on from).
    pub fn is_clean_step(&self) -> bool {
        self.reason == StopReason::Step && self.thread.is_some()
    }
}

/// Takes a stop in: selects the thread that stopped, remembers the stop, deletes a temporary
/// breakpoint that caused it, loads the symbols of modules mapped since; returns the stop as
/// data. `with_frame`: the frame line is worth showing (see [`Stop::new_frame`]).
pub(crate) fn arrive(
    s: &mut Session,
    stop: &StopEvent,
    reason: Option<&Reason>,
    with_frame: bool,
) -> anyhow::Result<Stop> {
    let out = take_in(s, stop, reason, with_frame)?;
    s.last_report = Some(out.clone());
    Ok(out)
}

fn take_in(
    s: &mut Session,
    stop: &StopEvent,
    reason: Option<&Reason>,
    with_frame: bool,
) -> anyhow::Result<Stop> {
    let pid = s.user_pid();
    s.stepped_cleanly = matches!(stop, StopEvent::Stepped { .. }) && reason.is_none();
    s.last_stop = Some((stop.clone(), reason.cloned()));
    let mut out = Stop {
        reason: StopReason::Step,
        thread: None,
        switched_thread: false,
        new_frame: with_frame,
        pid,
        returned: None,
    };
    let tid = match stop {
        StopEvent::Breakpoint { tid, .. }
        | StopEvent::Watchpoint { tid, .. }
        | StopEvent::Stepped { tid }
        | StopEvent::Signal { tid, .. }
        | StopEvent::Syscall { tid }
        | StopEvent::Exec { tid, .. } => *tid,
        StopEvent::Interrupted => match s.thread {
            Some(t) => t,
            None => {
                if matches!(reason, Some(Reason::Interrupted)) {
                    out.reason = StopReason::Interrupted;
                }
                return Ok(out);
            }
        },
        StopEvent::Exited(code) => {
            out.reason = StopReason::Exited { code: *code };
            delete_temporaries(s, reason);
            s.thread = None;
            return Ok(out);
        }
        StopEvent::Killed(sig) => {
            out.reason = StopReason::Killed { signal: *sig };
            s.thread = None;
            return Ok(out);
        }
    };
    out.switched_thread = s.thread.is_some() && s.thread != Some(tid);
    s.thread = Some(tid);
    s.frame = 0;
    s.last_breakpoint = match reason {
        Some(Reason::Breakpoint(n)) => Some(*n),
        _ => None,
    };
    s.refresh_modules();
    s.live()?;
    out.thread = Some(tid);
    out.reason = match (stop, reason) {
        (StopEvent::Breakpoint { .. }, Some(Reason::Breakpoint(n))) => StopReason::Breakpoint {
            number: *n,
            temporary: s.breakpoints.get(*n).map(|b| b.temporary).unwrap_or(false),
        },
        (StopEvent::Breakpoint { .. }, Some(Reason::ConditionError(n, e))) => {
            StopReason::ConditionError {
                number: *n,
                error: e.clone(),
            }
        }
        (StopEvent::Watchpoint { .. }, Some(Reason::Watch { number, old, new })) => {
            let (access, expr) = match s.breakpoints.get(*number).map(|b| b.kind.clone()) {
                Some(BreakpointKind::Watchpoint { access, expr, .. }) => (access, expr),
                _ => (WatchAccess::Write, String::new()),
            };
            StopReason::Watchpoint {
                number: *number,
                access,
                expr,
                old: old.clone(),
                new: new.clone(),
            }
        }
        (_, Some(Reason::EndOfHistory(why))) => StopReason::EndOfHistory { why: why.clone() },
        (_, Some(Reason::StartOfHistory)) => StopReason::StartOfHistory,
        (_, Some(Reason::Quantum(time))) => StopReason::EventReached { event: *time },
        (_, Some(Reason::Tick(ticks))) => StopReason::TickReached { ticks: *ticks },
        (_, Some(Reason::Interrupted)) => StopReason::Interrupted,
        (StopEvent::Signal { signal, .. }, _) => StopReason::Signal { signal: *signal },
        _ => StopReason::Step,
    };
    delete_temporaries(s, reason);
    Ok(out)
}

/// A temporary breakpoint is deleted once it stopped the program.
fn delete_temporaries(s: &mut Session, reason: Option<&Reason>) {
    if let Some(Reason::Breakpoint(n)) = reason {
        if s.breakpoints.get(*n).map(|b| b.temporary).unwrap_or(false) {
            let _ = crate::breakpoints::delete_one(s, *n);
        }
    }
}
