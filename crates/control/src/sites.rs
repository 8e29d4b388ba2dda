//! Breakpoint sites: the int3 bytes planted in the program, with the bytes they replaced.
//!
//! A site is shared by every breakpoint at its address (user breakpoints, temporary ones,
//! internal step-resume traps): the table counts references and touches memory only on the
//! first insert and the last remove. Removal writes the original byte back *before* the entry is
//! dropped, so that "no site here" and "no int3 here" agree for every observer (seed 004).

use hindsight_ptrace::ProcessMemory;
use std::collections::BTreeMap;

use crate::error::ControlError;

/// The x86 breakpoint instruction.
pub const INT3: u8 = 0xcc;

/// How a thread gets past a planted site without lifting it, once decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepPlan {
    /// Run the relocated copy at `slot`; it jumps back by itself.
    Relocated {
        /// Address of the copy in the scratch area.
        slot: u64,
    },
    /// A direct call: push `return_addr`, go to `target`.
    EmulateCall {
        /// The call's target.
        target: u64,
        /// The address after the call instruction.
        return_addr: u64,
    },
    /// Lift the trap and single-step with every other thread stopped.
    Inline,
}

/// One planted int3.
#[derive(Debug, Clone)]
pub struct Site {
    /// The byte the int3 replaced.
    pub original: u8,
    refs: u32,
    /// How to step over it, computed on first need.
    pub plan: Option<StepPlan>,
}

/// All planted sites of one address space.
#[derive(Debug, Default)]
pub struct SiteTable {
    sites: BTreeMap<u64, Site>,
}

impl SiteTable {
    /// Adds a reference to the site at `addr`, planting the int3 if it is the first.
    pub fn insert(&mut self, mem: &ProcessMemory, addr: u64) -> Result<(), ControlError> {
        if let Some(site) = self.sites.get_mut(&addr) {
            site.refs += 1;
            return Ok(());
        }
        let mut b = [0u8; 1];
        mem.read(addr, &mut b).map_err(|_| {
            ControlError::Insert(format!(
                "Cannot insert breakpoint at {addr:#x}: Cannot access memory at address {addr:#x}"
            ))
        })?;
        mem.write(addr, &[INT3]).map_err(|_| {
            ControlError::Insert(format!(
                "Cannot insert breakpoint at {addr:#x}: Cannot access memory at address {addr:#x}"
            ))
        })?;
        self.sites.insert(
            addr,
            Site {
                original: b[0],
                refs: 1,
                plan: None,
            },
        );
        Ok(())
    }

    /// Drops a reference; the last one restores the original byte, then forgets the site.
    pub fn remove(&mut self, mem: &ProcessMemory, addr: u64) -> Result<(), ControlError> {
        let Some(site) = self.sites.get_mut(&addr) else {
            return Ok(());
        };
        if site.refs > 1 {
            site.refs -= 1;
            return Ok(());
        }
        // Order matters (seed 004): memory first, table second.
        mem.write(addr, &[site.original])?;
        self.sites.remove(&addr);
        Ok(())
    }

    /// The site at `addr`, if planted.
    pub fn get(&self, addr: u64) -> Option<&Site> {
        self.sites.get(&addr)
    }

    /// Records how to step over the site at `addr`.
    pub fn set_plan(&mut self, addr: u64, plan: StepPlan) {
        if let Some(s) = self.sites.get_mut(&addr) {
            s.plan = Some(plan);
        }
    }

    /// Temporarily writes the original byte back (inline step-over); the entry stays.
    pub fn lift(&self, mem: &ProcessMemory, addr: u64) -> Result<(), ControlError> {
        if let Some(s) = self.sites.get(&addr) {
            mem.write(addr, &[s.original])?;
        }
        Ok(())
    }

    /// Re-plants a lifted site.
    pub fn replant(&self, mem: &ProcessMemory, addr: u64) -> Result<(), ControlError> {
        if self.sites.contains_key(&addr) {
            mem.write(addr, &[INT3])?;
        }
        Ok(())
    }

    /// Replaces planted int3s inside `[addr, addr + buf.len())` by the bytes they hide, so that
    /// readers see the program's own memory.
    pub fn unmask(&self, addr: u64, buf: &mut [u8]) {
        let end = addr.saturating_add(buf.len() as u64);
        for (a, s) in self.sites.range(addr..end) {
            buf[(a - addr) as usize] = s.original;
        }
    }

    /// Writes every original byte back into another address space (a forked child that shares
    /// none of our bookkeeping), leaving this table as it is.
    pub fn restore_into(&self, mem: &ProcessMemory) {
        for (a, s) in &self.sites {
            let _ = mem.write(*a, &[s.original]);
        }
    }

    /// Forgets every site without touching memory (after exec, the memory is gone).
    pub fn forget_all(&mut self) {
        self.sites.clear();
    }

    /// Addresses of all planted sites.
    pub fn addresses(&self) -> impl Iterator<Item = u64> + '_ {
        self.sites.keys().copied()
    }
}
