#!/usr/bin/env bash
# check.sh BUILD_DIR OUT_DIR: the GPU checks of a build made by build.sh, each one recorded as
# pass, fail or skipped (with the reason) so that one short device run answers everything.
#
# Runs on the GPU machine and HERE (no GPU, CPU LibTorch: every CUDA part is then skipped with
# its reason and the CPU path runs instead). Writes into OUT_DIR: figures.json (every check's
# status, reason, seconds and figures), logs/*.log, runs/*.json (each run's `--json`),
# traces/*.db (each run's trace), timeline.svg (one run's timeline) and pytorch/ (the PyTorch
# side-by-side). Every step runs under `timeout`; a failed step is recorded and the next one
# runs. Exit status: 1 when any check that ran failed, else 0.
#
# Checks, in this order: `pipelens run` of the built-in models under 1F1B, Interleaved1F1B,
# ZBVZeroBubble and DualPipeV, --transport local, with the reference check, on cuda when it can,
# else cpu; two ranks on one device computing at the same time (their own streams); a one-rank
# NCCL world; what must be refused (--device cuda without a GPU, NCCL's refusals on one GPU, a
# dying rank); the GPU running out of memory (exit 3); pytorch_side_by_side.py next to pipelens'
# runs of the same shape; one run's timeline drawn; last, the runtime's test binaries (CPU only).
# Environment: CHECK_BUDGET_S (default 240: later checks are skipped once it is spent),
# CHECK_MODELS, CHECK_SCHEDULES, CHECK_SIDE_BY_SIDE_MODELS (space-separated lists),
# CHECK_TEST_TIMEOUT_S (default 150), CHECK_TEST_SHARDS (gtest shards run at once per test
# binary, default one per 8 cores).
set -uo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 BUILD_DIR OUT_DIR" >&2
    exit 2
fi
script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build_dir="$(cd "$1" && pwd)" || exit 2
mkdir -p "$2"/logs "$2"/runs "$2"/traces
out_dir="$(cd "$2" && pwd)"
pipelens="$build_dir/app/cli/pipelens"
checks_file="$out_dir/checks.tsv"
: >"$checks_file"
budget_s="${CHECK_BUDGET_S:-240}"
test_timeout_s="${CHECK_TEST_TIMEOUT_S:-150}"
models=(${CHECK_MODELS-mlp example kwargs transformer tied empty})
schedules=(${CHECK_SCHEDULES-1F1B Interleaved1F1B ZBVZeroBubble DualPipeV})
side_by_side_models=(${CHECK_SIDE_BY_SIDE_MODELS-mlp empty})
started=$(date +%s)

DEVICE_TORCH_CUDA=no
DEVICE_TORCH_SOURCE="unknown (build.sh's device-build.env is missing)"
DEVICE_WITH_CUDA=OFF
DEVICE_CUDA_REASON="build.sh's device-build.env is missing"
# shellcheck source=/dev/null
[ -f "$build_dir/device-build.env" ] && . "$build_dir/device-build.env"

# Why tensors cannot go to the GPU here, or nothing when they can.
cuda_unavailable_reason() {
    if [ "$DEVICE_TORCH_CUDA" != yes ]; then
        echo "the LibTorch pipelens was built against ($DEVICE_TORCH_SOURCE) has no CUDA"
    elif ! nvidia-smi -L >/dev/null 2>&1; then
        echo "no GPU visible (nvidia-smi -L failed)"
    elif ! timeout 30 "$pipelens" run --help 2>/dev/null | grep -q -- '--device'; then
        echo "\`pipelens run\` has no --device option"
    fi
}
cuda_reason="$(cuda_unavailable_reason)"
run_has_device_option=no
timeout 30 "$pipelens" run --help 2>/dev/null | grep -q -- '--device' && run_has_device_option=yes

