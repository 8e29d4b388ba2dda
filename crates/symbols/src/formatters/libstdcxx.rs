//! libstdc++ (GCC's C++ library) as gdb 13's `printers.py` shows it: strings, sequences,
//! trees, hash tables, smart pointers, optional, variant, tuple and atomic.
//!
//! Node layouts (GCC 9 and later): a red-black tree node is `_Rb_tree_node_base` (colour,
//! parent, left, right: 32 bytes) followed by the value; a list node two pointers then the
//! value; a forward_list or hash-table node one pointer then the value; a deque keeps
//! buffers of `max(1, 512 / sizeof(T))` elements.

use super::{align_of, align_up, read, read_word, template_name, Agg};
use crate::show::{contiguous, At, Builder};
use crate::shown::{Child, Kind, Label, Shown};
use crate::value::{le_u64, TypeHandle};

/// Bounds a walk over a corrupted (cyclic) structure.
const MAX_NODES: u64 = 1 << 20;

pub(crate) fn format(b: &Builder<'_>, name: &str, v: &Agg<'_>) -> Option<Shown> {
    let base = template_name(name);
    match base {
        "std::__cxx11::basic_string" | "std::basic_string" => string(b, v),
        "std::vector" if name.starts_with("std::vector<bool") => vector_bool(b, v),
        "std::vector" => vector(b, v),
        "std::deque" => deque(b, v),
        "std::__cxx11::list" | "std::list" => list(b, base, v),
        "std::forward_list" => forward_list(b, base, v),
        "std::map" | "std::multimap" => tree(b, base, v, true),
        "std::set" | "std::multiset" => tree(b, base, v, false),
        "std::unordered_map" | "std::unordered_multimap" => hashtable(b, base, v, true),
        "std::unordered_set" | "std::unordered_multiset" => hashtable(b, base, v, false),
        "std::shared_ptr" | "std::weak_ptr" => shared_ptr(b, name, v),
        "std::unique_ptr" => unique_ptr(b, name, v),
        "std::optional" => optional(b, name, v),
        "std::variant" => variant(b, name, v),
        "std::tuple" => tuple(b, v),
        "std::atomic" => atomic(b, name, v),
        _ => None,
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        "element"
    } else {
        "elements"
    }
}

fn string(b: &Builder<'_>, v: &Agg<'_>) -> Option<Shown> {
    let ptr = v.word(&["_M_dataplus", "_M_p"])?;
    let len = v.word(&["_M_string_length"])?;
    let elem = v.template_type(0)?;
    if elem.size() != Some(1) {
        return None;
    }
    let mut bytes = vec![0u8; len.min(b.limit()).min(1 << 20) as usize];
    Some(Shown::Text(match b.ctx.read_memory(ptr, &mut bytes) {
        Ok(()) => b.string(&bytes, len > bytes.len() as u64),
        Err(_) => format!("<error: Cannot access memory at address {ptr:#x}>"),
    }))
}

fn vector(b: &Builder<'_>, v: &Agg<'_>) -> Option<Shown> {
    let elem = v.template_type(0)?;
    let start = v.word(&["_M_start"])?;
    let finish = v.word(&["_M_finish"])?;
    let end = v.word(&["_M_end_of_storage"])?;
    let es = elem.size()?.max(1);
    let len = finish.wrapping_sub(start) / es;
    let cap = end.wrapping_sub(start) / es;
    let summary = format!("std::vector of length {len}, capacity {cap}");
    let (children, more) = b.elements(&elem, len, true, contiguous(b.ctx, start, es));
    Some(Shown::printer(summary, Kind::Array, children, more))
}

