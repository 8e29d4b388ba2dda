//! Positions: names of instruction instances (DESIGN.md, "Time").

use std::fmt;
use std::str::FromStr;

use crate::TimelineError;

/// One instruction instance of a replay: after `event` recorded events were replayed, the
/// thread that runs next has counted `ticks` ticks (the instruction counter, crate
/// `hindsight-ticks`), and this is its `instance`-th arrival at `pc` since then; instance 0
/// is the moment the count began (or the event was replayed, if the thread had counted
/// `ticks` already then): the thread stands at `pc` before running it. Without ticks (a trace
/// recorded without the counter) arrivals count from the event.
///
/// Invariant: between two events one thread runs, deterministically, so the same position
/// always designates the same registers and memory. Positions are ordered by event, then
/// ticks; within one tick interval their order is found by replaying (a pc is reached more
/// than once in one interval only through returns or code that does not count).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Position {
    /// Recorded events replayed before this instant.
    pub event: u64,
    /// The running thread's tick count (None: counted from the event).
    pub ticks: Option<u64>,
    /// The pc the instant is at.
    pub pc: u64,
    /// Which arrival at `pc` since the count (or the event) began (0: that moment itself).
    pub instance: u64,
}

impl Position {
    /// The instant at which `event` events have been replayed (the running thread having
    /// counted `ticks`, if known).
    pub fn at_event(event: u64, ticks: Option<u64>, pc: u64) -> Position {
        Position {
            event,
            ticks,
            pc,
            instance: 0,
        }
    }
}

/// The short form users copy: `EVENT:TICKS:PC:INSTANCE`, e.g. `12:50311:0x401136:1`
/// (`EVENT:PC:INSTANCE` without ticks).
impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.ticks {
            Some(t) => write!(f, "{}:{t}:{:#x}:{}", self.event, self.pc, self.instance),
            None => write!(f, "{}:{:#x}:{}", self.event, self.pc, self.instance),
        }
    }
}

impl FromStr for Position {
    type Err = TimelineError;

    fn from_str(s: &str) -> Result<Position, TimelineError> {
        let bad = || TimelineError::Malformed(s.to_string());
        let parts: Vec<&str> = s.trim().split(':').collect();
        let (e, ticks, pc, k) = match parts[..] {
            [e, pc, k] => (e, None, pc, k),
            [e, t, pc, k] => (e, Some(t), pc, k),
            _ => return Err(bad()),
        };
        let event = e.trim().parse::<u64>().map_err(|_| bad())?;
        let ticks = match ticks {
            Some(t) => Some(t.trim().parse::<u64>().map_err(|_| bad())?),
            None => None,
        };
        let pc = pc.trim();
        let pc = match pc.strip_prefix("0x").or_else(|| pc.strip_prefix("0X")) {
            Some(hex) => u64::from_str_radix(hex, 16),
            None => u64::from_str_radix(pc, 16),
        }
        .map_err(|_| bad())?;
        let instance = k.trim().parse::<u64>().map_err(|_| bad())?;
        Ok(Position {
            event,
            ticks,
            pc,
            instance,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_and_parses_back() {
        let p = Position {
            event: 12,
            ticks: None,
            pc: 0x401136,
            instance: 3,
        };
        assert_eq!(p.to_string(), "12:0x401136:3");
        assert_eq!("12:0x401136:3".parse::<Position>(), Ok(p));
        assert_eq!(" 12:401136:3 ".parse::<Position>(), Ok(p));
        let t = Position {
            ticks: Some(50311),
            ..p
        };
        assert_eq!(t.to_string(), "12:50311:0x401136:3");
        assert_eq!("12:50311:0x401136:3".parse::<Position>(), Ok(t));
    }

    #[test]
    fn refuses_malformed() {
        for s in [
            "",
            "12",
            "12:0x40",
            "a:0x40:1",
            "1:zz:1",
            "1:0x40:-1",
            "1:2:3:4:5",
            "1:x:0x40:1",
        ] {
            assert!(s.parse::<Position>().is_err(), "{s}");
        }
    }
}
