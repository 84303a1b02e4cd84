#!/usr/bin/env bash
# fidelity.sh BUILD_DIR OUT_DIR: how well a calibration predicts schedules it never saw, on a
# machine whose cores nobody else uses (the GPU machine's 16 quiet cores; docs/device.md).
#
# 1. Transport: one process per rank (`--transport gloo --nproc PP`) when the build has the gloo
#    transport (found by a tiny probe run), else ranks as threads (`--transport local`), said in
#    the output and in the results. One intra-op thread per rank; a pp whose ranks x threads
#    exceed the cores is skipped (never more busy threads than cores).
# 2. Calibrates on FIDELITY_CALIBRATION_RUNS profiled runs of 1F1B at one pp (4 on 16 cores or
#    more, else 2) and m=8 (`calibrate --run 1,2,...`: medians over the runs). The costs are per
#    layer, so every pp, v and m below is predicted from the one calibration (calibration.md,
#    "Any layout"); the model keeps its layer count (FIDELITY_LAYERS) at every pp.
# 3. Predicts every row (kind x pp x m; v=2 for the interleaved and V-shaped kinds) with
#    `simulate --json` into predictions.tsv and predictions.db BEFORE any row is measured; a
#    configuration the simulator refuses (DualPipeV with m < 2 pp) is recorded as refused.
# 4. Measures each row: `run --steps S --warmup W --json --out traces.db` (the microbatch keeps
#    FIDELITY_ROWS_PER_MICROBATCH rows), then `diff` of the run against its prediction. With
#    FIDELITY_ROUNDS=R > 1 every row is measured R times, in R rounds over all rows (one run of
#    each row per round, ceil(S / R) steps each), and `diff --real-run A,B,...` pools the runs'
#    steps: a machine whose speed moves from run to run (a KVM guest's vCPUs) then gives each row
#    R draws spread over the whole session instead of one.
#    With FIDELITY_ANCHOR_STEPS > 0 (default 10), the calibrated configuration is measured again
#    before each row's run (or before every FIDELITY_ANCHOR_EVERY-th run, counted over all rows)
#    and after the last (an anchor:
#    `run --steps FIDELITY_ANCHOR_STEPS` into
#    anchors.db, a line of anchors.tsv), so each row can also be judged at the machine's speed of
#    its own minutes: a shared or virtual machine's speed moves by tens of percent between runs.
# 5. fidelity_table.py writes fidelity.tsv and fidelity.json and prints the table with the
#    targets (every row within 5 %, the median row within 2 %, peak memory per rank within 10 %),
#    and with anchors the drift-paired error: the prediction scaled by the anchors' measured /
#    predicted step on either side of the row.
# 6. With budget left: scripts/partition_real_check.sh BUILD_DIR 3 into partition_check.log (its
#    files in OUT_DIR/pipelens-partition-check.*).
#
# Every step runs under `timeout`, cut to what is left of FIDELITY_BUDGET_S (default 300); rows
# not reached are recorded as skipped with the reason. OUT_DIR also gets logs/, runs/, diffs/,
# sims/ (each command's JSON), calibration.db, calibrated.toml, calibration.json, meta.tsv.
# Exit status: 2 on a usage error or when calibration fails, else 0 (the table says what passed).
#
# Environment (space-separated lists): FIDELITY_BUDGET_S, FIDELITY_PP (default "2 4 8"),
# FIDELITY_M ("8 16"), FIDELITY_KINDS (the six below), FIDELITY_CALIBRATION_PP,
# FIDELITY_CALIBRATION_M (8), FIDELITY_CALIBRATION_RUNS (3), FIDELITY_STEPS (20),
# FIDELITY_WARMUP (5), FIDELITY_HIDDEN (256), FIDELITY_LAYERS (16), FIDELITY_ROWS_PER_MICROBATCH
# (32), FIDELITY_THREADS (1), FIDELITY_DEVICE (cpu: the cores are what is measured),
# FIDELITY_TRANSPORT (gloo or local: skip the probe), FIDELITY_RUN_TIMEOUT_S (120),
# FIDELITY_PARTITION_ROUNDS (3; 0 skips the partition check), FIDELITY_PARTITION_MIN_S (90: the
# budget left that the partition check needs to start), FIDELITY_ANCHOR_STEPS (10; 0: no anchors),
# FIDELITY_ANCHOR_WARMUP (3), FIDELITY_ANCHOR_EVERY (1: an anchor before every K-th run, counted
# over all rows), FIDELITY_ROUNDS (1), FIDELITY_DIFF_GRACE_S (30: how long past the budget the
# diffs of rows already measured may still run, so a spent budget loses no measured row's split).
set -uo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 BUILD_DIR OUT_DIR" >&2
    exit 2
