//! User breakpoints and watchpoints, numbered as gdb numbers them, with their conditions,
//! ignore counts and hit counts; and seed 004's test for traps at addresses without one.
//!
//! The table is pure bookkeeping. Whoever plants int3s for it must keep seed 004's order:
//! restore the original byte *before* a breakpoint leaves the table, so that a trap at an
//! address with no breakpoint is a zombie exactly when memory no longer holds an int3 there
//! ([`classify_trap`]).

use std::collections::BTreeMap;

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

/// Seed 004's test: the table first, memory second.
pub fn classify_trap(has_site: bool, byte_in_memory: u8) -> TrapKind {
    if has_site {
        TrapKind::Hit
    } else if byte_in_memory == 0xcc {
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
        assert_eq!(classify_trap(true, 0xcc), TrapKind::Hit);
        assert_eq!(classify_trap(false, 0x55), TrapKind::Zombie);
        assert_eq!(classify_trap(false, 0xcc), TrapKind::ProgramsOwn);
    }
}
