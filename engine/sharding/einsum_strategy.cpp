// Einsum strategy generation; see einsum_strategy.hpp.
#include "engine/sharding/einsum_strategy.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "engine/sharding/strategy_utils.hpp"

namespace pipelens::sharding {
namespace {

int position(const std::string& dims, char dim) {
    return static_cast<int>(dims.find(dim));
}

bool is_dim_letter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// Each operand and the output: letters only, none twice (placements name one position per dim).
void require_plain_operands(const std::string& equation, const EinsumDims& dims) {
    std::vector<std::string> operands = dims.inputs;
    operands.push_back(dims.output);
    for (const std::string& operand : operands)
        for (std::size_t at = 0; at < operand.size(); ++at) {
            if (!is_dim_letter(operand[at]))
                throw std::invalid_argument(fmt::format(
                    "einsum '{}': dims are single letters (a-z, A-Z), e.g. 'bmk,bkn->bmn'",
                    equation));
            if (operand.find(operand[at], at + 1) != std::string::npos)
                throw std::invalid_argument(fmt::format(
                    "einsum '{}': dim '{}' appears twice in '{}' (diagonals are not supported)",
                    equation, operand[at], operand));
        }
    for (char dim : dims.output)
        if (std::none_of(dims.inputs.begin(), dims.inputs.end(), [&](const std::string& input) {
                return input.find(dim) != std::string::npos;
            }))
            throw std::invalid_argument(
                fmt::format("einsum '{}': output dim '{}' is in no input", equation, dim));
}

// choices^ndim, or std::invalid_argument once it passes kMaxEinsumStrategies.
void require_few_strategies(const std::string& equation, std::size_t choices, int ndim) {
    std::int64_t count = 1;
    for (int dim = 0; dim < ndim; ++dim) {
        count *= static_cast<std::int64_t>(choices);
        if (count > kMaxEinsumStrategies)
            throw std::invalid_argument(fmt::format(
                "einsum '{}': {} choices per mesh dim on {} mesh dims make more than {} "
                "strategies",
                equation, choices, ndim, kMaxEinsumStrategies));
    }
}

}  // namespace

EinsumDims parse_einsum(const std::string& equation) {
    const std::size_t arrow = equation.find("->");
    if (arrow == std::string::npos || equation.find("->", arrow + 2) != std::string::npos)
        throw std::invalid_argument(
            fmt::format("einsum '{}': expected INPUTS->OUTPUT with one output", equation));
    EinsumDims dims;
    dims.output = equation.substr(arrow + 2);
    const std::string inputs = equation.substr(0, arrow);
    std::size_t at = 0;
    while (true) {
        const std::size_t comma = inputs.find(',', at);
        dims.inputs.push_back(inputs.substr(at, comma - at));
        if (comma == std::string::npos)
            break;
        at = comma + 1;
    }
    if (dims.inputs.size() > 2)
        throw std::invalid_argument(
            fmt::format("einsum '{}': at most two inputs are supported", equation));
    require_plain_operands(equation, dims);
    std::set<char> all;
    for (const std::string& input : dims.inputs)
        all.insert(input.begin(), input.end());
    for (char dim : all) {  // alphabetical, as upstream sorts them
        const bool in_output = dims.output.find(dim) != std::string::npos;
        const bool in_every_input = std::all_of(
            dims.inputs.begin(), dims.inputs.end(),
            [&](const std::string& input) { return input.find(dim) != std::string::npos; });
        if (!in_output) {
            // Upstream's strategies shard a contracted dim on both inputs at once: one only an
            // input holds has no position on the other (it printed as S(-1)).
            if (!in_every_input)
                throw std::invalid_argument(fmt::format(
                    "einsum '{}': dim '{}' is summed within one input alone (in neither the "
                    "other input nor the output); sum it out first: a contracted dim must be in "
                    "both inputs",
                    equation, dim));
            dims.contracting += dim;
        } else if (in_every_input) {
            dims.batch += dim;
        } else {
            if (dims.inputs.size() != 2)
                throw std::invalid_argument(fmt::format(
                    "einsum '{}': a one-input equation cannot have free dims", equation));
            (dims.inputs[0].find(dim) != std::string::npos ? dims.lhs_only : dims.rhs_only) += dim;
        }
    }
    return dims;
}

std::vector<OpSpec> einsum_strategies(const std::string& equation, const DeviceMesh& mesh,
                                      bool linearity) {
    const EinsumDims dims = parse_einsum(equation);
    const std::size_t inputs = dims.inputs.size();
    // One mesh dim's choices: [output, input0, input1].
    std::vector<std::vector<Placement>> choices;
    choices.emplace_back(inputs + 1, Placement::replicate());
    for (char dim : dims.batch) {
        std::vector<Placement> choice{Placement::shard(position(dims.output, dim))};
        for (const std::string& input : dims.inputs)
            choice.push_back(Placement::shard(position(input, dim)));
        choices.push_back(choice);
    }
    for (char dim : dims.contracting) {
        std::vector<Placement> choice{Placement::partial()};
        for (const std::string& input : dims.inputs)
            choice.push_back(Placement::shard(position(input, dim)));
        choices.push_back(choice);
    }
    for (char dim : dims.lhs_only)
        choices.push_back({Placement::shard(position(dims.output, dim)),
                           Placement::shard(position(dims.inputs[0], dim)),
                           Placement::replicate()});
    for (char dim : dims.rhs_only)
        choices.push_back({Placement::shard(position(dims.output, dim)), Placement::replicate(),
                           Placement::shard(position(dims.inputs[1], dim))});
    if (linearity)
        choices.emplace_back(inputs + 1, Placement::partial());
    require_few_strategies(equation, choices.size(), mesh.ndim());

    std::vector<OpSpec> strategies;
    std::vector<std::size_t> pick(mesh.ndim(), 0);
    do {
        OpSpec spec;
        for (std::size_t slot = 0; slot <= inputs; ++slot) {
            DTensorSpec tensor;
            tensor.mesh = mesh;
            for (int dim = 0; dim < mesh.ndim(); ++dim)
                tensor.placements.push_back(choices[pick[dim]][slot]);
            if (slot == 0)
                spec.outputs.push_back(std::move(tensor));
            else
                spec.inputs.push_back(std::move(tensor));
        }
        strategies.push_back(std::move(spec));
    } while (next_combination(pick, choices.size()));
    return strategies;
}

}  // namespace pipelens::sharding
