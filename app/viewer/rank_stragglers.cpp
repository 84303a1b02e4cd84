// Straggler marks of the rank rows (rank_stragglers.hpp).
#include "app/viewer/rank_stragglers.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "traces/text/quantities.hpp"

namespace pipelens::viewer {

std::vector<analysis::RankStraggle> rank_straggles(const analysis::StragglerReport& report,
                                                   int rank, std::optional<int> step) {
    std::vector<analysis::RankStraggle> found;
    for (const analysis::RankStraggle& straggle : report.flagged)  // by step, then rank
        if (straggle.rank == rank && (!step || straggle.step == *step))
            found.push_back(straggle);
    return found;
}

std::vector<bool> marked_ranks(const analysis::StragglerReport& report, int rank_count,
                               std::optional<int> step) {
    std::vector<bool> marked(static_cast<std::size_t>(std::max(rank_count, 0)), false);
    for (const analysis::RankStraggle& straggle : report.flagged)
        if (straggle.rank >= 0 && straggle.rank < rank_count && (!step || straggle.step == *step))
            marked[static_cast<std::size_t>(straggle.rank)] = true;
    return marked;
}

std::string straggle_text(const analysis::RankStraggle& straggle, bool calibrated) {
    return fmt::format(
        "rank {}: {:.2f}x the {}reference compute at step {}, {} the critical "
        "path, cost {}",
        straggle.rank, straggle.ratio, calibrated ? "calibrated " : "", straggle.step,
        straggle.on_critical_path ? "on" : "off", format_duration(straggle.cost_ns));
}

}  // namespace pipelens::viewer
