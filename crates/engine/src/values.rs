//! Values as front ends get them: typed values ([`Value`]: a type and its bytes) evaluated in
//! the selected frame, their text in gdb's syntax, and their children (struct members, array
//! elements, what a pointer points to) for the front ends that let a user expand them.
//!
//! Invariants: a [`Variable`] names the expression that evaluates to it in its frame, so a
//! front end can ask for it again, or for its children, at any later stop; its text is what
//! `print` shows (`info locals` and frame lines use the same, without pointer types). Children
//! come from the type (members in declaration order, elements in index order, the pointee);
//! a printer that knows a container (a vector, a map) fills them its own way.

use anyhow::bail;
use hindsight_symbols::expr::{self, TypeHandle};
use hindsight_symbols::format;
use hindsight_symbols::shown::{render, Label, Shown};
use hindsight_symbols::types::Type;
use hindsight_symbols::value::{Shape, Value};

use crate::context::{self, Scope};
use crate::session::Session;

/// Array elements listed as children at most (a front end shows the rest through `print`).
pub const MAX_ELEMENTS: u64 = 1000;

/// A named value of the program: a variable, a member, an element, a watch expression.
#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    /// Its name as shown (`x`, `next`, `[3]`, `*p`).
    pub name: String,
    /// The expression that evaluates to it in its frame (`x`, `(p)->next`, `(a)[3]`); empty
    /// for a formatter's child that no expression names (a map's entry).
    pub expression: String,
    /// Its value, or why it could not be read (or that only its text is known).
    pub value: Result<Value, String>,
    /// Its value in gdb's syntax without pointer types (`0x4005d0`, `{x = 1, y = 2}`), or
    /// `<error: …>`.
    pub text: String,
    /// Its type's name (`int`, `struct point *`).
    pub type_name: String,
    /// A struct, union, class or array (gdb's frame lines show it as `...`).
    pub aggregate: bool,
    /// What a frame line shows for it (gdb's `print frame-arguments scalars`): the text of
    /// a scalar or string, `...` for an aggregate, a formatter's summary then `{...}`
    /// (`std::vector of length 2, capacity 2 = {...}`).
    pub frame_text: String,
    /// Whether it has children to expand.
    pub has_children: bool,
}

impl Variable {
    /// `name`, evaluated as `expression` in `sc` with this outcome.
    pub(crate) fn new(
        sc: &Scope<'_>,
        name: String,
        expression: String,
        value: Result<Value, String>,
    ) -> Variable {
        let (text, type_name, aggregate, has_children) = match &value {
            Ok(v) => (
                format::format_value_bare(v, sc),
                v.ty.name(),
                matches!(v.ty.shape(), Shape::Struct(_) | Shape::Array(..)),
                has_children(sc, v),
            ),
            Err(e) => (format!("<error: {e}>"), String::new(), false, false),
        };
        let frame_text = match &value {
            Ok(v) => {
                use hindsight_symbols::shown::Shown;
                let opts = hindsight_symbols::show::PrintOptions::default();
                let shown = format::show_value(v, sc, &opts, hindsight_symbols::show::At::Bare);
                match &shown {
                    Shown::Composite {
                        summary: Some(sum), ..
                    } if !sum.ends_with(':') => format!("{sum} = {{...}}"),
                    Shown::Composite { .. } => "...".to_string(),
                    Shown::Text(_) => text.clone(),
                }
            }
            Err(_) => text.clone(),
        };
        Variable {
            name,
            expression,
            value,
            text,
            type_name,
            aggregate,
            frame_text,
            has_children,
        }
    }
}

impl Variable {
    /// A formatter's child that no expression names: its text, no type, no children.
    fn text_only(name: String, text: String) -> Variable {
        Variable {
            name,
            expression: String::new(),
            value: Err("shown by a formatter only".to_string()),
            frame_text: text.clone(),
            text,
            type_name: String::new(),
            aggregate: false,
            has_children: false,
        }
    }
}

