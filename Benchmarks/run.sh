#!/usr/bin/env bash
# Reproduces the reactive core table (docs/benchmarks.md, "Reactive core (W1–W5)"):
# builds evflow-ratios in release mode, counts heap allocations per row in one process under
# an LD_PRELOAD counter, then times every row interleaved in a second process without it and
# prints the Markdown table.
#
#   Benchmarks/run.sh [--commit REV] [evflow-ratios options]
#     --commit REV     measure that commit (exported with git archive) instead of the working
#                      tree, which other people may be editing
#     --reps N         interleaved repetitions (default 5)
#     --only W1,W4     some workloads
#     --scale K        sizes divided by K (quick check only; not the docs/benchmarks.md sizes)
# EVFLOW_BENCH_SCRATCH overrides the build folder (default Benchmarks/.build-bench).
set -euo pipefail
cd "$(dirname "$0")"
scratch="${EVFLOW_BENCH_SCRATCH:-.build-bench}"

if [[ "${1:-}" == "--commit" ]]; then
    rev="$(git rev-parse --short "$2")"
    shift 2
    snapshot="$PWD/$scratch/snapshots/$rev/evflow"
    if [[ ! -f "$snapshot/Package.swift" ]]; then
        mkdir -p "$snapshot"
        git -C .. archive "$rev" | tar -x -C "$snapshot"
    fi
    export EVFLOW_ROOT="$snapshot"
    echo "Measuring evflow at commit $rev" >&2
fi

swift build -c release --scratch-path "$scratch" --product evflow-ratios >&2
bin="$(swift build -c release --scratch-path "$scratch" --show-bin-path)/evflow-ratios"

counter="$scratch/alloc_counter.so"
cc -O2 -shared -fPIC -o "$counter" alloc-counter/alloc_counter.c
allocs="$scratch/allocs.tsv"
LD_PRELOAD="$PWD/$counter" "$bin" --count-allocs "$@" > "$allocs"

"$bin" --allocs "$allocs" "$@"
