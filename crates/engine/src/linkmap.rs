//! The dynamic loader's list of loaded objects (`r_debug` → `link_map`), read from the
//! program's memory: it names libraries as gdb does (`/lib/x86_64-linux-gnu/libc.so.6`),
//! where /proc shows the path with its symlinks resolved (`/usr/lib/…`).
//!
//! Layout (glibc, x86-64): the executable's `_DYNAMIC` array holds a `DT_DEBUG` entry that the
//! loader points at its `struct r_debug { int r_version; struct link_map *r_map; … }`; each
//! `struct link_map { ElfW(Addr) l_addr; char *l_name; ElfW(Dyn) *l_ld; link_map *l_next; … }`
//! gives a load bias and a name. Until the loader has run, `DT_DEBUG` is 0 and there is no list.

use hindsight_control::Inferior;

const DT_NULL: u64 = 0;
const DT_DEBUG: u64 = 21;
/// Bounds against a corrupt list.
const MAX_DYN: usize = 512;
const MAX_OBJECTS: usize = 4096;

fn read_u64(inf: &Inferior, addr: u64) -> Option<u64> {
    let mut b = [0u8; 8];
    inf.read_memory(addr, &mut b).ok()?;
    Some(u64::from_le_bytes(b))
}

fn read_c_string(inf: &Inferior, addr: u64) -> Option<String> {
    let mut out = Vec::new();
    let mut chunk = [0u8; 64];
    let mut a = addr;
    while out.len() < 4096 {
        inf.read_memory(a, &mut chunk).ok()?;
        match chunk.iter().position(|&c| c == 0) {
            Some(i) => {
                out.extend_from_slice(&chunk[..i]);
                return Some(String::from_utf8_lossy(&out).into_owned());
            }
            None => out.extend_from_slice(&chunk),
        }
        a += chunk.len() as u64;
    }
    None
}

/// (load bias, name) of every object in the loader's list with a name (the executable's is
/// empty), given the runtime address of the executable's `_DYNAMIC`.
pub(crate) fn loaded_objects(inf: &Inferior, dynamic: u64) -> Vec<(u64, String)> {
    link_maps(inf, dynamic)
        .into_iter()
        .filter(|(_, _, name)| !name.is_empty())
        .map(|(_, bias, name)| (bias, name))
        .collect()
}

/// Every object in the loader's list, in load order: (address of its `struct link_map`, load
/// bias, name — empty for the executable).
pub(crate) fn link_maps(inf: &Inferior, dynamic: u64) -> Vec<(u64, u64, String)> {
    let mut r_debug = 0;
    for i in 0..MAX_DYN {
        let entry = dynamic + (i as u64) * 16;
        let (Some(tag), Some(val)) = (read_u64(inf, entry), read_u64(inf, entry + 8)) else {
            return Vec::new();
        };
        if tag == DT_NULL {
            break;
        }
        if tag == DT_DEBUG {
            r_debug = val;
            break;
        }
    }
    let mut out = Vec::new();
    let mut map = if r_debug == 0 {
        0
    } else {
        read_u64(inf, r_debug + 8).unwrap_or(0)
    };
    while map != 0 && out.len() < MAX_OBJECTS {
        let (Some(l_addr), Some(l_name), Some(next)) = (
            read_u64(inf, map),
            read_u64(inf, map + 8),
            read_u64(inf, map + 24),
        ) else {
            break;
        };
        out.push((map, l_addr, read_c_string(inf, l_name).unwrap_or_default()));
        map = next;
    }
    out
}