fn vector_bool(b: &Builder<'_>, v: &Agg<'_>) -> Option<Shown> {
    let start = v.sub(&["_M_start"])?;
    let finish = v.sub(&["_M_finish"])?;
    let (sp, so) = (start.word(&["_M_p"])?, start.word(&["_M_offset"])?);
    let (fp, fo) = (finish.word(&["_M_p"])?, finish.word(&["_M_offset"])?);
    let end = v.word(&["_M_end_of_storage"])?;
    let len = (fp.wrapping_sub(sp) / 8 * 64 + fo).wrapping_sub(so);
    let cap = end.wrapping_sub(sp) / 8 * 64;
    let summary = format!("std::vector<bool> of length {len}, capacity {cap}");
    let bool_ty = TypeHandle::base("bool", 1, crate::types::Encoding::Bool);
    let mut words: Option<(u64, u64)> = None;
    let (children, more) = b.elements(&bool_ty, len.min(MAX_NODES * 64), true, |i, out| {
        let bit = so + i;
        let word_addr = sp + bit / 64 * 8;
        if words.map(|w| w.0) != Some(word_addr) {
            match read_word(b, word_addr) {
                Some(w) => words = Some((word_addr, w)),
                None => return false,
            }
        }
        let w = words.map(|w| w.1).unwrap_or(0);
        out.push(((w >> (bit % 64)) & 1) as u8);
        true
    });
    Some(Shown::printer(summary, Kind::Array, children, more))
}

fn deque(b: &Builder<'_>, v: &Agg<'_>) -> Option<Shown> {
    let elem = v.template_type(0)?;
    let es = elem.size()?.max(1);
    let per = if es < 512 { 512 / es } else { 1 };
    let start = v.sub(&["_M_start"])?;
    let finish = v.sub(&["_M_finish"])?;
    let (s_cur, s_first, s_node) = (
        start.word(&["_M_cur"])?,
        start.word(&["_M_first"])?,
        start.word(&["_M_node"])?,
    );
    let (f_cur, f_first, f_node) = (
        finish.word(&["_M_cur"])?,
        finish.word(&["_M_first"])?,
        finish.word(&["_M_node"])?,
    );
    // Elements before start in its buffer, and the buffers in between.
    let nodes = f_node.wrapping_sub(s_node) / 8;
    let len = (nodes * per + (f_cur.wrapping_sub(f_first)) / es)
        .wrapping_sub(s_cur.wrapping_sub(s_first) / es);
    let skip = s_cur.wrapping_sub(s_first) / es;
    let (children, more) = b.elements(&elem, len.min(MAX_NODES), true, |i, out| {
        let k = skip + i;
        let Some(buf) = read_word(b, s_node + k / per * 8) else {
            return false;
        };
        crate::show::read_into(b.ctx, buf + k % per * es, es, out)
    });
    Some(Shown::printer(
        format!("std::deque with {len} {}", plural(len)),
        Kind::Array,
        children,
        more,
    ))
}

/// Children `[0] = v`, `[1] = w`… of a linked structure: `next` gives the node after one,
/// `value_at` where a node's value is.
fn linked(
    b: &Builder<'_>,
    elem: &TypeHandle,
    first: u64,
    end: u64,
    value_offset: u64,
    next: impl Fn(u64) -> Option<u64>,
) -> (Vec<Child>, bool) {
    let mut children = Vec::new();
    let mut node = first;
    let mut i = 0u64;
    while node != end && node != 0 && i < MAX_NODES {
        let Some(bytes) = read(b, elem, node + value_offset) else {
            break;
        };
        children.push(Child::new(
            Label::Index(i as i64),
            b.value(elem, &bytes, At::Inner),
        ));
        i += 1;
        // gdb writes `...` once its limit is reached, more children or not.
        if i >= b.limit() {
            return (children, true);
        }
        match next(node) {
            Some(n) => node = n,
            None => break,
        }
    }
    (children, false)
}

fn list(b: &Builder<'_>, base: &str, v: &Agg<'_>) -> Option<Shown> {
    let elem = v.template_type(0)?;
    let first = v.word(&["_M_node", "_M_next"])?;
    // The header inside the list object ends the ring: it is the first node's `_M_prev`
    // (an empty list's `_M_next` is the header itself, whose `_M_prev` is itself too).
    let end = read_word(b, first + 8)?;
    let off = align_up(16, align_of(&elem));
    let (children, more) = linked(b, &elem, first, end, off, |n| read_word(b, n));
    if children.is_empty() {
        return Some(Shown::Text(format!("empty {base}")));
    }
    Some(Shown::printer(base, Kind::Struct, children, more))
}

