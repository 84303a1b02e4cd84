// Placement: how one mesh dimension lays a tensor out, as DTensor's placement types do —
// Shard(dim) splits tensor dim `dim` across the mesh dim, Replicate keeps a full copy on every
// device, Partial holds a partial value that a reduction (sum, avg, max, min) completes, and a
// strided shard is a Shard whose chunks interleave with another mesh dim's (split_factor).
// A masked partial is embedding's row-wise output: each device looked up only the rows it
// holds, zeros elsewhere, and a sum completes it. Short forms follow upstream: `S(0)`, `R`,
// `P(sum)`, `_S(0, 2)`, `MaskP(sum, torch.Size([16, 8]), 0)`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pipelens::sharding {

enum class PlacementKind { shard, strided_shard, replicate, partial, mask_partial };

struct Placement {
    PlacementKind kind = PlacementKind::replicate;
    int dim = 0;                    // shard, strided_shard
    int split_factor = 1;           // strided_shard
    std::string reduce_op = "sum";  // partial: sum, avg, max, min
    // mask_partial (embedding row-wise): the weight rows each device holds, as the shape of
    // the sharded weight and the dim it is sharded on.
    std::vector<std::int64_t> offset_shape;
    int offset_dim = 0;

    static Placement shard(int dim) { return {PlacementKind::shard, dim, 1, "sum", {}, 0}; }
    static Placement strided_shard(int dim, int split_factor) {
        return {PlacementKind::strided_shard, dim, split_factor, "sum", {}, 0};
    }
    static Placement replicate() { return {}; }
    static Placement partial(std::string reduce_op = "sum") {
        return {PlacementKind::partial, 0, 1, std::move(reduce_op), {}, 0};
    }
    static Placement mask_partial(std::vector<std::int64_t> offset_shape, int offset_dim) {
        return {PlacementKind::mask_partial, 0, 1, "sum", std::move(offset_shape), offset_dim};
    }

    bool is_shard() const {
        return kind == PlacementKind::shard || kind == PlacementKind::strided_shard;
    }
    bool is_shard(int tensor_dim) const { return is_shard() && dim == tensor_dim; }
    bool is_replicate() const { return kind == PlacementKind::replicate; }
    bool is_partial() const {
        return kind == PlacementKind::partial || kind == PlacementKind::mask_partial;
    }

    friend bool operator==(const Placement& left, const Placement& right);
};

// "S(0)", "R", "P(sum)", "_S(0, 2)".
std::string to_string(const Placement& placement);
// One mesh dim after another, no separator: "S(0)R", "RS(1)".
std::string to_string(const std::vector<Placement>& placements);

// Reads the short forms back ("S(0)R", "P(avg)S(1)"); std::invalid_argument naming the text.
std::vector<Placement> parse_placements(std::string_view text);

}  // namespace pipelens::sharding
