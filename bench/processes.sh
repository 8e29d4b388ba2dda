#!/usr/bin/env bash
# Process-tree benchmark (issue 16): a 3-process pipeline, producer | filter | consumer over
# two pipes (tests/programs/mp_pipeline.c, N messages of 8 bytes), recorded once, then
#   - replayed one process at a time (`--process PID`, each to its end), the times summed;
#   - replayed together as a tree: stopped before the filter receives the last message
#     (`break message`), then `inferior 1` and `inferior 3`, which replay those processes to
#     where the consistent state puts them;
#   - a consistent stop: `break message` before the filter receives message N/2, then `info
#     inferiors` and a switch to the consumer placed at the cut, against the same session
#     without the switch.
# Best of $RUNS each. Writes the table into BENCHMARKS.md between <!-- processes-bench:start -->
# and <!-- processes-bench:end --> (appended if they are missing).
#
#   bench/processes.sh
#   N=... RUNS=... LIMIT=SECONDS BENCH_FILE=... bench/processes.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-100000}
RUNS=${RUNS:-3}
LIMIT=${LIMIT:-600}
BENCH_FILE=${BENCH_FILE:-BENCHMARKS.md}
out=bench/out/processes
mkdir -p "$out"
export HINDSIGHT_DIR="$PWD/$out/traces"
cargo build --release -q -p hindsight
hs=${CARGO_TARGET_DIR:-target}/release/hindsight
gcc -O1 -g -o "$out/mp_pipeline" tests/programs/mp_pipeline.c

. bench/timing.sh

echo "== native" >&2
native=$(best "$out/mp_pipeline" "$N")
echo "== record" >&2
rm -rf "$out/trace"
# The default recording: the agent buffers the reads and writes, each call a message.
rec=$(best sh -c "rm -rf '$out/trace' && '$hs' record -o '$out/trace' -- '$out/mp_pipeline' $N")
pids=$("$hs" info "$out/trace" | sed -n 's/^  process \([0-9]*\).*/\1/p')
[ "$(echo "$pids" | wc -w)" -eq 3 ] || { echo "expected 3 processes: $pids" >&2; exit 1; }

echo "== one by one" >&2
alone=0
for p in $pids; do
    t=$(best "$hs" replay "$out/trace" --process "$p" --batch -q -ex continue)
    alone=$((alone + t))
done
echo "== together" >&2
# Stopped before the filter (2) receives the producer's (1) last message, the others placed
# at that consistent state: each replayed up to its last messages (a process placed at its
# very end is not replayed at all, which would flatter the tree).
together=$(best "$hs" replay "$out/trace" --batch -q -ex "break message 1 2 $N" -ex continue -ex 'inferior 1' -ex 'inferior 3')
[ "$(grep -c 'placed before event' "$out/stdout")" -eq 2 ] || { echo "the tree replay did not place the others: $(cat "$out/stdout")" >&2; exit 1; }

echo "== a consistent stop" >&2
half=$((N / 2))
# Before the filter (inferior 2) receives the producer's (inferior 1) message N/2.
plain=$(best "$hs" replay "$out/trace" --batch -q -ex "break message 1 2 $half" -ex continue)
placed=$(best "$hs" replay "$out/trace" --batch -q -ex "break message 1 2 $half" -ex continue -ex 'info inferiors' -ex 'inferior 3' -ex 'info messages')
grep -q 'placed before event' "$out/stdout" || { echo "the consumer was not placed at the cut: $(cat "$out/stdout")" >&2; exit 1; }

table="| pipeline of 3 processes, $N messages of 8 bytes | time | vs native | vs one by one |
|---|---|---|---|
| native | $(ms "$native") | 1× | |
| record (the default: the agent buffers the reads and writes) | $(ms "$rec") | $(ratio "$rec" "$native") | |
| replay each process alone (\`--process\`), summed | $(ms "$alone") | $(ratio "$alone" "$native") | 1× |
| replay together (\`break message\` before the filter's last receive, then \`inferior 1\`, \`inferior 3\` placed at the cut) | $(ms "$together") | $(ratio "$together" "$native") | $(ratio "$together" "$alone") |
| filter stopped before message $half (\`break message\`), then the consumer placed at the consistent state (\`inferior 3\`, \`info messages\`) | $(ms "$placed") | | |
| the same stop without placing the consumer | $(ms "$plain") | | |
| a consistent stop's cost (the difference) | $(ms "$((placed - plain))") | | |"
echo "$table"
python3 bench/write_table.py "$table" "$BENCH_FILE" processes-bench "Process trees" bench/processes.sh
