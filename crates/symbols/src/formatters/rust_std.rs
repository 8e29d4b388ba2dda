//! Rust's std types as rust-gdb (the providers shipped with rustc) shows them: `String`,
//! `&str`, slices, `Vec`, `VecDeque`, `HashMap`/`HashSet` (hashbrown's tables), `Rc`/`Arc`,
//! `Cell`/`RefCell`. Enums (`Option`, `Result`) need no formatter: their variant parts are
//! shown by the raw structure.
//!
//! hashbrown keeps its buckets below the control bytes, growing downwards: bucket `i`
//! holds its `(K, V)` at `ctrl - (i + 1) * size_of::<(K, V)>()` and is full when the top
//! bit of control byte `i` is clear.

use super::libstdcxx::Entries;
use super::{read, template_name, Agg};
use crate::show::{contiguous, read_into, At, Builder};
use crate::shown::{Child, Kind, Label, Shown};
use crate::types::Type;
use crate::value::{sign_extend, TypeHandle};

/// Bounds a walk over a corrupted table.
const MAX_BUCKETS: u64 = 1 << 24;

pub(crate) fn format(b: &Builder<'_>, name: &str, v: &Agg<'_>) -> Option<Shown> {
    let base = template_name(name);
    let last = base.rsplit("::").next().unwrap_or(base);
    let in_ = |krate: &str| base.starts_with(krate);
    match last {
        "String" if in_("alloc::") => string(b, v),
        "Vec" if in_("alloc::") => vec(b, v),
        "VecDeque" if in_("alloc::") => vec_deque(b, v),
        "HashMap" if in_("std::") => hash(b, "HashMap", v, true),
        "HashSet" if in_("std::") => hash(b, "HashSet", v, false),
        "BTreeMap" if in_("alloc::") => btree_map(b, v),
        "Rc" if in_("alloc::") => counted(b, "Rc", v, "value"),
        "Arc" if in_("alloc::") => counted(b, "Arc", v, "data"),
        "Cell" if in_("core::") => cell(b, v),
        "RefCell" if in_("core::") => ref_cell(b, v),
        _ if name.starts_with("&[") || name.starts_with("&mut [") => slice(b, name, v),
        _ => None,
    }
}

fn string(b: &Builder<'_>, v: &Agg<'_>) -> Option<Shown> {
    let len = v.word(&["vec", "len"])?;
    let (ptr, _) = v.pointer_in(&["vec", "buf"])?;
    Some(Shown::Text(b.rust_str(ptr, len)))
}

fn vec(b: &Builder<'_>, v: &Agg<'_>) -> Option<Shown> {
    let elem = v.template_named("T").or_else(|| v.template_type(0))?;
    let len = v.word(&["len"])?;
    let (ptr, _) = v.pointer_in(&["buf"])?;
    let es = elem.size()?;
    let (children, more) = if es == 0 {
        (Vec::new(), false)
    } else {
        b.elements(&elem, len, true, contiguous(b.ctx, ptr, es))
    };
    Some(Shown::printer(
        format!("Vec(size={len})"),
        Kind::Array,
        children,
        more,
    ))
}

fn vec_deque(b: &Builder<'_>, v: &Agg<'_>) -> Option<Shown> {
    let elem = v.template_named("T").or_else(|| v.template_type(0))?;
    let len = v.word(&["len"])?;
    let head = v.word(&["head"])?;
    let cap = v.word(&["buf", "cap"])?;
    let (ptr, _) = v.pointer_in(&["buf"])?;
    let es = elem.size()?;
    let (children, more) = if es == 0 || cap == 0 {
        (Vec::new(), false)
    } else {
        b.elements(&elem, len, true, |i, out| {
            read_into(b.ctx, ptr + (head + i) % cap * es, es, out)
        })
    };
    Some(Shown::printer(
        format!("VecDeque(size={len})"),
        Kind::Array,
        children,
        more,
    ))
}

