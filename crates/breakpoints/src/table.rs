//! User breakpoints and watchpoints, numbered as gdb numbers them, with their conditions,
//! ignore counts and hit counts ([`BreakpointTable`]); and seed 004's test for traps at
//! addresses without a site ([`classify_trap`]).
//!
//! Everything here is bookkeeping: the tracer writes memory (its site table plants and lifts
//! the int3s). Seed 004's invariant, which makes zombie breakpoints recognisable, is the
//! tracer's to keep: **a site leaves its table only after the original byte is back in
//! memory**. Then an int3 trap at an address with no site is either a zombie (memory holds no
//! int3 there any more: a hit of a breakpoint removed while the hit was pending) or the
//! program's own int3 (memory still holds one).

use std::collections::BTreeMap;

use thiserror::Error;

/// What a watchpoint reacts to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WatchAccess {
    /// `watch`: writes (reported when the value changes).
    Write,
    /// `rwatch`: reads.
    Read,
    /// `awatch`: reads and writes.
    Access,
}

/// A breakpoint or a watchpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BreakpointKind {
    /// A code breakpoint at `locations`.
    Breakpoint,
    /// A hardware watchpoint on `len` bytes at `address`.
    Watchpoint {
        /// Which accesses.
        access: WatchAccess,
        /// The expression as the user wrote it.
        expr: String,
        /// Watched address.
        address: u64,
        /// Watched length.
        len: u64,
    },
}

/// One numbered breakpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Breakpoint {
    /// gdb's number (shared between breakpoints and watchpoints).
    pub number: u32,
    /// Breakpoint or watchpoint.
    pub kind: BreakpointKind,
    /// `tbreak`: deleted when it stops the program.
    pub temporary: bool,
    /// Disabled breakpoints have no int3 planted.
    pub enabled: bool,
    /// Stop only if this expression is true.
    pub condition: Option<String>,
    /// Hits (with a true condition) still to pass without stopping.
    pub ignore_count: u32,
    /// Hits with a true condition, ignored ones included.
    pub hit_count: u64,
    /// Code addresses (breakpoints only).
    pub locations: Vec<u64>,
    /// The location as the user wrote it.
    pub spec: String,
}

/// All user breakpoints and watchpoints.
#[derive(Debug, Clone, Default)]
pub struct BreakpointTable {
    items: BTreeMap<u32, Breakpoint>,
    next: u32,
    /// Debug register → watchpoint number, as last allocated.
    watch_slots: Vec<(u8, u32)>,
}

impl BreakpointTable {
    /// An empty table; the first number is 1.
    pub fn new() -> Self {
        BreakpointTable {
            items: BTreeMap::new(),
            next: 1,
            watch_slots: Vec::new(),
        }
    }

    fn add(
        &mut self,
        kind: BreakpointKind,
        spec: String,
        locations: Vec<u64>,
        temporary: bool,
        condition: Option<String>,
    ) -> u32 {
        let n = self.next;
        self.next += 1;
        self.items.insert(
            n,
            Breakpoint {
                number: n,
                kind,
                temporary,
                enabled: true,
                condition,
                ignore_count: 0,
                hit_count: 0,
                locations,
                spec,
            },
        );
        n
    }

    /// The number the next breakpoint or watchpoint gets.
    pub fn next_number(&self) -> u32 {
        self.next
    }

    /// Numbers from `n` on, unless the table is further already (several tables that share
    /// one numbering: gdb's inferiors).
    pub fn number_from(&mut self, n: u32) {
        self.next = self.next.max(n);
    }

    /// The next breakpoint added gets number `n` exactly, even below numbers given already
    /// (a breakpoint of every inferior set again, under its own number, in a table that
    /// lost it); the caller keeps numbers unique and calls [`BreakpointTable::number_from`]
    /// afterwards to go on where it was.
    pub fn reuse_number(&mut self, n: u32) {
        self.next = n;
    }