fn forward_list(b: &Builder<'_>, base: &str, v: &Agg<'_>) -> Option<Shown> {
    let elem = v.template_type(0)?;
    let first = v.word(&["_M_head", "_M_next"])?;
    let off = align_up(8, align_of(&elem));
    let (children, more) = linked(b, &elem, first, 0, off, |n| read_word(b, n));
    if children.is_empty() {
        return Some(Shown::Text(format!("empty {base}")));
    }
    Some(Shown::printer(base, Kind::Struct, children, more))
}

/// `std::pair<const K, V>`'s layout from its two types: (value offset, pair size).
fn pair_layout(k: &TypeHandle, v: &TypeHandle) -> (u64, u64) {
    let ks = k.size().unwrap_or(0);
    let voff = align_up(ks, align_of(v));
    let align = align_of(k).max(align_of(v));
    (voff, align_up(voff + v.size().unwrap_or(0), align))
}

fn tree(b: &Builder<'_>, base: &str, v: &Agg<'_>, map: bool) -> Option<Shown> {
    let key = v.template_type(0)?;
    let val = if map { Some(v.template_type(1)?) } else { None };
    let count = v.word(&["_M_node_count"])?;
    let header = v.sub(&["_M_header"])?;
    let leftmost = header.word(&["_M_left"])?;
    let parent = header.word(&["_M_parent"])?;
    // The header's own address: the root's parent.
    let end = if parent == 0 {
        leftmost
    } else {
        read_word(b, parent + 8)?
    };
    let summary = format!("{base} with {count} {}", plural(count));
    let mut out = Entries::new(b, map);
    let mut node = leftmost;
    let mut i = 0u64;
    let value_at = 32;
    while node != end && node != 0 && i < count.min(MAX_NODES) && !out.full() {
        let kb = read(b, &key, node + value_at)?;
        let k = b.value(&key, &kb, At::Inner);
        match &val {
            Some(vt) => {
                let (voff, _) = pair_layout(&key, vt);
                let vb = read(b, vt, node + value_at + voff)?;
                out.pair(k, || b.value(vt, &vb, At::Inner));
            }
            None => out.item(k),
        }
        i += 1;
        node = successor(b, node)?;
    }
    Some(out.finish(summary))
}

/// The children of a set (`[0] = v`) or map (`[k] = v`) under gdb's element limit, which
/// counts a map's keys and values one by one: a value past the limit shows as `...`, and
/// reaching the limit writes `...` after the last child.
pub(crate) struct Entries {
    map: bool,
    limit: u64,
    taken: u64,
    children: Vec<Child>,
    more: bool,
}

impl Entries {
    pub(crate) fn new(b: &Builder<'_>, map: bool) -> Entries {
        Entries {
            map,
            limit: b.limit(),
            taken: 0,
            children: Vec::new(),
            more: false,
        }
    }

    /// No more children are to be taken.
    pub(crate) fn full(&self) -> bool {
        self.more || self.taken >= self.limit
    }

    /// A set's element `[i] = v`.
    pub(crate) fn item(&mut self, v: Shown) {
        let i = self.children.len() as i64;
        self.children.push(Child::new(Label::Index(i), v));
        self.taken += 1;
        self.more = self.taken >= self.limit;
    }

    /// A map entry `[k] = v`; `v` is made only when the limit leaves room for it.
    pub(crate) fn pair(&mut self, k: Shown, v: impl FnOnce() -> Shown) {
        self.taken += 1;
        if self.taken >= self.limit {
            self.children
                .push(Child::new(Label::Key(Box::new(k)), Shown::text("...")));
            self.taken = self.limit;
            return;
        }
        self.children.push(Child::new(Label::Key(Box::new(k)), v()));
        self.taken += 1;
        self.more = self.taken >= self.limit;
    }

    pub(crate) fn finish(self, summary: String) -> Shown {
        let kind = if self.map { Kind::Map } else { Kind::Struct };
        Shown::printer(summary, kind, self.children, self.more)
    }
}

