// The state's comparable form and its consistency rules. Fields print every stage and every
// buffer direction, planned or not, so two ranks' states always have the same field set and a
// difference shows as a value ("none" against a plan) rather than as a missing field.
#include "engine/recorder/pipeline_state.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace pipelens::recorder {
namespace {

constexpr BufferDirection kDirections[] = {
    BufferDirection::recv_forward, BufferDirection::send_forward, BufferDirection::recv_backward,
    BufferDirection::send_backward};

std::string meta_text(const TensorMeta& meta) {
    std::string text = to_string(meta);
    if (meta.stride != contiguous_stride(meta.shape))
        text += fmt::format(" stride=({})", fmt::join(meta.stride, ", "));
    return text;
}

std::string metas_text(const std::optional<std::vector<TensorMeta>>& metas) {
    if (!metas)
        return "unknown";
    std::vector<std::string> parts;
    for (const TensorMeta& meta : *metas)
        parts.push_back(meta_text(meta));
    return fmt::format("({})", fmt::join(parts, ", "));
}

std::string requires_grad_text(const std::optional<std::vector<TensorMeta>>& metas) {
    if (!metas)
        return "unknown";
    std::vector<std::string> parts;
    for (const TensorMeta& meta : *metas)
        parts.push_back(meta.requires_grad ? "true" : "false");
    return fmt::format("({})", fmt::join(parts, ", "));
}

// FNV-1a over the rank's action texts: equal lists give equal prints, and a single changed
// action shows without printing millions of actions.
std::string actions_text(const Schedule& schedule, int rank) {
    std::uint64_t hash = 1469598103934665603ull;
    std::string text;
    for (const Action& action : schedule.ranks[rank]) {
        text.clear();
        append_action_text(text, action, schedule.parts);
        text += ';';
        for (char c : text) {
            hash ^= static_cast<unsigned char>(c);
            hash *= 1099511628211ull;
        }
    }
    return fmt::format("{} actions, fingerprint {:016x}", schedule.ranks[rank].size(), hash);
}

std::string costs_text(const std::optional<StageCostState>& costs) {
    if (!costs)
        return "unknown";
    std::string text = fmt::format("F={}ns I={}ns W={}ns B={}ns sends={}B holds={}B",
                                   costs->forward_ns, costs->input_ns, costs->weight_ns,
                                   costs->backward_ns, costs->activation_bytes, costs->held_bytes);
    // Only where set, so states recorded before these existed print as they did.
    if (costs->gradient_bytes != 0 || costs->backward_peak_bytes != 0 || costs->kept_bytes != 0)
        text += fmt::format(" gradients={}B backward_peak={}B kept={}B", costs->gradient_bytes,
                            costs->backward_peak_bytes, costs->kept_bytes);
    if (costs->input_kept_bytes != 0)
        text += fmt::format(" input_kept={}B", costs->input_kept_bytes);
    if (costs->forward_arithmetic_ns != 0 || costs->input_arithmetic_ns != 0 ||
        costs->weight_arithmetic_ns != 0)
        text += fmt::format(" arithmetic F={}ns I={}ns W={}ns", costs->forward_arithmetic_ns,
                            costs->input_arithmetic_ns, costs->weight_arithmetic_ns);
    return text;
}

std::string buffer_text(const BufferPlan* plan) {
    if (plan == nullptr)
        return "none";
    const bool receives = plan->direction == BufferDirection::recv_forward ||
                          plan->direction == BufferDirection::recv_backward;
    std::string text = fmt::format("{} stage {} on rank {}: ", receives ? "from" : "to",
                                   plan->peer_stage, plan->peer_rank);
    if (!plan->metas.empty())
        text += metas_text(plan->metas) + " ";
    return text + fmt::format("{}B", plan->bytes);
}

void add(std::vector<StateField>& fields, std::string name, std::string value) {
    fields.push_back({std::move(name), std::move(value)});
}

}  // namespace

