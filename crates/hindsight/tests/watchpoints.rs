//! Hardware watchpoints: old and new values, the line after the access, and their limits.

mod common;
use common::*;

#[test]
fn watch_rwatch_awatch_report_values_and_lines() {
    let prog = compile("watch", &[]);
    let r = debug(
        &prog,
        &[
            "break main",
            "run",
            "watch counter",
            "rwatch pr.b",
            "awatch big",
            "continue",
            "continue",
            "continue",
            "continue",
            "continue",
            "info watchpoints",
        ],
        &[],
    );
    let expected = [
        "Hardware watchpoint 2: counter\n",
        "Hardware read watchpoint 3: pr.b\n",
        "Hardware access (read/write) watchpoint 4: big\n",
        "\nHardware watchpoint 2: counter\n\nOld value = 0\nNew value = 1\n",
        "bump (n=1) at ",
        "12\t}\n",
        "\nHardware watchpoint 2: counter\n\nOld value = 1\nNew value = 3\n",
        "bump (n=2) at ",
        // The write of pr.b is not a read: the next stop is big's write.
        "\nHardware access (read/write) watchpoint 4: big\n\nOld value = 0\nNew value = 1234567890123\n",
        "main () at ",
        "20\t    int seen = counter;\n",
        "\nHardware access (read/write) watchpoint 4: big\n\nValue = 1234567890123\n",
        "\nHardware read watchpoint 3: pr.b\n\nValue = 7\n",
        "2       hw watchpoint   keep y                      counter\n",
        "3       read watchpoint keep y                      pr.b\n",
        "4       acc watchpoint  keep y                      big\n",
    ];
    r.in_order(&expected);
}

#[test]
fn a_sixteen_byte_struct_takes_two_registers_and_a_fifth_is_refused() {
    let prog = compile("watch", &[]);
    let r = debug(
        &prog,
        &[
            "break main",
            "run",
            "next",
            "watch pr",
            "watch counter",
            "watch big",
            "watch *p",
        ],
        &[],
    );
    r.has("Hardware watchpoint 2: pr\n")
        .has("Hardware watchpoint 3: counter\n")
        .err_has("Hardware watchpoints need 5 debug registers")
        .code(1);
    let r = debug(&prog, &["break main", "run", "watch pr", "continue"], &[]);
    r.has(
        "\nHardware watchpoint 2: pr\n\nOld value = {a = 0, b = 0}\nNew value = {a = 0, b = 7}\n",
    );
}

#[test]
fn a_watchpoint_condition_filters_changes() {
    let prog = compile("watch", &[]);
    let r = debug(
        &prog,
        &[
            "break main",
            "run",
            "watch counter if counter > 2",
            "continue",
            "info watchpoints",
        ],
        &[],
    );
    // The change 0 -> 1 is not reported; the old value is the last one seen.
    r.has("\nHardware watchpoint 2: counter\n\nOld value = 1\nNew value = 3\n")
        .has("\tstop only if counter > 2\n")
        .has("\tbreakpoint already hit 1 time\n");
}

// ---------------------------------------------------------------------------------------------
// `tests/programs/watched.c` (and hits.c for threads); every expected line is what gdb 13
// prints for the same commands.

#[test]
fn watch_global_member_and_eight_bytes_through_a_pointer() {
    let prog = compile("watched", &[]);
    let r = debug(
        &prog,
        &[
            "break main",
            "run",
            "watch g",
            "watch s.second",
            "watch *p",
            "continue",
            "continue",
            "continue",
            "continue",
            "info watchpoints",
            "continue",
        ],
        &[],
    );
    r.block(&[
        "Breakpoint 1, main () at watched.c:30",
        "30\t    fprintf(stderr, \"pid %d\\n\", (int)getpid());",
        "Hardware watchpoint 2: g",
        "Hardware watchpoint 3: s.second",
        "Hardware watchpoint 4: *p",
        // Each report names the watchpoint, gives old and new values, then the statement
        // after the one that wrote (the frame line as well: gdb prints it for watchpoints).
        "Hardware watchpoint 2: g",
        "Old value = 1",
        "New value = 2",
        "main () at watched.c:33",
        "33\t    s.second = 21;",
        "Hardware watchpoint 3: s.second",
        "Old value = 20",
        "New value = 21",
        "main () at watched.c:34",
        "34\t    *p = 0x100000000L;",
        // All 8 bytes are watched: the change is in the upper half.
        "Hardware watchpoint 4: *p",
        "Old value = 100",
        "New value = 4294967296",
        "main () at watched.c:35",
        "35\t    local = reads;",
        // A write from another function: its frame, at its closing line.
        "Hardware watchpoint 2: g",
        "Old value = 2",
        "New value = 5",
        "set_g (v=5) at watched.c:26",
        "26\t}",
        "Num     Type           Disp Enb Address            What",
        "2       hw watchpoint  keep y                      g",
        "\tbreakpoint already hit 2 times",
        "3       hw watchpoint  keep y                      s.second",
        "\tbreakpoint already hit 1 time",
        "4       hw watchpoint  keep y                      *p",
        "\tbreakpoint already hit 1 time",
        "g 5 second 21 big 4294967296 reads 6 w -7 3 a5 5",
        "[Inferior 1 (process {n}) exited normally]",
    ])
    .code(0)
    .program_gone();
    // The blank line before each report and between the header and the values, as gdb.
    assert!(
        r.stdout
            .contains("\n\nHardware watchpoint 2: g\n\nOld value = 1\nNew value = 2\n"),
        "{}",
        r.stdout
    );
}

