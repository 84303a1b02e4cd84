// Sharding propagation of one op call, as DTensor's ShardingPropagator does it in eager mode:
// find the op's strategy, generate every OpSpec, pick the cheapest with upstream's tie rules,
// and say which inputs must be redistributed (from which spec to which, at what cost).
//
// Selection (upstream _select_strategy): the total of each strategy's cost matrix; a negative
// minimum wins at its first index; a zero minimum prefers a strategy whose input placements
// already equal the arguments' (the last such one); otherwise the first minimum. A choice whose
// cost is infinite (a move no collective can do, such as P(sum) -> P(avg), or one from or to a
// strided shard, which upstream does not price either) is refused with a ShardingError naming
// the move, where upstream would run it as a silent no-op.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "engine/sharding/op_strategies.hpp"

namespace pipelens::sharding {

class ShardingError : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

struct Redistribution {
    std::size_t input = 0;  // which tensor argument
    DTensorSpec from;
    DTensorSpec to;
    double cost_us = 0;
};

struct ShardingDecision {
    OpSchema schema;
    OpStrategy strategy;
    std::size_t chosen = 0;
    std::vector<Redistribution> redistributions;

    const OpSpec& chosen_spec() const { return strategy.strategies.at(chosen); }
};

std::size_t select_strategy(const OpStrategy& strategy, const OpSchema& schema);

// Throws ShardingError naming the op in schema form: no strategy registered (with the ops that
// have one), arguments on different meshes, no strategy that can shard these shapes (with the
// candidates and why each was left out), or only strategies that need an impossible move.
ShardingDecision propagate(const OpSchema& schema);

// The decision as the trace's sharding table stores it: strategies as a JSON list of
// {input_specs, output_spec, costs, total}, redistributions as a JSON list.
std::string strategies_json(const ShardingDecision& decision);
std::string redistributions_json(const ShardingDecision& decision);

// Text for `pipelens shard`: the schema line, each strategy with its cost matrix and total,
// the chosen one and the redistributions it needs.
std::string format_decision(const ShardingDecision& decision);

}  // namespace pipelens::sharding