    /// Adds a code breakpoint; returns its number.
    pub fn add_breakpoint(
        &mut self,
        spec: String,
        locations: Vec<u64>,
        temporary: bool,
        condition: Option<String>,
    ) -> u32 {
        self.add(
            BreakpointKind::Breakpoint,
            spec,
            locations,
            temporary,
            condition,
        )
    }

    /// Adds a watchpoint; returns its number.
    pub fn add_watchpoint(
        &mut self,
        expr: String,
        access: WatchAccess,
        address: u64,
        len: u64,
        condition: Option<String>,
    ) -> u32 {
        let kind = BreakpointKind::Watchpoint {
            access,
            expr: expr.clone(),
            address,
            len,
        };
        self.add(kind, expr, Vec::new(), false, condition)
    }

    /// Breakpoint `n`.
    pub fn get(&self, n: u32) -> Option<&Breakpoint> {
        self.items.get(&n)
    }

    /// Breakpoint `n`, to change.
    pub fn get_mut(&mut self, n: u32) -> Option<&mut Breakpoint> {
        self.items.get_mut(&n)
    }

    /// Removes breakpoint `n` (its int3s must already be gone from memory).
    pub fn delete(&mut self, n: u32) -> Option<Breakpoint> {
        self.watch_slots.retain(|(_, w)| *w != n);
        self.items.remove(&n)
    }

    /// All, by number.
    pub fn iter(&self) -> impl Iterator<Item = &Breakpoint> {
        self.items.values()
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Numbers of the enabled code breakpoints located at `addr`.
    pub fn breakpoints_at(&self, addr: u64) -> Vec<u32> {
        self.items
            .values()
            .filter(|b| {
                b.enabled && b.kind == BreakpointKind::Breakpoint && b.locations.contains(&addr)
            })
            .map(|b| b.number)
            .collect()
    }

    /// Records which debug register watches for which watchpoint.
    pub fn set_watch_slots(&mut self, slots: Vec<(u8, u32)>) {
        self.watch_slots = slots;
    }

    /// Watchpoints whose registers are set in `dr6` (bits 0–3), each once.
    pub fn watchpoints_for_slots(&self, dr6: u8) -> Vec<u32> {
        let mut out = Vec::new();
        for (slot, n) in &self.watch_slots {
            if dr6 & (1 << slot) != 0 && !out.contains(n) {
                out.push(*n);
            }
        }
        out
    }
}

/// A table operation on a number that does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum TableError {
    /// No breakpoint or watchpoint has this number (gdb's message).
    #[error("No breakpoint number {0}.")]
    NoSuchBreakpoint(u32),
}

/// What one hit means for one breakpoint ([`BreakpointTable::record_hit`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Stop the program. `delete`: a temporary breakpoint, to delete once stopped (after its
    /// sites are lifted).
    Stop {
        /// Temporary: delete it now that it stopped.
        delete: bool,
    },
    /// The condition held, but the ignore count swallowed the hit (counted all the same).
    Ignored,
    /// The condition was false: no hit, no stop.
    ConditionFalse,
}

/// One breakpoint's reaction to a hit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HitOutcome {
    /// The breakpoint.
    pub number: u32,
    /// What to do.
    pub verdict: Verdict,
    /// The condition could not be evaluated; gdb then treats it as true and reports
    /// "Error in testing condition for breakpoint N:" with this message.
    pub condition_error: Option<String>,
}

/// True when any outcome stops the program.
pub fn stops(outcomes: &[HitOutcome]) -> bool {
    outcomes
        .iter()
        .any(|o| matches!(o.verdict, Verdict::Stop { .. }))
}

impl BreakpointTable {
    fn entry(&mut self, n: u32) -> Result<&mut Breakpoint, TableError> {
        self.items
            .get_mut(&n)
            .ok_or(TableError::NoSuchBreakpoint(n))
    }

    /// `enable N`.
    pub fn enable(&mut self, n: u32) -> Result<(), TableError> {
        self.entry(n)?.enabled = true;
        Ok(())
    }