# record NAME STATUS SECONDS REASON LOG JSON: one line of checks.tsv (tabs removed from text),
# and one printed line.
record() {
    local reason="${4//$'\t'/ }"
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${reason//$'\n'/ }" "$5" "$6" \
        >>"$checks_file"
    if [ "$2" = skipped ]; then
        printf 'SKIPPED%s: %s: %s\n' "${skip_label:-}" "$1" "$4"
    else
        printf 'check.sh: %-42s %-4s %7ss %s\n' "$1" "$2" "$3" "$4"
    fi
}

skip() {  # NAME REASON
    record "$1" skipped 0 "$2" "" ""
}

skip_cuda() {  # NAME REASON: prints "SKIPPED (cuda): NAME: REASON"
    skip_label=" (cuda)" skip "$1" "$2"
}

over_budget() {
    [ $(($(date +%s) - started)) -ge "$budget_s" ]
}

# timed LIMIT_S LOG JSON_OUT COMMAND...: runs it under timeout, stdout to JSON_OUT when given
# (else to LOG), stderr to LOG; sets last_rc and last_seconds.
timed() {
    local limit="$1" log="$2" json="$3"
    shift 3
    local begin end
    begin=$(date +%s.%N)
    if [ -n "$json" ]; then
        timeout -k 5 "$limit" "$@" >"$json" 2>"$log"
    else
        timeout -k 5 "$limit" "$@" >"$log" 2>&1
    fi
    last_rc=$?
    end=$(date +%s.%N)
    last_seconds=$(awk -v a="$begin" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
}

# step NAME TIMEOUT_S JSON_OUT COMMAND...: timed, into logs/NAME.log, recorded as pass (exit 0)
# or fail with the reason; skipped once the budget is spent. Returns 0 only for a pass.
step() {
    local name="$1" limit="$2" json="$3"
    shift 3
    local log="$out_dir/logs/$name.log"
    if over_budget; then
        skip "$name" "the check budget of ${budget_s} s was spent"
        return 1
    fi
    # No step outlives the budget: the device call's own limit is behind it.
    local remaining=$((budget_s - ($(date +%s) - started)))
    local cut_by_budget=no
    if [ "$remaining" -lt "$limit" ]; then
        limit=$remaining
        cut_by_budget=yes
    fi
    timed "$limit" "$log" "$json" "$@"
    local relative_json=""
    [ -n "$json" ] && relative_json="${json#"$out_dir"/}"
    if [ $last_rc -eq 0 ]; then
        record "$name" pass "$last_seconds" "" "logs/$name.log" "$relative_json"
        return 0
    fi
    if [ $cut_by_budget = yes ] && { [ $last_rc -eq 124 ] || [ $last_rc -eq 137 ]; }; then
        record "$name" skipped "$last_seconds" \
            "stopped after ${limit} s when the check budget of ${budget_s} s ran out" \
            "logs/$name.log" ""
        return 1
    fi
    local reason="exit $last_rc"
    [ $last_rc -eq 124 ] || [ $last_rc -eq 137 ] && reason="timed out after ${limit} s"
    reason="$reason: $(tail -n 3 "$log" | tr '\n' ' ' | cut -c1-300)"
    record "$name" fail "$last_seconds" "$reason" "logs/$name.log" "$relative_json"
    return 1
}

# Runs "$@" as $1 gtest shards at once (GTEST_TOTAL_SHARDS): the run-CLI tests spend their time
# starting rank processes, which many cores run side by side. Exit 1 when any shard failed.
# shellcheck disable=SC2016
sharded_gtest='shards=$1; shift; pids=()
for ((i = 0; i < shards; i++)); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i "$@" & pids+=($!)
done
status=0; for pid in "${pids[@]}"; do wait "$pid" || status=1; done; exit $status'

check_runtime_tests() {
    local binary shards="${CHECK_TEST_SHARDS:-$(($(nproc) / 8))}"
    [ "$shards" -ge 1 ] || shards=1
    for binary in pipelens_runtime_tests pipelens_runtime_transport_tests pipelens_run_cli_tests; do
        if [ ! -x "$build_dir/tests/$binary" ]; then
            record "tests.$binary" fail 0 "not built: $build_dir/tests/$binary" "" ""
            continue
        fi
        # The transport tests connect rank processes with timeouts of a second or so, which two
        # shards' worth of processes on few cores overrun: they run alone.
        local binary_shards=$shards
        [ "$binary" = pipelens_runtime_transport_tests ] && binary_shards=1
        # CPU only, as on the development machine: with a GPU visible the runs default to
        # cuda, and tests written for CPU tensors would compare against the wrong device.
        step "tests.$binary" "$test_timeout_s" "" env CUDA_VISIBLE_DEVICES= \
            bash -c "$sharded_gtest" sharded "$binary_shards" "$build_dir/tests/$binary" \
            --gtest_brief=1
    done
}

# run_one NAME DEVICE ARGS...: one `pipelens run --json` recorded into traces/NAME.db.
run_one() {
    local name="$1" device="$2"
    shift 2
    local device_args=()
    [ "$run_has_device_option" = yes ] && device_args=(--device "$device")
    step "$name" 60 "$out_dir/runs/$name.json" "$pipelens" run "$@" "${device_args[@]}" \
        --out "$out_dir/traces/$name.db" --json
}

# The shape each schedule is run with: two ranks, v stages per rank, four microbatches.
schedule_shape() {
    case "$1" in
        1F1B) echo "--pp 2 --v 1 --m 4" ;;
        *) echo "--pp 2 --v 2 --m 4" ;;
    esac
}