fi
script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build_dir="$(cd "$1" && pwd)" || exit 2
mkdir -p "$2"/logs "$2"/runs "$2"/diffs "$2"/sims || exit 2
out_dir="$(cd "$2" && pwd)"
pipelens="$build_dir/app/cli/pipelens"
table="$script_dir/fidelity_table.py"
started=$(date +%s)
budget_s="${FIDELITY_BUDGET_S:-300}"
cores=$(nproc)
threads="${FIDELITY_THREADS:-1}"
device="${FIDELITY_DEVICE:-cpu}"
hidden="${FIDELITY_HIDDEN:-256}"
layers="${FIDELITY_LAYERS:-16}"
rows_per_microbatch="${FIDELITY_ROWS_PER_MICROBATCH:-32}"
steps="${FIDELITY_STEPS:-20}"
warmup="${FIDELITY_WARMUP:-5}"
run_timeout_s="${FIDELITY_RUN_TIMEOUT_S:-120}"
calibration_runs="${FIDELITY_CALIBRATION_RUNS:-3}"
calibration_m="${FIDELITY_CALIBRATION_M:-8}"
anchor_steps="${FIDELITY_ANCHOR_STEPS:-10}"
anchor_warmup="${FIDELITY_ANCHOR_WARMUP:-3}"
rounds="${FIDELITY_ROUNDS:-1}"
anchor_every="${FIDELITY_ANCHOR_EVERY:-1}"
diff_grace_s="${FIDELITY_DIFF_GRACE_S:-30}"
for setting in "FIDELITY_ROUNDS=$rounds" "FIDELITY_ANCHOR_EVERY=$anchor_every"; do
    value="${setting#*=}"
    case "$value" in '' | *[!0-9]*) value=0 ;; *) value=$((10#$value)) ;; esac
    if [ "$value" -lt 1 ]; then
        echo "$0: ${setting%%=*} must be a whole number of at least 1, not '${setting#*=}'" >&2
        exit 2
    fi
done
rounds=$((10#$rounds))
anchor_every=$((10#$anchor_every))
case "$diff_grace_s" in '' | *[!0-9]*)
    echo "$0: FIDELITY_DIFF_GRACE_S must be a whole number of seconds, not '$diff_grace_s'" >&2
    exit 2
    ;;
esac
diff_grace_s=$((10#$diff_grace_s))
run_steps=$(((steps + rounds - 1) / rounds))
default_calibration_pp=2
[ "$cores" -ge 16 ] && default_calibration_pp=4
calibration_pp="${FIDELITY_CALIBRATION_PP:-$default_calibration_pp}"
pps=(${FIDELITY_PP-2 4 8})
ms=(${FIDELITY_M-8 16})
kinds=(${FIDELITY_KINDS-1F1B GPipe Interleaved1F1B InterleavedZeroBubble ZBVZeroBubble DualPipeV})

say() { echo "fidelity.sh: $*"; }
elapsed() { echo $(($(date +%s) - started)); }
# With extra_s set (a diff's grace), that much past the budget.
remaining() { echo $((budget_s + ${extra_s:-0} - $(elapsed))); }
load() { cut -d' ' -f1 /proc/loadavg; }

# Stages per rank: 2 for the kinds built on several stages per rank, else 1.
stages_per_rank() {
    case "$1" in
    Interleaved1F1B | InterleavedZeroBubble | ZBVZeroBubble | DualPipeV | LoopedBFS) echo 2 ;;
    *) echo 1 ;;
    esac
}

# bounded LIMIT_S LOG COMMAND...: runs it under timeout cut to the budget left, stdout to
# $bounded_stdout when set (else to LOG), stderr to LOG. Sets last_rc, last_seconds,
# last_cpu_seconds (the command's CPU time, its children's included) and last_running_mean (the
# threads running on the machine while it ran, on average); returns
# 124 without running when the budget is spent, and sets cut_by_budget when the budget cut it.
bounded() {
    local limit="$1" log="$2"
    shift 2
    local left
    left=$(remaining)
    cut_by_budget=no
    if [ "$left" -le 0 ]; then
        last_rc=124 last_seconds=0 cut_by_budget=yes
        return 124
    fi
    if [ "$left" -lt "$limit" ]; then
        limit=$left
        cut_by_budget=yes
    fi
    local begin end cpu_before sampler
    read_children_cpu
    cpu_before=$children_cpu
    sample_running >"$log.running" &
    sampler=$!
    begin=$(date +%s.%N)
    if [ -n "${bounded_stdout:-}" ]; then
        timeout -k 5 "$limit" "$@" >"$bounded_stdout" 2>"$log"
    else
        timeout -k 5 "$limit" "$@" >"$log" 2>&1
    fi
    last_rc=$?
    end=$(date +%s.%N)
    read_children_cpu
    last_cpu_seconds=$(awk -v a="$cpu_before" -v b="$children_cpu" 'BEGIN { printf "%.1f", b - a }')
    kill "$sampler" 2>/dev/null
    wait "$sampler" 2>/dev/null
    # The sampler's own awk is running when it looks: one thread less than it saw.
    last_running_mean=$(awk '{ n++; s += $1 - 1 } END { printf "%.1f", n ? s / n : 0 }' \
        "$log.running")
    rm -f "$log.running"
    last_seconds=$(awk -v a="$begin" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
    return $last_rc
}

# Sets children_cpu to the CPU seconds (user + system) of this shell's finished children. Called
# directly, never in $( ): a subshell's `times` starts its children's counters at zero.
read_children_cpu() {
    local file="${TMPDIR:-/tmp}/fidelity.times.$$"
    times >"$file"
    children_cpu=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, t, "m"); s += t[1] * 60 + t[2] } }
         END { printf "%.2f", s }' "$file")
    rm -f "$file"
}

# The kernel's count of running threads (procs_running), five times a second, until killed: what
# shared the cores while a row ran, which the load average (a minute's decaying mean) blurs.
sample_running() {
    while :; do
        awk '/^procs_running/ { print $2 }' /proc/stat
        sleep 0.2
    done
}

# Why the last bounded step did not pass, in one line.
failure_reason() {  # LOG
    if [ "$last_rc" -eq 124 ] || [ "$last_rc" -eq 137 ]; then
        if [ "$cut_by_budget" = yes ]; then
            echo "the fidelity budget of ${budget_s} s ran out"
        else
            echo "timed out"
        fi
        return
    fi
    echo "exit $last_rc: $(grep -v '^\s*$' "$1" | tail -n 2 | tr '\t\n' '  ' | cut -c1-240)"
}

device_args=()
if timeout 30 "$pipelens" run --help 2>/dev/null | grep -q -- '--device'; then
    device_args=(--device "$device")
fi
model_args=(--model mlp --hidden "$hidden" --layers "$layers" --threads "$threads"
    --no-reference "${device_args[@]}")

# Sets transport and transport_note: gloo when a two-rank probe over it runs.
choose_transport() {
    transport_note=""
    if [ -n "${FIDELITY_TRANSPORT:-}" ]; then
        transport="$FIDELITY_TRANSPORT"
        transport_note="transport $transport set by FIDELITY_TRANSPORT (no probe)"
        return
    fi
    local log="$out_dir/logs/probe.gloo.log"
    if bounded 60 "$log" "$pipelens" run --schedule 1F1B --pp 2 --m 2 --model mlp --hidden 16 \
        --layers 2 --batch 4 --threads 1 --no-reference "${device_args[@]}" \
        --transport gloo --nproc 2; then
        transport=gloo
        return
    fi
    transport=local
    local why
    why="$(grep -m1 -o 'pipelens was built without the gloo transport[^.]*' "$log")"
    [ -n "$why" ] || why="$(failure_reason "$log")"
    transport_note="no gloo transport ($why): ranks are threads of one process"
    transport_note+=" (--transport local), which share the process's allocator and scheduler"
}

set_transport_args() {  # PP: sets transport_args for a run of PP ranks
    transport_args=(--transport local)
    [ "$transport" = gloo ] && transport_args=(--transport gloo --nproc "$1")
}

fits_cores() {  # PP: whether pp ranks x threads busy threads fit the cores
    [ $(($1 * threads)) -le "$cores" ]
}

write_meta() {
    {
        printf 'key\tvalue\n'
        printf 'transport\t%s\n' "$transport"
        printf 'transport_note\t%s\n' "$transport_note"
        printf 'cores\t%s\n' "$cores"
        printf 'threads\t%s\n' "$threads"
        printf 'device\t%s\n' "$device"
        printf 'model\tmlp hidden %s, %s layers, %s rows per microbatch\n' "$hidden" "$layers" \
            "$rows_per_microbatch"
        if [ "$rounds" -gt 1 ]; then
            printf 'steps\t%s recorded after %s warm-up in each of %s runs (one a round)\n' \
                "$run_steps" "$warmup" "$rounds"
        else
            printf 'steps\t%s recorded after %s warm-up\n' "$steps" "$warmup"
        fi
        printf 'rounds\t%s\n' "$rounds"
        printf 'calibration_pp\t%s\n' "$calibration_pp"
        printf 'calibration_m\t%s\n' "$calibration_m"
        printf 'calibration_runs\t%s\n' "$calibration_runs"
        printf 'anchor_steps\t%s\n' "$anchor_steps"
        printf 'anchor_every\t%s\n' "$anchor_every"
        printf 'budget_s\t%s\n' "$budget_s"
        printf 'elapsed_s\t%s\n' "$(elapsed)"
        printf 'host\t%s\n' "$(uname -n)"
        printf 'load_at_start\t%s\n' "$load_at_start"
    } >"$out_dir/meta.tsv"
}

calibrate() {
    if ! fits_cores "$calibration_pp"; then
        say "calibration pp=$calibration_pp x $threads thread(s) exceeds $cores cores"
        return 1
    fi
    local run ids=() id
    rm -f "$out_dir/calibration.db"
    set_transport_args "$calibration_pp"
    for ((run = 1; run <= calibration_runs; ++run)); do
        say "calibration run $run/$calibration_runs: 1F1B pp=$calibration_pp m=$calibration_m" \
            "--profile (load $(load), $(remaining) s of budget left)"
        bounded_stdout="$out_dir/runs/calibration.$run.json" bounded "$run_timeout_s" \
            "$out_dir/logs/calibration.$run.log" "$pipelens" run --schedule 1F1B \
            --pp "$calibration_pp" --m "$calibration_m" \
            --batch $((calibration_m * rows_per_microbatch)) "${model_args[@]}" \
            "${transport_args[@]}" --steps 5 --warmup 2 --profile \
            --out "$out_dir/calibration.db" --json
        if [ "$last_rc" -ne 0 ]; then
            say "calibration run $run failed: $(failure_reason "$out_dir/logs/calibration.$run.log")"
            continue
        fi
        id="$(python3 "$table" run_id "$out_dir/runs/calibration.$run.json")"
        [ -n "$id" ] && ids+=("$id")
    done
    if [ ${#ids[@]} -eq 0 ]; then
        say "no calibration run completed"
        return 1
    fi
    local list
    list="$(IFS=,; echo "${ids[*]}")"
    bounded_stdout="$out_dir/calibration.json" bounded 60 "$out_dir/logs/calibrate.log" \
        "$pipelens" calibrate "$out_dir/calibration.db" --run "$list" \
        --out "$out_dir/calibrated.toml" --json
    if [ "$last_rc" -ne 0 ]; then
        say "calibrate failed: $(failure_reason "$out_dir/logs/calibrate.log")"
        return 1
    fi
    timeout 60 "$pipelens" calibrate "$out_dir/calibration.db" --run "$list" \
        >"$out_dir/logs/calibrate.txt" 2>&1
    sed 's/^/  /' "$out_dir/logs/calibrate.txt"
}

# The rows, calibrated pp first (its rows are worth most if the budget runs out), then m, kind.
row_pps() {
    local pp
    echo "$calibration_pp"
    for pp in "${pps[@]}"; do [ "$pp" != "$calibration_pp" ] && echo "$pp"; done
}

predict_all() {
    printf 'kind\tpp\tv\tm\tstatus\tpredicted_step_ns\tpredicted_peak_bytes\tsim_run\treason\n' \
        >"$out_dir/predictions.tsv"
    rm -f "$out_dir/predictions.db"
    local pp m kind v name line status reason sim_run
    for pp in $(row_pps); do
        case " ${pps[*]} " in *" $pp "*) ;; *) continue ;; esac
        for m in "${ms[@]}"; do
            for kind in "${kinds[@]}"; do
                v=$(stages_per_rank "$kind")
                name="$kind.pp$pp.v$v.m$m"
                line="" sim_run="" reason="" status=predicted
                if ! fits_cores "$pp"; then
                    status=skipped
                    reason="pp=$pp x $threads thread(s) exceeds the $cores cores"
                elif bounded_stdout="$out_dir/sims/$name.json" bounded 60 \
                    "$out_dir/logs/simulate.$name.log" "$pipelens" simulate \
                    "$out_dir/calibrated.toml" --schedule "$kind" --pp "$pp" --v "$v" --m "$m" \
                    --out "$out_dir/predictions.db" --json &&
                    line="$(python3 "$table" prediction "$out_dir/sims/$name.json")"; then
                    sim_run="$(python3 "$table" run_id "$out_dir/sims/$name.json")"
                else
                    status=refused
                    [ "$cut_by_budget" = yes ] && [ "$last_rc" -eq 124 ] && status=skipped
                    reason="simulate $(failure_reason "$out_dir/logs/simulate.$name.log")"
                fi
                [ -n "$line" ] || line=$'\t'
                printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$pp" "$v" "$m" "$status" \
                    "$line" "$sim_run" "$reason" >>"$out_dir/predictions.tsv"
                if [ $status = predicted ]; then
                    say "predicted $name: $(cut -f1 <<<"$line" | awk '{printf "%.2f ms", $1 / 1e6}')"
                else
                    say "not predicted $name ($status): $reason"
                fi
            done
        done
    done
}

# The anchor's prediction (the calibrated configuration): anchors.tsv's index 0; no
# anchors are measured when it fails.
predict_anchor() {
    printf 'index\tstatus\tstep_ns\tseconds\treason\n' >"$out_dir/anchors.tsv"
    rm -f "$out_dir/anchors.db"
    [ "$anchor_steps" -gt 0 ] || return 1
    local line
    if bounded_stdout="$out_dir/sims/anchor.json" bounded 60 "$out_dir/logs/simulate.anchor.log" \
        "$pipelens" simulate "$out_dir/calibrated.toml" --schedule 1F1B --pp "$calibration_pp" \
        --m "$calibration_m" --json &&
        line="$(python3 "$table" prediction "$out_dir/sims/anchor.json")"; then
        printf '0\tpredicted\t%s\t0\t\n' "$(cut -f1 <<<"$line")" >>"$out_dir/anchors.tsv"
        return 0
    fi
    say "no anchors: simulate of the calibrated configuration" \
        "$(failure_reason "$out_dir/logs/simulate.anchor.log")"
    anchor_steps=0
    return 1
}

# measure_anchor INDEX: the calibrated configuration once more, a line of anchors.tsv.
measure_anchor() {
    [ "$anchor_steps" -gt 0 ] || return 0
    local index="$1" status=measured reason="" median=""
    set_transport_args "$calibration_pp"
    bounded_stdout="$out_dir/runs/anchor.$index.json" bounded "$run_timeout_s" \
        "$out_dir/logs/anchor.$index.log" "$pipelens" run --schedule 1F1B \
        --pp "$calibration_pp" --m "$calibration_m" \
        --batch $((calibration_m * rows_per_microbatch)) "${model_args[@]}" \
        "${transport_args[@]}" --steps "$anchor_steps" --warmup "$anchor_warmup" \
        --out "$out_dir/anchors.db" --json
    if [ "$last_rc" -ne 0 ]; then
        status=failed
        reason="$(failure_reason "$out_dir/logs/anchor.$index.log")"
    else
        median="$(python3 "$table" median_step "$out_dir/runs/anchor.$index.json")"
        [ -n "$median" ] || status=failed reason="its JSON has no median step"
    fi
    printf '%s\t%s\t%s\t%s\t%s\n' "$index" "$status" "$median" "$last_seconds" "$reason" \
        >>"$out_dir/anchors.tsv"
    if [ $status = measured ]; then
        say "anchor $index: 1F1B pp=$calibration_pp m=$calibration_m median step" \
            "$(awk -v n="$median" 'BEGIN { printf "%.2f ms", n / 1e6 }') in $last_seconds s"
    else
        say "anchor $index $status: $reason"
    fi
}

# run_json_of NAME ROUND: a run's JSON, relative to OUT_DIR (one round keeps the old name).
run_json_of() {
    if [ "$rounds" -gt 1 ]; then
        echo "runs/$1.r$2.json"
    else
        echo "runs/$1.json"
    fi
}

# measure_run KIND PP V M ROUND ANCHOR: one real run of the row, a line of row_runs.tsv.
measure_run() {
    local kind="$1" pp="$2" v="$3" m="$4" round="$5" anchor="$6"
    local name="$kind.pp$pp.v$v.m$m" status=measured reason="" run_json real_run=""
    local before log round_note=""
    before=$(load)
    [ "$rounds" -gt 1 ] && round_note=" (round $round)"
    run_json="$(run_json_of "$name" "$round")"
    log="$out_dir/logs/run.$name.log"
    [ "$rounds" -gt 1 ] && log="$out_dir/logs/run.$name.r$round.log"
    set_transport_args "$pp"
    bounded_stdout="$out_dir/$run_json" bounded "$run_timeout_s" "$log" "$pipelens" run \
        --schedule "$kind" --pp "$pp" --v "$v" --m "$m" --batch $((m * rows_per_microbatch)) \
        "${model_args[@]}" "${transport_args[@]}" --steps "$run_steps" --warmup "$warmup" \
        --out "$out_dir/traces.db" --json
    if [ "$last_rc" -ne 0 ]; then
        status=failed
        [ "$cut_by_budget" = yes ] && status=skipped
        reason="run $(failure_reason "$log")"
    else
        real_run="$(python3 "$table" run_id "$out_dir/$run_json")"
        [ -n "$real_run" ] || status=failed reason="its JSON names no run"
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$pp" "$v" \
        "$m" "$round" "$status" "$reason" "$run_json" "$real_run" "$last_seconds" "$before" \
        "$last_cpu_seconds" "$last_running_mean" "$anchor" >>"$out_dir/row_runs.tsv"
    if [ $status = measured ]; then
        say "measured $name$round_note in $last_seconds s (load $before; the run" \
            "used $last_cpu_seconds CPU s, $last_running_mean threads running on average):" \
            "median step $(grep -o '"median_ns":[0-9]*' "$out_dir/$run_json" | head -1 |
                cut -d: -f2 | awk '{printf "%.2f ms", $1 / 1e6}')"
    else
        say "$status $name$round_note: $reason"
    fi
}

# finish_row KIND PP V M SIM_RUN: the row's runs (row_runs.tsv) diffed together against its
# prediction, a line of rows.tsv: lists (comma-separated) of its runs' JSON and anchors, the
# runs' seconds and CPU seconds summed, the threads running averaged over the runs.
finish_row() {
    local kind="$1" pp="$2" v="$3" m="$4" sim_run="$5"
    local name="$kind.pp$pp.v$v.m$m" status reason="" diff_json=""
    local summary ids jsons seconds load cpu running anchors
    summary="$(awk -F'\t' -v k="$kind" -v p="$pp" -v v="$v" -v m="$m" '
        $1 == k && $2 == p && $3 == v && $4 == m {
            if ($6 == "measured") {
                n++; ids = ids (ids == "" ? "" : ",") $9; jsons = jsons (jsons == "" ? "" : ",") $8
                secs += $10; cpu += $12; run += $13; anchors = anchors (anchors == "" ? "" : ",") $14
                if (load == "") load = $11
            } else if (why == "") { why = $6 ": " $7 }
        }
        END { s = "\037"  # a separator that is not white space: empty fields stay fields
              printf "%d%s%s%s%s%s%.1f%s%s%s%.1f%s%.1f%s%s%s%s", n, s, ids, s, jsons, s, secs, s,
                     load, s, cpu, s, n ? run / n : 0, s, anchors, s, why }' "$out_dir/row_runs.tsv")"
    local count why
    IFS=$'\037' read -r count ids jsons seconds load cpu running anchors why <<<"$summary"
    if [ "$count" -eq 0 ]; then
        status="${why%%:*}"
        [ -n "$status" ] || status=skipped why="skipped: not measured"
        reason="${why#*: }"
    else
        status=measured
        [ -n "$why" ] && reason="$count of $rounds runs measured; the first other: $why"
        if [ -n "$sim_run" ] && extra_s=$diff_grace_s bounded_stdout="$out_dir/diffs/$name.json" \
            bounded 60 "$out_dir/logs/diff.$name.log" "$pipelens" diff "$out_dir/traces.db" \
            "$out_dir/predictions.db" --real-run "$ids" --sim-run "$sim_run" --top 5 --json; then
            diff_json="diffs/$name.json"
        else
            reason="${reason:+$reason; }diff $(failure_reason "$out_dir/logs/diff.$name.log")"
        fi
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$pp" "$v" "$m" \
        "$status" "$reason" "$jsons" "$diff_json" "$seconds" "$load" "$cpu" "$running" \
        "$anchors" >>"$out_dir/rows.tsv"
}

# The predicted rows, one "kind pp v m sim_run" line each, in predictions.tsv's order.
predicted_rows() {
    awk -F'\t' 'NR > 1 && $5 == "predicted" { print $1 "\t" $2 "\t" $3 "\t" $4 "\t" $8 }' \
        "$out_dir/predictions.tsv"
}

# measure_turn KIND PP V M ROUND COUNT TOTAL: the row's run of this round (with the anchor before
# it when one is due), unless the row failed before or the budget is spent.
measure_turn() {
    local kind="$1" pp="$2" v="$3" m="$4" round="$5" count="$6" total="$7"
    # A row that failed once is not run again: its reason is already recorded.
    if [ "$round" -gt 1 ] && awk -F'\t' -v k="$kind" -v p="$pp" -v v="$v" -v m="$m" \
        '$1 == k && $2 == p && $3 == v && $4 == m && $6 == "failed" { f = 1 }
         END { exit !f }' "$out_dir/row_runs.tsv"; then
        return
    fi
    if [ "$(remaining)" -le 0 ]; then
        printf '%s\t%s\t%s\t%s\t%s\tskipped\tthe fidelity budget of %s s ran out\t\t\t0\t%s\t\t\t\n' \
            "$kind" "$pp" "$v" "$m" "$round" "$budget_s" "$(load)" >>"$out_dir/row_runs.tsv"
        say "[$count/$total] skipped $kind pp=$pp v=$v m=$m (round $round): the budget" \
            "of ${budget_s} s ran out"
        return
    fi
    if [ "$anchor_steps" -gt 0 ] && [ $((runs_done % anchor_every)) -eq 0 ]; then
        anchors_measured=$((anchors_measured + 1))
        measure_anchor "$anchors_measured"
    fi
    say "[$count/$total] $kind pp=$pp v=$v m=$m ($(remaining) s of budget left)"
    measure_run "$kind" "$pp" "$v" "$m" "$round" "$anchors_measured"
    runs_done=$((runs_done + 1))
}

# Every row once a round; in the last round each row is finished (diffed, a line of rows.tsv)
# right after its turn, so a budget that runs out leaves the rows measured so far whole.
measure_all() {
    printf 'kind\tpp\tv\tm\tround\tstatus\treason\trun_json\trun_id\tseconds\tload\tcpu_s\trunning_mean\tanchor_before\n' \
        >"$out_dir/row_runs.tsv"
    printf 'kind\tpp\tv\tm\tstatus\treason\trun_json\tdiff_json\tseconds\tload\tcpu_s\trunning_mean\tanchor_before\n' \
        >"$out_dir/rows.tsv"
    rm -f "$out_dir/traces.db"
    local kind pp v m sim_run count total round
    anchors_measured=0 runs_done=0
    total=$(predicted_rows | wc -l)
    for ((round = 1; round <= rounds; ++round)); do
        count=0
        [ "$rounds" -gt 1 ] && say "round $round of $rounds ($(remaining) s of budget left)"
        while IFS=$'\t' read -r kind pp v m sim_run; do
            count=$((count + 1))
            measure_turn "$kind" "$pp" "$v" "$m" "$round" "$count" "$total"
            [ "$round" -eq "$rounds" ] && finish_row "$kind" "$pp" "$v" "$m" "$sim_run"
        done < <(predicted_rows)
    done
    # The anchor after the last row measured, so that it too has one on either side.
    if [ "$anchors_measured" -gt 0 ] && [ "$(remaining)" -gt 0 ]; then
        measure_anchor $((anchors_measured + 1))
    fi
}

partition_check() {
    local rounds="${FIDELITY_PARTITION_ROUNDS:-3}" log="$out_dir/partition_check.log"
    local needed="${FIDELITY_PARTITION_MIN_S:-90}"
    if [ "$rounds" -le 0 ]; then
        say "partition check: skipped (FIDELITY_PARTITION_ROUNDS=0)"
    elif [ ! -x "$build_dir/tests/pipelens_write_uneven_mlp" ]; then
        say "partition check: skipped (not built: $build_dir/tests/pipelens_write_uneven_mlp)" |
            tee "$log"
    elif [ "$(remaining)" -lt "$needed" ]; then
        say "partition check: skipped ($(remaining) s of budget left, it needs ${needed} s)" |
            tee "$log"
    else
        say "partition check: scripts/partition_real_check.sh $build_dir $rounds" \
            "($(remaining) s of budget left)"
        # Its scratch folder (the uneven model, its calibration) lands in OUT_DIR.
        TMPDIR="$out_dir" bounded "$(remaining)" "$log" \
            bash "$script_dir/../partition_real_check.sh" "$build_dir" "$rounds"
        if [ "$last_rc" -eq 0 ]; then
            tail -n 6 "$log"
        else
            say "partition check: $(failure_reason "$log")"
        fi
    fi
}

load_at_start=$(load)
say "$cores cores, load $load_at_start, budget ${budget_s} s, out $out_dir"
choose_transport
say "transport: $transport${transport_note:+ ($transport_note)}"
write_meta
if ! calibrate; then
    write_meta
    say "calibration failed: nothing predicted (logs in $out_dir/logs)"
    exit 2
fi
predict_all
predict_anchor
say "predictions written before any row was measured: $out_dir/predictions.tsv"
measure_all
write_meta
python3 "$table" table "$out_dir"
partition_check
say "done in $(elapsed) s: $out_dir/fidelity.tsv, fidelity.json"
exit 0
