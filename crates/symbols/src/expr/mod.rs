//! Expressions as gdb's `print` and breakpoint conditions take them: C syntax ([`parser`]),
//! evaluated against a stopped thread through [`EvalContext`] ([`eval`]).

mod eval;
pub mod parser;

use thiserror::Error;

pub use eval::{evaluate, value_is_true};
pub use parser::{parse, Expr};

use crate::target::AccessError;
use crate::types::{Language, TypeTable};
use crate::value::{Tables, Ty};

/// The type handle values carry.
pub type TypeHandle = Ty;

/// Why an expression failed, in gdb's words.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum ExprError {
    /// The text does not parse.
    #[error("A syntax error in expression, near `{0}'.")]
    Syntax(String),
    /// A name that is not in scope.
    #[error("No symbol \"{0}\" in current context.")]
    NoSymbol(String),
    /// Memory could not be read or written.
    #[error(transparent)]
    Access(#[from] AccessError),
    /// Anything else, already worded.
    #[error("{0}")]
    Other(String),
}

/// Where a variable's value is, as the context reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// In memory.
    Memory(u64),
    /// In a register: (DWARF number, value).
    Register(u16, u64),
    /// Only a value (constant, stack value).
    Value(Vec<u8>),
    /// Optimized out.
    Unavailable,
}

/// What evaluation needs of the debugged program.
pub trait EvalContext {
    /// The type tables of the program's modules.
    fn table(&self, module: usize) -> Option<&TypeTable>;
    /// A variable visible in the selected frame.
    fn lookup_variable(&self, name: &str) -> Option<(Ty, Place)>;
    /// A type by name.
    fn lookup_type(&self, name: &str) -> Option<Ty>;
    /// Program memory.
    fn read_memory(&self, addr: u64, buf: &mut [u8]) -> Result<(), AccessError>;
    /// Writes program memory (assignment).
    fn write_memory(&self, addr: u64, _data: &[u8]) -> Result<(), AccessError> {
        Err(AccessError::Memory(addr))
    }
    /// A register of the selected frame by name (`rax`, `pc`, `sp`, `eflags`…).
    fn register(&self, name: &str) -> Option<u64>;
    /// `name+off` for a code address.
    fn symbol_for(&self, addr: u64) -> Option<String>;
    /// A function's address and type.
    fn lookup_function(&self, name: &str) -> Option<(u64, Option<Ty>)>;
    /// The language of the selected frame.
    fn language(&self) -> Language;
}

/// Adapts any context to the tables view values need.
pub(crate) struct TablesOf<'a>(pub &'a dyn EvalContext);

impl Tables for TablesOf<'_> {
    fn table(&self, module: usize) -> Option<&TypeTable> {
        self.0.table(module)
    }
}

impl Expr {
    /// The expression that names one variable.
    pub fn variable(name: &str) -> Expr {
        Expr::Name(name.to_string())
    }
}