check_runs() {
    local devices=(cpu) model schedule device
    if [ -z "$cuda_reason" ]; then
        devices=(cuda)
    fi
    for model in "${models[@]}"; do
        for schedule in "${schedules[@]}"; do
            [ -z "$cuda_reason" ] || skip_cuda "run.cuda.$model.$schedule" "$cuda_reason"
            for device in "${devices[@]}"; do
                # shellcheck disable=SC2046
                run_one "run.$device.$model.$schedule" "$device" --model "$model" \
                    --schedule "$schedule" $(schedule_shape "$schedule") --transport local
            done
        done
    done
}

# Two ranks as threads on one GPU, each computing on its own stream (rank_streams.hpp): the run
# must match its reference over several steps (a hand-over between streams without its event
# would not, or not every time), and its trace must show the ranks computing at the same time
# (rank_overlap.py; docs/device.md, "Streams: what a GPU run must show"). On a CPU machine the
# same run on the CPU checks the plumbing.
# Sets check_device to cuda when the GPU can be used, else to cpu, recording NAME (the GPU-only
# part of the check) as skipped with the reason. Called directly, not in $( ): skip records.
choose_check_device() {
    check_device=cpu
    if [ -z "$cuda_reason" ]; then
        check_device=cuda
    else
        skip_cuda "$1" "$cuda_reason"
    fi
}

check_streams() {
    local device
    choose_check_device "streams.cuda.local_overlap"
    device=$check_device
    local name="streams.$device.local"
    run_one "$name" "$device" --model mlp --layers 8 --hidden 1024 --batch 64 \
        --schedule 1F1B --pp 2 --m 8 --transport local --steps 3 --warmup 2 || return
    step "${name}_overlap" 30 "$out_dir/runs/${name}_overlap.json" \
        python3 "$script_dir/rank_overlap.py" "$out_dir/traces/$name.db"
}

# Peak memory per rank, measured against simulated (calibrate's figures, from the run's own
# profile: the memory model comes from the per-layer profile): one rank holding two stages, alone
# on its device, so its peaks are its own (on a GPU the caching allocator's; ranks sharing a GPU
# each see the whole device). The aim is the CPU fidelity table's: every rank within 10 %.
check_memory() {
    local device
    choose_check_device "memory.cuda.peak"
    device=$check_device
    local name="memory.$device.one_rank"
    run_one "$name" "$device" --model mlp --layers 8 --hidden 1024 --batch 64 \
        --schedule Interleaved1F1B --pp 1 --v 2 --m 4 --transport local --steps 3 --warmup 1 \
        --profile ||
        return
    step "memory.$device.calibrate" 60 "$out_dir/runs/memory.$device.calibrate.json" \
        "$pipelens" calibrate "$out_dir/traces/$name.db" --json || return
    step "memory.$device.peak" 30 "$out_dir/runs/memory.$device.peak.json" \
        python3 "$script_dir/peak_memory_check.py" "$out_dir/runs/memory.$device.calibrate.json"
}

