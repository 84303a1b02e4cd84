#!/usr/bin/env bash
# placement_probe.sh BUILD_DIR OUT_DIR: does where a rank runs decide how fast it runs?
#
# On the GPU machine's 16 vCPUs the ranks of one repeated run each ran at one of two speeds,
# about 1.4 times apart, for a whole run, with no wait for a core (docs/fidelity-16-cores.md).
# Two vCPUs that share a physical core (hyperthreads) would do that. This probe measures it
# instead of guessing, in three parts, within PROBE_BUDGET_S (a part stops when the budget
# runs low, and each run's timeout is cut to what is left of it, so no run outlives it):
#
# 1. topology.txt: what the guest is told (lscpu, each CPU's thread siblings, core and package,
#    the hypervisor flag, the load).
# 2. solo.tsv: one rank's work alone (`run --pp 1`, the 4 layers a pp=4 rank of the fidelity
#    model holds) pinned to each CPU in turn, then the same on CPU PROBE_PAIR_CPU together with
#    an identical run on each other CPU: a CPU whose partner slows it by far more than the
#    others do shares its core with it, whatever the guest's topology says.
# 3. layouts.tsv: the fidelity anchor (1F1B pp=4 m=8 over gloo) with its ranks left to the
#    scheduler, and with rank r started by hand on the r-th CPU of each layout in
#    PROBE_LAYOUTS, PROBE_REPEATS times each: the step and each rank's busy time and CPU.
#
# Every run is a real `pipelens run` of the build under test, one intra-op thread per rank, on
# the CPU (`--device cpu`). Exit status: 2 on a usage error, else 0 (the files say what ran).
#
# Environment: PROBE_BUDGET_S (150), PROBE_REPEATS (4), PROBE_LAYOUTS (space-separated CPU lists,
# default "0,1,2,3 0,2,4,6 0,4,8,12 8,9,10,11"), PROBE_PAIR_CPU (0), PROBE_STEPS (10),
# PROBE_WARMUP (3).
set -uo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 BUILD_DIR OUT_DIR" >&2
    exit 2
fi
build_dir="$(cd "$1" && pwd)" || exit 2
mkdir -p "$2/logs" || exit 2
out_dir="$(cd "$2" && pwd)"
pipelens="$build_dir/app/cli/pipelens"
[ -x "$pipelens" ] || { echo "placement_probe.sh: no pipelens in $build_dir/app/cli" >&2; exit 2; }
started=$(date +%s)
budget_s="${PROBE_BUDGET_S:-150}"
repeats="${PROBE_REPEATS:-4}"
cores=$(nproc)
layouts="${PROBE_LAYOUTS:-0,1,2,3 0,2,4,6 0,4,8,12 8,9,10,11}"
pair_cpu="${PROBE_PAIR_CPU:-0}"
steps=(--steps "${PROBE_STEPS:-10}" --warmup "${PROBE_WARMUP:-3}")
model=(--model mlp --hidden 256 --threads 1 --device cpu --no-reference)

say() { echo "placement_probe.sh: $*"; }
left() { echo $((budget_s - ($(date +%s) - started))); }
# limit MAX: a run's timeout, MAX seconds or what is left of the budget, whichever is less.
limit() {
    local remaining
    remaining=$(left)
    [ "$remaining" -lt "$1" ] && echo $((remaining > 1 ? remaining : 1)) || echo "$1"
}
json_field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2]) or '')" "$@" 2>/dev/null; }

write_topology() {
    {
        echo "nproc $(nproc)"
        lscpu
        lscpu -e 2>/dev/null
        for cpu in /sys/devices/system/cpu/cpu[0-9]*; do
            echo "$(basename "$cpu") siblings $(cat "$cpu/topology/thread_siblings_list" 2>/dev/null)" \
                "core $(cat "$cpu/topology/core_id" 2>/dev/null)" \
                "package $(cat "$cpu/topology/physical_package_id" 2>/dev/null)"
        done
        echo "hypervisor flag: $(grep -m1 -ow hypervisor /proc/cpuinfo || echo no)"
        echo "loadavg $(cat /proc/loadavg)"
    } >"$out_dir/topology.txt" 2>&1
}

# solo_run NAME CPU: one rank's work pinned to CPU; prints its median step in ns ("" on failure).
solo_run() {
    local json="$out_dir/logs/$1.json"
    timeout -k 5 "$(limit 60)" taskset -c "$2" "$pipelens" run --schedule 1F1B --pp 1 --m 8 --layers 4 \
        --batch 256 "${model[@]}" "${steps[@]}" --json >"$json" 2>"$out_dir/logs/$1.err"
    json_field "$json" step_time_ns
}

