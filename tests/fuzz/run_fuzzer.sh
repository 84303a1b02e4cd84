#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time, starting from its committed seed corpus and
# keeping everything it produces out of the source tree: new inputs go to WORK/corpus, inputs
# that crash, hang or use too much memory to WORK/findings. Prints one summary line (executions,
# executions per second, new inputs, peak memory) and, for each finding, how to reproduce it.
# Exit status: 0 when nothing was found, 1 otherwise.
#   run_fuzzer.sh [--fresh] BINARY SEED_CORPUS WORK SECONDS
# --fresh starts WORK empty (ctest: the same short run every time).
set -euo pipefail

fresh=0
if [ "${1:-}" = "--fresh" ]; then
    fresh=1
    shift
fi
if [ $# -ne 4 ]; then
    echo "usage: run_fuzzer.sh [--fresh] BINARY SEED_CORPUS WORK SECONDS" >&2
    exit 2
fi
binary=$1
seeds=$2
work=$3
seconds=$4
name=$(basename "$binary")

if [ "$fresh" -eq 1 ]; then
    rm -rf "$work"
fi
mkdir -p "$work/corpus" "$work/findings"
log="$work/fuzz.log"

# The first corpus directory receives new inputs; the seeds are only read. -timeout is per input;
# -rss_limit_mb (and the malloc limit it implies) makes an input that needs over 2 GB a finding.
status=0
"$binary" "$work/corpus" "$seeds" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$work/findings/" -print_final_stats=1 >"$log" 2>&1 || status=$?

stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -n 1; }
wall=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -n 1)
echo "$name: $(stat number_of_executed_units) executions in ${wall:-?}s" \
    "($(stat average_exec_per_sec) exec/s), $(stat new_units_added) new inputs," \
    "peak $(stat peak_rss_mb) MB; log: $log"

findings=$(find "$work/findings" -type f | sort)
if [ "$status" -ne 0 ] || [ -n "$findings" ]; then
    echo "$name: FOUND A DEFECT (libFuzzer exit $status):"
    grep -E "^==[0-9]+==ERROR|^SUMMARY|runtime error|fuzz invariant|ALARM|out-of-memory|Test unit written" \
        "$log" | head -n 20
    for finding in $findings; do
        echo "  reproduce: $binary $finding"
    done
    exit 1
fi
