#!/usr/bin/env bash
# Exactness of multi-threaded replays (issue 11): `zstd -T2 -5` and `xz -T2` compress MB
# megabytes of generated text (the same every run: bench/programs/words.py), each recorded
# once, then replayed RUNS times with `-q` and RUNS times without. Every replay must
#   - end where the recording ended: the same final position (`when` after the program
#     exited: event, the exiting thread's tick count, pc), the event being the recording's
#     exit_group, and the recorded exit status;
#   - without `-q`, print the recorded output again, byte for byte (it is compared with the
#     program's output in the recording, which is compared with a native run's).
# A divergence makes the replay fail: it is reported with hindsight's message. Also times
# the native run, the recording and each replay (wall clock, one run each: ratios to native).
# Prints a Markdown table and a verdict line; exits 1 if any replay was not exact.
#
#   bench/threads_exact.sh
#   MB=50 RUNS=5 PROGRAMS="zstd xz" LIMIT=3600 bench/threads_exact.sh
#   PROGRAMS=xz MB=8 XZ_ARGS="-T2 --block-size=2MiB" bench/threads_exact.sh
#   HS=target/debug/hindsight MB=1 RUNS=1 bench/threads_exact.sh   # a quick try
#
# Needs zstd and xz (apt-get install zstd xz-utils; installed here when run as root) and
# python3.
set -euo pipefail
cd "$(dirname "$0")/.."
MB=${MB:-50}                      # megabytes of input
RUNS=${RUNS:-5}                   # replays with -q, and as many without
PROGRAMS=${PROGRAMS:-"zstd xz"}   # which compressors
ZSTD_ARGS=${ZSTD_ARGS:-"-T2 -5"}  # their options
XZ_ARGS=${XZ_ARGS:-"-T2"}         # (xz -T2 splits its input in blocks of 24 MiB at level 6)
LIMIT=${LIMIT:-3600}              # seconds before a run counts as "timeout"
out=bench/out/exact
mkdir -p "$out"
export HINDSIGHT_DIR="$PWD/$out/traces"   # nothing goes to the home directory
export HINDSIGHT_CACHE_DIR="$PWD/$out/cache"
if [ -z "${HS:-}" ]; then
    cargo build --release -q -p hindsight
fi
hs=${HS:-${CARGO_TARGET_DIR:-target}/release/hindsight}   # HS=...: another hindsight binary
if ! command -v zstd >/dev/null || ! command -v xz >/dev/null; then
    if [ "$(id -u)" = 0 ]; then apt-get install -y -q zstd xz-utils >/dev/null; fi
    command -v zstd >/dev/null && command -v xz >/dev/null || { echo "zstd and xz are needed (apt install zstd xz-utils)" >&2; exit 1; }
fi
input="$out/input-$MB.txt"
if [ ! -s "$input" ] || [ "$(stat -c %s "$input")" -ne $((MB * 1048576)) ]; then
    python3 bench/programs/words.py $((MB * 1048576)) >"$input"
fi

command_of() {
    case "$1" in
        zstd) echo "zstd $ZSTD_ARGS -c $input" ;;
        xz) echo "xz $XZ_ARGS -c $input" ;;
        *) echo "unknown program $1" >&2; exit 2 ;;
    esac
}