/// The in-order successor of a red-black tree node (parent at +8, left +16, right +24).
fn successor(b: &Builder<'_>, mut node: u64) -> Option<u64> {
    let right = read_word(b, node + 24)?;
    if right != 0 {
        node = right;
        loop {
            let left = read_word(b, node + 16)?;
            if left == 0 {
                return Some(node);
            }
            node = left;
        }
    }
    let mut parent = read_word(b, node + 8)?;
    while node == read_word(b, parent + 24)? {
        node = parent;
        parent = read_word(b, parent + 8)?;
    }
    if read_word(b, node + 24)? != parent {
        node = parent;
    }
    Some(node)
}

fn hashtable(b: &Builder<'_>, base: &str, v: &Agg<'_>, map: bool) -> Option<Shown> {
    let key = v.template_type(0)?;
    let val = if map { Some(v.template_type(1)?) } else { None };
    let count = v.word(&["_M_element_count"])?;
    let first = v.word(&["_M_before_begin", "_M_nxt"])?;
    let summary = format!("{base} with {count} {}", plural(count));
    let value_ty_align = match &val {
        Some(vt) => align_of(&key).max(align_of(vt)),
        None => align_of(&key),
    };
    let off = align_up(8, value_ty_align);
    let mut out = Entries::new(b, map);
    let mut node = first;
    let mut i = 0u64;
    while node != 0 && i < count.min(MAX_NODES) && !out.full() {
        let kb = read(b, &key, node + off)?;
        let k = b.value(&key, &kb, At::Inner);
        match &val {
            Some(vt) => {
                let (voff, _) = pair_layout(&key, vt);
                let vb = read(b, vt, node + off + voff)?;
                out.pair(k, || b.value(vt, &vb, At::Inner));
            }
            None => out.item(k),
        }
        i += 1;
        node = read_word(b, node)?;
    }
    Some(out.finish(summary))
}

fn shared_ptr(b: &Builder<'_>, name: &str, v: &Agg<'_>) -> Option<Shown> {
    let ptr = v.word(&["_M_ptr"])?;
    let counts = v.word(&["_M_refcount", "_M_pi"])?;
    let state = if counts == 0 {
        "empty".to_string()
    } else {
        // _Sp_counted_base: vtable pointer, then two ints.
        let w = read_word(b, counts + 8)?;
        let (use_count, weak) = (w as u32 as i32, (w >> 32) as u32 as i32);
        let weak = weak - i32::from(use_count > 0);
        if use_count == 0 {
            format!("expired, weak count {weak}")
        } else {
            format!("use count {use_count}, weak count {weak}")
        }
    };
    Some(Shown::printer(
        format!("{name} ({state})"),
        Kind::Struct,
        vec![Child::new(
            Label::Field("get()".into()),
            pointer_text(b, ptr),
        )],
        false,
    ))
}

fn pointer_text(b: &Builder<'_>, ptr: u64) -> Shown {
    Shown::Text(b.address(ptr))
}

fn unique_ptr(b: &Builder<'_>, name: &str, v: &Agg<'_>) -> Option<Shown> {
    // The pointer is the tuple's first element, at the start of the object.
    let ptr = le_u64(v.bytes.get(..8)?);
    let shown_name = match name.find(", std::default_delete") {
        Some(i) => format!("{}>", &name[..i]),
        None => name.to_string(),
    };
    Some(Shown::printer(
        shown_name,
        Kind::Struct,
        vec![Child::new(
            Label::Field("get()".into()),
            pointer_text(b, ptr),
        )],
        false,
    ))
}

fn optional(b: &Builder<'_>, name: &str, v: &Agg<'_>) -> Option<Shown> {
    let elem = v.template_type(0)?;
    let (_, engaged_at) = v.find("_M_engaged")?;
    let engaged = *v.bytes.get(engaged_at as usize)? != 0;
    if !engaged {
        return Some(Shown::Text(format!("{name} [no contained value]")));
    }
    let (_, at) = v.find("_M_payload").and_then(|_| {
        // The value is the payload union's first member, at its start.
        v.path(&["_M_payload", "_M_payload"])
    })?;
    let size = elem.size()? as usize;
    let bytes = v.bytes.get(at as usize..at as usize + size)?;
    Some(Shown::printer(
        name,
        Kind::Struct,
        vec![Child::new(
            Label::Key(Box::new(Shown::text("contained value"))),
            b.value(&elem, bytes, At::Inner),
        )],
        false,
    ))
}

