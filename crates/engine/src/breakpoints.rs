//! The user's breakpoints and watchpoints: locations (`FUNCTION`, `FILE:LINE`, `LINE`,
//! `*ADDRESS`), planting and lifting their sites, the debug registers of watchpoints, and the
//! debugger events attached to them (dprintf, eras).
//!
//! Invariants: an enabled breakpoint's sites are planted in the process, or wait in
//! `pending_sites` until their code is mapped; a breakpoint's int3s leave memory before it
//! leaves the table (seed 004); the enabled watchpoints always fit DR0–DR3 and every thread
//! has them loaded.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _};
use hindsight_breakpoints::debugreg;
use hindsight_breakpoints::table::{Breakpoint, BreakpointKind, BreakpointTable, WatchAccess};
use hindsight_control::DebugRegs;
use hindsight_symbols::LineInfo;

use crate::context;
use crate::session::Session;

/// An era: the breakpoint applies from this moment, up to (not including) that one (None: to
/// the end).
pub type Era = (
    hindsight_timeline::Moment,
    Option<hindsight_timeline::Moment>,
);

/// A breakpoint just set.
#[derive(Debug, Clone, PartialEq)]
pub struct NewBreakpoint {
    /// Its number.
    pub number: u32,
    /// Where its int3s go (one per location).
    pub addresses: Vec<u64>,
    /// The source line of its only location, when that is in a function with line
    /// information.
    pub line: Option<LineInfo>,
}

/// Resolves a gdb location: `FUNCTION`, `FILE:LINE`, `FILE:FUNCTION`, `LINE`, `*EXPR`. A bare
/// line is in `default_file` (where the user is looking), else in main's file.
pub(crate) fn resolve_location(
    s: &mut Session,
    text: &str,
    default_file: Option<&Path>,
) -> anyhow::Result<Vec<u64>> {
    let text = text.trim();
    if let Some(expr) = text.strip_prefix('*') {
        let addr = context::evaluate_address(s, expr.trim())?;
        return Ok(vec![addr]);
    }
    if let Ok(line) = text.parse::<u32>() {
        let file = default_file
            .map(Path::to_path_buf)
            .or_else(|| main_file(s))
            .context("No symbol table is loaded.  Use the \"file\" command.")?;
        return s
            .symbols
            .resolve_line(&file.to_string_lossy(), line)
            .map_err(|e| anyhow::anyhow!("{e}"));
    }
    // FILE:LINE or FILE:FUNCTION (a Rust path `a::b` is a function name, not a file).
    if let Some(i) = text.rfind(':') {
        let is_path_sep = text[..i].ends_with(':') || text[i + 1..].starts_with(':');
        if !is_path_sep {
            let (file, what) = (&text[..i], &text[i + 1..]);
            if let Ok(line) = what.trim().parse::<u32>() {
                return s
                    .symbols
                    .resolve_line(file.trim(), line)
                    .map_err(|e| anyhow::anyhow!("{e}"));
            }
            return function_location(s, what.trim());
        }
    }
    function_location(s, text)
}

fn function_location(s: &Session, name: &str) -> anyhow::Result<Vec<u64>> {
    let funcs = s.symbols.lookup_functions(name);
    if funcs.is_empty() {
        bail!("Function \"{name}\" not defined.");
    }
    let mut addresses: Vec<u64> = funcs.iter().map(|f| f.breakpoint_addr).collect();
    addresses.sort_unstable();
    addresses.dedup();
    Ok(addresses)
}

/// The file of main (where a bare line number points before the program stopped anywhere).
fn main_file(s: &Session) -> Option<PathBuf> {
    let main = s.symbols.lookup_functions("main").into_iter().next()?;
    s.symbols.line_at(main.low).map(|l| l.file)
}

/// Plants the sites of a new breakpoint (all or none).
fn plant(s: &mut Session, addresses: &[u64]) -> anyhow::Result<()> {
    if let Some(inf) = s.inferior.as_mut().filter(|i| i.is_alive()) {
        for (i, &a) in addresses.iter().enumerate() {
            if let Err(e) = inf.insert_site(a) {
                for &b in &addresses[..i] {
                    let _ = inf.remove_site(b);
                }
                bail!("{e}");
            }
        }
    }
    Ok(())
}