check_nccl_world() {
    local name="nccl.one_rank.Interleaved1F1B"
    local shape=(--schedule Interleaved1F1B --pp 1 --v 2 --m 4 --model mlp)
    local reason="$cuda_reason"
    [ "$DEVICE_WITH_CUDA" != ON ] &&
        reason="pipelens was built without the NCCL transport ($DEVICE_CUDA_REASON)"
    if [ -n "$reason" ]; then
        skip_cuda "$name" "$reason"
        # The same one-rank world over gloo: the launcher and rendezvous the NCCL check uses.
        run_one "gloo.one_rank.Interleaved1F1B" cpu "${shape[@]}" --transport gloo --nproc 1
        return
    fi
    run_one "$name" cuda "${shape[@]}" --transport nccl --nproc 1
}

# refuse_one NAME TEXT ARGS...: a `pipelens run` that must fail: a pass when it exits non-zero
# on its own (not by the timeout) and its output (stdout and stderr) contains TEXT; with
# refuse_exit=N set for the call, only when it exits N.
refuse_one() {
    local name="$1" text="$2"
    shift 2
    local log="$out_dir/logs/$name.log"
    if over_budget; then
        skip "$name" "the check budget of ${budget_s} s was spent"
        return
    fi
    timed 60 "$log" "" "$pipelens" run "$@"
    local why=""
    if [ $last_rc -eq 0 ]; then
        why="it exited 0"
    elif [ $last_rc -eq 124 ] || [ $last_rc -eq 137 ]; then
        why="timed out after 60 s"
    elif [ -n "${refuse_exit:-}" ] && [ $last_rc -ne "$refuse_exit" ]; then
        why="exit $last_rc, not $refuse_exit: $(tail -n 3 "$log" | tr '\n' ' ' | cut -c1-300)"
    elif ! grep -qF -- "$text" "$log"; then
        why="exit $last_rc without \"$text\": $(tail -n 3 "$log" | tr '\n' ' ' | cut -c1-300)"
    fi
    if [ -z "$why" ]; then
        record "$name" pass "$last_seconds" "exit $last_rc" "logs/$name.log" ""
    else
        record "$name" fail "$last_seconds" "$why" "logs/$name.log" ""
    fi
}

# Out of memory on the GPU: the CUDA caching allocator's OutOfMemoryError in an action is too
# large an input (exit 3) naming the rank and the action, like the CPU allocator's. The host's
# share stays small: the batch (4,194,304 rows of 64 values, 1 GiB, and its targets) and one
# microbatch's forward through a stage on the CPU to find the shapes (65,536 rows, 64 layers:
# 2 GiB with its graph, 69 GFLOP; an earlier 1.1 TFLOP shape took this check past its 60 s). On
# the GPU, GPipe keeps every microbatch's activations until its backward: 64 microbatches of
# 2 GiB a stage, 256 GiB for the two ranks, past any GPU.
check_cuda_out_of_memory() {
    if [ -n "$cuda_reason" ]; then
        skip_cuda oom.cuda "$cuda_reason"
        return
    fi
    refuse_exit=3 refuse_one oom.cuda "ran out of memory (CUDA out of memory" --model mlp \
        --schedule GPipe --pp 2 --m 64 --layers 128 --hidden 64 --batch 4194304 --steps 1 \
        --no-reference --device cuda --transport local
}

