//! Compiles the agent's image: the sources of crate `hindsight-agent` with its `image`
//! feature, as a freestanding shared object that `src/image.rs` loads into processes and
//! that the `hindsight` binary carries (`include_bytes!`), so that one binary is all a user
//! installs.
//!
//! Why rustc is run directly, and not cargo: the image needs flags that no workspace
//! profile may set for the other crates (`panic=abort`, no C library, symbols bound inside
//! the object), and it has no dependencies but `core`, so one rustc invocation builds it,
//! with the rustc that builds everything else, in this crate's `OUT_DIR`, without a nested
//! cargo (which would contend for the workspace's locks and lock file). `cargo build`,
//! `cargo test --workspace --locked` and `cargo clippy` all run it the same way.

use std::path::PathBuf;
use std::process::Command;

/// The image's symbols that nothing inside it refers to.
const ROOTS: [&str; 6] = [
    "hs_agent_entry",
    "hs_agent_return",
    "hs_untraced_syscall_insn",
    "hs_report_insn",
    "hs_blocked_syscall_insn",
    "hs_blocked_done_insn",
];

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let src = manifest.join("../agent/src");
    println!("cargo:rerun-if-changed={}", src.display());
    println!("cargo:rerun-if-changed=build.rs");
    let target = std::env::var("TARGET").unwrap_or_default();
    if !target.starts_with("x86_64-") || !target.contains("linux") {
        panic!("hindsight's agent is x86-64 Linux code; cannot build it for {target}");
    }
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let image = out.join("hindsight-agent.so");
    let result = Command::new(rustc)
        .args(["--edition", "2021", "--crate-type", "cdylib"])
        .args(["--crate-name", "hindsight_agent_image"])
        .args(["--cfg", "feature=\"image\""])
        .args(["--target", &target])
        .args([
            "-C",
            "opt-level=2",
            "-C",
            "panic=abort",
            "-C",
            "debuginfo=0",
        ])
        // No C library (the agent calls nothing of the program's); every symbol resolved
        // inside the object; bound there (no interposition, so no GOT lookups); the same
        // bytes at every build.
        .args(["-C", "link-arg=-nostdlib"])
        .args(["-C", "link-arg=-Wl,-z,defs"])
        .args(["-C", "link-arg=-Wl,-Bsymbolic"])
        .args(["-C", "link-arg=-Wl,--build-id=none"])
        // The assembly entry points are reached from outside only: roots for the linker's
        // garbage collection (hindsight finds them in the symbol table).
        .args(
            ROOTS
                .iter()
                .flat_map(|r| ["-C".to_string(), format!("link-arg=-Wl,--undefined={r}")]),
        )
        .args(["-D", "warnings"])
        .arg("-o")
        .arg(&image)
        .arg(src.join("lib.rs"))
        // Flags meant for the workspace's crates are not the image's.
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .output()
        .expect("rustc runs");
    if !result.status.success() {
        panic!(
            "building the agent's image failed:\n{}",
            String::from_utf8_lossy(&result.stderr)
        );
    }
}
