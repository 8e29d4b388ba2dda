//! Where traces live and how they are named: `$HINDSIGHT_DIR` (default
//! `~/.local/share/hindsight`), one directory per trace named `<program>-<N>`, and a
//! `latest-trace` symlink to the newest.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::SystemTime;

use crate::error::TraceError;

/// The directory that holds traces: `$HINDSIGHT_DIR`, else `$HOME/.local/share/hindsight`
/// (an error if neither is set).
pub fn default_root() -> Result<PathBuf, TraceError> {
    if let Some(d) = std::env::var_os("HINDSIGHT_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(d));
    }
    match std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        Some(h) => Ok(PathBuf::from(h).join(".local/share/hindsight")),
        None => Err(TraceError::NotFound(
            "neither HINDSIGHT_DIR nor HOME is set: no place for traces".into(),
        )),
    }
}

/// A fresh trace path under `root` for a recording of `program_basename`:
/// `root/<basename>-<N>` with N the smallest number not in use. Creates `root` (readable by
/// its owner only when it is created here), not the trace directory itself (whoever creates
/// it must still refuse an existing one).
pub fn new_trace_path(root: &Path, program_basename: &str) -> Result<PathBuf, TraceError> {
    if !root.is_dir() {
        if let Some(parent) = root.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| TraceError::io(parent, "creating", e))?;
        }
        match crate::writer::create_private_dir(root) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(TraceError::io(root, "creating", e)),
        }
    }
    let mut base: String = program_basename
        .chars()
        .map(|c| if c == '/' || c.is_control() { '_' } else { c })
        .collect();
    if base.is_empty() || base == "." || base == ".." {
        base = "trace".into();
    }
    (0u32..)
        .map(|n| root.join(format!("{base}-{n}")))
        .find(|p| std::fs::symlink_metadata(p).is_err())
        .ok_or_else(|| TraceError::NotFound(format!("no free trace name in {}", root.display())))
}

/// Points `root/latest-trace` at `trace`, replacing any previous link atomically (a new link
/// is made under a temporary name, then renamed over it). The link is relative when `trace` is
/// directly under `root`, so that the store can be moved.
pub fn set_latest(root: &Path, trace: &Path) -> Result<(), TraceError> {
    static SERIAL: AtomicU32 = AtomicU32::new(0);
    let link = root.join("latest-trace");
    let tmp = root.join(format!(
        ".latest-trace-{}-{}",
        std::process::id(),
        SERIAL.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_file(&tmp);
    let target = match trace.file_name() {
        Some(name) if trace.parent() == Some(root) => PathBuf::from(name),
        _ => trace.to_path_buf(),
    };
    std::os::unix::fs::symlink(&target, &tmp).map_err(|e| TraceError::io(&tmp, "creating", e))?;
    std::fs::rename(&tmp, &link).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        TraceError::io(&link, "replacing", e)
    })
}

/// The trace the user named: None → where `root/latest-trace` points; a path that exists → it;
/// a bare name → `root/name`.
pub fn resolve(root: &Path, name: Option<&str>) -> Result<PathBuf, TraceError> {
    match name {
        None => {
            let link = root.join("latest-trace");
            std::fs::canonicalize(&link).map_err(|_| {
                TraceError::NotFound(format!(
                    "no traces in {}; record one with 'hindsight record PROG'",
                    root.display()
                ))
            })
        }
        Some(n) => {
            let p = Path::new(n);
            if !n.is_empty() && p.exists() {
                return Ok(p.to_path_buf());
            }
            let under = root.join(n);
            if !n.is_empty() && under.exists() {
                return Ok(under);
            }
            Err(TraceError::NotFound(format!(
                "no trace named {n} (in {})",
                root.display()
            )))
        }
    }
}

/// Every trace directory under `root` (those with a `header`), oldest first: by start time,
/// then by when the header was written, then by name. A root that does not exist holds none.
pub fn list(root: &Path) -> Result<Vec<PathBuf>, TraceError> {
    let entries = match std::fs::read_dir(root) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(TraceError::io(root, "reading", e)),
    };
    let mut traces: Vec<(u64, SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|e| e.file_type().map(|t| t.is_dir()).unwrap_or(false))
        .map(|e| e.path())
        .filter_map(|p| {
            let written = std::fs::metadata(p.join("header")).ok()?.modified().ok();
            let start = crate::read_header(&p).map(|h| h.start_time).unwrap_or(0);
            Some((start, written.unwrap_or(SystemTime::UNIX_EPOCH), p))
        })
        .collect();
    traces.sort();
    Ok(traces.into_iter().map(|(_, _, p)| p).collect())
}
