#!/usr/bin/env bash
# Load-independent cross-check of the time ratios: instructions per unit of every
# single-threaded row, counted by valgrind's callgrind (W4 is left out: its work happens on
# dispatch worker threads and in futex waits, which instruction counts do not capture fairly).
# Per-unit count = (Ir at size 2m − Ir at size m) / (units(2m) − units(m)), so start-up and the
# fixed warm-up cancel out. Build first (run.sh does); same EVFLOW_ROOT/--commit handling.
#   Benchmarks/instructions.sh [--commit REV] [--divisor 100]
set -euo pipefail
cd "$(dirname "$0")"
scratch="${EVFLOW_BENCH_SCRATCH:-.build-bench}"
if [[ "${1:-}" == "--commit" ]]; then
    rev="$(git rev-parse --short "$2")"; shift 2
    export EVFLOW_ROOT="$PWD/$scratch/snapshots/$rev/evflow"
    [[ -f "$EVFLOW_ROOT/Package.swift" ]] || { echo "run run.sh --commit $rev first" >&2; exit 1; }
fi
divisor=100
if [[ "${1:-}" == "--divisor" ]]; then divisor="$2"; shift 2; fi
bin="$(swift build -c release --scratch-path "$scratch" --show-bin-path)/evflow-ratios"

irs() {  # irs ROW N -> "Ir units checksum"
    local out
    out="$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" --row "$1" --n "$2" 2>"$scratch/callgrind.err")"
    local ir; ir="$(grep -o 'Collected : [0-9]*' "$scratch/callgrind.err" | awk '{print $3}')"
    echo "$ir $(echo "$out" | cut -f4) $(echo "$out" | cut -f5)"
}

echo "| workload | row | instructions / unit | ratio (row / floor) | checksum at 2m |"
echo "|---|---|---|---|---|"
for spec in "W1 10000000" "W2 1000000" "W3 1000000" "W5 throttle 1000000" "W5 debounce 1000000"; do
    id="${spec% *}"; n="${spec##* }"
    m=$(( n / divisor )); m2=$(( 2 * m ))
    floor_per=""
    for label in floor evflow OpenCombine; do
        [[ "$id" == W5* && "$label" == OpenCombine ]] && continue
        read -r ir1 u1 _ <<<"$(irs "$id:$label" "$m")"
        read -r ir2 u2 sum2 <<<"$(irs "$id:$label" "$m2")"
        per=$(awk -v a="$ir1" -v b="$ir2" -v u="$u1" -v w="$u2" 'BEGIN { printf "%.1f", (b - a) / (w - u) }')
        if [[ "$label" == floor ]]; then floor_per="$per"; ratio="1 (baseline)"
        else ratio=$(awk -v p="$per" -v f="$floor_per" 'BEGIN { printf "%.2f×", p / f }'); fi
        echo "| $id | $label | $per | $ratio | $sum2 |"
    done
done