std::string_view buffer_direction_name(BufferDirection direction) {
    switch (direction) {
        case BufferDirection::recv_forward:
            return "recv_forward";
        case BufferDirection::send_forward:
            return "send_forward";
        case BufferDirection::recv_backward:
            return "recv_backward";
        case BufferDirection::send_backward:
            return "send_backward";
    }
    return "?";
}

BufferDirection parse_buffer_direction(std::string_view name) {
    for (BufferDirection direction : kDirections)
        if (buffer_direction_name(direction) == name)
            return direction;
    throw std::invalid_argument(
        fmt::format("unknown buffer direction '{}' (recv_forward, send_forward, recv_backward, "
                    "send_backward)",
                    name));
}

std::vector<TensorMeta> expected_buffer_metas(const StageState& stage, BufferDirection direction) {
    const auto& metas = faces_previous_stage(direction) ? stage.inputs : stage.outputs;
    if (!metas)
        return {};
    if (direction == BufferDirection::recv_forward || direction == BufferDirection::send_forward)
        return *metas;
    std::vector<TensorMeta> gradients;
    for (const TensorMeta& meta : *metas)
        if (meta.requires_grad)
            gradients.push_back(meta);
    return gradients;
}

bool PipelineState::holds(int stage) const {
    return rank < 0 ||
           (stage >= 0 && stage < static_cast<int>(stages.size()) && stages[stage].rank == rank);
}

std::vector<StateField> state_fields(const PipelineState& state) {
    std::vector<StateField> fields;
    add(fields, "transport.kind", state.transport.kind);
    add(fields, "transport.world_size", std::to_string(state.transport.world_size));
    add(fields, "transport.timeout_ns", std::to_string(state.transport.timeout_ns));
    add(fields, "transport.device", state.transport.device);
    // Only where a run chose it: a float32 run lists the fields it always listed.
    if (!state.transport.dtype.empty())
        add(fields, "transport.dtype", state.transport.dtype);

    const ScheduleState& schedule = state.schedule;
    add(fields, "schedule.source", schedule.source);
    add(fields, "schedule.kind", schedule.kind);
    add(fields, "schedule.shape",
        fmt::format("pp={} v={} m={} stages={}", schedule.pp, schedule.v, schedule.m,
                    schedule.stage_count));
    add(fields, "schedule.stage_to_rank",
        fmt::format("({})", fmt::join(schedule.stage_to_rank, ", ")));
    add(fields, "schedule.lowered", schedule.lowered ? "true" : "false");
    // Only where set, so states recorded before these existed compare as they did.
    if (schedule.receives_deferred)
        add(fields, "schedule.receives_deferred", "true");
    if (!schedule.zero_bubble_inputs.empty())
        add(fields, "schedule.zero_bubble_inputs", schedule.zero_bubble_inputs);
    if (schedule.schedule)
        for (int rank = 0; rank < schedule.schedule->rank_count; ++rank)
            add(fields, fmt::format("schedule.rank[{}]", rank),
                actions_text(*schedule.schedule, rank));

    const CostModelState& costs = state.costs;
    add(fields, "costs.links",
        costs.known
            ? fmt::format("intra-host {}ns {}GB/s, inter-host {}ns {}GB/s, {} ranks per host",
                          costs.intra_host_latency_ns, costs.intra_host_gb_per_s,
                          costs.inter_host_latency_ns, costs.inter_host_gb_per_s,
                          costs.ranks_per_host)
            : "unknown");
    if (costs.rendezvous)
        add(fields, "costs.rendezvous", "true");
    if (costs.send_issue_ns > 0)
        add(fields, "costs.send_issue", fmt::format("{}ns", costs.send_issue_ns));
    if (costs.posted_receive_buffers)
        add(fields, "costs.posted_receive_buffers", "true");
    if (!costs.rank_slowdown.empty())
        add(fields, "costs.rank_slowdown", fmt::format("{}", fmt::join(costs.rank_slowdown, ", ")));
    add(fields, "costs.overlap_efficiency",
        costs.known ? fmt::format("{}", costs.overlap_efficiency) : "unknown");
    add(fields, "costs.fsdp",
        costs.known ? fmt::format("UNSHARD={}ns RESHARD={}ns REDUCE_GRAD={}ns", costs.unshard_ns,
                                  costs.reshard_ns, costs.reduce_grad_ns)
                    : "unknown");

    add(fields, "model.name", state.model);
    add(fields, "model.split_points", fmt::format("({})", fmt::join(state.split_points, ", ")));
    for (const StageState& stage : state.stages) {
        const std::string prefix = fmt::format("stage[{}].", stage.index);
        add(fields, prefix + "rank", std::to_string(stage.rank));
        add(fields, prefix + "layers", fmt::format("({})", fmt::join(stage.layers, ", ")));
        add(fields, prefix + "split", stage.split.empty() ? "none" : stage.split);
        add(fields, prefix + "inputs_meta", metas_text(stage.inputs));
        add(fields, prefix + "outputs_meta", metas_text(stage.outputs));
        add(fields, prefix + "inputs_requires_grad", requires_grad_text(stage.inputs));
        add(fields, prefix + "outputs_requires_grad", requires_grad_text(stage.outputs));
        add(fields, prefix + "backend", stage.backend);
        add(fields, prefix + "costs", costs_text(stage.costs));
        for (BufferDirection direction : kDirections) {
            const auto found = std::find_if(
                state.buffers.begin(), state.buffers.end(), [&](const BufferPlan& plan) {
                    return plan.stage == stage.index && plan.direction == direction;
                });
            add(fields, prefix + std::string(buffer_direction_name(direction)),
                buffer_text(found == state.buffers.end() ? nullptr : &*found));
        }
    }
    for (std::size_t index = 0; index < state.sharding.size(); ++index)
        add(fields, fmt::format("sharding[{}]", index), state.sharding[index]);
    return fields;
}

