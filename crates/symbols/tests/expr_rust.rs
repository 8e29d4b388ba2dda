//! Rust values as gdb 13 prints them (checked against a rustc -g program).

mod expr_common;

use expr_common::{Fake, STACK};
use hindsight_symbols::expr::Place;
use hindsight_symbols::types::{AggregateKind, Encoding, Language, Member, Type};

fn member(name: &str, ty: hindsight_symbols::types::TypeId, offset: u64) -> Member {
    Member {
        name: Some(name.into()),
        ty,
        offset,
        bits: None,
        ..Default::default()
    }
}

fn rust() -> Fake {
    let mut f = Fake::c();
    f.language = Language::Rust;
    let t = &mut f.table;
    let i32_ = t.add(Type::Base {
        name: "i32".into(),
        size: 4,
        encoding: Encoding::Signed,
    });
    let u8_ = t.add(Type::Base {
        name: "u8".into(),
        size: 1,
        encoding: Encoding::Unsigned,
    });
    let u64_ = t.add(Type::Base {
        name: "u64".into(),
        size: 8,
        encoding: Encoding::Unsigned,
    });
    let f64_ = t.add(Type::Base {
        name: "f64".into(),
        size: 8,
        encoding: Encoding::Float,
    });
    let char_ = t.add(Type::Base {
        name: "char".into(),
        size: 4,
        encoding: Encoding::Utf,
    });
    let bool_ = t.add(Type::Base {
        name: "bool".into(),
        size: 1,
        encoding: Encoding::Bool,
    });
    let point = t.add(Type::Struct {
        name: Some("hello::Point".into()),
        kind: AggregateKind::Struct,
        size: 8,
        members: vec![member("x", i32_, 0), member("y", i32_, 4)],
        info: Default::default(),
    });
    let tuple = t.add(Type::Struct {
        name: Some("(i32, f64, char)".into()),
        kind: AggregateKind::Struct,
        size: 24,
        members: vec![
            member("__0", i32_, 16),
            member("__1", f64_, 0),
            member("__2", char_, 8),
        ],
        info: Default::default(),
    });
    let u8p = t.add(Type::Pointer {
        pointee: Some(u8_),
        name: Some("*mut u8".into()),
        is_reference: false,
        rvalue: false,
    });
    let usize_ = t.add(Type::Base {
        name: "usize".into(),
        size: 8,
        encoding: Encoding::Unsigned,
    });
    let str_ = t.add(Type::Struct {
        name: Some("&str".into()),
        kind: AggregateKind::Struct,
        size: 16,
        members: vec![member("data_ptr", u8p, 0), member("length", usize_, 8)],
        info: Default::default(),
    });
    let i32p = t.add(Type::Pointer {
        pointee: Some(i32_),
        name: Some("*mut i32".into()),
        is_reference: false,
        rvalue: false,
    });
    let ref_i32 = t.add(Type::Pointer {
        pointee: Some(i32_),
        name: Some("&i32".into()),
        is_reference: false,
        rvalue: false,
    });
    let arr = t.add(Type::Array {
        elem: u8_,
        count: Some(3),
    });
    let unit = t.add(Type::Struct {
        name: Some("()".into()),
        kind: AggregateKind::Struct,
        size: 0,
        members: vec![],
        info: Default::default(),
    });
    let wrapper = t.add(Type::Struct {
        name: Some("hello::Meters".into()),
        kind: AggregateKind::Struct,
        size: 8,
        members: vec![member("__0", f64_, 0)],
        info: Default::default(),
    });
    let slice = t.add(Type::Struct {
        name: Some("&[i32]".into()),
        kind: AggregateKind::Struct,
        size: 16,
        members: vec![member("data_ptr", i32p, 0), member("length", usize_, 8)],
        info: Default::default(),
    });
    let bytes_ref = t.add(Type::Pointer {
        pointee: Some(arr),
        name: Some("&[u8; 3]".into()),
        is_reference: false,
        rvalue: false,
    });
    let text: u64 = 0x5555_5555_7000;
    f.map(text, b"hello world".to_vec());
    let mut sp = STACK + 0x8000;
    let mut local = |f: &mut Fake, name: &str, ty, bytes: Vec<u8>| -> u64 {
        sp += 0x40;
        f.map(sp, bytes);
        f.vars.insert(name.into(), (ty, Place::Memory(sp)));
        sp
    };
    let a = local(&mut f, "a", i32_, (-5i32).to_le_bytes().to_vec());
    local(&mut f, "b", u64_, 7u64.to_le_bytes().to_vec());
    local(&mut f, "t", bool_, vec![1]);
    local(&mut f, "ch", char_, 97u32.to_le_bytes().to_vec());
    local(&mut f, "lambda", char_, 0x3bbu32.to_le_bytes().to_vec());
    local(&mut f, "f", f64_, 2.5f64.to_le_bytes().to_vec());
    local(&mut f, "u", u8_, vec![200]);
    local(
        &mut f,
        "p",
        point,
        [1i32, 2].iter().flat_map(|v| v.to_le_bytes()).collect(),
    );
    let mut tb = 2.5f64.to_le_bytes().to_vec();
    tb.extend(120u32.to_le_bytes());
    tb.extend([0; 4]);
    tb.extend(1i32.to_le_bytes());
    tb.extend([0; 4]);
    local(&mut f, "tup", tuple, tb);
    let mut sb = text.to_le_bytes().to_vec();
    sb.extend(5u64.to_le_bytes());
    local(&mut f, "s", str_, sb);
    local(&mut f, "r", ref_i32, a.to_le_bytes().to_vec());
    local(&mut f, "arr", arr, vec![1, 2, 3]);
    local(&mut f, "unit", unit, vec![]);
    let ints: u64 = 0x5555_5555_7100;
    f.map(
        ints,
        [1i32, 2, 3].iter().flat_map(|v| v.to_le_bytes()).collect(),
    );
    let mut sl = ints.to_le_bytes().to_vec();
    sl.extend(3u64.to_le_bytes());
    local(&mut f, "sl", slice, sl);
    let abc: u64 = 0x5555_5555_7200;
    f.map(abc, b"abc".to_vec());
    local(&mut f, "bs", bytes_ref, abc.to_le_bytes().to_vec());
    local(&mut f, "m", wrapper, 3.5f64.to_le_bytes().to_vec());
    f
}

