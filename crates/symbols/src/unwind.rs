//! Stack unwinding with call-frame information (.eh_frame, .debug_frame), falling back to the
//! rbp chain where a function has none.

use gimli::{CfaRule, Register, RegisterRule, UnwindSection};

use crate::module::{Module, R};
use crate::program::Program;
use crate::target::{DwarfRegs, ReadMemory};

/// One frame of a stack: the registers as that frame sees them, and its CFA (the caller's
/// stack pointer before the call), which identifies the frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Registers of this frame; `regs.pc()` is its pc (a return address for outer frames).
    pub regs: DwarfRegs,
    /// Canonical frame address, when known.
    pub cfa: Option<u64>,
    /// The pc is a return address (every frame but the innermost): what it belongs to is
    /// looked up one byte back (the call), location lists included.
    pub return_address: bool,
    /// For the frames of inlined code ([`Program::expand_inline`]): which of the functions
    /// sharing this machine frame it is. `None`: a machine frame without inlined code.
    pub inline: Option<InlineFrame>,
}

/// One of the frames that share a machine frame because of inlining: the innermost inlined
/// copy first, the function they were inlined into last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlineFrame {
    /// The pc to look things up with (a return address is looked up one byte back).
    pub lookup_pc: u64,
    /// The function shown.
    pub name: String,
    /// The inlined copy this frame is in: (module, index); `None` for the function the
    /// copies were inlined into.
    pub(crate) site: Option<(usize, usize)>,
    /// The line this frame shows when a callee is inlined into it here: the call's line
    /// (`None`: the line at the pc).
    pub call_site: Option<crate::LineInfo>,
}

impl InlineFrame {
    /// True for a frame of an inlined copy (not the machine frame's own function).
    pub fn is_inlined(&self) -> bool {
        self.site.is_some()
    }
}

/// Registers that a callee preserves (rbx, rbp, r12–r15): their values carry to outer frames.
const CALLEE_SAVED: [u16; 6] = [3, 6, 12, 13, 14, 15];

type Row = gimli::UnwindTableRow<usize>;

/// The unwind row for file address `a`, with its CFA expression when the CFA is computed by
/// one (PLT stubs do that), extracted from the section the row came from.
fn row_for(m: &Module, a: u64) -> Option<(Row, Option<gimli::Expression<R>>)> {
    let (row, from_eh) = find_row(m, a)?;
    let expr = match row.cfa() {
        CfaRule::Expression(e) => match (from_eh, &m.eh_frame, &m.debug_frame) {
            (true, Some((eh, _)), _) => e.get(eh).ok(),
            (false, _, Some((df, _))) => e.get(df).ok(),
            _ => None,
        },
        CfaRule::RegisterAndOffset { .. } => None,
    };
    Some((row, expr))
}

/// The unwind row for file address `a`, and whether it comes from .eh_frame.
fn find_row(m: &Module, a: u64) -> Option<(Row, bool)> {
    let mut ctx = gimli::UnwindContext::new();
    if let Some((eh, bases)) = &m.eh_frame {
        // .eh_frame_hdr's sorted table finds the FDE by binary search; a scan of .eh_frame is
        // the fallback (it costs a walk over every FDE of the module).
        if let Some(table) = m.eh_frame_hdr.as_ref().and_then(|h| h.table()) {
            if let Ok(row) = table.unwind_info_for_address(
                eh,
                bases,
                &mut ctx,
                a,
                gimli::EhFrame::cie_from_offset,
            ) {
                return Some((row.clone(), true));
            }
        }
        let mut ctx = gimli::UnwindContext::new();
        if let Ok(row) =
            eh.unwind_info_for_address(bases, &mut ctx, a, gimli::EhFrame::cie_from_offset)
        {
            return Some((row.clone(), true));
        }
    }
    if let Some((df, bases)) = &m.debug_frame {
        let mut ctx = gimli::UnwindContext::new();
        if let Ok(row) =
            df.unwind_info_for_address(bases, &mut ctx, a, gimli::DebugFrame::cie_from_offset)
        {
            return Some((row.clone(), false));
        }
    }
    None
}

impl Program {
    /// Where a frame's caller-visible registers were saved (`info frame`): (DWARF register,
    /// address), the return address included, from the frame's CFI row.
    pub fn saved_registers(&self, frame: &Frame) -> Vec<(u16, u64)> {
        let Some(pc) = frame.regs.pc() else {
            return Vec::new();
        };
        let lookup = if frame.return_address {
            pc.wrapping_sub(1)
        } else {
            pc
        };
        let (Some((mi, a)), Some(cfa)) = (self.module_at(lookup), frame.cfa) else {
            return Vec::new();
        };
        let Some((row, _)) = row_for(self.module(mi), a) else {
            return Vec::new();
        };
        let mut out: Vec<(u16, u64)> = (0..=16u16)
            .filter_map(|n| match row.register(Register(n)) {
                Some(RegisterRule::Offset(o)) => Some((n, cfa.wrapping_add(o as u64))),
                _ => None,
            })
            .collect();
        // x86-64's CFI leaves the return address implicit at CFA-8.
        if !out.iter().any(|(n, _)| *n == DwarfRegs::RIP) {
            out.push((DwarfRegs::RIP, cfa.wrapping_sub(8)));
        }
        out
    }

