// Event: one recorded call that changed a pipeline's configuration state, in the spirit of
// PyTorch's ShapeEnvEvent. Arguments are typed JSON values (numbers, strings, tensor metadata,
// lists of those), never live tensors or pointers, so an event stored in a trace can be
// replayed on a fresh engine in another process, on another day.
//
// Invariants: sequence numbers on one rank's stream start at 0 (the constructor) and have no
// gaps; a nested event's parent is the sequence of the event whose call made it, and only
// top-level events are replayed (replaying the parent makes its children again).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/tensor/tensor_meta.hpp"

namespace pipelens::recorder {

struct Event {
    std::int64_t sequence = 0;
    int rank = -1;  // -1: a stream for the whole pipeline (a simulation)
    std::optional<std::int64_t> parent;
    std::string name;
    nlohmann::json arguments = nlohmann::json::object();
    // When the call was made: ns on its recorder's clock, or on the run's clock once written to
    // a trace. None for a recorder without a clock (a simulation) and for replayed events;
    // replays and their comparisons never look at it.
    std::optional<std::int64_t> time_ns;

    bool top_level() const { return !parent.has_value(); }
};

// "event 5: set_stage_meta {"stage":1,...}", for messages and `replay` listings.
std::string to_string(const Event& event);

// Tensor metadata as an event argument: {"dtype":"f32","shape":[64,512],"stride":[512,1],
// "requires_grad":true}. Reading throws std::invalid_argument naming what is missing.
nlohmann::json to_json(const TensorMeta& meta);
nlohmann::json to_json(const std::vector<TensorMeta>& metas);
TensorMeta tensor_meta_from_json(const nlohmann::json& json);
std::vector<TensorMeta> tensor_metas_from_json(const nlohmann::json& json);

}  // namespace pipelens::recorder
