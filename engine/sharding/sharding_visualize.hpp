// Which device holds which part of a tensor, as a text grid in the spirit of upstream's
// visualize_sharding: for a 1-D or 2-D tensor, one cell per distinct block of rows x columns,
// listing the devices that hold it (several when replicated; marked when partial).
#pragma once

#include <string>

#include "engine/sharding/dtensor_spec.hpp"

namespace pipelens::sharding {

// The most devices a drawing shows.
inline constexpr int kLargestDrawnMesh = 4096;

// std::invalid_argument for tensors of more than two dims, or meshes of more than
// kLargestDrawnMesh devices.
std::string visualize_sharding(const DTensorSpec& spec);

}  // namespace pipelens::sharding
