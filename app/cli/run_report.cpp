// Run figures as text and JSON. Waiting time lists the peers a rank waited on longest first,
// because that is where a user looks for the stage to rebalance. A run without a step (failed,
// unfinished) shows how it ended where the step's figures would be, and none of them. A run's
// stragglers have one JSON form here, shared by `summary --stragglers` and `run`.
#include "app/cli/run_report.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "traces/core_wait.hpp"
#include "traces/text/quantities.hpp"

namespace pipelens::cli {
namespace {

std::map<int, std::int64_t> waiting_on_rank(const traces::RankRecord& rank) {
    return traces::waiting_on_map(rank.waiting_on);
}

std::string waiting_text(const traces::RankRecord& rank) {
    const std::map<int, std::int64_t> waiting = waiting_on_rank(rank);
    std::vector<std::pair<int, std::int64_t>> peers(waiting.begin(), waiting.end());
    std::stable_sort(peers.begin(), peers.end(), [](const auto& left, const auto& right) {
        return left.second > right.second;
    });
    std::string text;
    for (const auto& [peer, idle] : peers) {
        if (idle == 0)
            continue;
        if (!text.empty())
            text += ", ";
        text += fmt::format("rank {}: {}", peer, format_duration(idle));
    }
    return text.empty() ? "-" : text;
}

// A figure measured against the step: "-" in a run that has none.
std::string step_cell(const RunFigures& figures, const std::string& text) {
    return traces::step_figures_apply(figures.outcome) ? text : "-";
}

nlohmann::ordered_json step_json(const RunFigures& figures, nlohmann::ordered_json value) {
    return traces::step_figures_apply(figures.outcome) ? value : nlohmann::ordered_json(nullptr);
}

// A rank's peak memory, when anything measured it. Tensors counted on a real rank always hold its
// weights, so a peak of 0 there means nothing was sampled (a run that failed in its warm-up, an
// import whose records carry no memory), not an empty rank; a simulation's 0 is what its costs
// sized.
std::optional<std::int64_t> peak_memory(const RunFigures& figures, const traces::RankRecord& rank) {
    if (figures.memory == traces::MemoryCounts::tensors && rank.peak_memory_bytes == 0)
        return std::nullopt;
    return rank.peak_memory_bytes;
}

nlohmann::ordered_json failure_json(const traces::RunOutcome& outcome) {
    const traces::ErrorRecord error = outcome.first_error.value_or(
        traces::ErrorRecord{-1, -1, -1, "", "", "", "", outcome.failure, {}, {}});
    return {{"rank", error.rank},
            {"stage", error.stage},
            {"microbatch", error.microbatch},
            {"action", error.action},
            {"kind", error.kind},
            {"message", error.message},
            {"text", traces::outcome_text(outcome)}};
}

// "waited for a core (...): rank 0 12.000 us (1.5% of the step), ..." and, when a rank waited
// for a notable share of the step, what that does to its times; empty where nothing measured it.
std::string core_wait_text(const std::vector<traces::RankRecord>& ranks, std::int64_t step_ns) {
    std::string waits;
    for (const traces::RankRecord& rank : ranks) {
        if (!rank.core_wait_ns)
            continue;
        const std::optional<double> share = traces::core_wait_share(rank, step_ns);
        waits += fmt::format("{}rank {} {}{}", waits.empty() ? "" : ", ", rank.rank,
                             format_duration(*rank.core_wait_ns),
                             share ? fmt::format(" ({:.1f}% of the step)", *share * 100) : "");
    }
    if (waits.empty())
        return "";
    std::string text = fmt::format("waited for a core (ready to run, none free): {}\n", waits);
    const std::vector<traces::RankRecord> waiting = traces::ranks_waiting_for_cores(ranks, step_ns);
    if (!waiting.empty()) {
        std::string names;
        for (const traces::RankRecord& rank : waiting)
            names += fmt::format("{}{}", names.empty() ? "" : ", ", rank.rank);
        text += fmt::format(
            "  rank{} {} waited for cores for more than {:.0f}% of the step: {} times hold the "
            "waits (other processes, or more busy threads than cores), and so would costs "
            "calibrated from them\n",
            waiting.size() == 1 ? "" : "s", names, traces::kCoreWaitNotable * 100,
            waiting.size() == 1 ? "its" : "their");
    }
    return text;
}

}  // namespace

RunFigures recorded_run_figures(const traces::TraceReader& reader, const traces::RunRecord& run) {
    return {run.step_time_ns.value_or(0), run.bubble_ratio.value_or(0), reader.ranks(run.id),
            traces::memory_counts_of(reader, run), traces::read_run_outcome(reader, run)};
}

std::string format_run_figures(const std::string& title, const RunFigures& figures) {
    std::string text =
        traces::step_figures_apply(figures.outcome)
            ? fmt::format("{}\nstep time {}, bubble ratio {:.1f}%\n{}\n", title,
                          format_duration(figures.step_time_ns), figures.bubble_ratio * 100,
                          traces::findings_text(figures.outcome))
            : fmt::format("{}\n{}\n\n", title, traces::outcome_text(figures.outcome));
    const std::string_view memory = traces::peak_memory_label(figures.memory);
    text += fmt::format("{:>4}  {:>12}  {:>12}  {:>7}  {:>12}  {:>12}  {:>{}}  {}\n", "rank",
                        "busy", "bubble", "bubble%", "warm-up", "cool-down", memory, memory.size(),
                        "waiting on");
    for (const traces::RankRecord& rank : figures.ranks)
        text += fmt::format("{:>4}  {:>12}  {:>12}  {:>7}  {:>12}  {:>12}  {:>{}}  {}\n", rank.rank,
                            format_duration(rank.busy_ns),
                            step_cell(figures, format_duration(rank.bubble_ns)),
                            step_cell(figures, fmt::format("{:.1f}%", rank.bubble_ratio * 100)),
                            traces::warmup_of(rank, traces::step_figures_apply(figures.outcome))
                                ? format_duration(rank.warmup_ns)
                                : "-",
                            step_cell(figures, format_duration(rank.cooldown_ns)),
                            peak_memory(figures, rank) ? format_bytes(rank.peak_memory_bytes) : "-",
                            memory.size(), waiting_text(rank));
    // A real run's ranks were put on rank 0's clock: say by how much, and how surely (an offset
    // read from one host clock is exact, and says so by having no ±).
    std::string clocks;
    for (const traces::RankRecord& rank : figures.ranks)
        if (rank.rank != 0 && rank.clock_offset_ns && rank.clock_uncertainty_ns)
            clocks += fmt::format(
                "{}rank {} {}{}{}", clocks.empty() ? "" : ", ", rank.rank,
                *rank.clock_offset_ns < 0 ? "-" : (*rank.clock_offset_ns > 0 ? "+" : ""),
                format_duration(std::abs(*rank.clock_offset_ns)),
                *rank.clock_uncertainty_ns == 0
                    ? std::string()
                    : " ± " + format_duration(*rank.clock_uncertainty_ns));
    if (!clocks.empty())
        text += fmt::format("\nclocks (rank 0's minus each rank's): {}\n", clocks);
    text += core_wait_text(figures.ranks,
                           traces::step_figures_apply(figures.outcome) ? figures.step_time_ns : 0);
    return text;
}

nlohmann::ordered_json run_figures_json(const RunFigures& figures,
                                        std::optional<std::int64_t> run_id) {
    nlohmann::ordered_json json;
    json["step_time_ns"] = step_json(figures, figures.step_time_ns);
    json["bubble_ratio"] = step_json(figures, figures.bubble_ratio);
    json["peak_memory_counts"] = traces::memory_counts_name(figures.memory);
    if (figures.outcome.status == traces::RunStatus::failed)
        json["failed"] = failure_json(figures.outcome);
    if (!figures.outcome.findings.empty()) {
        nlohmann::ordered_json findings = nlohmann::ordered_json::array();
        for (const traces::ErrorRecord& finding : figures.outcome.findings)
            findings.push_back({{"kind", finding.kind},
                                {"stage", finding.stage},
                                {"microbatch", finding.microbatch},
                                {"message", finding.message}});
        json["check_failed"] = std::move(findings);
    }
    nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
    for (const traces::RankRecord& rank : figures.ranks) {
        nlohmann::ordered_json row;
        row["rank"] = rank.rank;
        row["busy_ns"] = rank.busy_ns;
        row["bubble_ns"] = step_json(figures, rank.bubble_ns);
        row["bubble_ratio"] = step_json(figures, rank.bubble_ratio);
        const std::optional<std::int64_t> peak = peak_memory(figures, rank);
        row["peak_memory_bytes"] = peak ? nlohmann::ordered_json(*peak) : nullptr;
        const std::optional<std::int64_t> warmup =
            traces::warmup_of(rank, traces::step_figures_apply(figures.outcome));
        row["warmup_ns"] = warmup ? nlohmann::ordered_json(*warmup) : nullptr;
        row["cooldown_ns"] = step_json(figures, rank.cooldown_ns);
        nlohmann::ordered_json waiting = nlohmann::ordered_json::object();
        for (const auto& [peer, idle] : waiting_on_rank(rank))
            waiting[std::to_string(peer)] = idle;
        row["waiting_on"] = std::move(waiting);
        if (rank.clock_offset_ns && rank.clock_uncertainty_ns) {  // real runs only
            row["clock_offset_ns"] = *rank.clock_offset_ns;
            row["clock_uncertainty_ns"] = *rank.clock_uncertainty_ns;
        }
        if (rank.core_wait_ns)  // real runs where the kernel keeps it
            row["core_wait_ns"] = *rank.core_wait_ns;
        ranks.push_back(std::move(row));
    }
    json["ranks"] = std::move(ranks);
    json["run_id"] = run_id ? nlohmann::ordered_json(*run_id) : nlohmann::ordered_json(nullptr);
    return json;
}

namespace {

nlohmann::ordered_json straggler_json(const analysis::RankStraggle& rank) {
    return {{"rank", rank.rank},       {"step", rank.step},
            {"ratio", rank.ratio},     {"computations", rank.computations},
            {"flagged", rank.flagged}, {"on_critical_path", rank.on_critical_path},
            {"cost_ns", rank.cost_ns}};
}

}  // namespace

nlohmann::ordered_json stragglers_json(const analysis::StragglerReport& report) {
    nlohmann::ordered_json steps = nlohmann::ordered_json::array(),
                           flagged = nlohmann::ordered_json::array();
    for (const analysis::StepStraggle& step : report.steps) {
        nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
        for (const analysis::RankStraggle& rank : step.ranks)
            ranks.push_back(straggler_json(rank));
        steps.push_back({{"step", step.step},
                         {"step_time_ns", step.step_time_ns},
                         {"relative_throughput", step.relative_throughput},
                         {"slowest_rank", step.slowest_rank},
                         {"fastest_rank", step.fastest_rank},
                         {"ranks", std::move(ranks)}});
    }
    for (const analysis::RankStraggle& rank : report.flagged)
        flagged.push_back(straggler_json(rank));
    nlohmann::ordered_json json = {{"threshold", report.threshold},
                                   {"reference", report.calibrated             ? "calibration"
                                                 : report.not_measured.empty() ? "other ranks"
                                                                               : "none"},
                                   {"flagged", std::move(flagged)},
                                   {"steps", std::move(steps)}};
    if (!report.not_measured.empty())  // why there are no steps: the ranks' work differs
        json["not_measured"] = report.not_measured;
    return json;
}

}  // namespace pipelens::cli
