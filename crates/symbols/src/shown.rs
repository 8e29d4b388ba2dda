//! Values as data: the tree that `print`, `info locals`, frame lines and (through the engine)
//! editors show, and its rendering as gdb's text.
//!
//! A [`Shown`] is gdb's pretty-printer model: a scalar's text, or a composite with an optional
//! summary (`std::vector of length 3, capacity 4`) and labelled children (fields, base
//! classes, static members, indexes, map keys). [`crate::show`] builds it from a value (raw
//! structure or a built-in formatter); [`render`] turns it into one line or, with `set print
//! pretty on`, gdb's indented form. Nothing here reads memory.

use crate::types::Language;

/// What a child is to its parent; decides how its label is written.
#[derive(Debug, Clone, PartialEq)]
pub enum Label {
    /// No label (array elements, tuple fields).
    Positional,
    /// `name = v` (C) or `name: v` (Rust).
    Field(String),
    /// A base-class subobject: `<geo::Shape> = {...}`.
    Base(String),
    /// A static member: `static count = 2`.
    Static(String),
    /// `[3] = v`.
    Index(i64),
    /// A map key: `["one"] = 1`.
    Key(Box<Shown>),
    /// Where a class's own members start after its bases; only `set print pretty` shows
    /// it (`members of geo::Circle:`), and its value is empty.
    Section(String),
}

/// One child of a composite.
#[derive(Debug, Clone, PartialEq)]
pub struct Child {
    /// Its label.
    pub label: Label,
    /// Its value.
    pub value: Shown,
    /// How many equal elements in a row it stands for (1: itself only); runs longer than
    /// gdb's `repeats` threshold show as `v <repeats N times>`.
    pub repeats: u64,
}

impl Child {
    /// A child standing for itself.
    pub fn new(label: Label, value: Shown) -> Child {
        Child {
            label,
            value,
            repeats: 1,
        }
    }
}

/// How a composite's children are delimited.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A C/C++ aggregate: `{a = 1, b = 2}`; also a formatter's children shown as fields.
    Struct,
    /// An array or a formatter's sequence: `{1, 2, 3}` (C and formatters), `[1, 2]` (Rust).
    Array,
    /// A formatter's map: `{[k] = v, ...}`.
    Map,
    /// A Rust struct: `path::Name {a: 1}`; an enum's struct variant `path::E::V{a: 1}`
    /// (rust-gdb writes no blank there: `brace_gap` false).
    RustStruct {
        /// Its path.
        name: String,
        /// A blank between name and brace.
        brace_gap: bool,
    },
    /// A Rust tuple struct or tuple variant: `path::Pair (1, 2)`, `Some(3)` (no blank for
    /// a variant: `paren_gap` false); a tuple `(1, 2.5)` has an empty name.
    RustTuple {
        /// Its path (empty for a tuple).
        name: String,
        /// A blank between name and parenthesis.
        paren_gap: bool,
    },
}

/// A value as shown.
#[derive(Debug, Clone, PartialEq)]
pub enum Shown {
    /// A scalar, a pointer, a string, or anything else that is one piece of text.
    Text(String),
    /// A value with children.
    Composite {
        /// Text before the children: a formatter's summary (`std::map with 2 elements`), a
        /// C++ reference's `(T &) @0x…:`.
        summary: Option<String>,
        /// The delimiters.
        kind: Kind,
        /// The children, in order.
        children: Vec<Child>,
        /// More children exist than were taken (`print elements`): `...` follows.
        more: bool,
    },
}

impl Shown {
    /// A piece of text.
    pub fn text(s: impl Into<String>) -> Shown {
        Shown::Text(s.into())
    }

    /// A composite without summary.
    pub fn composite(kind: Kind, children: Vec<Child>, more: bool) -> Shown {
        Shown::Composite {
            summary: None,
            kind,
            children,
            more,
        }
    }

    /// A formatter's value: a summary and its children (none: the summary alone).
    pub fn printer(
        summary: impl Into<String>,
        kind: Kind,
        children: Vec<Child>,
        more: bool,
    ) -> Shown {
        Shown::Composite {
            summary: Some(summary.into()),
            kind,
            children,
            more,
        }
    }

    /// The children, if any.
    pub fn children(&self) -> &[Child] {
        match self {
            Shown::Composite { children, .. } => children,
            Shown::Text(_) => &[],
        }
    }

