#!/usr/bin/env bash
# Record/replay benchmark: wall time of test programs, real ones, and zstd and xz compressing
# BIG_MB of text with two threads, run natively, under `hindsight record`
# and under `hindsight replay --batch -q -ex continue` (best of 3 each), the trace's size per
# second of the program's run, and the recording speed in instructions per second against
# gdb's `record full` on the same CPU-bound loop. Writes the table into BENCHMARKS.md between
# <!-- record-bench:start --> and <!-- record-bench:end --> (appended if they are missing).
#
#   bench/record.sh
#   CPU_N=... SYS_N=... THREAD_ROUNDS=... HANDOFF_ROUNDS=... TIMER_N=... GDB_N=... BIG_MB=... RUNS=... LIMIT=SECONDS BENCH_FILE=... bench/record.sh
#   REAL=0 bench/record.sh   # without the real programs (sqlite3, ls, find, git, python3)
#   SYNTH=0 BENCH_FILE=/tmp/real.md bench/record.sh   # only the real programs (another file:
#                            # the table written holds only their rows)
#   HS=/path/to/hindsight bench/record.sh   # that binary, not this checkout's release build
#
# Each real program is recorded once, untimed, before its row (the patched-code cache).
# The real programs need sqlite3, git and python3 (apt-get install sqlite3 git python3); a
# missing one gets a row saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
CPU_N=${CPU_N:-1000000000}          # rec_cpu iterations (5 instructions each)
SYS_N=${SYS_N:-300000}              # rec_sys read/write pairs
THREAD_ROUNDS=${THREAD_ROUNDS:-100} # rec_threads rounds per thread (4 threads)
HANDOFF_ROUNDS=${HANDOFF_ROUNDS:-500} # rec_handoff turns per thread (16 threads)
REAL=${REAL:-1}                     # 0: skip the real programs
SYNTH=${SYNTH:-1}                   # 0: skip the test programs, zstd, xz and gdb's comparison
TIMER_N=${TIMER_N:-200}             # rec_timer signals (1 ms apart)
GDB_N=${GDB_N:-20000}               # rec_cpu iterations under gdb's record full
BIG_MB=${BIG_MB:-50}                # MB of text compressed by zstd -T2 and xz -T2 (0: skip them)
RUNS=${RUNS:-3}
LIMIT=${LIMIT:-900}                 # seconds before one run counts as "timeout"
BENCH_FILE=${BENCH_FILE:-BENCHMARKS.md}
out=bench/out/record
mkdir -p "$out"
export HINDSIGHT_DIR="$PWD/$out/traces"   # nothing goes to the home directory
# The patched-code cache too (best of $RUNS: the first run of each program fills it).
export HINDSIGHT_CACHE_DIR="$PWD/$out/cache"
# HS=/path/to/hindsight measures that binary (e.g. an older build, side by side) instead.
if [ -z "${HS:-}" ]; then
    cargo build --release -q -p hindsight
fi
hs=${HS:-${CARGO_TARGET_DIR:-target}/release/hindsight}
gcc -O2 -g -o "$out/rec_cpu" bench/programs/rec_cpu.c
gcc -O2 -g -o "$out/rec_sys" bench/programs/rec_sys.c
gcc -O2 -g -pthread -o "$out/rec_threads" bench/programs/rec_threads.c
gcc -O2 -g -pthread -o "$out/rec_handoff" bench/programs/rec_handoff.c
gcc -O2 -g -o "$out/rec_timer" tests/programs/rr_itimer.c  # the record/replay test program, N signals
if [ "$BIG_MB" -gt 0 ]; then
    if ! command -v zstd >/dev/null || ! command -v xz >/dev/null; then
        if [ "$(id -u)" = 0 ]; then apt-get install -y -q zstd xz-utils >/dev/null; fi
        command -v zstd >/dev/null && command -v xz >/dev/null || { echo "zstd and xz are needed (apt install zstd xz-utils), or BIG_MB=0" >&2; exit 1; }
    fi
    # Text that compresses like prose: words drawn by a fixed generator (the same every run).
    if [ ! -s "$out/big.txt" ] || [ "$(stat -c %s "$out/big.txt")" -ne $((BIG_MB * 1048576)) ]; then
        python3 bench/programs/words.py $((BIG_MB * 1048576)) >"$out/big.txt"
    fi
fi

# One run's wall time in ns; "timeout" or "exit N" (with its last line of stderr in
# $out/last-error) if it ran out of time or failed.
run_ns() {
    local t0 t1 st=0
    t0=$(date +%s%N)
    timeout "$LIMIT" "$@" >/dev/null 2>"$out/stderr" || st=$?
    t1=$(date +%s%N)
    if [ "$st" -eq 0 ]; then
        echo $((t1 - t0))
    elif [ "$st" -eq 124 ]; then
        echo "timeout"
    else
        tail -1 "$out/stderr" >"$out/last-error"
        echo "exit $st"
    fi
}

