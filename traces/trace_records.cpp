// Encodings of trace columns that more than one writer of rows fills (simulated and real runs).
#include "traces/trace_records.hpp"

#include <fmt/format.h>

namespace pipelens::traces {

std::string waiting_on_json(const std::map<int, std::int64_t>& waiting) {
    std::string json = "{";
    for (const auto& [peer, idle] : waiting)
        json += fmt::format("{}\"{}\":{}", json.size() > 1 ? "," : "", peer, idle);
    return json + "}";
}

}  // namespace pipelens::traces
