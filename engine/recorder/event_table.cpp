// Events' fields as JSON, and what each event does to the state. Writing converts each field by
// its C++ type; reading checks the JSON type of each field before converting, so a trace edited
// by hand or written by another tool fails with the field's name instead of a library message.
// Each apply() checks its arguments before it touches the state, so an event that throws leaves
// the state as it was.
#include "engine/recorder/event_table.hpp"

#include <array>
#include <limits>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

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

// ---- fields as JSON ----

nlohmann::json field_json(bool value) {
    return value;
}
nlohmann::json field_json(int value) {
    return value;
}
nlohmann::json field_json(std::int64_t value) {
    return value;
}
nlohmann::json field_json(double value) {
    return value;
}
nlohmann::json field_json(const std::string& value) {
    return value;
}
nlohmann::json field_json(const std::vector<std::string>& value) {
    return value;
}
nlohmann::json field_json(const std::vector<double>& value) {
    return value;
}
nlohmann::json field_json(const std::vector<TensorMeta>& value) {
    return to_json(value);
}
nlohmann::json field_json(ScheduleKind value) {
    return schedule_kind_name(value);
}
nlohmann::json field_json(BufferDirection value) {
    return buffer_direction_name(value);
}

// A field that is not what its event needs: the caller adds the field's name.
struct WrongType {
    std::string expected;
};

void read_field(const nlohmann::json& json, bool& value) {
    if (!json.is_boolean())
        throw WrongType{"true or false"};
    value = json.get<bool>();
}

void read_field(const nlohmann::json& json, std::int64_t& value) {
    if (!json.is_number_integer() ||
        (json.is_number_unsigned() &&
         json.get<std::uint64_t>() >
             static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())))
        throw WrongType{"an integer"};
    value = json.get<std::int64_t>();
}

void read_field(const nlohmann::json& json, int& value) {
    std::int64_t wide = 0;
    read_field(json, wide);
    if (wide < std::numeric_limits<int>::min() || wide > std::numeric_limits<int>::max())
        throw WrongType{"a 32-bit integer"};
    value = static_cast<int>(wide);
}

void read_field(const nlohmann::json& json, double& value) {
    if (!json.is_number())
        throw WrongType{"a number"};
    value = json.get<double>();
}

void read_field(const nlohmann::json& json, std::string& value) {
    if (!json.is_string())
        throw WrongType{"a string"};
    value = json.get<std::string>();
}

void read_field(const nlohmann::json& json, std::vector<std::string>& value) {
    if (!json.is_array())
        throw WrongType{"a list of strings"};
    value.clear();
    for (const nlohmann::json& item : json) {
        if (!item.is_string())
            throw WrongType{"a list of strings"};
        value.push_back(item.get<std::string>());
    }
}

void read_field(const nlohmann::json& json, std::vector<double>& value) {
    if (!json.is_array())
        throw WrongType{"a list of numbers"};
    value.clear();
    for (const nlohmann::json& item : json) {
        if (!item.is_number())
            throw WrongType{"a list of numbers"};
        value.push_back(item.get<double>());
    }
}

void read_field(const nlohmann::json& json, std::vector<TensorMeta>& value) {
    try {
        value = tensor_metas_from_json(json);
    } catch (const std::exception& error) {
        throw WrongType{fmt::format("a list of tensor metadata ({})", error.what())};
    }
}

void read_field(const nlohmann::json& json, ScheduleKind& value) {
    std::string name;
    read_field(json, name);
    try {
        value = parse_schedule_kind(name);
    } catch (const std::exception& error) {
        throw WrongType{fmt::format("a schedule kind ({})", error.what())};
    }
}

void read_field(const nlohmann::json& json, BufferDirection& value) {
    std::string name;
    read_field(json, name);
    try {
        value = parse_buffer_direction(name);
    } catch (const std::exception& error) {
        throw WrongType{fmt::format("a buffer direction ({})", error.what())};
    }
}

