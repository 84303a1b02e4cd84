// Which ranks' memory lines are coloured (memory_plot.hpp): GUI-free, in the viewer's model
// library, so the rule is tested without a window.
#include <algorithm>

#include "app/viewer/memory_plot.hpp"
#include "app/viewer/timeline_model.hpp"

namespace pipelens::viewer {

std::vector<MemoryLine> memory_lines(const TimelineModel& model, std::optional<int> selected_rank) {
    std::vector<MemoryLine> lines;
    const int peak_rank = model.memory_peak_rank();
    const bool every_rank_coloured = model.ranks().size() <= std::size(kRankColours);
    for (const RankTimeline& rank : model.ranks()) {
        if (rank.memory.empty())
            continue;
        const bool coloured = every_rank_coloured || rank.rank == peak_rank ||
                              (selected_rank && rank.rank == *selected_rank);
        lines.push_back(
            {rank.rank,
             coloured ? kRankColours[static_cast<std::size_t>(rank.rank) % std::size(kRankColours)]
                      : kMutedRank,
             !coloured});
    }
    std::stable_partition(lines.begin(), lines.end(),
                          [](const MemoryLine& line) { return line.muted; });
    return lines;
}

}  // namespace pipelens::viewer
