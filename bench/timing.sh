# Timing helpers shared by bench/reverse.sh and bench/processes.sh (sourced, not run).
# They expect $RUNS (runs per measurement), $LIMIT (seconds a run may take) and $out (where
# the last run's stdout and stderr are left, for the caller to check).

# Wall time in ns of the best of $RUNS runs; exits on failure.
best() {
    local best= t0 t1 d
    for _ in $(seq "$RUNS"); do
        t0=$(date +%s%N)
        if ! timeout "$LIMIT" "$@" >"$out/stdout" 2>"$out/stderr"; then
            echo "failed: $* ($(tail -1 "$out/stderr"))" >&2
            exit 1
        fi
        t1=$(date +%s%N)
        d=$((t1 - t0))
        if [ -z "$best" ] || [ "$d" -lt "$best" ]; then best=$d; fi
    done
    echo "$best"
}
ms() { awk -v n="$1" 'BEGIN { printf "%.1f ms", n / 1e6 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f×", a / b; else print "-" }'; }
