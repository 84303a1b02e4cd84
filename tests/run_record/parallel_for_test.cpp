// The worker loop: every item once, never more threads running items than asked, progress on the
// calling thread, and the exception of the lowest failing item, as a plain loop would throw it,
// however the threads' timing falls.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/run_record/parallel_for.hpp"
#include "engine/run_record/thread_budget.hpp"
#include "tests/thrown_message.hpp"

namespace pipelens::run_record {
namespace {

using namespace std::chrono_literals;

// The message of what `loop` throws, or "" when it throws nothing.
template <typename Loop>
std::string thrown_by(const Loop& loop) {
    return testing::thrown_message<std::exception>(loop, "");
}

TEST(WorkerCount, TheRequestCappedByTheItemsAndAtLeastOne) {
    EXPECT_EQ(worker_count(10, 3), 3u);
    EXPECT_EQ(worker_count(2, 8), 2u);
    EXPECT_EQ(worker_count(0, 4), 1u);
    EXPECT_EQ(worker_count(1, 1), 1u);
    const auto cores = static_cast<unsigned>(available_cores());
    EXPECT_EQ(worker_count(1000, 0), std::min(1000u, cores));
    EXPECT_EQ(worker_count(1, 0), 1u);
}

TEST(ParallelFor, EveryItemRunsExactlyOnce) {
    for (const unsigned workers : {1u, 2u, 3u, 8u}) {
        std::vector<std::atomic<int>> runs(1000);
        parallel_for(runs.size(), workers, [&](std::size_t item) { ++runs[item]; });
        EXPECT_TRUE(std::all_of(runs.begin(), runs.end(), [](const auto& n) { return n == 1; }))
            << workers << " workers";
    }
    parallel_for(0, 4, [](std::size_t) { FAIL() << "no items, no calls"; });
}

// Items that overlap in time (each sleeps) show how many threads run at once.
TEST(ParallelFor, NeverMoreThreadsRunItemsThanAsked) {
    for (const bool with_progress : {false, true}) {
        std::atomic<int> active{0};
        std::atomic<int> most{0};
        std::mutex lock;
        std::set<std::thread::id> threads;
        const auto work = [&](std::size_t) {
            const int now = ++active;
            int seen = most.load();
            while (now > seen && !most.compare_exchange_weak(seen, now)) {
            }
            {
                const std::lock_guard guard(lock);
                threads.insert(std::this_thread::get_id());
            }
            std::this_thread::sleep_for(2ms);
            --active;
        };
        parallel_for(24, 3, work, with_progress ? ItemProgress([](std::size_t) {}) : nullptr);
        EXPECT_LE(most.load(), 3) << "progress: " << with_progress;
        EXPECT_LE(threads.size(), 3u) << "progress: " << with_progress;
        EXPECT_GE(threads.size(), 1u);
        if (with_progress) {  // the caller only waits
            EXPECT_EQ(threads.count(std::this_thread::get_id()), 0u);
        }
    }
}

TEST(ParallelFor, ProgressRunsOnTheCallingThreadAndEndsWithEveryItemDone) {
    std::vector<std::size_t> reported;
    const auto caller = std::this_thread::get_id();
    bool elsewhere = false;
    // The items hold until progress has been reported once (at most 10 s), so that a call
    // while they run is seen however late the caller's first wake-up comes.
    std::atomic<bool> reported_once{false};
    const auto started = std::chrono::steady_clock::now();
    parallel_for(
        40, 2,
        [&](std::size_t) {
            while (!reported_once && std::chrono::steady_clock::now() - started < 10s)
                std::this_thread::sleep_for(1ms);
        },
        [&](std::size_t done) {
            elsewhere = elsewhere || std::this_thread::get_id() != caller;
            reported.push_back(done);
            reported_once = true;
        });
    EXPECT_FALSE(elsewhere);
    ASSERT_GE(reported.size(), 2u);  // at least one call while the items ran, then the last
    EXPECT_EQ(reported.back(), 40u);
    EXPECT_TRUE(std::is_sorted(reported.begin(), reported.end()));
}

TEST(ParallelFor, OneWorkerStopsAtTheFailingItemLikeAPlainLoop) {
    std::vector<std::size_t> ran;
    const std::string error = thrown_by([&] {
        parallel_for(10, 1, [&](std::size_t item) {
            ran.push_back(item);
            if (item == 4 || item == 7)
                throw std::runtime_error("item " + std::to_string(item));
        });
    });
    EXPECT_EQ(error, "item 4");
    EXPECT_EQ(ran, (std::vector<std::size_t>{0, 1, 2, 3, 4}));
}

// Item 10 fails first in time, item 3 (slow) later: the loop still reports item 3 and runs
// every item before it.
TEST(ParallelFor, TheLowestFailingItemIsReportedWhateverFailsFirst) {
    for (int attempt = 0; attempt < 5; ++attempt) {
        std::vector<std::atomic<int>> runs(40);
        const std::string error = thrown_by([&] {
            parallel_for(runs.size(), 4, [&](std::size_t item) {
                ++runs[item];
                if (item == 3) {
                    std::this_thread::sleep_for(30ms);
                    throw std::runtime_error("item 3");
                }
                if (item == 10)
                    throw std::runtime_error("item 10");
            });
        });
        EXPECT_EQ(error, "item 3");
        for (std::size_t item = 0; item <= 10; ++item)
            EXPECT_EQ(runs[item], 1) << "item " << item;
    }
}

TEST(ParallelFor, AnExceptionFromProgressStopsTheLoopAndReachesTheCaller) {
    std::atomic<int> ran{0};
    std::atomic<bool> thrown{false};
    const auto started = std::chrono::steady_clock::now();
    const std::string error = thrown_by([&] {
        parallel_for(
            1000, 2,
            [&](std::size_t) {
                ++ran;
                // Held until progress has thrown (at most 10 s), however late the caller wakes.
                while (!thrown && std::chrono::steady_clock::now() - started < 10s)
                    std::this_thread::sleep_for(1ms);
                std::this_thread::sleep_for(1ms);  // the rest would take 500 ms
            },
            [&](std::size_t) {
                thrown = true;
                throw std::runtime_error("bar broke");
            });
    });
    EXPECT_EQ(error, "bar broke");
    EXPECT_LT(ran.load(), 1000);
}

TEST(ParallelForByWorker, EachItemNamesAWorkerBelowTheCountAndWorkerZeroIsTheCaller) {
    std::vector<unsigned> worker_of(100, 99);
    std::vector<std::thread::id> thread_of(100);
    parallel_for_by_worker(100, 3, [&](unsigned worker, std::size_t item) {
        worker_of[item] = worker;
        thread_of[item] = std::this_thread::get_id();
        std::this_thread::sleep_for(100us);
    });
    for (std::size_t item = 0; item < worker_of.size(); ++item) {
        EXPECT_LT(worker_of[item], 3u) << item;
        EXPECT_EQ(worker_of[item] == 0, thread_of[item] == std::this_thread::get_id()) << item;
    }
}

}  // namespace
}  // namespace pipelens::run_record
