//! The bridge between the session and the symbol layer: memory access for unwinding and
//! location expressions, and the evaluation context of `print`, conditions and watchpoints.
//!
//! Invariant: an expression is evaluated in one frame of one thread ([`Scope`]), reading the
//! process as it is now; outer frames see the registers that unwinding recovered.

use anyhow::bail;
use hindsight_control::Inferior;
use hindsight_ptrace::Tid;
use hindsight_symbols::expr::{self, EvalContext, Place, TypeHandle};
use hindsight_symbols::show::At;
use hindsight_symbols::target::{AccessError, DwarfRegs, ReadMemory};
use hindsight_symbols::types::Language;
use hindsight_symbols::value::{Shape, TypeHandle as Ty, Value};
use hindsight_symbols::{format, Frame, Location, Program, TypeRef};

use crate::session::Session;
use crate::values::Variable;

/// The live process's memory as the symbol layer reads it.
pub(crate) struct Memory<'a>(pub &'a Inferior);

impl ReadMemory for Memory<'_> {
    fn read_memory(&self, addr: u64, buf: &mut [u8]) -> Result<(), AccessError> {
        self.0
            .read_memory(addr, buf)
            .map_err(|_| AccessError::Memory(addr))
    }
}

/// Everything an expression can see: one frame of one thread, the symbols, the history.
pub(crate) struct Scope<'a> {
    pub symbols: &'a Program,
    pub inferior: &'a Inferior,
    pub frame: Option<Frame>,
    /// Registers of `frame` (frame 0's for the innermost frame).
    pub regs: Option<hindsight_ptrace::Regs>,
}

impl Scope<'_> {
    fn pc(&self) -> u64 {
        self.frame.as_ref().and_then(|f| f.regs.pc()).unwrap_or(0)
    }
}

impl EvalContext for Scope<'_> {
    fn lookup_variable(&self, name: &str) -> Option<(TypeHandle, Place)> {
        let var = self.symbols.lookup_variable(name, self.frame.as_ref())?;
        let mem = Memory(self.inferior);
        let place = match self
            .symbols
            .variable_location(&var, self.frame.as_ref(), &mem)
        {
            Ok(Location::Address(a)) => Place::Memory(a),
            Ok(Location::Register(r)) => match self.frame.as_ref().and_then(|f| f.regs.get(r)) {
                Some(v) => Place::Register(r, v),
                None => Place::Unavailable,
            },
            Ok(Location::Value(bytes)) => Place::Value(bytes),
            Ok(Location::Unavailable) | Err(_) => Place::Unavailable,
        };
        Some((handle(self.symbols, var.ty), place))
    }

    fn lookup_type(&self, name: &str) -> Option<TypeHandle> {
        self.symbols
            .lookup_type(name)
            .map(|t| handle(self.symbols, t))
    }

    fn read_memory(&self, addr: u64, buf: &mut [u8]) -> Result<(), AccessError> {
        Memory(self.inferior).read_memory(addr, buf)
    }

    fn register(&self, name: &str) -> Option<u64> {
        let regs = self.regs.as_ref()?;
        // Outer frames: the unwound values where unwinding recovered them.
        if let Some(f) = &self.frame {
            let n = match name {
                "pc" | "rip" => Some(DwarfRegs::RIP),
                "sp" | "rsp" => Some(DwarfRegs::RSP),
                "fp" | "rbp" => Some(DwarfRegs::RBP),
                _ => None,
            };
            if let Some(v) = n.and_then(|n| f.regs.get(n)) {
                return Some(v);
            }
        }
        regs.by_name(name)
    }

    fn symbol_for(&self, addr: u64) -> Option<String> {
        self.symbols.symbol_for(addr)
    }

    fn lookup_function(&self, name: &str) -> Option<(u64, Option<TypeHandle>)> {
        let f = self.symbols.lookup_functions(name).into_iter().next()?;
        Some((f.low, f.fn_type.map(|t| handle(self.symbols, t))))
    }

    fn language(&self) -> Language {
        self.symbols.language_at(self.pc())
    }

    fn write_memory(&self, addr: u64, data: &[u8]) -> Result<(), AccessError> {
        self.inferior
            .write_memory(addr, data)
            .map_err(|_| AccessError::Memory(addr))
    }
}