# What must fail, fail at once and say why: --device cuda where it cannot be had; on one GPU,
# NCCL's refusals (two ranks on one device; a rank per GPU with more ranks than GPUs) and a rank
# of an NCCL world that dies. Where NCCL cannot run, a dying gloo rank instead.
check_refusals() {
    local shape=(--model mlp --schedule 1F1B --pp 2 --m 4 --no-reference --json)
    if [ "$DEVICE_TORCH_CUDA" != yes ]; then
        refuse_one refuse.device_cuda "--device cuda: this build of pipelens-runtime has no CUDA" \
            "${shape[@]}" --device cuda --transport local
    elif [ "$run_has_device_option" = yes ]; then
        CUDA_VISIBLE_DEVICES='' refuse_one refuse.device_cuda "--device cuda: no GPU seen" \
            "${shape[@]}" --device cuda --transport local
    fi
    local reason="$cuda_reason"
    [ "$DEVICE_WITH_CUDA" != ON ] &&
        reason="pipelens was built without the NCCL transport ($DEVICE_CUDA_REASON)"
    if [ -n "$reason" ]; then
        skip_cuda nccl.refuse.two_ranks_one_gpu "$reason"
        skip_cuda nccl.refuse.more_ranks_than_gpus "$reason"
        skip_cuda nccl.rank_dies "$reason"
        refuse_one gloo.rank_dies "rank 1 died (killed by signal 9 (Killed)) before it reported" \
            "${shape[@]}" --device cpu --transport gloo --nproc 2 --fault stage1=die
        return
    fi
    refuse_one nccl.refuse.two_ranks_one_gpu "NCCL needs one GPU per rank" "${shape[@]}" \
        --device cuda:0 --transport nccl --nproc 2
    local gpus
    gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
    if [ "$gpus" -eq 1 ]; then
        refuse_one nccl.refuse.more_ranks_than_gpus "LOCAL_RANK 1 takes cuda:1" "${shape[@]}" \
            --device cuda --transport nccl --nproc 2 --timeout 10s
    else
        skip nccl.refuse.more_ranks_than_gpus "$gpus GPUs: two ranks fit"
    fi
    refuse_one nccl.rank_dies "rank 0 died (killed by signal 9 (Killed)) before it reported" \
        --model mlp --schedule Interleaved1F1B --pp 1 --v 2 --m 4 --no-reference --json \
        --device cuda --transport nccl --nproc 1 --fault stage1=die
}

# pipelens' runs in the shape pytorch_side_by_side.py runs PyTorch's schedules: one rank holding
# two stages, four microbatches, four layers (mlp: the same weights and batch, so the same loss;
# empty: the runtime's own overhead per action), timed as PyTorch's side is: the median of 20
# steps after 5 warm-up steps. Then mlp in bfloat16 (sbs.DEVICE.mlp.SCHEDULE.bfloat16), beside
# PyTorch's bfloat16 runs of the same weights cast.
check_side_by_side_runs() {
    local device=cpu model schedule
    local schedules=(Interleaved1F1B LoopedBFS InterleavedZeroBubble ZBVZeroBubble DualPipeV)
    local shape=(--pp 1 --v 2 --m 4 --layers 4 --transport local --steps 20 --warmup 5)
    [ -z "$cuda_reason" ] && device=cuda
    for model in "${side_by_side_models[@]}"; do
        for schedule in "${schedules[@]}"; do
            run_one "sbs.$device.$model.$schedule" "$device" --model "$model" \
                --schedule "$schedule" "${shape[@]}"
        done
    done
    for schedule in "${schedules[@]}"; do
        run_one "sbs.$device.mlp.$schedule.bfloat16" "$device" --model mlp --dtype bfloat16 \
            --schedule "$schedule" "${shape[@]}"
    done
}

check_pytorch_side_by_side() {
    local name="pytorch.side_by_side"
    if over_budget; then
        skip "$name" "the check budget of ${budget_s} s was spent"
        return
    fi
    local log="$out_dir/logs/$name.log"
    timed 150 "$log" "" python3 "$script_dir/pytorch_side_by_side.py" "$out_dir/pytorch"
    if [ $last_rc -eq 0 ] && grep -q '^SKIPPED' "$log"; then
        # It ran and said why it did nothing: a skip, not a pass.
        record "$name" skipped "$last_seconds" "$(grep -m1 '^SKIPPED: ' "$log" | cut -c10-)" \
            "logs/$name.log" ""
    elif [ $last_rc -eq 0 ]; then
        record "$name" pass "$last_seconds" "" "logs/$name.log" ""
    else
        record "$name" fail "$last_seconds" \
            "exit $last_rc: $(tail -n 3 "$log" | tr '\n' ' ' | cut -c1-300)" "logs/$name.log" ""
    fi
}

