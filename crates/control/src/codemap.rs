//! Code that runs somewhere else than where the program has it: the instruction counter's
//! trampolines (crate `hindsight-ticks`). The debugger above shows and takes program
//! addresses only; the [`Inferior`](crate::Inferior) translates.
//!
//! Invariant kept by the Inferior: whenever it reports a stop, the stopped thread stands at a
//! program instruction (its pc is one that [`CodeMap::logical`] maps), so that the pc, the
//! code and the stack a front end reads are those of the program.

/// How the program's code is laid out in the process, as far as the debugger must hide it.
pub trait CodeMap {
    /// The program address a thread whose pc is `pc` stands at; None when it is in the middle
    /// of machinery that runs between two program instructions (it is stepped on first).
    fn logical(&self, pc: u64) -> Option<u64>;
    /// Where the instruction at program address `addr` runs (a breakpoint for it goes there).
    fn real(&self, addr: u64) -> u64;
    /// Puts the program's own bytes back over patches in `buf`, read from `addr`.
    fn unpatch(&self, addr: u64, buf: &mut [u8]);
    /// Whether a thread at `pc` has just taken a trap of the machinery's own (it stays there
    /// for whoever set that trap: it is not stepped on).
    fn is_trap(&self, pc: u64) -> bool;
}
