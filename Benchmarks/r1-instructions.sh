#!/usr/bin/env bash
# R1 in instructions (load-independent): callgrind counts the instructions of the parse row
# (`parseAll`) and of the pipeline (`runPipeline`: ReplaySource + DeviceHub + store, virtual
# time) on ~100,000 events of the R1 input, and prints them per event and as the ratio
# (parse + pipeline) / parse that R1's goal bounds (≤ 2). Builds ReplayThroughput in release
# first. To measure another commit side by side: export it (`git archive REV | tar -x -C DIR`)
# and pass --root DIR (its own scratch path is used).
#   Benchmarks/r1-instructions.sh [--root DIR] [--events N]
set -euo pipefail
cd "$(dirname "$0")"
repo="$(cd .. && pwd)"
root="$repo"; events=100000
while [[ $# -gt 0 ]]; do
    case "$1" in
        --root) root="$(cd "$2" && pwd)"; shift 2 ;;
        --events) events="$2"; shift 2 ;;
        *) echo "usage: $0 [--root DIR] [--events N]" >&2; exit 2 ;;
    esac
done
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 1; }
scratch=".build-r1-$(echo "$root" | md5sum | cut -c1-8)"
EVFLOW_ROOT="$root" swift build -c release --scratch-path "$scratch" --product ReplayThroughput >&2
bin="$scratch/release/ReplayThroughput"
# valgrind cannot read Swift's DWARF 5; the symbols are enough.
strip --strip-debug -o "$scratch/ReplayThroughput.nodebug" "$bin"
count() {  # count SYMBOL-PREFIX -> instructions collected inside it (all calls)
    valgrind --tool=callgrind --callgrind-out-file=/dev/null --toggle-collect="$1*" \
        "$scratch/ReplayThroughput.nodebug" --reps 1 --events "$events" --recordings "$repo/Tests/Fixtures/recordings" \
        2>&1 >"$scratch/r1.out" | grep -o 'Collected : [0-9]*' | awk '{print $3}'
}
parse_all=$(count '$s16ReplayThroughput8parseAll')       # 3 calls: the check, the parse row, the pipeline row
pipeline=$(count '$s16ReplayThroughput11runPipeline')   # 1 call
n=$(grep -o '= [0-9]* events' "$scratch/r1.out" | awk '{print $2}')
grep checksum "$scratch/r1.out"
awk -v p="$parse_all" -v q="$pipeline" -v n="$n" 'BEGIN {
    parse = p / 3
    printf "events: %d\nparse:    %.0f instructions (%.1f / event)\npipeline: %.0f instructions (%.1f / event)\n", n, parse, parse / n, q, q / n
    printf "(parse + pipeline) / parse = %.2f (goal ≤ 2)\n", (parse + q) / parse }'
