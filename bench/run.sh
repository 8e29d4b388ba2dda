#!/usr/bin/env bash
# Breakpoint benchmark: cost of one breakpoint hit-and-continue, and of one hit of a
# breakpoint whose condition is false, for hindsight and gdb on the same program in the same
# run, against the bare ptrace stop round trip. Writes the table into BENCHMARKS.md.
#
#   bench/run.sh            (N=20000 hits by default; N=... bench/run.sh to change)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-20000}
out=bench/out
mkdir -p "$out"
cargo build --release -q -p hindsight
hs=target/release/hindsight
gcc -g -O0 -o "$out/hits" bench/programs/hits.c
gcc -O2 -o "$out/roundtrip" bench/programs/roundtrip.c

# Best of 5 wall-clock runs of a command, in nanoseconds (these VMs are noisy).
best() {
    local best=
    for _ in 1 2 3 4 5; do
        local t0 t1
        t0=$(date +%s%N)
        "$@" >/dev/null 2>&1
        t1=$(date +%s%N)
        local d=$((t1 - t0))
        if [ -z "$best" ] || [ "$d" -lt "$best" ]; then best=$d; fi
    done
    echo "$best"
}

native=$(best "$out/hits" "$N")
hs_start=$(best "$hs" debug --batch -ex continue -- "$out/hits" "$N")
hs_plain=$(best "$hs" debug --batch -ex 'break hit' -ex 'ignore 1 100000000' -ex continue -- "$out/hits" "$N")
hs_cond=$(best "$hs" debug --batch -ex 'break hit if i < 0' -ex continue -- "$out/hits" "$N")
gdb_start=$(best gdb -nx -batch -ex run --args "$out/hits" "$N")
gdb_plain=$(best gdb -nx -batch -ex 'break hit' -ex 'ignore 1 100000000' -ex run --args "$out/hits" "$N")
gdb_cond=$(best gdb -nx -batch -ex 'break hit if i < 0' -ex run --args "$out/hits" "$N")
floor=
for _ in 1 2 3 4 5; do
    f=$("$out/roundtrip" "$N")
    if [ -z "$floor" ] || [ "$f" -lt "$floor" ]; then floor=$f; fi
done

per() { echo $(( ($1 - $2) / N )); }
hp=$(per "$hs_plain" "$hs_start"); hc=$(per "$hs_cond" "$hs_start")
gp=$(per "$gdb_plain" "$gdb_start"); gc=$(per "$gdb_cond" "$gdb_start")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "-" }'; }

table=$(cat <<TABLE
| per breakpoint hit ($N hits, best of 5) | hindsight | gdb | gdb / hindsight | hindsight / bare ptrace stop |
|---|---|---|---|---|
| hit and continue (\`break hit\` + \`ignore\`) | $((hp / 1000)).$(( (hp % 1000) / 100 )) µs | $((gp / 1000)).$(( (gp % 1000) / 100 )) µs | $(ratio "$gp" "$hp")× | $(ratio "$hp" "$floor")× |
| condition false (\`break hit if i < 0\`) | $((hc / 1000)).$(( (hc % 1000) / 100 )) µs | $((gc / 1000)).$(( (gc % 1000) / 100 )) µs | $(ratio "$gc" "$hc")× | $(ratio "$hc" "$floor")× |
| bare ptrace stop round trip (int3 + PTRACE_CONT, pinned) | $((floor / 1000)).$(( (floor % 1000) / 100 )) µs | | | 1.0× |

Program run natively: $((native / 1000000)) ms for $N calls. Per-hit cost = (time with the breakpoint − time of the same debugger running the program without one) / $N.
TABLE
)
echo "$table"

# Replace the section between the markers in BENCHMARKS.md.
python3 - "$table" <<'PY'
import sys, re, datetime, platform
table = sys.argv[1]
path = "BENCHMARKS.md"
text = open(path).read()
start, end = "<!-- breakpoints:start -->", "<!-- breakpoints:end -->"
stamp = f"Measured {datetime.date.today()} on {platform.machine()} ({open('/proc/cpuinfo').read().split('model name')[1].split(':')[1].splitlines()[0].strip()}), `bench/run.sh`."
block = f"{start}\n{stamp}\n\n{table}\n{end}"
text = re.sub(re.escape(start) + ".*?" + re.escape(end), lambda m: block, text, flags=re.S)
open(path, "w").write(text)
PY
