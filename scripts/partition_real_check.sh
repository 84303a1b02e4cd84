#!/usr/bin/env bash
# Whether the split `pipelens partition` chooses is as much faster on a real run as it predicts.
#
#   scripts/partition_real_check.sh [BUILD_DIR] [ROUNDS]
#
# BUILD_DIR: a full build (LibTorch) with pipelens, pipelens-runtime and
# pipelens_write_uneven_mlp (default build-full). ROUNDS: alternations (default 3).
# 1. Writes an uneven model: a TorchScript MLP of 8 layers, hidden 256 (batch 128), whose last
#    layer is 4 blocks wide (an output head), so the even split (4 | 4) puts 3 blocks and the
#    head on stage 1.
# 2. Runs it with 1F1B pp=2 m=8 and --profile, calibrates per-layer costs from that run, and lets
#    `pipelens partition` choose the split for those costs (its predicted steps, even and chosen,
#    are the prediction).
# 3. Runs the even and the chosen split alternately ROUNDS times (--steps 20 --warmup 3 each),
#    and prints each run's median step and each round's step reduction (even - chosen) / even,
#    then the measured gain against the predicted one: the median round's reduction, and the
#    medians of the even and of the chosen runs with their ratio.
# Local ranks (threads), one intra-op thread each: 2 busy threads, which a 2-core machine holds
# without time-slicing. The 1-minute load before each run is printed: other work on the machine
# slows runs unevenly, which alternating spreads over both splits.
set -euo pipefail

build=${1:-build-full}
rounds=${2:-3}
pipelens="$build/app/cli/pipelens"
work=$(mktemp -d "${TMPDIR:-/tmp}/pipelens-partition-check.XXXXXX")
"$build/tests/pipelens_write_uneven_mlp" "$work/uneven.pt" 8 256 4
shape=(--schedule 1F1B --pp 2 --m 8)
model=(--model "$work/uneven.pt" --input-shape 256 --batch 128 --threads 1 --no-reference)

median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
load() { cut -d' ' -f1 /proc/loadavg; }
step_median() {  # run ARGS...: the median recorded step in ns
    "$pipelens" run "${shape[@]}" "${model[@]}" --steps 20 --warmup 3 "$@" --json |
        grep -o '"median_ns":[0-9]*' | head -1 | cut -d: -f2
}

echo "== calibrating (1F1B pp=2 m=8, --profile) in $work"
"$pipelens" run "${shape[@]}" "${model[@]}" --steps 3 --warmup 1 --profile \
    --out "$work/calibration.db" >/dev/null
"$pipelens" calibrate "$work/calibration.db" --out "$work/calibrated.toml" >/dev/null
"$pipelens" partition "$work/calibrated.toml" | tee "$work/partition.txt"
read -r -a split <<<"$(sed -n 's/^pipelens run: //p' "$work/partition.txt")"
# "predicted step: 2.003 s against 2.321 s for the even split ...": both in ms.
predicted=($(awk '/^predicted step:/ {
    scale["ns"] = 1e-6; scale["us"] = 1e-3; scale["ms"] = 1; scale["s"] = 1e3
    print $3 * scale[$4], $6 * scale[$7] }' "$work/partition.txt"))
chosen_predicted=${predicted[0]} even_predicted=${predicted[1]}

printf "\n%5s %6s %16s %6s %18s %16s\n" round load "even step (ms)" load "chosen step (ms)" \
    "step reduction"
evens=() chosens=() reductions=()
for ((round = 1; round <= rounds; ++round)); do
    load_even=$(load)
    even=$(step_median)
    load_chosen=$(load)
    chosen=$(step_median "${split[@]}")
    reduction=$(bc -l <<<"100 * ($even - $chosen) / $even")
    evens+=("$even") chosens+=("$chosen") reductions+=("$reduction")
    printf "%5d %6s %16.1f %6s %18.1f %15.1f%%\n" "$round" "$load_even" \
        "$(bc -l <<<"$even / 1000000")" "$load_chosen" "$(bc -l <<<"$chosen / 1000000")" \
        "$reduction"
done
even_median=$(printf "%s\n" "${evens[@]}" | median)
chosen_median=$(printf "%s\n" "${chosens[@]}" | median)
reduction_median=$(printf "%s\n" "${reductions[@]}" | median)
printf "\n%-10s %14s %14s %12s %16s\n" "" "even (ms)" "chosen (ms)" "even/chosen" \
    "step reduction"
printf "%-10s %14.1f %14.1f %12.3f %15.1f%%\n" predicted "$even_predicted" "$chosen_predicted" \
    "$(bc -l <<<"$even_predicted / $chosen_predicted")" \
    "$(bc -l <<<"100 * ($even_predicted - $chosen_predicted) / $even_predicted")"
printf "%-10s %14.1f %14.1f %12.3f %15.1f%%\n" measured "$(bc -l <<<"$even_median / 1000000")" \
    "$(bc -l <<<"$chosen_median / 1000000")" "$(bc -l <<<"$even_median / $chosen_median")" \
    "$(bc -l <<<"100 * ($even_median - $chosen_median) / $even_median")"
predicted_reduction=$(bc -l <<<"100 * ($even_predicted - $chosen_predicted) / $even_predicted")
printf "median round's step reduction: %.1f%% measured against %.1f%% predicted\n" \
    "$reduction_median" "$predicted_reduction"
echo "split chosen: ${split[*]} (files in $work)"
