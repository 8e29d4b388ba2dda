//! A hand-built program for the expression tests: a type table, memory, variables, registers
//! and symbols, laid out like the C program whose gdb output the expected strings come from.

#![allow(dead_code)]
// 3.14 is the value whose gdb output the tests compare with, not an approximation of pi.
#![allow(clippy::approx_constant)]

use std::cell::RefCell;
use std::collections::HashMap;

use hindsight_symbols::expr::{self, EvalContext, Place, TypeHandle};
use hindsight_symbols::format;
use hindsight_symbols::target::AccessError;
use hindsight_symbols::types::{
    AggregateKind, Encoding, Language, Member, Type, TypeId, TypeTable,
};
use hindsight_symbols::value::Value;

/// Ids of the types the fake program declares.
pub struct Types {
    pub int: TypeId,
    pub uint: TypeId,
    pub char: TypeId,
    pub uchar: TypeId,
    pub short: TypeId,
    pub long: TypeId,
    pub ulong: TypeId,
    pub double: TypeId,
    pub float: TypeId,
    pub bool: TypeId,
    pub int_ptr: TypeId,
    pub char_ptr: TypeId,
    pub void_ptr: TypeId,
    pub point: TypeId,
    pub point_ptr: TypeId,
    pub point_t: TypeId,
    pub func: TypeId,
    pub func_ptr: TypeId,
    pub color: TypeId,
    pub flags: TypeId,
    pub bits: TypeId,
    pub un: TypeId,
    pub inner: TypeId,
}

/// The fake stopped program.
pub struct Fake {
    pub table: TypeTable,
    pub types: Types,
    /// Memory regions: start address and bytes.
    pub memory: RefCell<Vec<(u64, Vec<u8>)>>,
    pub vars: HashMap<String, (TypeId, Place)>,
    pub regs: HashMap<String, u64>,
    pub symbols: Vec<(u64, u64, String)>,
    pub language: Language,
    pub writable: bool,
}

pub const STACK: u64 = 0x7fff_ffff_e000;
pub const DATA: u64 = 0x5555_5555_6000;
pub const SQUARE: u64 = 0x5555_5555_5129;
pub const MAIN: u64 = 0x5555_5555_5138;
pub const GLOBAL: u64 = 0x5555_5555_8010;
/// A function without debug information.
pub const ND: u64 = 0x5555_5555_5743;

fn base(t: &mut TypeTable, name: &str, size: u64, encoding: Encoding) -> TypeId {
    t.add(Type::Base {
        name: name.into(),
        size,
        encoding,
    })
}

fn ptr(t: &mut TypeTable, to: Option<TypeId>) -> TypeId {
    t.add(Type::Pointer {
        pointee: to,
        name: None,
        is_reference: false,
        rvalue: false,
    })
}

fn member(name: &str, ty: TypeId, offset: u64) -> Member {
    Member {
        name: Some(name.into()),
        ty,
        offset,
        bits: None,
        ..Default::default()
    }
}

