// Summary figures and per-rank rows (run_summary.hpp), from the ranks' recorded figures, their
// memory samples and the model's critical path.
#include "app/viewer/run_summary.hpp"

#include <cstdlib>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "traces/core_wait.hpp"
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

RankRow row_of(const RankTimeline& rank, const traces::RunOutcome& outcome) {
    RankRow row;
    row.rank = rank.rank;
    row.busy_ns = rank.figures.busy_ns;
    row.warmup_ns = traces::warmup_of(rank.figures, traces::step_figures_apply(outcome));
    if (traces::step_figures_apply(outcome))
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

std::string rank_shares_text(const RankTimeline& rank, const RunSummary& summary, bool hangs,
                             std::optional<int> step) {
    if (hangs)
        return "no step: it hangs";
    if (!traces::step_figures_apply(summary.outcome))
        return fmt::format("busy {}", format_duration(rank.figures.busy_ns));
    if (step && *step >= 0 && static_cast<std::size_t>(*step) < summary.step_busy_ns.size() &&
        static_cast<std::size_t>(rank.rank) < summary.step_busy_ns[*step].size()) {
        const std::int64_t span = summary.steps[static_cast<std::size_t>(*step)].step_ns();
        const std::int64_t busy = summary.step_busy_ns[*step][static_cast<std::size_t>(rank.rank)];
        const double busy_share = span > 0 ? 100.0 * static_cast<double>(busy) / span : 0;
        return fmt::format("busy {:.0f}%  bubble {:.0f}%", busy_share, 100.0 - busy_share);
    }
    const double measured = static_cast<double>(rank.figures.busy_ns + rank.figures.bubble_ns);
    const double busy_share = measured > 0 ? 100.0 * rank.figures.busy_ns / measured : 0;
    return fmt::format("busy {:.0f}%  bubble {:.0f}%", busy_share,
                       100.0 * rank.figures.bubble_ratio);
}

RunSummary summarize(const TimelineModel& model, const traces::RunOutcome& outcome) {
    RunSummary summary;
    summary.outcome = outcome;
    if (traces::step_figures_apply(outcome)) {
        summary.step_ns = model.run().step_time_ns.value_or(model.end_ns());
        summary.bubble_ratio = model.run().bubble_ratio;
    }
    std::int64_t busiest = 0;  // a rank that computed nothing is no busiest rank
    for (const RankTimeline& rank : model.ranks()) {
        RankRow row = row_of(rank, outcome);
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
        if (const std::optional<double> share =
                traces::core_wait_share(rank.figures, summary.step_ns.value_or(0));
            share && *share > traces::kCoreWaitNotable)
            summary.core_waits.emplace_back(rank.rank, *share);
    }
    summary.action_steps = number_steps(model);
    summary.steps = find_steps(model, summary.action_steps);
    summary.last_step_incomplete =
        last_step_incomplete(summary.steps, outcome.status == traces::RunStatus::running);
    summary.step_busy_ns = busy_by_step(model, summary.steps, summary.action_steps);
    return summary;
}

std::vector<RankRow> rows_for_step(const RunSummary& summary, std::optional<int> step) {
    std::vector<RankRow> rows = summary.ranks;
    if (!step || *step < 0 || static_cast<std::size_t>(*step) >= summary.step_busy_ns.size())
        return rows;
    const std::vector<std::int64_t>& busy = summary.step_busy_ns[static_cast<std::size_t>(*step)];
    for (RankRow& row : rows)
        if (row.rank >= 0 && static_cast<std::size_t>(row.rank) < busy.size())
            row.busy_ns = busy[static_cast<std::size_t>(row.rank)];
    return rows;
}

std::vector<std::string> summary_figures(const RunSummary& summary, bool hangs) {
    std::vector<std::string> figures;
    if (hangs) {
        figures.emplace_back(kHangsNoStep);
    } else if (!traces::step_figures_apply(summary.outcome)) {
        figures.push_back(traces::outcome_text(summary.outcome));
    } else {
        figures.push_back(summary.step_ns
                              ? fmt::format("step {}", format_duration(*summary.step_ns))
                              : "step n/a");
        figures.push_back(summary.bubble_ratio
                              ? fmt::format("bubble {:.1f}%", *summary.bubble_ratio * 100)
                              : "bubble n/a");
    }
    figures.push_back(summary.peak_memory_bytes
                          ? fmt::format("peak {} (rank {})",
                                        format_bytes(*summary.peak_memory_bytes),
                                        summary.peak_memory_rank)
                          : "peak memory n/a");
    if (summary.busiest_rank >= 0)
        figures.push_back(fmt::format("busiest rank {}", summary.busiest_rank));
    if (summary.steps.size() > 1 && !hangs) {
        const std::size_t whole = summary.steps.size() - summary.last_step_incomplete;
        figures.push_back(fmt::format("{} step{}{}", whole, whole == 1 ? "" : "s",
                                      !summary.last_step_incomplete ? ""
                                      : summary.writing             ? " + 1 in progress"
                                                                    : " + 1 incomplete"));
    }
    for (const auto& [rank, share] : summary.core_waits)
        figures.push_back(
            fmt::format("rank {} waited for a core {:.0f}% of the step", rank, share * 100));
    return figures;
}

std::string summary_text(const RunSummary& summary) {
    return fmt::format("{}", fmt::join(summary_figures(summary), "  |  "));
}

namespace {

constexpr std::string_view kSeparator = "  |  ";

// The figures laid out greedily, a line filled before the next; nullopt when they take more
// than `lines` lines or one is wider than a line.
std::optional<std::vector<std::string>> flow(
    const std::vector<std::string>& figures, float width, int lines,
    const std::function<float(std::string_view)>& measure) {
    std::vector<std::string> laid{""};
    for (const std::string& figure : figures) {
        if (measure(figure) > width)
            return std::nullopt;
        const std::string longer =
            laid.back().empty() ? figure : laid.back() + std::string(kSeparator) + figure;
        if (measure(longer) <= width) {
            laid.back() = longer;
            continue;
        }
        if (static_cast<int>(laid.size()) == lines)
            return std::nullopt;
        laid.push_back(figure);
    }
    return laid;
}

// `text` cut to its first `keep` characters and "...".
std::string shortened(const std::string& text, std::size_t keep) {
    return keep >= text.size() ? text : text.substr(0, keep) + "...";
}

}  // namespace

std::vector<std::string> fit_figures(std::vector<std::string> figures, float width, int lines,
                                     const std::function<float(std::string_view)>& measure) {
    if (figures.empty())
        return {};
    if (auto laid = flow(figures, width, lines, measure))
        return *laid;
    // The longest first figure that lets every figure fit (binary search on its length).
    const std::string first = figures.front();
    std::size_t low = 0, high = first.size();
    while (low < high) {
        const std::size_t middle = (low + high + 1) / 2;
        figures.front() = shortened(first, middle);
        if (flow(figures, width, lines, measure))
            low = middle;
        else
            high = middle - 1;
    }
    figures.front() = shortened(first, low);
    if (auto laid = flow(figures, width, lines, measure))
        return *laid;
    // Too narrow for the rest even so: each line's figures in turn, the last cut at the edge.
    std::vector<std::string> laid;
    for (const std::string& figure : figures) {
        if (static_cast<int>(laid.size()) < lines &&
            (laid.empty() || measure(laid.back() + std::string(kSeparator) + figure) > width)) {
            laid.push_back(figure);
            continue;
        }
        laid.back() += std::string(kSeparator) + figure;
    }
    return laid;
}

namespace {

// How a run in the runs list ends: its step time, FAILED or unfinished. Sharding decisions are
// a run with no step (its step time column holds 0).
std::string list_ending(const traces::RunRecord& run) {
    switch (run.status) {
        case traces::RunStatus::finished:
            return traces::run_has_step(run) && run.schedule != "sharding"
                       ? format_duration(*run.step_time_ns)
                       : "";
        case traces::RunStatus::failed:
            return "FAILED";
        case traces::RunStatus::running:
            break;
    }
    return "unfinished";
}

}  // namespace

std::string run_list_text(const traces::RunRecord& run, bool hangs) {
    // A sharding-only run has devices, not a pipeline: its pp holds the mesh's size.
    const std::string shape = run.schedule == "sharding" ? fmt::format("{} devices", run.pp)
                                                         : fmt::format("pp={} m={}", run.pp, run.m);
    const std::string ending = hangs ? std::string("HANGS") : list_ending(run);
    return fmt::format("{} {} {}  {}{}{}", run.id,
                       run.kind == traces::RunKind::real ? "real" : "sim", shape, run.schedule,
                       ending.empty() ? "" : "  ", ending);
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

std::string critical_path_text(const TimelineModel& model, std::size_t step_count) {
    const TimelineCriticalPath& path = model.critical_path();
    // A failed run's path goes only as far as the run did, as `summary --critical-path` says.
    const std::string name =
        model.analysed_step() ? fmt::format("critical path (step {}):", *model.analysed_step())
        : model.run().status == traces::RunStatus::failed
            ? std::string("critical path, up to where the run stopped:")
        : step_count > 1 ? fmt::format("critical path (all {} steps):", step_count)
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
        if (path.share_ns[share] <= 0 || total <= 0)
            continue;
        // A small share is still said, so the parts add up to the whole path.
        const double percent = 100.0 * path.share_ns[share] / total;
        const std::string figure = percent < 1 ? "<1%" : fmt::format("{:.0f}%", percent);
        text += fmt::format(" {} {}", analysis::share_name(static_cast<analysis::PathShare>(share)),
                            figure);
    }
    return text;
}

}  // namespace pipelens::viewer
