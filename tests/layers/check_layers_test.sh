#!/usr/bin/env bash
# The layer check itself: it passes on a tree whose includes go down, and refuses, naming the
# file, line and both layers, an include that goes up and a folder that has no layer. Without
# these cases the CI check could pass for a checker that sees nothing.
set -euo pipefail
checker="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

make_tree() {
    rm -rf "$work/tree" && mkdir -p "$work/tree"/{engine/schedule,engine/recorder,sim,traces,app/cli}
    echo '#include "traces/trace_writer.hpp"' > "$work/tree/engine/schedule/action.cpp"
    echo '#include "engine/schedule/action.hpp"' > "$work/tree/sim/simulator.cpp"
    echo '#include <vector>' > "$work/tree/traces/trace_writer.hpp"
}

fail() { echo "check_layers_test: $*"; exit 1; }

make_tree
out="$(python3 "$checker" "$work/tree")" || fail "a downward-only tree was refused: $out"

make_tree
printf '#include <vector>\n#include "engine/recorder/event.hpp"\n' > "$work/tree/traces/trace_writer.hpp"
if out="$(python3 "$checker" "$work/tree")"; then fail "an upward include passed: $out"; fi
grep -q 'traces/trace_writer.hpp:2: traces (layer 0) includes engine/recorder/event.hpp from engine/recorder (layer 3)' \
    <<<"$out" || fail "the refusal does not name file, line and layers: $out"

make_tree
mkdir -p "$work/tree/engine/newfolder" && echo '' > "$work/tree/engine/newfolder/x.cpp"
if out="$(python3 "$checker" "$work/tree")"; then fail "a folder without a layer passed: $out"; fi
grep -q 'engine/newfolder/x.cpp: its folder has no layer' <<<"$out" || fail "unplaced folder not named: $out"
echo "check_layers_test: ok"