impl Fake {
    /// The C program's state (see the module comment).
    pub fn c() -> Fake {
        let mut t = TypeTable::new();
        let int = base(&mut t, "int", 4, Encoding::Signed);
        let uint = base(&mut t, "unsigned int", 4, Encoding::Unsigned);
        let char = base(&mut t, "char", 1, Encoding::SignedChar);
        let uchar = base(&mut t, "unsigned char", 1, Encoding::UnsignedChar);
        let short = base(&mut t, "short", 2, Encoding::Signed);
        let long = base(&mut t, "long", 8, Encoding::Signed);
        let ulong = base(&mut t, "unsigned long", 8, Encoding::Unsigned);
        let double = base(&mut t, "double", 8, Encoding::Float);
        let float = base(&mut t, "float", 4, Encoding::Float);
        let bool = base(&mut t, "_Bool", 1, Encoding::Bool);
        let int_ptr = ptr(&mut t, Some(int));
        let char_ptr = ptr(&mut t, Some(char));
        let void_ptr = ptr(&mut t, None);
        let point = t.add(Type::Struct {
            name: Some("point".into()),
            kind: AggregateKind::Struct,
            size: 8,
            members: vec![member("x", int, 0), member("y", int, 4)],
            info: Default::default(),
        });
        let point_ptr = ptr(&mut t, Some(point));
        let point_t = t.add(Type::Typedef {
            name: "point_t".into(),
            target: Some(point),
        });
        let func = t.add(Type::Function {
            ret: Some(int),
            params: vec![int],
        });
        let func_ptr = ptr(&mut t, Some(func));
        let color = t.add(Type::Enum {
            name: Some("color".into()),
            size: 4,
            signed: false,
            values: vec![("RED".into(), 0), ("GREEN".into(), 5), ("BLUE".into(), 6)],
            scoped: false,
            cpp: false,
            underlying: None,
        });
        let flags = t.add(Type::Enum {
            name: Some("flags".into()),
            size: 4,
            signed: false,
            values: vec![("FA".into(), 1), ("FB".into(), 2), ("FC".into(), 4)],
            scoped: false,
            cpp: false,
            underlying: None,
        });
        let bits = t.add(Type::Struct {
            name: Some("bits".into()),
            kind: AggregateKind::Struct,
            size: 4,
            members: vec![
                Member {
                    name: Some("a".into()),
                    ty: uint,
                    offset: 0,
                    bits: Some((0, 3)),
                    ..Default::default()
                },
                Member {
                    name: Some("b".into()),
                    ty: int,
                    offset: 0,
                    bits: Some((3, 5)),
                    ..Default::default()
                },
                Member {
                    name: Some("c".into()),
                    ty: uint,
                    offset: 1,
                    bits: Some((0, 1)),
                    ..Default::default()
                },
            ],
            info: Default::default(),
        });
        let un = t.add(Type::Struct {
            name: Some("u".into()),
            kind: AggregateKind::Union,
            size: 4,
            members: vec![member("i", int, 0), member("f", float, 0)],
            info: Default::default(),
        });
        let name8 = t.add(Type::Array {
            elem: char,
            count: Some(8),
        });
        let int3 = t.add(Type::Array {
            elem: int,
            count: Some(3),
        });
        let inner = t.add(Type::Struct {
            name: Some("inner".into()),
            kind: AggregateKind::Struct,
            size: 32,
            members: vec![
                member("name", name8, 0),
                member("vals", int3, 8),
                member("p", point_ptr, 24),
            ],
            info: Default::default(),
        });
        let types = Types {
            int,
            uint,
            char,
            uchar,
            short,
            long,
            ulong,
            double,
            float,
            bool,
            int_ptr,
            char_ptr,
            void_ptr,
            point,
            point_ptr,
            point_t,
            func,
            func_ptr,
            color,
            flags,
            bits,
            un,
            inner,
        };
        let mut f = Fake {
            table: t,
            types,
            memory: RefCell::new(Vec::new()),
            vars: HashMap::new(),
            regs: HashMap::new(),
            symbols: vec![
                (SQUARE, 15, "square".into()),
                (MAIN, 0x500, "main".into()),
                (GLOBAL, 4, "global_int".into()),
                (ND, 16, "nd".into()),
            ],
            language: Language::C,
            writable: true,
        };
        // Strings in .rodata.
        f.map(DATA, b"\0\0\0\0\0\0\0\0hello\0a\"b\n\0yo\0".to_vec());
        let hello = DATA + 8;
        f.map(GLOBAL, 42i32.to_le_bytes().to_vec());
        f.map(ND, vec![0x55, 0x48, 0x89, 0xe5]);
        let int_arr = f.array_type(int, 3);
        let char20 = f.array_type(char, 20);
        let char4 = f.array_type(char, 4);
        let int16 = f.array_type(int, 16);
        let int300 = f.array_type(int, 300);
        let int12 = f.array_type(int, 12);
        let pts = f.array_type(point, 2);
        let row = f.array_type(int, 3);
        let m = f.array_type(row, 2);
        let mut sp = STACK;
        let mut local = |f: &mut Fake, name: &str, ty: TypeId, bytes: Vec<u8>| -> u64 {
            sp += 0x40;
            let a = sp;
            f.map(a, bytes);
            f.vars.insert(name.into(), (ty, Place::Memory(a)));
            a
        };
        let i_addr = local(&mut f, "i", int, (-7i32).to_le_bytes().to_vec());
        local(&mut f, "sc", char, vec![0xfb]);
        local(&mut f, "uc", uchar, vec![200]);
        local(&mut f, "s", short, (-300i16).to_le_bytes().to_vec());
        local(&mut f, "ui", uint, 4_000_000_000u32.to_le_bytes().to_vec());
        local(
            &mut f,
            "l",
            long,
            (-1234567890123i64).to_le_bytes().to_vec(),
        );
        local(&mut f, "ul", ulong, u64::MAX.to_le_bytes().to_vec());
        local(&mut f, "c", char, vec![b'a']);
        local(&mut f, "c0", char, vec![0]);
        local(&mut f, "cn", char, vec![b'\n']);
        local(&mut f, "cq", char, vec![b'\'']);
        local(&mut f, "c200", char, vec![200]);
        local(&mut f, "b", bool, vec![1]);
        local(&mut f, "f", float, 1.5f32.to_le_bytes().to_vec());
        local(&mut f, "f2", float, 3.14f32.to_le_bytes().to_vec());
        local(&mut f, "f4", float, 0.1f32.to_le_bytes().to_vec());
        local(&mut f, "d", double, 3.14f64.to_le_bytes().to_vec());
        local(&mut f, "d4", double, 1e-5f64.to_le_bytes().to_vec());
        local(&mut f, "d5", double, 100f64.to_le_bytes().to_vec());
        local(&mut f, "d8", double, 1e16f64.to_le_bytes().to_vec());
        local(&mut f, "d9", double, (1.0f64 / 3.0).to_le_bytes().to_vec());
        local(&mut f, "ip", int_ptr, i_addr.to_le_bytes().to_vec());
        local(&mut f, "vp", void_ptr, 0u64.to_le_bytes().to_vec());
        local(&mut f, "str", char_ptr, hello.to_le_bytes().to_vec());
        local(&mut f, "qs", char_ptr, (hello + 6).to_le_bytes().to_vec());
        local(&mut f, "fp", func_ptr, SQUARE.to_le_bytes().to_vec());
        local(
            &mut f,
            "arr",
            int_arr,
            [1i32, 2, 3].iter().flat_map(|v| v.to_le_bytes()).collect(),
        );
        let mut hi = b"hi".to_vec();
        hi.resize(20, 0);
        local(&mut f, "hi", char20, hi);
        local(&mut f, "abc", char4, b"abc\0".to_vec());
        let pt = local(
            &mut f,
            "pt",
            point,
            [1i32, 2].iter().flat_map(|v| v.to_le_bytes()).collect(),
        );
        local(
            &mut f,
            "pt2",
            point_t,
            [3i32, 4].iter().flat_map(|v| v.to_le_bytes()).collect(),
        );
        let mut inner_bytes = b"bob\0\0\0\0\0".to_vec();
        inner_bytes.extend([7i32, 8, 9].iter().flat_map(|v| v.to_le_bytes()));
        inner_bytes.extend([0u8; 4]);
        inner_bytes.extend(pt.to_le_bytes());
        local(&mut f, "in", inner, inner_bytes);
        local(&mut f, "un", un, 0x3fc0_0000u32.to_le_bytes().to_vec());
        local(&mut f, "col", color, 5u32.to_le_bytes().to_vec());
        local(&mut f, "col2", color, 3u32.to_le_bytes().to_vec());
        local(&mut f, "fl", flags, 5u32.to_le_bytes().to_vec());
        local(&mut f, "fl2", flags, 8u32.to_le_bytes().to_vec());
        local(&mut f, "fl3", flags, 0u32.to_le_bytes().to_vec());
        // a = 5, b = -3, c = 1 (gcc's layout: a in bits 0-2, b in bits 3-7, c in bit 8).
        let bf: u32 = 5 | ((-3i32 as u32 & 0x1f) << 3) | (1 << 8);
        local(&mut f, "bf", bits, bf.to_le_bytes().to_vec());
        local(
            &mut f,
            "pts",
            pts,
            [1i32, 2, 3, 4]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        );
        local(
            &mut f,
            "m",
            m,
            [1i32, 2, 3, 4, 5, 6]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        );
        let rep: Vec<i32> = vec![1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2];
        local(
            &mut f,
            "rep",
            int12,
            rep.iter().flat_map(|v| v.to_le_bytes()).collect(),
        );
        local(&mut f, "zeros", int16, vec![0; 64]);
        let big: Vec<u8> = (0..300)
            .flat_map(|k| (if k % 7 == 0 { 0i32 } else { 1 }).to_le_bytes())
            .collect();
        local(&mut f, "big", int300, big);
        f.vars
            .insert("global_int".into(), (int, Place::Memory(GLOBAL)));
        f.vars.insert("gone".into(), (int, Place::Unavailable));
        f.vars.insert("inreg".into(), (int, Place::Register(3, 77)));
        f.regs.insert("pc".into(), MAIN + 1046);
        f.regs.insert("rip".into(), MAIN + 1046);
        f.regs.insert("sp".into(), STACK);
        f.regs.insert("rax".into(), 1);
        f.regs.insert("eflags".into(), 0x246);
        f
    }