#[test]
fn rust_values() {
    let f = rust();
    let r = f.eval("r").raw_u64();
    let p = f.eval("&p").raw_u64();
    let cases: Vec<(&str, String)> = vec![
        ("a", "-5".into()),
        ("b", "7".into()),
        ("t", "true".into()),
        ("ch", "97 'a'".into()),
        // gdb escapes every non-ASCII scalar, six hex digits wide.
        ("lambda", "955 '\\u{0003bb}'".into()),
        ("f", "2.5".into()),
        ("u", "200".into()),
        ("p", "hello::Point {x: 1, y: 2}".into()),
        ("tup", "(1, 2.5, 120 'x')".into()),
        ("s", "\"hello\"".into()),
        ("r", format!("(*mut i32) {r:#x}")),
        ("*r", "-5".into()),
        ("arr", "[1, 2, 3]".into()),
        ("unit", "()".into()),
        ("p.x", "1".into()),
        ("tup.0", "1".into()),
        ("tup.2", "120 'x'".into()),
        ("&p", format!("(*mut hello::Point) {p:#x}")),
        ("a + 1", "-4".into()),
        // rust-gdb's slice printer (plain gdb: `&[i32] [1, 2, 3]`).
        ("sl", "&[i32](size=3) = {1, 2, 3}".into()),
        ("sl[1]", "2".into()),
        ("a as u8", "251".into()),
        ("-a as i64 * 2", "10".into()),
        ("f as i32", "2".into()),
        ("p.x == 1", "true".into()),
        ("t && false", "false".into()),
        ("tup.1", "2.5".into()),
        ("bs", "(*mut [u8; 3]) 0x555555557200 b\"abc\"".into()),
        ("m", "hello::Meters (3.5)".into()),
        (
            "$pc",
            format!("(*mut fn ()) {:#x} <main+1046>", expr_common::MAIN + 1046),
        ),
        ("nosuch", "No symbol 'nosuch' in current context".into()),
    ];
    for (expr, want) in cases {
        assert_eq!(f.print(expr), want, "print {expr}");
    }
    assert_eq!(f.print_fmt('x', "a"), "0xfffffffb");
}
