// `run --profile`, link side: the one-way time between pipeline neighbours for messages of
// several sizes, measured by ping-pong over the run's own transport (half of each round trip),
// so calibration can fit latency + bytes / bandwidth instead of taking one median.
//
// Invariants: every rank calls it with the same sizes; rank r and r + 1 exchange in two phases
// (even pairs, then odd pairs) so no rank talks to two peers at once; each link appears once in
// the result, reported by its lower rank, with peer = the higher one.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "engine/run_record/run_result.hpp"
#include "engine/runtime/transport.hpp"

namespace pipelens::runtime {

inline constexpr int kLinkWarmupExchanges = 2;
inline constexpr int kLinkTimedExchanges = 15;

// Tags used from `tag_base` on: one per message.
int link_profile_tag_count(std::size_t size_count);

std::vector<run_record::ProfileFigure> profile_links(Transport& transport, int tag_base,
                                                     const std::vector<std::int64_t>& sizes,
                                                     std::chrono::milliseconds timeout);

// Three sizes around a stage boundary's message: a quarter (at least 1 KiB), itself, sixteen
// times (at most 64 MiB).
std::vector<std::int64_t> link_profile_sizes(std::int64_t boundary_bytes);

}  // namespace pipelens::runtime
