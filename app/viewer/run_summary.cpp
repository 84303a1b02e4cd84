// Summary figures and per-rank rows (run_summary.hpp), from the ranks' recorded figures, their
// memory samples and the model's critical path.
#include "app/viewer/run_summary.hpp"

#include <cstdlib>
#include <utility>

#include <fmt/format.h>

#include "traces/text/quantities.hpp"

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

RunSummary summarize(const TimelineModel& model, const traces::RunOutcome& outcome) {
    RunSummary summary;
    summary.outcome = outcome;
    if (traces::step_figures_apply(outcome)) {
        summary.step_ns = model.run().step_time_ns.value_or(model.end_ns());
        summary.bubble_ratio = model.run().bubble_ratio;
    }
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
    summary.steps = find_steps(model);
    return summary;
}

std::string summary_text(const RunSummary& summary) {
    std::string text;
    if (!traces::step_figures_apply(summary.outcome)) {
        text = traces::outcome_text(summary.outcome);
    } else {
        text = summary.step_ns ? fmt::format("step {}", format_duration(*summary.step_ns))
                               : "step n/a";
        text += summary.bubble_ratio
                    ? fmt::format("  |  bubble {:.1f}%", *summary.bubble_ratio * 100)
                    : "  |  bubble n/a";
    }
    text += summary.peak_memory_bytes
                ? fmt::format("  |  peak {} (rank {})", format_bytes(*summary.peak_memory_bytes),
                              summary.peak_memory_rank)
                : "  |  peak memory n/a";
    if (summary.busiest_rank >= 0)
        text += fmt::format("  |  busiest rank {}", summary.busiest_rank);
    if (summary.steps.size() > 1)
        text += fmt::format("  |  {} steps", summary.steps.size());
    return text;
}

std::string run_list_text(const traces::RunRecord& run) {
    // A sharding-only run has devices, not a pipeline: its pp holds the mesh's size.
    const std::string shape = run.schedule == "sharding" ? fmt::format("{} devices", run.pp)
                                                         : fmt::format("pp={} m={}", run.pp, run.m);
    std::string ending;
    switch (run.status) {
        case traces::RunStatus::finished:
            ending = run.step_time_ns ? format_duration(*run.step_time_ns) : "";
            break;
        case traces::RunStatus::failed:
            ending = "FAILED";
            break;
        case traces::RunStatus::running:
            ending = "unfinished";
            break;
    }
    return fmt::format("{} {} {}  {}  {}", run.id,
                       run.kind == traces::RunKind::real ? "real" : "sim", shape, run.schedule,
                       ending);
}

std::string step_comparison_text(std::int64_t shown_id, const RunSummary& shown,
                                 std::int64_t other_id, const RunSummary& other) {
    for (const auto& [id, summary] : {std::pair(shown_id, &shown), std::pair(other_id, &other)})
        if (!summary->step_ns)
            return fmt::format("vs run {}: no step to compare: run {} {}", other_id, id,
                               traces::outcome_text(summary->outcome));
    const std::int64_t delta = *shown.step_ns - *other.step_ns;
    return fmt::format(
        "vs run {}: step {}{} ({:+.1f}%)", other_id, delta >= 0 ? '+' : '-',
        format_duration(std::abs(delta)),
        *other.step_ns > 0 ? 100.0 * static_cast<double>(delta) / *other.step_ns : 0.0);
}

std::string critical_path_text(const TimelineModel& model) {
    const TimelineCriticalPath& path = model.critical_path();
    const std::string name = model.analysed_step()
                                 ? fmt::format("critical path (step {}):", *model.analysed_step())
                                 : std::string("critical path:");
    if (!path.error.empty())
        return name + " n/a (" + path.error + ")";
    if (path.actions.empty())
        return name + " none";
    std::int64_t total = 0;
    for (std::int64_t ns : path.share_ns)
        total += ns;
    std::string text = name;
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
