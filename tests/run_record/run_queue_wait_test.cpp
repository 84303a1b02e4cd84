// The run-queue delay: parsed exactly from schedstat's text, refused when the text is not such a
// line, and real: two threads kept busy on one core each wait for it while the other runs.
#include <gtest/gtest.h>

#include <sched.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "engine/run_record/run_queue_wait.hpp"

namespace pipelens::run_record {
namespace {

TEST(RunQueueWait, TheSecondFieldOfSchedstatIsTheDelay) {
    EXPECT_EQ(parse_run_queue_delay("456046157 563929649 128\n"), 563929649);
    // A thread just started: given a core once, its time on it not yet added up.
    EXPECT_EQ(parse_run_queue_delay("0 0 1"), 0);
    // A kernel with the figure turned off writes zeros: not measured, not "never waited".
    EXPECT_EQ(parse_run_queue_delay("0 0 0"), std::nullopt);
    EXPECT_EQ(parse_run_queue_delay("12 7"), std::nullopt);
    EXPECT_EQ(parse_run_queue_delay("12  7 3"), 7);
    EXPECT_EQ(parse_run_queue_delay(""), std::nullopt);
    EXPECT_EQ(parse_run_queue_delay("12"), std::nullopt);
    EXPECT_EQ(parse_run_queue_delay("12 x 3"), std::nullopt);
    EXPECT_EQ(parse_run_queue_delay("12 -5 3"), std::nullopt);
}

// What one thread waited while it and another spun on the same core for `spin`.
std::optional<std::int64_t> waited_sharing_one_core(std::chrono::milliseconds spin) {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return std::nullopt;
    int first = 0;
    while (!CPU_ISSET(first, &allowed))
        ++first;
    cpu_set_t one_core;
    CPU_ZERO(&one_core);
    CPU_SET(first, &one_core);
    std::optional<std::int64_t> waited;
    const auto busy = [&](bool measure) {
        sched_setaffinity(0, sizeof one_core, &one_core);  // this thread only
        const RunQueueWait wait;
        const std::optional<std::int64_t> before = wait.waited_ns();
        const auto until = std::chrono::steady_clock::now() + spin;
        std::atomic<std::int64_t> spins = 0;
        while (std::chrono::steady_clock::now() < until)
            spins.fetch_add(1, std::memory_order_relaxed);
        const std::optional<std::int64_t> after = wait.waited_ns();
        if (measure && before && after)
            waited = *after - *before;
        sched_setaffinity(0, sizeof allowed, &allowed);  // the test's thread runs on
    };
    std::thread other(busy, false);
    busy(true);
    other.join();
    return waited;
}

TEST(RunQueueWait, AThreadSharingItsCoreWaitsForIt) {
    if (!RunQueueWait().waited_ns())
        GTEST_SKIP() << "this kernel keeps no run-queue delay (/proc/thread-self/schedstat)";
    const std::optional<std::int64_t> waited =
        waited_sharing_one_core(std::chrono::milliseconds(300));
    ASSERT_TRUE(waited.has_value());
    // The scheduler shares the core between the two: each waits for a good part of the time the
    // other runs (a tenth of it at least, whatever the time slice).
    EXPECT_GT(*waited, 30'000'000);
}

}  // namespace
}  // namespace pipelens::run_record