pub(crate) fn handle(symbols: &Program, t: TypeRef) -> TypeHandle {
    TypeHandle::new(symbols.types(t.module), t.id)
}

/// The scope of the selected frame.
pub(crate) fn scope(s: &Session) -> anyhow::Result<Scope<'_>> {
    let inferior = s.live()?;
    let tid = s.tid()?;
    let frame = s.selected_frame().ok();
    let regs = inferior.regs(tid).ok();
    Ok(Scope {
        symbols: &s.symbols,
        inferior,
        frame,
        regs,
    })
}

/// Parses and evaluates `text` in the selected frame; a call of the program's function
/// as the whole expression (`f(2)`) runs it ([`crate::call`]).
pub(crate) fn evaluate(s: &mut Session, text: &str) -> anyhow::Result<Value> {
    let e = expr::parse(text).map_err(|e| anyhow::anyhow!("{e}"))?;
    evaluate_expr(s, &e)
}

/// Evaluates a parsed expression in the selected frame. Calls of the program's functions
/// run first, innermost first ([`crate::call`]); their results stand in the expression as
/// values after the history's.
pub(crate) fn evaluate_expr(s: &mut Session, e: &expr::Expr) -> anyhow::Result<Value> {
    let mut results = Vec::new();
    let e = lift_calls(s, e, &mut results)?;
    let mut history = s.history.clone();
    history.extend(results);
    let sc = scope(s)?;
    expr::evaluate(&e, &sc, &history).map_err(|e| anyhow::anyhow!("{e}"))
}

/// Evaluates an expression without calls against `history`.
pub(crate) fn evaluate_with(
    s: &Session,
    e: &expr::Expr,
    history: &[Value],
) -> anyhow::Result<Value> {
    let sc = scope(s)?;
    expr::evaluate(e, &sc, history).map_err(|e| anyhow::anyhow!("{e}"))
}

/// `e` with every call replaced by a reference to its result (appended to `results`, which
/// follow the value history).
fn lift_calls(
    s: &mut Session,
    e: &expr::Expr,
    results: &mut Vec<Value>,
) -> anyhow::Result<expr::Expr> {
    use expr::Expr as E;
    let lift = |s: &mut Session, x: &E, results: &mut Vec<Value>| -> anyhow::Result<Box<E>> {
        Ok(Box::new(lift_calls(s, x, results)?))
    };
    Ok(match e {
        E::Call(f, args) => {
            let f = lift_calls(s, f, results)?;
            let mut lifted = Vec::new();
            for a in args {
                lifted.push(lift_calls(s, a, results)?);
            }
            let v = crate::call::call(s, &f, &lifted, results)?;
            results.push(v);
            E::History(expr::parser::HistoryRef::Absolute(
                s.history.len() + results.len(),
            ))
        }
        E::Unary(op, x) => E::Unary(*op, lift(s, x, results)?),
        E::Binary(op, a, b) => E::Binary(*op, lift(s, a, results)?, lift(s, b, results)?),
        E::Ternary(c, a, b) => E::Ternary(
            lift(s, c, results)?,
            lift(s, a, results)?,
            lift(s, b, results)?,
        ),
        E::Cast(t, x) => E::Cast(t.clone(), lift(s, x, results)?),
        E::SizeofExpr(x) => E::SizeofExpr(lift(s, x, results)?),
        E::Member(x, m) => E::Member(lift(s, x, results)?, m.clone()),
        E::Arrow(x, m) => E::Arrow(lift(s, x, results)?, m.clone()),
        E::Index(a, i) => E::Index(lift(s, a, results)?, lift(s, i, results)?),
        E::Assign(l, r) => E::Assign(lift(s, l, results)?, lift(s, r, results)?),
        other => other.clone(),
    })
}

/// A type by the name a user writes (`struct point`, `point_t`, `int`).
pub(crate) fn lookup_type(s: &Session, name: &str) -> Option<TypeHandle> {
    s.symbols.lookup_type(name).map(|t| handle(&s.symbols, t))
}

