#!/usr/bin/env bash
# Whole-process `pipelens import` of large PyTorch profiler traces: peak memory (the issue's
# bound: 256 MiB for a 2 GB trace) and trace events per second (target >= 1 M/s), plain and
# gzip. Generates a 1F1B pp=2 step whose every action range holds many operator ranges (what a
# real profile of a big model looks like: the importer must stream past them), SIZE_GB per rank
# file, then imports each form ROUNDS times and prints the median and spread with the load.
# With `gpu`, every operator also launches a kernel (a cudaLaunchKernel and its kernel, tied by
# their correlation): the GPU work the import keeps to time the actions, 40 bytes a kernel.
#
#   scripts/bench_import.sh [BUILD_DIR] [SIZE_GB] [ROUNDS] [cpu|gpu]
set -euo pipefail
build=${1:-build}
size_gb=${2:-2}
rounds=${3:-3}
kernels=${4:-cpu}
pipelens=$build/app/cli/pipelens
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$work" "$size_gb" "$kernels" <<'PY'
import gzip, sys
work, size_gb, gpu = sys.argv[1], float(sys.argv[2]), sys.argv[3] == "gpu"
target = int(size_gb * (1 << 30))
m = 64
noise = ('{{"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": {pid}, "tid": {pid}, '
         '"ts": {ts:.3f}, "dur": 0.500, "args": {{"External id": {ext}, "Record function id": 0, '
         '"Input Dims": [[4, 4096], [4096, 4096], [4096]], "Sequence number": {ext}}}}}')
launch = (',\n{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": {pid}, '
          '"tid": {pid}, "ts": {ts:.3f}, "dur": 0.100, "args": {{"cbid": 211, "correlation": {ext}}}}},\n'
          '{{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": {end:.3f}, '
          '"dur": 0.400, "args": {{"device": 0, "stream": 7, "correlation": {ext}}}}}')
action = ('{{"ph": "X", "cat": "user_annotation", "name": "PP:{name}", "pid": {pid}, '
          '"tid": {pid}, "ts": {ts:.3f}, "dur": {dur:.3f}, "args": {{"External id": {ext}}}}}')
for rank in (0, 1):
    order = ([f"0F{i}" for i in range(m)] + [f"0B{i}" for i in range(m)]) if rank == 0 else \
            [a for i in range(m) for a in (f"1F{i}", f"1B{i}")]
    per_action = target // len(order) // (600 if gpu else 230)
    events = 0
    with open(f"{work}/rank{rank}.json", "w") as out:
        out.write('{"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": %d, '
                  '"world_size": 2}, "traceEvents": [\n' % rank)
        t, ext, first = 0.0, 0, True
        for name in order:
            dur = per_action * 0.6 + 1.0
            out.write(("" if first else ",\n") + action.format(name=name, pid=1000 + rank, ts=t,
                                                               dur=dur, ext=ext))
            first = False
            chunk = [noise.format(pid=1000 + rank, ts=t + 0.5 + k * 0.6, ext=ext + k) +
                     (launch.format(pid=1000 + rank, ts=t + 0.6 + k * 0.6, end=t + 0.8 + k * 0.6,
                                    ext=ext + k + 1) if gpu else "")
                     for k in range(per_action)]
            out.write(",\n" + ",\n".join(chunk))
            events += per_action * (3 if gpu else 1) + 1
            ext += per_action + 1
            t += dur + 1.0
        out.write('\n], "displayTimeUnit": "ms", "baseTimeNanoseconds": 1700000000000000000}\n')
    print(f"rank {rank}: {events} events")
    with open(f"{work}/events", "a") as count:
        count.write(f"{events}\n")
PY
ls -l "$work"/rank*.json | awk '{ printf "%s %.2f GB\n", $9, $5 / 2^30 }'
events=$(awk '{ s += $1 } END { print s }' "$work/events")
gzip -1 -k "$work/rank0.json" && gzip -1 -k "$work/rank1.json"
ls -l "$work"/rank*.json.gz | awk '{ printf "%s %.2f GB\n", $9, $5 / 2^30 }'

calc() { awk "BEGIN { print $1 }"; }
for form in json json.gz; do
    seconds=() peaks=()
    for round in $(seq 1 "$rounds"); do
        rm -f "$work/out.db"*
        load=$(cut -d' ' -f1 /proc/loadavg)
        /usr/bin/time -f "%e %M" -o "$work/time" \
            "$pipelens" import "$work/rank0.$form" "$work/rank1.$form" --out "$work/out.db" > /dev/null
        read -r wall peak_kib < "$work/time"
        echo "  $form round $round: $wall s, peak RSS $(calc "$peak_kib / 1024") MiB, $(calc "$events / $wall / 1e6") M events/s (load $load)"
        seconds+=("$wall") peaks+=("$peak_kib")
    done
    sorted=($(printf '%s\n' "${seconds[@]}" | sort -g))
    peak=$(printf '%s\n' "${peaks[@]}" | sort -g | tail -1)
    median=${sorted[$((rounds / 2))]}
    echo "$form: $events events, median $median s (spread ${sorted[0]}-${sorted[-1]} s), $(calc "$events / $median / 1e6") M events/s, largest peak RSS $(calc "$peak / 1024") MiB"
done