std::vector<std::string> validate_state(const PipelineState& state) {
    std::vector<std::string> problems;
    const auto& stages = state.stages;
    if (state.schedule.stage_count != static_cast<int>(stages.size()))
        problems.push_back(fmt::format("the schedule has {} stages but the state has {}",
                                       state.schedule.stage_count, stages.size()));
    for (std::size_t index = 0; index + 1 < stages.size(); ++index) {
        const StageState& producer = stages[index];
        const StageState& consumer = stages[index + 1];
        if (!producer.outputs || !consumer.inputs)
            continue;
        const auto mismatch =
            check_tensors_metadata(fmt::format("stage[{}].inputs_meta", consumer.index),
                                   *consumer.inputs, *producer.outputs);
        if (mismatch)
            problems.push_back(
                fmt::format("stage[{}].outputs_meta {} does not match stage[{}].inputs_meta {}: {}",
                            producer.index, metas_text(producer.outputs), consumer.index,
                            metas_text(consumer.inputs), mismatch->message));
    }
    // A buffer planned with no metadata for a stage that has some was planned before the stage
    // knew its tensors: it holds none of them (0 bytes), as one planned for other tensors does.
    for (const BufferPlan& plan : state.buffers) {
        if (plan.stage < 0 || plan.stage >= static_cast<int>(stages.size()))
            continue;
        const std::vector<TensorMeta> expected =
            expected_buffer_metas(stages[plan.stage], plan.direction);
        if (!expected.empty() && expected != plan.metas)
            problems.push_back(fmt::format("stage[{}].{} was planned for {} but the stage needs {}",
                                           plan.stage, buffer_direction_name(plan.direction),
                                           metas_text(plan.metas), metas_text(expected)));
    }
    return problems;
}

}  // namespace pipelens::recorder
