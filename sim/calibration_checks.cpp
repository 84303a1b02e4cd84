// The refusals. Messages name the figure as `calibrate` prints it (stage, kind, duration) and the
// bound it broke, so the line alone says what is wrong and by how much.
#include "sim/calibration_checks.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

#include <fmt/format.h>

#include "engine/run_record/statistics.hpp"
#include "traces/text/quantities.hpp"

namespace pipelens::sim {
namespace {

inline constexpr double kSameWorkFactor = 2.0;

std::string joined_lines(const std::vector<std::string>& lines) {
    std::string text;
    for (const std::string& line : lines)
        text += (text.empty() ? "" : "\n") + line;
    return text;
}

// A figure printed as `calibrate` prints it; a negative one as its ns (format_duration is for
// durations).
std::string shown(std::int64_t ns) {
    return ns < 0 ? fmt::format("{} ns", ns) : format_duration(ns);
}

void refuse_not_positive(std::vector<std::string>& lines, int stage, const char* figure,
                         std::int64_t value) {
    if (value > 0)
        return;
    lines.push_back(fmt::format(
        "stage {} {} is {}: every computation a run times takes time; the run recorded none of "
        "this kind for the stage, or the fit took off more than was measured",
        stage, figure, shown(value)));
}

void refuse_part_above_whole(std::vector<std::string>& lines, int stage, const char* part,
                             std::int64_t part_ns, std::int64_t backward_ns, double part_low,
                             double backward_high) {
    const double bound =
        static_cast<double>(backward_ns) * std::max(part_low, 1.0) * std::max(backward_high, 1.0);
    if (backward_ns <= 0 || static_cast<double>(part_ns) <= bound)
        return;
    lines.push_back(fmt::format(
        "stage {} {} is {}, above its whole backward B {} (the spreads of {} and B allow up to "
        "{}): {} is a part of B and cannot take longer than all of it",
        stage, part, shown(part_ns), shown(backward_ns), part,
        shown(static_cast<std::int64_t>(bound)), part));
}

struct LayerTiming {
    int layer = 0;
    std::string name;
    std::int64_t median = 0;
    double spread = 1;  // high / low
};

double spread_of_range(std::int64_t low, std::int64_t high) {
    return low > 0 && high >= low ? static_cast<double>(high) / static_cast<double>(low) : 1.0;
}

double median_spread(std::vector<double> spreads) {
    if (spreads.empty())
        return 1;
    const auto middle = spreads.begin() + static_cast<std::ptrdiff_t>(spreads.size() / 2);
    std::nth_element(spreads.begin(), middle, spreads.end());
    return *middle;
}

// Layer figures by stage, then by shape (held, output and gradient bytes): the peer groups.
using Shape = std::tuple<std::int64_t, std::int64_t, std::int64_t>;
std::map<int, std::map<Shape, std::vector<LayerTiming>>> peer_groups(
    const std::vector<traces::ProfileRecord>& profile) {
    std::map<std::pair<int, int>, std::map<std::string, const traces::ProfileRecord*>> by_layer;
    for (const traces::ProfileRecord& row : profile)
        if (row.layer >= 0 && row.stage >= 0)
            by_layer[{row.stage, row.layer}][row.quantity] = &row;
    std::map<int, std::map<Shape, std::vector<LayerTiming>>> groups;
    for (const auto& [where, rows] : by_layer) {
        const auto value = [&](const char* quantity) {
            const auto found = rows.find(quantity);
            return found == rows.end() ? std::int64_t{-1} : found->second->median;
        };
        const auto forward = rows.find("F");
        if (forward == rows.end())
            continue;
        const traces::ProfileRecord& f = *forward->second;
        groups[where.first][{value("held_bytes"), value("output_bytes"), value("gradient_bytes")}]
            .push_back({where.second, f.layer_name, f.median, spread_of_range(f.low, f.high)});
    }
    return groups;
}

void refuse_slow_layer(std::vector<std::string>& lines, int stage, const LayerTiming& layer,
                       const std::vector<LayerTiming>& peers) {
    std::vector<std::int64_t> medians;
    std::vector<double> spreads;
    for (const LayerTiming& peer : peers)
        if (peer.layer != layer.layer) {
            medians.push_back(peer.median);
            spreads.push_back(peer.spread);
        }
    const std::int64_t reference = run_record::median_of(medians);
    if (reference <= 0)
        return;
    const double ratio = static_cast<double>(layer.median) / static_cast<double>(reference);
    const double explained = std::max(kSameWorkFactor, layer.spread * median_spread(spreads));
    if (ratio <= explained)
        return;
    lines.push_back(fmt::format(
        "stage {} layer {} ({}) F is {}, {:.1f}x the {} of its {} same-shaped peer{} on the stage "
        "({}); their 10-90 % ranges explain at most {:.1f}x: a slowed or mismeasured layer, "
        "profile the run again",
        stage, layer.layer, layer.name, shown(layer.median), ratio,
        medians.size() == 1 ? "F" : "median F", medians.size(), medians.size() == 1 ? "" : "s",
        shown(reference), explained));
}

}  // namespace

ImpossibleCalibration::ImpossibleCalibration(std::vector<std::string> figures, bool from_profile)
    : std::invalid_argument(joined_lines(figures)),
      figures_(std::move(figures)),
      from_profile_(from_profile) {}

std::vector<std::string> impossible_stage_figures(const std::vector<StageCost>& stages,
                                                  const std::vector<StageSpread>& spreads) {
    std::vector<std::string> lines;
    for (std::size_t index = 0; index < stages.size(); ++index) {
        const StageCost& stage = stages[index];
        const int number = static_cast<int>(index);
        const StageSpread spread = index < spreads.size() ? spreads[index] : StageSpread{};
        refuse_not_positive(lines, number, "F", stage.forward_ns);
        if (index > 0 || stage.input_ns < 0)
            refuse_not_positive(lines, number, "I", stage.input_ns);
        refuse_not_positive(lines, number, "W", stage.weight_ns);
        refuse_not_positive(lines, number, "B", stage.backward_ns());
        refuse_part_above_whole(lines, number, "I", stage.input_ns, stage.backward_ns(),
                                spread.input_low, spread.backward_high);
        refuse_part_above_whole(lines, number, "W", stage.weight_ns, stage.backward_ns(),
                                spread.weight_low, spread.backward_high);
    }
    return lines;
}

std::vector<std::string> layers_off_their_peers(const std::vector<traces::ProfileRecord>& profile) {
    std::vector<std::string> lines;
    for (const auto& [stage, shapes] : peer_groups(profile))
        for (const auto& [shape, layers] : shapes)
            if (layers.size() >= 2)
                for (const LayerTiming& layer : layers)
                    refuse_slow_layer(lines, stage, layer, layers);
    return lines;
}

double parallel_compute_share(const std::vector<ComputeSpans>& ranks) {
    std::vector<std::pair<std::int64_t, int>> edges;  // time, +1 as a span starts, -1 as it ends
    for (const ComputeSpans& spans : ranks)
        for (const auto& [start, end] : spans)
            if (end > start) {
                edges.emplace_back(start, 1);
                edges.emplace_back(end, -1);
            }
    std::sort(edges.begin(), edges.end());  // at one time, ends (-1) before starts
    std::int64_t computing = 0, side_by_side = 0;
    int running = 0;
    for (std::size_t at = 0; at < edges.size(); ++at) {
        running += edges[at].second;
        if (at + 1 == edges.size())
            break;
        const std::int64_t span = edges[at + 1].first - edges[at].first;
        computing += running >= 1 ? span : 0;
        side_by_side += running >= 2 ? span : 0;
    }
    return computing > 0 ? static_cast<double>(side_by_side) / static_cast<double>(computing) : 0;
}

double median_side_by_side(const std::vector<std::vector<traces::ActionRecord>>& runs) {
    std::vector<double> shares;
    for (const std::vector<traces::ActionRecord>& actions : runs) {
        std::map<int, ComputeSpans> by_rank;
        for (const traces::ActionRecord& action : actions)
            if (action.lane == traces::ActionLane::compute)
                by_rank[action.rank].emplace_back(action.start_ns, action.end_ns);
        std::vector<ComputeSpans> ranks;
        for (auto& [rank, spans] : by_rank)
            ranks.push_back(std::move(spans));
        shares.push_back(parallel_compute_share(ranks));
    }
    std::sort(shares.begin(), shares.end());
    return shares.empty() ? 0 : shares[shares.size() / 2];
}

double simulated_side_by_side(const SimulationResult& simulated) {
    std::vector<ComputeSpans> ranks;
    for (std::size_t rank = 0; rank + 1 < simulated.first_entry.size(); ++rank) {
        ComputeSpans& spans = ranks.emplace_back();
        for (std::size_t at = simulated.first_entry[rank]; at < simulated.first_entry[rank + 1];
             ++at)
            if (simulated.timeline[at].lane == Lane::compute)
                spans.emplace_back(simulated.timeline[at].start_ns, simulated.timeline[at].end_ns);
    }
    return parallel_compute_share(ranks);
}

}  // namespace pipelens::sim
