#!/usr/bin/env bash
# nccl_probe.sh: on the GPU machine, builds pipelens (build.sh) and looks closely at a one-rank
# NCCL world, the one NCCL shape a one-GPU machine allows: the launcher's run as check.sh makes
# it, the same rank started by hand (no launcher), CPU tensors staged through the GPU, each with
# its exit status, stdout and stderr, and under cuda-gdb (which stops on a crash and prints every
# thread's stack) when one dies by a signal. Then the run CLI's tests with the GPU hidden
# (CUDA_VISIBLE_DEVICES=), the CPU-only way check.sh means them.
#
# Writes $OUT/probe.log (everything) and $OUT/build.log. Each step under `timeout`.
set -uo pipefail

out="${OUT:?nccl_probe.sh writes into \$OUT}"
work="${DEVICE_WORK:-/tmp/pipelens-device}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
log="$out/probe.log"
mkdir -p "$work"
exec > >(tee "$log") 2>&1

BUILD_TARGETS="pipelens pipelens-runtime pipelens_run_cli_tests" \
    timeout -k 10 300 bash "$here/build.sh" "$work/prefix" "$work/build" >"$out/build.log" 2>&1 ||
    { tail -n 30 "$out/build.log"; echo "nccl_probe.sh: build failed"; exit 1; }
grep '^build.sh: phase\|gloo transport' "$out/build.log"
pipelens="$work/build/app/cli/pipelens"
gdb="$(command -v cuda-gdb || echo /usr/local/cuda/bin/cuda-gdb)"
shape=(run --schedule Interleaved1F1B --pp 1 --v 2 --m 4 --model mlp --no-reference)

probe() {
    local name="$1"
    shift
    echo "=== $name: $*"
    timeout -k 5 60 "$@" >"$work/$name.out" 2>"$work/$name.err"
    local rc=$?
    echo "--- exit $rc; stdout $(wc -c <"$work/$name.out") bytes:"
    head -c 1500 "$work/$name.out"
    echo "--- stderr:"
    head -c 3000 "$work/$name.err"
    if [ $rc -ge 128 ] && [ -x "$gdb" ]; then
        echo "--- under cuda-gdb:"
        timeout -k 5 120 "$gdb" -q -batch -ex "set pagination off" -ex "set print thread-events off" \
            -ex run -ex "thread apply all bt 25" --args "$@" 2>&1 | grep -v '^\[New Thread\|^\[Thread' | tail -n 120
    fi
}

probe nccl_launcher "$pipelens" "${shape[@]}" --transport nccl --nproc 1 --device cuda --json
probe nccl_by_hand "$pipelens" "${shape[@]}" --transport nccl --rank 0 --world-size 1 \
    --master 127.0.0.1:29517 --device cuda --json
probe nccl_cpu_tensors "$pipelens" "${shape[@]}" --transport nccl --nproc 1 --device cpu --json
probe local_cuda "$pipelens" "${shape[@]}" --transport local --device cuda --json

echo "=== pipelens_run_cli_tests with the GPU hidden"
CUDA_VISIBLE_DEVICES= timeout -k 5 90 "$work/build/tests/pipelens_run_cli_tests" 2>&1 |
    grep -E '^\[  (FAILED|PASSED|SKIPPED) |Failure|error:' | head -n 60
echo "nccl_probe.sh: done"
