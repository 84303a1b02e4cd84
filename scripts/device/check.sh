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
# Checks: (a) the runtime's test binaries; (b) `pipelens run` of the built-in models under
# 1F1B, Interleaved1F1B, ZBVZeroBubble and DualPipeV, --transport local, with the reference
# check, on cuda when it can, else cpu; (c) a one-rank NCCL world; (d) pytorch_side_by_side.py.
# Environment: CHECK_BUDGET_S (default 240: later checks are skipped once it is spent),
# CHECK_MODELS, CHECK_SCHEDULES (space-separated), CHECK_TEST_TIMEOUT_S (default 150).
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
models=(${CHECK_MODELS:-mlp example kwargs transformer tied empty})
schedules=(${CHECK_SCHEDULES:-1F1B Interleaved1F1B ZBVZeroBubble DualPipeV})
started=$(date +%s)

DEVICE_WITH_CUDA=OFF
DEVICE_CUDA_REASON="build.sh's device-build.env is missing"
# shellcheck source=/dev/null
[ -f "$build_dir/device-build.env" ] && . "$build_dir/device-build.env"

# Why the CUDA parts cannot run here, or nothing when they can.
cuda_unavailable_reason() {
    if [ "$DEVICE_WITH_CUDA" != ON ]; then
        echo "pipelens was built without CUDA ($DEVICE_CUDA_REASON)"
    elif ! nvidia-smi -L >/dev/null 2>&1; then
        echo "no GPU visible (nvidia-smi -L failed)"
    elif ! timeout 30 "$pipelens" run --help 2>/dev/null | grep -q -- '--device'; then
        echo "\`pipelens run\` has no --device option"
    fi
}
cuda_reason="$(cuda_unavailable_reason)"
run_has_device_option=no
timeout 30 "$pipelens" run --help 2>/dev/null | grep -q -- '--device' && run_has_device_option=yes

# record NAME STATUS SECONDS REASON LOG JSON: one line of checks.tsv (tabs removed from text).
record() {
    local reason="${4//$'\t'/ }"
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${reason//$'\n'/ }" "$5" "$6" \
        >>"$checks_file"
    printf 'check.sh: %-44s %-7s %6ss %s\n' "$1" "$2" "$3" "$4"
}

skip() {  # NAME REASON
    record "$1" skipped 0 "$2" "" ""
}

skip_cuda() {  # NAME REASON
    echo "SKIPPED (cuda): $1: $2"
    skip "$1" "$2"
}

over_budget() {
    [ $(($(date +%s) - started)) -ge "$budget_s" ]
}

# step NAME TIMEOUT_S JSON_OUT COMMAND...: runs it under timeout, output to logs/NAME.log (and
# stdout to JSON_OUT when given), and records pass (exit 0) or fail with the reason.
step() {
    local name="$1" limit="$2" json="$3"
    shift 3
    local log="$out_dir/logs/$name.log"
    if over_budget; then
        skip "$name" "the check budget of ${budget_s} s was spent"
        return 1
    fi
    local begin end rc
    begin=$(date +%s.%N)
    if [ -n "$json" ]; then
        timeout -k 5 "$limit" "$@" >"$json" 2>"$log"
    else
        timeout -k 5 "$limit" "$@" >"$log" 2>&1
    fi
    rc=$?
    end=$(date +%s.%N)
    local seconds
    seconds=$(awk -v a="$begin" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
    local relative_json=""
    [ -n "$json" ] && relative_json="${json#"$out_dir"/}"
    if [ $rc -eq 0 ]; then
        record "$name" pass "$seconds" "" "logs/$name.log" "$relative_json"
        return 0
    fi
    local reason="exit $rc"
    [ $rc -eq 124 ] || [ $rc -eq 137 ] && reason="timed out after ${limit} s"
    reason="$reason: $(tail -n 3 "$log" | tr '\n' ' ' | cut -c1-300)"
    record "$name" fail "$seconds" "$reason" "logs/$name.log" "$relative_json"
    return 1
}

check_runtime_tests() {
    local binary
    for binary in pipelens_runtime_tests pipelens_runtime_transport_tests pipelens_run_cli_tests; do
        if [ ! -x "$build_dir/tests/$binary" ]; then
            record "tests.$binary" fail 0 "not built: $build_dir/tests/$binary" "" ""
            continue
        fi
        step "tests.$binary" "$test_timeout_s" "" "$build_dir/tests/$binary" --gtest_brief=1
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

check_nccl_world() {
    local name="nccl.one_rank.Interleaved1F1B"
    local shape=(--schedule Interleaved1F1B --pp 1 --v 2 --m 4 --model mlp)
    if [ -n "$cuda_reason" ]; then
        skip_cuda "$name" "$cuda_reason"
        # The same one-rank world over gloo: the launcher and rendezvous the NCCL check uses.
        run_one "gloo.one_rank.Interleaved1F1B" cpu "${shape[@]}" --transport gloo --nproc 1
        return
    fi
    run_one "$name" cuda "${shape[@]}" --transport nccl --nproc 1
}

check_pytorch_side_by_side() {
    local name="pytorch.side_by_side"
    if over_budget; then
        skip "$name" "the check budget of ${budget_s} s was spent"
        return
    fi
    mkdir -p "$out_dir/pytorch"
    local log="$out_dir/logs/$name.log"
    if step "$name" 120 "" python3 "$script_dir/pytorch_side_by_side.py" "$out_dir/pytorch" &&
        grep -q '^SKIPPED' "$log"; then
        # It ran and said why it did nothing: a skip, not a pass.
        sed -i '$d' "$checks_file"
        record "$name" skipped 0 "$(grep -m1 '^SKIPPED' "$log")" "logs/$name.log" ""
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

echo "check.sh: build $build_dir (torch ${DEVICE_TORCH_SOURCE:-unknown}, CUDA $DEVICE_WITH_CUDA)," \
    "run --device: $run_has_device_option"
[ -n "$cuda_reason" ] && echo "SKIPPED (cuda): every CUDA part: $cuda_reason"
check_runtime_tests
check_runs
check_nccl_world
check_pytorch_side_by_side
if [ -z "$cuda_reason" ]; then check_timeline cuda; else check_timeline cpu; fi

python3 "$script_dir/collect_figures.py" "$out_dir" "$checks_file" "$build_dir/device-build.env" \
    "${cuda_reason:-}" "$(($(date +%s) - started))"