# Runs "$@" with stdout to $OUT_FILE; echoes the wall time in ns, or "timeout"/"exit N".
timed() {
    local t0 t1 st=0
    t0=$(date +%s%N)
    timeout "$LIMIT" "$@" >"$OUT_FILE" 2>"$out/stderr" || st=$?
    t1=$(date +%s%N)
    if [ "$st" -eq 0 ]; then echo $((t1 - t0));
    elif [ "$st" -eq 124 ]; then echo timeout;
    else echo "exit $st"; fi
}
isnum() { [[ "$1" =~ ^[0-9]+$ ]]; }
secs() { if isnum "$1"; then awk -v n="$1" 'BEGIN { printf "%.1f s", n / 1e9 }'; else echo "$1"; fi; }
ratio() { if isnum "$1" && isnum "$2"; then awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f×", a / b }'; else echo "-"; fi; }

# The program's bytes in a replay's stdout: between hindsight's "Continuing." line and its
# "[Inferior 1 (process N) exited ...]" line, without hindsight's thread notices (whole
# lines, printed between two writes of the program).
program_bytes() {
    python3 - "$1" "$2" <<'PY'
import re
import sys
data = open(sys.argv[1], "rb").read()
head = b"Continuing.\n"
start = data.find(head)
start = 0 if start < 0 else start + len(head)
end = data.rfind(b"[Inferior 1 (process ")
body = data[start:end if end >= 0 else len(data)]
body = re.sub(rb"\[(New Thread|Thread) 0x[0-9a-f]+ \(LWP \d+\)( exited)?\]\n", b"", body)
open(sys.argv[2], "wb").write(body)
PY
}

load() { cut -d' ' -f1-3 /proc/loadavg; }

rows=""
verdict=0
summary=""
echo "load at start: $(load)" >&2
for prog in $PROGRAMS; do
    cmd=$(command_of "$prog")
    echo "== $cmd" >&2
    # shellcheck disable=SC2086
    OUT_FILE="$out/$prog.native" native=$(timed $cmd)
    trace="$out/trace-$prog"
    rm -rf "$trace"
    # shellcheck disable=SC2086
    OUT_FILE="$out/$prog.recorded" rec=$(timed "$hs" record -o "$trace" -- $cmd)
    same_as_native=no
    cmp -s "$out/$prog.native" "$out/$prog.recorded" && same_as_native=yes
    if ! isnum "$rec"; then
        echo "recording $prog failed: $rec: $(tail -1 "$out/stderr")" >&2
        rows+="| \`$cmd\` | $(secs "$native") | $rec | | | | not recorded |"$'\n'
        verdict=1
        continue
    fi
    # The recording's end: its exit status and the event of its exit_group.
    exit_status=$("$hs" info "$trace" | sed -n 's/^Exit: *//p')
    exit_event=$("$hs" info --events "$trace" | awk '/exit_group\(/ { e = $1 } END { print e }')
    exact=0
    positions=""
    times_q=()
    times_out=()
    failures=""
    for mode in q out; do
        for i in $(seq "$RUNS"); do
            flags=(--batch -ex continue -ex when)
            [ "$mode" = q ] && flags=(-q "${flags[@]}")
            OUT_FILE="$out/$prog.replay" t=$(timed "$hs" replay "$trace" "${flags[@]}")
            ok=yes
            why=""
            if ! isnum "$t"; then
                ok=no; why="$t: $(tail -1 "$out/stderr")"
            else
                pos=$(sed -n 's/^Current position: //p' "$out/$prog.replay" | tail -1)
                positions+="$pos"$'\n'
                if [ -z "$pos" ] || [ "${pos%%:*}" != "$exit_event" ]; then
                    ok=no; why="ended at '$pos', the recording's exit_group is event $exit_event"
                fi
                case "$exit_status" in
                    "exit 0") grep -q '^\[Inferior 1 (process [0-9]*) exited normally\]' "$out/$prog.replay" || { ok=no; why="no normal exit"; } ;;
                esac
                if [ "$mode" = out ]; then
                    program_bytes "$out/$prog.replay" "$out/$prog.replayed"
                    if ! cmp -s "$out/$prog.replayed" "$out/$prog.recorded"; then
                        ok=no; why="the replayed output differs from the recorded one"
                    fi
                fi
                if [ "$mode" = q ]; then times_q+=("$t"); else times_out+=("$t"); fi
            fi
            echo "  replay $mode #$i: $(secs "$t") $ok $why" >&2
            if [ "$ok" = yes ]; then exact=$((exact + 1)); else failures+="$mode #$i: $why; "; fi
        done
    done
    distinct=$(printf '%s' "$positions" | sort -u | grep -c . || true)
    if [ "$distinct" -gt 1 ]; then
        failures+="$distinct different final positions; "
        exact=0
    fi
    best() { printf '%s\n' "$@" | sort -n | head -1; }
    worst() { printf '%s\n' "$@" | sort -n | tail -1; }
    rq=-; ro=-
    [ "${#times_q[@]}" -gt 0 ] && rq="$(secs "$(best "${times_q[@]}")")–$(secs "$(worst "${times_q[@]}")") ($(ratio "$(best "${times_q[@]}")" "$native")–$(ratio "$(worst "${times_q[@]}")" "$native"))"
    [ "${#times_out[@]}" -gt 0 ] && ro="$(secs "$(best "${times_out[@]}")")–$(secs "$(worst "${times_out[@]}")") ($(ratio "$(best "${times_out[@]}")" "$native")–$(ratio "$(worst "${times_out[@]}")" "$native"))"
    total=$((2 * RUNS))
    [ "$exact" -eq "$total" ] || verdict=1
    final=$(printf '%s' "$positions" | sort -u | head -1)
    rows+="| \`$cmd\` | $(secs "$native") | $(secs "$rec") ($(ratio "$rec" "$native")) | $rq | $ro | $exact of $total exact (end \`$final\`, exit_group = event $exit_event; output = recorded: $( [ "$exact" -eq "$total" ] && echo yes || echo no ); recorded = native: $same_as_native) |"$'\n'
    [ -n "$failures" ] && summary+="$prog: $failures"$'\n'
done
echo "load at end: $(load)" >&2

cat <<TABLE
| program ($MB MB of text, 2 threads) | native | record | replay -q ×$RUNS (best–worst) | replay ×$RUNS, output shown (best–worst) | exact replays |
|---|---|---|---|---|---|
$rows
TABLE
[ -n "$summary" ] && printf 'Not exact:\n%s' "$summary"
if [ "$verdict" -eq 0 ]; then echo "All replays exact."; fi
exit "$verdict"
