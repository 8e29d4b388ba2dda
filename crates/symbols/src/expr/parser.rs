//! C expression syntax (what gdb's `print` and breakpoint conditions accept) into an AST.
//! Pure syntax: names are resolved by the evaluator.

use super::lexer::{lex, Tok};
use super::ExprError;

/// A type as written in a cast or `sizeof`: a base name and a number of `*`s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeName {
    /// `int`, `unsigned long`, `struct point`, `point_t`.
    pub base: String,
    /// Levels of pointer.
    pub pointers: u32,
}

/// Unary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unary {
    /// `-x`
    Neg,
    /// `+x`
    Plus,
    /// `!x`
    Not,
    /// `~x`
    BitNot,
    /// `*x`
    Deref,
    /// `&x`
    AddrOf,
}

/// Binary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binary {
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `<`
    Lt,
    /// `>`
    Gt,
    /// `<=`
    Le,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `&`
    BitAnd,
    /// `^`
    BitXor,
    /// `|`
    BitOr,
    /// `&&`
    And,
    /// `||`
    Or,
    /// gdb's `x@n`: `n` objects like `x` from `x`'s address, as an array.
    Repeat,
}

/// An expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// Integer literal.
    Int(IntLit),
    /// Floating literal; true when written with an `f` suffix (a `float`).
    Float(f64, bool),
    /// Character literal.
    Char(u8),
    /// String literal.
    Str(Vec<u8>),
    /// A name (variable; Rust paths `a::b` included).
    Name(String),
    /// `$reg`.
    Register(String),
    /// `$N` (absolute), `$`/`$$N` (relative: 0 = last).
    History(HistoryRef),
    /// Unary operation.
    Unary(Unary, Box<Expr>),
    /// Binary operation.
    Binary(Binary, Box<Expr>, Box<Expr>),
    /// `c ? a : b`.
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `(type) x`.
    Cast(TypeName, Box<Expr>),
    /// `sizeof(type)`.
    SizeofType(TypeName),
    /// `sizeof x`.
    SizeofExpr(Box<Expr>),
    /// `x.m` (also Rust's `x.0`).
    Member(Box<Expr>, String),
    /// `p->m`.
    Arrow(Box<Expr>, String),
    /// `a[i]`.
    Index(Box<Expr>, Box<Expr>),
    /// `x = v`.
    Assign(Box<Expr>, Box<Expr>),
    /// `f(a, b)`: a call of the program's function (the front end runs it).
    Call(Box<Expr>, Vec<Expr>),
}

/// An integer literal as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntLit {
    /// Its value.
    pub value: u64,
    /// `u` suffix.
    pub unsigned: bool,
    /// `l` suffix.
    pub long: bool,
    /// Written in decimal (C gives decimal and hex literals different types).
    pub decimal: bool,
}

/// A value-history reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistoryRef {
    /// `$N`.
    Absolute(usize),
    /// `$` (0), `$$` (1), `$$N` (N).
    Relative(usize),
}

const TYPE_WORDS: &[&str] = &[
    "struct", "union", "enum", "unsigned", "signed", "int", "char", "long", "short", "float",
    "double", "void", "_Bool", "bool", "const", "volatile",
];