    fn array_type(&mut self, elem: TypeId, n: u64) -> TypeId {
        self.table.add(Type::Array {
            elem,
            count: Some(n),
        })
    }

    /// Maps `bytes` at `addr`.
    pub fn map(&self, addr: u64, bytes: Vec<u8>) {
        self.memory.borrow_mut().push((addr, bytes));
    }

    /// The handle of one of the table's types.
    pub fn handle(&self, id: TypeId) -> TypeHandle {
        TypeHandle::new(&self.table, id)
    }

    /// `print EXPR` with history: the text after `$N = `, or the error's text.
    pub fn print_with(&self, text: &str, fmt: Option<char>, history: &[Value]) -> String {
        match expr::parse(text).and_then(|e| expr::evaluate(&e, self, history)) {
            Ok(v) => format::format_value(&v, self, fmt),
            Err(e) => e.to_string(),
        }
    }

    /// `print EXPR`.
    pub fn print(&self, text: &str) -> String {
        self.print_with(text, None, &[])
    }

    /// `print/FMT EXPR`.
    pub fn print_fmt(&self, fmt: char, text: &str) -> String {
        self.print_with(text, Some(fmt), &[])
    }

    /// Evaluates to a value.
    pub fn eval(&self, text: &str) -> Value {
        let e = expr::parse(text).expect("parses");
        expr::evaluate(&e, self, &[]).expect("evaluates")
    }
}

