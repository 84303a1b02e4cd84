#!/usr/bin/env bash
# `make demo`: the main job on the default example. Simulates the embedded default experiment
# (1F1B, pp=4, m=8, uneven stages) into a fresh SQLite trace, adds the zero-bubble V schedule
# on the same model for comparison, runs 1F1B for real on 2 LibTorch ranks and calibrates the
# simulator against it (when built with LibTorch), prints the trace's summary, replays the
# recorded engine state of the runs and bisects where the two simulations part ways, exports
# the first run as a timeline picture and for Perfetto, and shows the schedule checker
# catching a schedule that would hang. It also propagates sharding through a Megatron MLP block.
set -euo pipefail
build=${1:-build}
pipelens="$build/app/cli/pipelens"
out="$build/demo"
here="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out"
trace="$out/demo.db"
rm -f "$trace" "$trace-wal" "$trace-shm"

echo "== simulate the default experiment (assets/examples/default.toml, embedded)"
"$pipelens" simulate --out "$trace"
echo
echo "== a second run in the same trace: ZBVZeroBubble, zero bubble by splitting backward (assets/examples/zero_bubble_v.toml)"
"$pipelens" simulate "$here/assets/examples/zero_bubble_v.toml" --out "$trace" >/dev/null
echo
if "$pipelens" run --help >/dev/null 2>&1; then
    # As many ranks as this machine's CI has cores (2): more would time-slice, and measured steps
    # would be the scheduler's rather than the pipeline's (`run` warns when that happens).
    echo "== 1F1B run for real: an MLP on 2 LibTorch ranks (threads, one core each), checked"
    echo "   against the model run whole on one rank, recorded beside the simulation"
    echo "   then every rank profiles its stages, layers and links at once (--profile)"
    "$pipelens" run --schedule 1F1B --pp 2 --m 8 --model mlp --hidden 256 --layers 8 --batch 256 \
        --profile --out "$trace"
    echo
    echo "== the cost model fitted to that real run's profile (per layer), simulated, compared"
    "$pipelens" calibrate "$trace" --out "$out/calibrated.toml"
    echo
    echo "== the calibrated costs predicting a schedule that never ran: ZBVZeroBubble (4 stages)"
    "$pipelens" simulate "$out/calibrated.toml" --schedule ZBVZeroBubble --v 2 | head -3
    echo
fi
echo "== sharding: the Megatron MLP block on a dp=2 x tp=4 mesh, recorded in the same trace"
"$pipelens" shard --block mlp --mesh 'dp=2,tp=4' --out "$trace" | grep -E '^(aten|chosen|recorded)'
echo
echo "== pipelens summary $trace"
"$pipelens" summary "$trace"
echo
echo "== replay every run's recorded engine state and check it against the state it ended in"
for run in $("$pipelens" summary "$trace" --json | grep -o '"run_id":[0-9]*' | cut -d: -f2); do
    "$pipelens" replay "$trace" --run "$run" --check | grep -v '^  check' || exit 1
done
echo
echo "== where do the 1F1B and ZBV simulations part ways? (bisect over replayed events)"
"$pipelens" bisect "$trace" --run 1 --other-run 2 | head -3 || true
echo
viewer="$build/app/viewer/pipelens-view"
if [ -x "$viewer" ]; then
    if [ -n "${DISPLAY:-}" ]; then
        echo "== opening the trace in the viewer (pipelens-view $trace)"
        "$viewer" "$trace" --run 1 &
    elif command -v xvfb-run >/dev/null 2>&1; then
        echo "== no display: the viewer's picture of run 1 goes to $out/viewer.png"
        xvfb-run -a "$viewer" "$trace" --run 1 --select 1RECV_F2 --size 1400x800 \
            --screenshot "$out/viewer.png"
    fi
    echo
fi
echo "== run 1 as a timeline picture, and for Perfetto (load the JSON at https://ui.perfetto.dev)"
"$pipelens" export "$trace" --run 1 --svg "$out/default_run.svg" --chrome "$out/default_run.json"
echo
echo "== a schedule with two recvs swapped (assets/examples/swapped_recvs.csv): expected to fail"
if "$pipelens" check "$here/assets/examples/swapped_recvs.csv"; then
    echo "demo: the broken schedule passed its check" >&2
    exit 1
fi
