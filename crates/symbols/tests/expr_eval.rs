//! Evaluation of C expressions against the fake program: arithmetic and C's conversions,
//! pointers, members, casts, assignment and gdb's error messages (all checked with gdb 13).

mod expr_common;

use expr_common::Fake;
use hindsight_symbols::expr::{self, value_is_true};

fn check(f: &Fake, cases: &[(&str, &str)]) {
    for (expr, want) in cases {
        assert_eq!(f.print(expr), *want, "print {expr}");
    }
}

#[test]
fn arithmetic_follows_c() {
    let f = Fake::c();
    check(
        &f,
        &[
            ("1+2", "3"),
            ("10/3", "3"),
            ("-7/2", "-3"),
            ("-7%3", "-1"),
            ("1u-2", "4294967295"),
            ("-1 < 1u", "0"),
            ("1 == 1", "1"),
            ("3 > 2 ? 10 : 20", "10"),
            ("!i", "0"),
            ("!0", "1"),
            ("~0", "-1"),
            ("1 << 40", "0"),
            ("(long)1 << 40", "1099511627776"),
            ("2147483647 + 1", "-2147483648"),
            ("4294967295", "4294967295"),
            ("4294967296", "4294967296"),
            ("-2147483648", "-2147483648"),
            ("0xffffffff", "4294967295"),
            ("0x10", "16"),
            ("010", "8"),
            ("10l", "10"),
            ("-5u", "4294967291"),
            ("c + 1", "98"),
            ("'A' + 1", "66"),
            ("7 & 3 | 8 ^ 1", "11"),
            ("10 % 3 * 2", "2"),
            ("(short)-1", "-1"),
            ("(unsigned short)-1", "65535"),
            ("1.5 + 1", "2.5"),
            ("2.0 == 2", "1"),
            ("5 > 3 == 1", "1"),
            ("pt.x + pt.y * 2", "5"),
            ("(pt.x > 0) && (pt.y < 0)", "0"),
            ("-pt.y", "-2"),
            ("ui + 1", "4000000001"),
            ("uc + uc", "400"),
            ("s * 2", "-600"),
            ("ul + 1", "0"),
            ("sizeof(int)", "4"),
            ("sizeof(pt)", "8"),
            ("sizeof arr", "12"),
            ("sizeof(struct point)", "8"),
            ("sizeof(point_t)", "8"),
            ("sizeof(long)", "8"),
        ],
    );
}

#[test]
fn pointers_arrays_members() {
    let f = Fake::c();
    check(
        &f,
        &[
            ("*ip", "-7"),
            ("arr[1]", "2"),
            ("*arr", "1"),
            ("*(arr+2)", "3"),
            ("&arr[2] - &arr[0]", "2"),
            ("ip == &i", "1"),
            ("ip != 0", "1"),
            ("vp == 0", "1"),
            ("pt.x", "1"),
            ("pt->x", "1"),
            ("(&pt)->y", "2"),
            ("(&pt).y", "2"),
            ("in.vals[2]", "9"),
            ("in.name[0]", "98 'b'"),
            ("*in.p", "{x = 1, y = 2}"),
            ("pts[1].y", "4"),
            ("m[1][2]", "6"),
            ("str[1]", "101 'e'"),
            ("*str", "104 'h'"),
            ("bf.b", "-3"),
            ("un.f", "1.5"),
            ("col == 5", "1"),
            ("global_int * 2", "84"),
            ("*&pt", "{x = 1, y = 2}"),
            ("(char)i", "-7 '\\371'"),
            ("*arr@2", "{1, 2}"),
            ("arr[1]@1+1", "{2, 3}"),
            ("pt.x@2", "{1, 2}"),
            ("pts[0]@2", "{{x = 1, y = 2}, {x = 3, y = 4}}"),
        ],
    );
}

