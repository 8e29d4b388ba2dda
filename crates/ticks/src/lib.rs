//! The software instruction counter (DESIGN.md, "Time"; seed 002's SIC, seed 003 §4.6): a tick
//! count per thread that, with the pc and the registers, names every instruction instance of a
//! recorded program — on unmodified binaries and without a hardware performance counter.
//!
//! # What counts a tick
//!
//! Each execution of:
//! - a direct jump or conditional jump *backwards* (to its own address or below), when taken;
//! - the first instruction of a function (any arrival: call, tail jump, function pointer);
//! - an indirect jump (its target is unknown: a jump table or an interpreter's dispatch);
//! - a direct call backwards to something that is not a counted function start.
//!
//! Why these: a pc can only come round again through a transfer to the same address or below.
//! Backward jumps count themselves; calls are counted where they arrive, at function starts,
//! which also counts indirect calls (virtual methods, callbacks) to known functions and keeps
//! the `call` instructions themselves untouched (the CPU's return predictor keeps working); the
//! remaining backward transfers are returns, and a pc reached twice between two ticks through
//! returns only (a recursion unwinding) is told apart by the registers (the stack pointer). rr
//! counts retired conditional branches with the PMU for the same purpose; counting taken
//! backward edges instead costs one memory update per loop iteration rather than per branch.
//!
//! # How it is counted
//!
//! The counter is one word per process at `gs:[0]` (see [`counter`]), counted *down* so that the
//! counting code can trap when it reaches zero: that is how replay runs to a tick count at full
//! speed. Code is patched when it is mapped, identically in recording and replay: [`code`] reads
//! a module's executable sections and function ranges, [`scan`] decodes them, [`flags`] finds
//! where the arithmetic flags are dead (no need to save them around the count), [`plan`] chooses
//! how each counted instruction is patched and [`assemble`] makes the trampolines and the
//! writes. Counted instructions that cannot be patched safely run uncounted and are listed; the
//! positions there are named by registers within the tick interval, as without a counter.
//!
//! # What the program can see
//!
//! Its flags and registers are its own at every one of its instructions (the counting code
//! saves live flags and keeps rax in the counter page, never on the stack, so the red zone is
//! untouched); its GS base points to the counter page; its code, read as data, shows the
//! patches, and `/proc/self/maps` shows the trampolines and the page — the same in recording
//! and replay. A signal delivered while it runs a moved instruction sees that instruction's
//! address in the trampoline in its frame, also the same in recording and replay.

pub mod assemble;
mod cache;
pub mod code;
pub mod counter;
pub mod error;
pub mod flags;
pub mod plan;
pub mod scan;

pub use error::TicksError;

/// The trace header's name for the clock this crate counts (its tick definition and
/// patching). A trace recorded with another one cannot be replayed (its program ran other
/// patched code); change it whenever planning or patching changes what is counted or where
/// trampolines go.
pub const CLOCK: &str = "ticks-1";

/// What the counter makes of one module's code: how many counted instructions it patches,
/// and how many it leaves uncounted, by reason.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Survey {
    /// Counted instructions patched.
    pub patched: usize,
    /// Counted instructions left without a patch, by reason (most first).
    pub uncounted: Vec<(&'static str, usize)>,
}

/// Plans the code of the ELF file `bytes` as recording does (without assembling) and says
/// what runs uncounted. None when it has no code to plan.
pub fn survey(bytes: &[u8]) -> Option<Survey> {
    let code = code::ModuleCode::from_elf(bytes).ok()?;
    if code.sections.is_empty() {
        return None;
    }
    let plan = plan::plan(&scan::Scan::new(&code));
    let mut by: std::collections::BTreeMap<&'static str, usize> = Default::default();
    for u in &plan.uncounted {
        *by.entry(u.why).or_default() += 1;
    }
    let mut uncounted: Vec<(&'static str, usize)> = by.into_iter().collect();
    uncounted.sort_by_key(|u| std::cmp::Reverse(u.1));
    Some(Survey {
        patched: plan.sites.len(),
        uncounted,
    })
}
