// The Simulate panel's fields and their text (workbench_fields.hpp).
#include "app/viewer/workbench_fields.hpp"

#include <fmt/format.h>
#include <filesystem>

#include "engine/experiment/units.hpp"
#include "engine/schedule/schedule_kind.hpp"
#include "traces/text/quantities.hpp"

namespace pipelens::viewer {
namespace {

// The shortest decimal of `value` in `unit` that `reads_back` turns into `count` again, so that
// a binary size shows as a file would write it ("1.8GiB", not 1932735283 bytes) and a field left
// as it is changes nothing. A value no decimal reads back to (beyond a double's precision, or
// out of the parser's range) shows as the exact count in `base_unit`; showing never throws.
template <typename ReadBack>
std::string shortest_exact(double value, std::string_view unit, std::int64_t count,
                           ReadBack reads_back, std::string_view base_unit) {
    for (int digits = 1; digits <= 17; ++digits) {
        const std::string text = fmt::format("{:.{}g}{}", value, digits, unit);
        try {
            if (text.find('e') == std::string::npos && reads_back(text) == count)
                return text;
        } catch (const UnitParseError&) {
            break;
        }
    }
    return fmt::format("{}{}", count, base_unit);
}

// In microseconds, the unit the stage-cost fields are labelled with.
std::string duration(std::int64_t ns) {
    return shortest_exact(static_cast<double>(ns) / 1000.0, "us", ns, parse_duration_ns, "ns");
}

// In the largest binary unit that holds at least one (byte_unit, as sizes are printed
// elsewhere), as few digits as read back to the same count (16777216 -> 16MiB, 1932735283 ->
// 1.8GiB); under 1 KiB in bytes.
std::string bytes(std::int64_t count) {
    const ByteUnit unit = byte_unit(count);
    return shortest_exact(static_cast<double>(count) / unit.bytes, unit.name, count,
                          parse_byte_count, "B");
}

// One value as it is, several in brackets (one per stage).
template <typename Format>
std::string per_stage(const std::vector<std::int64_t>& values, Format format) {
    if (values.size() == 1)
        return format(values.front());
    std::string text = "[";
    for (std::size_t index = 0; index < values.size(); ++index)
        text += (index == 0 ? "" : ", ") + format(values[index]);
    return text + "]";
}

std::string transformer_text(const Experiment& experiment, std::string_view field) {
    if (!experiment.transformer)
        return {};
    const TransformerSpec& spec = *experiment.transformer;
    if (field == "layers")
        return std::to_string(spec.layers);
    if (field == "hidden")
        return std::to_string(spec.hidden);
    if (field == "sequence")
        return std::to_string(spec.sequence);
    if (field == "microbatch_size")
        return std::to_string(spec.microbatch_size);
    if (field == "dtype")
        return spec.dtype;
    return {};
}

}  // namespace

const std::vector<WorkbenchField>& workbench_fields() {
    static const std::vector<WorkbenchField> fields = {
        {"schedule.kind", "kind", FieldType::kind, 0},
        {"schedule.pp", "pp", FieldType::count, 0},
        {"schedule.v", "v", FieldType::count, 0},
        {"schedule.m", "m", FieldType::count, 0},
        {"schedule.max_activations", "ZB auto limit", FieldType::text, 0},
        {"schedule.defer_recv", "deferred receives", FieldType::flag, 0},
        {"network.rendezvous", "rendezvous", FieldType::flag, 0},
        {"costs.f", "F", FieldType::text, 1},
        {"costs.i", "I", FieldType::text, 1},
        {"costs.w", "W", FieldType::text, 1},
        {"transformer.layers", "layers", FieldType::text, 2},
        {"transformer.hidden", "hidden", FieldType::text, 2},
        {"transformer.sequence", "sequence", FieldType::text, 2},
        {"transformer.microbatch_size", "microbatch size", FieldType::text, 2},
        {"transformer.dtype", "dtype", FieldType::text, 2},
        {"network.latency", "link latency", FieldType::text, 3},
        {"network.bandwidth", "bandwidth GB/s", FieldType::text, 3},
        {"network.ranks_per_host", "ranks per host", FieldType::count, 3},
        {"costs.activation_bytes", "sent per mb", FieldType::text, 3},
        {"costs.held_activation_bytes", "held per mb", FieldType::text, 3},
    };
    return fields;
}

std::string field_text(const Experiment& experiment, std::string_view key) {
    const ScheduleShape& shape = experiment.shape;
    if (key == "schedule.kind")  // a schedule file gives the schedule; a kind chosen replaces it
        return experiment.schedule_file.empty()
                   ? std::string(schedule_kind_name(shape.kind))
                   : "file " + std::filesystem::path(experiment.schedule_file).filename().string();
    if (key == "schedule.pp")
        return std::to_string(shape.rank_count);
    if (key == "schedule.v")
        return std::to_string(shape.stages_per_rank);
    if (key == "schedule.m")
        return std::to_string(shape.microbatch_count);
    if (key == "schedule.max_activations")
        return experiment.max_activations.count == 0 ? "" : experiment.max_activations.text();
    if (key == "schedule.defer_recv")
        return experiment.defer_receives ? "true" : "false";
    if (key == "network.rendezvous")
        return experiment.rendezvous ? "true" : "false";
    if (key == "costs.f")
        return per_stage(experiment.forward_ns, duration);
    if (key == "costs.i")
        return per_stage(experiment.input_ns, duration);
    if (key == "costs.w")
        return per_stage(experiment.weight_ns, duration);
    if (key.starts_with("transformer."))
        return transformer_text(experiment, key.substr(12));
    if (key == "network.latency")
        return duration(experiment.intra_host.latency_ns);
    if (key == "network.bandwidth")
        return fmt::format("{:g}", experiment.intra_host.bytes_per_ns);
    if (key == "network.ranks_per_host")
        return std::to_string(experiment.ranks_per_host);
    if (key == "costs.activation_bytes")
        return per_stage(experiment.activation_bytes, bytes);
    if (key == "costs.held_activation_bytes")
        return per_stage(experiment.held_activation_bytes, bytes);
    return {};
}

}  // namespace pipelens::viewer
