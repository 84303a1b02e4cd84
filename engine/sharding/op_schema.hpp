// The operator-level types of DTensor's sharding propagation:
//   OpSpec        one way to run an op: the specs it wants its inputs in, the spec(s) it
//                 produces, and redistribute_cost — one row per tensor input, one column per
//                 strategy of that input's producer (what moving from there to here costs, us)
//   OpStrategy    every OpSpec an op (or a producer) could use
//   TupleStrategy one OpStrategy per element, for foreach-style ops
//   OpSchema      an op call: its name and arguments (tensor specs or printed non-tensor values)
// Printing follows upstream: OpSpec `(S(0), R) -> S(0)`, OpSchema
// `aten.mm.default(Spec(f32[1024, 512](S(1))), Spec(f32[512, 256](S(0)))) on DeviceMesh((tp=4),
// 'cuda', stride=(1,)))` (the final `)` is upstream's).
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "engine/sharding/dtensor_spec.hpp"

namespace pipelens::sharding {

struct OpSpec {
    std::vector<std::optional<DTensorSpec>> outputs;  // one entry, or a tuple's entries
    bool tuple_output = false;
    std::vector<DTensorSpec> inputs;
    std::vector<std::vector<double>> redistribute_cost;

    const DTensorSpec& output() const { return outputs.at(0).value(); }
    double total_cost() const;  // every entry of redistribute_cost
};

// "(S(0), R) -> S(0)", 2-D "(S(0)R, RS(1)) -> S(0)S(1)", tuple "(R) -> (R, None)".
std::string to_string(const OpSpec& spec);

struct OpStrategy {
    std::vector<OpSpec> strategies;
    // Candidates left out because an input could not be sharded that way (for error messages).
    std::vector<OpSpec> rejected;
};

// "OpStrategy[(S(0), R) -> S(0), ...] @ mesh: (4,)"
std::string to_string(const OpStrategy& strategy);

struct TupleStrategy {
    std::vector<OpStrategy> children;
};

std::string to_string(const TupleStrategy& strategy);  // "TupleStrategy(...)"

// An argument that is not a tensor, kept as upstream prints it ("[16, 64]", "1", "None").
struct OpValue {
    std::string text;
};
using OpArgument = std::variant<DTensorSpec, OpValue>;

// A keyword argument (`alpha=2`): upstream keeps these in kwargs_schema, apart from the
// positional arguments, and its printed schema leaves them out.
struct OpKeyword {
    std::string name;
    std::string value;
};

struct OpSchema {
    std::string op;                     // "aten.mm.default"
    std::vector<OpArgument> arguments;  // positional
    std::vector<OpKeyword> keywords;

    std::vector<DTensorSpec> tensor_arguments() const;
};

std::string to_string(const OpSchema& schema);

}  // namespace pipelens::sharding
