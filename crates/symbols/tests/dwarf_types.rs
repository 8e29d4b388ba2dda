//! DWARF types converted into the owned type model, found by the names users write.

mod dwarf_common;

use dwarf_common::{compile_c, compile_rust};
use hindsight_symbols::types::{AggregateKind, Encoding, Qualifier, Type, TypeId, TypeTable};
use hindsight_symbols::{Program, TypeRef};

const TYPES_C: &str = r#"
struct point { int x; int y; };
typedef struct point point_t;
struct node { int value; struct node *next; };
union number { int i; float f; };
enum color { RED, GREEN = 5, BLUE, NEGATIVE = -2 };
struct flags { unsigned a : 3; unsigned b : 5; int c; };
typedef int (*binop)(int, int);
struct shapes {
    int grid[2][3];
    const char *label;
    volatile long counter;
    binop op;
    union { short s; char c; } anon;
    double ratio;
    unsigned char bytes[4];
    _Bool ok;
};

int add(int a, int b) { return a + b; }

point_t origin;
struct node list;
union number num;
enum color shade = BLUE;
struct flags fl;
struct shapes sh;

int main(void) { sh.op = add; return origin.x + list.value + num.i + shade + fl.c; }
"#;

fn table(p: &Program, t: TypeRef) -> &TypeTable {
    p.types(t.module)
}

/// A member as (name, type, byte offset, bit field).
type MemberRow = (Option<String>, TypeId, u64, Option<(u64, u64)>);

fn members(p: &Program, t: TypeRef) -> Vec<MemberRow> {
    match table(p, t).get(t.id) {
        Type::Struct { members, .. } => members
            .iter()
            .map(|m| (m.name.clone(), m.ty, m.offset, m.bits))
            .collect(),
        other => panic!("not a struct: {other:?}"),
    }
}

