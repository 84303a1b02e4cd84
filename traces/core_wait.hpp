// What a rank's wait for a core (ranks.core_wait_ns, schema.sql) says about its times. A rank
// that waited for a core during its step ran slower than the pipeline would on cores of its own,
// so its measured times, and any costs calibrated from them, hold the scheduler's waits. The
// share is of the step the wait was measured in (a rank also waits for a core after a receive
// wakes it, so its busy time is no bound); one threshold, used by every report and by
// `calibrate`, says when the waits are large enough to name.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "traces/trace_records.hpp"

namespace pipelens::traces {

// Above this share of the step a rank's wait for cores is named as a distortion.
inline constexpr double kCoreWaitNotable = 0.05;

// The rank's wait over the step time; none where the wait was not measured or the run has no
// step.
inline std::optional<double> core_wait_share(const RankRecord& rank, std::int64_t step_ns) {
    if (!rank.core_wait_ns || step_ns <= 0)
        return std::nullopt;
    return static_cast<double>(*rank.core_wait_ns) / static_cast<double>(step_ns);
}

// The ranks whose wait for cores is notable, in rank order.
inline std::vector<RankRecord> ranks_waiting_for_cores(const std::vector<RankRecord>& ranks,
                                                       std::int64_t step_ns) {
    std::vector<RankRecord> waiting;
    for (const RankRecord& rank : ranks)
        if (const std::optional<double> share = core_wait_share(rank, step_ns);
            share && *share > kCoreWaitNotable)
            waiting.push_back(rank);
    return waiting;
}

}  // namespace pipelens::traces
