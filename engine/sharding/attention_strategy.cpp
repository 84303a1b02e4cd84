// aten._scaled_dot_product_flash_attention(query, key, value, dropout_p, is_causal,
// return_debug_mask, scale): all-Replicate, heads sharded (dim 1), batch sharded (dim 0). Its
// outputs are upstream's nine: output, logsumexp, cum_seq_q, cum_seq_k, max_q, max_k, rng_state,
// unused, debug_attn_mask — the ones that are not tensors print as None. The debug mask
// (batch, heads, query length, key length) follows the heads or batch split when
// return_debug_mask (argument 5) is true; otherwise it is an empty tensor and stays replicated.
#include "engine/sharding/op_strategies.hpp"
#include "engine/sharding/strategy_utils.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace pipelens::sharding {
namespace {

bool returns_debug_mask(const OpSchema& schema) {
    if (schema.arguments.size() < 6)
        return false;
    const auto* value = std::get_if<OpValue>(&schema.arguments[5]);
    return value != nullptr && value->text == "True";
}

// Query [B, H, L, E], key [B, H, S, E] and value [B, H, S, Ev], as the kernel checks them: a
// key of another head dim, or a value of another length than the key, is no attention.
void require_attention_shapes(const OpCall& call) {
    const auto& query = call.input(0).tensor.shape;
    const auto& key = call.input(1).tensor.shape;
    const auto& value = call.input(2).tensor.shape;
    const auto text = [](const std::vector<std::int64_t>& shape) {
        return fmt::format("[{}]", fmt::join(shape, ", "));
    };
    if (key.size() != 4 || value.size() != 4 || key[0] != query[0] || value[0] != query[0] ||
        key[1] != query[1] || value[1] != query[1] || key[3] != query[3] || value[2] != key[2])
        throw MalformedArgumentError(fmt::format(
            "{}: query {}, key {} and value {} do not fit: they are [batch, heads, length, head "
            "dim] with one batch and head count, the key's head dim the query's, the value's "
            "length the key's",
            call.schema.op, text(query), text(key), text(value)));
}

}  // namespace

OpStrategy flash_attention_strategy(const OpCall& call) {
    const DTensorSpec& query = call.input(0);
    if (query.tensor.shape.size() != 4)
        throw MalformedArgumentError(
            fmt::format("{}: query has {} dims; it needs 4 (batch, heads, sequence, head dim)",
                        call.schema.op, query.tensor.shape.size()));
    const auto& shape = query.tensor.shape;
    require_attention_shapes(call);
    const bool debug_mask = returns_debug_mask(call.schema);
    const std::optional<Placement> none;
    const Placement replicate = Placement::replicate();
    std::vector<MeshDimChoice> choices;
    for (const std::optional<Placement>& sharded :
         {std::optional<Placement>(replicate), std::optional(Placement::shard(1)),
          std::optional(Placement::shard(0))})
        choices.push_back({sharded, sharded, none, none, none, none, replicate, none,
                           debug_mask ? sharded : replicate, sharded, sharded, sharded});
    std::vector<std::optional<TensorMeta>> outputs(9);
    outputs[0] = query.tensor;
    outputs[1] = meta_of_shape({shape[0], shape[1], shape[2]}, "f32");
    outputs[6] = meta_of_shape({2}, "i64");
    const std::int64_t key_length =
        call.input(1).tensor.shape.size() == 4 ? call.input(1).tensor.shape[2] : shape[2];
    outputs[8] = debug_mask
                     ? meta_of_shape({shape[0], shape[1], shape[2], key_length}, query.tensor.dtype)
                     : meta_of_shape({}, query.tensor.dtype);
    return expand_to_full_mesh(call.mesh, call.inputs, choices, outputs, 9);
}

}  // namespace pipelens::sharding
