#!/usr/bin/env bash
# Reverse-execution benchmark: a recording of a few seconds of CPU-bound work
# (bench/programs/tt_reverse.c) with a breakpoint hit near its start (`early`) and one near
# its end (`late`). Measures, in one run (best of $RUNS each):
#   - reverse-continue from `late` back to `early`, against replaying that stretch forward
#     and against the native run time of the same stretch;
#   - ten successive reverse-continues through the hot loop at the end (`tick`, one hit per
#     iteration), per step, against one native iteration;
#   - $STEPS reverse-stepi from the end of a syscall-free loop of a few seconds
#     (bench/programs/rev_loop.c), per step: checkpoints taken inside the loop (at tick
#     counts) make each step back cost a short replay, not the loop from its start;
#   - gdb's `record full` on a small stretch of the same program: the recording it needs
#     before any reverse command, against the native time, and its reverse-continue (gdb
#     cannot record seconds of work: it is ~10^5 times slower).
# Writes the table into BENCHMARKS.md between <!-- reverse-bench:start --> and
# <!-- reverse-bench:end --> (appended if they are missing).
#
#   bench/reverse.sh
#   ITERS=... PER=... LOOP_N=... STEPS=... GDB_ITERS=... GDB_PER=... RUNS=... LIMIT=SECONDS BENCH_FILE=... bench/reverse.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ITERS=${ITERS:-3000}
PER=${PER:-1000000}
LOOP_N=${LOOP_N:-1000000000}
STEPS=${STEPS:-1000}
GDB_ITERS=${GDB_ITERS:-6}
GDB_PER=${GDB_PER:-1000}
RUNS=${RUNS:-3}
LIMIT=${LIMIT:-600}
BENCH_FILE=${BENCH_FILE:-BENCHMARKS.md}
out=bench/out/reverse
mkdir -p "$out"
export HINDSIGHT_DIR="$PWD/$out/traces"
cargo build --release -q -p hindsight
hs=${CARGO_TARGET_DIR:-target}/release/hindsight
gcc -O0 -g -o "$out/tt_reverse" bench/programs/tt_reverse.c
gcc -O1 -g -o "$out/rev_loop" bench/programs/rev_loop.c

. bench/timing.sh

echo "== native" >&2
native_stretch=
for _ in $(seq "$RUNS"); do
    "$out/tt_reverse" "$ITERS" "$PER" >/dev/null 2>"$out/native.err"
    s=$(sed -n 's/^stretch_ns=//p' "$out/native.err")
    if [ -z "$native_stretch" ] || [ "$s" -lt "$native_stretch" ]; then native_stretch=$s; fi
done
native_iter=$((native_stretch / (ITERS - 4)))

echo "== record" >&2
rm -rf "$out/trace"
"$hs" record -o "$out/trace" -- "$out/tt_reverse" "$ITERS" "$PER" >/dev/null 2>&1

rp() { best "$hs" replay "$out/trace" --batch -q "$@"; }
echo "== replay to early, to late" >&2
to_early=$(rp -ex 'break early' -ex continue)
to_late=$(rp -ex 'break late' -ex continue)
echo "== reverse-continue late -> early" >&2
back=$(rp -ex 'break late' -ex continue -ex 'break early' -ex reverse-continue -ex 'print i')
grep -q '^\$1 = 2$' "$out/stdout" || { echo "reverse-continue did not reach early: $(cat "$out/stdout")" >&2; exit 1; }
echo "== ten reverse-continues through the hot loop" >&2
ten=(-ex 'break late' -ex continue -ex 'break tick')
for _ in $(seq 10); do ten+=(-ex reverse-continue); done
ten+=(-ex 'print i')
steps=$(rp "${ten[@]}")
grep -q "^\\\$1 = $((ITERS - 11))\$" "$out/stdout" || { echo "the ten steps back did not reach tick($((ITERS - 11))): $(cat "$out/stdout")" >&2; exit 1; }

stretch_replay=$((to_late - to_early))
reverse_cost=$((back - to_late))
per_step=$(((steps - to_late) / 10))

