// A process group's members are a set, whichever file lists them (a profiler's pg_config, a
// flight-recorder dump): a rank listed twice is damage, found here for every importer alike.
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

namespace pipelens::import {

// The smallest rank `ranks` lists more than once, if any.
inline std::optional<int> rank_listed_twice(std::vector<int> ranks) {
    std::sort(ranks.begin(), ranks.end());
    const auto twice = std::adjacent_find(ranks.begin(), ranks.end());
    return twice == ranks.end() ? std::nullopt : std::optional<int>(*twice);
}

}  // namespace pipelens::import
