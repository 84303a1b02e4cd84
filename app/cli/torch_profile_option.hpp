// `run --torch-profile DIR`: where each rank's LibTorch profile goes (engine/runtime/
// torch_profile.hpp writes it), checked and made before any rank starts writing.
//
// Invariants: ranks that are threads of one process are refused (LibTorch's profiler is one per
// process); the directory exists, with its parents, once this returns; the files named are the
// ones the ranks write (torch_profile_path, one rule for both).
#pragma once

#include <string>
#include <vector>

namespace pipelens::cli {

// `directory` made (as `mkdir -p`) for a run of `rank_count` ranks over `transport`; "" when no
// profile was asked for. Throws ExperimentError naming the option and why.
std::string make_torch_profile_directory(const std::string& directory, const std::string& transport,
                                         int rank_count);

// The profiles the ranks of a world of `world_size` wrote into `directory`: the files that are
// there and not empty (none when "").
std::vector<std::string> torch_profile_files(const std::string& directory, int world_size);

}  // namespace pipelens::cli