    /// Walks the stack from frame 0's registers; at most `max` frames.
    pub fn unwind(&self, regs: &DwarfRegs, mem: &dyn ReadMemory, max: usize) -> Vec<Frame> {
        let mut frames = Vec::new();
        let mut cur = *regs;
        while frames.len() < max {
            let Some(pc) = cur.pc() else { break };
            let index = frames.len();
            // Outer frames' pcs are return addresses: look up the call instruction instead.
            let lookup = if index > 0 { pc.wrapping_sub(1) } else { pc };
            let step = self.unwind_step(&cur, lookup, mem);
            let cfa = step.as_ref().map(|(_, cfa)| *cfa);
            frames.push(Frame {
                regs: cur,
                cfa,
                return_address: index > 0,
                inline: None,
            });
            let Some((next, cfa)) = step else { break };
            let next_pc = next.pc().unwrap_or(0);
            let sp = cur.get(DwarfRegs::RSP).unwrap_or(0);
            if next_pc == 0 || cfa <= sp && index > 0 {
                break;
            }
            cur = next;
        }
        frames
    }

    /// The caller's registers and this frame's CFA.
    fn unwind_step(
        &self,
        regs: &DwarfRegs,
        lookup: u64,
        mem: &dyn ReadMemory,
    ) -> Option<(DwarfRegs, u64)> {
        let row = self
            .module_at(lookup)
            .and_then(|(mi, a)| row_for(self.module(mi), a));
        let Some((row, cfa_expr)) = row else {
            return rbp_chain(regs, mem);
        };
        let cfa = match (row.cfa(), cfa_expr) {
            (CfaRule::RegisterAndOffset { register, offset }, _) => {
                regs.get(register.0)?.wrapping_add(*offset as u64)
            }
            (CfaRule::Expression(_), Some(e)) => match eval_cfa(e, regs, mem) {
                Some(cfa) => cfa,
                None => return rbp_chain(regs, mem),
            },
            (CfaRule::Expression(_), None) => return rbp_chain(regs, mem),
        };
        let mut next = DwarfRegs::default();
        for r in CALLEE_SAVED {
            next.set(r, regs.get(r));
        }
        for n in 0..=16u16 {
            match row.register(Register(n)) {
                Some(RegisterRule::Offset(o)) => {
                    next.set(n, mem.read_u64(cfa.wrapping_add(o as u64)).ok());
                }
                Some(RegisterRule::ValOffset(o)) => next.set(n, Some(cfa.wrapping_add(o as u64))),
                Some(RegisterRule::Register(r)) => next.set(n, regs.get(r.0)),
                Some(RegisterRule::SameValue) => next.set(n, regs.get(n)),
                Some(RegisterRule::Undefined) => next.set(n, None),
                _ => {}
            }
        }
        // An undefined return address marks the outermost frame (`_start`, a thread's
        // `clone3`): nothing called it.
        if matches!(
            row.register(Register(DwarfRegs::RIP)),
            Some(RegisterRule::Undefined)
        ) {
            return None;
        }
        next.set(DwarfRegs::RSP, Some(cfa));
        if next.get(DwarfRegs::RIP).is_none() {
            next.set(DwarfRegs::RIP, mem.read_u64(cfa.wrapping_sub(8)).ok());
        }
        Some((next, cfa))
    }
}

/// Evaluates a CFA expression (DW_CFA_def_cfa_expression) over the frame's registers.
fn eval_cfa(e: gimli::Expression<R>, regs: &DwarfRegs, mem: &dyn ReadMemory) -> Option<u64> {
    use gimli::EvaluationResult as E;
    let encoding = gimli::Encoding {
        address_size: 8,
        format: gimli::Format::Dwarf32,
        version: 4,
    };
    let mut eval = e.evaluation(encoding);
    let mut state = eval.evaluate().ok()?;
    // A CFA expression is a handful of operations; the bound guards against a hostile one.
    for _ in 0..64 {
        state = match state {
            E::Complete => {
                return match eval.result().first()?.location {
                    gimli::Location::Address { address } => Some(address),
                    _ => None,
                };
            }
            E::RequiresRegister { register, .. } => eval
                .resume_with_register(gimli::Value::Generic(regs.get(register.0)?))
                .ok()?,
            E::RequiresMemory { address, size, .. } => {
                let mut b = [0u8; 8];
                mem.read_memory(address, &mut b[..(size as usize).min(8)])
                    .ok()?;
                eval.resume_with_memory(gimli::Value::Generic(u64::from_le_bytes(b)))
                    .ok()?
            }
            _ => return None,
        };
    }
    None
}

/// Frame-pointer unwinding: CFA = rbp + 16, return address at rbp + 8, saved rbp at rbp.
fn rbp_chain(regs: &DwarfRegs, mem: &dyn ReadMemory) -> Option<(DwarfRegs, u64)> {
    let rbp = regs.get(DwarfRegs::RBP)?;
    if rbp == 0 {
        return None;
    }
    let ret = mem.read_u64(rbp.wrapping_add(8)).ok()?;
    let saved = mem.read_u64(rbp).ok()?;
    let mut next = DwarfRegs::default();
    for r in CALLEE_SAVED {
        next.set(r, regs.get(r));
    }
    next.set(DwarfRegs::RBP, Some(saved));
    next.set(DwarfRegs::RSP, Some(rbp + 16));
    next.set(DwarfRegs::RIP, Some(ret));
    Some((next, rbp + 16))
}
