// The root-cause order of errors (root_cause.hpp says the rule).
#include "traces/root_cause.hpp"

#include <algorithm>
#include <limits>
#include <tuple>

namespace pipelens::traces {

int consequence_level(std::string_view error_kind) {
    if (error_kind == "rank_died")
        return -1;
    if (error_kind == "stopped" || error_kind == "lost")
        return 2;
    if (error_kind == "timeout")
        return 1;
    return 0;
}

std::vector<ErrorRecord> root_cause_first(std::vector<ErrorRecord> errors) {
    const auto key = [](const ErrorRecord& error) {
        return std::make_tuple(consequence_level(error.kind), error.kind == "stopped",
                               error.time_ns.value_or(std::numeric_limits<std::int64_t>::max()),
                               error.rank);
    };
    std::stable_sort(errors.begin(), errors.end(),
                     [&](const auto& left, const auto& right) { return key(left) < key(right); });
    return errors;
}

}  // namespace pipelens::traces
