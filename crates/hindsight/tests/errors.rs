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

// ---------------------------------------------------------------------------------------------
// Bad input, gdb's words for it, and the program's end. Every run also checks (in `debug`)
// that hindsight did not panic.

#[test]
fn a_missing_program_is_one_line_and_a_failure() {
    let r = debug(std::path::Path::new("/nonexistent/dir/prog"), &["run"], &[]);
    r.err_line("{*}/nonexistent/dir/prog: No such file or directory.")
        .failed();
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert_eq!(r.stdout, "", "{}", r.stdout);
}

#[test]
fn a_text_file_is_not_in_executable_format() {
    use std::os::unix::fs::PermissionsExt;
    for (name, mode) in [("notes-exec.txt", 0o755), ("notes-plain.txt", 0o644)] {
        let text = scratch().join(name);
        std::fs::write(&text, "#not a program\njust text\n").expect("write");
        std::fs::set_permissions(&text, std::fs::Permissions::from_mode(mode)).expect("chmod");
        let r = debug(&text, &["run", "print 1"], &[]);
        r.err_line(&format!(
            "{{*}}\"{{*}}{name}\": not in executable format: file format not recognized"
        ))
        .failed();
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    }
}

#[test]
fn no_debug_info_is_said_yet_address_breakpoints_and_stepi_work() {
    let prog = compile_nodebug("basics", &["-no-pie"]);
    let square = nm_address(&prog, "square");
    let r = debug(
        &prog,
        &[
            &format!("break *{square:#x}"),
            "run",
            "stepi",
            "stepi",
            "nexti",
            "backtrace",
            "info registers rip",
            "print $pc",
            "info locals",
            "break add",
            "continue",
            "print v",
            "delete",
            "continue",
        ],
        &[],
    );
    // gdb prints this when it loads the file (at a terminal); hindsight must say it somehow.
    let all = format!("{}{}", r.stdout, r.stderr);
    assert!(
        all.contains("No debugging symbols found in "),
        "no word about the missing debug info{}",
        all
    );
    let add = nm_address(&prog, "add");
    r.seq(&[
        &format!("Breakpoint 1 at {square:#x}"),
        // Without line information: the address and the function, no source line.
        &format!("Breakpoint 1, 0x{square:016x} in square ()"),
        // push %rbp (1 byte), mov %rsp,%rbp (3), mov %edi,-0x14(%rbp) (3).
        &format!("0x{:016x} in square ()", square + 1),
        &format!("0x{:016x} in square ()", square + 4),
        &format!("0x{:016x} in square ()", square + 7),
        &format!("#0  0x{:016x} in square ()", square + 7),
        "#1  {hex} in main ()",
        &format!(
            "rip            {:#x}            {:#x} <square+7>",
            square + 7,
            square + 7
        ),
        &format!("$1 = (void (*)()) {:#x} <square+7>", square + 7),
        // On a function without line info gdb skips the prologue by its instructions.
        &format!("Breakpoint 2 at {:#x}", add + 4),
        &format!("Breakpoint 2, 0x{:016x} in add ()", add + 4),
        "square 49 add 50",
        "loop total 90",
        "deep 305 neg -5 byte 200",
        "[Inferior 1 (process {n}) exited normally]",
    ])
    .err_line("No symbol \"v\" in current context.")
    .program_gone();
    assert!(
        all.contains("No symbol table info available."),
        "info locals without debug info{all}"
    );
    assert_eq!(r.count("Breakpoint 2, {*}"), 1, "{}", r.stdout);
}

#[test]
fn unknown_command_symbol_syntax_and_memory_errors_do_not_stop_the_batch() {
    let prog = compile("basics", &[]);
    let r = debug(
        &prog,
        &[
            "foo",
            "break square",
            "run",
            "print nosuch",
            "print v +",
            "print v + * 2",
            "print (",
            "print *nullp",
            "print nullp[3]",
            "print v * 2",
            "frobnicate now",
            "continue",
        ],
        &[],
    );
    r.seq(&[
        "Breakpoint 1 at {hex}: file basics.c, line 32.",
        "Breakpoint 1, square (v=7) at basics.c:32",
        "$1 = 14",
        "[Inferior 1 (process {n}) exited normally]",
    ])
    .err_line("Undefined command: \"foo\".  Try \"help\".")
    .err_line("Undefined command: \"frobnicate\".  Try \"help\".")
    .err_line("No symbol \"nosuch\" in current context.")
    .err_line("A syntax error in expression, near `'.")
    // `v + * 2` parses: `* 2` dereferences address 2.
    .err_line("Cannot access memory at address 0x2")
    .err_line("Cannot access memory at address 0x0")
    .err_line("Cannot access memory at address 0xc")
    .failed()
    .program_gone();
    // `print v +` and `print (`: both are near the end of the input.
    assert_eq!(
        r.stderr
            .lines()
            .filter(|l| l.starts_with("A syntax error in expression"))
            .count(),
        2,
        "{}",
        r.stderr
    );
}