echo "== $STEPS reverse-stepi from the end of a loop without syscalls" >&2
"$out/rev_loop" "$LOOP_N" >/dev/null 2>&1
loop_native=$(best "$out/rev_loop" "$LOOP_N")
rm -rf "$out/trace-loop"
"$hs" record -o "$out/trace-loop" -- "$out/rev_loop" "$LOOP_N" >/dev/null 2>&1
rl() { best "$hs" replay "$out/trace-loop" --batch -q "$@"; }
at_done=$(rl -ex 'break done' -ex continue -ex 'print $pc')
pc_done=$(sed -n 's/^\$1 = .*\(0x[0-9a-f]*\).*/\1/p' "$out/stdout")
rsi=(-ex 'break done' -ex continue)
for _ in $(seq "$STEPS"); do rsi+=(-ex reverse-stepi); done
rsi+=(-ex 'print $pc' -ex "stepi $STEPS" -ex 'print $pc')
stepped=$(rl "${rsi[@]}")
# Back and forward again: the same instruction (the steps went back through real history).
pcs=$(sed -n 's/^\$[0-9]* = .*\(0x[0-9a-f]*\).*/\1/p' "$out/stdout" | tr '\n' ' ')
last_pc=$(sed -n 's/^\$[0-9]* = .*\(0x[0-9a-f]*\).*/\1/p' "$out/stdout" | tail -1)
[ "$last_pc" = "$pc_done" ] || { echo "reverse-stepi ×$STEPS then stepi $STEPS did not come back to done ($pc_done): $pcs" >&2; exit 1; }
# The session also steps forward $STEPS times: measured alone, and subtracted.
fwd=(-ex 'break done' -ex continue)
fwd+=(-ex "stepi $STEPS" -ex 'print $pc')
forward=$(rl "${fwd[@]}")
per_rsi=$(((stepped - forward) / STEPS))

echo "== gdb record full" >&2
# gdb's record full cannot record the vDSO's clock reads: the program runs without them
# (third argument) under gdb; the native time of that stretch is the native per-step time.
gdb_native=$(( native_stretch * GDB_PER / PER * (GDB_ITERS - 1) / (ITERS - 4) ))
gdb_base=(gdb -nx -batch -ex 'break main' -ex run)
gdb_plain=$(best "${gdb_base[@]}" -ex 'break late' -ex continue --args "$out/tt_reverse" "$GDB_ITERS" "$GDB_PER" notime)
gdb_fwd=("${gdb_base[@]}" -ex 'record full' -ex 'set record full insn-number-max unlimited'
         -ex 'break late' -ex continue)
gdb_to_late=$(best "${gdb_fwd[@]}" --args "$out/tt_reverse" "$GDB_ITERS" "$GDB_PER" notime)
grep -q "^Breakpoint 2, late" "$out/stdout" || { echo "gdb's record full did not reach late: $(tail -3 "$out/stdout")" >&2; exit 1; }
gdb_back=$(best "${gdb_fwd[@]}" -ex 'break early' -ex reverse-continue --args "$out/tt_reverse" "$GDB_ITERS" "$GDB_PER" notime)
gdb_recording=$((gdb_to_late - gdb_plain))
gdb_reverse=$((gdb_back - gdb_to_late))
if [ "$gdb_reverse" -lt 0 ]; then gdb_reverse=0; fi

table=$(cat <<TABLE
| measurement (best of $RUNS) | time | against |
|---|---|---|
| native run, \`early\` → \`late\` ($((ITERS - 4)) iterations of $PER steps) | $(ms "$native_stretch") | |
| replay forward over the same stretch | $(ms "$stretch_replay") | $(ratio "$stretch_replay" "$native_stretch") native |
| **reverse-continue** from \`late\` back to \`early\` | $(ms "$reverse_cost") | **$(ratio "$reverse_cost" "$stretch_replay") the forward replay of the stretch** (goal ≤ 1.5×), $(ratio "$reverse_cost" "$native_stretch") native |
| one reverse-continue through the hot loop (mean of 10, one hit per iteration) | $(ms "$per_step") | $(ratio "$per_step" "$native_iter") one native iteration ($(ms "$native_iter")); checkpoint interval 50 ms |
| **reverse-stepi** ×$STEPS from the end of a loop of $LOOP_N iterations without a syscall (native $(ms "$loop_native")), per step | $(ms "$per_rsi") | goal ≤ 10 ms; the whole loop replays in about $(ms "$at_done") (session to \`done\`) |
| gdb \`record full\`: recording from \`main\` to \`late\` first, $((GDB_ITERS - 1)) iterations of $GDB_PER steps | $(ms "$gdb_recording") | $(ratio "$gdb_recording" "$gdb_native") native ($(awk -v n="$gdb_native" 'BEGIN { printf "%.1f µs", n / 1e3 }'), estimated from the native run above) |
| gdb \`record full\`: then its reverse-continue \`late\` → \`early\` | $(ms "$gdb_reverse") | (replays its log; within the noise of the sessions' times when 0) |

Times of reverse commands are the session's time minus the time of the same session without them. The forward replay of the stretch is the time to reach \`late\` minus the time to reach \`early\`. gdb cannot record a run of seconds (its \`record full\` runs ~10⁵ times slower than the program), so it is measured on a stretch of a few hundred thousand instructions of the same program.
TABLE
)
echo "$table"

python3 bench/write_table.py "$table" "$BENCH_FILE" reverse-bench "Time travel" bench/reverse.sh
