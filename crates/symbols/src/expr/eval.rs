//! Evaluation of expressions with C's rules: integer promotion, the usual arithmetic
//! conversions, pointer arithmetic scaled by the pointee's size.

use super::parser::{Binary, Expr, HistoryRef, TypeName, Unary};
use super::{EvalContext, ExprError, Place, TablesOf};
use crate::types::Type;
use crate::value::{Lval, Shape, Ty, Value};

/// The most bytes one value may hold (a huge array is read in part).
const MAX_VALUE: u64 = 1 << 20;

/// Evaluates `e`; `history` is `$1`, `$2`…
pub fn evaluate(e: &Expr, ctx: &dyn EvalContext, history: &[Value]) -> Result<Value, ExprError> {
    Eval { ctx, history }.eval(e)
}

/// C truth of a scalar value (breakpoint conditions).
pub fn value_is_true(v: &Value) -> Result<bool, ExprError> {
    Ok(v.bytes.iter().any(|b| *b != 0))
}

struct Eval<'a> {
    ctx: &'a dyn EvalContext,
    history: &'a [Value],
}

/// A scalar as the arithmetic sees it.
#[derive(Clone, Copy, Debug)]
enum Num {
    I(i128, u8, bool),
    F(f64),
}

impl Eval<'_> {
    fn t(&self) -> TablesOf<'_> {
        TablesOf(self.ctx)
    }

    fn read(&self, ty: Ty, addr: u64) -> Result<Value, ExprError> {
        let size = ty.size(&self.t()).unwrap_or(0).min(MAX_VALUE);
        let mut bytes = vec![0u8; size as usize];
        self.ctx.read_memory(addr, &mut bytes)?;
        Ok(Value {
            ty,
            bytes,
            lval: Some(Lval::Memory(addr)),
        })
    }

    fn eval(&self, e: &Expr) -> Result<Value, ExprError> {
        match e {
            Expr::Int(v, u, l) => {
                let (size, signed) = if *l || *v > i32::MAX as u64 {
                    (8, !*u && *v <= i64::MAX as u64)
                } else {
                    (4, !*u)
                };
                Ok(Value::int(
                    Ty::Int { size, signed },
                    *v as i128,
                    size as u64,
                ))
            }
            Expr::Float(f) => Ok(Value::from_bytes(Ty::Float(8), f.to_le_bytes().to_vec())),
            Expr::Char(c) => Ok(Value::from_bytes(Ty::Char, vec![*c])),
            Expr::Str(s) => {
                let mut b = s.clone();
                b.push(0);
                let n = b.len() as u64;
                Ok(Value::from_bytes(Ty::ArrayOf(Box::new(Ty::Char), n), b))
            }
            Expr::Name(n) => self.name(n),
            Expr::Register(r) => {
                let v = self
                    .ctx
                    .register(r)
                    .ok_or_else(|| ExprError::Other(format!("Invalid register `{r}'")))?;
                let ty = match r.as_str() {
                    "pc" | "rip" => Ty::Code,
                    "sp" | "fp" | "rsp" | "rbp" => Ty::PointerTo(Box::new(Ty::Void)),
                    "eflags" => Ty::INT,
                    _ if r.starts_with('e') => Ty::INT,
                    _ => Ty::LONG,
                };
                let size = ty.size(&self.t()).unwrap_or(8);
                Ok(Value::int(ty, v as i128, size))
            }
            Expr::History(h) => {
                let idx = match h {
                    HistoryRef::Absolute(n) => n.checked_sub(1),
                    HistoryRef::Relative(n) => self.history.len().checked_sub(1 + n),
                };
                match idx.and_then(|i| self.history.get(i)) {
                    Some(v) => Ok(v.clone()),
                    None if self.history.is_empty() => {
                        Err(ExprError::Other("History is empty.".into()))
                    }
                    None => Err(ExprError::Other(
                        "History has not yet reached that value.".into(),
                    )),
                }
            }
            Expr::Unary(op, x) => self.unary(*op, x),
            Expr::Binary(op, a, b) => {
                if matches!(op, Binary::And | Binary::Or) {
                    let a = value_is_true(&self.eval(a)?)?;
                    let r = match op {
                        Binary::And => a && value_is_true(&self.eval(b)?)?,
                        _ => a || value_is_true(&self.eval(b)?)?,
                    };
                    return Ok(Value::int(Ty::INT, r as i128, 4));
                }
                let a = self.rvalue(self.eval(a)?)?;
                let b = self.rvalue(self.eval(b)?)?;
                self.binary(*op, a, b)
            }
            Expr::Ternary(c, a, b) => {
                if value_is_true(&self.eval(c)?)? {
                    self.eval(a)
                } else {
                    self.eval(b)
                }
            }
            Expr::Cast(t, x) => {
                let ty = self.type_of(t)?;
                let v = self.rvalue(self.eval(x)?)?;
                self.convert(v, &ty)
            }
            Expr::SizeofType(t) => {
                let ty = self.type_of(t)?;
                let n = ty.size(&self.t()).unwrap_or(0);
                Ok(Value::int(Ty::ULONG, n as i128, 8))
            }
            Expr::SizeofExpr(x) => {
                let v = self.eval(x)?;
                let n = v.ty.size(&self.t()).unwrap_or(v.size());
                Ok(Value::int(Ty::ULONG, n as i128, 8))
            }
            Expr::Member(x, m) => {
                let v = self.eval(x)?;
                // gdb lets `.` work through a pointer too.
                let v = match v.ty.shape(&self.t()) {
                    Shape::Pointer(_) => self.deref(v)?,
                    _ => v,
                };
                self.member(v, m)
            }
            Expr::Arrow(x, m) => {
                let v = self.eval(x)?;
                let v = self.deref(v)?;
                self.member(v, m)
            }
            Expr::Index(a, i) => {
                let a = self.eval(a)?;
                let i = self.rvalue(self.eval(i)?)?;
                let Num::I(i, ..) = self.num(&i)? else {
                    return Err(ExprError::Other(
                        "Argument to arithmetic operation not a number or boolean.".into(),
                    ));
                };
                self.index(a, i as i64)
            }
            Expr::Assign(l, r) => {
                let lv = self.eval(l)?;
                let Some(Lval::Memory(addr)) = lv.lval else {
                    return Err(ExprError::Other(
                        "Left operand of assignment is not an lvalue.".into(),
                    ));
                };
                let rv = self.rvalue(self.eval(r)?)?;
                let nv = self.convert(rv, &lv.ty)?;
                self.ctx.write_memory(addr, &nv.bytes)?;
                Ok(Value {
                    lval: Some(Lval::Memory(addr)),
                    ..nv
                })
            }
            Expr::Call(_) => Err(ExprError::Other(
                "Calling functions in the program is not supported.".into(),
            )),
        }
    }

    fn name(&self, n: &str) -> Result<Value, ExprError> {
        if let Some((ty, place)) = self.ctx.lookup_variable(n) {
            return match place {
                Place::Memory(a) => self.read(ty, a),
                Place::Register(r, v) => {
                    let size = ty.size(&self.t()).unwrap_or(8).min(8);
                    Ok(Value {
                        lval: Some(Lval::Register(r)),
                        ..Value::int(ty, v as i128, size)
                    })
                }
                Place::Value(mut b) => {
                    let size = ty.size(&self.t()).unwrap_or(b.len() as u64) as usize;
                    b.resize(size, 0);
                    Ok(Value::from_bytes(ty, b))
                }
                Place::Unavailable => Err(ExprError::Other(format!(
                    "value of {n} has been optimized out"
                ))),
            };
        }
        if let Some((addr, ty)) = self.ctx.lookup_function(n) {
            return Ok(Value {
                ty: ty.unwrap_or(Ty::Code),
                bytes: addr.to_le_bytes().to_vec(),
                lval: Some(Lval::Memory(addr)),
            });
        }
        match n {
            "true" => Ok(Value::from_bytes(Ty::Bool, vec![1])),
            "false" => Ok(Value::from_bytes(Ty::Bool, vec![0])),
            "NULL" | "nullptr" => Ok(Value::int(Ty::PointerTo(Box::new(Ty::Void)), 0, 8)),
            _ => Err(ExprError::NoSymbol(n.to_string())),
        }
    }

    fn type_of(&self, t: &TypeName) -> Result<Ty, ExprError> {
        let base = match t.base.as_str() {
            "int" | "signed" | "signed int" => Ty::INT,
            "unsigned" | "unsigned int" => Ty::Int {
                size: 4,
                signed: false,
            },
            "long" | "long int" | "signed long" | "long long" | "long long int" => Ty::LONG,
            "unsigned long" | "unsigned long int" | "unsigned long long" | "size_t" => Ty::ULONG,
            "short" | "short int" => Ty::Int {
                size: 2,
                signed: true,
            },
            "unsigned short" => Ty::Int {
                size: 2,
                signed: false,
            },
            "char" | "signed char" => Ty::Char,
            "unsigned char" => Ty::Int {
                size: 1,
                signed: false,
            },
            "float" => Ty::Float(4),
            "double" => Ty::Float(8),
            "void" => Ty::Void,
            "_Bool" | "bool" => Ty::Bool,
            name => self.ctx.lookup_type(name).ok_or_else(|| {
                ExprError::NoSymbol(name.trim_start_matches("struct ").to_string())
            })?,
        };
        let mut ty = base;
        for _ in 0..t.pointers {
            ty = Ty::PointerTo(Box::new(ty));
        }
        Ok(ty)
    }

    /// Arrays decay to pointers in arithmetic; functions to code addresses.
    fn rvalue(&self, v: Value) -> Result<Value, ExprError> {
        match v.ty.shape(&self.t()) {
            Shape::Array(elem, _) => match v.lval {
                Some(Lval::Memory(a)) => {
                    Ok(Value::int(Ty::PointerTo(Box::new(elem)), a as i128, 8))
                }
                _ => Ok(v),
            },
            _ => Ok(v),
        }
    }

    fn num(&self, v: &Value) -> Result<Num, ExprError> {
        let size = v.size().clamp(1, 8);
        Ok(match v.ty.shape(&self.t()) {
            Shape::Float(4) => {
                Num::F(f32::from_le_bytes(v.bytes[..4].try_into().map_err(|_| bad())?) as f64)
            }
            Shape::Float(_) => Num::F(f64::from_le_bytes(
                v.bytes
                    .get(..8)
                    .ok_or_else(bad)?
                    .try_into()
                    .map_err(|_| bad())?,
            )),
            Shape::Int { signed: true, .. } | Shape::Char { signed: true, .. } | Shape::Enum(_) => {
                Num::I(v.raw_i64(size) as i128, size as u8, true)
            }
            Shape::Int { .. } | Shape::Char { .. } | Shape::Bool(_) | Shape::Utf(_) => {
                Num::I(v.raw_u64() as i128 & mask(size), size as u8, false)
            }
            Shape::Pointer(_) | Shape::Function => Num::I(v.raw_u64() as i128, 8, false),
            _ => return Err(bad()),
        })
    }

    fn unary(&self, op: Unary, x: &Expr) -> Result<Value, ExprError> {
        let v = self.eval(x)?;
        match op {
            Unary::AddrOf => match v.lval {
                Some(Lval::Memory(a)) => {
                    Ok(Value::int(Ty::PointerTo(Box::new(v.ty)), a as i128, 8))
                }
                _ => Err(ExprError::Other(
                    "Attempt to take address of value not located in memory.".into(),
                )),
            },
            Unary::Deref => self.deref(v),
            Unary::Not => {
                let t = value_is_true(&self.rvalue(v)?)?;
                Ok(Value::int(Ty::INT, (!t) as i128, 4))
            }
            Unary::Neg | Unary::Plus | Unary::BitNot => {
                let v = self.rvalue(v)?;
                match self.num(&v)? {
                    Num::F(f) => {
                        let r = if op == Unary::Neg { -f } else { f };
                        if op == Unary::BitNot {
                            return Err(bad());
                        }
                        Ok(Value::from_bytes(Ty::Float(8), r.to_le_bytes().to_vec()))
                    }
                    Num::I(i, size, signed) => {
                        let (size, signed) = promote(size, signed);
                        let r = match op {
                            Unary::Neg => -i,
                            Unary::BitNot => !i,
                            _ => i,
                        };
                        Ok(Value::int(Ty::Int { size, signed }, r, size as u64))
                    }
                }
            }
        }
    }

    fn deref(&self, v: Value) -> Result<Value, ExprError> {
        match v.ty.shape(&self.t()) {
            Shape::Pointer(p) => {
                if p == Ty::Void || matches!(p.shape(&self.t()), Shape::Void) {
                    return Err(ExprError::Other(
                        "Attempt to take contents of a non-pointer value.".into(),
                    ));
                }
                if matches!(p.shape(&self.t()), Shape::Function) {
                    return Ok(Value {
                        ty: p,
                        bytes: v.bytes.clone(),
                        lval: Some(Lval::Memory(v.raw_u64())),
                    });
                }
                self.read(p, v.raw_u64())
            }
            Shape::Array(elem, _) => match v.lval {
                Some(Lval::Memory(a)) => self.read(elem, a),
                _ => Err(ExprError::Other(
                    "Attempt to take contents of a non-pointer value.".into(),
                )),
            },
            _ => Err(ExprError::Other(
                "Attempt to take contents of a non-pointer value.".into(),
            )),
        }
    }

    fn member(&self, v: Value, m: &str) -> Result<Value, ExprError> {
        let t = self.t();
        let Some((Type::Struct { members, .. }, module, _)) = v.ty.resolve(&t) else {
            return Err(ExprError::Other(
                "Attempt to extract a component of a value that is not a structure.".into(),
            ));
        };
        let (member, base_off) = find_member(&t, module, members, m)
            .ok_or_else(|| ExprError::Other(format!("There is no member named {m}.")))?;
        let mty = Ty::Table {
            module,
            id: member.ty,
        };
        let size = mty.size(&t).unwrap_or(0) as usize;
        let off = (base_off + member.offset) as usize;
        if let Some((bit, bits)) = member.bits.filter(|(b, n)| *n > 0 && *n <= 64 && *b < 1024) {
            let mut raw = 0u128;
            for (i, b) in v.bytes.iter().enumerate().take(16) {
                raw |= (*b as u128) << (8 * i);
            }
            let start = (off as u64 * 8 + bit).min(127);
            let mut x = (raw >> start) & ((1u128 << bits) - 1);
            let signed = matches!(mty.shape(&t), Shape::Int { signed: true, .. });
            if signed && bits > 0 && x >> (bits - 1) & 1 == 1 {
                x |= !((1u128 << bits) - 1);
            }
            return Ok(Value::int(mty, x as i128, size as u64));
        }
        let bytes = v.bytes.get(off..off + size).map(|b| b.to_vec());
        let lval = match v.lval {
            Some(Lval::Memory(a)) => Some(Lval::Memory(a + off as u64)),
            _ => None,
        };
        match (bytes, lval) {
            (Some(bytes), lval) => Ok(Value {
                ty: mty,
                bytes,
                lval,
            }),
            (None, Some(Lval::Memory(a))) => self.read(mty, a),
            _ => Err(ExprError::Other(format!("There is no member named {m}."))),
        }
    }

    fn index(&self, a: Value, i: i64) -> Result<Value, ExprError> {
        let t = self.t();
        match a.ty.shape(&t) {
            Shape::Array(elem, _) => {
                let es = elem.size(&t).unwrap_or(1) as i64;
                let off = i * es;
                if off >= 0 {
                    if let Some(b) = a.bytes.get(off as usize..(off + es) as usize) {
                        return Ok(Value {
                            ty: elem,
                            bytes: b.to_vec(),
                            lval: a
                                .address()
                                .map(|x| Lval::Memory(x.wrapping_add(off as u64))),
                        });
                    }
                }
                match a.address() {
                    Some(x) => self.read(elem, x.wrapping_add(off as u64)),
                    None => Err(ExprError::Other("no such vector element".into())),
                }
            }
            Shape::Pointer(p) => {
                let es = p.size(&t).unwrap_or(1) as i64;
                self.read(p, a.raw_u64().wrapping_add((i * es) as u64))
            }
            _ => Err(ExprError::Other(
                "cannot subscript something of type `".to_string() + &a.ty.name(&t) + "'",
            )),
        }
    }

    fn binary(&self, op: Binary, a: Value, b: Value) -> Result<Value, ExprError> {
        let t = self.t();
        let pa = matches!(a.ty.shape(&t), Shape::Pointer(_));
        let pb = matches!(b.ty.shape(&t), Shape::Pointer(_));
        // Pointer arithmetic.
        if (pa || pb) && matches!(op, Binary::Add | Binary::Sub) {
            if pa && pb && op == Binary::Sub {
                let Shape::Pointer(p) = a.ty.shape(&t) else {
                    return Err(bad());
                };
                let es = p.size(&t).unwrap_or(1).max(1) as i64;
                let d = (a.raw_u64() as i64).wrapping_sub(b.raw_u64() as i64) / es;
                return Ok(Value::int(Ty::LONG, d as i128, 8));
            }
            let (p, n) = if pa { (&a, &b) } else { (&b, &a) };
            let Shape::Pointer(pt) = p.ty.shape(&t) else {
                return Err(bad());
            };
            let Num::I(n, ..) = self.num(n)? else {
                return Err(bad());
            };
            let es = pt.size(&t).unwrap_or(1).max(1) as i128;
            let d = if op == Binary::Sub { -n * es } else { n * es };
            let r = (p.raw_u64() as i128).wrapping_add(d) as u64;
            return Ok(Value::int(p.ty.clone(), r as i128, 8));
        }
        let x = self.num(&a)?;
        let y = self.num(&b)?;
        let cmp = |o: std::cmp::Ordering| -> Value {
            let r = match op {
                Binary::Lt => o.is_lt(),
                Binary::Gt => o.is_gt(),
                Binary::Le => o.is_le(),
                Binary::Ge => o.is_ge(),
                Binary::Eq => o.is_eq(),
                _ => o.is_ne(),
            };
            Value::int(Ty::INT, r as i128, 4)
        };
        match (x, y) {
            (Num::F(_), _) | (_, Num::F(_)) => {
                let f = |n: Num| match n {
                    Num::F(f) => f,
                    Num::I(i, ..) => i as f64,
                };
                let (x, y) = (f(x), f(y));
                if matches!(
                    op,
                    Binary::Lt | Binary::Gt | Binary::Le | Binary::Ge | Binary::Eq | Binary::Ne
                ) {
                    return Ok(cmp(x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Less)));
                }
                let r = match op {
                    Binary::Add => x + y,
                    Binary::Sub => x - y,
                    Binary::Mul => x * y,
                    Binary::Div => x / y,
                    _ => return Err(ExprError::Other("Integer only operation.".into())),
                };
                Ok(Value::from_bytes(Ty::Float(8), r.to_le_bytes().to_vec()))
            }
            (Num::I(x, xs, xsg), Num::I(y, ys, ysg)) => {
                // The usual arithmetic conversions.
                let (xs, xsg) = promote(xs, xsg);
                let (ys, ysg) = promote(ys, ysg);
                let size = xs.max(ys);
                let signed = if xs == ys {
                    xsg && ysg
                } else if xs > ys {
                    xsg
                } else {
                    ysg
                };
                let norm = |v: i128| -> i128 {
                    let m = mask(size as u64);
                    let u = v & m;
                    if signed && size < 16 && (u >> (size as u32 * 8 - 1)) & 1 == 1 {
                        u - (m + 1)
                    } else {
                        u
                    }
                };
                let (x, y) = (norm(x), norm(y));
                if matches!(
                    op,
                    Binary::Lt | Binary::Gt | Binary::Le | Binary::Ge | Binary::Eq | Binary::Ne
                ) {
                    return Ok(cmp(x.cmp(&y)));
                }
                let r = match op {
                    Binary::Add => x.wrapping_add(y),
                    Binary::Sub => x.wrapping_sub(y),
                    Binary::Mul => x.wrapping_mul(y),
                    Binary::Div | Binary::Rem => {
                        if y == 0 {
                            return Err(ExprError::Other("Division by zero".into()));
                        }
                        if op == Binary::Div {
                            x / y
                        } else {
                            x % y
                        }
                    }
                    Binary::Shl => x.wrapping_shl(y as u32),
                    Binary::Shr => x.wrapping_shr(y as u32),
                    Binary::BitAnd => x & y,
                    Binary::BitOr => x | y,
                    Binary::BitXor => x ^ y,
                    _ => return Err(bad()),
                };
                Ok(Value::int(Ty::Int { size, signed }, norm(r), size as u64))
            }
        }
    }

    fn convert(&self, v: Value, ty: &Ty) -> Result<Value, ExprError> {
        let t = self.t();
        let size = ty.size(&t).unwrap_or(8);
        match ty.shape(&t) {
            Shape::Float(s) => {
                let f = match self.num(&v)? {
                    Num::F(f) => f,
                    Num::I(i, ..) => i as f64,
                };
                let bytes = if s == 4 {
                    (f as f32).to_le_bytes().to_vec()
                } else {
                    f.to_le_bytes().to_vec()
                };
                Ok(Value::from_bytes(ty.clone(), bytes))
            }
            Shape::Int { .. }
            | Shape::Char { .. }
            | Shape::Bool(_)
            | Shape::Enum(_)
            | Shape::Pointer(_)
            | Shape::Utf(_) => {
                let i = match self.num(&v)? {
                    Num::F(f) => f as i128,
                    Num::I(i, ..) => i,
                };
                let i = if matches!(ty.shape(&t), Shape::Bool(_)) {
                    (i != 0) as i128
                } else {
                    i
                };
                Ok(Value::int(ty.clone(), i, size))
            }
            Shape::Struct(_) | Shape::Array(..) if v.size() == size => Ok(Value {
                ty: ty.clone(),
                ..v
            }),
            _ => Err(ExprError::Other("Invalid cast.".into())),
        }
    }
}

fn find_member<'t>(
    t: &'t TablesOf<'_>,
    module: usize,
    members: &'t [crate::types::Member],
    name: &str,
) -> Option<(crate::types::Member, u64)> {
    use crate::value::Tables;
    for m in members {
        if m.name.as_deref() == Some(name) {
            return Some((m.clone(), 0));
        }
    }
    // Anonymous struct/union members are searched through.
    for m in members.iter().filter(|m| m.name.is_none()) {
        let table = t.table(module)?;
        let id = table.strip(m.ty)?;
        if let Type::Struct { members: inner, .. } = table.get(id) {
            if let Some((found, off)) = find_member(t, module, inner, name) {
                return Some((found, off + m.offset));
            }
        }
    }
    None
}

fn promote(size: u8, signed: bool) -> (u8, bool) {
    if size < 4 {
        (4, true)
    } else {
        (size, signed)
    }
}

fn mask(size: u64) -> i128 {
    if size >= 16 {
        -1
    } else {
        (1i128 << (size * 8)) - 1
    }
}

fn bad() -> ExprError {
    ExprError::Other("Argument to arithmetic operation not a number or boolean.".into())
}