#[test]
fn a_segfault_is_reported_with_its_line_then_terminates_the_program() {
    let prog = compile("nullderef", &[]);
    let r = debug(
        &prog,
        &[
            "run",
            "backtrace",
            "print *n",
            "print n->next",
            "print n->next->value",
            "up",
            "print a.next->value",
            "continue",
            "backtrace",
        ],
        &[],
    );
    r.block(&[
        "before crash",
        "Program received signal SIGSEGV, Segmentation fault.",
        "last_value (n={hex}) at nullderef.c:14",
        "14\t    return n->next->value;",
        "#0  last_value (n={hex}) at nullderef.c:14",
        "#1  {hex} in main () at nullderef.c:24",
        "$1 = {value = 2, next = 0x0}",
        "$2 = (struct node *) 0x0",
        "#1  {hex} in main () at nullderef.c:24",
        "24\t    int v = last_value(&a);",
        "$3 = 2",
        "Program terminated with signal SIGSEGV, Segmentation fault.",
        "The program no longer exists.",
    ])
    .err_line("Cannot access memory at address 0x0")
    .err_line("No stack.")
    .lacks("never printed")
    .failed()
    .program_gone();
}

#[test]
fn exit_codes_are_octal_with_a_leading_zero() {
    let prog = compile("exits", &[]);
    for (arg, line) in [
        (None, "[Inferior 1 (process {n}) exited with code 03]"),
        (Some("0"), "[Inferior 1 (process {n}) exited normally]"),
        (
            Some("10"),
            "[Inferior 1 (process {n}) exited with code 012]",
        ),
        (
            Some("300"),
            "[Inferior 1 (process {n}) exited with code 054]",
        ),
    ] {
        let args: Vec<&str> = arg.into_iter().collect();
        let r = debug(&prog, &["run"], &args);
        r.line(line).code(0).program_gone();
        // The pid in the message is the program's.
        let pid = r.pid();
        r.line(&format!("[Inferior 1 (process {pid}) {{*}}"));
    }
}

#[test]
fn a_program_stopped_at_the_end_of_the_batch_is_killed() {
    for (prog, cmds) in [
        (compile("basics", &[]), vec!["break loop", "run"]),
        (compile("hits", &[]), vec!["break f", "run", "info threads"]),
        (
            compile("threads", &[]),
            vec!["break all_parked", "run", "next"],
        ),
    ] {
        let r = debug(&prog, &cmds, &[]);
        r.code(0).program_gone();
    }
}

/// Starts `hindsight debug --batch -ex run -- exits sleep` (the program sleeps forever), waits
/// for the program's pid, then kills hindsight with `signal`.
fn kill_hindsight_while_the_program_runs(signal: &str) {
    use std::io::BufRead;
    let prog = compile("exits", &[]);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_hindsight"))
        .args(["debug", "--batch", "-ex", "run", "--"])
        .arg(&prog)
        .arg("sleep")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("hindsight runs");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = std::io::BufReader::new(stderr).lines();
    let pid: i32 = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| l.strip_prefix("pid ")?.trim().parse().ok())
        .expect("the program's pid");
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(
        std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "the program should be running"
    );
    let st = std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(st.success());
    let _ = child.wait();
    assert_gone(pid);
}

#[test]
fn killing_hindsight_kills_the_program() {
    kill_hindsight_while_the_program_runs("-KILL");
}

#[test]
fn terminating_hindsight_kills_the_program() {
    kill_hindsight_while_the_program_runs("-TERM");
}

#[test]
fn a_command_file_runs_like_ex_commands() {
    let prog = compile("basics", &[]);
    let file = scratch().join("cmds.gdb");
    std::fs::write(
        &file,
        "break square\nrun\nprint v\n# a comment\n\nbacktrace\n",
    )
    .expect("write");
    let r = hindsight(&[
        "debug".as_ref(),
        "--batch".as_ref(),
        "-x".as_ref(),
        file.as_os_str(),
        "-ex".as_ref(),
        "print v * 3".as_ref(),
        "--".as_ref(),
        prog.as_os_str(),
    ]);
    r.clean()
        .block(&[
            "Breakpoint 1, square (v=7) at basics.c:32",
            "32\t    int result = v * v;",
            "$1 = 7",
            "#0  square (v=7) at basics.c:32",
            "#1  {hex} in main () at basics.c:72",
            "$2 = 21",
        ])
        .code(0)
        .program_gone();
}

#[test]
fn line_patterns_match_what_they_should() {
    let bp = "Breakpoint 1 at {hex}: file a.c, line {n}.";
    assert!(matches(bp, "Breakpoint 1 at 0x55f0: file a.c, line 12."));
    assert!(!matches(bp, "Breakpoint 1 at 0x55f0: file a.c, line x."));
    assert!(!matches(bp, "Breakpoint 1 at 55f0: file a.c, line 12."));
    assert!(matches("$1 = {n}", "$1 = -42"));
    assert!(!matches("$1 = {n}", "$1 = 4 2"));
    assert!(matches(
        "#1  {hex} in f (x=1) at {*}a.c:3",
        "#1  0x00005555 in f (x=1) at a.c:3"
    ));
    assert!(matches("{*}", ""));
    assert!(!matches("ab", "abc"));
    assert!(matches(
        "Hardware watchpoint 2: *p",
        "Hardware watchpoint 2: *p"
    ));
    assert!(matches("t = {{n}, {n}}", "t = {1, 2}"));
    assert!(is_chatter("Continuing."));
    assert!(!is_chatter("$1 = 2"));
}

#[test]
fn run_with_arguments_replaces_them() {
    let prog = compile("exits", &[]);
    let r = debug(&prog, &["run 10", "run 4"], &["1"]);
    r.has("exited with code 012]").has("exited with code 04]");
}
