// Whole blocks propagated op by op, each op's inputs being what earlier ops chose to produce:
//   mlp        x @ W1 (W1 column-wise on tp) -> gelu -> @ W2 (W2 row-wise on tp): the
//              Megatron MLP, ending Partial(sum) on tp
//   attention  q/k/v projections column-wise, view to heads, transpose, flash attention
//              (batch on dp, heads on tp), back to tokens, output projection row-wise
//   embedding  a row-wise sharded embedding table (masked partial), plus positions
// Inputs are sharded on the batch over the mesh dim named `dp` (else the first of two) and
// weights over the dim named `tp` (else the last).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/sharding/sharding_propagation.hpp"

namespace pipelens::sharding {

std::vector<std::string> block_names();  // mlp, attention, embedding

// The sizes a block's tensors take: batch x sequence tokens of width hidden, MLP width 4 x
// hidden, `heads` attention heads. The defaults are a small example; a planner gives a
// model's own.
struct BlockShape {
    std::int64_t batch = 8;
    std::int64_t sequence = 128;
    std::int64_t hidden = 512;
    std::int64_t heads = 8;
    std::int64_t vocabulary = 32000;
    std::string dtype = "f32";
};

// std::invalid_argument for an unknown block or a shape whose hidden size does not divide by
// its heads; ShardingError when an op cannot be propagated.
std::vector<ShardingDecision> propagate_block(const std::string& block, const DeviceMesh& mesh,
                                              const BlockShape& shape = {});

}  // namespace pipelens::sharding
