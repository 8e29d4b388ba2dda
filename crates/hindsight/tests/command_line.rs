//! The `hindsight` command line itself: help for every subcommand, mistakes named with their
//! subcommand in one line, gdb's spellings of the session options, shell completions.

mod common;
use common::*;

fn hs(args: &[&str]) -> Run {
    let v: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    let r = hindsight(&v);
    r.clean();
    r
}

#[test]
fn every_subcommand_has_help_that_names_it() {
    for sub in ["debug", "record", "replay", "ls", "info", "completions"] {
        for form in [vec![sub, "--help"], vec![sub, "-h"], vec!["help", sub]] {
            let r = hs(&form);
            r.code(0).line(&format!("Usage: hindsight {sub}{{*}}"));
            assert_eq!(r.stderr, "", "{form:?}");
        }
    }
    // The options each one documents.
    hs(&["debug", "--help"])
        .has("--batch")
        .has("--ex <CMD>")
        .has("--command <FILE>")
        .has("--no-pin")
        .line("Usage: hindsight debug [OPTIONS] [--] PROG [ARGS]...");
    hs(&["record", "--help"])
        .has("--output <DIR>")
        .has("--time-slice <MS>")
        .has("--no-pin");
    hs(&["replay", "--help"])
        .has("--process <PID>")
        .has("--gdbserver <[HOST:]PORT>")
        .has("--gdb ")
        .has("--batch");
    hs(&["info", "--help"]).has("--events");
    let top = hs(&["--help"]);
    top.code(0);
    for sub in ["debug", "record", "replay", "ls", "info", "completions"] {
        top.line(&format!("  {sub} {{*}}"));
    }
    hs(&["--version"]).code(0).line("hindsight {*}");
}

#[test]
fn mistakes_are_one_line_naming_the_subcommand() {
    let one = |args: &[&str], sub: &str, what: &str| {
        let r = hs(args);
        r.code(2);
        assert_eq!(r.stdout, "", "{args:?}");
        assert_eq!(r.stderr.lines().count(), 1, "{args:?}: {}", r.stderr);
        r.err_line(&format!("hindsight {sub}: {{*}}{what}{{*}}"));
    };
    one(
        &["debug", "--frobnicate", "/bin/true"],
        "debug",
        "'--frobnicate'",
    );
    one(&["debug"], "debug", "PROG");
    one(&["debug", "--batch"], "debug", "PROG");
    one(&["record"], "record", "PROG");
    one(
        &["record", "--time-slice", "0", "true"],
        "record",
        "positive",
    );
    one(&["record", "-o"], "record", "--output");
    one(&["replay", "--frobnicate"], "replay", "'--frobnicate'");
    one(&["replay", "--process", "x"], "replay", "'x'");
    one(&["replay", "--gdb", "--gdbserver", "1"], "replay", "--gdb");
    one(&["replay", "a", "b"], "replay", "'b'");
    one(&["info", "a", "b"], "info", "'b'");
    one(&["ls", "x"], "ls", "'x'");
    one(&["completions", "tcsh"], "completions", "'tcsh'");
    let r = hs(&["frobnicate"]);
    r.code(2).err_line("hindsight: {*}'frobnicate'{*}");
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    // No command at all: the overview, and a failure.
    let r = hs(&[]);
    r.code(2);
    assert!(r.stderr.contains("Usage: hindsight"), "{}", r.stderr);
    // --batch does not go with a gdb front end.
    let r = hs(&["replay", "--gdb", "--batch", "nosuchtrace"]);
    r.code(2)
        .err_line("hindsight: --batch is for the command line{*}");
}

#[test]
fn gdb_spellings_and_the_programs_own_options() {
    let prog = compile("exits", &[]);
    let p = prog.to_str().expect("utf-8 path");
    // gdb's single-dash spellings before the program; the program keeps its own arguments,
    // even those that look like hindsight's options.
    let r = hs(&[
        "debug",
        "-batch",
        "-quiet",
        "-eval-command",
        "print 6 * 7",
        "-ex",
        "run",
        p,
        "7",
        "-ex",
    ]);
    r.code(0)
        .seq(&["$1 = 42", "[Inferior 1 (process {n}) exited with code 07]"]);
    let r = hs(&[
        "debug",
        "--batch",
        "--eval-command=run",
        "--",
        p,
        "012",
        "-batch",
    ]);
    r.code(0)
        .line("[Inferior 1 (process {n}) exited with code 014]");
}

#[test]
fn completions_are_scripts_the_shells_accept() {
    let r = hs(&["completions", "bash"]);
    r.code(0).has("complete ").has("hindsight");
    let script = scratch().join("hindsight.bash");
    std::fs::write(&script, &r.stdout).expect("write");
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {} && complete -p hindsight",
            script.display()
        ))
        .output()
        .expect("bash runs");
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("hindsight"),
        "bash did not take the script: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for shell in ["zsh", "fish"] {
        hs(&["completions", shell])
            .code(0)
            .has("replay")
            .has("gdbserver");
    }
}
