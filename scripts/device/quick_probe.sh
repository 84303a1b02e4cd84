#!/usr/bin/env bash
# quick_probe.sh OUT_DIR: the short device call for what is left of a loan (under four minutes):
# builds only `pipelens` and `pipelens-runtime` (no tests), then, in this order, so a cut call
# keeps the first answers:
#   1. memory: the GPU peak-memory check of check.sh (one rank holding two stages alone on the
#      device, `calibrate`, peak_memory_check.py), as memory.json;
#   2. overhead: the `empty` model under Interleaved1F1B (pp=1, v=2, m=4, 4 layers; the
#      side-by-side's shape) on the GPU and on the CPU of the same machine, so the per-action
#      cost the GPU adds shows apart from the runtime's own (overhead.tsv);
#   3. threads: a four-rank gloo run on the CPU (fidelity.sh's model, one intra-op thread), and
#      per thread of one rank process the CPU time it used over one second mid-run, with the
#      kernel's runnable-thread count (threads.txt): what runs beside a rank's one compute thread.
# On a machine without a GPU (or a build without CUDA) step 1 and the GPU half of step 2 are
# skipped, saying so. BUILD_DIR (default /tmp/pipelens-probe/build) may name a build to reuse:
# with PROBE_SKIP_BUILD=1 it is not rebuilt.
set -uo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 OUT_DIR" >&2
    exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$1" "${PROBE_WORK:-/tmp/pipelens-probe}" || exit 2
out="$(cd "$1" && pwd)"
work="${PROBE_WORK:-/tmp/pipelens-probe}"
build="${BUILD_DIR:-$work/build}"
pipelens="$build/app/cli/pipelens"
say() { echo "quick_probe.sh: $*"; }

if [ "${PROBE_SKIP_BUILD:-0}" != 1 ]; then
    BUILD_TARGETS="pipelens pipelens-runtime" timeout -k 5 "${PROBE_BUILD_LIMIT_S:-150}" \
        bash "$here/build.sh" "$work/prefix" "$build" >"$out/build.log" 2>&1
    status=$?
    grep '^build.sh: phase\|^build.sh: built' "$out/build.log"
    if [ $status -ne 0 ]; then
        tail -n 30 "$out/build.log"
        say "build.sh failed (exit $status)"
        exit 1
    fi
fi

# build.sh's record of what it built against (shell assignments, values quoted), as check.sh reads it.
DEVICE_TORCH_CUDA=no
[ -f "$build/device-build.env" ] && . "$build/device-build.env"
gpu=no
if [ "$DEVICE_TORCH_CUDA" = yes ] && command -v nvidia-smi >/dev/null 2>&1 &&
    nvidia-smi -L >/dev/null 2>&1; then
    gpu=yes
fi

# 1. memory
if [ $gpu = yes ]; then
    timeout 60 "$pipelens" run --device cuda --model mlp --layers 8 --hidden 1024 --batch 64 \
        --schedule Interleaved1F1B --pp 1 --v 2 --m 4 --transport local --steps 3 --warmup 1 \
        --profile --out "$work/memory.db" --json >"$out/memory_run.json" 2>"$out/memory_run.log"
    timeout 60 "$pipelens" calibrate "$work/memory.db" --json >"$out/memory_calibrate.json" \
        2>>"$out/memory_run.log"
    python3 "$here/peak_memory_check.py" "$out/memory_calibrate.json" | tee "$out/memory.json"
    say "memory check exit ${PIPESTATUS[0]}"
else
    say "SKIPPED memory: no GPU this build can use"
fi

# 2. overhead: median step of 20 after 5 warm-up, per device
printf 'device\tstep_median_ns\tstep_min_ns\tstep_max_ns\n' >"$out/overhead.tsv"
devices=(cpu)
[ $gpu = yes ] && devices=(cuda cpu)
for device in "${devices[@]}"; do
    timeout 60 "$pipelens" run --device "$device" --model empty --schedule Interleaved1F1B \
        --pp 1 --v 2 --m 4 --layers 4 --transport local --steps 20 --warmup 5 --no-reference \
        --json >"$out/overhead.$device.json" 2>"$out/overhead.$device.log"
    python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["steps"]; print(sys.argv[2], s["median_ns"], s["min_ns"], s["max_ns"], sep="\t")' \
        "$out/overhead.$device.json" "$device" >>"$out/overhead.tsv" ||
        say "overhead on $device: no figures (see overhead.$device.log)"
done
cat "$out/overhead.tsv"

# 3. threads beside a rank's compute thread
rm -f "$work/threads.db"
timeout 90 "$pipelens" run --device cpu --model mlp --hidden 256 --layers 16 --threads 1 \
    --schedule 1F1B --pp 4 --m 8 --batch 256 --no-reference --transport gloo --nproc 4 \
    --steps "${PROBE_THREAD_STEPS:-150}" --warmup 2 --out "$work/threads.db" \
    >"$out/threads_run.log" 2>&1 &
runner=$!
sleep "${PROBE_THREAD_WAIT_S:-6}"
{
    echo "procs_running: $(awk '/^procs_running/ { print $2 }' /proc/stat)"
    rank_pid=$(pgrep -f 'pipelens.*--rank-reports' | head -1)
    if [ -z "$rank_pid" ]; then
        echo "no rank process found (the run ended or failed early)"
    else
        ticks=$(getconf CLK_TCK)
        declare -A before
        for task in /proc/"$rank_pid"/task/*; do
            before[$task]=$(awk '{ sub(/.*\) /, ""); print $12 + $13 }' "$task/stat" 2>/dev/null)
        done
        sleep 1
        echo "rank process $rank_pid: $(ls /proc/"$rank_pid"/task | wc -l) threads;" \
            "CPU ms used per thread over 1 s (clock ticks of $((1000 / ticks)) ms):"
        for task in /proc/"$rank_pid"/task/*; do
            now=$(awk '{ sub(/.*\) /, ""); print $12 + $13 }' "$task/stat" 2>/dev/null) || continue
            used=$(((now - ${before[$task]:-$now}) * 1000 / ticks))
            echo "  $(basename "$task") $(cat "$task/comm" 2>/dev/null) state=$(awk '{ sub(/.*\) /, ""); print $1 }' "$task/stat") ${used} ms"
        done | sort -k4 -n -r
        echo "procs_running: $(awk '/^procs_running/ { print $2 }' /proc/stat)"
        top -b -n 1 -H -p "$rank_pid" 2>/dev/null | head -20
    fi
} >"$out/threads.txt" 2>&1
wait $runner
echo "gloo run exit $?" >>"$out/threads.txt"
tail -n 3 "$out/threads_run.log" >>"$out/threads.txt"
cat "$out/threads.txt"
