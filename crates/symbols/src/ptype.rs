//! `ptype` and `whatis` text, as gdb 13 writes them: structs, unions and classes with their
//! bases, access sections, static members and methods (`[with T = short]` for templates),
//! enums with their values, and libstdc++'s names shortened the way its type printers do
//! (`std::vector<int>` for `std::vector<int, std::allocator<int> >`).

use crate::types::{Access, AggregateKind, Language, MemberKind, TemplateArg, Type};
use crate::value::TypeHandle;

/// `whatis`: the type's name, with libstdc++'s default template arguments left out (Rust:
/// its Rust spelling).
pub fn whatis(ty: &TypeHandle, lang: Language) -> String {
    if lang == Language::Rust {
        return ty.rust_name();
    }
    cxx_names(&ty.name())
}

/// `ptype`: the type with typedefs resolved and an aggregate or enum spelled out; pointers
/// and references keep their declarator after it (`} *`, `} &`). Rust types are written
/// as rust-gdb writes them.
pub fn ptype(ty: &TypeHandle, lang: Language) -> String {
    if lang == Language::Rust {
        return rust_ptype(ty);
    }
    let mut suffix = String::new();
    let mut t = ty.strip().unwrap_or(ty.clone());
    while let Type::Pointer {
        pointee: Some(p),
        is_reference,
        rvalue,
        ..
    } = t.get().clone()
    {
        let inner = t.child(p);
        let inner = inner.strip().unwrap_or(inner);
        if !matches!(inner.get(), Type::Struct { .. } | Type::Enum { .. }) {
            break;
        }
        let sigil = match (is_reference, rvalue) {
            (true, true) => " &&",
            (true, false) => " &",
            _ => " *",
        };
        suffix.insert_str(0, sigil);
        t = inner;
    }
    format!("{}{suffix}", expand(&t))
}

fn access_word(a: Access) -> &'static str {
    match a {
        Access::Public => "public",
        Access::Protected => "protected",
        Access::Private => "private",
    }
}

/// `int x` from a member's type and name, in C declarator syntax.
fn declaration(type_name: &str, name: &str) -> String {
    let tn = type_name;
    if let Some(i) = tn.find(" [") {
        format!("{} {name}{}", &tn[..i], &tn[i + 1..])
    } else if tn.contains("(*)") {
        tn.replacen("(*)", &format!("(*{name})"), 1)
    } else if tn.ends_with('*') || tn.ends_with('&') {
        format!("{tn}{name}")
    } else {
        format!("{tn} {name}")
    }
}

