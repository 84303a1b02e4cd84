// Op name -> strategy function, and the small helpers of OpCall.
#include <algorithm>
#include <array>
#include <utility>

#include "engine/sharding/op_strategies.hpp"
#include "engine/sharding/strategy_utils.hpp"

namespace pipelens::sharding {
namespace {

using Entry = std::pair<std::string_view, StrategyFunction>;

constexpr std::array kStrategies{
    Entry{"aten.mm.default", mm_strategy},
    Entry{"aten.addmm.default", addmm_strategy},
    Entry{"aten.bmm.default", bmm_strategy},
    Entry{"aten.baddbmm.default", baddbmm_strategy},
    Entry{"aten.embedding.default", embedding_strategy},
    Entry{"aten._scaled_dot_product_flash_attention.default", flash_attention_strategy},
    Entry{"aten.add.Tensor", pointwise_strategy},
    Entry{"aten.sub.Tensor", pointwise_strategy},
    Entry{"aten.mul.Tensor", pointwise_strategy},
    Entry{"aten.div.Tensor", pointwise_strategy},
    Entry{"aten.relu.default", pointwise_strategy},
    Entry{"aten.gelu.default", pointwise_strategy},
    Entry{"aten.silu.default", pointwise_strategy},
    Entry{"aten.tanh.default", pointwise_strategy},
    Entry{"aten.sum.default", reduction_strategy},
    Entry{"aten.sum.dim_IntList", reduction_strategy},
    Entry{"aten.mean.default", reduction_strategy},
    Entry{"aten.mean.dim", reduction_strategy},
    Entry{"aten.view.default", view_strategy},
    Entry{"aten.reshape.default", view_strategy},
    Entry{"aten.transpose.int", transpose_strategy},
    Entry{"aten.t.default", transpose_strategy},
};

}  // namespace

const DTensorSpec& OpCall::input(std::size_t index) const {
    return spec_of(inputs.at(index));
}

std::vector<std::string> OpCall::values() const {
    std::vector<std::string> texts;
    for (const OpArgument& argument : schema.arguments)
        if (const auto* value = std::get_if<OpValue>(&argument))
            texts.push_back(value->text);
    return texts;
}

StrategyFunction find_strategy(std::string_view op) {
    for (const auto& [name, function] : kStrategies)
        if (name == op)
            return function;
    return nullptr;
}

std::vector<std::string> registered_ops() {
    std::vector<std::string> names;
    for (const auto& [name, function] : kStrategies)
        names.emplace_back(name);
    return names;
}

std::string resolve_overload(const std::string& op, std::size_t arguments) {
    if (find_strategy(op) != nullptr)
        return op;
    if (op == "aten.sum")
        return arguments > 1 ? "aten.sum.dim_IntList" : "aten.sum.default";
    if (op == "aten.mean")  // as torch dispatches mean(x) and mean(x, dims)
        return arguments > 1 ? "aten.mean.dim" : "aten.mean.default";
    for (const auto& [name, function] : kStrategies)
        if (name.starts_with(op + ".") && name.find('.', op.size() + 1) == std::string_view::npos)
            return std::string(name);
    return op;
}

}  // namespace pipelens::sharding
