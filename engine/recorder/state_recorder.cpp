// The recorded calls. Each one checks its arguments before it touches the state, so a call
// that throws leaves the state as it was, and the event it would have been is dropped.
#include "engine/recorder/state_recorder.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "engine/runtime/backend_choice.hpp"
#include "engine/runtime/stage_split.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "engine/schedule/schedule_csv.hpp"
#include "engine/schedule/static_check.hpp"

namespace pipelens::recorder {
namespace {

constexpr const char* kConstructor = "PipelineState";

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

// The peer of a stage's buffer: the previous stage for forward receives and backward sends,
// the next one otherwise.
int peer_stage_of(int stage, BufferDirection direction) {
    return faces_previous_stage(direction) ? stage - 1 : stage + 1;
}

}  // namespace

template <class Apply>
void StateRecorder::record(std::string name, nlohmann::json arguments, Apply&& apply) {
    Event event;
    event.sequence = static_cast<std::int64_t>(events_.size());
    event.rank = state_.rank;
    if (!open_.empty())
        event.parent = open_.back();
    event.name = std::move(name);
    event.arguments = std::move(arguments);
    if (clock_)
        event.time_ns = clock_();
    const std::size_t position = events_.size();
    open_.push_back(event.sequence);
    events_.push_back(std::move(event));  // arguments can be a whole CSV schedule: no copy
    try {
        apply();
    } catch (const std::exception& error) {
        open_.pop_back();
        Event failed = std::move(events_[position]);
        events_.resize(position);  // the event and whatever it made
        if (open_.empty())
            failures_.push_back({std::move(failed), error.what()});
        throw;
    }
    open_.pop_back();
}

StateRecorder::StateRecorder(int rank, std::string run_kind, EventClock clock)
    : clock_(std::move(clock)) {
    state_.rank = rank;  // identity, not state: every event of the stream carries it
    record(kConstructor, {{"rank", rank}, {"run_kind", run_kind}}, [&] {
        state_.rank = rank;
        state_.run_kind = run_kind;
    });
}

StateRecorder StateRecorder::from_constructor(const Event& constructor) {
    if (constructor.name != kConstructor || constructor.sequence != 0)
        throw std::invalid_argument(fmt::format("a replay starts from event 0, {}", kConstructor));
    try {
        return StateRecorder(constructor.arguments.at("rank").get<int>(),
                             constructor.arguments.at("run_kind").get<std::string>());
    } catch (const nlohmann::json::exception& error) {
        throw std::invalid_argument(fmt::format("malformed arguments: {}", error.what()));
    }
}

StageState& StateRecorder::stage_at(int stage, const char* call) {
    if (stage < 0 || stage >= static_cast<int>(state_.stages.size()))
        throw std::invalid_argument(
            fmt::format("{}: there is no stage {} (the schedule has {} stages)", call, stage,
                        state_.stages.size()));
    return state_.stages[stage];
}

void StateRecorder::configure_transport(const TransportState& transport) {
    record("configure_transport",
           {{"kind", transport.kind},
            {"world_size", transport.world_size},
            {"timeout_ns", transport.timeout_ns},
            {"device", transport.device}},
           [&] {
               if (transport.world_size < 1)
                   throw std::invalid_argument(
                       fmt::format("configure_transport: world size {} (it needs at least 1 rank)",
                                   transport.world_size));
               state_.transport = transport;
           });
}

void StateRecorder::use_schedule(Schedule schedule, const std::string& source) {
    ScheduleState& state = state_.schedule;
    state.source = source;
    state.kind = schedule.name;
    state.pp = schedule.rank_count;
    state.v = schedule.stages_per_rank;
    state.m = schedule.microbatch_count;
    state.stage_count = schedule.stage_count;
    state.stage_to_rank = schedule.stage_to_rank;
    state.lowered = false;
    state_.stages.clear();
    state_.buffers.clear();
    for (int index = 0; index < schedule.stage_count; ++index) {
        StageState stage;
        stage.index = index;
        stage.rank = schedule.stage_to_rank[index];
        state_.stages.push_back(std::move(stage));
    }
    state.schedule = std::make_shared<const Schedule>(std::move(schedule));
}

void StateRecorder::choose_schedule(const ScheduleShape& shape) {
    record("choose_schedule",
           {{"kind", schedule_kind_name(shape.kind)},
            {"pp", shape.rank_count},
            {"v", shape.stages_per_rank},
            {"m", shape.microbatch_count}},
           [&] { use_schedule(generate_schedule(shape), "generated"); });
}

void StateRecorder::load_schedule_csv(const std::string& source, const std::string& text) {
    record("load_schedule_csv", {{"source", source}, {"csv", text}},
           [&] { use_schedule(parse_schedule_csv(text, source), source); });
}

void StateRecorder::lower_schedule(bool keep_fsdp_actions) {
    record("lower_schedule", {{"keep_fsdp_actions", keep_fsdp_actions}}, [&] {
        ScheduleState& state = state_.schedule;
        if (!state.schedule)
            throw std::invalid_argument("lower_schedule: no schedule was chosen yet");
        if (state.schedule->has_communication) {
            require_valid_structure(*state.schedule);  // a CSV written with its SEND/RECV
        } else {
            LoweringOptions options;
            options.keep_fsdp_actions = keep_fsdp_actions;
            state.schedule = std::make_shared<const Schedule>(lower(*state.schedule, options));
        }
        state.lowered = true;
    });
}

void StateRecorder::set_cost_model(const CostModelState& costs) {
    record("set_cost_model",
           {{"intra_host_latency_ns", costs.intra_host_latency_ns},
            {"intra_host_gb_per_s", costs.intra_host_gb_per_s},
            {"inter_host_latency_ns", costs.inter_host_latency_ns},
            {"inter_host_gb_per_s", costs.inter_host_gb_per_s},
            {"ranks_per_host", costs.ranks_per_host},
            {"overlap_efficiency", costs.overlap_efficiency},
            {"unshard_ns", costs.unshard_ns},
            {"reshard_ns", costs.reshard_ns},
            {"reduce_grad_ns", costs.reduce_grad_ns}},
           [&] {
               state_.costs = costs;
               state_.costs.known = true;
           });
}

void StateRecorder::set_stage_costs(int stage, const StageCostState& costs) {
    record("set_stage_costs",
           {{"stage", stage},
            {"forward_ns", costs.forward_ns},
            {"input_ns", costs.input_ns},
            {"weight_ns", costs.weight_ns},
            {"backward_ns", costs.backward_ns},
            {"activation_bytes", costs.activation_bytes},
            {"held_bytes", costs.held_bytes}},
           [&] { stage_at(stage, "set_stage_costs").costs = costs; });
}

void StateRecorder::split_model(const std::string& model,
                                const std::vector<std::string>& layer_names,
                                const std::vector<std::string>& split_points) {
    record("split_model",
           {{"model", model}, {"layers", layer_names}, {"split_points", split_points}}, [&] {
               std::vector<runtime::SplitPoint> points;
               for (const std::string& text : split_points)
                   points.push_back(runtime::parse_split_point(text));
               const auto stages = runtime::split_layers(
                   layer_names, static_cast<int>(state_.stages.size()), points);
               state_.model = model;
               state_.split_points = split_points;
               for (int index = 0; index < static_cast<int>(stages.size()); ++index) {
                   const auto first = layer_names.begin() + stages[index].first;
                   const std::string split =
                       points.empty() ? fmt::format("even split: {} layers over {} stages",
                                                    layer_names.size(), stages.size())
                       : index == 0   ? std::string("model start")
                                      : "starts at " + layer_names[stages[index].first];
                   assign_layers(index, {first, first + stages[index].count}, split);
               }
           });
}

void StateRecorder::assign_layers(int stage, const std::vector<std::string>& layers,
                                  const std::string& split) {
    record("assign_layers", {{"stage", stage}, {"layers", layers}, {"split", split}}, [&] {
        StageState& target = stage_at(stage, "assign_layers");
        target.layers = layers;
        target.split = split;
    });
}

void StateRecorder::set_stage_meta(int stage, const std::vector<TensorMeta>& inputs,
                                   const std::vector<TensorMeta>& outputs) {
    record("set_stage_meta",
           {{"stage", stage}, {"inputs", to_json(inputs)}, {"outputs", to_json(outputs)}}, [&] {
               StageState& target = stage_at(stage, "set_stage_meta");
               target.inputs = inputs;
               target.outputs = outputs;
           });
}

void StateRecorder::plan_buffers() {
    record("plan_buffers", nlohmann::json::object(), [&] {
        const ScheduleState& schedule = state_.schedule;
        if (!schedule.schedule || !schedule.lowered)
            throw std::invalid_argument("plan_buffers: the schedule is not lowered yet");
        // Which (stage, direction) pairs the lowered schedule communicates in.
        std::vector<std::array<bool, 4>> used(state_.stages.size());
        for (int rank = 0; rank < schedule.schedule->rank_count; ++rank) {
            if (state_.rank >= 0 && rank != state_.rank)
                continue;
            for (const Action& action : schedule.schedule->ranks[rank])
                for (int direction = 0; direction < 4; ++direction)
                    if (action.kind == transfer_kind(static_cast<BufferDirection>(direction)))
                        used.at(action.stage)[direction] = true;
        }
        state_.buffers.clear();
        for (const StageState& stage : state_.stages) {
            if (!state_.holds(stage.index))
                continue;
            for (int index = 0; index < 4; ++index) {
                if (!used[stage.index][index])
                    continue;
                BufferPlan plan;
                plan.stage = stage.index;
                plan.direction = static_cast<BufferDirection>(index);
                plan.peer_stage = peer_stage_of(stage.index, plan.direction);
                plan.peer_rank = schedule.stage_to_rank.at(plan.peer_stage);
                plan.metas = expected_buffer_metas(stage, plan.direction);
                for (const TensorMeta& meta : plan.metas)
                    plan.bytes += meta.byte_count();
                if (plan.metas.empty() && stage.costs) {
                    const StageState& sender = faces_previous_stage(plan.direction)
                                                   ? state_.stages.at(plan.peer_stage)
                                                   : stage;
                    plan.bytes = sender.costs ? sender.costs->activation_bytes : 0;
                }
                plan_buffer(plan);
            }
        }
    });
}

void StateRecorder::plan_buffer(const BufferPlan& plan) {
    record("plan_buffer",
           {{"stage", plan.stage},
            {"direction", buffer_direction_name(plan.direction)},
            {"peer_stage", plan.peer_stage},
            {"peer_rank", plan.peer_rank},
            {"metas", to_json(plan.metas)},
            {"bytes", plan.bytes}},
           [&] { state_.buffers.push_back(plan); });
}

void StateRecorder::set_stage_backend(int stage, const std::string& backend) {
    record("set_stage_backend", {{"stage", stage}, {"backend", backend}}, [&] {
        if (!runtime::is_stage_backend(backend))
            throw std::invalid_argument(
                fmt::format("set_stage_backend: unknown backend '{}' (use {})", backend,
                            fmt::join(runtime::stage_backend_names(), ", ")));
        stage_at(stage, "set_stage_backend").backend = backend;
    });
}

void StateRecorder::decide_sharding(const std::string& op_schema, const std::string& strategy,
                                    double cost_us) {
    record("decide_sharding", {{"op", op_schema}, {"strategy", strategy}, {"cost_us", cost_us}},
           [&] {
               state_.sharding.push_back(
                   fmt::format("{}: {} ({:.4f} us)", op_schema, strategy, cost_us));
           });
}

void StateRecorder::replay(const Event& event) {
    if (!event.top_level())
        throw std::invalid_argument(
            fmt::format("it is nested in event {}, which replays it", *event.parent));
    const nlohmann::json& arguments = event.arguments;
    const std::string& name = event.name;
    try {
        if (name == "configure_transport") {
            configure_transport({arguments.at("kind").get<std::string>(),
                                 arguments.at("world_size").get<int>(),
                                 arguments.at("timeout_ns").get<std::int64_t>(),
                                 arguments.at("device").get<std::string>()});
        } else if (name == "choose_schedule") {
            ScheduleShape shape;
            shape.kind = parse_schedule_kind(arguments.at("kind").get<std::string>());
            shape.rank_count = arguments.at("pp").get<int>();
            shape.stages_per_rank = arguments.at("v").get<int>();
            shape.microbatch_count = arguments.at("m").get<int>();
            choose_schedule(shape);
        } else if (name == "load_schedule_csv") {
            load_schedule_csv(arguments.at("source").get<std::string>(),
                              arguments.at("csv").get<std::string>());
        } else if (name == "lower_schedule") {
            lower_schedule(arguments.at("keep_fsdp_actions").get<bool>());
        } else if (name == "set_cost_model") {
            CostModelState costs;
            costs.intra_host_latency_ns = arguments.at("intra_host_latency_ns").get<std::int64_t>();
            costs.intra_host_gb_per_s = arguments.at("intra_host_gb_per_s").get<double>();
            costs.inter_host_latency_ns = arguments.at("inter_host_latency_ns").get<std::int64_t>();
            costs.inter_host_gb_per_s = arguments.at("inter_host_gb_per_s").get<double>();
            costs.ranks_per_host = arguments.at("ranks_per_host").get<int>();
            costs.overlap_efficiency = arguments.at("overlap_efficiency").get<double>();
            costs.unshard_ns = arguments.at("unshard_ns").get<std::int64_t>();
            costs.reshard_ns = arguments.at("reshard_ns").get<std::int64_t>();
            costs.reduce_grad_ns = arguments.at("reduce_grad_ns").get<std::int64_t>();
            set_cost_model(costs);
        } else if (name == "set_stage_costs") {
            StageCostState costs;
            costs.forward_ns = arguments.at("forward_ns").get<std::int64_t>();
            costs.input_ns = arguments.at("input_ns").get<std::int64_t>();
            costs.weight_ns = arguments.at("weight_ns").get<std::int64_t>();
            costs.backward_ns = arguments.at("backward_ns").get<std::int64_t>();
            costs.activation_bytes = arguments.at("activation_bytes").get<std::int64_t>();
            costs.held_bytes = arguments.at("held_bytes").get<std::int64_t>();
            set_stage_costs(arguments.at("stage").get<int>(), costs);
        } else if (name == "split_model") {
            split_model(arguments.at("model").get<std::string>(),
                        arguments.at("layers").get<std::vector<std::string>>(),
                        arguments.at("split_points").get<std::vector<std::string>>());
        } else if (name == "set_stage_meta") {
            set_stage_meta(arguments.at("stage").get<int>(),
                           tensor_metas_from_json(arguments.at("inputs")),
                           tensor_metas_from_json(arguments.at("outputs")));
        } else if (name == "plan_buffers") {
            plan_buffers();
        } else if (name == "decide_sharding") {
            decide_sharding(arguments.at("op").get<std::string>(),
                            arguments.at("strategy").get<std::string>(),
                            arguments.at("cost_us").get<double>());
        } else if (name == "set_stage_backend") {
            set_stage_backend(arguments.at("stage").get<int>(),
                              arguments.at("backend").get<std::string>());
        } else {
            throw std::invalid_argument("no recorded call has this name");
        }
    } catch (const nlohmann::json::exception& error) {
        throw std::invalid_argument(fmt::format("malformed arguments: {}", error.what()));
    }
}

}  // namespace pipelens::recorder
