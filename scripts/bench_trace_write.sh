#!/usr/bin/env bash
# Whole-process `pipelens simulate --out` against raw SQLite inserts of the same rows, measured
# in one run, alternating, so both see the same machine load. Default case: Interleaved1F1B
# pp=256 v=2 m=1024 (about 3.1 M actions). Prints each round, then the medians, the spread and
# the ratio (target: pipelens >= 80% of raw rows/s), the ratio of the fastest rounds, and the
# file size per action. TMPDIR chooses where the files go (/tmp by default).
#
#   scripts/bench_trace_write.sh [BUILD_DIR] [ROUNDS] [-- simulate flags...]
set -euo pipefail
build=${1:-build}
rounds=${2:-5}
shift $(( $# > 2 ? 2 : $# ))
[[ ${1:-} == -- ]] && shift
flags=("$@")
[[ ${#flags[@]} -eq 0 ]] && flags=(--schedule Interleaved1F1B --pp 256 --v 2 --m 1024)
pipelens=$build/app/cli/pipelens
raw=$build/tests/pipelens_bench_raw_rows
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "case: ${flags[*]}  (cores: $(nproc), load before: $(cut -d' ' -f1-3 /proc/loadavg))"
calc() { awk "BEGIN { print $1 }"; }
pipelens_times=() raw_times=() ratios=()
for round in $(seq 1 "$rounds"); do
    rm -f "$work/sim.db"
    start=$(date +%s.%N)
    "$pipelens" simulate "${flags[@]}" --out "$work/sim.db" > /dev/null
    end=$(date +%s.%N)
    pipelens_s=$(calc "$end - $start")
    line=$("$raw" "$work/sim.db" 1 "$work/raw.db")
    raw_s=$(sed -E 's/.*raw_seconds=([0-9.]+).*/\1/' <<<"$line")
    rows=$(sed -E 's/.* rows=([0-9]+).*/\1/' <<<"$line")
    actions=$(sed -E 's/.* actions=([0-9]+).*/\1/' <<<"$line")
    ratio=$(calc "$raw_s / $pipelens_s")
    pipelens_times+=("$pipelens_s") raw_times+=("$raw_s") ratios+=("$ratio")
    printf 'round %d: pipelens simulate --out %.2f s, raw inserts %.2f s (%d rows), pipelens at %.0f%% of raw  (load %s)\n' \
        "$round" "$pipelens_s" "$raw_s" "$rows" "$(calc "$ratio * 100")" "$(cut -d' ' -f1 /proc/loadavg)"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
spread() { printf '%s\n' "$@" | sort -g | awk 'NR==1{lo=$1} {hi=$1} END {printf "%.3f-%.3f", lo, hi}'; }
printf 'median: pipelens %.2f s (%s), raw %.2f s (%s), ratio %.0f%% (%s)\n' \
    "$(median "${pipelens_times[@]}")" "$(spread "${pipelens_times[@]}")" \
    "$(median "${raw_times[@]}")" "$(spread "${raw_times[@]}")" \
    "$(calc "$(median "${ratios[@]}") * 100")" "$(spread "${ratios[@]}")"
# Noise on a shared machine only ever adds time, so the fastest rounds are the steadiest
# estimate of what each side costs; their ratio is printed beside the median of the ratios.
fastest() { printf '%s\n' "$@" | sort -g | head -1; }
printf 'fastest rounds: pipelens %.2f s, raw %.2f s, ratio %.0f%%\n' \
    "$(fastest "${pipelens_times[@]}")" "$(fastest "${raw_times[@]}")" \
    "$(calc "$(fastest "${raw_times[@]}") / $(fastest "${pipelens_times[@]}") * 100")"
size=$(stat -c %s "$work/sim.db")
printf 'pipelens: %.1f M actions/s whole process; file %d bytes, %.1f bytes per action\n' \
    "$(calc "$actions / $(median "${pipelens_times[@]}") / 1000000")" "$size" \
    "$(calc "$size / $actions")"