fn check_c_types(flags: &[&str]) {
    let prog = compile_c("types.c", TYPES_C, flags);
    let mut p = Program::new();
    p.load_module(&prog, 0).expect("load");

    let int = p.lookup_type("int").expect("int");
    assert_eq!(
        table(&p, int).get(int.id),
        &Type::Base {
            name: "int".into(),
            size: 4,
            encoding: Encoding::Signed
        }
    );
    let point = p.lookup_type("struct point").expect("struct point");
    // Extra blanks are no different name.
    assert_eq!(p.lookup_type("struct   point"), Some(point));
    match table(&p, point).get(point.id) {
        Type::Struct {
            name, kind, size, ..
        } => {
            assert_eq!(name.as_deref(), Some("point"));
            assert_eq!((*kind, *size), (AggregateKind::Struct, 8));
        }
        other => panic!("{other:?}"),
    }
    let m = members(&p, point);
    assert_eq!(m.len(), 2);
    assert_eq!((m[0].0.as_deref(), m[0].2), (Some("x"), 0));
    assert_eq!((m[1].0.as_deref(), m[1].2), (Some("y"), 4));
    assert_eq!(
        table(&p, point).get(m[0].1),
        table(&p, int).get(int.id),
        "members are ints"
    );

    // The typedef names the struct.
    let point_t = p.lookup_type("point_t").expect("point_t");
    match table(&p, point_t).get(point_t.id) {
        Type::Typedef { name, target } => {
            assert_eq!(name, "point_t");
            let target = target.expect("target");
            assert_eq!(table(&p, point_t).strip(target), Some(point.id));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(table(&p, point_t).size_of(point_t.id), Some(8));

    // A self-referential struct terminates and points to itself.
    let node = p.lookup_type("struct node").expect("struct node");
    let m = members(&p, node);
    assert_eq!(m[1].0.as_deref(), Some("next"));
    assert_eq!(m[1].2, 8);
    match table(&p, node).get(m[1].1) {
        Type::Pointer {
            pointee,
            is_reference,
            ..
        } => {
            assert_eq!(*pointee, Some(node.id));
            assert!(!is_reference);
        }
        other => panic!("{other:?}"),
    }

    let number = p.lookup_type("union number").expect("union number");
    assert!(matches!(
        table(&p, number).get(number.id),
        Type::Struct { kind: AggregateKind::Union, size: 4, members, .. } if members.len() == 2
    ));
    assert!(p.lookup_type("struct number").is_none());

    let color = p.lookup_type("enum color").expect("enum color");
    match table(&p, color).get(color.id) {
        Type::Enum {
            name,
            size,
            signed,
            values,
            ..
        } => {
            assert_eq!(name.as_deref(), Some("color"));
            assert_eq!(*size, 4);
            assert!(*signed);
            let expected = [("RED", 0), ("GREEN", 5), ("BLUE", 6), ("NEGATIVE", -2)];
            let got: Vec<(&str, i64)> = values.iter().map(|(n, v)| (n.as_str(), *v)).collect();
            assert_eq!(got, expected);
        }
        other => panic!("{other:?}"),
    }

    // Bit fields: (bit offset, bit size) within the storage unit.
    let fl = p.lookup_type("struct flags").expect("struct flags");
    let m = members(&p, fl);
    assert_eq!(m[0].3.map(|b| b.1), Some(3));
    assert_eq!(m[1].3.map(|b| b.1), Some(5));
    assert_eq!(m[0].2 * 8 + m[0].3.unwrap().0, 0);
    assert_eq!(m[1].2 * 8 + m[1].3.unwrap().0, 3);
    assert_eq!((m[2].2, m[2].3), (4, None));

    // Arrays, qualifiers, function pointers, anonymous unions.
    let sh = p.lookup_type("struct shapes").expect("struct shapes");
    let t = table(&p, sh);
    let m = members(&p, sh);
    let by_name = |n: &str| m.iter().find(|x| x.0.as_deref() == Some(n)).expect(n);
    let grid = by_name("grid").1;
    match t.get(grid) {
        Type::Array { elem, count } => {
            assert_eq!(*count, Some(2));
            assert!(matches!(t.get(*elem), Type::Array { count: Some(3), .. }));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(t.size_of(grid), Some(24));
    match t.get(by_name("label").1) {
        Type::Pointer {
            pointee: Some(q), ..
        } => assert!(matches!(
            t.get(*q),
            Type::Qualified {
                qualifier: Qualifier::Const,
                ..
            }
        )),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        t.get(by_name("counter").1),
        Type::Qualified {
            qualifier: Qualifier::Volatile,
            ..
        }
    ));
    let op = t.strip(by_name("op").1).expect("op");
    match t.get(op) {
        Type::Pointer {
            pointee: Some(f), ..
        } => match t.get(*f) {
            Type::Function { ret, params } => {
                assert_eq!(params.len(), 2);
                assert!(
                    matches!(t.get(ret.expect("ret")), Type::Base { name, .. } if name == "int")
                );
            }
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        t.get(by_name("anon").1),
        Type::Struct {
            name: None,
            kind: AggregateKind::Union,
            size: 2,
            ..
        }
    ));
    assert!(matches!(
        t.get(by_name("bytes").1),
        Type::Array { count: Some(4), elem } if matches!(t.get(*elem), Type::Base { encoding: Encoding::UnsignedChar, .. })
    ));
    assert!(matches!(
        t.get(by_name("ok").1),
        Type::Base {
            encoding: Encoding::Bool,
            size: 1,
            ..
        }
    ));
    assert!(matches!(
        t.get(by_name("ratio").1),
        Type::Base {
            encoding: Encoding::Float,
            size: 8,
            ..
        }
    ));
    // 24 + label 8 + counter 8 + op 8 + anon 2 (+6) + ratio 8 + bytes 4 + ok 1 (+3).
    assert_eq!(t.size_of(sh.id), Some(72));

    for name in ["char", "double", "float", "binop", "_Bool"] {
        assert!(p.lookup_type(name).is_some(), "{name}");
    }
    assert!(p.lookup_type("struct nosuch").is_none());
    assert!(p.lookup_type("nosuch_t").is_none());

    // Function types, for `print FUNCTION`.
    let add = p.lookup_functions("add").remove(0);
    let ft = add.fn_type.expect("fn_type");
    assert!(matches!(table(&p, ft).get(ft.id), Type::Function { params, .. } if params.len() == 2));
}

#[test]
fn c_types_dwarf5() {
    check_c_types(&["-g", "-O0", "-no-pie"]);
}

#[test]
fn c_types_dwarf4() {
    check_c_types(&["-gdwarf-4", "-O0", "-no-pie"]);
}

const RUST_SRC: &str = r#"
pub struct Point {
    pub x: i32,
    pub y: i64,
}

pub static ORIGIN: Point = Point { x: 1, y: 2 };

#[inline(never)]
fn norm(p: &Point) -> i64 {
    let s = "text";
    p.x as i64 + p.y + s.len() as i64
}

fn main() {
    println!("{}", norm(&ORIGIN));
}
"#;

#[test]
fn rust_types() {
    let prog = compile_rust("hello.rs", RUST_SRC);
    let mut p = Program::new();
    p.load_module(&prog, 0x5555_5555_4000).expect("load");
    let point = p.lookup_type("hello::Point").expect("hello::Point");
    assert_eq!(p.lookup_type("Point"), Some(point));
    let t = table(&p, point);
    match t.get(point.id) {
        Type::Struct { name, size, .. } => {
            assert_eq!(name.as_deref(), Some("hello::Point"));
            assert_eq!(*size, 16);
        }
        other => panic!("{other:?}"),
    }
    let m = members(&p, point);
    let names: Vec<_> = m.iter().map(|x| x.0.as_deref().unwrap_or("")).collect();
    // rustc may reorder fields in memory; the names and types are what matter.
    assert!(names.contains(&"x") && names.contains(&"y"), "{names:?}");
    for (name, ty, _, _) in &m {
        let want = if name.as_deref() == Some("x") {
            "i32"
        } else {
            "i64"
        };
        assert!(
            matches!(t.get(*ty), Type::Base { name, encoding: Encoding::Signed, .. } if name == want)
        );
    }
    // Rust's primitive types keep their names; &str is the struct it is.
    for name in ["i32", "i64", "u8", "usize"] {
        let r = p.lookup_type(name).unwrap_or_else(|| panic!("{name}"));
        assert!(matches!(table(&p, r).get(r.id), Type::Base { name: n, .. } if n == name));
    }
    let u8t = p.lookup_type("u8").unwrap();
    assert!(matches!(
        table(&p, u8t).get(u8t.id),
        Type::Base {
            encoding: Encoding::Unsigned,
            ..
        }
    ));
    let s = p.lookup_type("&str").expect("&str");
    match table(&p, s).get(s.id) {
        Type::Struct { name, members, .. } => {
            assert_eq!(name.as_deref(), Some("&str"));
            let names: Vec<_> = members.iter().filter_map(|m| m.name.as_deref()).collect();
            assert_eq!(names, ["data_ptr", "length"]);
        }
        other => panic!("{other:?}"),
    }
    // The global by its path.
    let origin = p
        .lookup_variable("hello::ORIGIN", None)
        .expect("hello::ORIGIN");
    assert_eq!(origin.ty.module, point.module);
    assert_eq!(table(&p, origin.ty).strip(origin.ty.id), Some(point.id));
    // A reference parameter keeps its Rust name.
    let norm = p.lookup_functions("norm").remove(0);
    let ft = norm.fn_type.expect("fn type");
    match table(&p, ft).get(ft.id) {
        Type::Function { params, .. } => match table(&p, ft).get(params[0]) {
            Type::Pointer { name, pointee, .. } => {
                assert_eq!(name.as_deref(), Some("&hello::Point"));
                assert_eq!(*pointee, Some(point.id));
            }
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}
