//! `print` output of the fake C program, compared with what gdb 13 prints for the same
//! variables and expressions in the real program (addresses are the fake's own).

mod expr_common;

use expr_common::{Fake, MAIN, ND, SQUARE, STACK};

fn check(f: &Fake, cases: &[(&str, &str)]) {
    for (expr, want) in cases {
        assert_eq!(f.print(expr), *want, "print {expr}");
    }
}

#[test]
fn integers_and_chars() {
    let f = Fake::c();
    check(
        &f,
        &[
            ("sc", "-5 '\\373'"),
            ("uc", "200 '\\310'"),
            ("s", "-300"),
            ("i", "-7"),
            ("ui", "4000000000"),
            ("l", "-1234567890123"),
            ("ul", "18446744073709551615"),
            ("c", "97 'a'"),
            ("c0", "0 '\\000'"),
            ("cn", "10 '\\n'"),
            ("cq", "39 '\\''"),
            ("c200", "-56 '\\310'"),
            ("b", "true"),
            ("'a'", "97 'a'"),
            ("'\\0'", "0 '\\000'"),
            ("(char)65", "65 'A'"),
            ("(unsigned char)300", "44 ','"),
        ],
    );
}

#[test]
fn floats_use_shortest_round_trip_digits() {
    let f = Fake::c();
    check(
        &f,
        &[
            ("f", "1.5"),
            ("f2", "3.1400001"),
            ("f4", "0.100000001"),
            ("d", "3.1400000000000001"),
            ("d4", "1.0000000000000001e-05"),
            ("d5", "100"),
            ("d8", "10000000000000000"),
            ("d9", "0.33333333333333331"),
            ("1.5", "1.5"),
            ("7.0/2", "3.5"),
            ("d + 1", "4.1400000000000006"),
            ("f * 2", "3"),
            ("(float)1/3", "0.333333343"),
            ("1e3", "1000"),
        ],
    );
}

#[test]
fn pointers() {
    let f = Fake::c();
    let ip = f.eval("ip").raw_u64();
    let pt = f.eval("&pt").raw_u64();
    check(
        &f,
        &[
            ("ip", &format!("(int *) {ip:#x}")),
            ("vp", "(void *) 0x0"),
            ("str", &format!("{:#x} \"hello\"", f.eval("str").raw_u64())),
            (
                "qs",
                &format!("{:#x} \"a\\\"b\\n\"", f.eval("qs").raw_u64()),
            ),
            ("fp", &format!("(int (*)(int)) {SQUARE:#x} <square>")),
            ("square", &format!("{{int (int)}} {SQUARE:#x} <square>")),
            ("*fp", &format!("{{int (int)}} {SQUARE:#x} <square>")),
            ("&square", &format!("(int (*)(int)) {SQUARE:#x} <square>")),
            ("main", &format!("{{int (void)}} {MAIN:#x} <main>")),
            ("&pt", &format!("(struct point *) {pt:#x}")),
            (
                "&arr",
                &format!("(int (*)[3]) {:#x}", f.eval("&arr").raw_u64()),
            ),
            ("&global_int", "(int *) 0x555555558010 <global_int>"),
            ("ip + 1", &format!("(int *) {:#x}", ip + 4)),
            ("(struct point *)ip", &format!("(struct point *) {ip:#x}")),
            (
                "$pc",
                &format!("(void (*)()) {:#x} <main+1046>", MAIN + 1046),
            ),
            ("$sp", &format!("(void *) {STACK:#x}")),
            ("$rax", "1"),
            (
                "nd",
                &format!("{{<text variable, no debug info>}} {ND:#x} <nd>"),
            ),
            (
                "&nd",
                &format!("(<text variable, no debug info> *) {ND:#x} <nd>"),
            ),
            (
                "*nd",
                &format!("{{<text variable, no debug info>}} {ND:#x} <nd>"),
            ),
            (
                "nd + 1",
                &format!("(<text variable, no debug info> *) {:#x} <nd+1>", ND + 1),
            ),
            (
                "square + 1",
                &format!("(int (*)(int)) {:#x} <square+1>", SQUARE + 1),
            ),
            ("$eflags", "[ PF ZF IF ]"),
        ],
    );
}

