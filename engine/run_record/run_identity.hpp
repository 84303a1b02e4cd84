// What every rank of one run must have been started with alike. Ranks started by hand (or by
// torchrun) each read their own flags: a rank given another --m, --hidden or --dtype would send
// messages of sizes its peer never posted, which gloo answers by aborting the process, and one
// given another --steps would wait at a barrier the others never reach. Rank 0 compares every
// rank's identity with its own before anything computes (engine/runtime/pipeline_run.cpp).
//
// Invariant: only what shapes the messages, the schedule or the ranks' meeting points is in the
// identity; what a rank may set for itself (faults, timeouts, threads, its device, --out) is not.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/run_record/run_result.hpp"
#include "engine/schedule/schedule.hpp"

namespace pipelens::run_record {

nlohmann::ordered_json run_identity(const PipelineRunOptions& options, const Schedule& lowered);

// The first setting in which `theirs` differs from `mine`, as "--m 8" against "--m 4" (the
// flag and its value on each side); none when they agree.
struct IdentityDifference {
    std::string theirs;
    std::string mine;
};
std::optional<IdentityDifference> identity_difference(const nlohmann::ordered_json& mine,
                                                      const nlohmann::ordered_json& theirs);

}  // namespace pipelens::run_record
