// Summary figures and per-rank rows (run_summary.hpp), from the ranks' recorded figures, their
// memory samples and the model's critical path.
#include "app/viewer/run_summary.hpp"

#include <fmt/format.h>

#include "engine/text/quantities.hpp"

namespace pipelens::viewer {
namespace {

// The peer waited on longest (-1: none) and the total wait.
std::pair<int, std::int64_t> waiting_of(const std::string& waiting_on) {
    int peer = -1;
    std::int64_t most = 0, total = 0;
    for (const auto& [rank, ns] : traces::waiting_on_map(waiting_on)) {
        total += ns;
        if (ns > most) {
            most = ns;
            peer = rank;
        }
    }
    return {peer, total};
}

RankRow row_of(const RankTimeline& rank) {
    RankRow row;
    row.rank = rank.rank;
    row.busy_ns = rank.figures.busy_ns;
    row.warmup_ns = rank.figures.warmup_ns;
    row.cooldown_ns = rank.figures.cooldown_ns;
    const auto [peer, waiting] = waiting_of(rank.figures.waiting_on);
    row.waited_most_on = peer;
    row.waiting_ns = waiting;
    if (rank.figures.peak_memory_bytes > 0 || !rank.memory.empty())
        row.peak_memory_bytes = rank.figures.peak_memory_bytes;
    for (const traces::MemoryRecord& sample : rank.memory)
        row.peak_memory_bytes = std::max(*row.peak_memory_bytes, sample.bytes);
    return row;
}

}  // namespace

RunSummary summarize(const TimelineModel& model) {
    RunSummary summary;
    summary.step_ns = model.run().step_time_ns.value_or(model.end_ns());
    summary.bubble_ratio = model.run().bubble_ratio;
    std::int64_t busiest = -1;
    for (const RankTimeline& rank : model.ranks()) {
        RankRow row = row_of(rank);
        if (row.peak_memory_bytes &&
            (!summary.peak_memory_bytes || *row.peak_memory_bytes > *summary.peak_memory_bytes)) {
            summary.peak_memory_bytes = row.peak_memory_bytes;
            summary.peak_memory_rank = row.rank;
        }
        if (row.busy_ns > busiest) {
            busiest = row.busy_ns;
            summary.busiest_rank = row.rank;
        }
        summary.ranks.push_back(row);
    }
    return summary;
}

std::string summary_text(const RunSummary& summary) {
    std::string text = fmt::format("step {}", format_duration(summary.step_ns));
    text += summary.bubble_ratio ? fmt::format("  |  bubble {:.1f}%", *summary.bubble_ratio * 100)
                                 : "  |  bubble n/a";
    text += summary.peak_memory_bytes
                ? fmt::format("  |  peak {} (rank {})", format_bytes(*summary.peak_memory_bytes),
                              summary.peak_memory_rank)
                : "  |  peak memory n/a";
    if (summary.busiest_rank >= 0)
        text += fmt::format("  |  busiest rank {}", summary.busiest_rank);
    return text;
}

std::string critical_path_text(const TimelineModel& model) {
    const TimelineCriticalPath& path = model.critical_path();
    if (!path.error.empty())
        return "critical path: n/a (" + path.error + ")";
    if (path.actions.empty())
        return "critical path: none";
    std::int64_t total = 0;
    for (std::int64_t ns : path.share_ns)
        total += ns;
    std::string text = "critical path:";
    for (int share = 0; share < analysis::kPathShareCount; ++share) {
        const double percent = total > 0 ? 100.0 * path.share_ns[share] / total : 0;
        if (percent >= 1)
            text +=
                fmt::format(" {} {:.0f}%",
                            analysis::share_name(static_cast<analysis::PathShare>(share)), percent);
    }
    return text;
}

}  // namespace pipelens::viewer