/// Whether a value has children: a struct with members, a non-empty array, a pointer (not
/// null) to something other than `void`, a function or a character (a string shows whole).
fn has_children(sc: &Scope<'_>, v: &Value) -> bool {
    match v.ty.shape() {
        Shape::Struct(_) => struct_members(&v.ty).is_some_and(|m| !m.is_empty()),
        Shape::Array(_, count) => count.unwrap_or(0) > 0,
        Shape::Pointer(Some(pointee)) => {
            if struct_members(&pointee).is_some_and(|m| m.is_empty()) {
                return false;
            }
            let null = v.as_u64().map(|a| a == 0).unwrap_or(true);
            let readable = v
                .as_u64()
                .is_ok_and(|a| expr::EvalContext::read_memory(sc, a, &mut [0u8; 1]).is_ok());
            !null
                && readable
                && !matches!(
                    pointee.shape(),
                    Shape::Void | Shape::Function | Shape::Char { .. } | Shape::Unknown
                )
        }
        _ => false,
    }
}

/// The member names of a struct type (None if it is not one); anonymous members have none.
fn struct_members(ty: &TypeHandle) -> Option<Vec<Option<String>>> {
    let t = ty.strip().unwrap_or(ty.clone());
    match t.get() {
        Type::Struct { members, .. } => Some(members.iter().map(|m| m.name.clone()).collect()),
        _ => None,
    }
}

impl Session {
    /// Evaluates `text` (C, C++ or Rust syntax, as the frame's language) in the selected
    /// frame. Assignments (`x = 3`) change the program (live only: a replay refuses them).
    pub fn evaluate(&mut self, text: &str) -> anyhow::Result<Value> {
        if self.is_replay() && is_assignment(text) {
            bail!("{}", REPLAY_WRITE);
        }
        context::evaluate(self, text)
    }

    /// The value's text in gdb's syntax, as `print` shows it; `fmt` is gdb's `/FMT` letter
    /// (`x`, `d`, `c`…), None for the natural format.
    pub fn format_value(&self, v: &Value, fmt: Option<&str>) -> anyhow::Result<String> {
        context::format(self, v, fmt)
    }

    /// `x/FMT ADDRESS`: memory from the address `text` evaluates to, in gdb's layout.
    pub fn examine(&mut self, text: &str, fmt: &str) -> anyhow::Result<String> {
        context::examine(self, text, fmt)
    }

    /// An expression's value as an address (`break *EXPR`, `x EXPR`): arrays and functions
    /// stand for their address.
    pub fn evaluate_address(&mut self, text: &str) -> anyhow::Result<u64> {
        context::evaluate_address(self, text)
    }

    /// gdb's `printf`: `format` with C conversions (and `%V`, the value as `print` shows it)
    /// applied to `args` evaluated in the selected frame.
    pub fn printf(&mut self, format: &str, args: &[String]) -> anyhow::Result<String> {
        crate::printf::format(self, format, args)
    }

    /// `ty` again with the member functions of the class it names (through pointers and
    /// references), for `ptype`.
    pub fn type_with_methods(&self, ty: &TypeHandle) -> Option<TypeHandle> {
        context::with_methods(self, ty)
    }

    /// The language of the selected frame (C when nothing runs).
    pub fn language(&self) -> hindsight_symbols::types::Language {
        context::language(self)
    }

    /// The instructions of `[start, end)` (`disassemble`).
    pub fn instructions(
        &self,
        start: u64,
        end: u64,
    ) -> anyhow::Result<Vec<hindsight_symbols::disasm::Insn>> {
        context::instructions(self, start, end)
    }

    /// gdb's `print` settings (`set print pretty|elements|repeats`).
    pub fn print_options(&self) -> hindsight_symbols::show::PrintOptions {
        self.print
    }

    /// Changes gdb's `print` settings.
    pub fn set_print_options(&mut self, opts: hindsight_symbols::show::PrintOptions) {
        self.print = opts;
    }

