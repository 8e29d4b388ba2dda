//! Source files as `list` and stop reports show them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Lines of the source files read so far (a file that cannot be read is remembered as such).
#[derive(Default)]
pub struct SourceCache {
    files: HashMap<PathBuf, Option<Vec<String>>>,
    /// Missing files already reported (gdb says so once, then writes `in FILE`).
    reported: std::collections::HashSet<PathBuf>,
}

impl SourceCache {
    /// Line `line` (1-based) of `file`, without its newline.
    pub fn line(&mut self, file: &Path, line: u32) -> Option<String> {
        let lines = self.lines(file)?;
        lines.get(line.checked_sub(1)? as usize).cloned()
    }

    /// All lines of `file`.
    pub fn lines(&mut self, file: &Path) -> Option<&Vec<String>> {
        self.files
            .entry(file.to_path_buf())
            .or_insert_with(|| {
                std::fs::read(file).ok().map(|bytes| {
                    String::from_utf8_lossy(&bytes)
                        .lines()
                        .map(str::to_string)
                        .collect()
                })
            })
            .as_ref()
    }

    /// The line as gdb prints it under a stop: `12\tcode`, or gdb's note when the file
    /// cannot be read (`name` is the file as the line table names it): the first time
    /// `12\tNAME: No such file or directory.` (an error: `Err`), then `12\tin NAME`.
    pub fn show(&mut self, file: &Path, name: &str, line: u32) -> Result<String, String> {
        match self.line(file, line) {
            Some(text) => Ok(format!("{line}\t{text}")),
            None if self.reported.insert(file.to_path_buf()) => {
                Err(format!("{line}\t{name}: No such file or directory."))
            }
            None => Ok(format!("{line}\tin {name}")),
        }
    }
}