impl EvalContext for Fake {
    fn lookup_variable(&self, name: &str) -> Option<(TypeHandle, Place)> {
        let (ty, place) = self.vars.get(name)?;
        Some((self.handle(*ty), place.clone()))
    }

    fn lookup_type(&self, name: &str) -> Option<TypeHandle> {
        let id = match name {
            "struct point" => self.types.point,
            "point_t" => self.types.point_t,
            "enum color" => self.types.color,
            "union u" => self.types.un,
            _ => return None,
        };
        Some(self.handle(id))
    }

    fn read_memory(&self, addr: u64, buf: &mut [u8]) -> Result<(), AccessError> {
        for (start, bytes) in self.memory.borrow().iter() {
            let end = start + bytes.len() as u64;
            if addr >= *start && addr + buf.len() as u64 <= end {
                let off = (addr - start) as usize;
                buf.copy_from_slice(&bytes[off..off + buf.len()]);
                return Ok(());
            }
        }
        Err(AccessError::Memory(addr))
    }

    fn write_memory(&self, addr: u64, data: &[u8]) -> Result<(), AccessError> {
        if !self.writable {
            return Err(AccessError::Memory(addr));
        }
        for (start, bytes) in self.memory.borrow_mut().iter_mut() {
            let end = *start + bytes.len() as u64;
            if addr >= *start && addr + data.len() as u64 <= end {
                let off = (addr - *start) as usize;
                bytes[off..off + data.len()].copy_from_slice(data);
                return Ok(());
            }
        }
        Err(AccessError::Memory(addr))
    }

    fn register(&self, name: &str) -> Option<u64> {
        self.regs.get(name).copied()
    }

    fn symbol_for(&self, addr: u64) -> Option<String> {
        self.symbols
            .iter()
            .find(|(a, len, _)| addr >= *a && addr < a + len)
            .map(|(a, _, n)| {
                if addr == *a {
                    n.clone()
                } else {
                    format!("{n}+{}", addr - a)
                }
            })
    }

    fn lookup_function(&self, name: &str) -> Option<(u64, Option<TypeHandle>)> {
        match name {
            "square" => Some((SQUARE, Some(self.handle(self.types.func)))),
            "main" => {
                let mut t = TypeTable::new();
                let int = t.add(Type::Base {
                    name: "int".into(),
                    size: 4,
                    encoding: Encoding::Signed,
                });
                let f = t.add(Type::Function {
                    ret: Some(int),
                    params: vec![],
                });
                Some((MAIN, Some(TypeHandle::new(&t, f))))
            }
            "nd" => Some((ND, None)),
            _ => None,
        }
    }

    fn language(&self) -> Language {
        self.language
    }
}