    /// The shared libraries' names in the dynamic loader's order (its list of objects).
    pub fn library_order(&self) -> Vec<String> {
        match (self.dynamic, self.inferior.as_ref()) {
            (Some(d), Some(inf)) => crate::linkmap::loaded_objects(inf, d)
                .into_iter()
                .map(|(_, name)| name)
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Reads program memory (`info frame`'s saved return address, say).
    pub fn read_memory(&self, addr: u64, buf: &mut [u8]) -> anyhow::Result<()> {
        self.live()?
            .read_memory(addr, buf)
            .map_err(|_| anyhow::anyhow!("Cannot access memory at address {addr:#x}"))
    }

    /// Adds a value to the value history; returns its number (`$N`).
    pub fn record_value(&mut self, v: Value) -> usize {
        self.history.push(v);
        self.history.len()
    }

    /// The last value of the value history (`print` with no expression).
    pub fn last_value(&self) -> Option<&Value> {
        self.history.last()
    }

    /// A type by the name a user writes (`struct point`, `point_t`, `int`).
    pub fn lookup_type(&self, name: &str) -> Option<TypeHandle> {
        context::lookup_type(self, name)
    }

    /// The selected frame's local variables (gdb's `info locals`).
    pub fn locals(&self) -> anyhow::Result<Vec<Variable>> {
        context::locals(self)
    }

    /// The selected frame's parameters (gdb's `info args`).
    pub fn frame_parameters(&self) -> anyhow::Result<Vec<Variable>> {
        context::args(self)
    }

    /// `expression` (a [`Variable::expression`]) evaluated in the selected frame, as a
    /// variable named `name`.
    pub fn variable(&mut self, name: &str, expression: &str) -> anyhow::Result<Variable> {
        let value = self.evaluate(expression).map_err(|e| e.to_string());
        let sc = context::scope(self)?;
        Ok(Variable::new(
            &sc,
            name.to_string(),
            expression.to_string(),
            value,
        ))
    }

    /// The children of the value `expression` evaluates to in the selected frame: a struct's
    /// members, an array's elements (at most [`MAX_ELEMENTS`]), what a pointer points to (the
    /// members of a struct it points to).
    pub fn children(&mut self, expression: &str) -> anyhow::Result<Vec<Variable>> {
        let parent = context::evaluate(self, expression)?;
        // A name needs no parentheses around it; anything else does (`(*p).x`, `(a+1)[2]`).
        let simple = expression
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
        let e = if simple {
            expression.to_string()
        } else {
            format!("({expression})")
        };
        if let Some(shown) = self.formatter_children(&parent, &e)? {
            return Ok(shown);
        }
        let names: Vec<(String, String)> = match parent.ty.shape() {
            Shape::Struct(_) => struct_members(&parent.ty)
                .unwrap_or_default()
                .into_iter()
                .flatten()
                .map(|m| (m.clone(), format!("{e}.{m}")))
                .collect(),
            Shape::Array(_, count) => (0..count.unwrap_or(0).min(MAX_ELEMENTS))
                .map(|i| (format!("[{i}]"), format!("{e}[{i}]")))
                .collect(),
            // A pointer to a struct shows the struct's members (as editors do); any other
            // pointer, what it points to.
            Shape::Pointer(Some(pointee)) => match struct_members(&pointee) {
                Some(members) => members
                    .into_iter()
                    .flatten()
                    .map(|m| (m.clone(), format!("{e}->{m}")))
                    .collect(),
                None => vec![(format!("*{expression}"), format!("*{e}"))],
            },
            _ => Vec::new(),
        };
        let mut out = Vec::with_capacity(names.len());
        for (name, child) in names {
            let value = context::evaluate(self, &child).map_err(|e| e.to_string());
            let sc = context::scope(self)?;
            out.push(Variable::new(&sc, name, child, value));
        }
        Ok(out)
    }

    /// The children a built-in formatter gives `parent` (a container's elements, a map's
    /// entries, what a smart pointer owns), as gdb's pretty-printers show them to an editor;
    /// None when no formatter shows it (its members are its children). `e` is the parent's
    /// expression, parenthesised if needed. An element that an expression can name again
    /// (`v[3]` of a vector, array or deque) is a variable like any other, expandable in
    /// turn; any other child (a map entry, a list element) is known by its text only.
    fn formatter_children(
        &mut self,
        parent: &Value,
        e: &str,
    ) -> anyhow::Result<Option<Vec<Variable>>> {
        if !matches!(parent.ty.shape(), Shape::Struct(_)) {
            return Ok(None);
        }
        let opts = hindsight_symbols::show::PrintOptions {
            elements: Some(MAX_ELEMENTS),
            // Every element a child of its own: no `<repeats N times>` runs.
            repeats: u64::MAX,
            pretty: false,
            ..self.print
        };
        // (label, expression, text) of each child, read while the scope borrows the session.
        let children: Vec<(String, Option<String>, String)> = {
            let sc = context::scope(self)?;
            let shown = format::show_value(parent, &sc, &opts, hindsight_symbols::show::At::Bare);
            let Shown::Composite {
                summary: Some(summary),
                children,
                ..
            } = shown
            else {
                return Ok(None);
            };
            if summary.ends_with(':') {
                // A reference's `(T &) @0x…:`, not a formatter.
                return Ok(None);
            }
            let style = format::style(&sc, &opts);
            // A sequence's elements are unlabelled (`{0, 7, 14}`): their place is their index.
            let index = |i: i64| (format!("[{i}]"), Some(format!("{e}[{i}]")));
            let mut at = 0i64;
            children
                .iter()
                .map(|c| {
                    let text = render(&c.value, &style);
                    let place = at;
                    at += c.repeats.max(1) as i64;
                    let (name, expression) = match &c.label {
                        Label::Index(i) => index(*i),
                        Label::Positional => index(place),
                        Label::Key(k) => (format!("[{}]", render(k, &style)), None),
                        Label::Field(n) | Label::Static(n) | Label::Section(n) => (n.clone(), None),
                        Label::Base(n) => (format!("<{n}>"), None),
                    };
                    (name, expression, text)
                })
                .collect()
        };
        let mut out = Vec::with_capacity(children.len());
        for (name, expression, text) in children {
            // An element the expression names again, if it does (it must show the same).
            if let Some(x) = expression {
                if let Ok(v) = context::evaluate(self, &x) {
                    let sc = context::scope(self)?;
                    let var = Variable::new(&sc, name.clone(), x, Ok(v));
                    if var.text == text {
                        out.push(var);
                        continue;
                    }
                }
            }
            out.push(Variable::text_only(name, text));
        }
        Ok(Some(out))
    }

    /// Assigns `value` (an expression) to what `expression` names in the selected frame and
    /// returns it as it is now. A replay cannot change the recorded past: refused.
    pub fn assign(&mut self, expression: &str, value: &str) -> anyhow::Result<Variable> {
        if self.is_replay() {
            bail!("{}", REPLAY_WRITE);
        }
        context::evaluate(self, &format!("{expression} = {value}"))?;
        self.variable(expression, expression)
    }
}

/// Why a replay refuses to change the program.
pub const REPLAY_WRITE: &str = "A replay cannot change the program: its past is recorded (debug the program live with 'hindsight debug' to change variables).";

/// Whether an expression assigns (`x = 1`, `x += 1`, `x++`), outside string and character
/// literals; comparisons (`==`, `<=`, `>=`, `!=`) do not.
fn is_assignment(text: &str) -> bool {
    let b = text.as_bytes();
    let mut quote = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) => {
                if c == b'\\' {
                    i += 1;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                b'"' | b'\'' => quote = Some(c),
                b'+' | b'-' if b.get(i + 1) == Some(&c) => return true,
                b'=' => {
                    let prev = if i > 0 { b[i - 1] } else { b' ' };
                    let next = b.get(i + 1).copied().unwrap_or(b' ');
                    // `<<=` and `>>=` assign; `<=`, `>=`, `!=`, `==` compare.
                    let shift = matches!(prev, b'<' | b'>') && i >= 2 && b[i - 2] == prev;
                    if next != b'=' && (shift || !matches!(prev, b'=' | b'!' | b'<' | b'>')) {
                        return true;
                    }
                    if next == b'=' {
                        i += 1;
                    }
                }
                _ => {}
            },
        }
        i += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::is_assignment;

    #[test]
    fn assignments_are_told_from_comparisons() {
        assert!(is_assignment("x = 3"));
        assert!(is_assignment("p->n += 1"));
        assert!(is_assignment("i++"));
        assert!(is_assignment("a[1] <<= 2"));
        assert!(!is_assignment("x == 3"));
        assert!(!is_assignment("x <= 3 && y >= 2 && z != 1"));
        assert!(!is_assignment("s == \"a=b\""));
        assert!(!is_assignment("-x"));
    }
}