#[test]
fn rwatch_awatch_and_a_sixteen_byte_struct() {
    let prog = compile("watched", &[]);
    let r = debug(
        &prog,
        &[
            "break main",
            "run",
            "rwatch reads",
            "awatch big",
            "watch w",
            "continue",
            "continue",
            "continue",
            "continue",
            "continue",
            "continue",
            "info watchpoints",
        ],
        &[],
    );
    let printf_line =
        "45\t    printf(\"g %d second %d big %ld reads %d w %ld %ld a5 %d\\n\", g, s.second, big, reads, w.lo,";
    r.block(&[
        "Hardware read watchpoint 2: reads",
        "Hardware access (read/write) watchpoint 3: big",
        "Hardware watchpoint 4: w",
        // awatch on a write: old and new values.
        "Hardware access (read/write) watchpoint 3: big",
        "Old value = 100",
        "New value = 4294967296",
        "main () at watched.c:35",
        "35\t    local = reads;",
        // rwatch on a read: the value; the stop is mid-line so the address is shown.
        "Hardware read watchpoint 2: reads",
        "Value = 5",
        "{hex} in main () at watched.c:35",
        "35\t    local = reads;",
        // `reads = local + 1` writes reads: not a read, no stop. The 16-byte struct changes
        // in its second half, then its first.
        "Hardware watchpoint 4: w",
        "Old value = {lo = 1, hi = 2}",
        "New value = {lo = 1, hi = 3}",
        "main () at watched.c:38",
        "38\t    w.lo = -7;",
        "Hardware watchpoint 4: w",
        "Old value = {lo = 1, hi = 3}",
        "New value = {lo = -7, hi = 3}",
        "main () at watched.c:39",
        "39\t    set_g(5);",
        // The printf arguments read reads, then big.
        "Hardware read watchpoint 2: reads",
        "Value = 6",
        "{hex} in main () at watched.c:45",
        printf_line,
        "Hardware access (read/write) watchpoint 3: big",
        "Value = 4294967296",
        "{hex} in main () at watched.c:45",
        printf_line,
        // The Type column widens to fit "read watchpoint".
        "Num     Type            Disp Enb Address            What",
        "2       read watchpoint keep y                      reads",
        "\tbreakpoint already hit 2 times",
        "3       acc watchpoint  keep y                      big",
        "\tbreakpoint already hit 2 times",
        "4       hw watchpoint   keep y                      w",
        "\tbreakpoint already hit 2 times",
    ])
    .code(0)
    .program_gone();
}

#[test]
fn a_fifth_debug_register_is_refused_and_the_others_keep_working() {
    // w takes two debug registers (16 bytes), a1 and a2 one each: a3 does not fit.
    let prog = compile("watched", &[]);
    let r = debug(
        &prog,
        &[
            "break main",
            "run",
            "watch w",
            "watch a1",
            "watch a2",
            "watch a3",
            "info watchpoints",
            "continue",
            "continue",
            "continue",
            "continue",
            "print a3",
        ],
        &[],
    );
    r.block(&[
        "Hardware watchpoint 2: w",
        "Hardware watchpoint 3: a1",
        "Hardware watchpoint 4: a2",
        "Num     Type           Disp Enb Address            What",
        "2       hw watchpoint  keep y                      w",
        "3       hw watchpoint  keep y                      a1",
        "4       hw watchpoint  keep y                      a2",
        "Hardware watchpoint 2: w",
        "Old value = {lo = 1, hi = 2}",
        "New value = {lo = 1, hi = 3}",
        "main () at watched.c:38",
        "38\t    w.lo = -7;",
        "Hardware watchpoint 2: w",
        "Old value = {lo = 1, hi = 3}",
        "New value = {lo = -7, hi = 3}",
        "main () at watched.c:39",
        "39\t    set_g(5);",
        "Hardware watchpoint 3: a1",
        "Old value = 0",
        "New value = 1",
        "main () at watched.c:41",
        "41\t    a2 = 2;",
        "Hardware watchpoint 4: a2",
        "Old value = 0",
        "New value = 2",
        "main () at watched.c:42",
        "42\t    a3 = 3;",
        "$1 = 0",
    ])
    .no_line("{*}atchpoint 5{*}")
    .failed()
    .program_gone();
    // One clear line says why (gdb itself accepts it and fails at the next resume).
    let refusal: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.to_lowercase().contains("watchpoint"))
        .collect();
    assert_eq!(refusal.len(), 1, "{}", r.stderr);
}

#[test]
fn a_watchpoint_set_before_threads_exist_catches_a_worker_write() {
    let prog = compile("hits", &[]);
    let r = debug(
        &prog,
        &[
            "break main",
            "run",
            "watch sums[3]",
            "continue",
            "print id",
            "print s",
            "continue",
        ],
        &[],
    );
    let name = thread_name(&prog);
    r.seq(&[
        "Hardware watchpoint 2: sums[3]",
        // (gdb also prints "[Switching to Thread ...]" here: see threads.rs.)
        &format!("Thread 5 \"{name}\" hit Hardware watchpoint 2: sums[3]"),
        "Old value = 0",
        "New value = 2502716316",
        "worker (arg=0x3) at hits.c:28",
        "28\t    return NULL;",
        "$1 = 3",
        "$2 = 2502716316",
        "threads 4 calls 5000 checksum 10004374217",
        "[Inferior 1 (process {n}) exited normally]",
    ])
    .code(0)
    .program_gone();
}
