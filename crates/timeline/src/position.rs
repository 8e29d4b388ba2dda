//! Positions: names of instruction instances (DESIGN.md, "Time").

use std::fmt;
use std::str::FromStr;

use crate::TimelineError;

/// One instruction instance of a replay: the `instance`-th arrival at `pc` after `event`
/// recorded events were replayed; instance 0 is the moment the event was replayed itself
/// (the thread that runs next is at `pc`).
///
/// Invariant: between two events one thread runs, deterministically, so the same position
/// always designates the same registers and memory. Positions with different events are
/// ordered by event; within one event their order is found by replaying.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Position {
    /// Recorded events replayed before this instant.
    pub event: u64,
    /// The pc the instant is at.
    pub pc: u64,
    /// Which arrival at `pc` since `event` (0: at the event itself).
    pub instance: u64,
}

impl Position {
    /// The instant at which `event` events have been replayed.
    pub fn at_event(event: u64, pc: u64) -> Position {
        Position {
            event,
            pc,
            instance: 0,
        }
    }
}

/// The short form users copy: `EVENT:PC:INSTANCE`, e.g. `12:0x401136:3`.
impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{:#x}:{}", self.event, self.pc, self.instance)
    }
}

impl FromStr for Position {
    type Err = TimelineError;

    fn from_str(s: &str) -> Result<Position, TimelineError> {
        let bad = || TimelineError::Malformed(s.to_string());
        let mut parts = s.trim().split(':');
        let (Some(e), Some(pc), Some(k), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        let event = e.trim().parse::<u64>().map_err(|_| bad())?;
        let pc = pc.trim();
        let pc = match pc.strip_prefix("0x").or_else(|| pc.strip_prefix("0X")) {
            Some(hex) => u64::from_str_radix(hex, 16),
            None => u64::from_str_radix(pc, 16),
        }
        .map_err(|_| bad())?;
        let instance = k.trim().parse::<u64>().map_err(|_| bad())?;
        Ok(Position {
            event,
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
            pc: 0x401136,
            instance: 3,
        };
        assert_eq!(p.to_string(), "12:0x401136:3");
        assert_eq!("12:0x401136:3".parse::<Position>(), Ok(p));
        assert_eq!(" 12:401136:3 ".parse::<Position>(), Ok(p));
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
            "1:2:3:4",
        ] {
            assert!(s.parse::<Position>().is_err(), "{s}");
        }
    }
}
