#!/usr/bin/env bash
# How well a calibration predicts schedules it never saw (issue 14's fidelity benchmark).
#
#   scripts/bench_fidelity.sh [BUILD_DIR] [RUNS] [CALIBRATION_RUNS]
#
# 1. Runs 1F1B pp=2 m=8 for real with --profile CALIBRATION_RUNS times (default 5) and
#    calibrates on the medians over them (one slow moment of the machine does not set the costs).
# 2. Simulates 1F1B (in sample) and GPipe, Interleaved1F1B, InterleavedZeroBubble,
#    ZBVZeroBubble and DualPipeV (out of sample) at m=8 and m=16 with the calibrated file, and
#    writes every prediction to predictions.tsv before any of those schedules runs.
# 3. Runs each RUNS times (default 5; the microbatch keeps its size: batch = 32 x m) and prints
#    the median measured step (with min-max) and the median peak memory per rank beside the
#    prediction, and the 1-minute load before each row.
# This machine's speed drifts by tens of percent within minutes (shared host), so runs of a
# schedule alternate with runs of the calibrated 1F1B m=8 (one before the first, one after each)
# and each run's "drift" is the geometric mean of its two neighbours' measured/predicted ratios.
# "drift" printed is the median of those; "at calib" is the median over the runs of the error
# with each run's own drift divided out: the error a machine running at the calibration's speed
# would show. Both errors are printed, and a third: "at ranks", each run predicted again at the
# speed each rank's core ran in that run (`pipelens diff`'s at_rank_speed_ns: the prediction
# re-timed with each rank's computations scaled by that rank's median measured/predicted ratio,
# docs/diff.md): cores here slow down one at a time, for a whole run, which no neighbouring
# reference run can see. It keeps the model's part of the error (what waits for what, how the
# costs split into kinds and stages) and takes out the machine's.
# Local ranks (threads), one intra-op thread each: on a 2-core machine nothing time-slices.
set -euo pipefail

build=${1:-build}
runs=${2:-5}
calibration_runs=${3:-5}
pipelens="$build/app/cli/pipelens"
work=$(mktemp -d "${TMPDIR:-/tmp}/pipelens-fidelity.XXXXXX")
model=(--model mlp --hidden 256 --layers 8 --threads 1 --no-reference)
rows_per_microbatch=32

field() {  # field NAME JSON: every integer value of "NAME" in order
    grep -o "\"$1\":[0-9]*" <<<"$2" | cut -d: -f2
}
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
load() { cut -d' ' -f1 /proc/loadavg; }
reference_step() {  # one run of the calibrated configuration: its step time
    field step_time_ns "$("$pipelens" run --schedule 1F1B --pp 2 --m 8 \
        --batch $((8 * rows_per_microbatch)) "${model[@]}" --json)" | head -1
}

echo "== calibrating on $calibration_runs runs of 1F1B pp=2 m=8 (with --profile), in $work"
for ((run = 1; run <= calibration_runs; ++run)); do
    "$pipelens" run --schedule 1F1B --pp 2 --m 8 --batch $((8 * rows_per_microbatch)) \
        "${model[@]}" --profile --out "$work/calibration.db" >/dev/null
done
"$pipelens" calibrate "$work/calibration.db" --run "$(seq -s, 1 "$calibration_runs")" \
    --out "$work/calibrated.toml"

configs=(1F1B:1 GPipe:1 Interleaved1F1B:2 InterleavedZeroBubble:2 ZBVZeroBubble:2 DualPipeV:2)
printf "schedule\tv\tm\tstep_ns\tpeak_rank0\tpeak_rank1\tbusy_rank0\tbusy_rank1\n" \
    >"$work/predictions.tsv"
