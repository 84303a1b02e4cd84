// Encodings of trace columns that more than one writer of rows fills (simulated and real runs),
// and their reading back, so writers and readers agree in one place.
#include "traces/trace_records.hpp"

#include <cstdlib>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace pipelens::traces {

std::string waiting_on_json(const std::map<int, std::int64_t>& waiting) {
    std::string json = "{";
    for (const auto& [peer, idle] : waiting)
        json += fmt::format("{}\"{}\":{}", json.size() > 1 ? "," : "", peer, idle);
    return json + "}";
}

std::map<int, std::int64_t> waiting_on_map(const std::string& json) {
    std::map<int, std::int64_t> waiting;
    const nlohmann::json parsed = nlohmann::json::parse(json, nullptr, false);
    if (parsed.is_object())
        for (const auto& [peer, idle] : parsed.items())
            if (idle.is_number_integer())
                waiting[std::atoi(peer.c_str())] = idle.get<std::int64_t>();
    return waiting;
}

}  // namespace pipelens::traces