#[test]
fn arrays_and_strings() {
    let f = Fake::c();
    check(
        &f,
        &[
            ("arr", "{1, 2, 3}"),
            ("hi", "\"hi\", '\\000' <repeats 17 times>"),
            ("abc", "\"abc\""),
            ("pts", "{{x = 1, y = 2}, {x = 3, y = 4}}"),
            ("m", "{{1, 2, 3}, {4, 5, 6}}"),
            ("rep", "{1 <repeats 11 times>, 2}"),
            ("zeros", "{0 <repeats 16 times>}"),
            ("\"hi\"", "\"hi\""),
        ],
    );
    // 200 elements, then `...`, right after the last one.
    let big = f.print("big");
    let expected: Vec<String> = (0..200)
        .map(|k| if k % 7 == 0 { "0" } else { "1" }.to_string())
        .collect();
    assert_eq!(big, format!("{{{}...}}", expected.join(", ")));
}

#[test]
fn structs_unions_enums_bitfields() {
    let f = Fake::c();
    let pt = f.eval("&pt").raw_u64();
    check(
        &f,
        &[
            ("pt", "{x = 1, y = 2}"),
            ("pt2", "{x = 3, y = 4}"),
            (
                "in",
                &format!("{{name = \"bob\\000\\000\\000\\000\", vals = {{7, 8, 9}}, p = {pt:#x}}}"),
            ),
            ("un", "{i = 1069547520, f = 1.5}"),
            ("col", "GREEN"),
            ("col2", "3"),
            ("fl", "(FA | FC)"),
            ("fl2", "(unknown: 0x8)"),
            ("fl3", "0"),
            ("bf", "{a = 5, b = -3, c = 1}"),
            ("in.p->y", "2"),
            ("in.p", &format!("(struct point *) {pt:#x}")),
        ],
    );
}

#[test]
fn print_formats() {
    let f = Fake::c();
    let cases = [
        ('x', "arr", "{0x1, 0x2, 0x3}"),
        ('x', "pt", "{x = 0x1, y = 0x2}"),
        ('x', "i", "0xfffffff9"),
        ('d', "ui", "-294967296"),
        ('u', "i", "4294967289"),
        ('o', "255", "0377"),
        ('o', "0", "0"),
        ('t', "255", "11111111"),
        ('t', "0", "0"),
        ('c', "65", "65 'A'"),
        ('c', "arr", "{1 '\\001', 2 '\\002', 3 '\\003'}"),
        ('x', "c", "0x61"),
        ('d', "c", "97"),
        ('x', "-1", "0xffffffff"),
        ('x', "1.5", "0x3ff8000000000000"),
        ('f', "3", "4.20389539e-45"),
        ('z', "5", "0x00000005"),
        ('x', "b", "0x1"),
        ('x', "vp", "0x0"),
        ('a', "0x401000", "0x401000"),
        ('x', "nd", "0x55"),
    ];
    for (fmt, expr, want) in cases {
        assert_eq!(f.print_fmt(fmt, expr), want, "print/{fmt} {expr}");
    }
    // A struct with a string, a function pointer, nested struct, double and bool, under /x.
    let a = format!("{SQUARE:#x}");
    assert_eq!(f.print_fmt('a', &a), format!("{SQUARE:#x} <square>"));
}

#[test]
fn history() {
    let f = Fake::c();
    let h = vec![f.eval("sc"), f.eval("1"), f.eval("s")];
    assert_eq!(f.print_with("$", None, &h), "-300");
    assert_eq!(f.print_with("$1", None, &h), "-5 '\\373'");
    assert_eq!(f.print_with("$$2", None, &h), "-5 '\\373'");
    assert_eq!(f.print_with("$$", None, &h), "1");
    assert_eq!(f.print_with("$3 + 1", None, &h), "-299");
    assert_eq!(
        f.print_with("$9999", None, &h),
        "History has not yet reached $9999."
    );
    assert_eq!(f.print_with("$", None, &[]), "void");
    assert_eq!(f.print("$nonexistent"), "void");
}

#[test]
fn unavailable_values() {
    let f = Fake::c();
    assert_eq!(f.print("gone"), "<optimized out>");
    assert_eq!(f.print("inreg"), "77");
    assert_eq!(
        f.print("&inreg"),
        "Address requested for identifier which is in register"
    );
}

