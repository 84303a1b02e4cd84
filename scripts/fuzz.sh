#!/usr/bin/env bash
# `make fuzz`: runs every libFuzzer target of the sanitizer build one after the other (one
# fuzzer process at a time), each for SECONDS, growing a corpus under BUILD/fuzz-corpus/<target>
# from the committed seeds in tests/fuzz/corpus/<target>. Prints executions and findings per
# target; exits 1 if any target found something.
#   scripts/fuzz.sh BUILD SECONDS [TARGET...]
set -euo pipefail

build=${1:?usage: scripts/fuzz.sh BUILD SECONDS [TARGET...]}
seconds=${2:?usage: scripts/fuzz.sh BUILD SECONDS [TARGET...]}
shift 2
source_dir=$(cd "$(dirname "$0")/.." && pwd)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    # Every target with a seed corpus: each target's folder there is named after it.
    for corpus in "$source_dir"/tests/fuzz/corpus/*/; do
        targets+=("$(basename "$corpus")")
    done
fi

failed=0
for target in "${targets[@]}"; do
    binary="$build/fuzz/tests/fuzz/pipelens_fuzz_$target"
    if [ ! -x "$binary" ]; then
        echo "pipelens: $binary is missing: the fuzz targets need clang and its libFuzzer" \
            "runtime (scripts/install-deps.sh), then make build" >&2
        exit 2
    fi
    "$source_dir/tests/fuzz/run_fuzzer.sh" "$binary" "$source_dir/tests/fuzz/corpus/$target" \
        "$build/fuzz-corpus/$target" "$seconds" || failed=1
done
exit $failed