// Fields events gained after traces had been written without them: absent, they keep their
// default (0), so older recordings still replay.
bool added_later(std::string_view name) {
    return name == "gradient_bytes" || name == "backward_peak_bytes" || name == "kept_bytes" ||
           name == "defer_recv" || name == "rendezvous" || name.starts_with("zero_bubble_") ||
           name == "max_activations" || name == "rank_slowdown" || name.ends_with("_arithmetic_ns");
}

template <class Kind>
nlohmann::json arguments_of(const Kind& event) {
    nlohmann::json arguments = nlohmann::json::object();
    Kind::fields(event, [&](const char* name, const auto& value) {
        // A later field at its default is left out: the event reads as it always did.
        if constexpr (std::is_integral_v<std::decay_t<decltype(value)>>)
            if (added_later(name) && value == 0)
                return;
        if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::vector<double>>)
            if (added_later(name) && value.empty())
                return;
        arguments[name] = field_json(value);
    });
    return arguments;
}

template <class Kind>
Kind read_kind(const nlohmann::json& arguments) {
    if (!arguments.is_object())
        throw EventFormatError(
            fmt::format("malformed arguments: expected a JSON object, got {}", arguments.dump()));
    Kind event;
    Kind::fields(event, [&](const char* name, auto& value) {
        const auto found = arguments.find(name);
        if (found == arguments.end()) {
            if (added_later(name))
                return;
            throw EventFormatError(fmt::format("malformed arguments: field '{}' is missing", name));
        }
        try {
            read_field(*found, value);
        } catch (const WrongType& wrong) {
            throw EventFormatError(fmt::format("malformed arguments: field '{}' must be {}, got {}",
                                               name, wrong.expected, found->dump()));
        }
    });
    return event;
}

template <std::size_t... Index>
AnyEvent parse_by_name(std::string_view name, const nlohmann::json& arguments,
                       std::index_sequence<Index...>) {
    AnyEvent event;
    const bool found =
        ((std::variant_alternative_t<Index, AnyEvent>::kName == name &&
          (event = read_kind<std::variant_alternative_t<Index, AnyEvent>>(arguments), true)) ||
         ...);
    if (!found)
        throw EventFormatError("no recorded call has this name");
    return event;
}

template <std::size_t... Index>
std::vector<std::string_view> names(std::index_sequence<Index...>) {
    return {std::variant_alternative_t<Index, AnyEvent>::kName...};
}

// ---- what events do ----

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

void DecideSharding::apply(EventTarget& target) const {
    target.mutable_state().sharding.push_back(
        fmt::format("{}: {} ({:.4f} us)", op, strategy, cost_us));
}

std::string_view event_name(const AnyEvent& event) {
    return std::visit([](const auto& kind) { return kind.kName; }, event);
}

std::string_view made_by(const AnyEvent& event) {
    return std::visit(
        [](const auto& kind) -> std::string_view {
            if constexpr (requires { std::decay_t<decltype(kind)>::kMadeBy; })
                return std::decay_t<decltype(kind)>::kMadeBy;
            else
                return {};
        },
        event);
}

std::vector<std::string_view> event_names() {
    return names(std::make_index_sequence<std::variant_size_v<AnyEvent>>());
}

nlohmann::json event_arguments(const AnyEvent& event) {
    return std::visit([](const auto& kind) { return arguments_of(kind); }, event);
}

AnyEvent parse_event(std::string_view name, const nlohmann::json& arguments) {
    return parse_by_name(name, arguments,
                         std::make_index_sequence<std::variant_size_v<AnyEvent>>());
}

AnyEvent parse_event(const Event& event) {
    return parse_event(event.name, event.arguments);
}

std::optional<int> event_stage(const Event& event) {
    std::optional<int> stage;
    try {
        std::visit(
            [&](const auto& kind) {
                std::decay_t<decltype(kind)>::fields(
                    kind, [&](const char* name, const auto& value) {
                        if constexpr (std::is_same_v<std::decay_t<decltype(value)>, int>)
                            if (std::string_view(name) == "stage")
                                stage = value;
                    });
            },
            parse_event(event));
    } catch (const EventFormatError&) {
        return std::nullopt;  // an event this engine cannot read names no stage
    }
    return stage;
}

}  // namespace pipelens::recorder
