// DTensorSpec: a tensor's global metadata, the mesh it lives on and one placement per mesh dim.
// Printing follows upstream: `Spec(f32[1024, 512](S(1)))`; a tensor dim sharded on several
// mesh dims carries the order: `Spec(f32[8, 8](S(0)[0]S(0)[1]))` — except in a spec with a
// strided shard, whose split factors stand for the order (upstream main since February 2026
// leaves its shard_order unset and prints `_S(0, 2)S(0)`).
//
// Invariant: placements.size() == mesh.ndim().
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/sharding/device_mesh.hpp"
#include "engine/sharding/placement.hpp"
#include "engine/tensor/tensor_meta.hpp"

namespace pipelens::sharding {

struct DTensorSpec {
    DeviceMesh mesh;
    std::vector<Placement> placements;
    TensorMeta tensor;

    // Devices each shard is split over: the product of the mesh sizes of the shard placements.
    int num_shards() const;
    int shards_of_dim(int tensor_dim) const;
    bool is_replicated() const;
    bool has_partial() const;
    bool has_strided_shard() const;
    friend bool operator==(const DTensorSpec&, const DTensorSpec&) = default;
};

std::string to_string(const DTensorSpec& spec);

// Upstream's is_tensor_shardable: every sharded dim exists and has at least as many elements
// as shards (uneven sharding is allowed, empty shards are not); a _S(d, f) needs f times the
// shards counted up to its mesh dim, as each of its f pieces is split again.
bool is_shardable(const std::vector<std::int64_t>& shape, const DTensorSpec& spec);
// Why not ("" when it is): "has no dim 3", "dim 0 has 2 elements for 4 shards", ...
std::string why_unshardable(const std::vector<std::int64_t>& shape, const DTensorSpec& spec);

// A tensor as typed on the command line: "f32[1024,512](S(1))" or "f32[8,8](S(0)S(1))"
// (without placements: replicated). std::invalid_argument naming the text, also for a shape
// whose element or byte count does not fit in int64.
DTensorSpec parse_tensor_spec(std::string_view text, const DeviceMesh& mesh);

// The element count of a shape of non-negative sizes, or nullopt when it overflows int64 (a
// wrapped count could pass as a small, wrong one) or when the shape's contiguous strides would:
// a size 0 makes the count 0 however large the other sizes are, but the strides multiply every
// size after a dim (sizes 0 counting as 1), so [0, 2^62, 4] is refused too.
std::optional<std::int64_t> checked_element_count(const std::vector<std::int64_t>& shape);

// A shape no tensor can have (a negative size, a count that overflows int64): bad input, which
// propagation passes on as it is instead of reporting it as an op it cannot shard.
class ImpossibleShapeError : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

}  // namespace pipelens::sharding