#[test]
fn long_strings_stop_at_the_element_limit() {
    use hindsight_symbols::expr::Place;
    use hindsight_symbols::types::Type;
    let mut f = Fake::c();
    let char300 = f.table.add(Type::Array {
        elem: f.types.char,
        count: Some(300),
    });
    let base = 0x7fff_0000_0000u64;
    let mut a = vec![b'a'; 299];
    a.push(0);
    let mix: Vec<u8> = (0..299).map(|k| b'a' + (k % 3) as u8).chain([0]).collect();
    for (i, (name, bytes)) in [("z", vec![0u8; 300]), ("a", a), ("mix", mix)]
        .into_iter()
        .enumerate()
    {
        let addr = base + 0x1000 * i as u64;
        f.map(addr, bytes);
        f.vars.insert(name.into(), (char300, Place::Memory(addr)));
    }
    let abc200: String = "abc".repeat(67)[..200].to_string();
    assert_eq!(f.print("z"), "'\\000' <repeats 299 times>");
    assert_eq!(f.print("a"), "'a' <repeats 299 times>");
    assert_eq!(f.print("mix"), format!("\"{abc200}\"..."));
    // Through a `char *`, gdb reads 200 characters.
    assert_eq!(
        f.print("(char *)&a"),
        format!("{:#x} 'a' <repeats 200 times>...", base + 0x1000)
    );
    assert_eq!(
        f.print("(char *)&mix"),
        format!("{:#x} \"{abc200}\"...", base + 0x2000)
    );
    assert_eq!(
        hindsight_symbols::format::format_examine(&f, base + 0x1000, "s").unwrap(),
        format!("{:#x}:\t'a' <repeats 200 times>...\n", base + 0x1000)
    );
    assert_eq!(f.print_fmt('x', "z"), "{0x0 <repeats 300 times>}");
}

#[test]
fn cpp_references() {
    use hindsight_symbols::expr::Place;
    use hindsight_symbols::types::{AggregateKind, Member, Type};
    let mut f = Fake::c();
    let int_ref = f.table.add(Type::Pointer {
        pointee: Some(f.types.int),
        name: None,
        is_reference: true,
        rvalue: false,
    });
    let p = f.table.add(Type::Struct {
        name: Some("P".into()),
        kind: AggregateKind::Class,
        size: 16,
        members: vec![
            Member {
                name: Some("x".into()),
                ty: f.types.int,
                offset: 0,
                bits: None,
                ..Default::default()
            },
            Member {
                name: Some("r".into()),
                ty: int_ref,
                offset: 8,
                bits: None,
                ..Default::default()
            },
        ],
        info: Default::default(),
    });
    let v = 0x7fff_0000_0000u64;
    f.map(v, 5i32.to_le_bytes().to_vec());
    f.map(v + 0x10, v.to_le_bytes().to_vec());
    let mut pb = 1i64.to_le_bytes().to_vec();
    pb.extend(v.to_le_bytes());
    f.map(v + 0x20, pb);
    f.vars
        .insert("r".into(), (int_ref, Place::Memory(v + 0x10)));
    f.vars.insert("p".into(), (p, Place::Memory(v + 0x20)));
    assert_eq!(f.print("r"), format!("(int &) @{v:#x}: 5"));
    assert_eq!(f.print("p"), format!("{{x = 1, r = @{v:#x}}}"));
    assert_eq!(f.print("r + 1"), "6");
    assert_eq!(f.print("&r"), format!("(int *) {v:#x}"));
    assert_eq!(f.print("p.r"), format!("(int &) @{v:#x}: 5"));
    assert_eq!(f.print_fmt('x', "r"), format!("(int &) @{v:#x}: 0x5"));
}

#[test]
fn malformed_cyclic_types_do_not_hang_or_crash() {
    use hindsight_symbols::expr::Place;
    use hindsight_symbols::types::{AggregateKind, Member, Qualifier, Type};
    let mut f = Fake::c();
    // A struct that contains itself by value, a pointer to itself, a const of itself.
    let s = f.table.add(Type::Unknown);
    f.table.set(
        s,
        Type::Struct {
            name: Some("loop".into()),
            kind: AggregateKind::Struct,
            size: 8,
            members: vec![Member {
                name: Some("me".into()),
                ty: s,
                offset: 0,
                bits: None,
                ..Default::default()
            }],
            info: Default::default(),
        },
    );
    let p = f.table.add(Type::Unknown);
    f.table.set(
        p,
        Type::Pointer {
            pointee: Some(p),
            name: None,
            is_reference: false,
            rvalue: false,
        },
    );
    let q = f.table.add(Type::Unknown);
    f.table.set(
        q,
        Type::Qualified {
            qualifier: Qualifier::Const,
            target: Some(q),
        },
    );
    let addr = 0x7fff_0000_0000u64;
    f.map(addr, vec![0; 8]);
    f.vars.insert("s".into(), (s, Place::Memory(addr)));
    f.vars.insert("p".into(), (p, Place::Memory(addr)));
    f.vars.insert("q".into(), (q, Place::Memory(addr)));
    assert!(f.print("s").starts_with("{me = {me = "));
    assert!(f.print("p").contains("0x0"));
    let _ = f.print("q");
    let _ = f.print("*p");
    let _ = f.print("&q");
}