    /// The text a scalar shows, or the summary of a composite.
    pub fn summary(&self) -> Option<&str> {
        match self {
            Shown::Text(t) => Some(t),
            Shown::Composite { summary, .. } => summary.as_deref(),
        }
    }
}

/// How to render: the language's syntax, gdb's `print pretty` and `repeats` settings.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    /// The language of the frame (Rust changes field and array syntax).
    pub language: Language,
    /// `set print pretty on`.
    pub pretty: bool,
    /// `set print repeats`: runs longer than this collapse.
    pub repeats: u64,
}

impl Default for Style {
    fn default() -> Self {
        Style {
            language: Language::C,
            pretty: false,
            repeats: 10,
        }
    }
}

/// gdb's text for a shown value.
pub fn render(v: &Shown, style: &Style) -> String {
    let mut out = String::new();
    write(v, style, 0, &mut out);
    out
}

fn rust(style: &Style) -> bool {
    style.language == Language::Rust
}

fn write(v: &Shown, style: &Style, depth: usize, out: &mut String) {
    let (summary, kind, children, more) = match v {
        Shown::Text(t) => {
            out.push_str(t);
            return;
        }
        Shown::Composite {
            summary,
            kind,
            children,
            more,
        } => (summary, kind, children, *more),
    };
    if let Some(s) = summary {
        out.push_str(s);
        // A formatter with nothing to list shows its summary alone.
        if children.is_empty() && !more {
            return;
        }
        // A C++ reference's `(T &) @0x…:` is followed by the value itself.
        out.push_str(if s.ends_with(':') { " " } else { " = " });
    }
    let (open, close) = match kind {
        Kind::Array if rust(style) && summary.is_none() => ("[", "]"),
        Kind::RustStruct { name, brace_gap } => {
            out.push_str(name);
            if children.is_empty() {
                return;
            }
            if *brace_gap {
                out.push(' ');
            }
            ("{", "}")
        }
        Kind::RustTuple { name, paren_gap } => {
            out.push_str(name);
            if *paren_gap && !name.is_empty() {
                out.push(' ');
            }
            ("(", ")")
        }
        _ => ("{", "}"),
    };
    if children.is_empty() && !more {
        out.push_str(open);
        if matches!(kind, Kind::Struct) && summary.is_none() && !rust(style) {
            out.push_str("<No data fields>");
        }
        out.push_str(close);
        return;
    }
    // gdb's pretty form puts fields and map entries on lines of their own; array elements
    // stay on one line (a struct element opens its braces on the same line).
    let lines = style.pretty
        && matches!(kind, Kind::Struct | Kind::Map | Kind::RustStruct { .. })
        && !rust(style);
    let indent = |d: usize| "  ".repeat(d);
    out.push_str(open);
    let mut after_section = false;
    let mut first = true;
    for c in children {
        if let Label::Section(name) = &c.label {
            // gdb: `}, ` then the heading on a line of its own.
            if lines {
                out.push_str(", \n");
                out.push_str(&indent(depth + 1));
                out.push_str(&format!("members of {name}:"));
                after_section = true;
            }
            continue;
        }
        if !first && !after_section {
            out.push(',');
            if !lines {
                out.push(' ');
            }
        }
        first = false;
        after_section = false;
        if lines {
            out.push('\n');
            out.push_str(&indent(depth + 1));
        }
        let rust_field = matches!(kind, Kind::RustStruct { .. });
        write_label(&c.label, rust_field, style, depth + 1, out);
        write(&c.value, style, depth + 1, out);
        if c.repeats > style.repeats {
            out.push_str(&format!(" <repeats {} times>", c.repeats));
        }
    }
    if more {
        if lines {
            out.push_str(",\n");
            out.push_str(&indent(depth + 1));
        }
        out.push_str("...");
    }
    if lines {
        out.push('\n');
        out.push_str(&indent(depth));
    }
    out.push_str(close);
}