fn hash(b: &Builder<'_>, what: &str, v: &Agg<'_>, map: bool) -> Option<Shown> {
    let raw = v.sub(&["table"])?;
    let pair = raw.template_named("T").or_else(|| raw.template_type(0))?;
    let items = raw.word(&["items"])?;
    let mask = raw.word(&["bucket_mask"])?;
    let (ctrl, _) = raw.pointer_in(&["ctrl"])?;
    let ps = pair.size()?;
    let (key, val) = tuple_fields(&pair)?;
    let summary = format!("{what}(size={items})");
    let buckets = if ctrl == 0 || items == 0 {
        0
    } else {
        (mask + 1).min(MAX_BUCKETS)
    };
    let mut control = vec![0u8; buckets as usize];
    if buckets > 0 && b.ctx.read_memory(ctrl, &mut control).is_err() {
        return None;
    }
    let mut entries = Entries::new(b, map);
    let mut set = Vec::new();
    let mut found = 0u64;
    for (i, c) in control.iter().enumerate() {
        if c & 0x80 != 0 {
            continue;
        }
        if found == items || entries.full() || (!map && found >= b.limit()) {
            break;
        }
        let at = ctrl - (i as u64 + 1) * ps;
        let bytes = read(b, &pair, at)?;
        let field = |(ty, off): &(TypeHandle, u64)| -> Shown {
            let size = ty.size().unwrap_or(0) as usize;
            match bytes.get(*off as usize..*off as usize + size) {
                Some(x) => b.value(ty, x, At::Inner),
                None => Shown::text("<optimized out>"),
            }
        };
        let k = field(&key);
        match (&val, map) {
            (Some(vf), true) => entries.pair(k, || field(vf)),
            _ => set.push(Child::new(Label::Positional, k)),
        }
        found += 1;
    }
    if map {
        return Some(entries.finish(summary));
    }
    // gdb writes `...` once its limit is reached, more elements or not.
    let more = found >= b.limit();
    Some(Shown::printer(summary, Kind::Array, set, more))
}

/// `BTreeMap(size=2) = {[1] = "one", [2] = "two"}`: an in-order walk of the B-tree. A node
/// is a `LeafNode` (`len`, `keys`, `vals`); an internal one (height > 0) continues with its
/// `edges` right after the leaf part.
fn btree_map(b: &Builder<'_>, v: &Agg<'_>) -> Option<Shown> {
    let len = v.word(&["length"])?;
    let summary = format!("BTreeMap(size={len})");
    let key = v.template_named("K").or_else(|| v.template_type(0))?;
    let val = v.template_named("V").or_else(|| v.template_type(1))?;
    let mut entries = Entries::new(b, true);
    let height = v.word(&["root", "height"]);
    let root = v.pointer_in(&["root", "node"]);
    if let (Some(height), Some((node, Some(leaf_ty)))) = (height, root) {
        if node != 0 && len > 0 {
            let leaf_ty = leaf_ty.strip()?;
            let leaf = Agg {
                ty: leaf_ty.clone(),
                bytes: &[],
            };
            let layout = BTreeLayout {
                len_at: leaf.path(&["len"])?.1,
                keys_at: leaf.path(&["keys"])?.1,
                vals_at: leaf.path(&["vals"])?.1,
                edges_at: super::align_up(leaf_ty.size()?, 8),
                key,
                val,
            };
            walk_btree(b, &layout, node, height, &mut entries, 0);
        }
    }
    Some(entries.finish(summary))
}

struct BTreeLayout {
    len_at: u64,
    keys_at: u64,
    vals_at: u64,
    edges_at: u64,
    key: TypeHandle,
    val: TypeHandle,
}

fn walk_btree(
    b: &Builder<'_>,
    l: &BTreeLayout,
    node: u64,
    height: u64,
    out: &mut Entries,
    depth: usize,
) -> Option<()> {
    if depth > 64 || node == 0 {
        return None;
    }
    let mut n = [0u8; 2];
    b.ctx.read_memory(node + l.len_at, &mut n).ok()?;
    let n = u16::from_le_bytes(n) as u64;
    let (ks, vs) = (l.key.size()?, l.val.size()?);
    for i in 0..=n {
        if height > 0 {
            let edge = super::read_word(b, node + l.edges_at + i * 8)?;
            walk_btree(b, l, edge, height - 1, out, depth + 1)?;
        }
        if i == n || out.full() {
            break;
        }
        let kb = read(b, &l.key, node + l.keys_at + i * ks)?;
        let vb = read(b, &l.val, node + l.vals_at + i * vs)?;
        out.pair(b.value(&l.key, &kb, At::Inner), || {
            b.value(&l.val, &vb, At::Inner)
        });
    }
    Some(())
}