isnum() { [[ "$1" =~ ^[0-9]+$ ]]; }

# Best of $RUNS runs (the failure if any run failed).
best() {
    local best= d
    for _ in $(seq "$RUNS"); do
        d=$(run_ns "$@")
        if ! isnum "$d"; then echo "$d"; return; fi
        if [ -z "$best" ] || [ "$d" -lt "$best" ]; then best=$d; fi
    done
    echo "$best"
}

# Best of $RUNS recordings into $out/trace-NAME (each run records afresh; the last is kept).
best_record() {
    local name=$1 best= d
    shift
    for _ in $(seq "$RUNS"); do
        rm -rf "$out/trace-$name"
        d=$(run_ns "$hs" record -o "$out/trace-$name" -- "$@")
        if ! isnum "$d"; then echo "$d"; return; fi
        if [ -z "$best" ] || [ "$d" -lt "$best" ]; then best=$d; fi
    done
    echo "$best"
}

ms() {
    if isnum "$1"; then awk -v n="$1" 'BEGIN { printf "%.1f ms", n / 1e6 }'
    elif [ "$1" = timeout ]; then echo "> ${LIMIT} s"
    elif [ "$1" = - ]; then echo "-"
    else echo "failed ($1)"; fi
}
ratio() { if isnum "$1" && isnum "$2"; then awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f×", a / b }'; else echo "-"; fi; }
bytes() { awk -v n="$1" 'BEGIN { if (n >= 1048576) printf "%.1f MiB", n / 1048576; else printf "%.1f KiB", n / 1024 }'; }
size_of() { if [ -d "$1" ]; then du -sb "$1" | cut -f1; else echo 0; fi; }

rows=""
# One row: NAME LABEL COMMAND ARGS... (native, record, replay; the trace is deleted after).
row() {
    local name=$1 label=$2
    shift 2
    echo "== $label" >&2
    local native rec rep=- total=0 events=0 per_s=-
    native=$(best "$@")
    rec=$(best_record "$name" "$@")
    if isnum "$rec"; then
        rep=$(best "$hs" replay "$out/trace-$name" --batch -q -ex continue)
        if ! isnum "$rep"; then echo "replay of $name: $rep: $(cat "$out/last-error" 2>/dev/null)" >&2; fi
        total=$(size_of "$out/trace-$name")
        events=$((total - $(size_of "$out/trace-$name/files")))
    else
        echo "record of $name: $rec: $(cat "$out/last-error" 2>/dev/null)" >&2
    fi
    if isnum "$native" && [ "$total" -gt 0 ]; then
        per_s="$(bytes "$(awk -v e="$events" -v n="$native" 'BEGIN { printf "%d", e / (n / 1e9) }')")/s"
    fi
    rows+="| $label | $(ms "$native") | $(ms "$rec") | $(ratio "$rec" "$native") | $(ms "$rep") | $(ratio "$rep" "$native") | $(bytes "$total") ($(bytes "$events") without copied files) | $per_s |"$'\n'
    rm -rf "$out/trace-$name"
}

if [ "$SYNTH" != 0 ]; then
    row cpu "\`rec_cpu\` ($CPU_N iterations, no syscall)" "$out/rec_cpu" "$CPU_N"
    row sys "\`rec_sys\` ($SYS_N read+write pairs)" "$out/rec_sys" "$SYS_N"
    row threads "\`rec_threads\` (4 threads × $THREAD_ROUNDS rounds, mutex handoffs)" "$out/rec_threads" "$THREAD_ROUNDS"
    row handoff "\`rec_handoff\` (16 threads × $HANDOFF_ROUNDS turns, mutex + condition variables)" "$out/rec_handoff" "$HANDOFF_ROUNDS" 16
    row timer "\`rec_timer\` ($TIMER_N SIGALRMs, 1 ms apart, into a loop without syscalls)" "$out/rec_timer" "$TIMER_N"
    # Two threads compressing: preemptions land anywhere in their loops (the instruction counter).
    if [ "$BIG_MB" -gt 0 ]; then
        row zstd "\`zstd -T2 -5\` on $BIG_MB MB of text" zstd -T2 -5 -c "$out/big.txt"
        row xz "\`xz -T2\` on $BIG_MB MB of text" xz -T2 -c "$out/big.txt"
    fi
fi

if [ "$REAL" != 0 ]; then
    # A 10 MB database of random rows, made once.
    db="$out/bench.db"
    if command -v sqlite3 >/dev/null && [ ! -s "$db" ]; then
        sqlite3 "$db" "create table t(a integer, b text);
            with recursive n(i) as (select 1 union all select i + 1 from n where i < 40000)
            insert into t select abs(random()) % 1000, hex(randomblob(100)) from n;" >/dev/null
    fi
    real_row() {
        local name=$1 label=$2 need=$3
        shift 3
        if ! command -v "$need" >/dev/null; then
            rows+="| $label | ($need not installed) | | | | | | |"$'\n'
            return
        fi
        # One recording first, untimed: it fills the patched-code cache for the program's own
        # libraries (a new hindsight build starts with an empty one), so that even RUNS=1
        # measures what every recording after the first costs. The first one pays planning
        # and patching every module once; BENCHMARKS.md says what that costs.
        rm -rf "$out/trace-$name"
        run_ns "$hs" record -o "$out/trace-$name" -- "$@" >/dev/null
        rm -rf "$out/trace-$name"
        row "$name" "$label" "$@"
    }
    real_row sqlite "\`sqlite3\` query over a $(bytes "$(stat -c %s "$db" 2>/dev/null || echo 0)") database" sqlite3 \
        "$(command -v sqlite3)" "$db" "select a % 7, count(*), sum(length(b)) from t group by 1"
    real_row ls "\`ls -la /usr/bin\`" ls "$(command -v ls)" -la /usr/bin
    real_row find "\`find /usr/include\`" find "$(command -v find)" /usr/include
    real_row git "\`git status\` in this repository" git "$(command -v git)" status
    py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null || true)
    real_row python "\`python3 -c\` importing json and sqlite3" "${py:-python3}" \
        "${py:-python3}" -c 'import json, sqlite3; print(json.dumps({"sqlite": sqlite3.sqlite_version}))'