/// (address, length, access) of every enabled watchpoint, in number order.
fn watched_ranges(s: &Session) -> Vec<(u64, u64, WatchAccess)> {
    s.breakpoints
        .iter()
        .filter(|b| b.enabled)
        .filter_map(|b| match &b.kind {
            BreakpointKind::Watchpoint {
                access,
                address,
                len,
                ..
            } => Some((*address, *len, *access)),
            _ => None,
        })
        .collect()
}

/// Recomputes DR0–DR3/DR7 from the enabled watchpoints and loads them into every thread.
pub(crate) fn apply_watchpoints(s: &mut Session) -> anyhow::Result<()> {
    let numbers: Vec<u32> = s
        .breakpoints
        .iter()
        .filter(|b| b.enabled && matches!(b.kind, BreakpointKind::Watchpoint { .. }))
        .map(|b| b.number)
        .collect();
    let ranges = watched_ranges(s);
    let alloc = debugreg::allocate(&ranges).map_err(|e| anyhow::anyhow!("{e}"))?;
    s.breakpoints.set_watch_slots(
        alloc
            .slots
            .iter()
            .enumerate()
            .filter_map(|(slot, a)| a.map(|a| (slot as u8, numbers[a.range])))
            .collect(),
    );
    if let Some(inf) = s.inferior.as_mut().filter(|i| i.is_alive()) {
        inf.set_debug_registers(DebugRegs {
            addr: alloc.addresses(),
            dr7: alloc.dr7(),
        })
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    Ok(())
}

fn set_sites(s: &mut Session, bp: &Breakpoint, planted: bool) -> anyhow::Result<()> {
    if let Some(inf) = s.inferior.as_mut().filter(|i| i.is_alive()) {
        if let BreakpointKind::Breakpoint = bp.kind {
            for &a in &bp.locations {
                // A site still waiting for its code to be mapped has nothing to remove.
                if !planted {
                    if let Some(i) = s.pending_sites.iter().position(|&p| p == a) {
                        s.pending_sites.swap_remove(i);
                        continue;
                    }
                }
                let r = if planted {
                    inf.insert_site(a)
                } else {
                    inf.remove_site(a)
                };
                r.map_err(|e| anyhow::anyhow!("{e}"))?;
            }
        }
    }
    Ok(())
}

/// Deletes breakpoint `n`: its int3s leave memory before it leaves the table (seed 004).
pub(crate) fn delete_one(s: &mut Session, n: u32) -> anyhow::Result<()> {
    let Some(bp) = s.breakpoints.get(n).cloned() else {
        bail!("No breakpoint number {n}.");
    };
    if bp.enabled {
        set_sites(s, &bp, false)?;
    }
    s.breakpoints.delete(n);
    s.travel.engine.forget_breakpoint(n);
    s.watch_values.remove(&n);
    s.watch_types.remove(&n);
    if matches!(bp.kind, BreakpointKind::Watchpoint { .. }) {
        apply_watchpoints(s)?;
    }
    Ok(())
}

/// Number of an enabled user breakpoint located at `addr`, if any.
pub(crate) fn user_breakpoint_at(s: &Session, addr: u64) -> Option<u32> {
    s.breakpoints.breakpoints_at(addr).into_iter().next()
}

/// After a restart: plant every enabled breakpoint and load the watchpoints again.
/// Plants the trap where the dynamic loader reports library loads (its `_dl_debug_state`,
/// as gdb does through `r_brk`), while pending breakpoints wait for a library.
pub(crate) fn watch_library_loads(s: &mut Session) {
    let pending = s
        .breakpoints
        .iter()
        .any(|b| b.kind == BreakpointKind::Breakpoint && b.locations.is_empty());
    if !pending {
        return;
    }
    let Some(addr) = s
        .symbols
        .lookup_functions("_dl_debug_state")
        .first()
        .map(|f| f.low)
    else {
        return;
    };
    if let Some(inf) = s.inferior.as_mut().filter(|i| i.is_alive()) {
        if s.library_event != Some(addr) && inf.insert_site(addr).is_ok() {
            s.library_event = Some(addr);
        }
    }
}

/// Resolves the pending breakpoints that the libraries loaded now define, and plants them.
pub(crate) fn resolve_pending(s: &mut Session) {
    let pending: Vec<(u32, String)> = s
        .breakpoints
        .iter()
        .filter(|b| b.kind == BreakpointKind::Breakpoint && b.locations.is_empty())
        .map(|b| (b.number, b.spec.clone()))
        .collect();
    for (n, spec) in pending {
        let Ok(found) = resolve_location(s, &spec, None) else {
            continue;
        };
        let enabled = s.breakpoints.get(n).map(|b| b.enabled).unwrap_or(false);
        if let Some(b) = s.breakpoints.get_mut(n) {
            b.locations = found.clone();
        }
        if enabled {
            if let Some(inf) = s.inferior.as_mut().filter(|i| i.is_alive()) {
                let left = inf.insert_sites_in_code(&found);
                s.pending_sites.extend(left);
            }
        }
    }
}

pub(crate) fn replant_all(s: &mut Session) -> anyhow::Result<()> {
    let list: Vec<Breakpoint> = s
        .breakpoints
        .iter()
        .filter(|b| b.enabled)
        .cloned()
        .collect();
    // Sites whose code is not mapped yet (a library loaded later) wait for
    // `Session::plant_pending`.
    let sites: Vec<u64> = list
        .iter()
        .filter(|b| b.kind == BreakpointKind::Breakpoint)
        .flat_map(|b| b.locations.iter().copied())
        .collect();
    s.pending_sites = match s.inferior.as_mut().filter(|i| i.is_alive()) {
        Some(inf) => inf.insert_sites_in_code(&sites),
        None => Vec::new(),
    };
    if !s.breakpoints.is_empty() {
        apply_watchpoints(s)?;
    }
    // A new process: the loader's trap is planted again for what is still pending.
    s.library_event = None;
    watch_library_loads(s);
    Ok(())
}

impl Session {
    /// The addresses a gdb location names (`FUNCTION`, `FILE:LINE`, `FILE:FUNCTION`, `LINE`,
    /// `*EXPR`); a bare line is in `default_file`, else in main's file.
    pub fn resolve_location(
        &mut self,
        text: &str,
        default_file: Option<&Path>,
    ) -> anyhow::Result<Vec<u64>> {
        resolve_location(self, text, default_file)
    }

    /// Sets a breakpoint at `location` (empty: the selected frame's pc), stopping only when
    /// `condition` holds and, in a replay, only within `era`.
    pub fn add_breakpoint(
        &mut self,
        location: &str,
        default_file: Option<&Path>,
        temporary: bool,
        condition: Option<&str>,
        era: Option<Era>,
    ) -> anyhow::Result<NewBreakpoint> {
        if era.is_some() && self.replay.is_none() {
            bail!("An era breakpoint (from/to, era) needs a recording: times are replay events.");
        }
        let addresses = if location.is_empty() {
            let f = self.selected_frame()?;
            vec![crate::frames::lookup_pc(&f, self.frame)]
        } else {
            resolve_location(self, location, default_file)?
        };
        if let Some(c) = condition {
            // A condition that does not parse is refused up front, as gdb does.
            context::check_syntax(c)?;
        }
        plant(self, &addresses)?;
        self.shared_numbering_before();
        let n = self.breakpoints.add_breakpoint(
            location.to_string(),
            addresses.clone(),
            temporary,
            condition.map(str::to_string),
        );
        self.shared_numbering_after();
        if let Some(era) = era {
            self.set_era(n, era)?;
        }
        let first = addresses[0];
        let line = if addresses.len() == 1
            && self
                .symbols
                .function_at(first)
                .is_some_and(|f| f.has_debug_info)
        {
            self.symbols.line_at(first)
        } else {
            None
        };
        Ok(NewBreakpoint {
            number: n,
            addresses,
            line,
        })
    }

    /// Sets a pending breakpoint: `location` names a function or file that no loaded module
    /// defines yet; it is resolved and planted when the dynamic loader reports a library
    /// that does (live and in a replay). Returns its number.
    pub fn add_pending_breakpoint(
        &mut self,
        location: &str,
        temporary: bool,
        condition: Option<&str>,
    ) -> anyhow::Result<u32> {
        if let Some(c) = condition {
            context::check_syntax(c)?;
        }
        self.shared_numbering_before();
        let n = self.breakpoints.add_breakpoint(
            location.to_string(),
            Vec::new(),
            temporary,
            condition.map(str::to_string),
        );
        self.shared_numbering_after();
        watch_library_loads(self);
        Ok(n)
    }

    /// Sets a dprintf breakpoint (a logpoint): where it is hit (and `condition` holds, within
    /// `era`), `format` is printed with `args` evaluated in the thread that hit it (see
    /// [`Session::printf`]), and the program goes on.
    pub fn add_dprintf(
        &mut self,
        location: &str,
        default_file: Option<&Path>,
        condition: Option<&str>,
        era: Option<Era>,
        (format, args): (String, Vec<String>),
    ) -> anyhow::Result<NewBreakpoint> {
        let b = self.add_breakpoint(location, default_file, false, condition, era)?;
        self.travel.engine.add(
            hindsight_timeline::Spec::Pc {
                breakpoint: b.number,
            },
            hindsight_timeline::Action::Print { format, args },
            false,
        );
        Ok(b)
    }

    /// Watches what `expr` designates (its lvalue) in hardware: `access` says whether writes
    /// that change it, reads, or both stop the program; returns the watchpoint's number.
    pub fn add_watchpoint(
        &mut self,
        expr: &str,
        access: WatchAccess,
        condition: Option<&str>,
    ) -> anyhow::Result<u32> {
        if expr.is_empty() {
            bail!("Argument required (expression to compute).");
        }
        self.live()?;
        let (address, len, bytes, ty) = context::watch_target(self, expr)?;
        self.watch_range(expr, (address, len, bytes, ty), access, condition)
    }

    /// Watches the memory `value` lives in (as [`Session::add_watchpoint`] does for an
    /// expression), shown as `label`: for a front end that found the value earlier, in a frame
    /// that may not be selected now.
    pub fn add_watchpoint_on(
        &mut self,
        label: &str,
        value: &hindsight_symbols::value::Value,
        access: WatchAccess,
        condition: Option<&str>,
    ) -> anyhow::Result<u32> {
        let Some(address) = value.address() else {
            bail!("Cannot watch constant value `{label}'.");
        };
        let len = value.size();
        if len == 0 {
            bail!("Cannot watch `{label}': it has no size.");
        }
        let mut bytes = vec![0u8; len as usize];
        self.live()?
            .read_memory(address, &mut bytes)
            .map_err(|_| anyhow::anyhow!("Cannot access memory at address {address:#x}"))?;
        self.watch_range(
            label,
            (address, len, bytes, value.ty.clone()),
            access,
            condition,
        )
    }

    fn watch_range(
        &mut self,
        expr: &str,
        (address, len, bytes, ty): (u64, u64, Vec<u8>, hindsight_symbols::value::TypeHandle),
        access: WatchAccess,
        condition: Option<&str>,
    ) -> anyhow::Result<u32> {
        // Everything already watched plus this one must fit in DR0–DR3.
        let mut ranges = watched_ranges(self);
        ranges.push((address, len, access));
        debugreg::allocate(&ranges).map_err(|e| anyhow::anyhow!("{e}"))?;
        self.shared_numbering_before();
        let n = self.breakpoints.add_watchpoint(
            expr.to_string(),
            access,
            address,
            len,
            condition.map(str::to_string),
        );
        self.shared_numbering_after();
        self.watch_values.insert(n, bytes);
        self.watch_types.insert(n, ty);
        apply_watchpoints(self)?;
        Ok(n)
    }

    /// Bounds breakpoint or watchpoint `n` by an era (replay only): its hits outside the era
    /// are no hits (seed 002's era events: era breakpoints, era watchpoints).
    pub fn set_era(&mut self, n: u32, (from, to): Era) -> anyhow::Result<()> {
        if self.replay.is_none() {
            bail!("An era breakpoint (from/to, era) needs a recording: times are replay events.");
        }
        if self.breakpoints.get(n).is_none() {
            bail!("No breakpoint number {n}.");
        }
        self.travel.engine.add(
            hindsight_timeline::Spec::Era {
                breakpoint: n,
                from,
                to,
            },
            hindsight_timeline::Action::Stop,
            false,
        );
        Ok(())
    }

    /// Deletes breakpoint or watchpoint `n` (in every inferior when it is a breakpoint of
    /// every inferior).
    pub fn delete_breakpoint(&mut self, n: u32) -> anyhow::Result<()> {
        if let Some(other) = self.other_inferior_with(n) {
            return delete_one(other, n);
        }
        delete_one(self, n)?;
        self.update_everywhere(n, None);
        Ok(())
    }

    /// Enables or disables breakpoints and watchpoints (each at most once).
    pub fn set_breakpoints_enabled(
        &mut self,
        numbers: &[u32],
        enabled: bool,
    ) -> anyhow::Result<()> {
        // Another inferior's own breakpoints are set there.
        let mut own = Vec::new();
        for &n in numbers {
            match self.other_inferior_with(n) {
                Some(other) => other.set_breakpoints_enabled(&[n], enabled)?,
                None => own.push(n),
            }
        }
        let numbers = &own[..];
        let mut touched_watch = false;
        for &n in numbers {
            let Some(bp) = self.breakpoints.get(n).cloned() else {
                bail!("No breakpoint number {n}.");
            };
            if bp.enabled != enabled {
                set_sites(self, &bp, enabled)?;
                if let Some(b) = self.breakpoints.get_mut(n) {
                    b.enabled = enabled;
                }
                touched_watch |= matches!(bp.kind, BreakpointKind::Watchpoint { .. });
            }
        }
        if touched_watch {
            apply_watchpoints(self)?;
        }
        for &n in numbers {
            let condition = self.breakpoints.get(n).and_then(|b| b.condition.clone());
            self.update_everywhere(n, Some((enabled, condition)));
        }
        Ok(())
    }

    /// Sets (or with None removes) breakpoint `n`'s condition.
    pub fn set_condition(&mut self, n: u32, condition: Option<&str>) -> anyhow::Result<()> {
        if let Some(c) = condition {
            context::check_syntax(c)?;
        }
        if let Some(other) = self.other_inferior_with(n) {
            return other.set_condition(n, condition);
        }
        let Some(bp) = self.breakpoints.get_mut(n) else {
            bail!("No breakpoint number {n}.");
        };
        bp.condition = condition.map(str::to_string);
        let enabled = bp.enabled;
        self.update_everywhere(n, Some((enabled, condition.map(str::to_string))));
        Ok(())
    }

    /// Makes breakpoint `n` pass its next `count` hits (gdb's `ignore`).
    pub fn set_ignore_count(&mut self, n: u32, count: u32) -> anyhow::Result<()> {
        if let Some(other) = self.other_inferior_with(n) {
            return other.set_ignore_count(n, count);
        }
        let Some(bp) = self.breakpoints.get_mut(n) else {
            bail!("No breakpoint number {n}.");
        };
        // In a replayed tree, a breakpoint of every inferior counts its hits in all of them.
        bp.ignore_count = 0;
        if !self.ignore_everywhere(n, count) {
            if let Some(bp) = self.breakpoints.get_mut(n) {
                bp.ignore_count = count;
            }
        }
        Ok(())
    }

    /// The breakpoint table: every breakpoint and watchpoint with its hits and settings.
    pub fn breakpoint_table(&self) -> &BreakpointTable {
        &self.breakpoints
    }

    /// What dprintf breakpoint `n` prints: its format and argument expressions.
    pub fn dprintf_of(&self, n: u32) -> Option<(&str, &[String])> {
        self.travel.engine.print_of(n)
    }

    /// The era of breakpoint `n`, if it has one.
    pub fn era_of(&self, n: u32) -> Option<Era> {
        self.travel.engine.era_of(n)
    }

    /// The enabled user breakpoint at `addr`, if any.
    pub fn breakpoint_at(&self, addr: u64) -> Option<u32> {
        user_breakpoint_at(self, addr)
    }
}
