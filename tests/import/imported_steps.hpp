// An imported run's timeline on one rank as (action text, start ns, end ns) rows, in step order,
// so a test compares a whole rank with one EXPECT_EQ against a table it spells out.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "engine/import/imported_run.hpp"

namespace pipelens::testing {

using Step = std::tuple<std::string, std::int64_t, std::int64_t>;  // action, start ns, end ns

inline std::vector<Step> steps_of(const import::ImportedRun& run, int rank) {
    std::vector<Step> steps;
    for (std::size_t index = 0; index < run.schedule.ranks.at(rank).size(); ++index)
        steps.emplace_back(run.schedule.text(run.schedule.ranks[rank][index]),
                           run.timings.at(rank).at(index).start_ns,
                           run.timings[rank][index].end_ns);
    return steps;
}

}  // namespace pipelens::testing
