// Text forms of the op-level types. A placement list prints without the Spec wrapper here
// (upstream's _pretty_print_spec), and without the shard-order indices Spec adds.
#include "engine/sharding/op_schema.hpp"

#include <fmt/format.h>

namespace pipelens::sharding {
namespace {

std::string pretty(const std::optional<DTensorSpec>& spec) {
    return spec ? to_string(spec->placements) : "None";
}

std::string pretty_list(const std::vector<std::string>& parts) {
    return fmt::format("({})", fmt::join(parts, ", "));
}

}  // namespace

double OpSpec::total_cost() const {
    double total = 0;
    for (const auto& row : redistribute_cost)
        for (double cost : row)
            total += cost;
    return total;
}

std::string to_string(const OpSpec& spec) {
    std::vector<std::string> inputs;
    for (const DTensorSpec& input : spec.inputs)
        inputs.push_back(to_string(input.placements));
    std::string outputs;
    if (spec.tuple_output) {
        std::vector<std::string> parts;
        for (const auto& output : spec.outputs)
            parts.push_back(pretty(output));
        outputs = pretty_list(parts);
    } else {
        outputs = pretty(spec.outputs.empty() ? std::nullopt : spec.outputs.front());
    }
    return fmt::format("{} -> {}", pretty_list(inputs), outputs);
}

std::string to_string(const OpStrategy& strategy) {
    std::vector<std::string> parts;
    for (const OpSpec& spec : strategy.strategies)
        parts.push_back(to_string(spec));
    std::string mesh_shape = "()";
    if (!strategy.strategies.empty() && !strategy.strategies.front().outputs.empty() &&
        strategy.strategies.front().outputs.front()) {
        const auto& shape = strategy.strategies.front().outputs.front()->mesh.shape;
        mesh_shape = shape.size() == 1 ? fmt::format("({},)", shape[0])
                                       : fmt::format("({})", fmt::join(shape, ", "));
    }
    return fmt::format("OpStrategy[{}] @ mesh: {}", fmt::join(parts, ", "), mesh_shape);
}

std::string to_string(const TupleStrategy& strategy) {
    std::vector<std::string> parts;
    for (const OpStrategy& child : strategy.children)
        parts.push_back(to_string(child));
    return fmt::format("TupleStrategy({})", fmt::join(parts, ", "));
}

std::vector<DTensorSpec> OpSchema::tensor_arguments() const {
    std::vector<DTensorSpec> tensors;
    for (const OpArgument& argument : arguments)
        if (const auto* spec = std::get_if<DTensorSpec>(&argument))
            tensors.push_back(*spec);
    return tensors;
}

std::string to_string(const OpSchema& schema) {
    std::vector<std::string> parts;
    std::string mesh = "None";
    for (const OpArgument& argument : schema.arguments) {
        if (const auto* spec = std::get_if<DTensorSpec>(&argument)) {
            parts.push_back(to_string(*spec));
            mesh = to_string(spec->mesh);
        } else {
            parts.push_back(std::get<OpValue>(argument).text);
        }
    }
    return fmt::format("{}({}) on {})", schema.op, fmt::join(parts, ", "), mesh);
}

}  // namespace pipelens::sharding
