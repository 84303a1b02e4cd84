// Parameters used by layers of more than one stage (tied weights, e.g. an embedding reused as
// the output projection) are replicated, upstream's MultiUseParameterConfig.REPLICATE: every
// rank holding one of those stages keeps its own copy. After the backward, the ranks holding
// copies add up their gradients, so every copy ends with the gradient the single model's one
// parameter would have.
//
// Invariants: ids follow the order parameters first appear in the layer list, which every rank
// builds identically, so ranks agree on ids without talking; stages on one rank share one
// copy (its gradient already sums their contributions).
#pragma once

#include <chrono>
#include <vector>

#include "engine/runtime/model_library.hpp"
#include "engine/runtime/transport.hpp"
#include "engine/schedule/schedule.hpp"
#include "engine/stage_plan/stage_split.hpp"

namespace pipelens::runtime {

struct SharedParameter {
    int id = 0;
    torch::Tensor copy;            // this rank's
    std::vector<int> owner_ranks;  // ascending, more than one
};

// The shared parameters this rank holds a copy of.
std::vector<SharedParameter> find_shared_parameters(const PipelineModel& model,
                                                    const std::vector<StageLayers>& stages,
                                                    const Schedule& lowered, int rank);

// Sends this rank's gradient of each shared parameter to the other owners and adds theirs.
// Message tags are tag_base + id.
void sum_shared_gradients(const std::vector<SharedParameter>& shared, int rank,
                          Transport& transport, int tag_base, std::chrono::milliseconds timeout);

}  // namespace pipelens::runtime