struct Parser<'a> {
    toks: Vec<(Tok, usize)>,
    pos: usize,
    text: &'a str,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }

    fn peek_at(&self, n: usize) -> Option<&Tok> {
        self.toks.get(self.pos + n).map(|t| &t.0)
    }

    fn err(&self) -> ExprError {
        let at = self
            .toks
            .get(self.pos)
            .map(|t| t.1)
            .unwrap_or(self.text.len());
        ExprError::Syntax(self.text[at..].to_string())
    }

    fn eat(&mut self, op: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Op(o)) if *o == op) {
            self.pos += 1;
            return true;
        }
        false
    }

    fn expect(&mut self, op: &str) -> Result<(), ExprError> {
        if self.eat(op) {
            Ok(())
        } else {
            Err(self.err())
        }
    }

    fn expr(&mut self) -> Result<Expr, ExprError> {
        let lhs = self.ternary()?;
        if self.eat("=") {
            let rhs = self.expr()?;
            return Ok(Expr::Assign(Box::new(lhs), Box::new(rhs)));
        }
        Ok(lhs)
    }

    fn ternary(&mut self) -> Result<Expr, ExprError> {
        let c = self.binary(0)?;
        if self.eat("?") {
            let a = self.expr()?;
            self.expect(":")?;
            let b = self.ternary()?;
            return Ok(Expr::Ternary(Box::new(c), Box::new(a), Box::new(b)));
        }
        Ok(c)
    }

    fn binop(&self) -> Option<(Binary, u8)> {
        let Some(Tok::Op(op)) = self.peek() else {
            return None;
        };
        Some(match *op {
            "||" => (Binary::Or, 1),
            "&&" => (Binary::And, 2),
            "|" => (Binary::BitOr, 3),
            "^" => (Binary::BitXor, 4),
            "&" => (Binary::BitAnd, 5),
            "==" => (Binary::Eq, 6),
            "!=" => (Binary::Ne, 6),
            "<" => (Binary::Lt, 7),
            ">" => (Binary::Gt, 7),
            "<=" => (Binary::Le, 7),
            ">=" => (Binary::Ge, 7),
            "<<" => (Binary::Shl, 8),
            ">>" => (Binary::Shr, 8),
            "@" => (Binary::Repeat, 9),
            "+" => (Binary::Add, 10),
            "-" => (Binary::Sub, 10),
            "*" => (Binary::Mul, 11),
            "/" => (Binary::Div, 11),
            "%" => (Binary::Rem, 11),
            _ => return None,
        })
    }

    fn binary(&mut self, min: u8) -> Result<Expr, ExprError> {
        let mut lhs = self.cast_as()?;
        while let Some((op, prec)) = self.binop() {
            if prec <= min {
                break;
            }
            self.pos += 1;
            let rhs = self.binary(prec)?;
            lhs = Expr::Binary(op, Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    /// Rust's `x as T` (binds tighter than binary operators, looser than unary ones).
    fn cast_as(&mut self) -> Result<Expr, ExprError> {
        let mut e = self.unary()?;
        while matches!(self.peek(), Some(Tok::Ident(w)) if w == "as") {
            self.pos += 1;
            let mut pointers = 0;
            // `*const T` / `*mut T` are pointers to T.
            while self.eat("*") {
                pointers += 1;
                if matches!(self.peek(), Some(Tok::Ident(w)) if w == "const" || w == "mut") {
                    self.pos += 1;
                }
            }
            let Some(Tok::Ident(mut base)) = self.peek().cloned() else {
                return Err(self.err());
            };
            self.pos += 1;
            while self.peek() == Some(&Tok::Op("::")) {
                match self.peek_at(1).cloned() {
                    Some(Tok::Ident(next)) => {
                        base = format!("{base}::{next}");
                        self.pos += 2;
                    }
                    _ => return Err(self.err()),
                }
            }
            e = Expr::Cast(TypeName { base, pointers }, Box::new(e));
        }
        Ok(e)
    }

    /// `( TYPE )` at the current position, if it is one.
    fn cast_type(&mut self) -> Option<TypeName> {
        if self.peek() != Some(&Tok::Op("(")) {
            return None;
        }
        let mut words = Vec::new();
        let mut i = 1;
        while let Some(Tok::Ident(w)) = self.peek_at(i) {
            words.push(w.clone());
            i += 1;
        }
        if words.is_empty() {
            return None;
        }
        let mut pointers = 0;
        while self.peek_at(i) == Some(&Tok::Op("*")) {
            pointers += 1;
            i += 1;
        }
        if self.peek_at(i) != Some(&Tok::Op(")")) {
            return None;
        }
        let keyword = words.iter().any(|w| TYPE_WORDS.contains(&w.as_str()));
        let single_then_operand = words.len() == 1
            && matches!(
                self.peek_at(i + 1),
                Some(
                    Tok::Ident(_)
                        | Tok::Int(..)
                        | Tok::Float(..)
                        | Tok::Char(_)
                        | Tok::Dollar(_)
                        | Tok::Op("(")
                )
            );
        if !(keyword || pointers > 0 || single_then_operand) {
            return None;
        }
        self.pos += i + 1;
        let base: Vec<&str> = words
            .iter()
            .map(|w| w.as_str())
            .filter(|w| *w != "const" && *w != "volatile")
            .collect();
        Some(TypeName {
            base: base.join(" "),
            pointers,
        })
    }

    fn unary(&mut self) -> Result<Expr, ExprError> {
        if let Some(t) = self.cast_type() {
            let e = self.unary()?;
            return Ok(Expr::Cast(t, Box::new(e)));
        }
        let op = match self.peek() {
            Some(Tok::Op("-")) => Some(Unary::Neg),
            Some(Tok::Op("+")) => Some(Unary::Plus),
            Some(Tok::Op("!")) => Some(Unary::Not),
            Some(Tok::Op("~")) => Some(Unary::BitNot),
            Some(Tok::Op("*")) => Some(Unary::Deref),
            Some(Tok::Op("&")) => Some(Unary::AddrOf),
            _ => None,
        };
        if let Some(op) = op {
            self.pos += 1;
            let e = self.unary()?;
            return Ok(Expr::Unary(op, Box::new(e)));
        }
        if self.peek() == Some(&Tok::Ident("sizeof".into())) {
            self.pos += 1;
            let save = self.pos;
            if let Some(t) = self.cast_type() {
                return Ok(Expr::SizeofType(t));
            }
            self.pos = save;
            let e = self.unary()?;
            return Ok(Expr::SizeofExpr(Box::new(e)));
        }
        self.postfix()
    }

    fn postfix(&mut self) -> Result<Expr, ExprError> {
        let mut e = self.primary()?;
        loop {
            if self.eat("[") {
                let i = self.expr()?;
                self.expect("]")?;
                e = Expr::Index(Box::new(e), Box::new(i));
            } else if self.eat(".") {
                e = Expr::Member(Box::new(e), self.member_name()?);
            } else if self.eat("->") {
                e = Expr::Arrow(Box::new(e), self.member_name()?);
            } else if self.eat("(") {
                let mut args = Vec::new();
                if !self.eat(")") {
                    loop {
                        args.push(self.expr()?);
                        if self.eat(")") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
                e = Expr::Call(Box::new(e), args);
            } else {
                return Ok(e);
            }
        }
    }

    fn member_name(&mut self) -> Result<String, ExprError> {
        match self.peek().cloned() {
            Some(Tok::Ident(n)) => {
                self.pos += 1;
                Ok(n)
            }
            Some(Tok::Int(n, ..)) => {
                self.pos += 1;
                Ok(n.to_string())
            }
            _ => Err(self.err()),
        }
    }

    fn primary(&mut self) -> Result<Expr, ExprError> {
        let Some(tok) = self.peek().cloned() else {
            return Err(self.err());
        };
        self.pos += 1;
        match tok {
            Tok::Int(value, unsigned, long, decimal) => Ok(Expr::Int(IntLit {
                value,
                unsigned,
                long,
                decimal,
            })),
            Tok::Float(f, single) => Ok(Expr::Float(f, single)),
            Tok::Char(c) => Ok(Expr::Char(c)),
            Tok::Str(s) => Ok(Expr::Str(s)),
            Tok::Dollar(r) => Ok(history_or_register(&r)),
            Tok::Ident(mut n) => {
                while self.peek() == Some(&Tok::Op("::")) {
                    if let Some(Tok::Ident(next)) = self.peek_at(1).cloned() {
                        n = format!("{n}::{next}");
                        self.pos += 2;
                    } else {
                        break;
                    }
                }
                Ok(Expr::Name(n))
            }
            Tok::Op("(") => {
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            _ => {
                self.pos -= 1;
                Err(self.err())
            }
        }
    }
}

fn history_or_register(r: &str) -> Expr {
    if r.is_empty() {
        return Expr::History(HistoryRef::Relative(0));
    }
    if let Some(rest) = r.strip_prefix('$') {
        let n = if rest.is_empty() {
            1
        } else {
            rest.parse().unwrap_or(1)
        };
        return Expr::History(HistoryRef::Relative(n));
    }
    if let Ok(n) = r.parse::<usize>() {
        return Expr::History(HistoryRef::Absolute(n));
    }
    Expr::Register(r.to_string())
}

/// Parses an expression (`print`'s argument, a breakpoint condition).
pub fn parse(text: &str) -> Result<Expr, ExprError> {
    let toks = lex(text)?;
    if toks.is_empty() {
        return Err(ExprError::Other(
            "Argument required (expression to compute).".into(),
        ));
    }
    let mut p = Parser { toks, pos: 0, text };
    let e = p.expr()?;
    if p.pos < p.toks.len() {
        return Err(p.err());
    }
    Ok(e)
}

impl Expr {
    /// The expression naming one variable (what `info locals` evaluates for each local).
    pub fn variable(name: &str) -> Expr {
        Expr::Name(name.to_string())
    }
}