fn expand(t: &TypeHandle) -> String {
    match t.get().clone() {
        Type::Struct {
            name,
            kind,
            members,
            info,
            ..
        } => {
            let kw = match kind {
                AggregateKind::Union => "union",
                AggregateKind::Class => "class",
                AggregateKind::Struct => "struct",
            };
            // Template type arguments print by their parameter's name inside the body.
            let params: Vec<(String, String)> = info
                .templates
                .iter()
                .filter_map(|(n, a)| match a {
                    TemplateArg::Type(t2) => Some((n.clone(), t.child(*t2).name())),
                    TemplateArg::Value(..) => None,
                })
                .collect();
            let spell = |ty: &TypeHandle| -> String {
                let n = ty.name();
                for (p, arg) in &params {
                    if p.is_empty() {
                        continue;
                    }
                    if n == *arg {
                        return p.clone();
                    }
                    // `short [3]`, `short *`: the argument inside a declarator.
                    if let Some(rest) = n.strip_prefix(arg.as_str()) {
                        if rest.starts_with(' ') {
                            return format!("{p}{rest}");
                        }
                    }
                }
                cxx_names(&n)
            };
            let mut out = String::from(kw);
            if let Some(n) = &name {
                out.push(' ');
                out.push_str(n);
            }
            if !params.is_empty() && params.iter().all(|(p, _)| !p.is_empty()) {
                let with: Vec<String> = params.iter().map(|(p, a)| format!("{p} = {a}")).collect();
                out.push_str(&format!(" [with {}]", with.join(", ")));
            }
            let bases: Vec<String> = members
                .iter()
                .filter(|m| m.is_base())
                .map(|m| {
                    let virt = matches!(m.kind, MemberKind::Base { virtual_base: true });
                    format!(
                        "{}{} {}",
                        access_word(m.access),
                        if virt { " virtual" } else { "" },
                        t.child(m.ty).name()
                    )
                })
                .collect();
            if !bases.is_empty() {
                out.push_str(&format!(" : {}", bases.join(", ")));
            }
            out.push_str(" {\n");
            // gdb labels sections only when the keyword's default access would mislead.
            let fields: Vec<_> = members
                .iter()
                .filter(|m| !m.is_base() && !m.artificial)
                .collect();
            let methods: Vec<_> = info.methods.iter().filter(|m| !m.artificial).collect();
            let need_labels = match kind {
                AggregateKind::Class => fields
                    .iter()
                    .map(|m| m.access)
                    .chain(methods.iter().map(|m| m.access))
                    .any(|a| a != Access::Private),
                _ => fields
                    .iter()
                    .map(|m| m.access)
                    .chain(methods.iter().map(|m| m.access))
                    .any(|a| a != Access::Public),
            };
            let mut section: Option<Access> = None;
            let label = |out: &mut String, a: Access, section: &mut Option<Access>| {
                if *section != Some(a) {
                    out.push_str(&format!("  {}:\n", access_word(a)));
                    *section = Some(a);
                }
            };
            for m in &fields {
                if need_labels {
                    label(&mut out, m.access, &mut section);
                }
                let decl = declaration(&spell(&t.child(m.ty)), m.name.as_deref().unwrap_or(""));
                let stat = if m.is_static() { "static " } else { "" };
                match m.bits {
                    Some((_, bits)) => out.push_str(&format!("    {stat}{decl} : {bits};\n")),
                    None => out.push_str(&format!("    {stat}{decl};\n")),
                }
            }
            if !methods.is_empty() && section.is_some() {
                out.push('\n');
            }
            let short = name
                .as_deref()
                .map(|n| {
                    let plain = n.split('<').next().unwrap_or(n);
                    plain.rsplit("::").next().unwrap_or(plain).to_string()
                })
                .unwrap_or_default();
            for f in &methods {
                label(&mut out, f.access, &mut section);
                let params: Vec<String> = f.params.iter().map(|p| spell(&t.child(*p))).collect();
                let params = if params.is_empty() {
                    "void".to_string()
                } else {
                    params.join(", ")
                };
                let structor = f.name == short || f.name.strip_prefix('~') == Some(short.as_str());
                let ret = match (f.ret, structor) {
                    (_, true) => String::new(),
                    (Some(r), false) => format!("{} ", spell(&t.child(r))),
                    (None, false) => "void ".to_string(),
                };
                out.push_str(&format!(
                    "    {}{}{ret}{}({params}){};\n",
                    if f.is_static { "static " } else { "" },
                    if f.is_virtual { "virtual " } else { "" },
                    f.name,
                    if f.is_const { " const" } else { "" },
                ));
            }
            out.push('}');
            out
        }
        Type::Enum {
            name,
            values,
            scoped,
            cpp,
            underlying,
            ..
        } => {
            let mut out = String::from("enum ");
            if scoped {
                out.push_str("class ");
            }
            if let Some(n) = &name {
                out.push_str(n);
                out.push(' ');
            }
            if let (true, Some(u)) = (cpp, underlying) {
                out.push_str(&format!(": {} ", t.child(u).name()));
            }
            // gdb writes a value only where it is not the previous one plus one.
            let mut next = 0i64;
            let vals: Vec<String> = values
                .iter()
                .map(|(n, v)| {
                    let s = if *v == next {
                        n.clone()
                    } else {
                        format!("{n} = {v}")
                    };
                    next = v.wrapping_add(1);
                    s
                })
                .collect();
            out.push_str(&format!("{{{}}}", vals.join(", ")));
            out
        }
        _ => cxx_names(&t.name()),
    }
}

/// A Rust type as rust-gdb's `ptype` writes it: structs, tuple structs and enums spelled out
/// with their fields' Rust types; pointers and tuples by name.
fn rust_ptype(ty: &TypeHandle) -> String {
    let t = ty.strip().unwrap_or(ty.clone());
    let Type::Struct {
        name,
        members,
        info,
        ..
    } = t.get().clone()
    else {
        return t.rust_name();
    };
    let name = name.unwrap_or_default();
    if name.starts_with('(') {
        return name;
    }
    let fields = |st: &TypeHandle, members: &[crate::types::Member]| -> (bool, Vec<String>) {
        let tuple = !members.is_empty()
            && members
                .iter()
                .all(|m| m.name.as_deref().is_some_and(|n| n.starts_with("__")));
        let list = members
            .iter()
            .filter(|m| !m.is_static())
            .map(|m| {
                let tn = st.child(m.ty).rust_name();
                match (&m.name, tuple) {
                    (Some(n), false) => format!("{n}: {tn}"),
                    _ => tn,
                }
            })
            .collect();
        (tuple, list)
    };
    if let Some(part) = &info.variants {
        let mut out = format!("enum {name} {{\n");
        for v in &part.variants {
            let vname = v.member.name.clone().unwrap_or_default();
            let vty = t.child(v.member.ty);
            let vty = vty.strip().unwrap_or(vty);
            let (tuple, list) = match vty.get() {
                Type::Struct { members, .. } => fields(&vty, members),
                _ => (false, Vec::new()),
            };
            let shown = match (list.is_empty(), tuple) {
                (true, _) => vname,
                (false, true) => format!("{vname}({})", list.join(", ")),
                (false, false) => format!("{vname}{{{}}}", list.join(", ")),
            };
            out.push_str(&format!("  {shown},\n"));
        }
        out.push('}');
        return out;
    }
    let (tuple, list) = fields(&t, &members);
    let (open, close) = if tuple { ("(", ")") } else { ("{", "}") };
    let mut out = format!("struct {name} {open}\n");
    for f in list {
        out.push_str(&format!("  {f},\n"));
    }
    out.push_str(close);
    out
}

