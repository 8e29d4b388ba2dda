//! `hindsight dap` as editors drive it: Microsoft's own debug adapter test client
//! (`@vscode/debugadapter-testsupport`, in tests/dap/) runs the scenarios of
//! tests/dap/adapter.test.js against this build — recordings replayed with breakpoints, data
//! breakpoints, stepBack, reverseContinue, the debug console, pause, and live debugging.
//!
//! Nothing is skipped silently: without node or the npm package the test fails and says how
//! to install them (`.ci/run` does).

mod common;

use std::path::Path;
use std::process::Command;

use common::*;

/// tests/dap, where the JavaScript side lives.
fn dap_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/dap")
}

#[test]
fn microsofts_test_client_drives_the_adapter() {
    let node = Command::new("node").arg("--version").output();
    let version = match node {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        _ => panic!(
            "node is needed for the Debug Adapter Protocol tests (install Node.js 18 or newer; .ci/run does)"
        ),
    };
    let major: u32 = version
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    assert!(
        major >= 18,
        "node {version} is too old for the DAP tests (node:test needs 18 or newer)"
    );
    let dir = dap_dir();
    assert!(
        dir.join("node_modules/@vscode/debugadapter-testsupport").is_dir(),
        "the DAP tests need Microsoft's test client: run `npm ci --prefix tests/dap` (.ci/run does)"
    );
    let program = compile("dap", &[]);
    // The same program compiled from elsewhere: its debug information names the source
    // `tests/dap/../programs/dap.c`, which an editor spells without the `..`.
    let elsewhere = scratch().join("dap-from-elsewhere");
    let built = Command::new("gcc")
        .current_dir(&dir)
        .args(["-g", "-O0", "-pthread", "-o"])
        .arg(&elsewhere)
        .arg("../programs/dap.c")
        .output()
        .expect("gcc runs");
    assert!(
        built.status.success(),
        "gcc: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    let source = std::fs::canonicalize(programs().join("dap.c")).expect("tests/programs/dap.c");
    // C++ containers, whose children come from hindsight's libstdc++ formatters.
    let cpp = compile_cpp("cpp_values", &[]);
    let cpp_source = std::fs::canonicalize(programs().join("cpp_values.cpp"))
        .expect("tests/programs/cpp_values.cpp");
    let mut cmd = Command::new("node");
    // Its own process group: a run that overstays is killed with the adapters it started.
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    cmd.arg("--test")
        .arg("adapter.test.js")
        .current_dir(&dir)
        .env("HINDSIGHT_BIN", env!("CARGO_BIN_EXE_hindsight"))
        .env("DAP_PROGRAM", &program)
        .env("DAP_PROGRAM_ELSEWHERE", &elsewhere)
        .env("DAP_SOURCE", &source)
        .env("DAP_CPP_PROGRAM", &cpp)
        .env("DAP_CPP_SOURCE", &cpp_source)
        .env("HINDSIGHT_DIR", scratch().join("dap-traces"))
        .stdin(std::process::Stdio::null());
    // Thirteen sessions, each recording and replaying: more than one hindsight run's time.
    let (run, finished) = collect_within(&mut cmd, std::time::Duration::from_secs(900));
    assert!(
        finished,
        "the DAP tests did not finish in time\n{}\n{}",
        run.stdout, run.stderr
    );
    // node's TAP summary: every scenario passed, and there were some.
    let passed = run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("# pass "))
        .and_then(|n| n.trim().parse::<u32>().ok())
        .unwrap_or(0);
    assert!(
        run.code == 0 && passed > 0,
        "the DAP tests failed (exit {}, {passed} passed):\n{}\n{}",
        run.code,
        run.stdout,
        run.stderr
    );
}