/// `ty` again with the member functions of the aggregate it names (through pointers and
/// references), for `ptype`.
pub(crate) fn with_methods(s: &Session, ty: &TypeHandle) -> Option<TypeHandle> {
    use hindsight_symbols::types::Type;
    let mut t = ty.strip()?;
    let mut wrappers = Vec::new();
    while let Type::Pointer {
        pointee: Some(p),
        is_reference,
        rvalue,
        ..
    } = t.get().clone()
    {
        wrappers.push((is_reference, rvalue));
        t = t.child(p).strip()?;
    }
    let Type::Struct { name: Some(n), .. } = t.get() else {
        return None;
    };
    let found = s.symbols.lookup_type(&format!("struct {n}"))?;
    let mut full = TypeHandle::with_methods(s.symbols.types(found.module), found.id);
    for (is_reference, rvalue) in wrappers.into_iter().rev() {
        full = full.derive_pointer(is_reference, rvalue);
    }
    Some(full)
}

/// The language of the selected frame (C when nothing runs).
pub(crate) fn language(s: &Session) -> Language {
    scope(s).map(|sc| sc.language()).unwrap_or_default()
}

/// Refuses a condition that does not parse.
pub(crate) fn check_syntax(text: &str) -> anyhow::Result<()> {
    expr::parse(text)
        .map(|_| ())
        .map_err(|e| anyhow::anyhow!("{e}"))
}

/// An expression's value as an address (`break *EXPR`, `x EXPR`).
pub(crate) fn evaluate_address(s: &mut Session, text: &str) -> anyhow::Result<u64> {
    let v = evaluate(s, text)?;
    // An array or a function stands for its address, as in C.
    let shape = v.ty.shape();
    if let (Shape::Array(..) | Shape::Function, Some(a)) = (shape, v.address()) {
        return Ok(a);
    }
    v.as_u64().map_err(|e| anyhow::anyhow!("{e}"))
}

/// Formats a value for `print` (with `/FMT`).
pub(crate) fn format(s: &Session, v: &Value, fmt: Option<&str>) -> anyhow::Result<String> {
    let mut opts = s.print;
    // `/r` (raw: no formatter) combines with one format letter.
    for c in fmt.unwrap_or("").chars() {
        match c {
            'r' => opts.raw = true,
            'x' | 'd' | 'u' | 'o' | 't' | 'a' | 'c' | 'f' | 'z' => opts.fmt = Some(c),
            's' => {}
            _ => bail!("Undefined output format \"{}\".", fmt.unwrap_or("")),
        }
    }
    let sc = scope(s)?;
    Ok(format::render_value(v, &sc, &opts, At::Top))
}

/// The instructions of `[start, end)`.
pub(crate) fn instructions(
    s: &Session,
    start: u64,
    end: u64,
) -> anyhow::Result<Vec<hindsight_symbols::disasm::Insn>> {
    let sc = scope(s)?;
    hindsight_symbols::disasm::decode_range(&sc, start, end).map_err(|e| anyhow::anyhow!("{e}"))
}

/// `x/FMT EXPR`.
pub(crate) fn examine(s: &mut Session, text: &str, fmt: &str) -> anyhow::Result<String> {
    let addr = evaluate_address(s, text)?;
    let sc = scope(s)?;
    format::format_examine(&sc, addr, fmt).map_err(|e| anyhow::anyhow!("{e}"))
}

fn variables(s: &Session, params: bool) -> anyhow::Result<Vec<Variable>> {
    if s.pid().is_none() {
        bail!("No frame selected.");
    }
    let sc = scope(s)?;
    let Some(frame) = sc.frame.clone() else {
        bail!("No frame selected.");
    };
    let pc = crate::frames::lookup_pc(&frame, s.frame);
    if !s
        .symbols
        .function_at(pc)
        .map(|f| f.has_debug_info)
        .unwrap_or(false)
    {
        bail!("No symbol table info available.");
    }
    let vars = if params {
        s.symbols.params(&frame)
    } else {
        s.symbols.locals(&frame)
    };
    Ok(vars.iter().map(|v| variable(&sc, v)).collect())
}

/// A variable of the scope's frame, evaluated.
fn variable(sc: &Scope<'_>, v: &hindsight_symbols::Variable) -> Variable {
    let value = expr::evaluate(&expr::Expr::variable(&v.name), sc, &[]);
    Variable::new(
        sc,
        v.name.clone(),
        v.name.clone(),
        value.map_err(|e| e.to_string()),
    )
}

/// `info locals`: the selected frame's local variables.
pub(crate) fn locals(s: &Session) -> anyhow::Result<Vec<Variable>> {
    variables(s, false)
}