/// A Rust tuple's first two fields (`__0`, `__1`; rustc may reorder them in memory).
#[allow(clippy::type_complexity)]
fn tuple_fields(pair: &TypeHandle) -> Option<((TypeHandle, u64), Option<(TypeHandle, u64)>)> {
    let st = pair.strip()?;
    let Type::Struct { members, .. } = st.get() else {
        return None;
    };
    let field = |n: &str| {
        members
            .iter()
            .find(|m| m.name.as_deref() == Some(n))
            .map(|m| (st.child(m.ty), m.offset))
    };
    Some((field("__0")?, field("__1")))
}

/// `Rc`/`Arc`: `Rc(strong=1, weak=0) = {value = 4, strong = 1, weak = 0}` (the weak count
/// without the one all strong references hold together).
fn counted(b: &Builder<'_>, what: &str, v: &Agg<'_>, field: &str) -> Option<Shown> {
    let (ptr, inner_ty) = v.pointer_in(&[])?;
    let inner_ty = inner_ty?.strip()?;
    let bytes = read(b, &inner_ty, ptr)?;
    let inner = Agg {
        ty: inner_ty,
        bytes: &bytes,
    };
    let strong = inner.word(&["strong"])?;
    let weak = inner.word(&["weak"])?.saturating_sub(1);
    let (vty, voff) = inner.path(&[field])?;
    let size = vty.size()? as usize;
    let value = b.value(
        &vty,
        bytes.get(voff as usize..voff as usize + size)?,
        At::Inner,
    );
    Some(Shown::printer(
        format!("{what}(strong={strong}, weak={weak})"),
        Kind::Struct,
        vec![
            Child::new(Label::Field("value".into()), value),
            Child::new(
                Label::Field("strong".into()),
                Shown::Text(strong.to_string()),
            ),
            Child::new(Label::Field("weak".into()), Shown::Text(weak.to_string())),
        ],
        false,
    ))
}

/// The `T` inside `UnsafeCell<T>` at `path`.
fn inner_value(b: &Builder<'_>, v: &Agg<'_>, path: &[&str]) -> Option<Shown> {
    let (ty, off) = v.path(path)?;
    let size = ty.size()? as usize;
    let bytes = v.bytes.get(off as usize..off as usize + size)?;
    Some(b.value(&ty, bytes, At::Inner))
}

fn cell(b: &Builder<'_>, v: &Agg<'_>) -> Option<Shown> {
    let value = inner_value(b, v, &["value", "value"])?;
    Some(Shown::printer(
        "Cell",
        Kind::Struct,
        vec![Child::new(Label::Field("value".into()), value)],
        false,
    ))
}

fn ref_cell(b: &Builder<'_>, v: &Agg<'_>) -> Option<Shown> {
    let borrow = sign_extend(v.word(&["borrow"])?, 8);
    let value = inner_value(b, v, &["value", "value"])?;
    Some(Shown::printer(
        format!("RefCell(borrow={borrow})"),
        Kind::Struct,
        vec![
            Child::new(Label::Field("value".into()), value),
            Child::new(
                Label::Field("borrow".into()),
                Shown::Text(borrow.to_string()),
            ),
        ],
        false,
    ))
}

/// `&[T]`: `&[T](size=3) = {1, 2, 3}`.
fn slice(b: &Builder<'_>, name: &str, v: &Agg<'_>) -> Option<Shown> {
    let members = match v.ty.get() {
        Type::Struct { members, .. } => members.clone(),
        _ => return None,
    };
    let (elem, ptr, len) = crate::show::slice_parts(&v.ty, &members, v.bytes)?;
    let es = elem.size()?.max(1);
    let (children, more) = b.elements(&elem, len, true, contiguous(b.ctx, ptr, es));
    Some(Shown::printer(
        format!("{name}(size={len})"),
        Kind::Array,
        children,
        more,
    ))
}
