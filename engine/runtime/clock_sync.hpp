// Measuring every rank's clock against rank 0's over the transport, after the measured step, so
// a real run's times are all on rank 0's clock (the estimate itself is run_record/clock_offset).
//
// Every rank calls it at the same point of the run. Rank 0 answers the other ranks in rank
// order, kClockExchanges questions each, and sends its time zero with each answer; the others
// ask. A rank that fails meanwhile aborts the transport, which ends every wait here too.
#pragma once

#include <chrono>

#include "engine/run_record/clock_offset.hpp"
#include "engine/runtime/transport.hpp"

namespace pipelens::runtime {

inline constexpr int kClockExchanges = 8;
// Message tags used, from the tag base on: a question and an answer per exchange.
inline constexpr int kClockTags = 2 * kClockExchanges;

struct ClockAlignment {
    run_record::ClockOffset to_rank_zero;  // rank 0: {0, 0}
    std::int64_t rank_zero_zero_ns = 0;    // rank 0's time zero, on rank 0's clock
};

// `own_zero_ns` is this rank's time zero on `clock`; rank 0's is what the others align to.
ClockAlignment align_clock_with_rank_zero(Transport& transport, int tag_base,
                                          const run_record::RankClock& clock,
                                          std::int64_t own_zero_ns,
                                          std::chrono::milliseconds timeout);

}  // namespace pipelens::runtime
