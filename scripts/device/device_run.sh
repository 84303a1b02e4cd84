#!/usr/bin/env bash
# device_run.sh: the whole device session in one command, build.sh then check.sh, so one `run`
# call of the device tool answers everything (see docs/device.md for the call).
#
# Runs on the GPU machine, from the repository root, with .device-deps carried. Writes into
# $OUT (what the tool brings back: at most 8 files): build.log, check.log, figures.json and
# results.tgz (check.sh's OUT_DIR: logs, runs' JSON, traces, timeline.svg, pytorch/).
# Scratch lives under DEVICE_WORK (default /tmp/pipelens-device). Exit status: build.sh's when
# it failed, else check.sh's.
#
# WITH_PYTORCH_FIXTURES=1 also runs pytorch_fixtures.py beside the build (its own budget,
# default 170 s, inside FIXTURES_LIMIT_S), so one loan writes the PyTorch fixtures too: they go
# to $OUT/pytorch_fixtures.tar.gz and $OUT/fixtures.log. It is waited for before check.sh, so
# the timed GPU checks never share the machine with it.
#
# WITH_FIDELITY=1 runs fidelity.sh after check.sh (the calibrated predictions against real runs
# on the quiet cores): its table goes to stdout and $OUT/fidelity.log, its files (fidelity.tsv,
# fidelity.json, predictions, traces; the rows' traces.db only under 24 MiB) into results.tgz
# under out/fidelity/. Its budget is FIDELITY_BUDGET_S (default 300) cut to what is left of
# DEVICE_RUN_LIMIT_S (default 570 s, under the tool's 600) after the build and the checks, less
# 20 s for packing.
set -uo pipefail
started=$(date +%s)

out="${OUT:?device_run.sh writes its results into \$OUT}"
work="${DEVICE_WORK:-/tmp/pipelens-device}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$work"

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -2
fixtures_pid=""
if [ "${WITH_PYTORCH_FIXTURES:-0}" = 1 ]; then
    PYTHONUNBUFFERED=1 timeout -k 10 "${FIXTURES_LIMIT_S:-240}" \
        python3 "$here/pytorch_fixtures.py" "$work/pytorch_fixtures" --bundle-dir "$out" \
        >"$out/fixtures.log" 2>&1 &
    fixtures_pid=$!
fi
timeout -k 10 330 bash "$here/build.sh" "$work/prefix" "$work/build" >"$out/build.log" 2>&1
build_status=$?
grep '^build.sh:\|pipelens: ' "$out/build.log"
if [ -n "$fixtures_pid" ]; then
    wait "$fixtures_pid"
    echo "device_run.sh: pytorch_fixtures.py exit $?"
    tail -n 15 "$out/fixtures.log"
fi
if [ $build_status -ne 0 ]; then
    tail -n 40 "$out/build.log"
    echo "device_run.sh: build.sh failed (exit $build_status)"
    exit $build_status
fi
bash "$here/check.sh" "$work/build" "$work/out" 2>&1 | tee "$out/check.log"
check_status=${PIPESTATUS[0]}
cp "$work/out/figures.json" "$out/" 2>/dev/null
if [ "${WITH_FIDELITY:-0}" = 1 ]; then
    left=$((${DEVICE_RUN_LIMIT_S:-570} - ($(date +%s) - started) - 20))
    fidelity_budget=${FIDELITY_BUDGET_S:-300}
    [ "$left" -lt "$fidelity_budget" ] && fidelity_budget=$left
    if [ "$fidelity_budget" -lt 60 ]; then
        echo "device_run.sh: fidelity.sh skipped: ${left} s left of DEVICE_RUN_LIMIT_S" |
            tee "$out/fidelity.log"
    else
        FIDELITY_BUDGET_S=$fidelity_budget bash "$here/fidelity.sh" "$work/build" \
            "$work/out/fidelity" 2>&1 | tee "$out/fidelity.log"
        echo "device_run.sh: fidelity.sh exit ${PIPESTATUS[0]}"
    fi
fi
# The tool brings back files of 16 MiB at most: the fidelity rows' trace (every step of every
# row) stays behind when large; each row's diff JSON keeps the comparison.
excluded=()
traces="$work/out/fidelity/traces.db"
if [ -f "$traces" ] && [ "$(du -m "$traces" | cut -f1)" -gt 24 ]; then
    excluded=(--exclude=out/fidelity/traces.db)
    echo "device_run.sh: out/fidelity/traces.db ($(du -h "$traces" | cut -f1)) left out of results.tgz"
fi
tar -czf "$out/results.tgz" "${excluded[@]}" -C "$work" out
echo "device_run.sh: results.tgz $(du -h "$out/results.tgz" | cut -f1), check.sh exit $check_status"
exit $check_status
