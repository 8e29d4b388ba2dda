//! The parser alone: precedence, associativity, postfix chains, casts, literals, errors.

use hindsight_symbols::expr::parser::{Binary, Expr, HistoryRef, IntLit, TypeName, Unary};
use hindsight_symbols::expr::{parse, ExprError};

fn int(v: u64) -> Expr {
    Expr::Int(IntLit {
        value: v,
        unsigned: false,
        long: false,
        decimal: true,
    })
}

fn name(n: &str) -> Expr {
    Expr::Name(n.into())
}

fn bin(op: Binary, a: Expr, b: Expr) -> Expr {
    Expr::Binary(op, Box::new(a), Box::new(b))
}

#[test]
fn precedence_and_associativity() {
    assert_eq!(
        parse("1 + 2 * 3").unwrap(),
        bin(Binary::Add, int(1), bin(Binary::Mul, int(2), int(3)))
    );
    assert_eq!(
        parse("1 - 2 - 3").unwrap(),
        bin(Binary::Sub, bin(Binary::Sub, int(1), int(2)), int(3))
    );
    assert_eq!(
        parse("a < b == c").unwrap(),
        bin(Binary::Eq, bin(Binary::Lt, name("a"), name("b")), name("c"))
    );
    assert_eq!(
        parse("a || b && c | d ^ e & f").unwrap(),
        bin(
            Binary::Or,
            name("a"),
            bin(
                Binary::And,
                name("b"),
                bin(
                    Binary::BitOr,
                    name("c"),
                    bin(
                        Binary::BitXor,
                        name("d"),
                        bin(Binary::BitAnd, name("e"), name("f"))
                    )
                )
            )
        )
    );
    assert_eq!(
        parse("1 << 2 + 3").unwrap(),
        bin(Binary::Shl, int(1), bin(Binary::Add, int(2), int(3)))
    );
    // `?:` is right-associative and below `||`.
    assert_eq!(
        parse("a ? b : c ? d : e").unwrap(),
        Expr::Ternary(
            Box::new(name("a")),
            Box::new(name("b")),
            Box::new(Expr::Ternary(
                Box::new(name("c")),
                Box::new(name("d")),
                Box::new(name("e"))
            ))
        )
    );
    // Assignment is lowest and right-associative.
    assert_eq!(
        parse("x = y = 1").unwrap(),
        Expr::Assign(
            Box::new(name("x")),
            Box::new(Expr::Assign(Box::new(name("y")), Box::new(int(1))))
        )
    );
}

#[test]
fn unary_and_postfix() {
    // `*p->next` is `*(p->next)`; `-a[1]` is `-(a[1])`.
    assert_eq!(
        parse("*p->next").unwrap(),
        Expr::Unary(
            Unary::Deref,
            Box::new(Expr::Arrow(Box::new(name("p")), "next".into()))
        )
    );
    assert_eq!(
        parse("-a[1]").unwrap(),
        Expr::Unary(
            Unary::Neg,
            Box::new(Expr::Index(Box::new(name("a")), Box::new(int(1))))
        )
    );
    assert_eq!(
        parse("&s.m").unwrap(),
        Expr::Unary(
            Unary::AddrOf,
            Box::new(Expr::Member(Box::new(name("s")), "m".into()))
        )
    );
    assert_eq!(
        parse("!~x").unwrap(),
        Expr::Unary(
            Unary::Not,
            Box::new(Expr::Unary(Unary::BitNot, Box::new(name("x"))))
        )
    );
}

#[test]
fn casts_and_sizeof() {
    let cast = |base: &str, pointers, e| {
        Expr::Cast(
            TypeName {
                base: base.into(),
                pointers,
            },
            Box::new(e),
        )
    };
    assert_eq!(
        parse("(struct s *)p").unwrap(),
        cast("struct s", 1, name("p"))
    );
    assert_eq!(parse("(char)x").unwrap(), cast("char", 0, name("x")));
    assert_eq!(
        parse("(unsigned long)p").unwrap(),
        cast("unsigned long", 0, name("p"))
    );
    assert_eq!(
        parse("(const char **)p").unwrap(),
        cast("char", 2, name("p"))
    );
    assert_eq!(parse("(point_t)x").unwrap(), cast("point_t", 0, name("x")));
    // A parenthesised name followed by an operator is not a cast.
    assert_eq!(
        parse("(a) - 1").unwrap(),
        bin(Binary::Sub, name("a"), int(1))
    );
    // A cast binds tighter than binary operators.
    assert_eq!(
        parse("(long)a + 1").unwrap(),
        bin(Binary::Add, cast("long", 0, name("a")), int(1))
    );
    assert_eq!(
        parse("sizeof(int)").unwrap(),
        Expr::SizeofType(TypeName {
            base: "int".into(),
            pointers: 0
        })
    );
    assert_eq!(
        parse("sizeof x").unwrap(),
        Expr::SizeofExpr(Box::new(name("x")))
    );
    assert_eq!(
        parse("sizeof(x)").unwrap(),
        Expr::SizeofExpr(Box::new(name("x")))
    );
}

