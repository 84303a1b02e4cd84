#!/usr/bin/env bash
# `make demo`: the main job on the default example. Until the simulator lands this is the
# schedule engine: the default 1F1B pp=4 m=8 schedule, its lowering with SEND/RECV, a CSV
# exchanged through PyTorch's format and checked, and a broken CSV whose hang is explained.
set -euo pipefail
build=${1:-build}
pipelens="$build/app/cli/pipelens"
out="$build/demo"
mkdir -p "$out"
here="$(cd "$(dirname "$0")/.." && pwd)"

echo "== 1F1B, pp=4, m=8: what each rank computes, in order"
"$pipelens" schedule --kind 1F1B --pp 4 --m 8
echo
echo "== the same, lowered with SEND/RECV pairs (PyTorch's runtime order)"
"$pipelens" schedule --kind 1F1B --pp 4 --m 8 --comms
echo
echo "== Interleaved1F1B pp=4 v=2 m=8 written as PyTorch CSV, then checked"
"$pipelens" schedule --kind Interleaved1F1B --pp 4 --v 2 --m 8 --comms --format csv \
    --out "$out/interleaved_pp4_v2_m8.csv"
"$pipelens" check "$out/interleaved_pp4_v2_m8.csv"
echo
echo "== a schedule with two recvs swapped (assets/examples/swapped_recvs.csv): expected to fail"
if "$pipelens" check "$here/assets/examples/swapped_recvs.csv"; then
    echo "demo: the broken schedule passed its check" >&2
    exit 1
fi
