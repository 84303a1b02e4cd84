// The sharding strategies pipelens knows, by ATen op name (PyTorch's overload names), as
// upstream registers them in torch/distributed/tensor/_ops/. A strategy function gets the op
// call — its schema (current input specs, non-tensor arguments) and each tensor input as the
// strategy of its producer — and returns every OpSpec the op can run with, inputs that could
// not be sharded that way already left out, costs filled in.
#pragma once

#include <optional>

#include <string>
#include <string_view>
#include <vector>

#include "engine/sharding/op_schema.hpp"

namespace pipelens::sharding {

struct OpCall {
    OpSchema schema;
    std::vector<OpStrategy> inputs;  // one per tensor argument, in order
    DeviceMesh mesh;

    const DTensorSpec& input(std::size_t index) const;
    // The non-tensor arguments in order, as printed ("[1]", "True", "0").
    std::vector<std::string> values() const;
};

using StrategyFunction = OpStrategy (*)(const OpCall& call);

// nullptr when the op has no strategy.
StrategyFunction find_strategy(std::string_view op);

// What an op's ATen schema takes by position: from `least_tensors` to `most_tensors` tensors (a
// pointwise op's other operand may be a number: `x + 1`), and from `least_arguments` to
// `most_arguments` positional arguments in all (the optional ones: `keepdim`, a view's shape,
// ...). Its keyword-only ones (`alpha`, `dtype`, ...) are keyword_only_arguments().
struct OpArity {
    int least_tensors = 0;
    int most_tensors = 0;
    int least_arguments = 0;
    int most_arguments = 0;
};
std::optional<OpArity> op_arity(std::string_view op);  // nullopt for an op without a strategy
// The arguments after the ATen schema's `*`: given only as `name=value`.
std::vector<std::string> keyword_only_arguments(std::string_view op);
std::vector<std::string> registered_ops();

// "aten.mm" -> "aten.mm.default": the registered overload of a name given without one
// (`arguments` tells sum.default from sum.dim_IntList, mean.default from mean.dim). Returns `op`
// unchanged if it is complete or unknown.
std::string resolve_overload(const std::string& op, std::size_t arguments);

// The families (one file each).
OpStrategy mm_strategy(const OpCall& call);
OpStrategy bmm_strategy(const OpCall& call);
OpStrategy addmm_strategy(const OpCall& call);
OpStrategy baddbmm_strategy(const OpCall& call);
OpStrategy embedding_strategy(const OpCall& call);
OpStrategy flash_attention_strategy(const OpCall& call);
OpStrategy pointwise_strategy(const OpCall& call);
OpStrategy reduction_strategy(const OpCall& call);
OpStrategy view_strategy(const OpCall& call);
OpStrategy transpose_strategy(const OpCall& call);

}  // namespace pipelens::sharding