#[test]
fn rust_as_casts() {
    let cast = |base: &str, pointers, e| {
        Expr::Cast(
            TypeName {
                base: base.into(),
                pointers,
            },
            Box::new(e),
        )
    };
    assert_eq!(
        parse("-x as u8 + 1").unwrap(),
        bin(
            Binary::Add,
            cast("u8", 0, Expr::Unary(Unary::Neg, Box::new(name("x")))),
            int(1)
        )
    );
    assert_eq!(parse("p as *const i32").unwrap(), cast("i32", 1, name("p")));
    assert_eq!(parse("x as a::B").unwrap(), cast("a::B", 0, name("x")));
}

#[test]
fn literals() {
    let lit = |value, unsigned, long, decimal| {
        Expr::Int(IntLit {
            value,
            unsigned,
            long,
            decimal,
        })
    };
    assert_eq!(parse("0x1F").unwrap(), lit(31, false, false, false));
    assert_eq!(parse("017").unwrap(), lit(15, false, false, false));
    assert_eq!(parse("0").unwrap(), lit(0, false, false, true));
    assert_eq!(parse("10ul").unwrap(), lit(10, true, true, true));
    assert_eq!(parse("1.5").unwrap(), Expr::Float(1.5, false));
    assert_eq!(parse("2.5f").unwrap(), Expr::Float(2.5, true));
    assert_eq!(parse("1e-3").unwrap(), Expr::Float(1e-3, false));
    assert_eq!(parse(".5").unwrap(), Expr::Float(0.5, false));
    assert_eq!(parse("'a'").unwrap(), Expr::Char(b'a'));
    assert_eq!(parse("'\\n'").unwrap(), Expr::Char(b'\n'));
    assert_eq!(parse("'\\0'").unwrap(), Expr::Char(0));
    assert_eq!(parse("'\\x41'").unwrap(), Expr::Char(0x41));
    assert_eq!(parse("\"a\\tb\"").unwrap(), Expr::Str(b"a\tb".to_vec()));
}

#[test]
fn dollars_and_rust_paths() {
    assert_eq!(parse("$").unwrap(), Expr::History(HistoryRef::Relative(0)));
    assert_eq!(parse("$$").unwrap(), Expr::History(HistoryRef::Relative(1)));
    assert_eq!(
        parse("$$3").unwrap(),
        Expr::History(HistoryRef::Relative(3))
    );
    assert_eq!(parse("$2").unwrap(), Expr::History(HistoryRef::Absolute(2)));
    assert_eq!(parse("$rip").unwrap(), Expr::Register("rip".into()));
    assert_eq!(
        parse("hello::inner::COUNT").unwrap(),
        name("hello::inner::COUNT")
    );
    // `t.0` is a tuple field, even chained.
    assert_eq!(
        parse("t.0.1").unwrap(),
        Expr::Member(
            Box::new(Expr::Member(Box::new(name("t")), "0".into())),
            "1".into()
        )
    );
}

#[test]
fn errors() {
    let syntax = |t: &str| match parse(t) {
        Err(ExprError::Syntax(near)) => near,
        other => panic!("{t}: {other:?}"),
    };
    assert_eq!(syntax("1 +"), "");
    assert_eq!(syntax("1 2"), "2");
    assert_eq!(syntax("(1 + 2"), "");
    assert_eq!(syntax("a[1"), "");
    assert_eq!(syntax("* / 2"), "/ 2");
    assert_eq!(
        parse("1 +").unwrap_err().to_string(),
        "A syntax error in expression, near `'."
    );
    assert_eq!(
        parse("'a").unwrap_err().to_string(),
        "Unmatched single quote."
    );
    assert_eq!(
        parse("\"abc").unwrap_err().to_string(),
        "Unterminated string in expression."
    );
    assert_eq!(
        parse("a # b").unwrap_err().to_string(),
        "Invalid character '#' in expression."
    );
    assert_eq!(
        parse("09").unwrap_err().to_string(),
        "Invalid number \"09\"."
    );
    assert!(parse("").is_err());
}
