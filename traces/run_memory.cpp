// What a run's memory figures count (run_memory.hpp), read from its recorded cost events.
#include "traces/run_memory.hpp"

#include <nlohmann/json.hpp>

namespace pipelens::traces {
namespace {

// A set_stage_costs event that sized weight gradients or a backward's temporaries.
bool sizes_gradients(const EventRecord& event) {
    if (event.name != "set_stage_costs")
        return false;
    const nlohmann::json arguments = nlohmann::json::parse(event.arguments, nullptr, false);
    if (!arguments.is_object())
        return false;
    for (const char* key : {"gradient_bytes", "backward_peak_bytes"}) {
        const auto found = arguments.find(key);
        if (found != arguments.end() && found->is_number_integer() && found->get<long long>() > 0)
            return true;
    }
    return false;
}

}  // namespace

MemoryCounts memory_counts_of(const TraceReader& reader, const RunRecord& run) {
    if (run.kind == RunKind::real)
        return MemoryCounts::tensors;
    for (const EventRecord& event : reader.events(run.id))
        if (sizes_gradients(event))
            return MemoryCounts::activations_and_gradients;
    return MemoryCounts::activations;
}

std::string_view peak_memory_label(MemoryCounts counts) {
    switch (counts) {
        case MemoryCounts::activations:
            return "peak activation memory";
        case MemoryCounts::activations_and_gradients:
            return "peak activation and gradient memory";
        default:
            return "peak memory";
    }
}

std::string_view memory_counts_name(MemoryCounts counts) {
    switch (counts) {
        case MemoryCounts::activations:
            return "activations";
        case MemoryCounts::activations_and_gradients:
            return "activations_and_gradients";
        default:
            return "tensors";
    }
}

}  // namespace pipelens::traces
