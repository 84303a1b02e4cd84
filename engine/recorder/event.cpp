// Events' text form and tensor metadata as JSON. Metadata keeps its stride and requires_grad,
// not only the printed `f32[64, 512]`, because a replay must rebuild exactly what was checked.
#include "engine/recorder/event.hpp"

#include <cstdint>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "engine/text/shortened.hpp"

namespace pipelens::recorder {

std::string to_string(const Event& event) {
    return fmt::format("event {}: {} {}", event.sequence, shown_text(event.name, 80),
                       shortened(event.arguments.dump(), 300));
}

nlohmann::json to_json(const TensorMeta& meta) {
    return {{"dtype", meta.dtype},
            {"shape", meta.shape},
            {"stride", meta.stride},
            {"requires_grad", meta.requires_grad}};
}

nlohmann::json to_json(const std::vector<TensorMeta>& metas) {
    nlohmann::json list = nlohmann::json::array();
    for (const TensorMeta& meta : metas)
        list.push_back(to_json(meta));
    return list;
}

namespace {

// Sizes or strides as signed 64-bit counts: a number past int64 (18446744073709551615) was read
// wrapped round, as -1, and reported as a size the trace does not hold.
std::vector<std::int64_t> counts_from_json(const nlohmann::json& json, const char* field) {
    if (!json.is_array())
        throw std::invalid_argument(
            fmt::format("tensor metadata's '{}' must be a list of integers, got {}", field,
                        shortened(json.dump(), 120)));
    std::vector<std::int64_t> counts;
    for (const nlohmann::json& value : json) {
        if (!value.is_number_integer())
            throw std::invalid_argument(
                fmt::format("tensor metadata's '{}' holds {}, not an integer", field,
                            shortened(value.dump(), 40)));
        if (value.is_number_unsigned() &&
            value.get<std::uint64_t>() >
                static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            throw std::invalid_argument(fmt::format(
                "tensor metadata's '{}' holds {}, past the largest size a tensor can have", field,
                value.dump()));
        counts.push_back(value.get<std::int64_t>());
    }
    return counts;
}

}  // namespace

TensorMeta tensor_meta_from_json(const nlohmann::json& json) {
    if (!json.is_object() || !json.contains("dtype") || !json.contains("shape"))
        throw std::invalid_argument(fmt::format("tensor metadata needs 'dtype' and 'shape', got {}",
                                                shortened(json.dump(), 120)));
    TensorMeta meta;
    meta.dtype = json.at("dtype").get<std::string>();
    meta.shape = counts_from_json(json.at("shape"), "shape");
    meta.stride = json.contains("stride") ? counts_from_json(json.at("stride"), "stride")
                                          : contiguous_stride(meta.shape);
    meta.requires_grad = json.value("requires_grad", false);
    return meta;
}

std::vector<TensorMeta> tensor_metas_from_json(const nlohmann::json& json) {
    if (!json.is_array())
        throw std::invalid_argument(
            fmt::format("expected a list of tensor metadata, got {}", shortened(json.dump(), 120)));
    std::vector<TensorMeta> metas;
    for (const nlohmann::json& item : json)
        metas.push_back(tensor_meta_from_json(item));
    return metas;
}

}  // namespace pipelens::recorder
