// Op name -> strategy function, and the small helpers of OpCall.
#include <algorithm>
#include <array>
#include <optional>
#include <utility>

#include "engine/sharding/op_strategies.hpp"
#include "engine/sharding/strategy_utils.hpp"

namespace pipelens::sharding {
namespace {

// An op's strategy and its ATen schema's arguments: how many tensors, how many positional
// arguments in all (`keepdim`; a view's shape), and the keyword-only ones after the schema's `*`
// (`beta`, `alpha`, `dtype`, ...), comma-separated.
struct Entry {
    std::string_view name;
    StrategyFunction function;
    OpArity arity;
    std::string_view keywords = {};
};

constexpr std::array kStrategies{
    Entry{"aten.mm.default", mm_strategy, {2, 2, 2, 2}},
    Entry{"aten.addmm.default", addmm_strategy, {3, 3, 3, 3}, "beta,alpha"},
    Entry{"aten.bmm.default", bmm_strategy, {2, 2, 2, 2}},
    Entry{"aten.baddbmm.default", baddbmm_strategy, {3, 3, 3, 3}, "beta,alpha"},
    Entry{"aten.embedding.default", embedding_strategy, {2, 2, 2, 5}},
    Entry{"aten._scaled_dot_product_flash_attention.default",
          flash_attention_strategy,
          {3, 3, 3, 6},
          "scale"},
    Entry{"aten.add.Tensor", pointwise_strategy, {1, 2, 2, 2}, "alpha"},
    Entry{"aten.sub.Tensor", pointwise_strategy, {1, 2, 2, 2}, "alpha"},
    Entry{"aten.mul.Tensor", pointwise_strategy, {1, 2, 2, 2}},
    Entry{"aten.div.Tensor", pointwise_strategy, {1, 2, 2, 2}},
    Entry{"aten.relu.default", pointwise_strategy, {1, 1, 1, 1}},
    Entry{"aten.gelu.default", pointwise_strategy, {1, 1, 1, 1}, "approximate"},
    Entry{"aten.silu.default", pointwise_strategy, {1, 1, 1, 1}},
    Entry{"aten.tanh.default", pointwise_strategy, {1, 1, 1, 1}},
    Entry{"aten.sum.default", reduction_strategy, {1, 1, 1, 1}, "dtype"},
    Entry{"aten.sum.dim_IntList", reduction_strategy, {1, 1, 2, 3}, "dtype"},
    Entry{"aten.mean.default", reduction_strategy, {1, 1, 1, 1}, "dtype"},
    Entry{"aten.mean.dim", reduction_strategy, {1, 1, 2, 3}, "dtype"},
    Entry{"aten.view.default", view_strategy, {1, 1, 2, 2}},
    Entry{"aten.reshape.default", view_strategy, {1, 1, 2, 2}},
    Entry{"aten.transpose.int", transpose_strategy, {1, 1, 3, 3}},
    Entry{"aten.t.default", transpose_strategy, {1, 1, 1, 1}},
};

const Entry* entry_of(std::string_view op) {
    for (const Entry& entry : kStrategies)
        if (entry.name == op)
            return &entry;
    return nullptr;
}

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
    const Entry* entry = entry_of(op);
    return entry == nullptr ? nullptr : entry->function;
}

std::optional<OpArity> op_arity(std::string_view op) {
    const Entry* entry = entry_of(op);
    return entry == nullptr ? std::nullopt : std::optional<OpArity>(entry->arity);
}

std::vector<std::string> keyword_only_arguments(std::string_view op) {
    std::vector<std::string> names;
    const Entry* entry = entry_of(op);
    if (entry == nullptr || entry->keywords.empty())
        return names;
    std::string_view rest = entry->keywords;
    while (!rest.empty()) {
        const std::size_t comma = rest.find(',');
        names.emplace_back(rest.substr(0, comma));
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    return names;
}

std::vector<std::string> registered_ops() {
    std::vector<std::string> names;
    for (const Entry& entry : kStrategies)
        names.emplace_back(entry.name);
    return names;
}

std::string resolve_overload(const std::string& op, std::size_t arguments) {
    if (find_strategy(op) != nullptr)
        return op;
    if (op == "aten.sum")
        return arguments > 1 ? "aten.sum.dim_IntList" : "aten.sum.default";
    if (op == "aten.mean")  // as torch dispatches mean(x) and mean(x, dims)
        return arguments > 1 ? "aten.mean.dim" : "aten.mean.default";
    for (const Entry& entry : kStrategies)
        if (entry.name.starts_with(op + ".") &&
            entry.name.find('.', op.size() + 1) == std::string_view::npos)
            return std::string(entry.name);
    return op;
}

}  // namespace pipelens::sharding
