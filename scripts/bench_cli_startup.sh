#!/usr/bin/env bash
# Whole-process start-up cost of the torch-free `pipelens`: wall time of `pipelens --version`
# and of `pipelens simulate` on the embedded default experiment (median, min and max of RUNS
# runs, with their CPU time and the load average beside them, since a busy machine slows
# every wall figure), and
# the shared libraries and peak RSS of `--version`. Give a second binary (e.g. an older build)
# to print its figures too. Prints figures only; it asserts nothing (the target is < 30 ms).
#   scripts/bench_cli_startup.sh [PIPELENS [OTHER_PIPELENS]]   (default build/app/cli/pipelens)
set -euo pipefail
runs=${RUNS:-20}

# One line per run of "$@" (output discarded): wall and CPU (user + system) milliseconds. CPU
# time is beside the wall time because it hardly moves with the machine's load.
times_of() {
    local TIMEFORMAT='%3R %3U %3S' line
    for ((i = 0; i < runs; ++i)); do
        line=$({ time "$@" >/dev/null 2>&1 </dev/null; } 2>&1)
        awk '{ printf "%.3f %.3f\n", $1 * 1000, ($2 + $3) * 1000 }' <<<"$line"
    done
}

# "median M ms (min A, max B)" of column $1 of the lines on stdin.
summarize() {
    awk -v c="$1" '{ print $c }' | sort -g | awk '{ t[NR] = $1 }
        END { m = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2;
              printf "median %7.1f ms (min %.1f, max %.1f)", m, t[1], t[NR] }'
}

load() { cut -d' ' -f1-3 /proc/loadavg; }

bench() {
    local binary=$1
    echo "$binary"
    "$binary" --version >/dev/null  # fail early on a missing binary; warms the page cache
    "$binary" simulate >/dev/null
    local name lines
    for name in --version simulate; do
        lines=$(times_of "$binary" "$name")
        printf '  %-10s wall %s  cpu %s  load %s  (%d runs)\n' "$name" \
            "$(summarize 1 <<<"$lines")" "$(summarize 2 <<<"$lines")" "$(load)" "$runs"
    done
    local libraries rss
    libraries=$(ldd "$binary" | grep -vc 'linux-vdso')
    rss=$(/usr/bin/time -f %M "$binary" --version 2>&1 >/dev/null | tail -1)
    awk -v n="$libraries" -v kib="$rss" \
        'BEGIN { printf "  --version loads %d shared libraries; peak RSS %.1f MiB\n", n, kib / 1024 }'
}

# The floor: starting any process at all, measured the same way.
lines=$(times_of /bin/true)
printf '/bin/true (the cost of starting any process here)\n  %-10s wall %s  cpu %s  load %s  (%d runs)\n\n' \
    "" "$(summarize 1 <<<"$lines")" "$(summarize 2 <<<"$lines")" "$(load)" "$runs"
bench "${1:-build/app/cli/pipelens}"
if [[ $# -ge 2 ]]; then
    echo
    bench "$2"
fi
