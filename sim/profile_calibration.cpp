// Fitting. The stage overhead comes from stages that are not last (their measured cost minus
// their layers'), the loss from the last stage (minus its layers and the overhead); an I overhead
// needs a stage that is neither first nor last, and is 0 without one. Medians over stages, as a
// profile on a busy machine can have one slow stage.
#include "sim/profile_calibration.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "engine/run_record/statistics.hpp"
#include "sim/layer_costs.hpp"

namespace pipelens::sim {
namespace {

struct StageFigures {
    std::map<std::string, std::int64_t> values;  // quantity -> median
    int first_layer = -1;
    int last_layer = -1;
};

std::int64_t figure(const StageFigures& stage, const std::string& quantity, int stage_index,
                    std::int64_t run_id) {
    const auto found = stage.values.find(quantity);
    if (found == stage.values.end())
        throw std::invalid_argument(fmt::format("run {}: the profile has no {} for stage {}",
                                                run_id, quantity, stage_index));
    return found->second;
}

LayerCosts layers_of(const std::vector<traces::ProfileRecord>& profile, std::int64_t run_id) {
    std::map<int, std::map<std::string, std::int64_t>> by_layer;
    std::map<int, std::string> names;
    for (const traces::ProfileRecord& row : profile)
        if (row.layer >= 0) {
            by_layer[row.layer][row.quantity] = row.median;
            names[row.layer] = row.layer_name;
        }
    LayerCosts layers;
    for (int layer = 0; layer < static_cast<int>(by_layer.size()); ++layer) {
        const auto found = by_layer.find(layer);
        if (found == by_layer.end())
            throw std::invalid_argument(
                fmt::format("run {}: the profile has no figures for layer {} (it has {} layers)",
                            run_id, layer, by_layer.size()));
        const auto value = [&](const std::string& quantity) {
            const auto entry = found->second.find(quantity);
            if (entry == found->second.end())
                throw std::invalid_argument(fmt::format(
                    "run {}: the profile has no {} for layer {}", run_id, quantity, layer));
            if (entry->second < 0)
                throw std::invalid_argument(
                    fmt::format("run {}: the profile's {} for layer {} is "
                                "negative ({}): the trace is damaged",
                                run_id, quantity, layer, entry->second));
            return entry->second;
        };
        layers.names.push_back(names[layer]);
        layers.forward_ns.push_back(value("F"));
        layers.input_ns.push_back(value("I"));
        layers.weight_ns.push_back(value("W"));
        layers.backward_ns.push_back(value("B"));
        layers.held_bytes.push_back(value("held_bytes"));
        layers.output_bytes.push_back(value("output_bytes"));
        layers.gradient_bytes.push_back(value("gradient_bytes"));
        layers.backward_peak_bytes.push_back(value("backward_peak_bytes"));
        // Profiles before 2026-11-27 did not measure it: none then, for every layer alike.
        if (found->second.contains("input_kept_bytes"))
            layers.input_kept_bytes.push_back(value("input_kept_bytes"));
    }
    if (layers.input_kept_bytes.size() != layers.names.size())
        layers.input_kept_bytes.clear();
    if (layers.names.empty())
        throw std::invalid_argument(
            fmt::format("run {}: the profile has no per-layer figures", run_id));
    return layers;
}

std::map<int, StageFigures> stages_of(const std::vector<traces::ProfileRecord>& profile) {
    std::map<int, StageFigures> stages;
    for (const traces::ProfileRecord& row : profile) {
        if (row.stage < 0)
            continue;
        StageFigures& stage = stages[row.stage];
        if (row.layer == traces::kProfileWholeStage) {
            stage.values[row.quantity] = row.median;
            continue;
        }
        if (row.layer < 0)
            continue;  // the loss, timed alone
        stage.first_layer =
            stage.first_layer < 0 ? row.layer : std::min(stage.first_layer, row.layer);
        stage.last_layer = std::max(stage.last_layer, row.layer);
    }
    return stages;
}

// Measured minus the layers' sum, per kind: F, I, W, B, held bytes.
StageExtra unexplained(const StageFigures& measured, const LayerStage& layers, int index,
                       std::int64_t run_id) {
    return {figure(measured, "F", index, run_id) - layers.cost.forward_ns,
            figure(measured, "I", index, run_id) - layers.cost.input_ns,
            figure(measured, "W", index, run_id) - layers.cost.weight_ns,
            figure(measured, "B", index, run_id) - layers.cost.backward_ns(),
            figure(measured, "held_bytes", index, run_id) - layers.held_bytes,
            figure(measured, "kept_bytes", index, run_id) - layers.kept_bytes};
}

// The loss as `run --profile` timed it alone (layer -2), if it did; every figure present and
// not negative, or an error naming the one that is not.
std::optional<StageExtra> loss_of(const std::vector<traces::ProfileRecord>& profile,
                                  std::int64_t run_id) {
    std::map<std::string, std::int64_t> values;
    for (const traces::ProfileRecord& row : profile)
        if (row.layer == traces::kProfileLoss)
            values[row.quantity] = row.median;
    if (values.empty())
        return std::nullopt;
    const auto value = [&](const std::string& quantity) {
        const auto found = values.find(quantity);
        if (found == values.end())
            throw std::invalid_argument(fmt::format(
                "run {}: the profile timed the loss but has no {} for it", run_id, quantity));
        if (found->second < 0)
            throw std::invalid_argument(
                fmt::format("run {}: the profile's {} for the loss is negative ({}): the trace is "
                            "damaged",
                            run_id, quantity, found->second));
        return found->second;
    };
    StageExtra loss{value("F"), value("I"),          value("W"),
                    value("B"), value("held_bytes"), value("kept_bytes")};
    if (values.contains("input_kept_bytes"))  // measured since 2026-11-27
        loss.input_kept_bytes = value("input_kept_bytes");
    return loss;
}

// What OVERLAP_F_B saves against F + B, as a share of the shorter part, pooled over the stages
// (a sum over sums: two stages have no middle to take). A profile that timed the saving in pairs
// (`OVERLAP_F_B_saved`, F, B and the overlap back to back) gives it directly; an older one only
// as the difference of medians taken at different moments.
double overlap_efficiency_of(const std::map<int, StageFigures>& stages, std::int64_t run_id) {
    double saved = 0, shorter = 0;
    for (const auto& [index, stage] : stages) {
        const std::int64_t forward = figure(stage, "F", index, run_id);
        const std::int64_t backward = figure(stage, "B", index, run_id);
        const auto paired = stage.values.find("OVERLAP_F_B_saved");
        saved += static_cast<double>(paired != stage.values.end()
                                         ? paired->second
                                         : forward + backward -
                                               figure(stage, "OVERLAP_F_B", index, run_id));
        shorter += static_cast<double>(std::min(forward, backward));
    }
    return shorter > 0 ? std::clamp(saved / shorter, 0.0, 1.0) : 0.0;
}

}  // namespace

std::vector<traces::ProfileRecord> median_profile(
    const std::vector<std::vector<traces::ProfileRecord>>& profiles) {
    using Key = std::tuple<int, int, int, std::string, int, std::int64_t>;
    const auto key_of = [](const traces::ProfileRecord& row) {
        return Key{row.rank, row.stage, row.layer, row.quantity, row.peer, row.bytes};
    };
    std::map<Key, std::vector<const traces::ProfileRecord*>> by_key;
    std::vector<traces::ProfileRecord> combined;
    for (const auto& profile : profiles)
        for (const traces::ProfileRecord& row : profile) {
            auto& same = by_key[key_of(row)];
            if (same.empty())
                combined.push_back(row);
            same.push_back(&row);
        }
    for (traces::ProfileRecord& row : combined) {
        const auto& same = by_key[key_of(row)];
        std::vector<std::int64_t> medians, lows, highs;
        row.samples = 0;
        for (const traces::ProfileRecord* each : same) {
            medians.push_back(each->median);
            lows.push_back(each->low);
            highs.push_back(each->high);
            row.samples += each->samples;
        }
        row.median = run_record::median_of(std::move(medians));
        row.low = run_record::median_of(std::move(lows));
        row.high = run_record::median_of(std::move(highs));
    }
    return combined;
}

LinkSpec fit_link(const std::vector<std::pair<std::int64_t, std::int64_t>>& points,
                  std::int64_t run_id, std::string* note) {
    std::set<std::int64_t> sizes;
    for (const auto& [bytes, ns] : points)
        sizes.insert(bytes);
    if (sizes.size() < 2)
        throw std::invalid_argument(fmt::format(
            "run {}: a link model needs one-way times of at least two message sizes, and the "
            "profile has {}: profile a run with more than one rank (`run --profile`)",
            run_id, sizes.empty() ? "none" : fmt::format("only {} bytes", *sizes.begin())));
    double mean_bytes = 0, mean_ns = 0;
    for (const auto& [bytes, ns] : points) {
        mean_bytes += static_cast<double>(bytes);
        mean_ns += static_cast<double>(ns);
    }
    mean_bytes /= static_cast<double>(points.size());
    mean_ns /= static_cast<double>(points.size());
    double covariance = 0, variance = 0, through_origin = 0, squares = 0;
    for (const auto& [bytes, ns] : points) {
        const double b = static_cast<double>(bytes), t = static_cast<double>(ns);
        covariance += (b - mean_bytes) * (t - mean_ns);
        variance += (b - mean_bytes) * (b - mean_bytes);
        through_origin += b * t;
        squares += b * b;
    }
    std::string figures;
    for (const auto& [bytes, ns] : points)
        figures += fmt::format("{}{} B in {} ns", figures.empty() ? "" : ", ", bytes, ns);
    const auto say = [&](std::string text) {
        if (note != nullptr)
            *note = std::move(text);
    };
    const double ns_per_byte = covariance / variance;
    const double latency = mean_ns - ns_per_byte * mean_bytes;
    if (!std::isfinite(ns_per_byte) || !std::isfinite(latency))
        throw std::invalid_argument(fmt::format(
            "run {}: the link fit is not a number (one-way times: {})", run_id, figures));
    if (ns_per_byte <= 0) {
        say(
            fmt::format("the one-way times do not grow with the message size ({}): the link is "
                        "their mean, with no bandwidth limit",
                        figures));
        return {std::llround(mean_ns), 0.0};
    }
    if (latency < 0) {
        const double slope = through_origin / squares;
        say(
            fmt::format("the line through the one-way times ({}) starts below zero: the link is "
                        "the line through the origin, no latency",
                        figures));
        return {0, 1.0 / slope};
    }
    say("");
    return {std::llround(latency), 1.0 / ns_per_byte};
}

std::vector<StageScale> anchor_profile_to_run(std::vector<traces::ProfileRecord>& profile,
                                              const std::vector<RunStageTimes>& run_stages) {
    // Per stage, what its items (its layers and, on the last stage, the loss) add up to.
    const std::size_t stages = run_stages.size();
    std::vector<std::int64_t> forward(stages), backward(stages), input(stages), weight(stages);
    for (const traces::ProfileRecord& row : profile) {
        if (row.stage < 0 || row.stage >= static_cast<int>(stages) ||
            row.layer == traces::kProfileWholeStage)
            continue;
        const auto stage = static_cast<std::size_t>(row.stage);
        if (row.quantity == "F")
            forward[stage] += row.median;
        else if (row.quantity == "B")
            backward[stage] += row.median;
        else if (row.quantity == "I")
            input[stage] += row.median;
        else if (row.quantity == "W")
            weight[stage] += row.median;
    }
    const auto ratio = [](std::int64_t run, std::int64_t items, double otherwise) {
        return run > 0 && items > 0 ? static_cast<double>(run) / static_cast<double>(items)
                                    : otherwise;
    };
    std::vector<StageScale> scales(stages);
    for (std::size_t stage = 0; stage < stages; ++stage) {
        const RunStageTimes& run = run_stages[stage];
        StageScale& scale = scales[stage];
        scale.forward = ratio(run.forward_ns, forward[stage], 1);
        scale.backward = ratio(run.backward_ns, backward[stage], 1);
        const bool split = stage > 0 && run.input_ns > 0 && run.weight_ns > 0;
        scale.input = split ? ratio(run.input_ns, input[stage], scale.backward) : scale.backward;
        scale.weight = split ? ratio(run.weight_ns, weight[stage], scale.backward) : scale.backward;
    }
    for (traces::ProfileRecord& row : profile) {
        if (row.stage < 0 || row.stage >= static_cast<int>(scales.size()))
            continue;
        const auto stage = static_cast<std::size_t>(row.stage);
        const StageScale& scale = scales[stage];
        double factor = 1;
        if (row.quantity == "F")
            factor = scale.forward;
        else if (row.quantity == "I")
            factor = scale.input;
        else if (row.quantity == "W")
            factor = scale.weight;
        else if (row.quantity == "B")
            factor = scale.backward;
        else if (row.quantity == "OVERLAP_F_B" || row.quantity == "OVERLAP_F_B_saved")
            factor = (scale.forward + scale.backward) / 2;
        else
            continue;
        const auto scaled = [&](std::int64_t value) {
            return static_cast<std::int64_t>(std::llround(static_cast<double>(value) * factor));
        };
        row.median = scaled(row.median);
        row.low = scaled(row.low);
        row.high = scaled(row.high);
        // The whole stage's F and B are what the step measured, many samples under the
        // step's own conditions.
        if (row.layer == traces::kProfileWholeStage && row.quantity == "F" &&
            run_stages[stage].forward_ns > 0)
            row.median = run_stages[stage].forward_ns;
        if (row.layer == traces::kProfileWholeStage && row.quantity == "B" &&
            run_stages[stage].backward_ns > 0)
            row.median = run_stages[stage].backward_ns;
        const bool split =
            stage > 0 && run_stages[stage].input_ns > 0 && run_stages[stage].weight_ns > 0;
        if (split && row.layer == traces::kProfileWholeStage && row.quantity == "I")
            row.median = run_stages[stage].input_ns;
        if (split && row.layer == traces::kProfileWholeStage && row.quantity == "W")
            row.median = run_stages[stage].weight_ns;
    }
    return scales;
}

// Every figure timed as a stage of its own (a layer, the loss) includes what running any stage
// costs once — detaching its inputs, the backend call, the checks — which a stage of k layers
// pays once, not k times. Per kind, a stage of n items (its layers, and the last stage's loss
// when timed alone) shows it as (sum of items - stage) / (n - 1); the median over stages is
// taken off every item (never below 0), and the overhead fit then finds it again, once per
// stage. I and W come from stages past the first (the first has no I, and its W is its B).
void remove_wrapper_cost(LayerCosts& layers, std::optional<StageExtra>& loss,
                         const std::map<int, StageFigures>& stages, int last, std::int64_t run_id) {
    std::array<std::vector<std::int64_t>, 4> shares;  // F, I, W, B
    for (const auto& [index, stage] : stages) {
        if (stage.first_layer < 0)
            continue;
        const int count = stage.last_layer - stage.first_layer + 1;
        const LayerStage summed = sum_of_layers(layers, {stage.first_layer, count}, index == 0);
        const bool with_loss = index == last && loss.has_value();
        const int items = count + (with_loss ? 1 : 0);
        if (items < 2)
            continue;
        const std::array<std::int64_t, 4> sums = {
            summed.cost.forward_ns + (with_loss ? loss->forward_ns : 0),
            summed.cost.input_ns + (with_loss ? loss->input_ns : 0),
            summed.cost.weight_ns + (with_loss ? loss->weight_ns : 0),
            summed.cost.backward_ns() + (with_loss ? loss->backward_ns : 0)};
        const std::array<const char*, 4> kinds = {"F", "I", "W", "B"};
        for (std::size_t kind = 0; kind < kinds.size(); ++kind) {
            if (index == 0 && (kind == 1 || kind == 2))
                continue;
            shares[kind].push_back((sums[kind] - figure(stage, kinds[kind], index, run_id)) /
                                   (items - 1));
        }
    }
    std::array<std::int64_t, 4> wrapper{};
    for (std::size_t kind = 0; kind < wrapper.size(); ++kind)
        wrapper[kind] = std::max<std::int64_t>(run_record::median_of(shares[kind]), 0);
    const auto take_off = [](std::int64_t& value, std::int64_t cost) {
        value = std::max<std::int64_t>(value - cost, 0);
    };
    for (std::size_t layer = 0; layer < layers.names.size(); ++layer) {
        take_off(layers.forward_ns[layer], wrapper[0]);
        take_off(layers.input_ns[layer], wrapper[1]);
        take_off(layers.weight_ns[layer], wrapper[2]);
        take_off(layers.backward_ns[layer], wrapper[3]);
    }
    if (loss) {
        take_off(loss->forward_ns, wrapper[0]);
        take_off(loss->input_ns, wrapper[1]);
        take_off(loss->weight_ns, wrapper[2]);
        take_off(loss->backward_ns, wrapper[3]);
    }
}

ProfileCalibration calibrate_from_profile(const std::vector<traces::ProfileRecord>& profile,
                                          std::int64_t run_id) {
    ProfileCalibration calibration;
    LayerCosts& layers = calibration.layers;
    layers = layers_of(profile, run_id);
    const std::map<int, StageFigures> stages = stages_of(profile);
    const int last = stages.empty() ? -1 : stages.rbegin()->first;
    std::optional<StageExtra> timed_loss = loss_of(profile, run_id);
    remove_wrapper_cost(layers, timed_loss, stages, last, run_id);
    std::vector<std::int64_t> forward, input, weight, backward;
    std::map<int, StageExtra> leftover;
    for (const auto& [index, stage] : stages) {
        if (stage.first_layer < 0)
            throw std::invalid_argument(
                fmt::format("run {}: the profile has no layers for stage {}", run_id, index));
        const LayerStage summed = sum_of_layers(
            layers, {stage.first_layer, stage.last_layer - stage.first_layer + 1}, index == 0);
        leftover[index] = unexplained(stage, summed, index, run_id);
        if (index == last)
            continue;
        forward.push_back(leftover[index].forward_ns);
        backward.push_back(leftover[index].backward_ns);
        // I and W overheads from stages past the first, as the wrapper cost: the first has no I,
        // and its W is its B by rule, so its timed W against its layers' B says nothing of W
        // (taken from it, a noisy whole-stage W once put every stage's W at 3x its B).
        if (index != 0) {
            input.push_back(leftover[index].input_ns);
            weight.push_back(leftover[index].weight_ns);
        }
    }
    const auto positive_median = [](const std::vector<std::int64_t>& values) {
        return std::max<std::int64_t>(run_record::median_of(values), 0);
    };
    StageExtra& overhead = layers.stage_overhead;
    overhead = {positive_median(forward),
                positive_median(input),
                positive_median(weight),
                positive_median(backward),
                0,
                0};
    if (timed_loss) {
        layers.loss = *timed_loss;
    } else if (last >= 0) {  // a profile without the loss timed alone
        StageExtra& rest = leftover[last];
        rest.kept_bytes -= layers.output_bytes.back();  // the kept model output has its rule
        layers.loss = {std::max<std::int64_t>(rest.forward_ns - overhead.forward_ns, 0),
                       std::max<std::int64_t>(rest.input_ns - overhead.input_ns, 0),
                       std::max<std::int64_t>(rest.weight_ns - overhead.weight_ns, 0),
                       std::max<std::int64_t>(rest.backward_ns - overhead.backward_ns, 0),
                       std::max<std::int64_t>(rest.held_bytes, 0),
                       std::max<std::int64_t>(rest.kept_bytes, 0)};
    }
    calibration.overlap_efficiency = overlap_efficiency_of(stages, run_id);
    std::vector<std::pair<std::int64_t, std::int64_t>> points;
    std::set<std::int64_t> sizes;
    for (const traces::ProfileRecord& row : profile)
        if (row.quantity == "link") {
            // The 10th percentile: a descheduled rank only ever adds to a transfer's time.
            points.emplace_back(row.bytes, row.low);
            sizes.insert(row.bytes);
        }
    if (points.empty()) {
        // A one-rank run sends nothing between ranks, so there is nothing to fit and nothing the
        // link would time in the same layout.
        calibration.link = {0, 0.0};
        calibration.link_fit_note =
            "the profile timed no transfer between ranks (a one-rank run): the link is left "
            "free (no latency, no bandwidth limit); calibrate a run with more ranks to predict "
            "transfers";
    } else {
        calibration.link = fit_link(points, run_id, &calibration.link_fit_note);
    }
    calibration.link_sizes = static_cast<int>(sizes.size());
    return calibration;
}

}  // namespace pipelens::sim