probe_solo() {
    printf 'kind\tcpu\tpartner\tstep_ns\tpartner_step_ns\n' >"$out_dir/solo.tsv"
    local cpu partner_pid step partner_step
    for ((cpu = 0; cpu < cores; cpu++)); do
        [ "$(left)" -gt 20 ] || { say "solo scan stopped at CPU $cpu: budget"; return; }
        printf 'alone\t%s\t\t%s\t\n' "$cpu" "$(solo_run "alone.$cpu" "$cpu")" >>"$out_dir/solo.tsv"
    done
    for ((cpu = 0; cpu < cores; cpu++)); do
        [ "$cpu" -eq "$pair_cpu" ] && continue
        [ "$(left)" -gt 20 ] || { say "pair scan stopped at CPU $cpu: budget"; return; }
        solo_run "pair.$cpu.partner" "$cpu" >"$out_dir/logs/pair.$cpu.partner.step" &
        partner_pid=$!
        step="$(solo_run "pair.$cpu" "$pair_cpu")"
        wait "$partner_pid"
        partner_step="$(cat "$out_dir/logs/pair.$cpu.partner.step")"
        printf 'pair\t%s\t%s\t%s\t%s\n' "$pair_cpu" "$cpu" "$step" "$partner_step" \
            >>"$out_dir/solo.tsv"
    done
}

# fits_cpus LAYOUT: "free", or four CPUs that all exist here.
fits_cpus() {
    [ "$1" = free ] && return 0
    local cpu count=0
    for cpu in ${1//,/ }; do
        [ "$cpu" -lt "$cores" ] || return 1
        count=$((count + 1))
    done
    [ "$count" -eq 4 ]
}

# anchor_run NAME LAYOUT: the fidelity anchor; LAYOUT "free" lets the launcher start the ranks,
# else rank r is started by hand pinned to the r-th CPU of the comma-separated list.
anchor_run() {
    local name="$1" layout="$2" json="$out_dir/logs/$1.json" rank port pids=()
    local run=(run --schedule 1F1B --pp 4 --m 8 --layers 16 --batch 256 "${model[@]}" "${steps[@]}"
        --transport gloo --out "$out_dir/layouts.db" --json)
    if [ "$layout" = free ]; then
        timeout -k 5 "$(limit 90)" "$pipelens" "${run[@]}" --nproc 4 >"$json" 2>"$out_dir/logs/$name.err"
        return
    fi
    port=$((20000 + RANDOM % 9000))
    IFS=, read -r -a cpus <<<"$layout"
    local bound
    bound=$(limit 90)
    for rank in 0 1 2 3; do
        RANK=$rank WORLD_SIZE=4 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout -k 5 "$bound" \
            taskset -c "${cpus[$rank]}" "$pipelens" "${run[@]}" --timeout 20s \
            >"$out_dir/logs/$name.rank$rank.json" 2>"$out_dir/logs/$name.rank$rank.err" &
        pids+=($!)
    done
    for rank in 0 1 2 3; do wait "${pids[$rank]}"; done
    cp "$out_dir/logs/$name.rank0.json" "$json"
}

probe_layouts() {
    printf 'layout\trepeat\tstep_ns\tbusy_ns_per_rank\n' >"$out_dir/layouts.tsv"
    local repeat layout busy
    for ((repeat = 1; repeat <= repeats; repeat++)); do
        for layout in free $layouts; do
            [ "$(left)" -gt 15 ] || { say "layouts stopped at repeat $repeat: budget"; return; }
            if ! fits_cpus "$layout"; then
                [ "$repeat" -eq 1 ] && say "layout $layout skipped: this machine has $cores CPUs"
                continue
            fi
            anchor_run "layout.$layout.$repeat" "$layout"
            busy="$(python3 -c "import json,sys; d=json.load(open(sys.argv[1]))
print(','.join(str(r['busy_ns']) for r in d.get('ranks') or []))" \
                "$out_dir/logs/layout.$layout.$repeat.json" 2>/dev/null)"
            printf '%s\t%s\t%s\t%s\n' "$layout" "$repeat" \
                "$(json_field "$out_dir/logs/layout.$layout.$repeat.json" step_time_ns)" "$busy" \
                >>"$out_dir/layouts.tsv"
        done
    done
}

write_topology
say "$cores CPUs, budget ${budget_s} s, layouts: free $layouts"
probe_solo
probe_layouts
python3 "$(dirname "${BASH_SOURCE[0]}")/placement_table.py" "$out_dir"
say "done in $(($(date +%s) - started)) s: $out_dir"