/// A child's label; `rust_field`: a Rust struct's field (`name: v`; formatters' children
/// keep gdb's `name = v` in Rust too).
fn write_label(l: &Label, rust_field: bool, style: &Style, depth: usize, out: &mut String) {
    let rust_fields = rust_field;
    match l {
        Label::Positional => {}
        Label::Field(n) if rust_fields => {
            out.push_str(n);
            out.push_str(": ");
        }
        Label::Field(n) => {
            out.push_str(n);
            out.push_str(" = ");
        }
        Label::Base(n) => {
            out.push('<');
            out.push_str(n);
            out.push_str("> = ");
        }
        Label::Static(n) => {
            out.push_str("static ");
            out.push_str(n);
            out.push_str(" = ");
        }
        Label::Index(i) => out.push_str(&format!("[{i}] = ")),
        Label::Section(_) => {}
        Label::Key(k) => {
            out.push('[');
            write(k, style, depth, out);
            out.push_str("] = ");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Shown {
        Shown::text(s)
    }

    fn field(n: &str, v: Shown) -> Child {
        Child::new(Label::Field(n.into()), v)
    }

    #[test]
    fn structs_arrays_and_printers_in_one_line_and_pretty() {
        let inner = Shown::composite(Kind::Struct, vec![field("a", t("1"))], false);
        let arr = Shown::composite(
            Kind::Array,
            vec![
                Child::new(Label::Positional, t("1")),
                Child::new(Label::Positional, t("2")),
            ],
            false,
        );
        let v = Shown::composite(
            Kind::Struct,
            vec![
                Child::new(Label::Base("B".into()), inner.clone()),
                Child::new(Label::Static("n".into()), t("2")),
                field("arr", arr),
            ],
            false,
        );
        let c = Style::default();
        assert_eq!(
            render(&v, &c),
            "{<B> = {a = 1}, static n = 2, arr = {1, 2}}"
        );
        let p = Style { pretty: true, ..c };
        assert_eq!(
            render(&v, &p),
            "{\n  <B> = {\n    a = 1\n  },\n  static n = 2,\n  arr = {1, 2}\n}"
        );
        let m = Shown::printer(
            "std::map with 1 element",
            Kind::Map,
            vec![Child::new(Label::Key(Box::new(t("\"one\""))), t("1"))],
            false,
        );
        assert_eq!(render(&m, &c), "std::map with 1 element = {[\"one\"] = 1}");
        assert_eq!(
            render(&m, &p),
            "std::map with 1 element = {\n  [\"one\"] = 1\n}"
        );
        let empty = Shown::printer(
            "std::vector of length 0, capacity 0",
            Kind::Array,
            vec![],
            false,
        );
        assert_eq!(render(&empty, &c), "std::vector of length 0, capacity 0");
        let rep = Shown::composite(
            Kind::Array,
            vec![Child {
                label: Label::Positional,
                value: t("0"),
                repeats: 11,
            }],
            true,
        );
        assert_eq!(render(&rep, &c), "{0 <repeats 11 times>...}");
        assert_eq!(
            render(&Shown::composite(Kind::Struct, vec![], false), &c),
            "{<No data fields>}"
        );
    }

    #[test]
    fn rust_syntax() {
        let r = Style {
            language: Language::Rust,
            ..Style::default()
        };
        let s = Shown::composite(
            Kind::RustStruct {
                name: "m::Job".into(),
                brace_gap: true,
            },
            vec![field("id", t("1"))],
            false,
        );
        assert_eq!(render(&s, &r), "m::Job {id: 1}");
        let v = Shown::composite(
            Kind::RustStruct {
                name: "m::S::Rect".into(),
                brace_gap: false,
            },
            vec![field("w", t("2"))],
            false,
        );
        assert_eq!(render(&v, &r), "m::S::Rect{w: 2}");
        let tup = Shown::composite(
            Kind::RustTuple {
                name: String::new(),
                paren_gap: false,
            },
            vec![
                Child::new(Label::Positional, t("1")),
                Child::new(Label::Positional, t("2.5")),
            ],
            false,
        );
        assert_eq!(render(&tup, &r), "(1, 2.5)");
        let arr = Shown::composite(
            Kind::Array,
            vec![Child::new(Label::Positional, t("1"))],
            false,
        );
        assert_eq!(render(&arr, &r), "[1]");
        let vec = Shown::printer(
            "Vec(size=1)",
            Kind::Array,
            vec![Child::new(Label::Positional, t("1"))],
            false,
        );
        assert_eq!(render(&vec, &r), "Vec(size=1) = {1}");
        let unit = Shown::composite(
            Kind::RustStruct {
                name: "m::S::Empty".into(),
                brace_gap: false,
            },
            vec![],
            false,
        );
        assert_eq!(render(&unit, &r), "m::S::Empty");
    }
}
