//! Bad input: one clear line, no panic, and the program never outlives hindsight.

mod common;
use common::*;

#[test]
fn missing_and_non_executable_programs() {
    let r = debug(std::path::Path::new("/nonexistent/prog"), &["run"], &[]);
    r.err_has("/nonexistent/prog: No such file or directory.")
        .code(2);
    let text = scratch().join("notes.txt");
    std::fs::write(&text, "not a program\n").expect("write");
    let r = debug(&text, &["run"], &[]);
    r.err_has("not in executable format").code(2);
}

#[test]
fn a_binary_without_debug_info_still_breaks_on_addresses_and_steps() {
    let prog = scratch().join("nodebug");
    let st = std::process::Command::new("gcc")
        .args(["-O0", "-o"])
        .arg(&prog)
        .arg(programs().join("steps.c"))
        .status()
        .expect("gcc");
    assert!(st.success());
    let r = debug(
        &prog,
        &["break square", "run", "stepi", "bt", "info locals"],
        &[],
    );
    r.has("(No debugging symbols found in ")
        .has("Breakpoint 1, 0x")
        .has(" in square ()\n")
        .has("#1  0x")
        .has(" in sum_squares ()\n")
        .err_has("No symbol table info available.");
}

#[test]
fn unknown_commands_and_bad_arguments() {
    let prog = compile("steps", &[]);
    let r = debug(
        &prog,
        &["frobnicate", "break nosuchfunction", "delete 99", "x/4x 0"],
        &[],
    );
    r.err_has("Undefined command: \"frobnicate\".  Try \"help\".")
        .err_has("Function \"nosuchfunction\" not defined.")
        .err_has("No breakpoint number 99.")
        .err_has("Cannot access memory at address 0x0")
        .code(1);
}

#[test]
fn crashes_and_exit_codes_are_reported_in_gdbs_words() {
    let crash = compile("crash", &[]);
    let r = debug(&crash, &["run", "continue"], &[]);
    r.has("\nProgram received signal SIGSEGV, Segmentation fault.\n")
        .has(" in main () at ")
        .has("8\t    *p = 1;\n")
        .has("\nProgram terminated with signal SIGSEGV, Segmentation fault.\nThe program no longer exists.\n");
    let exitcode = compile("exitcode", &[]);
    debug(&exitcode, &["run"], &[]).has("exited with code 03]\n");
    // After the end, commands that need a process say so.
    let r = debug(&exitcode, &["run", "next"], &[]);
    r.err_has("The program is not being run.").code(1);
}

#[test]
fn the_program_never_outlives_hindsight() {
    let prog = compile("race", &[]);
    let r = debug(&prog, &["break count", "run", "info threads"], &[]);
    let line = r
        .stdout
        .lines()
        .find(|l| l.contains("(LWP "))
        .expect("a thread line")
        .to_string();
    let lwp: i32 = line
        .split("(LWP ")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .and_then(|s| s.parse().ok())
        .expect("an LWP number");
    // hindsight has exited: the process must be gone (killed and reaped).
    assert!(
        !std::path::Path::new(&format!("/proc/{lwp}")).exists(),
        "LWP {lwp} survived"
    );
}
