// The fields the Simulate panel edits, in the panel's order, and each one's value as the panel
// shows it: text that `Workbench::set` reads back to the same value (durations in us, sizes in
// bytes, per-stage lists in brackets). GUI-free, so a test checks the round trip.
//
// Invariant: every key is one an experiment file takes (experiment_toml.hpp); field_text of a
// field set from field_text's own output leaves the experiment unchanged.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/experiment/experiment.hpp"

namespace pipelens::viewer {

enum class FieldType { kind, count, flag, text };

struct WorkbenchField {
    const char* key;    // "schedule.pp"
    const char* label;  // as the panel names it
    FieldType type;
    int column;  // 0 schedule, 1 stage costs, 2 transformer, 3 links and memory
};

const std::vector<WorkbenchField>& workbench_fields();

// The field's value in `experiment`, e.g. "8", "true", "[1100us, 1000us]", "16777216B"; empty
// where the experiment leaves it unset (no transformer).
std::string field_text(const Experiment& experiment, std::string_view key);

}  // namespace pipelens::viewer