    /// `disable N`. The tracer lifts the sites only this breakpoint held
    /// ([`SiteSet::diff`]).
    pub fn disable(&mut self, n: u32) -> Result<(), TableError> {
        self.entry(n)?.enabled = false;
        Ok(())
    }

    /// `condition N [EXPR]`: `None` makes it unconditional.
    pub fn set_condition(&mut self, n: u32, condition: Option<String>) -> Result<(), TableError> {
        self.entry(n)?.condition = condition;
        Ok(())
    }

    /// `ignore N COUNT`.
    pub fn set_ignore(&mut self, n: u32, count: u32) -> Result<(), TableError> {
        self.entry(n)?.ignore_count = count;
        Ok(())
    }

    /// Counts one hit of breakpoint or watchpoint `n` whose condition evaluated to
    /// `condition` (`Ok(true)` when it has none), as gdb does: a false condition is no hit;
    /// a true one is counted, then swallowed by the ignore count if any is left, else it
    /// stops. A condition that fails to evaluate counts as true and carries its error.
    pub fn record_hit(
        &mut self,
        n: u32,
        condition: Result<bool, String>,
    ) -> Result<HitOutcome, TableError> {
        let bp = self.entry(n)?;
        let (holds, condition_error) = match condition {
            Ok(b) => (b, None),
            Err(e) => (true, Some(e)),
        };
        let verdict = if !holds {
            Verdict::ConditionFalse
        } else {
            bp.hit_count += 1;
            if bp.ignore_count > 0 {
                bp.ignore_count -= 1;
                Verdict::Ignored
            } else {
                Verdict::Stop {
                    delete: bp.temporary,
                }
            }
        };
        Ok(HitOutcome {
            number: n,
            verdict,
            condition_error,
        })
    }

    /// A hit of the site at `addr`: every enabled code breakpoint there, by number, with its
    /// condition evaluated by `eval` (called only for breakpoints that have one, in the
    /// trapping thread's context).
    pub fn process_hit(
        &mut self,
        addr: u64,
        mut eval: impl FnMut(u32, &str) -> Result<bool, String>,
    ) -> Vec<HitOutcome> {
        let mut out = Vec::new();
        for n in self.breakpoints_at(addr) {
            let condition = match self.items.get(&n).and_then(|b| b.condition.as_deref()) {
                Some(c) => eval(n, c),
                None => Ok(true),
            };
            if let Ok(o) = self.record_hit(n, condition) {
                out.push(o);
            }
        }
        out
    }
}

/// The int3 instruction.
pub const INT3: u8 = 0xcc;

/// What a breakpoint trap (int3) at an address means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrapKind {
    /// A site of ours is planted there: a hit.
    Hit,
    /// No site, and no int3 in memory: a hit of a breakpoint removed while the hit was
    /// pending. Rewind the pc and resume silently.
    Zombie,
    /// No site, but an int3 in memory: the program's own. It gets its SIGTRAP.
    ProgramsOwn,
}

