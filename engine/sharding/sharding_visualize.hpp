// Which device holds which part of a tensor, as a text grid in the spirit of upstream's
// visualize_sharding: for a 1-D or 2-D tensor, one cell per distinct block of rows x columns,
// listing the devices that hold it (several when replicated; marked when partial).
//
// What a device holds follows upstream's _compute_local_shape_and_global_offset: the mesh dims
// are applied one at a time, outermost first, each cutting what the earlier ones left (so an
// uneven S(0)S(0) is chunked per mesh dim, not as one product), and a strided shard _S(d, f)
// keeps its chunk of each of f pieces. Those indices need not be consecutive (_S(0, 2) alone
// holds rows 0-1 and 4-5 of 8); a cell then lists each run, where upstream's drawing labels it
// with its first offset and local size as if they were.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/sharding/dtensor_spec.hpp"

namespace pipelens::sharding {

// The most devices a drawing shows.
inline constexpr int kLargestDrawnMesh = 4096;
// The most separate runs of indices one device's part of a dim may have to be described.
inline constexpr std::size_t kMostIndexRuns = 16;

// Consecutive indices [begin, end) of one tensor dim.
struct IndexRun {
    std::int64_t begin = 0;
    std::int64_t end = 0;
    auto operator<=>(const IndexRun&) const = default;
};

// The indices of `tensor_dim` the device at `coordinate` holds, in its local order, adjacent runs
// merged; empty when it holds none. std::invalid_argument past kMostIndexRuns runs.
std::vector<IndexRun> held_indices(const DTensorSpec& spec, const std::vector<int>& coordinate,
                                   int tensor_dim);

// Upstream's local shape and global offset of one device: per dim the indices it holds and the
// first of them (the dim's size when it holds none, upstream's offset of an empty shard).
struct LocalShard {
    std::vector<std::int64_t> shape;
    std::vector<std::int64_t> offset;
};
LocalShard local_shard(const DTensorSpec& spec, const std::vector<int>& coordinate);

// std::invalid_argument for tensors of more than two dims, or meshes of more than
// kLargestDrawnMesh devices.
std::string visualize_sharding(const DTensorSpec& spec);

}  // namespace pipelens::sharding
