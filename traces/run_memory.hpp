// What a run's memory figures count, so every label that shows one says it (the CLI's tables and
// JSON, the SVG timeline): a real run counts the tensors its ranks allocated (weights,
// gradients, optimizer state and activations alike); a simulation counts only what its cost
// model sized: activations, plus weight gradients and backward temporaries where the costs give
// them (per-layer costs), never weights or optimizer state.
//
// Invariant: a simulated run's counts follow from its recorded set_stage_costs events (a field
// at 0 is left out of them, so a key present means a size given); a run with none recorded
// (`plan --out`) sized activations only.
#pragma once

#include <string_view>

#include "traces/trace_reader.hpp"
#include "traces/trace_records.hpp"

namespace pipelens::traces {

enum class MemoryCounts { tensors, activations, activations_and_gradients };

MemoryCounts memory_counts_of(const TraceReader& reader, const RunRecord& run);

// The figure's label: "peak memory", "peak activation memory",
// "peak activation and gradient memory".
std::string_view peak_memory_label(MemoryCounts counts);
// Its name in JSON: "tensors", "activations", "activations_and_gradients".
std::string_view memory_counts_name(MemoryCounts counts);

}  // namespace pipelens::traces
