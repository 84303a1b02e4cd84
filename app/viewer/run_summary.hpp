// The figures a person reads first about a run — step time, bubble share, peak memory, the
// busiest rank, where the critical path's time goes — and the per-rank table's rows, computed
// from the model with no GUI, so the header strip, the Ranks panel and tests share one source.
//
// Invariant: figures a run did not record are absent (std::nullopt), never shown as zero: a run
// without memory samples has no peak, not a peak of 0 B.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/viewer/timeline_model.hpp"

namespace pipelens::viewer {

struct RankRow {
    int rank = 0;
    std::int64_t busy_ns = 0;
    std::int64_t warmup_ns = 0;
    std::int64_t cooldown_ns = 0;
    std::int64_t waiting_ns = 0;
    std::optional<std::int64_t> peak_memory_bytes;
    int waited_most_on = -1;  // the peer this rank waited on longest; -1 when none
};

struct RunSummary {
    std::int64_t step_ns = 0;
    std::optional<double> bubble_ratio;
    std::optional<std::int64_t> peak_memory_bytes;
    int peak_memory_rank = -1;
    int busiest_rank = -1;  // the rank with the most compute: the one that bounds the step
    std::vector<RankRow> ranks;
};

RunSummary summarize(const TimelineModel& model);

// "step 57.0 us · bubble 18.2% · peak 3.1 MiB (rank 0) · busiest rank 3"
std::string summary_text(const RunSummary& summary);
// "critical path: F 33% · B 67%" (shares of at least 1%), or why there is none.
std::string critical_path_text(const TimelineModel& model);

}  // namespace pipelens::viewer
