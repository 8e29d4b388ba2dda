//! Shared libraries as gdb sees them: a stripped system program (`ls`), libc's weak aliases
//! (`break write`), its separate debug information (libc6-dbg, found by build id under
//! /usr/lib/debug), breakpoints pending until the library that defines them is loaded (live
//! and in a replay), `start` without a `main`, and `info sharedlibrary`.

mod common;
use common::*;

use std::path::{Path, PathBuf};

/// The system's `ls`: a stripped, dynamically linked program that writes with libc.
fn ls() -> PathBuf {
    let p = PathBuf::from("/usr/bin/ls");
    assert!(p.exists(), "no /usr/bin/ls");
    p
}

/// libc's separate debug information must be installed (`.ci/run` installs libc6-dbg).
fn require_libc_debug_info() {
    assert!(
        Path::new("/usr/lib/debug/.build-id").is_dir(),
        "libc6-dbg is not installed (apt-get install libc6-dbg; .ci/run does)"
    );
}

/// A directory whose listing is known.
fn listed_dir() -> PathBuf {
    let d = scratch().join("listed");
    std::fs::create_dir_all(&d).expect("mkdir");
    for f in ["alpha", "beta"] {
        std::fs::write(d.join(f), f).expect("write");
    }
    d
}

#[test]
fn a_pending_break_on_a_libc_alias_stops_in_libc_with_its_debug_info() {
    require_libc_debug_info();
    let dir = listed_dir();
    let r = debug(
        &ls(),
        &[
            "set breakpoint pending on",
            "break write",
            "info breakpoints",
            "run",
            "backtrace",
            "info sharedlibrary",
            "info breakpoints",
        ],
        &[dir.to_str().expect("utf-8")],
    );
    r.seq(&[
        "Breakpoint 1 (write) pending.",
        "1       breakpoint     keep y   <PENDING>  write",
        "Breakpoint 1, __GI___libc_write (fd=1, buf={hex}, nbytes=11) at ../sysdeps/unix/sysv/linux/write.c:26",
        "#0  __GI___libc_write (fd=1, buf={hex}, nbytes=11) at ../sysdeps/unix/sysv/linux/write.c:26",
        "#1  {hex} in _IO_new_file_write (f={hex} <_IO_2_1_stdout_>, data={hex}, n=11) at ./libio/fileops.c:{n}",
        "#2  {hex} in new_do_write (fp={hex} <_IO_2_1_stdout_>, data={hex} \"alpha\\nbeta\\n{*}\", to_do={*}11) at ./libio/libioP.h:{n}",
    ])
    .line("#{n} {*}{hex} in __libc_start_main_impl ({*}) at ../csu/libc-start.c:{n}")
    .seq(&[
        "From                To                  Syms Read   Shared Object Library",
        "{hex}  {hex}  Yes         /lib64/ld-linux-x86-64.so.2",
        "{hex}  {hex}  Yes         /lib/x86_64-linux-gnu/libc.so.6",
        "1       breakpoint     keep y   {hex} in __GI___libc_write at ../sysdeps/unix/sysv/linux/write.c:26",
        "\tbreakpoint already hit 1 time",
    ]);
    // ls itself is stripped: its frames have no names.
    r.line("#{n} {*}{hex} in ?? ()")
        .err_line("26\t../sysdeps/unix/sysv/linux/write.c: No such file or directory.");
}

#[test]
fn without_pending_breakpoints_the_question_is_answered_no() {
    let r = debug(&ls(), &["break write"], &[]);
    r.err_line("Function \"write\" not defined.").line(
        "Make breakpoint pending on future shared library load? (y or [n]) [answered N; input not from terminal]",
    );
}

#[test]
fn start_stops_a_program_without_main_at_its_entry_point() {
    // gdb refuses (`Function "main" not defined.`); hindsight stops at the entry point.
    if under_gdb() {
        return;
    }
    require_libc_debug_info();
    let dir = listed_dir();
    let r = debug(
        &ls(),
        &["start", "break write", "continue", "bt 1"],
        &[dir.to_str().expect("utf-8")],
    );
    r.seq(&[
        "Temporary breakpoint 1 at {hex}",
        "Temporary breakpoint 1, {hex} in ?? ()",
        "Breakpoint 2 at {hex}: file ../sysdeps/unix/sysv/linux/write.c, line 26.",
        "Breakpoint 2, __GI___libc_write (fd=1, buf={hex}, nbytes=11) at ../sysdeps/unix/sysv/linux/write.c:26",
        "#0  __GI___libc_write (fd=1, buf={hex}, nbytes=11) at ../sysdeps/unix/sysv/linux/write.c:26",
    ]);
}

#[test]
fn a_pending_breakpoint_resolves_in_a_replay() {
    require_libc_debug_info();
    let dir = listed_dir();
    let (trace, rec) = record_trace(&ls(), &[dir.to_str().expect("utf-8")]);
    assert!(rec.stdout.contains("alpha\nbeta"), "{}", rec.stdout);
    let r = replay_batch(
        &trace,
        &[
            "set breakpoint pending on",
            "break write",
            "continue",
            "bt 2",
            "continue",
        ],
    );
    r.clean()
        .seq(&[
            "Breakpoint 1 (write) pending.",
            "Breakpoint 1, __GI___libc_write (fd=1, buf={hex}, nbytes=11) at ../sysdeps/unix/sysv/linux/write.c:26",
            "#0  __GI___libc_write (fd=1, buf={hex}, nbytes=11) at ../sysdeps/unix/sysv/linux/write.c:26",
            "#1  {hex} in _IO_new_file_write (f={hex} <_IO_2_1_stdout_>, data={hex}, n=11) at ./libio/fileops.c:{n}",
        ])
        .line("[Inferior 1 (process {n}) exited normally]");
}