/// `info args`: the selected frame's parameters.
pub(crate) fn args(s: &Session) -> anyhow::Result<Vec<Variable>> {
    variables(s, true)
}

/// The parameters of `frame` of the selected thread (for a frame line), evaluated in it.
pub(crate) fn frame_args(s: &Session, frame: &Frame) -> Vec<Variable> {
    let Ok(inferior) = s.live() else {
        return Vec::new();
    };
    let Some(tid) = s.thread else {
        return Vec::new();
    };
    let sc = Scope {
        symbols: &s.symbols,
        inferior,
        frame: Some(frame.clone()),
        regs: inferior.regs(tid).ok(),
    };
    s.symbols
        .params(frame)
        .iter()
        .map(|v| variable(&sc, v))
        .collect()
}

/// Evaluates a breakpoint condition in frame 0 of `tid`.
pub(crate) fn eval_condition(
    symbols: &Program,
    inferior: &Inferior,
    tid: Tid,
    cond: &str,
) -> Result<bool, String> {
    // Conditions are parsed once, not at every hit.
    thread_local! {
        static PARSED: std::cell::RefCell<std::collections::HashMap<String, expr::Expr>> =
            Default::default();
    }
    let e = match PARSED.with(|p| p.borrow().get(cond).cloned()) {
        Some(e) => e,
        None => {
            let e = expr::parse(cond).map_err(|e| e.to_string())?;
            PARSED.with(|p| p.borrow_mut().insert(cond.to_string(), e.clone()));
            e
        }
    };
    let regs = inferior.regs(tid).map_err(|e| e.to_string())?;
    let mut d = DwarfRegs::default();
    for (i, v) in regs.dwarf().iter().enumerate() {
        d.0[i] = Some(*v);
    }
    let mem = Memory(inferior);
    let frame = symbols.unwind(&d, &mem, 1).into_iter().next();
    let sc = Scope {
        symbols,
        inferior,
        frame,
        regs: Some(regs),
    };
    let v = expr::evaluate(&e, &sc, &[]).map_err(|e| e.to_string())?;
    expr::value_is_true(&v).map_err(|e| e.to_string())
}

/// (address, length, current bytes, type) of what `watch EXPR` watches: its lvalue.
pub(crate) fn watch_target(s: &mut Session, text: &str) -> anyhow::Result<(u64, u64, Vec<u8>, Ty)> {
    let v = evaluate(s, text)?;
    let Some(addr) = v.address() else {
        bail!("Cannot watch constant value `{text}'.");
    };
    let len = v.size();
    if len == 0 {
        bail!("Cannot watch `{text}': it has no size.");
    }
    let mut bytes = vec![0u8; len as usize];
    s.live()?
        .read_memory(addr, &mut bytes)
        .map_err(|_| anyhow::anyhow!("Cannot access memory at address {addr:#x}"))?;
    Ok((addr, len, bytes, v.ty))
}

/// The value a function returned (rax / xmm0), recorded in the history: its number there
/// (`$1`) and the value.
pub(crate) fn returned_value(
    s: &mut Session,
    tid: Tid,
    ty: TypeRef,
) -> anyhow::Result<(usize, Value)> {
    let inf = s.live()?;
    let regs = inf.regs(tid).map_err(|e| anyhow::anyhow!("{e}"))?;
    let h = handle(&s.symbols, ty);
    let size = h.size().unwrap_or(8);
    let bytes = if h.is_float() {
        let fp = inf.fp_regs(tid).map_err(|e| anyhow::anyhow!("{e}"))?;
        fp.xmm_low(0).to_le_bytes()[..size.min(8) as usize].to_vec()
    } else if size <= 8 {
        regs.0.rax.to_le_bytes()[..size as usize].to_vec()
    } else if size <= 16 {
        let mut b = regs.0.rax.to_le_bytes().to_vec();
        b.extend_from_slice(&regs.0.rdx.to_le_bytes());
        b.truncate(size as usize);
        b
    } else {
        // Returned in memory: rax holds the address.
        let mut b = vec![0u8; size as usize];
        inf.read_memory(regs.0.rax, &mut b)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        b
    };
    let v = Value::from_bytes(h, bytes);
    s.history.push(v.clone());
    Ok((s.history.len(), v))
}
