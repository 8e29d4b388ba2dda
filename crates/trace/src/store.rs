//! Where traces live and how they are named: `$HINDSIGHT_DIR` (default
//! `~/.local/share/hindsight`), one directory per trace named `<program>-<N>`, and a
//! `latest-trace` symlink to the newest.

use std::path::{Path, PathBuf};

use crate::error::TraceError;

/// The directory that holds traces.
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

/// A fresh trace path under `root` for `program_basename` (creates `root`).
pub fn new_trace_path(root: &Path, program_basename: &str) -> Result<PathBuf, TraceError> {
    std::fs::create_dir_all(root).map_err(|e| TraceError::io(root, "creating", e))?;
    let base: String = program_basename
        .chars()
        .map(|c| if c == '/' { '_' } else { c })
        .collect();
    (0u32..)
        .map(|n| root.join(format!("{base}-{n}")))
        .find(|p| std::fs::symlink_metadata(p).is_err())
        .ok_or_else(|| TraceError::NotFound("no free trace name".into()))
}

/// Points `root/latest-trace` at `trace` (replaced atomically).
pub fn set_latest(root: &Path, trace: &Path) -> Result<(), TraceError> {
    let link = root.join("latest-trace");
    let tmp = root.join(format!(".latest-trace-{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let target = trace.file_name().map(PathBuf::from).unwrap_or_else(|| trace.to_path_buf());
    let target = if trace.parent() == Some(root) { target } else { trace.to_path_buf() };
    std::os::unix::fs::symlink(&target, &tmp).map_err(|e| TraceError::io(&tmp, "creating", e))?;
    std::fs::rename(&tmp, &link).map_err(|e| TraceError::io(&link, "replacing", e))
}

/// The trace the user named: none → the latest; an existing path → it; a name → under `root`.
pub fn resolve(root: &Path, name: Option<&str>) -> Result<PathBuf, TraceError> {
    match name {
        None => {
            let link = root.join("latest-trace");
            match std::fs::canonicalize(&link) {
                Ok(p) => Ok(p),
                Err(_) => Err(TraceError::NotFound(format!(
                    "no traces in {}; record one with 'hindsight record PROG'",
                    root.display()
                ))),
            }
        }
        Some(n) => {
            let p = Path::new(n);
            if p.exists() {
                return Ok(p.to_path_buf());
            }
            let under = root.join(n);
            if under.exists() {
                return Ok(under);
            }
            Err(TraceError::NotFound(format!(
                "no trace named {n} (in {})",
                root.display()
            )))
        }
    }
}

/// Every trace under `root`, oldest first.
pub fn list(root: &Path) -> Result<Vec<PathBuf>, TraceError> {
    let entries = match std::fs::read_dir(root) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(TraceError::io(root, "reading", e)),
    };
    let mut traces: Vec<(u64, PathBuf)> = entries
        .flatten()
        .filter(|e| e.file_type().map(|t| t.is_dir()).unwrap_or(false))
        .map(|e| e.path())
        .filter(|p| p.join("header").exists())
        .map(|p| {
            let t = crate::TraceReader::open(&p)
                .map(|r| r.header().start_time)
                .unwrap_or(0);
            (t, p)
        })
        .collect();
    traces.sort();
    Ok(traces.into_iter().map(|(_, p)| p).collect())
}
