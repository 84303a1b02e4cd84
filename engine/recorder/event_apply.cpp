// What each recorded event does to the state: the apply() of every kind in event_table.hpp, and
// the schedule and buffer plumbing they share. Each apply() checks its arguments before it
// touches the state, so an event that throws leaves the state as it was. Calls that make nested
// events (split_model, plan_buffers) hand each to EventTarget::record, which records it under
// the call and applies it.
#include <array>

#include <fmt/format.h>

#include "engine/recorder/event_table.hpp"
#include "engine/schedule/action_facts.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "engine/schedule/schedule_csv.hpp"
#include "engine/schedule/schedule_size.hpp"
#include "engine/schedule/static_check.hpp"
#include "engine/stage_plan/backend_choice.hpp"
#include "engine/stage_plan/stage_split.hpp"

namespace pipelens::recorder {
namespace {

StageState& stage_at(PipelineState& state, int stage, std::string_view call) {
    if (stage < 0 || stage >= static_cast<int>(state.stages.size()))
        throw std::invalid_argument(
            fmt::format("{}: there is no stage {} (the schedule has {} stages)", call, stage,
                        state.stages.size()));
    return state.stages[stage];
}

void use_schedule(PipelineState& pipeline, Schedule schedule, const std::string& source) {
    ScheduleState& state = pipeline.schedule;
    state.source = source;
    state.kind = schedule.name;
    state.pp = schedule.rank_count;
    state.v = schedule.stages_per_rank;
    state.m = schedule.microbatch_count;
    state.stage_count = schedule.stage_count;
    state.stage_to_rank = schedule.stage_to_rank;
    state.lowered = false;
    state.receives_deferred = false;
    state.zero_bubble_inputs.clear();
    pipeline.stages.clear();
    pipeline.buffers.clear();
    for (int index = 0; index < schedule.stage_count; ++index) {
        StageState stage;
        stage.index = index;
        stage.rank = schedule.stage_to_rank[index];
        pipeline.stages.push_back(std::move(stage));
    }
    state.schedule = std::make_shared<const Schedule>(std::move(schedule));
}

ActionKind transfer_kind(BufferDirection direction) {
    switch (direction) {
        case BufferDirection::recv_forward:
            return ActionKind::recv_forward;
        case BufferDirection::send_forward:
            return ActionKind::send_forward;
        case BufferDirection::recv_backward:
            return ActionKind::recv_backward;
        case BufferDirection::send_backward:
            return ActionKind::send_backward;
    }
    return ActionKind::forward;
}

// Which (stage, direction) pairs the lowered schedule communicates in, on the state's ranks.
std::vector<std::array<bool, 4>> buffers_used(const PipelineState& state) {
    const Schedule& schedule = *state.schedule.schedule;
    std::vector<std::array<bool, 4>> used(state.stages.size());
    for (int rank = 0; rank < schedule.rank_count; ++rank) {
        if (state.rank >= 0 && rank != state.rank)
            continue;
        for (const Action& action : schedule.ranks[rank])
            for (int direction = 0; direction < 4; ++direction)
                if (action.kind == transfer_kind(static_cast<BufferDirection>(direction)))
                    used.at(action.stage)[direction] = true;
    }
    return used;
}

// The buffer of `stage` in `direction`: sized by the stage's metadata, or by the sending
// stage's costs in a simulation (which knows sizes only).
BufferPlan plan_for(const PipelineState& state, const StageState& stage,
                    BufferDirection direction) {
    BufferPlan plan;
    plan.stage = stage.index;
    plan.direction = direction;
    plan.peer_stage = transfer_peer_stage(transfer_kind(direction), stage.index);
    plan.peer_rank = state.schedule.stage_to_rank.at(plan.peer_stage);
    plan.metas = expected_buffer_metas(stage, direction);
    for (const TensorMeta& meta : plan.metas)
        plan.bytes += meta.byte_count();
    if (plan.metas.empty() && stage.costs) {
        const StageState& sender =
            faces_previous_stage(direction) ? state.stages.at(plan.peer_stage) : stage;
        plan.bytes = sender.costs ? sender.costs->activation_bytes : 0;
    }
    return plan;
}

}  // namespace

void ConstructState::apply(EventTarget& target) const {
    target.mutable_state().rank = rank;
    target.mutable_state().run_kind = run_kind;
}

void ConfigureTransport::apply(EventTarget& target) const {
    if (transport.world_size < 1)
        throw std::invalid_argument(fmt::format(
            "configure_transport: world size {} (it needs at least 1 rank)", transport.world_size));
    target.mutable_state().transport = transport;
}

void ChooseSchedule::apply(EventTarget& target) const {
    check_schedule_fits(shape, available_memory_bytes());  // before any allocation
    use_schedule(target.mutable_state(), generate_schedule(shape), "generated");
    if (shape.kind == ScheduleKind::zero_bubble_auto) {
        const ZeroBubbleInputs& in = shape.zero_bubble;
        target.mutable_state().schedule.zero_bubble_inputs =
            fmt::format("f={}ns i={}ns w={}ns comm={}ns max_activations={}", in.forward_ns,
                        in.input_ns, in.weight_ns, in.communication_ns, in.max_activations);
    }
}

void LoadScheduleCsv::apply(EventTarget& target) const {
    use_schedule(target.mutable_state(), parse_schedule_csv(csv, source), source);
}

void LowerSchedule::apply(EventTarget& target) const {
    ScheduleState& state = target.mutable_state().schedule;
    if (!state.schedule)
        throw std::invalid_argument("lower_schedule: no schedule was chosen yet");
    const bool already_lowered = state.schedule->has_communication;
    if (already_lowered) {
        require_valid_structure(*state.schedule);  // a CSV written with its SEND/RECV
    } else {
        LoweringOptions options;
        options.keep_fsdp_actions = keep_fsdp_actions;
        options.defer_receives = defer_recv;
        state.schedule = std::make_shared<const Schedule>(lower(*state.schedule, options));
    }
    state.lowered = true;
    state.receives_deferred = defer_recv && !already_lowered;
}

void SetCostModel::apply(EventTarget& target) const {
    target.mutable_state().costs = costs;
    target.mutable_state().costs.known = true;
}

void SetStageCosts::apply(EventTarget& target) const {
    stage_at(target.mutable_state(), stage, kName).costs = costs;
}

void SplitModel::apply(EventTarget& target) const {
    PipelineState& state = target.mutable_state();
    std::vector<runtime::SplitPoint> points;
    for (const std::string& text : split_points)
        points.push_back(runtime::parse_split_point(text));
    const auto stages =
        runtime::split_layers(layers, static_cast<int>(state.stages.size()), points);
    state.model = model;
    state.split_points = split_points;
    for (int index = 0; index < static_cast<int>(stages.size()); ++index) {
        const auto first = layers.begin() + stages[index].first;
        AssignLayers assign;
        assign.stage = index;
        assign.layers = {first, first + stages[index].count};
        assign.split = points.empty() ? fmt::format("even split: {} layers over {} stages",
                                                    layers.size(), stages.size())
                       : index == 0   ? std::string("model start")
                                      : "starts at " + layers[stages[index].first];
        target.record(std::move(assign));
    }
}

void AssignLayers::apply(EventTarget& target) const {
    StageState& assigned = stage_at(target.mutable_state(), stage, kName);
    assigned.layers = layers;
    assigned.split = split;
}

void SetStageMeta::apply(EventTarget& target) const {
    StageState& described = stage_at(target.mutable_state(), stage, kName);
    described.inputs = inputs;
    described.outputs = outputs;
}

void PlanBuffers::apply(EventTarget& target) const {
    PipelineState& state = target.mutable_state();
    if (!state.schedule.schedule || !state.schedule.lowered)
        throw std::invalid_argument("plan_buffers: the schedule is not lowered yet");
    const std::vector<std::array<bool, 4>> used = buffers_used(state);
    state.buffers.clear();
    for (std::size_t index = 0; index < state.stages.size(); ++index) {
        if (!state.holds(static_cast<int>(index)))
            continue;
        for (int direction = 0; direction < 4; ++direction)
            if (used[index][direction])
                target.record(PlanBuffer{
                    plan_for(state, state.stages[index], static_cast<BufferDirection>(direction))});
    }
}

void PlanBuffer::apply(EventTarget& target) const {
    target.mutable_state().buffers.push_back(plan);
}

void SetStageBackend::apply(EventTarget& target) const {
    if (!runtime::is_stage_backend(backend))
        throw std::invalid_argument(fmt::format("set_stage_backend: unknown backend '{}' (use {})",
                                                backend,
                                                fmt::join(runtime::stage_backend_names(), ", ")));
    stage_at(target.mutable_state(), stage, kName).backend = backend;
}

// The cost to 0.1 ns: finer than any cost model's meaning, and the text every trace's snapshot
// holds (a change of it would make older traces' replays differ from their snapshots).
void DecideSharding::apply(EventTarget& target) const {
    target.mutable_state().sharding.push_back(
        fmt::format("{}: {} ({:.4f} us)", op, strategy, cost_us));
}

}  // namespace pipelens::recorder