fn variant(b: &Builder<'_>, name: &str, v: &Agg<'_>) -> Option<Shown> {
    let alts = v.template_types();
    let (ity, at) = v.find("_M_index")?;
    let isize_ = ity.size().unwrap_or(1) as usize;
    let raw = le_u64(v.bytes.get(at as usize..at as usize + isize_)?);
    let npos = if isize_ >= 8 {
        u64::MAX
    } else {
        (1u64 << (isize_ * 8)) - 1
    };
    if raw == npos {
        return Some(Shown::Text(format!("{name} [no contained value]")));
    }
    let alt = alts.get(raw as usize)?;
    // Every alternative starts at the storage's beginning.
    let size = alt.size()? as usize;
    let bytes = v.bytes.get(..size)?;
    Some(Shown::printer(
        format!("{name} [index {raw}]"),
        Kind::Array,
        vec![Child::new(
            Label::Positional,
            b.value(alt, bytes, At::Inner),
        )],
        false,
    ))
}

fn tuple(b: &Builder<'_>, v: &Agg<'_>) -> Option<Shown> {
    // Each element is a `_Head_base<I, T>` base somewhere in the `_Tuple_impl` chain.
    let mut found: Vec<(i64, TypeHandle, u64)> = Vec::new();
    collect_heads(&v.ty, 0, &mut found, 0);
    if found.is_empty() {
        return Some(Shown::text("An empty std::tuple"));
    }
    found.sort_by_key(|f| f.0);
    let children = found
        .iter()
        .filter_map(|(i, ty, off)| {
            let size = ty.size()? as usize;
            let bytes = v.bytes.get(*off as usize..*off as usize + size)?;
            Some(Child::new(
                Label::Index(i + 1),
                b.value(ty, bytes, At::Inner),
            ))
        })
        .collect();
    Some(Shown::printer(
        "std::tuple containing",
        Kind::Struct,
        children,
        false,
    ))
}

fn collect_heads(ty: &TypeHandle, base: u64, out: &mut Vec<(i64, TypeHandle, u64)>, depth: usize) {
    use crate::types::{TemplateArg, Type};
    if depth > 64 {
        return;
    }
    let Some(st) = ty.strip() else { return };
    let Type::Struct {
        name,
        members,
        info,
        ..
    } = st.get()
    else {
        return;
    };
    if name
        .as_deref()
        .is_some_and(|n| n.starts_with("std::_Head_base<"))
    {
        let idx = info.templates.iter().find_map(|(_, a)| match a {
            TemplateArg::Value(v, _) => Some(*v),
            TemplateArg::Type(_) => None,
        });
        if let (Some(i), Some(m)) = (idx, members.iter().find(|m| !m.is_static())) {
            out.push((i, st.child(m.ty), base + m.offset));
        }
        return;
    }
    for m in members.iter().filter(|m| m.is_base()) {
        collect_heads(&st.child(m.ty), base + m.offset, out, depth + 1);
    }
}

fn atomic(b: &Builder<'_>, name: &str, v: &Agg<'_>) -> Option<Shown> {
    let elem = v.template_type(0)?;
    let (ty, at) = v.find("_M_i").or_else(|| v.find("_M_p"))?;
    let size = ty.size()? as usize;
    let bytes = v.bytes.get(at as usize..at as usize + size)?;
    let text = crate::shown::render(
        &b.value(&elem, bytes, At::Inner),
        &crate::shown::Style {
            language: crate::types::Language::Cpp,
            pretty: false,
            repeats: b.opts.repeats,
        },
    );
    Some(Shown::Text(format!("{name} = {{ {text} }}")))
}
