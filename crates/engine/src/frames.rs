//! Frames as front ends show them: where each frame of a thread's stack is (function, source
//! line, library) and its arguments.
//!
//! Invariant: an outer frame's pc is a return address, which may already belong to the next
//! line or function; it is looked up one byte earlier ([`lookup_pc`]), as gdb does.

use std::path::PathBuf;

use hindsight_ptrace::Tid;
use hindsight_symbols::functions::FunctionInfo;
use hindsight_symbols::lines::LineInfo;
use hindsight_symbols::Frame;

use crate::session::Session;
use crate::values::Variable;

/// The most frames a backtrace walks (a corrupt stack must not loop forever).
pub const MAX_FRAMES: usize = 4096;

/// One frame of a thread's stack, described.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameInfo {
    /// 0 for the innermost frame.
    pub index: usize,
    /// Its pc (for outer frames, the return address).
    pub pc: u64,
    /// Its canonical frame address, when unwinding knows it.
    pub cfa: Option<u64>,
    /// The function it is in, if known.
    pub function: Option<FunctionInfo>,
    /// Its source line (only in functions with line information).
    pub line: Option<LineInfo>,
    /// The shared library it is in (None in the executable).
    pub library: Option<PathBuf>,
    /// The function's parameters, evaluated in this frame (only with debug information).
    pub args: Vec<Variable>,
    /// A callee was inlined into this frame at its pc: its line is the call's, and gdb
    /// shows no address for it.
    pub calls_inlined: bool,
}

impl FrameInfo {
    /// Whether the pc is not at the start of a statement (gdb then shows the pc too).
    pub fn mid_line(&self) -> bool {
        if self.calls_inlined {
            return false;
        }
        match &self.line {
            Some(l) => self.index > 0 || l.address != self.pc || !l.is_stmt,
            None => true,
        }
    }
}

/// The pc a frame is "in" for symbol lookup: outer frames' pcs are return addresses, which
/// may already belong to the next line or function.
pub fn lookup_pc(frame: &Frame, index: usize) -> u64 {
    if let Some(i) = &frame.inline {
        return i.lookup_pc;
    }
    let pc = frame.regs.pc().unwrap_or(0);
    if index > 0 {
        pc.saturating_sub(1)
    } else {
        pc
    }
}

impl Session {
    /// Describes `frame`, the `index`-th of the selected thread's stack.
    pub fn frame_info(&self, frame: &Frame, index: usize) -> FrameInfo {
        let pc = frame.regs.pc().unwrap_or(0);
        let at = lookup_pc(frame, index);
        let mut function = self.symbols.function_at(at);
        let debug = function.as_ref().is_some_and(|f| f.has_debug_info);
        let mut line = if debug {
            self.symbols.line_at(at)
        } else {
            None
        };
        // Frames of inlined code: their function, and the line of the call inlined into them.
        let mut calls_inlined = false;
        if let (Some(i), Some(f)) = (&frame.inline, function.as_mut()) {
            f.name = i.name.clone();
            if let Some(c) = &i.call_site {
                line = Some(c.clone());
                calls_inlined = true;
            }
        }
        // gdb names the file only for shared libraries, not for the executable.
        let module = match &function {
            Some(f) => Some(f.module),
            None => self.symbols.module_containing(pc),
        };
        let library = module
            .filter(|m| m.0 > 0)
            .map(|m| self.symbols.module_path(m).to_path_buf());
        let args = if debug {
            crate::context::frame_args(self, frame)
        } else {
            Vec::new()
        };
        FrameInfo {
            index,
            pc,
            cfa: frame.cfa,
            function,
            line,
            library,
            args,
            calls_inlined,
        }
    }

    /// The stack of thread `tid`, described, innermost first (at most `max` frames, up to
    /// main).
    pub fn backtrace(&self, tid: Tid, max: usize) -> anyhow::Result<Vec<FrameInfo>> {
        let frames = self.frames(tid, max)?;
        Ok(frames
            .iter()
            .enumerate()
            .map(|(i, f)| self.frame_info(f, i))
            .collect())
    }

    /// The innermost frame of thread `tid`, described (its pc and line, without unwinding).
    pub fn top_frame(&self, tid: Tid) -> anyhow::Result<FrameInfo> {
        let regs = self.dwarf_regs(tid)?;
        let frame = Frame {
            regs,
            cfa: None,
            return_address: false,
            inline: None,
        };
        Ok(self.frame_info(&frame, 0))
    }
}
