// Charging actions: compute durations per stage, link transfer times, overlap.
#include "sim/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace pipelens::sim {

namespace {

std::overflow_error too_long(const char* what, long double ns) {
    return std::overflow_error(fmt::format(
        "{} would take {:g} ns, more than 2^62 ns (about 146 years): a cost, latency or "
        "bandwidth is out of any machine's range",
        what, ns));
}

}  // namespace

std::int64_t ceil_ns(double ns, const char* what) {
    if (!(ns < static_cast<double>(kLatestSimulatedNs)))
        throw too_long(what, ns);
    return static_cast<std::int64_t>(std::ceil(ns));
}

std::int64_t ceil_quotient_ns(double numerator, double denominator, const char* what) {
    const double ns = numerator / denominator;
    if (std::isinf(ns) && std::isfinite(numerator) && denominator != 0)
        throw too_long(what, static_cast<long double>(numerator) / denominator);
    return ceil_ns(ns, what);
}

std::int64_t Link::transfer_ns(std::int64_t bytes) const {
    if (bytes_per_ns <= 0 || bytes == 0)
        return latency_ns;
    return ceil_ns(
        static_cast<double>(latency_ns) + std::ceil(static_cast<double>(bytes) / bytes_per_ns),
        "a transfer");
}

const StageCost& CostModel::stage(int stage_index) const {
    if (stages.empty())
        throw std::invalid_argument("cost model has no stage costs");
    if (stages.size() == 1)
        return stages.front();
    if (stage_index < 0 || stage_index >= static_cast<int>(stages.size()))
        throw std::invalid_argument("cost model has no cost for stage " +
                                    std::to_string(stage_index));
    return stages[stage_index];
}

std::int64_t CostModel::compute_ns(const Action& leaf) const {
    switch (leaf.kind) {
        case ActionKind::forward:
            return stage(leaf.stage).forward_ns;
        case ActionKind::backward_input:
            return stage(leaf.stage).input_ns;
        case ActionKind::backward_weight:
            return stage(leaf.stage).weight_ns;
        case ActionKind::full_backward:
            return stage(leaf.stage).backward_ns();
        case ActionKind::unshard:
            return unshard_ns;
        case ActionKind::reshard:
            return reshard_ns;
        case ActionKind::reduce_grad:
            return reduce_grad_ns;
        default:
            return 0;
    }
}

std::int64_t CostModel::on_rank(int rank, std::int64_t compute_ns) const {
    if (rank < 0 || rank >= static_cast<int>(rank_slowdown.size()))
        return compute_ns;
    return ceil_ns(std::round(static_cast<double>(compute_ns) * rank_slowdown[rank]),
                   "a computation on a slowed rank");
}

Work CostModel::work_of(const Action& leaf) const {
    const std::int64_t ns = compute_ns(leaf);
    switch (leaf.kind) {
        case ActionKind::forward:
            return {ns, std::min(ns, stage(leaf.stage).forward_arithmetic_ns)};
        case ActionKind::backward_input:
            return {ns, std::min(ns, stage(leaf.stage).input_arithmetic_ns)};
        case ActionKind::backward_weight:
            return {ns, std::min(ns, stage(leaf.stage).weight_arithmetic_ns)};
        case ActionKind::full_backward:
            return {ns, stage(leaf.stage).backward_arithmetic_ns()};
        default:
            return {ns, 0};
    }
}

Work CostModel::overlap(const Work& first, const Work& second) const {
    const std::int64_t total = first.ns + second.ns;
    const std::int64_t arithmetic = first.arithmetic_ns + second.arithmetic_ns;
    const std::int64_t hideable = std::min(std::min(first.ns, second.ns), total - arithmetic);
    const double hidden = std::clamp(overlap_efficiency, 0.0, 1.0) *
                          static_cast<double>(std::max<std::int64_t>(0, hideable));
    return {total - static_cast<std::int64_t>(std::llround(hidden)), arithmetic};
}

namespace {

std::int64_t per_stage_value(const std::vector<std::int64_t>& values, int stage_index) {
    if (values.empty())
        return 0;
    if (values.size() == 1)
        return values.front();
    return stage_index >= 0 && stage_index < static_cast<int>(values.size()) ? values[stage_index]
                                                                             : 0;
}

}  // namespace

std::int64_t CostModel::bytes_of(int stage_index) const {
    return per_stage_value(activation_bytes, stage_index);
}

std::int64_t CostModel::message_bytes(const Action& communication) const {
    switch (communication.kind) {
        case ActionKind::send_forward:
        case ActionKind::recv_backward:
            return bytes_of(communication.stage);
        case ActionKind::recv_forward:
        case ActionKind::send_backward:
            return bytes_of(communication.stage - 1);
        default:
            return 0;
    }
}

std::int64_t CostModel::held_bytes_of(int stage_index) const {
    return held_activation_bytes.empty() ? bytes_of(stage_index)
                                         : per_stage_value(held_activation_bytes, stage_index);
}

std::int64_t CostModel::gradient_bytes_of(int stage_index) const {
    return gradient_bytes.empty() ? 0 : per_stage_value(gradient_bytes, stage_index);
}

std::int64_t CostModel::backward_peak_bytes_of(int stage_index) const {
    return backward_peak_bytes.empty() ? 0 : per_stage_value(backward_peak_bytes, stage_index);
}

std::int64_t CostModel::kept_bytes_of(int stage_index) const {
    return kept_bytes.empty() ? 0 : per_stage_value(kept_bytes, stage_index);
}

std::int64_t CostModel::input_kept_bytes_of(int stage_index) const {
    return input_kept_bytes.empty() ? 0 : per_stage_value(input_kept_bytes, stage_index);
}

bool CostModel::sizes_gradients() const {
    const auto positive = [](std::int64_t bytes) { return bytes > 0; };
    return std::any_of(gradient_bytes.begin(), gradient_bytes.end(), positive) ||
           std::any_of(backward_peak_bytes.begin(), backward_peak_bytes.end(), positive);
}

std::int64_t CostModel::transfer_ns(int from_rank, int to_rank, std::int64_t bytes) const {
    const int per_host = std::max(1, ranks_per_host);
    const Link& link = from_rank / per_host == to_rank / per_host ? intra_host : inter_host;
    return link.transfer_ns(bytes);
}

}  // namespace pipelens::sim