#[test]
fn errors_are_worded_as_gdb_words_them() {
    let f = Fake::c();
    check(
        &f,
        &[
            ("10/0", "Division by zero"),
            ("10%0", "Division by zero"),
            ("nosuch", "No symbol \"nosuch\" in current context."),
            ("1 +", "A syntax error in expression, near `'."),
            ("1 ? 2", "A syntax error in expression, near `'."),
            (")", "A syntax error in expression, near `)'."),
            ("pt.", "A syntax error in expression, near `'."),
            ("arr[", "A syntax error in expression, near `'."),
            ("1 2", "A syntax error in expression, near `2'."),
            ("pt.z", "There is no member named z."),
            (
                "pt.x.y",
                "Attempt to extract a component of a value that is not a structure.",
            ),
            ("*i", "Cannot access memory at address 0xfffffffffffffff9"),
            ("*vp", "Attempt to take contents of a non-pointer value."),
            ("*pt", "Attempt to take contents of a non-pointer value."),
            (
                "&5",
                "Attempt to take address of value not located in memory.",
            ),
            ("5 = 3", "Left operand of assignment is not an lvalue."),
            ("(struct nosuch *)0", "No struct type named nosuch."),
            ("(foo)1", "No symbol \"foo\" in current context."),
            ("square(2)", "calling functions is not supported"),
            ("*(int *)0", "Cannot access memory at address 0x0"),
            ("1@2", "Only values in memory can be extended with '@'."),
            ("i@0", "Invalid number 0 of repetitions."),
        ],
    );
}

#[test]
fn assignment_writes_memory_and_returns_the_new_value() {
    let f = Fake::c();
    assert_eq!(f.print("i = 5"), "5");
    assert_eq!(f.print("i"), "5");
    assert_eq!(f.print("(char)i"), "5 '\\005'");
    assert_eq!(f.print("pt.y = 40 + 2"), "42");
    assert_eq!(f.print("pt"), "{x = 1, y = 42}");
    assert_eq!(f.print("d = 1"), "1");
    assert_eq!(f.print("d / 4"), "0.25");
    assert_eq!(f.print("arr[2] = -1"), "-1");
    assert_eq!(f.print("arr"), "{1, 2, -1}");
}

#[test]
fn assignment_without_write_support_fails() {
    let mut f = Fake::c();
    f.writable = false;
    let addr = f.eval("&i").raw_u64();
    assert_eq!(
        f.print("i = 1"),
        format!("Cannot access memory at address {addr:#x}")
    );
}

#[test]
fn values_know_their_address_and_size() {
    let f = Fake::c();
    let v = f.eval("pt.y");
    let base = f.eval("&pt").raw_u64();
    assert_eq!(v.address(), Some(base + 4));
    assert_eq!(v.size(), 4);
    assert_eq!(f.eval("arr").size(), 12);
    assert_eq!(f.eval("in").size(), 32);
    assert_eq!(f.eval("1 + 1").address(), None);
    assert_eq!(f.eval("*ip").address(), Some(f.eval("ip").raw_u64()));
    assert_eq!(f.eval("ip").as_u64(), Ok(f.eval("&i").raw_u64()));
    assert_eq!(f.eval("-1").as_u64(), Ok(u64::MAX));
    assert!(f.eval("pt").as_u64().is_err());
}

#[test]
fn conditions() {
    let f = Fake::c();
    let truth = |t: &str| value_is_true(&f.eval(t)).expect("scalar");
    assert!(truth("i < 0"));
    assert!(!truth("i > 0"));
    assert!(truth("i == -7 && pt.x == 1"));
    assert!(truth("0 || ip"));
    assert!(!truth("vp"));
    assert!(truth("d"));
    assert!(!truth("0.0"));
    assert!(truth("str"));
    assert!(value_is_true(&f.eval("pt")).is_err());
    // `&&` short-circuits: the right side is never read.
    assert!(!truth("0 && *(int *)0"));
}

#[test]
fn syntax_is_checked_without_a_context() {
    assert!(expr::parse("a->b[3].c + (int)*p").is_ok());
    assert!(expr::parse("x = y ? 1 : 2").is_ok());
    assert!(expr::parse("(").is_err());
}