/// libstdc++'s type printers: `std::basic_string<char, …>` is `std::string`, and the
/// containers' default template arguments (allocators, comparators, hashes) are left out.
pub fn cxx_names(name: &str) -> String {
    if !name.contains("std::") {
        return name.to_string();
    }
    let (out, _) = rewrite(name.as_bytes(), 0);
    out
}

/// Rewrites `s` from `i` up to the end or an unbalanced `,` or `>`: returns the text and
/// where it stopped.
fn rewrite(s: &[u8], mut i: usize) -> (String, usize) {
    let mut out = String::new();
    while i < s.len() {
        let c = s[i] as char;
        match c {
            ',' | '>' => return (out, i),
            '<' => {
                // The template name is the identifier path just written.
                let start = out
                    .rfind(|ch: char| !(ch.is_alphanumeric() || ch == '_' || ch == ':'))
                    .map(|p| p + 1)
                    .unwrap_or(0);
                let tname = out[start..].to_string();
                let mut args = Vec::new();
                i += 1;
                loop {
                    let (arg, j) = rewrite(s, i);
                    args.push(arg.trim().to_string());
                    i = j;
                    if i >= s.len() || s[i] == b'>' {
                        i += 1;
                        break;
                    }
                    i += 1;
                }
                out.truncate(start);
                out.push_str(&simplify(&tname, args));
                continue;
            }
            _ => out.push(c),
        }
        i += 1;
    }
    (out, i)
}

fn same(a: &str, b: &str) -> bool {
    let norm = |s: &str| s.replace(' ', "").replace("const", "");
    norm(a) == norm(b)
}

/// `name<args>` with defaults dropped as libstdc++'s printers do.
fn simplify(name: &str, mut args: Vec<String>) -> String {
    let base = name
        .strip_prefix("std::__cxx11::")
        .map(|r| format!("std::{r}"))
        .unwrap_or_else(|| name.to_string());
    let first = args.first().cloned().unwrap_or_default();
    let second = args.get(1).cloned().unwrap_or_default();
    let alloc = |t: &str| format!("std::allocator<{t}>");
    let pair = format!("std::pair<const {first}, {second}>");
    // (the defaults, how many leading arguments are always shown)
    let defaults: Option<(Vec<String>, usize)> = match base.as_str() {
        "std::basic_string" if same(&first, "char") => {
            let traits = "std::char_traits<char>".to_string();
            if args.len() <= 1 || same(&args[1], &traits) {
                return "std::string".into();
            }
            None
        }
        "std::vector" | "std::list" | "std::deque" | "std::forward_list" => {
            Some((vec![first.clone(), alloc(&first)], 1))
        }
        "std::set" | "std::multiset" => Some((
            vec![first.clone(), format!("std::less<{first}>"), alloc(&first)],
            1,
        )),
        "std::map" | "std::multimap" => Some((
            vec![
                first.clone(),
                second.clone(),
                format!("std::less<{first}>"),
                alloc(&pair),
            ],
            2,
        )),
        "std::unordered_set" | "std::unordered_multiset" => Some((
            vec![
                first.clone(),
                format!("std::hash<{first}>"),
                format!("std::equal_to<{first}>"),
                alloc(&first),
            ],
            1,
        )),
        "std::unordered_map" | "std::unordered_multimap" => Some((
            vec![
                first.clone(),
                second.clone(),
                format!("std::hash<{first}>"),
                format!("std::equal_to<{first}>"),
                alloc(&pair),
            ],
            2,
        )),
        "std::unique_ptr" => Some((
            vec![first.clone(), format!("std::default_delete<{first}>")],
            1,
        )),
        _ => None,
    };
    let shown_name = if defaults.is_some() {
        base
    } else {
        name.to_string()
    };
    if let Some((d, required)) = defaults {
        while args.len() > required {
            let k = args.len() - 1;
            match d.get(k) {
                Some(def) if same(&args[k], def) => {
                    args.pop();
                }
                _ => break,
            }
        }
    }
    let joined = args.join(", ");
    if joined.ends_with('>') {
        format!("{shown_name}<{joined} >")
    } else {
        format!("{shown_name}<{joined}>")
    }
}

#[cfg(test)]
mod tests {
    use super::cxx_names;

    #[test]
    fn libstdcxx_names_lose_their_defaults() {
        let s = "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >";
        assert_eq!(cxx_names(s), "std::string");
        assert_eq!(
            cxx_names("std::vector<int, std::allocator<int> >"),
            "std::vector<int>"
        );
        assert_eq!(
            cxx_names(&format!(
                "std::map<{s}, int, std::less<{s}>, std::allocator<std::pair<{s} const, int> > >"
            )),
            "std::map<std::string, int>"
        );
        assert_eq!(
            cxx_names("std::__cxx11::list<int, std::allocator<int> >"),
            "std::list<int>"
        );
        assert_eq!(
            cxx_names("const std::vector<std::vector<int, std::allocator<int> >, std::allocator<std::vector<int, std::allocator<int> > > > &"),
            "const std::vector<std::vector<int> > &"
        );
        assert_eq!(cxx_names("geo::Ring<short, 3>"), "geo::Ring<short, 3>");
    }
}
