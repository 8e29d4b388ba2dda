//! `x/NFU` rows, in the shapes gdb 13 prints them for the same bytes.

mod expr_common;

use expr_common::{Fake, MAIN, SQUARE};
use hindsight_symbols::format::format_examine;

const ARR: u64 = 0x7fff_ffff_f5f0;
const BYTES: u64 = 0x7fff_ffff_f5e0;
const STR: u64 = 0x5555_5555_a008;

fn fake() -> Fake {
    let f = Fake::c();
    f.map(
        BYTES,
        vec![
            1, 2, 3, 4, 250, 251, 252, 253, 10, 0, 0, 0, 255, 255, 255, 255,
        ],
    );
    f.map(
        ARR,
        [1i32, -2, 300, 4]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect(),
    );
    f.map(STR, b"yo\0\0".to_vec());
    f.map(MAIN, vec![0x55, 0x48, 0x89, 0xe5, 0x48, 0x81, 0xec, 0x88]);
    f.map(
        0x7fff_ffff_f658,
        [0x7_0000_0007u64, SQUARE]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect(),
    );
    f.map(
        0x7fff_ffff_f6c8,
        [2.5f64, 0.0].iter().flat_map(|v| v.to_le_bytes()).collect(),
    );
    f
}

fn x(f: &Fake, addr: u64, fmt: &str) -> String {
    format_examine(f, addr, fmt).unwrap_or_else(|e| e.to_string())
}

#[test]
fn words_halves_giants_bytes() {
    let f = fake();
    assert_eq!(x(&f, ARR, "4dw"), "0x7ffffffff5f0:\t1\t-2\t300\t4\n");
    assert_eq!(
        x(&f, ARR, "4xw"),
        "0x7ffffffff5f0:\t0x00000001\t0xfffffffe\t0x0000012c\t0x00000004\n"
    );
    assert_eq!(
        x(&f, ARR, "3zw"),
        "0x7ffffffff5f0:\t0x00000001\t0xfffffffe\t0x0000012c\n"
    );
    // The third giant is unmapped: gdb reports it in its place.
    assert_eq!(
        x(&f, ARR, "3xg"),
        "0x7ffffffff5f0:\t0xfffffffe00000001\t0x000000040000012c\n0x7ffffffff600:\tCannot access memory at address 0x7ffffffff600"
    );
    assert_eq!(
        x(&f, ARR + 8, "3xw"),
        "0x7ffffffff5f8:\t0x0000012c\t0x00000004\tCannot access memory at address 0x7ffffffff600"
    );
    assert_eq!(
        x(&f, ARR, "2xg"),
        "0x7ffffffff5f0:\t0xfffffffe00000001\t0x000000040000012c\n"
    );
    assert_eq!(
        x(&f, ARR, "2dg"),
        "0x7ffffffff5f0:\t-8589934591\t17179869484\n"
    );
    assert_eq!(x(&f, ARR, "3uh"), "0x7ffffffff5f0:\t1\t0\t65534\n");
    assert_eq!(
        x(&f, ARR, "3xh"),
        "0x7ffffffff5f0:\t0x0001\t0x0000\t0xfffe\n"
    );
    assert_eq!(x(&f, ARR, "2dh"), "0x7ffffffff5f0:\t1\t0\n");
    assert_eq!(
        x(&f, BYTES, "8xb"),
        "0x7ffffffff5e0:\t0x01\t0x02\t0x03\t0x04\t0xfa\t0xfb\t0xfc\t0xfd\n"
    );
    // Eight bytes a row.
    assert_eq!(
        x(&f, BYTES, "9db"),
        "0x7ffffffff5e0:\t1\t2\t3\t4\t-6\t-5\t-4\t-3\n0x7ffffffff5e8:\t10\n"
    );
    assert_eq!(x(&f, BYTES, "2ob"), "0x7ffffffff5e0:\t01\t02\n");
    assert_eq!(x(&f, BYTES, "2tb"), "0x7ffffffff5e0:\t00000001\t00000010\n");
    // Default: one word in hex.
    assert_eq!(x(&f, ARR, ""), "0x7ffffffff5f0:\t0x00000001\n");
    // Eight halves a row.
    assert_eq!(x(&f, BYTES, "9xh").lines().count(), 2);
}

#[test]
fn strings_chars_addresses_floats() {
    let f = fake();
    assert_eq!(x(&f, STR, "s"), "0x55555555a008:\t\"yo\"\n");
    assert_eq!(
        x(&f, STR, "2s"),
        "0x55555555a008:\t\"yo\"\n0x55555555a00b:\t\"\"\n"
    );
    assert_eq!(
        x(&f, STR, "4c"),
        "0x55555555a008:\t121 'y'\t111 'o'\t0 '\\000'\t0 '\\000'\n"
    );
    assert_eq!(
        x(&f, 0x7fff_ffff_f658, "2a"),
        format!("0x7ffffffff658:\t0x700000007\t{SQUARE:#x} <square>\n")
    );
    assert_eq!(x(&f, 0x7fff_ffff_f6c8, "2fg"), "0x7ffffffff6c8:\t2.5\t0\n");
    assert_eq!(
        x(&f, ARR, "2fw"),
        "0x7ffffffff5f0:\t1.40129846e-45\t-nan(0x7ffffe)\n"
    );
    // Rows are labelled with the symbol when there is one.
    assert_eq!(
        x(&f, MAIN, "2xw"),
        format!("{MAIN:#x} <main>:\t0xe5894855\t0x88ec8148\n")
    );
}

#[test]
fn unreadable_memory() {
    let f = fake();
    assert_eq!(
        x(&f, 0x10, "4xw"),
        "0x10:\tCannot access memory at address 0x10"
    );
    assert_eq!(x(&f, ARR, "q"), "Undefined output format \"q\".");
}
