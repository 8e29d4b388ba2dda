//! Evaluation with C's rules: integer promotion, the usual arithmetic conversions, pointer
//! arithmetic scaled by the pointee's size, arrays decaying to pointers.

use super::parser::{Binary, Expr, HistoryRef, IntLit, TypeName, Unary};
use super::{EvalContext, ExprError, Place};
use crate::types::{Encoding, Language, Member, MemberKind, Type};
use crate::value::{le_u64, sign_extend, Lval, Shape, TypeHandle, Value};

/// The most bytes one value holds (a huge array is read in part; gdb prints 200 elements).
const MAX_VALUE: u64 = 1 << 16;

/// Evaluates `e` in the context's selected frame; `history` is `$1`, `$2`… (oldest first).
pub fn evaluate(e: &Expr, ctx: &dyn EvalContext, history: &[Value]) -> Result<Value, ExprError> {
    Eval { ctx, history }.eval(e)
}

/// C truth of a value (breakpoint conditions): non-zero scalars are true.
pub fn value_is_true(v: &Value) -> Result<bool, ExprError> {
    match v.ty.shape() {
        Shape::Float(4) => Ok(f32_of(&v.bytes) != 0.0),
        Shape::Float(_) => Ok(f64_of(&v.bytes) != 0.0),
        Shape::Struct(_) | Shape::Void | Shape::Unknown => Err(ExprError::other(
            "Argument to logical operation not a number or boolean.",
        )),
        Shape::Array(..) | Shape::Function if v.address().is_some() => Ok(true),
        _ => Ok(v.bytes.iter().any(|b| *b != 0)),
    }
}

fn f32_of(b: &[u8]) -> f32 {
    f32::from_bits(le_u64(b) as u32)
}

fn f64_of(b: &[u8]) -> f64 {
    f64::from_bits(le_u64(b))
}

struct Eval<'a> {
    ctx: &'a dyn EvalContext,
    history: &'a [Value],
}

/// A scalar as arithmetic sees it.
#[derive(Clone, Copy, Debug)]
enum Num {
    /// Integer: value, size in bytes, signedness.
    I(i128, u64, bool),
    /// Floating point: value, size in bytes.
    F(f64, u64),
}

fn not_number() -> ExprError {
    ExprError::other("Argument to arithmetic operation not a number or boolean.")
}

