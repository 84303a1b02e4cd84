// State equality in the style of PyTorch's shape_env_check_state_equal: first the field sets,
// then every field's value, and a report that names each differing field:
//
//   state not equal: field values don't match:
//
//   ==> stage[1].outputs_meta: values don't match.
//     >  Left: (f32[64, 512])
//     > Right: (bf16[64, 512])
//
// Non-state members never reach the comparison: state_fields() leaves them out.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/recorder/pipeline_state.hpp"

namespace pipelens::recorder {

struct FieldMismatch {
    std::string what;  // "stage[1].outputs_meta: values don't match." or "found unique fields:"
    std::string left;
    std::string right;
    std::string field;  // "stage[1].outputs_meta"; empty for a field set mismatch
};

struct StateDifference {
    std::string kind;  // "field set mismatch:" or "field values don't match:"
    std::vector<FieldMismatch> mismatches;
    // A field set mismatch's fields, by name: those only the left state has, only the right.
    std::vector<std::string> left_only;
    std::vector<std::string> right_only;
};

// Nothing when equal. Differing values are listed in the order of the fields' names. Where
// one side is a recording, it is `left` (upstream's check_equal compares the recorded state
// with the replayed one).
std::optional<StateDifference> compare_states(const std::vector<StateField>& left,
                                              const std::vector<StateField>& right);

std::string format_state_difference(const StateDifference& difference);

// Fields as stored in a trace snapshot: a JSON array of [name, value] pairs.
std::string fields_to_json(const std::vector<StateField>& fields);
std::vector<StateField> fields_from_json(const std::string& text);  // std::invalid_argument

}  // namespace pipelens::recorder