for m in 8 16; do
    for config in "${configs[@]}"; do
        schedule=${config%%:*} v=${config##*:}
        json=$("$pipelens" simulate "$work/calibrated.toml" --schedule "$schedule" --v "$v" \
            --m "$m" --out "$work/predicted-$schedule-$m.db" --json)
        peaks=($(field peak_memory_bytes "$json")) busy=($(field busy_ns "$json"))
        printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$schedule" "$v" "$m" \
            "$(field step_time_ns "$json" | head -1)" "${peaks[0]}" "${peaks[1]}" \
            "${busy[0]}" "${busy[1]}" >>"$work/predictions.tsv"
    done
done
echo "== predictions written before any run: $work/predictions.tsv"

reference=$(awk -F'\t' '$1 == "1F1B" && $3 == 8 {print $4}' "$work/predictions.tsv")
printf "\n%-22s %2s %3s %6s %12s %25s %7s %6s %9s %9s %24s %24s\n" schedule v m load predicted \
    "measured median (min-max)" error drift "at calib" "at ranks" "peak r0 pred/meas" \
    "peak r1 pred/meas"
tail -n +2 "$work/predictions.tsv" | while IFS=$'\t' read -r schedule v m predicted p0 p1 b0 b1; do
    before=$(load)
    steps=() m0=() m1=() references=("$(reference_step)") at_ranks=()
    for ((run = 0; run < runs; ++run)); do
        rm -f "$work/run.db"
        json=$("$pipelens" run --schedule "$schedule" --pp 2 --v "$v" --m "$m" \
            --batch $((m * rows_per_microbatch)) "${model[@]}" --out "$work/run.db" --json)
        steps+=("$(field step_time_ns "$json" | head -1)")
        peaks=($(field peak_memory_bytes "$json"))
        m0+=("${peaks[0]}") m1+=("${peaks[1]}")
        # The same prediction at the speed each rank's core ran in this run: what the model gets
        # wrong once the machine's speed is out (`pipelens diff`, the step's measured time
        # beside the prediction re-timed at each rank's speed).
        diff=$("$pipelens" diff "$work/run.db" "$work/predicted-$schedule-$m.db" --top 0 --json)
        at_speed=$(field at_rank_speed_ns "$diff" | head -1)
        measured_actions=$(field measured_ns "$diff" | head -1)
        at_ranks+=("$(awk -v p="$at_speed" -v x="$measured_actions" 'BEGIN {print (p - x) / x}')")
        references+=("$(reference_step)")
    done
    measured=$(printf "%s\n" "${steps[@]}" | median)
    low=$(printf "%s\n" "${steps[@]}" | sort -n | head -1)
    high=$(printf "%s\n" "${steps[@]}" | sort -n | tail -1)
    r0=$(printf "%s\n" "${m0[@]}" | median) r1=$(printf "%s\n" "${m1[@]}" | median)
    pairs="${references[*]}|${steps[*]}|${at_ranks[*]}"
    awk -v s="$schedule" -v v="$v" -v m="$m" -v l="$before" -v p="$predicted" -v x="$measured" \
        -v lo="$low" -v hi="$high" -v p0="$p0" -v r0="$r0" -v p1="$p1" -v r1="$r1" \
        -v ref="$reference" -v pairs="$pairs" '
    function median(values, count,   i, j, t) {
        for (i = 2; i <= count; ++i)
            for (j = i; j > 1 && values[j - 1] > values[j]; --j) {
                t = values[j]; values[j] = values[j - 1]; values[j - 1] = t
            }
        return values[int((count + 1) / 2)]
    }
    BEGIN {
        split(pairs, halves, "|")
        split(halves[1], references, " ")
        count = split(halves[2], measured, " ")
        split(halves[3], at_ranks, " ")
        for (i = 1; i <= count; ++i) {
            ratios[i] = sqrt(references[i] * references[i + 1]) / ref
            errors[i] = (p * ratios[i] - measured[i]) / measured[i]
        }
        drift = median(ratios, count)
        calibrated_error = median(errors, count)
        rank_error = median(at_ranks, count)
        printf "%-22s %2s %3s %6s %9.1f ms %9.1f ms (%.1f-%.1f) %+6.1f%% %6.2f %+8.1f%% %+8.1f%% %7.0f/%7.0f KiB %+5.1f%% %7.0f/%7.0f KiB %+5.1f%%\n",
            s, v, m, l, p / 1e6, x / 1e6, lo / 1e6, hi / 1e6, (p - x) / x * 100, drift,
            calibrated_error * 100, rank_error * 100,
            p0 / 1024, r0 / 1024, (p0 - r0) / r0 * 100, p1 / 1024, r1 / 1024, (p1 - r1) / r1 * 100
    }'
done