fi

# Instructions per second while recording the same loop: hindsight (whole run of rec_cpu,
# 5 × CPU_N instructions) and gdb's `record full` (GDB_N iterations from `work` to its return,
# counted by `info record`; gdb's time without recording is subtracted).
gdb_plain=- gdb_rec=- gdb_insns=
if [ "$SYNTH" != 0 ]; then
    echo "== gdb record full, rec_cpu $GDB_N" >&2
    gdb_plain=$(best gdb -nx -batch -ex 'break work' -ex run -ex finish --args "$out/rec_cpu" "$GDB_N")
    gdb_cmds=(gdb -nx -batch -ex 'break work' -ex run -ex 'set record full insn-number-max unlimited'
              -ex 'record full' -ex finish -ex 'info record' --args "$out/rec_cpu" "$GDB_N")
    gdb_rec=$(best "${gdb_cmds[@]}")
    gdb_insns=$(timeout "$LIMIT" "${gdb_cmds[@]}" 2>/dev/null | sed -n 's/^Log contains \([0-9]*\) instructions\.$/\1/p' | tail -1)
fi
gdb_rate="-"
if isnum "$gdb_rec" && isnum "$gdb_plain" && [ -n "$gdb_insns" ] && [ "$gdb_rec" -gt "$gdb_plain" ]; then
    gdb_rate=$(awk -v i="$gdb_insns" -v t="$((gdb_rec - gdb_plain))" 'BEGIN { printf "%.0f", i / (t / 1e9) }')
fi
hs_rate="-"
cpu_rec=$(sed -n 's/^| `rec_cpu` [^|]*| [^|]*| \([0-9.]*\) ms .*/\1/p' <<<"$rows")
if [ -n "$cpu_rec" ]; then
    hs_rate=$(awk -v n="$CPU_N" -v ms="$cpu_rec" 'BEGIN { printf "%.0f", 5 * n / (ms / 1e3) }')
fi
rate() { if [ "$1" = "-" ]; then echo "-"; else awk -v r="$1" 'BEGIN { if (r >= 1e9) printf "%.2f G/s", r / 1e9; else if (r >= 1e6) printf "%.1f M/s", r / 1e6; else printf "%.0f k/s", r / 1e3 }'; fi; }
speedup="-"
if [ "$hs_rate" != "-" ] && [ "$gdb_rate" != "-" ]; then speedup=$(awk -v a="$hs_rate" -v b="$gdb_rate" 'BEGIN { printf "%.0f×", a / b }'); fi

table=$(cat <<TABLE
| program (best of $RUNS) | native | record | record / native | replay (\`-q\`) | replay / native | trace size | trace growth per second of native run |
|---|---|---|---|---|---|---|---|
${rows%$'\n'}

| recording speed, \`rec_cpu\` loop (5 instructions per iteration) | instructions per second |
|---|---|
| hindsight record ($CPU_N iterations, whole run) | $(rate "$hs_rate") |
| gdb \`record full\` ($GDB_N iterations, ${gdb_insns:-?} instructions in its log) | $(rate "$gdb_rate") |
| hindsight / gdb | $speedup |

Trace size includes the copies of the mapped files (the program, libc, the loader); "without copied files" is the header, the process list and the event streams (zstd frames). The copies are hard links into the store that all traces share (\`\$HINDSIGHT_DIR/.copies\`): a recording whose files are already there writes only the rest. gdb's rate = instructions in its log / (time with \`record full\` − time of the same session without it).
TABLE
)
echo "$table"

python3 bench/write_table.py "$table" "$BENCH_FILE" record-bench "Record and replay" bench/record.sh