/// C's integer promotion.
fn promote(size: u64, signed: bool) -> (u64, bool) {
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

/// `v` truncated to `size` bytes of the given signedness.
fn wrap(v: i128, size: u64, signed: bool) -> i128 {
    let u = v & mask(size);
    if signed && size < 16 && (u >> (size * 8 - 1)) & 1 == 1 {
        u - (mask(size) + 1)
    } else {
        u
    }
}

impl Eval<'_> {
    fn rust(&self) -> bool {
        self.ctx.language() == Language::Rust
    }

    /// The result of a comparison or logical operator: C's `int`, Rust's `bool`.
    fn truth(&self, b: bool) -> Value {
        if self.rust() {
            Value::int(TypeHandle::base("bool", 1, Encoding::Bool), b as i128)
        } else {
            Value::int(TypeHandle::int(), b as i128)
        }
    }

    fn no_symbol(&self, n: &str) -> ExprError {
        if self.rust() {
            ExprError::Other(format!("No symbol '{n}' in current context"))
        } else {
            ExprError::NoSymbol(n.to_string())
        }
    }

    fn read(&self, ty: TypeHandle, addr: u64) -> Result<Value, ExprError> {
        let size = ty.size().unwrap_or(0).min(MAX_VALUE);
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
            Expr::Int(lit) => Ok(int_literal(lit)),
            Expr::Float(f, single) => Ok(if *single {
                Value::from_bytes(
                    TypeHandle::base("float", 4, Encoding::Float),
                    (*f as f32).to_le_bytes().to_vec(),
                )
            } else {
                Value::double(*f)
            }),
            Expr::Char(c) => Ok(Value::from_bytes(TypeHandle::char(), vec![*c])),
            Expr::Str(s) => {
                let mut b = s.clone();
                b.push(0);
                let n = b.len() as u64;
                Ok(Value::from_bytes(TypeHandle::char().array_of(n), b))
            }
            Expr::Name(n) => self.name(n),
            Expr::Register(r) => self.register(r),
            Expr::History(h) => self.history(*h),
            Expr::Unary(op, x) => self.unary(*op, x),
            Expr::Binary(op @ (Binary::And | Binary::Or), a, b) => {
                let a = value_is_true(&self.rvalue(self.eval(a)?)?)?;
                // Short-circuit as C does: the right side may not be evaluable.
                let r = match op {
                    Binary::And => a && value_is_true(&self.rvalue(self.eval(b)?)?)?,
                    _ => a || value_is_true(&self.rvalue(self.eval(b)?)?)?,
                };
                Ok(self.truth(r))
            }
            Expr::Binary(Binary::Repeat, a, n) => {
                let a = self.through_reference(self.eval(a)?)?;
                let n = self.rvalue(self.eval(n)?)?;
                self.repeat(a, n)
            }
            Expr::Binary(op, a, b) => {
                let a = self.rvalue(self.eval(a)?)?;
                let b = self.rvalue(self.eval(b)?)?;
                self.binary(*op, a, b)
            }
            Expr::Ternary(c, a, b) => {
                if value_is_true(&self.rvalue(self.eval(c)?)?)? {
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
                Ok(Value::int(
                    TypeHandle::ulong(),
                    ty.size().unwrap_or(1) as i128,
                ))
            }
            Expr::SizeofExpr(x) => {
                let ty = match (&**x, self.eval(x)) {
                    // A reference's size is its referent's, as in C++.
                    (_, Ok(v)) if v.ty.is_reference() => match v.ty.strip().map(|t| t.shape()) {
                        Some(Shape::Pointer(Some(p))) => p,
                        _ => v.ty,
                    },
                    (_, Ok(v)) => v.ty,
                    // `sizeof(point_t)` parses as an expression; a type name is fine too.
                    (Expr::Name(n), Err(e)) => self.ctx.lookup_type(n).ok_or(e)?,
                    (_, Err(e)) => return Err(e),
                };
                Ok(Value::int(
                    TypeHandle::ulong(),
                    ty.size().unwrap_or(1) as i128,
                ))
            }
            Expr::Member(x, m) => {
                let v = self.through_reference(self.eval(x)?)?;
                // gdb lets `.` work through a pointer as well.
                let v = match v.ty.shape() {
                    Shape::Pointer(_) => self.deref(v)?,
                    _ => v,
                };
                self.member(v, m)
            }
            Expr::Arrow(x, m) => {
                let v = self.through_reference(self.eval(x)?)?;
                let v = match smart_pointer(&v) {
                    Some((elem, addr)) => Value::int(elem.pointer_to(), addr as i128),
                    None => v,
                };
                let v = match v.ty.shape() {
                    // gdb accepts `s->m` on a struct too.
                    Shape::Struct(_) => v,
                    // gdb checks the pointee before it reads anything.
                    Shape::Pointer(p)
                        if !matches!(p.as_ref().map(|p| p.shape()), Some(Shape::Struct(_))) =>
                    {
                        return Err(ExprError::other(
                            "Attempt to extract a component of a value that is not a structure pointer.",
                        ));
                    }
                    _ => self.deref(v)?,
                };
                self.member(v, m)
            }
            Expr::Index(a, i) => {
                let a = self.eval(a)?;
                let i = self.rvalue(self.eval(i)?)?;
                let Num::I(i, ..) = self.num(&i)? else {
                    return Err(ExprError::other(
                        "Argument to arithmetic operation not a number or boolean.",
                    ));
                };
                self.index(a, i as i64)
            }
            Expr::Assign(l, r) => self.assign(l, r),
            // A call runs the program: the front end does it before evaluating (`print
            // f(x)`); where it cannot (breakpoint conditions), a call is refused.
            Expr::Call(..) => Err(ExprError::other("calling functions is not supported")),
        }
    }

    fn register(&self, r: &str) -> Result<Value, ExprError> {
        let Some(v) = self.ctx.register(r) else {
            // gdb: an unknown `$name` is an empty convenience variable.
            return Ok(Value::from_bytes(TypeHandle::void(), Vec::new()));
        };
        let ty = match r {
            "pc" | "rip" => TypeHandle::code_pointer(),
            "sp" | "fp" | "rsp" | "rbp" => TypeHandle::void().pointer_to(),
            "eflags" => TypeHandle::base("i386_eflags", 4, Encoding::Signed),
            _ if r.starts_with('e') && r.len() == 3 => TypeHandle::int(),
            _ => TypeHandle::long(),
        };
        Ok(Value::int(ty, v as i128))
    }

    fn history(&self, h: HistoryRef) -> Result<Value, ExprError> {
        let idx = match h {
            HistoryRef::Absolute(n) => n.checked_sub(1),
            HistoryRef::Relative(n) => self.history.len().checked_sub(1 + n),
        };
        match idx.and_then(|i| self.history.get(i)) {
            Some(v) => Ok(v.clone()),
            // `$` and `$$n` on an empty history are void, as in gdb.
            None if matches!(h, HistoryRef::Relative(_)) => {
                Ok(Value::from_bytes(TypeHandle::void(), Vec::new()))
            }
            None => match h {
                HistoryRef::Absolute(n) => Err(ExprError::Other(format!(
                    "History has not yet reached ${n}."
                ))),
                HistoryRef::Relative(_) => Err(ExprError::other("History is empty.")),
            },
        }
    }

    fn name(&self, n: &str) -> Result<Value, ExprError> {
        if let Some((ty, place)) = self.ctx.lookup_variable(n) {
            return match place {
                Place::Memory(a) => self.read(ty, a),
                Place::Register(r, v) => {
                    let size = ty.size().unwrap_or(8).min(8) as usize;
                    let bytes = v.to_le_bytes()[..size].to_vec();
                    Ok(Value {
                        ty,
                        bytes,
                        lval: Some(Lval::Register(r)),
                    })
                }
                Place::Value(mut b) => {
                    let size = ty.size().unwrap_or(b.len() as u64) as usize;
                    b.resize(size, 0);
                    Ok(Value::from_bytes(ty, b))
                }
                Place::Unavailable => Ok(Value {
                    ty,
                    bytes: Vec::new(),
                    lval: None,
                }),
            };
        }
        if let Some((addr, ty)) = self.ctx.lookup_function(n) {
            let ty = ty.unwrap_or_else(TypeHandle::nodebug_function);
            return Ok(Value {
                ty,
                bytes: addr.to_le_bytes().to_vec(),
                lval: Some(Lval::Memory(addr)),
            });
        }
        match n {
            "true" => Ok(Value::from_bytes(
                TypeHandle::base("bool", 1, Encoding::Bool),
                vec![1],
            )),
            "false" => Ok(Value::from_bytes(
                TypeHandle::base("bool", 1, Encoding::Bool),
                vec![0],
            )),
            "NULL" | "nullptr" => Ok(Value::int(TypeHandle::void().pointer_to(), 0)),
            // Inside a member function, a member's name alone means `this->name`.
            _ if n != "this" && !n.contains("::") => match self.ctx.lookup_variable("this") {
                Some(_) => {
                    let this = self.deref(self.name("this")?)?;
                    self.member(this, n).map_err(|_| self.no_symbol(n))
                }
                None => Err(self.no_symbol(n)),
            },
            _ => Err(self.no_symbol(n)),
        }
    }

    /// The type a cast or `sizeof` names: C base types are built in, others asked for.
    fn type_of(&self, t: &TypeName) -> Result<TypeHandle, ExprError> {
        let builtin = builtin_type(&t.base);
        let base = match self.ctx.lookup_type(&t.base) {
            Some(ty) => ty,
            None => match builtin {
                Some(ty) => ty,
                None => {
                    return Err(match t.base.split_once(' ') {
                        Some(("struct", n)) => {
                            ExprError::Other(format!("No struct type named {n}."))
                        }
                        Some(("union", n)) => ExprError::Other(format!("No union type named {n}.")),
                        Some(("enum", n)) => ExprError::Other(format!("No enum type named {n}.")),
                        _ => self.no_symbol(&t.base),
                    })
                }
            },
        };
        let mut ty = base;
        for _ in 0..t.pointers {
            ty = ty.pointer_to();
        }
        Ok(ty)
    }

    /// The value as an operand: references are followed, arrays decay to pointers to their
    /// first element (when they live in memory).
    fn rvalue(&self, v: Value) -> Result<Value, ExprError> {
        let v = self.through_reference(v)?;
        Ok(match (v.ty.shape(), v.lval) {
            // Functions decay to pointers to themselves.
            (Shape::Function, Some(Lval::Memory(a))) => Value::int(v.ty.pointer_to(), a as i128),
            (Shape::Array(elem, _), Some(Lval::Memory(a))) => {
                Value::int(elem.pointer_to(), a as i128)
            }
            _ => v,
        })
    }

    /// A C++ reference's referent; other values unchanged.
    fn through_reference(&self, v: Value) -> Result<Value, ExprError> {
        if v.ty.is_reference() {
            if let Shape::Pointer(Some(p)) = v.ty.shape() {
                return self.read(p, v.raw_u64());
            }
        }
        Ok(v)
    }

    fn num(&self, v: &Value) -> Result<Num, ExprError> {
        if v.bytes.is_empty() {
            return Err(match v.ty.shape() {
                Shape::Void => not_number(),
                _ => ExprError::other("value has been optimized out"),
            });
        }
        let size = v.size().clamp(1, 8);
        Ok(match v.ty.shape() {
            Shape::Float(4) => Num::F(f32_of(&v.bytes) as f64, 4),
            Shape::Float(s) => Num::F(f64_of(&v.bytes), s),
            Shape::Int { signed: true, .. } | Shape::Char { signed: true, .. } => {
                Num::I(sign_extend(v.raw_u64(), size) as i128, size, true)
            }
            Shape::Enum(_) => Num::I(
                sign_extend(v.raw_u64(), size) as i128,
                size,
                enum_signed(&v.ty),
            ),
            Shape::Int { .. } | Shape::Char { .. } | Shape::Bool(_) | Shape::Utf(_) => {
                Num::I(v.raw_u64() as i128 & mask(size), size, false)
            }
            Shape::Pointer(_) | Shape::Function => Num::I(v.raw_u64() as i128, 8, false),
            _ => return Err(not_number()),
        })
    }

    fn unary(&self, op: Unary, x: &Expr) -> Result<Value, ExprError> {
        let v = self.through_reference(self.eval(x)?)?;
        match op {
            Unary::AddrOf => match v.lval {
                Some(Lval::Memory(a)) => Ok(Value::int(v.ty.pointer_to(), a as i128)),
                Some(Lval::Register(_)) => Err(ExprError::other(
                    "Address requested for identifier which is in register",
                )),
                None => Err(ExprError::other(
                    "Attempt to take address of value not located in memory.",
                )),
            },
            Unary::Deref => self.deref(v),
            Unary::Not => {
                let t = value_is_true(&self.rvalue(v)?)?;
                Ok(self.truth(!t))
            }
            Unary::Neg | Unary::Plus | Unary::BitNot => {
                let v = self.rvalue(v)?;
                match self.num(&v)? {
                    Num::F(f, s) => {
                        if op == Unary::BitNot {
                            return Err(not_number());
                        }
                        let r = if op == Unary::Neg { -f } else { f };
                        Ok(float_value(r, s))
                    }
                    Num::I(i, size, signed) => {
                        let (size, signed) = promote(size, signed);
                        let r = match op {
                            Unary::Neg => -i,
                            Unary::BitNot => !i,
                            _ => i,
                        };
                        Ok(Value::int(
                            TypeHandle::c_int(size, signed),
                            wrap(r, size, signed),
                        ))
                    }
                }
            }
        }
    }

    fn deref(&self, v: Value) -> Result<Value, ExprError> {
        let non_pointer = || ExprError::other("Attempt to take contents of a non-pointer value.");
        match v.ty.shape() {
            Shape::Pointer(Some(p)) => {
                if matches!(p.shape(), Shape::Void) {
                    return Err(non_pointer());
                }
                let addr = v.raw_u64();
                if matches!(p.shape(), Shape::Function) {
                    return Ok(Value {
                        ty: p,
                        bytes: addr.to_le_bytes().to_vec(),
                        lval: Some(Lval::Memory(addr)),
                    });
                }
                self.read(p, addr)
            }
            Shape::Pointer(None) => Err(non_pointer()),
            Shape::Array(elem, _) => match v.lval {
                Some(Lval::Memory(a)) => self.read(elem, a),
                _ => Err(non_pointer()),
            },
            Shape::Function => Ok(v),
            // libstdc++'s smart pointers dereference to what they own (gdb's xmethods).
            Shape::Struct(_) => match smart_pointer(&v) {
                Some((elem, addr)) => self.read(elem, addr),
                None => Err(non_pointer()),
            },
            // gdb lets `*` take an integer as an address (of an `int`).
            Shape::Int { .. } => self.read(TypeHandle::int(), v.as_u64()?),
            _ => Err(non_pointer()),
        }
    }

    fn member(&self, v: Value, m: &str) -> Result<Value, ExprError> {
        let Some(st) = v.ty.strip() else {
            return Err(not_struct());
        };
        let Type::Struct { members, .. } = st.get() else {
            return Err(not_struct());
        };
        let (member, base_off) = find_member(&st, members, m)
            .ok_or_else(|| ExprError::Other(format!("There is no member named {m}.")))?;
        let mty = st.child(member.ty);
        let size = mty.size().unwrap_or(0) as usize;
        if let MemberKind::Static { address } = member.kind {
            return match address {
                Some(a) => self.read(mty, a),
                None => Ok(Value {
                    ty: mty,
                    bytes: Vec::new(),
                    lval: None,
                }),
            };
        }
        let off = (base_off + member.offset) as usize;
        if let Some((bit, bits)) = member.bits {
            let x = extract_bits(&v.bytes, off as u64 * 8 + bit, bits, is_signed(&mty));
            return Ok(Value::int(mty, x));
        }
        let lval = v.address().map(|a| Lval::Memory(a + off as u64));
        match v.bytes.get(off..off + size) {
            Some(b) => Ok(Value {
                ty: mty,
                bytes: b.to_vec(),
                lval,
            }),
            None => match lval {
                Some(Lval::Memory(a)) => self.read(mty, a),
                _ => Ok(Value {
                    ty: mty,
                    bytes: Vec::new(),
                    lval: None,
                }),
            },
        }
    }

    fn index(&self, a: Value, i: i64) -> Result<Value, ExprError> {
        match a.ty.shape() {
            Shape::Array(elem, _) => {
                let es = elem.size().unwrap_or(1) as i64;
                let off = i.wrapping_mul(es);
                if let (true, Some(end)) = (off >= 0, off.checked_add(es)) {
                    if let Some(b) = a.bytes.get(off as usize..end as usize) {
                        let lval = a
                            .address()
                            .map(|x| Lval::Memory(x.wrapping_add(off as u64)));
                        return Ok(Value {
                            ty: elem,
                            bytes: b.to_vec(),
                            lval,
                        });
                    }
                }
                match a.address() {
                    Some(x) => self.read(elem, x.wrapping_add(off as u64)),
                    None => Err(ExprError::other("no such vector element")),
                }
            }
            Shape::Pointer(Some(p)) => {
                let es = p.size().unwrap_or(1) as i64;
                self.read(p, a.raw_u64().wrapping_add(i.wrapping_mul(es) as u64))
            }
            Shape::Struct(_) if container_element(&a, i, self.ctx).is_some() => {
                let (elem, addr) =
                    container_element(&a, i, self.ctx).ok_or_else(|| cannot_subscript(&a))?;
                self.read(elem, addr)
            }
            Shape::Struct(_) => {
                // Rust slices (`&[T]`, `&str`) index their data.
                let parts = a.ty.strip().and_then(|st| match st.get() {
                    Type::Struct { members, .. } => {
                        crate::show::slice_parts(&st, members, &a.bytes)
                    }
                    _ => None,
                });
                let Some((elem, ptr, len)) = parts else {
                    return Err(cannot_subscript(&a));
                };
                if i < 0 || i as u64 >= len {
                    return Err(ExprError::Other(format!(
                        "Index {i} is out of bounds (length {len})"
                    )));
                }
                let es = elem.size().unwrap_or(1);
                self.read(elem, ptr.wrapping_add((i as u64).wrapping_mul(es)))
            }
            _ => Err(cannot_subscript(&a)),
        }
    }

    /// `a@n`: an array of `n` objects of `a`'s type starting at `a`'s address.
    fn repeat(&self, a: Value, n: Value) -> Result<Value, ExprError> {
        let Num::I(n, ..) = self.num(&n)? else {
            return Err(ExprError::other(
                "Non-integral right operand of '@' operator.",
            ));
        };
        let Some(addr) = a.address() else {
            return Err(ExprError::other(
                "Only values in memory can be extended with '@'.",
            ));
        };
        if n <= 0 || n > u32::MAX as i128 {
            return Err(ExprError::Other(format!(
                "Invalid number {n} of repetitions."
            )));
        }
        self.read(a.ty.array_of(n as u64), addr)
    }

    fn assign(&self, l: &Expr, r: &Expr) -> Result<Value, ExprError> {
        let lv = self.eval(l)?;
        let Some(Lval::Memory(addr)) = lv.lval else {
            return Err(ExprError::other(
                "Left operand of assignment is not an lvalue.",
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

    fn binary(&self, op: Binary, a: Value, b: Value) -> Result<Value, ExprError> {
        let pa = matches!(a.ty.shape(), Shape::Pointer(_));
        let pb = matches!(b.ty.shape(), Shape::Pointer(_));
        if (pa || pb) && matches!(op, Binary::Add | Binary::Sub) {
            return self.pointer_arith(op, a, b, pa, pb);
        }
        let x = self.num(&a)?;
        let y = self.num(&b)?;
        let cmp = |o: Option<std::cmp::Ordering>| -> Value {
            let r = match (op, o) {
                (Binary::Ne, None) => true,
                (_, None) => false,
                (Binary::Lt, Some(o)) => o.is_lt(),
                (Binary::Gt, Some(o)) => o.is_gt(),
                (Binary::Le, Some(o)) => o.is_le(),
                (Binary::Ge, Some(o)) => o.is_ge(),
                (Binary::Eq, Some(o)) => o.is_eq(),
                (_, Some(o)) => o.is_ne(),
            };
            self.truth(r)
        };
        let is_cmp = matches!(
            op,
            Binary::Lt | Binary::Gt | Binary::Le | Binary::Ge | Binary::Eq | Binary::Ne
        );
        match (x, y) {
            (Num::F(..), _) | (_, Num::F(..)) => {
                let f = |n: Num| match n {
                    Num::F(f, s) => (f, s),
                    Num::I(i, ..) => (i as f64, 0),
                };
                let ((x, xs), (y, ys)) = (f(x), f(y));
                if is_cmp {
                    return Ok(cmp(x.partial_cmp(&y)));
                }
                let r = match op {
                    Binary::Add => x + y,
                    Binary::Sub => x - y,
                    Binary::Mul => x * y,
                    Binary::Div => x / y,
                    _ => return Err(ExprError::other("Integer only operation.")),
                };
                Ok(float_value(r, xs.max(ys)))
            }
            (Num::I(x, xs, xsg), Num::I(y, ys, ysg)) => {
                let (xs, xsg) = promote(xs, xsg);
                let (ys, ysg) = promote(ys, ysg);
                // Shifts take the left operand's type; the rest the usual conversions.
                let (size, signed) = if matches!(op, Binary::Shl | Binary::Shr) {
                    (xs, xsg)
                } else if xs == ys {
                    (xs, xsg && ysg)
                } else if xs > ys {
                    (xs, xsg)
                } else {
                    (ys, ysg)
                };
                let (x, y) = if matches!(op, Binary::Shl | Binary::Shr) {
                    (wrap(x, size, signed), y)
                } else {
                    (wrap(x, size, signed), wrap(y, size, signed))
                };
                if is_cmp {
                    return Ok(cmp(Some(x.cmp(&y))));
                }
                let r = match op {
                    Binary::Add => x.wrapping_add(y),
                    Binary::Sub => x.wrapping_sub(y),
                    Binary::Mul => x.wrapping_mul(y),
                    Binary::Div | Binary::Rem => {
                        if y == 0 {
                            return Err(ExprError::other("Division by zero"));
                        }
                        if op == Binary::Div {
                            x / y
                        } else {
                            x % y
                        }
                    }
                    // Out-of-range shift counts give 0, as gdb does (after a warning).
                    Binary::Shl if !(0..(size as i128 * 8)).contains(&y) => 0,
                    Binary::Shr if !(0..(size as i128 * 8)).contains(&y) => 0,
                    Binary::Shl => x << y,
                    Binary::Shr => x >> y,
                    Binary::BitAnd => x & y,
                    Binary::BitOr => x | y,
                    Binary::BitXor => x ^ y,
                    _ => return Err(not_number()),
                };
                Ok(Value::int(
                    TypeHandle::c_int(size, signed),
                    wrap(r, size, signed),
                ))
            }
        }
    }

    fn pointer_arith(
        &self,
        op: Binary,
        a: Value,
        b: Value,
        pa: bool,
        pb: bool,
    ) -> Result<Value, ExprError> {
        let elem_size = |v: &Value| match v.ty.shape() {
            Shape::Pointer(Some(p)) => p.size().unwrap_or(1).max(1) as i128,
            _ => 1,
        };
        if pa && pb {
            if op != Binary::Sub {
                return Err(not_number());
            }
            let es = elem_size(&a);
            if es != elem_size(&b) {
                return Err(ExprError::other(
                    "First argument of `-' is a pointer and second argument is neither\nan integer nor a pointer of the same type.",
                ));
            }
            let d = (a.raw_u64() as i64 as i128 - b.raw_u64() as i64 as i128) / es;
            return Ok(Value::int(TypeHandle::long(), d));
        }
        if pb && op == Binary::Sub {
            return Err(not_number());
        }
        let (p, n) = if pa { (a, b) } else { (b, a) };
        let Num::I(n, ..) = self.num(&n)? else {
            return Err(not_number());
        };
        let d = n * elem_size(&p);
        let d = if op == Binary::Sub { -d } else { d };
        let r = (p.raw_u64() as i128).wrapping_add(d);
        Ok(Value::int(p.ty, r & mask(8)))
    }

    fn convert(&self, v: Value, ty: &TypeHandle) -> Result<Value, ExprError> {
        match ty.shape() {
            Shape::Float(s) => {
                let f = match self.num(&v)? {
                    Num::F(f, _) => f,
                    Num::I(i, ..) => i as f64,
                };
                Ok(Value {
                    ty: ty.clone(),
                    ..float_value(f, s)
                })
            }
            Shape::Bool(_) => {
                let t = value_is_true(&v)?;
                Ok(Value::int(ty.clone(), t as i128))
            }
            Shape::Int { .. }
            | Shape::Char { .. }
            | Shape::Enum(_)
            | Shape::Pointer(_)
            | Shape::Utf(_) => {
                let i = match self.num(&v)? {
                    Num::F(f, _) => f as i128,
                    Num::I(i, ..) => i,
                };
                Ok(Value::int(ty.clone(), i))
            }
            Shape::Void => Ok(Value::from_bytes(ty.clone(), Vec::new())),
            Shape::Struct(_) | Shape::Array(..) if v.size() == ty.size().unwrap_or(0) => {
                Ok(Value {
                    ty: ty.clone(),
                    ..v
                })
            }
            _ => Err(ExprError::other("Invalid cast.")),
        }
    }
}

/// C base types by any of their spellings.
fn builtin_type(name: &str) -> Option<TypeHandle> {
    let mut words: Vec<&str> = name.split_whitespace().collect();
    words.sort_unstable();
    let key = words.join(" ");
    Some(match key.as_str() {
        "int" | "signed" | "int signed" => TypeHandle::int(),
        "unsigned" | "int unsigned" => TypeHandle::c_int(4, false),
        "long" | "int long" | "long signed" | "long long" | "int long long"
        | "long long signed" => TypeHandle::long(),
        "long unsigned" | "int long unsigned" | "long long unsigned" | "int long long unsigned" => {
            TypeHandle::ulong()
        }
        "short" | "int short" | "short signed" | "int short signed" => TypeHandle::c_int(2, true),
        "short unsigned" | "int short unsigned" => TypeHandle::c_int(2, false),
        "char" => TypeHandle::char(),
        "char signed" => TypeHandle::c_int(1, true),
        "char unsigned" => TypeHandle::c_int(1, false),
        "float" => TypeHandle::base("float", 4, Encoding::Float),
        "double" => TypeHandle::double(),
        "void" => TypeHandle::void(),
        "_Bool" => TypeHandle::base("_Bool", 1, Encoding::Bool),
        "bool" => TypeHandle::base("bool", 1, Encoding::Bool),
        // Rust primitives.
        "i8" => TypeHandle::base("i8", 1, Encoding::Signed),
        "u8" => TypeHandle::base("u8", 1, Encoding::Unsigned),
        "i16" => TypeHandle::base("i16", 2, Encoding::Signed),
        "u16" => TypeHandle::base("u16", 2, Encoding::Unsigned),
        "i32" => TypeHandle::base("i32", 4, Encoding::Signed),
        "u32" => TypeHandle::base("u32", 4, Encoding::Unsigned),
        "i64" | "isize" => TypeHandle::base(name, 8, Encoding::Signed),
        "u64" | "usize" => TypeHandle::base(name, 8, Encoding::Unsigned),
        "f32" => TypeHandle::base("f32", 4, Encoding::Float),
        "f64" => TypeHandle::base("f64", 8, Encoding::Float),
        _ => return None,
    })
}

/// The C type of an integer literal: `int`, then `long` (decimal) or `unsigned int`, `long`,
/// `unsigned long` (hex and octal), as the value needs and the suffixes ask.
fn int_literal(lit: &IntLit) -> Value {
    let v = lit.value;
    let fits_int = v <= i32::MAX as u64;
    let fits_uint = v <= u32::MAX as u64;
    let fits_long = v <= i64::MAX as u64;
    let (size, signed) = match (lit.long, lit.unsigned) {
        (false, false) if fits_int => (4, true),
        (false, false) if !lit.decimal && fits_uint => (4, false),
        (false, true) if fits_uint => (4, false),
        (_, false) if fits_long => (8, true),
        _ => (8, false),
    };
    Value::int(TypeHandle::c_int(size, signed), v as i128)
}

fn float_value(f: f64, size: u64) -> Value {
    if size == 4 {
        Value::from_bytes(
            TypeHandle::base("float", 4, Encoding::Float),
            (f as f32).to_le_bytes().to_vec(),
        )
    } else {
        Value::double(f)
    }
}

/// What a libstdc++ smart pointer (`unique_ptr`, `shared_ptr`, `weak_ptr`) owns: the
/// element type and address.
fn smart_pointer(v: &Value) -> Option<(TypeHandle, u64)> {
    let st = v.ty.strip()?;
    let Type::Struct { name: Some(n), .. } = st.get() else {
        return None;
    };
    let agg = crate::formatters::Agg {
        ty: st.clone(),
        bytes: &v.bytes,
    };
    let elem = agg.template_type(0)?;
    match crate::formatters::template_name(n) {
        // The owned pointer is the first word of a unique_ptr.
        "std::unique_ptr" => Some((elem, le_u64(v.bytes.get(..8)?))),
        "std::shared_ptr" | "std::weak_ptr" => Some((elem, agg.word(&["_M_ptr"])?)),
        _ => None,
    }
}

/// Element `i` of a libstdc++ sequence (`vector`, `array`, `deque`): its type and address,
/// as gdb's xmethods index them (without bounds checks).
fn container_element(a: &Value, i: i64, ctx: &dyn EvalContext) -> Option<(TypeHandle, u64)> {
    let st = a.ty.strip()?;
    let Type::Struct { name: Some(n), .. } = st.get() else {
        return None;
    };
    let agg = crate::formatters::Agg {
        ty: st.clone(),
        bytes: &a.bytes,
    };
    let base = crate::formatters::template_name(n);
    if base == "std::vector" && !n.starts_with("std::vector<bool") {
        let elem = agg.template_type(0)?;
        let es = elem.size()? as i64;
        let start = agg.word(&["_M_start"])?;
        return Some((elem, start.wrapping_add(i.wrapping_mul(es) as u64)));
    }
    if base == "std::array" {
        let elem = agg.template_type(0)?;
        let es = elem.size()? as i64;
        let (_, off) = agg.path(&["_M_elems"])?;
        let at = a.address()?.wrapping_add(off);
        return Some((elem, at.wrapping_add(i.wrapping_mul(es) as u64)));
    }
    if base == "std::deque" {
        let elem = agg.template_type(0)?;
        let es = elem.size()?.max(1);
        let per = if es < 512 { 512 / es } else { 1 };
        let start = agg.sub(&["_M_start"])?;
        let first = start.word(&["_M_first"])?;
        let cur = start.word(&["_M_cur"])?;
        let node = start.word(&["_M_node"])?;
        let k = (cur.wrapping_sub(first) / es).wrapping_add(i as u64);
        let mut w = [0u8; 8];
        ctx.read_memory(node + k / per * 8, &mut w).ok()?;
        return Some((elem, u64::from_le_bytes(w) + k % per * es));
    }
    None
}

fn cannot_subscript(a: &Value) -> ExprError {
    if a.ty.name().contains("::") && !a.ty.name().starts_with("std::") {
        // gdb's Rust parser words it its own way.
        return ExprError::other("Cannot subscript non-array type");
    }
    ExprError::Other(format!(
        "cannot subscript something of type `{}'",
        a.ty.name()
    ))
}

fn not_struct() -> ExprError {
    ExprError::other("Attempt to extract a component of a value that is not a structure.")
}

fn enum_signed(ty: &TypeHandle) -> bool {
    match ty.strip().as_ref().map(|t| t.get()) {
        Some(Type::Enum { signed, .. }) => *signed,
        _ => false,
    }
}

fn is_signed(ty: &TypeHandle) -> bool {
    match ty.shape() {
        Shape::Int { signed, .. } | Shape::Char { signed, .. } => signed,
        Shape::Enum(_) => enum_signed(ty),
        _ => false,
    }
}

/// A bit field's value: `bits` bits from bit `start` of `bytes`.
pub(crate) fn extract_bits(bytes: &[u8], start: u64, bits: u64, signed: bool) -> i128 {
    let mut raw = 0u128;
    for (i, b) in bytes.iter().enumerate().take(16) {
        raw |= (*b as u128) << (8 * i);
    }
    if bits == 0 || bits > 64 || start >= 128 {
        return 0;
    }
    let mut x = (raw >> start) & ((1u128 << bits) - 1);
    if signed && (x >> (bits - 1)) & 1 == 1 {
        x |= !((1u128 << bits) - 1);
    }
    x as i128
}

/// A member by name, searching anonymous struct and union members too; with the offset of
/// the anonymous member it was found in.
fn find_member(st: &TypeHandle, members: &[Member], name: &str) -> Option<(Member, u64)> {
    if let Some(m) = members.iter().find(|m| m.name.as_deref() == Some(name)) {
        return Some((m.clone(), 0));
    }
    // Rust tuple fields are named `__0`; `t.0` means them.
    if name.bytes().all(|b| b.is_ascii_digit()) {
        let rust = format!("__{name}");
        if let Some(m) = members
            .iter()
            .find(|m| m.name.as_deref() == Some(rust.as_str()))
        {
            return Some((m.clone(), 0));
        }
    }
    for m in members.iter().filter(|m| m.name.is_none()) {
        let inner = st.child(m.ty).strip()?;
        if let Type::Struct {
            members: inner_members,
            ..
        } = inner.get()
        {
            if let Some((found, off)) = find_member(&inner, inner_members, name) {
                return Some((found, off + m.offset));
            }
        }
    }
    None
}