/// Seed 004's test for an int3 trap whose instruction was at the pc minus one: the site
/// table first (`has_site`), memory second (`byte_in_memory`: the byte there now, read raw,
/// not with the site table's original bytes put back).
pub fn classify_trap(has_site: bool, byte_in_memory: u8) -> TrapKind {
    if has_site {
        TrapKind::Hit
    } else if byte_in_memory == INT3 {
        TrapKind::ProgramsOwn
    } else {
        TrapKind::Zombie
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_shared_and_never_reused() {
        let mut t = BreakpointTable::new();
        let a = t.add_breakpoint("f".into(), vec![0x10], false, None);
        let w = t.add_watchpoint("g".into(), WatchAccess::Write, 0x40, 4, None);
        t.delete(a);
        let b = t.add_breakpoint("h".into(), vec![0x20], true, Some("x > 1".into()));
        assert_eq!((a, w, b), (1, 2, 3));
        assert_eq!(t.breakpoints_at(0x20), vec![3]);
        assert!(t.breakpoints_at(0x10).is_empty());
        t.get_mut(3).unwrap().enabled = false;
        assert!(t.breakpoints_at(0x20).is_empty());
    }

    #[test]
    fn watch_slots_map_back_to_numbers() {
        let mut t = BreakpointTable::new();
        let w = t.add_watchpoint("s".into(), WatchAccess::Write, 0x40, 16, None);
        t.set_watch_slots(vec![(0, w), (1, w)]);
        assert_eq!(t.watchpoints_for_slots(0b10), vec![w]);
        assert_eq!(t.watchpoints_for_slots(0b11), vec![w]);
        assert!(t.watchpoints_for_slots(0b100).is_empty());
    }

    #[test]
    fn seed_004_classification() {
        // Thread A's hit is reported and the user deletes the breakpoint: the original byte
        // goes back, then the site leaves the table. Thread B's pending trap comes next.
        assert_eq!(classify_trap(true, INT3), TrapKind::Hit);
        assert_eq!(classify_trap(false, 0x55), TrapKind::Zombie);
        // The program's own int3: no site, the instruction is still in memory.
        assert_eq!(classify_trap(false, INT3), TrapKind::ProgramsOwn);
    }

    #[test]
    fn hits_follow_gdbs_counting() {
        let mut t = BreakpointTable::new();
        let plain = t.add_breakpoint("f".into(), vec![0x10], false, None);
        let cond = t.add_breakpoint("f".into(), vec![0x10], false, Some("x > 1".into()));
        let temp = t.add_breakpoint("f".into(), vec![0x10], true, None);
        t.set_ignore(plain, 2).unwrap();
        let mut x = 0;
        let mut asked = Vec::new();
        let mut hit = |t: &mut BreakpointTable, x: i32| {
            t.process_hit(0x10, |n, c| {
                asked.push((n, c.to_string()));
                Ok(x > 1)
            })
        };
        // First hit: plain ignored (counted), cond false (not counted), temp stops.
        let o = hit(&mut t, x);
        assert_eq!(
            o.iter().map(|o| o.verdict.clone()).collect::<Vec<_>>(),
            vec![
                Verdict::Ignored,
                Verdict::ConditionFalse,
                Verdict::Stop { delete: true }
            ]
        );
        assert!(stops(&o));
        t.delete(temp);
        x = 5;
        let o = hit(&mut t, x);
        assert_eq!(o[0].verdict, Verdict::Ignored);
        assert_eq!(o[1].verdict, Verdict::Stop { delete: false });
        let o = hit(&mut t, x);
        assert_eq!(o[0].verdict, Verdict::Stop { delete: false });
        assert_eq!(
            t.get(plain).map(|b| (b.hit_count, b.ignore_count)),
            Some((3, 0))
        );
        assert_eq!(t.get(cond).map(|b| b.hit_count), Some(2));
        assert_eq!(
            asked.len(),
            3,
            "the condition is evaluated only where there is one"
        );
        assert!(asked.iter().all(|(n, c)| *n == cond && c == "x > 1"));
        // A condition that cannot be evaluated stops, and says why.
        t.set_condition(cond, Some("nosuch".into())).unwrap();
        t.disable(plain).unwrap();
        let o = t.process_hit(0x10, |_, _| {
            Err("No symbol \"nosuch\" in current context.".into())
        });
        assert_eq!(o.len(), 1);
        assert_eq!(o[0].verdict, Verdict::Stop { delete: false });
        assert!(o[0]
            .condition_error
            .as_deref()
            .is_some_and(|e| e.contains("nosuch")));
        assert_eq!(t.get(cond).map(|b| b.hit_count), Some(3));
        // No breakpoint there: nothing.
        assert!(t.process_hit(0x99, |_, _| Ok(true)).is_empty());
    }
}
