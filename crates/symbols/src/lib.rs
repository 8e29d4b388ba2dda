//! Layer 2 of hindsight: what a program's ELF and DWARF say about it.
//!
//! Parsing is kept apart from interpretation: [`elf_headers`] reads an image's program
//! headers from a file or from memory; [`module`] reads one ELF file and its DWARF
//! into indexes once (shared by every program of the thread that loads the same file at the
//! same bias); [`program`] holds every loaded module and answers the debugger's
//! questions over all of them in runtime addresses: [`functions`], [`lines`], [`variables`]
//! and types; [`dwarf_types`] converts DWARF types; [`unwind`] walks stacks with CFI; [`types`] is the
//! owned type model that the DWARF reader builds and the expression evaluator ([`expr`],
//! [`value`], [`format`](mod@format)) consumes; [`target`] is the narrow window onto a stopped thread
//! (memory and registers) that location expressions and `print` need. Nothing in this crate
//! knows about ptrace: the layers above implement [`target::ReadMemory`].

pub mod disasm;
pub mod dwarf_types;
pub mod elf_headers;
pub mod error;
pub mod expr;
pub mod format;
pub mod formatters;
pub mod functions;
pub mod lines;
pub mod module;
mod module_cache;
pub mod program;
pub mod ptype;
pub mod show;
pub mod shown;
pub mod target;
pub mod types;
pub mod unwind;
pub mod value;
pub mod variables;

pub use error::SymbolsError;
pub use functions::FunctionInfo;
pub use lines::LineInfo;
pub use program::{ModuleId, Program, TypeRef};
pub use unwind::Frame;
pub use variables::{Location, Variable};
