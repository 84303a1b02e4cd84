// One op's sharding decision and its text and JSON forms.
#include "engine/sharding/sharding_propagation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/sharding/redistribute_cost.hpp"
#include "engine/sharding/strategy_utils.hpp"

namespace pipelens::sharding {
namespace {

std::string cost_text(double cost) {
    return std::isinf(cost) ? "inf" : fmt::format("{:.4f}", cost);
}

nlohmann::json cost_json(double cost) {
    if (std::isinf(cost))
        return "inf";
    return cost;
}

// Why a rejected candidate could not shard an input: the first dim it cannot split so.
std::string rejection_reason(const OpSpec& spec, const OpSchema& schema) {
    const std::vector<DTensorSpec> arguments = schema.tensor_arguments();
    for (std::size_t input = 0; input < spec.inputs.size() && input < arguments.size(); ++input)
        if (const std::string why =
                why_unshardable(arguments[input].tensor.shape, spec.inputs[input]);
            !why.empty())
            return fmt::format("input {} {}", input, why);
    return "not shardable";
}

void require_one_mesh(const OpSchema& schema) {
    const std::vector<DTensorSpec> tensors = schema.tensor_arguments();
    for (const DTensorSpec& tensor : tensors)
        if (!(tensor.mesh == tensors.front().mesh))
            throw ShardingError(fmt::format(
                "cannot propagate sharding for {}: its arguments live on different device "
                "meshes, {} and {}; put every argument on the same mesh first",
                to_string(schema), to_string(tensors.front().mesh), to_string(tensor.mesh)));
}

// Upstream keeps the cheapest strategy even when every one needs a move no collective can do
// (its cost is infinite) and then runs it as a no-op, which silently gives a wrong result:
// add(P(avg), P(sum)) would yield P(avg). pipelens refuses such a plan and says which move.
void require_possible_moves(const OpSpec& chosen, const OpSchema& schema) {
    if (!std::isinf(chosen.total_cost()))
        return;
    const std::vector<DTensorSpec> arguments = schema.tensor_arguments();
    for (std::size_t input = 0; input < chosen.inputs.size() && input < arguments.size(); ++input) {
        const std::string why = impossible_redistribution(arguments[input], chosen.inputs[input]);
        if (why.empty())
            continue;
        const bool strided =
            arguments[input].has_strided_shard() || chosen.inputs[input].has_strided_shard();
        throw ShardingError(fmt::format(
            "Sharding propagation failed for {}: every strategy needs a redistribution {}; the "
            "cheapest, {}, needs input {} moved from {} to {} ({}); redistribute it (e.g. to R) "
            "first",
            to_string(schema), strided ? "pipelens cannot price" : "no collective can do",
            to_string(chosen), input, to_string(arguments[input].placements),
            to_string(chosen.inputs[input].placements), why));
    }
    throw ShardingError(fmt::format(
        "Sharding propagation failed for {}: every strategy has an infinite redistribution cost",
        to_string(schema)));
}

// The op's ATen schema's arguments, counted: an extra tensor was dropped without a word
// (aten.relu of two tensors ran as a binary op), a missing one failed as a sharding failure.
void require_arity(const OpSchema& schema, std::size_t tensors) {
    const std::optional<OpArity> arity = op_arity(schema.op);
    if (!arity)
        return;
    const auto range = [](int least, int most, const char* what) {
        return least == most ? fmt::format("{} {}{}", least, what, least == 1 ? "" : "s")
                             : fmt::format("{} to {} {}s", least, most, what);
    };
    const auto given = static_cast<int>(tensors);
    const auto arguments = static_cast<int>(schema.arguments.size());
    if (given < arity->least_tensors || given > arity->most_tensors)
        throw MalformedArgumentError(
            fmt::format("{}: takes {}; got {}", to_string(schema),
                        range(arity->least_tensors, arity->most_tensors, "tensor"), given));
    if (arguments < arity->least_arguments || arguments > arity->most_arguments)
        throw MalformedArgumentError(fmt::format(
            "{}: takes {} in all; got {}", to_string(schema),
            range(arity->least_arguments, arity->most_arguments, "argument"), arguments));
}

}  // namespace

std::size_t select_strategy(const OpStrategy& strategy, const OpSchema& schema) {
    const std::size_t count = strategy.strategies.size();
    if (count == 1)
        return 0;
    const std::vector<DTensorSpec> arguments = schema.tensor_arguments();
    std::vector<double> costs;
    std::optional<std::size_t> without_redistribution;
    for (std::size_t index = 0; index < count; ++index) {
        const OpSpec& spec = strategy.strategies[index];
        costs.push_back(spec.total_cost());
        if (costs.back() != 0)
            continue;
        bool matches = spec.inputs.size() == arguments.size();
        for (std::size_t input = 0; matches && input < arguments.size(); ++input)
            matches = arguments[input].placements == spec.inputs[input].placements;
        if (matches)
            without_redistribution = index;  // the last one wins, as upstream
    }
    const double lowest = *std::min_element(costs.begin(), costs.end());
    if (lowest == 0 && without_redistribution)
        return *without_redistribution;
    return static_cast<std::size_t>(std::find(costs.begin(), costs.end(), lowest) - costs.begin());
}

ShardingDecision propagate(const OpSchema& schema) {
    const StrategyFunction function = find_strategy(schema.op);
    if (function == nullptr)
        throw ShardingError(fmt::format(
            "Operator {} does not have a sharding strategy registered (pipelens has strategies "
            "for {})",
            schema.op, fmt::join(registered_ops(), ", ")));
    const std::vector<DTensorSpec> tensors = schema.tensor_arguments();
    require_arity(schema, tensors.size());
    if (tensors.empty())
        throw ShardingError(fmt::format("{}: no tensor argument carries a device mesh", schema.op));
    require_one_mesh(schema);
    OpCall call;
    call.schema = schema;
    call.mesh = tensors.front().mesh;
    for (const DTensorSpec& tensor : tensors)
        call.inputs.push_back(strategy_of(tensor));
    ShardingDecision decision;
    decision.schema = schema;
    try {
        decision.strategy = function(call);
    } catch (const ImpossibleShapeError&) {
        throw;
    } catch (const MalformedArgumentError&) {
        throw;  // bad input, not a failure to shard
    } catch (const std::out_of_range&) {
        throw ShardingError(
            fmt::format("{}: wrong number of arguments for this op", to_string(schema)));
    } catch (const std::invalid_argument& error) {
        throw ShardingError(
            fmt::format("Sharding propagation failed for {}: {}", to_string(schema), error.what()));
    }
    if (decision.strategy.strategies.empty()) {
        std::string candidates;
        for (const OpSpec& rejected : decision.strategy.rejected)
            candidates += fmt::format("\n  {}  ({})", to_string(rejected),
                                      rejection_reason(rejected, schema));
        throw ShardingError(fmt::format(
            "Sharding propagation failed for {}: no strategy can shard these shapes on this "
            "mesh; the candidates were:{}",
            to_string(schema), candidates.empty() ? " none" : candidates));
    }
    decision.chosen = select_strategy(decision.strategy, schema);
    const OpSpec& chosen = decision.chosen_spec();
    require_possible_moves(chosen, schema);
    for (std::size_t input = 0; input < chosen.inputs.size() && input < tensors.size(); ++input)
        if (!(tensors[input].placements == chosen.inputs[input].placements))
            decision.redistributions.push_back({input, tensors[input], chosen.inputs[input],
                                                chosen.redistribute_cost.at(input).at(0)});
    return decision;
}

std::string strategies_json(const ShardingDecision& decision) {
    nlohmann::json list = nlohmann::json::array();
    for (const OpSpec& spec : decision.strategy.strategies) {
        nlohmann::json inputs = nlohmann::json::array();
        for (const DTensorSpec& input : spec.inputs)
            inputs.push_back(to_string(input.placements));
        nlohmann::json costs = nlohmann::json::array();
        for (const auto& row : spec.redistribute_cost) {
            nlohmann::json json_row = nlohmann::json::array();
            for (double cost : row)
                json_row.push_back(cost_json(cost));
            costs.push_back(std::move(json_row));
        }
        const std::string text = to_string(spec);
        list.push_back({{"strategy", text},
                        {"input_specs", std::move(inputs)},
                        {"output_spec", text.substr(text.find(" -> ") + 4)},
                        {"costs", std::move(costs)},
                        {"total", cost_json(spec.total_cost())}});
    }
    return list.dump();
}

std::string redistributions_json(const ShardingDecision& decision) {
    nlohmann::json list = nlohmann::json::array();
    for (const Redistribution& move : decision.redistributions)
        list.push_back({{"input", move.input},
                        {"from", to_string(move.from)},
                        {"to", to_string(move.to)},
                        {"cost_us", cost_json(move.cost_us)}});
    return list.dump();
}

std::string format_decision(const ShardingDecision& decision) {
    std::string text = to_string(decision.schema) + "\n";
    text += fmt::format("{} strategies (cost in us: one row per tensor input):\n",
                        decision.strategy.strategies.size());
    for (std::size_t index = 0; index < decision.strategy.strategies.size(); ++index) {
        const OpSpec& spec = decision.strategy.strategies[index];
        std::vector<std::string> rows;
        for (const auto& row : spec.redistribute_cost) {
            std::vector<std::string> cells;
            for (double cost : row)
                cells.push_back(cost_text(cost));
            rows.push_back(fmt::format("[{}]", fmt::join(cells, ", ")));
        }
        text += fmt::format("{} {:>3}  {:<40} costs [{}] total {}\n",
                            index == decision.chosen ? "*" : " ", index, to_string(spec),
                            fmt::join(rows, ", "), cost_text(spec.total_cost()));
    }
    text += fmt::format("chosen: {} {}\n", decision.chosen, to_string(decision.chosen_spec()));
    if (decision.redistributions.empty())
        text += "redistributions: none (every input is already placed as it wants)\n";
    for (const Redistribution& move : decision.redistributions)
        text += fmt::format("redistribute input {}: {} -> {} ({} us)\n", move.input,
                            to_string(move.from.placements), to_string(move.to.placements),
                            cost_text(move.cost_us));
    return text;
}

}  // namespace pipelens::sharding
