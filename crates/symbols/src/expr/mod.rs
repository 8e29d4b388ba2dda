//! Expressions as gdb's `print` and breakpoint conditions take them.
//!
//! Text is tokenised ([`lexer`]) and parsed into an [`Expr`] ([`parser`], pure syntax), then
//! evaluated ([`eval`]) against a stopped thread seen through [`EvalContext`], which the layers
//! above implement over the DWARF reader and the live (or replayed) process.

pub mod eval;
pub mod lexer;
pub mod parser;

use thiserror::Error;

pub use eval::{evaluate, value_is_true};
pub use parser::{parse, Expr};

use crate::target::AccessError;
use crate::types::Language;
pub use crate::value::TypeHandle;

/// Why an expression failed, in gdb's words.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum ExprError {
    /// The text does not parse; holds the text from where parsing stopped.
    #[error("A syntax error in expression, near `{0}'.")]
    Syntax(String),
    /// A name that is not in scope.
    #[error("No symbol \"{0}\" in current context.")]
    NoSymbol(String),
    /// Memory could not be read or written.
    #[error(transparent)]
    Access(#[from] AccessError),
    /// Anything else, already worded as gdb words it.
    #[error("{0}")]
    Other(String),
}

impl ExprError {
    /// An [`ExprError::Other`] with this text.
    pub fn other(text: impl Into<String>) -> ExprError {
        ExprError::Other(text.into())
    }
}

/// Where a variable's value is, as the context reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// In memory at this address.
    Memory(u64),
    /// In a register: (DWARF number, its value in the selected frame).
    Register(u16, u64),
    /// Only a computed value (a constant, `DW_OP_stack_value`): its bytes.
    Value(Vec<u8>),
    /// Optimized out.
    Unavailable,
}

/// What evaluation needs of the debugged program: names, memory and registers of the
/// selected frame.
pub trait EvalContext {
    /// Resolves an identifier (local, parameter, global; Rust paths like `a::b::C` come whole)
    /// to its type and location.
    fn lookup_variable(&self, name: &str) -> Option<(TypeHandle, Place)>;

    /// Looks a type up by name: `int`, `struct point`, `union u`, `enum color`, `point_t`,
    /// `unsigned long`. C base types the evaluator knows need not be found here.
    fn lookup_type(&self, name: &str) -> Option<TypeHandle>;

    /// Fills `buf` from program memory at `addr`; all or nothing.
    fn read_memory(&self, addr: u64, buf: &mut [u8]) -> Result<(), AccessError>;

    /// Writes program memory (assignment). The default refuses.
    fn write_memory(&self, addr: u64, data: &[u8]) -> Result<(), AccessError> {
        let _ = data;
        Err(AccessError::Memory(addr))
    }

    /// A register of the selected frame by gdb's name without `$`: `rax`, `pc`, `sp`, `fp`,
    /// `eflags`, `fs_base`…
    fn register(&self, name: &str) -> Option<u64>;

    /// `name` or `name+off` for an address (function or data symbol), for `<main+4>` labels.
    fn symbol_for(&self, addr: u64) -> Option<String>;

    /// A function by name: its address and, when known, its function type.
    fn lookup_function(&self, name: &str) -> Option<(u64, Option<TypeHandle>)>;

    /// The language of the selected frame (decides value syntax).
    fn language(&self) -> Language;
}