# The CLI draws a run's timeline as SVG (`export --svg`); PNG it renders only for sweep charts.
check_timeline() {
    local trace="$out_dir/traces/run.${1}.mlp.ZBVZeroBubble.db"
    if [ ! -f "$trace" ]; then
        skip "export.timeline_svg" "no trace of mlp ZBVZeroBubble to draw"
    else
        step "export.timeline_svg" 30 "" "$pipelens" export "$trace" --svg "$out_dir/timeline.svg"
    fi
    skip "export.timeline_png" "pipelens renders PNG only for sweep charts (sweep --png)"
}

# LibTorch's profile of the empty model's recorded steps (`run --torch-profile`), one rank holding
# two stages, and where each action's host time went: inside LibTorch's operators, or the
# executor's own work between them (profile_breakdown.py). The per-action overhead, taken apart.
check_torch_profile() {
    local device=cpu
    [ -z "$cuda_reason" ] && device=cuda
    local name="profile.$device.empty" profiles="$out_dir/profiles/empty.$device"
    if ! "$pipelens" run --help 2>/dev/null | grep -q -- '--torch-profile'; then
        skip "$name" "this build's pipelens run has no --torch-profile"
        return
    fi
    rm -rf "$profiles"
    run_one "$name" "$device" --model empty --schedule Interleaved1F1B --pp 1 --v 2 --m 4 \
        --layers 4 --transport local --steps 5 --warmup 2 --torch-profile "$profiles" || return
    step "$name.breakdown" 30 "$out_dir/runs/$name.breakdown.json" \
        python3 "$script_dir/profile_breakdown.py" "$profiles/rank0.json" --json &&
        python3 "$script_dir/profile_breakdown.py" "$profiles/rank0.json"
}

# The split backward on the GPU: (I + W) / B of one stage, 5 repetitions (the aim: within 10 %).
check_split_backward() {
    local name="bench.stage_backward_cuda"
    if [ -n "$cuda_reason" ]; then
        skip_cuda "$name" "$cuda_reason"
        return
    fi
    step "$name" 60 "$out_dir/runs/$name.json" "$build_dir/tests/pipelens_bench_runtime" \
        --benchmark_filter=stage_backward_cuda --benchmark_repetitions=5 \
        --benchmark_report_aggregates_only=true --benchmark_format=json
}

# What timing and memory sampling add to each action, on the CPU and (where usable) the GPU: the
# part of the executor's own per-action work that is pipelens' instruments.
check_action_instruments() {
    step "bench.action_instruments" 30 "$out_dir/runs/bench.action_instruments.json" \
        "$build_dir/tests/pipelens_bench_runtime" --benchmark_filter=action_instruments \
        --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
        --benchmark_format=json
}

echo "check.sh: build $build_dir (LibTorch $DEVICE_TORCH_SOURCE with CUDA: $DEVICE_TORCH_CUDA;" \
    "NCCL transport: $DEVICE_WITH_CUDA), run --device: $run_has_device_option"
[ -n "$cuda_reason" ] && echo "SKIPPED (cuda): every CUDA part: $cuda_reason"
# The GPU's checks first, so that a spent budget skips only the CPU-only test binaries; the
# split-backward benchmark early among them, as its figure is the one a loan most often lacked.
check_runs
check_streams
check_memory
check_split_backward
check_action_instruments
check_torch_profile
check_nccl_world
check_refusals
check_cuda_out_of_memory
check_side_by_side_runs
check_pytorch_side_by_side
if [ -z "$cuda_reason" ]; then check_timeline cuda; else check_timeline cpu; fi
check_runtime_tests

python3 "$script_dir/collect_figures.py" "$out_dir" "$checks_file" "$build_dir/device-build.env" \
    "${cuda_reason:-}" "$(($(date +%s) - started))"
