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
