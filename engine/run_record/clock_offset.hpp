// Putting every rank of a real run on one clock. Ranks on one host share CLOCK_MONOTONIC, but
// ranks on other hosts do not, and each rank's own time zero (its exit from the step's barrier)
// differs from rank 0's by however long the barrier took to release it. So a rank asks rank 0
// for the time a few times (ping-pong over the transport) and places its times on rank 0's
// clock; what the exchanges cannot tell apart (how the round trip splits into the two
// directions) is kept as the offset's uncertainty.
//
// Invariant: the true offset lies within offset_ns ± uncertainty_ns as long as the clocks do not
// drift apart during the exchanges and no message arrives before it was sent. Torch-free.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

namespace pipelens::run_record {

// One exchange: the asking rank's clock when it asked and when the answer came back, and the
// answering rank's clock when the question arrived and when it answered.
struct ClockExchange {
    std::int64_t asked_ns = 0;
    std::int64_t question_received_ns = 0;  // answering rank's clock
    std::int64_t answered_ns = 0;           // answering rank's clock
    std::int64_t answer_received_ns = 0;
};

// A rank's clock: the host's steady clock, plus a skew that only the `rankN=clock:` fault sets
// (processes on one host share their clock, so a test has to put one off on purpose).
struct RankClock {
    std::int64_t skew_ns = 0;
    std::int64_t now_ns() const { return at(std::chrono::steady_clock::now()); }
    std::int64_t at(std::chrono::steady_clock::time_point time) const {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch())
                   .count() +
               skew_ns;
    }
};

// Which monotonic clock this process reads: the boot it counts from (Linux's boot_id, shared by
// every process and container of one boot), else the host's name.
std::string host_clock_id();

// The answering rank's clock minus the asking rank's clock.
struct ClockOffset {
    std::int64_t offset_ns = 0;
    std::int64_t uncertainty_ns = 0;  // the true offset is within offset_ns ± this
};

class ClockExchangeError : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

// Each exchange bounds the offset to [answered - answer_received, question_received - asked]
// (neither message can take negative time); the estimate is the middle of the intersection of
// all the bounds. When the bounds do not intersect (a clock stepped meanwhile), the exchange
// with the shortest round trip alone decides. Throws ClockExchangeError for no exchanges or one
// whose answer came back before it was asked, or was sent before its question arrived.
ClockOffset estimate_clock_offset(std::span<const ClockExchange> exchanges);

// Where a rank's time zero lies on the run's clock (rank 0's time zero is 0): the rank's zero on
// its own clock, moved onto rank 0's clock by the offset, minus rank 0's zero.
inline std::int64_t zero_on_run_clock(std::int64_t own_zero_ns, const ClockOffset& to_rank_zero,
                                      std::int64_t rank_zero_zero_ns) {
    return own_zero_ns + to_rank_zero.offset_ns - rank_zero_zero_ns;
}

}  // namespace pipelens::run_record
