//! Modules parsed once per thread of the debugger: every [`Program`](crate::Program) that
//! loads the same file at the same load bias shares one parsed [`Module`].
//!
//! Why: a replayed process tree holds one replay (and one `Program`) per process, and the
//! processes of a tree map the same files at the same addresses (forked, no ASLR). Parsing
//! a library's DWARF (libc's separate debug file: hundreds of milliseconds) again for each
//! process made switching to another process cost as much as the parse.
//!
//! Invariants: a [`Module`] is immutable once loaded (what differs between programs, the
//! loader's name for it, is kept by the program), so sharing one is invisible. An entry is
//! found only for the same file contents as far as the file system says (device, inode,
//! size and modification time) and the same bias. The cache holds weak references: a
//! module lives as long as some program uses it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::rc::{Rc, Weak};

use crate::error::SymbolsError;
use crate::module::Module;

/// What names one parse: the file (path and identity) and the load bias.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    path: PathBuf,
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    bias: u64,
}

thread_local! {
    static PARSED: RefCell<HashMap<Key, Weak<Module>>> = RefCell::new(HashMap::new());
}

/// The module of `path` at `bias`: the one parsed already when a program still uses it,
/// else parsed now (and kept for the next program while one uses it).
pub(crate) fn load(path: &Path, bias: u64) -> Result<Rc<Module>, SymbolsError> {
    // A file whose identity cannot be read is parsed (and fails) as before, not shared.
    let Ok(meta) = std::fs::metadata(path) else {
        return Module::load(path, bias).map(Rc::new);
    };
    let key = Key {
        path: path.to_path_buf(),
        dev: meta.dev(),
        ino: meta.ino(),
        size: meta.size(),
        mtime: (meta.mtime(), meta.mtime_nsec()),
        bias,
    };
    if let Some(m) = PARSED.with(|p| p.borrow().get(&key).and_then(Weak::upgrade)) {
        return Ok(m);
    }
    let m = Rc::new(Module::load(path, bias)?);
    PARSED.with(|p| {
        let mut p = p.borrow_mut();
        // (Entries of modules no program uses any more are dropped on the way.)
        p.retain(|_, w| w.strong_count() > 0);
        p.insert(key, Rc::downgrade(&m));
    });
    Ok(m)
}
