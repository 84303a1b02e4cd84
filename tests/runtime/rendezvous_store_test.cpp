// The rendezvous store the multi-process transports meet through, as threads of this process
// over loopback: rank 0 serves it and stays after an abort until the others have read why, and
// a rank waiting for a reason takes only one some rank recorded.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <thread>

#include "app/cli/rendezvous_port.hpp"
#include "engine/runtime/rendezvous_store.hpp"

namespace pipelens::runtime {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Rank 0 and rank 1 of a real store over loopback, as threads of this process.
struct TwoStoreRanks {
    Rendezvous zero;
    Rendezvous one;
    TwoStoreRanks() {
        zero.master_port = cli::rendezvous_port();
        zero.world_size = 2;
        zero.timeout = milliseconds(10'000);
        one = zero;
        one.rank = 1;
    }
};

// Rank 0 serves the store; a rank that looks only after rank 0 has left reads "lost the store"
// and never learns why. Here rank 1 looks 300 ms after rank 0 aborted: it must read the reason.
TEST(RendezvousStoreTest, RankZeroStaysUntilTheOtherRanksHaveReadWhyItAborted) {
    const TwoStoreRanks ranks;
    const std::string reason = "rank 0: both ranks use CUDA device 0 (injected by the test)";
    std::promise<void> one_met;  // so that rank 1's meeting does not read the abort already
    auto zero = std::async(std::launch::async, [&] {
        RendezvousStore store(ranks.zero, "nccl transport");
        one_met.get_future().wait();
        store.abort(reason);
        return store.linger_until_abort_seen(milliseconds(10'000));
    });
    RendezvousStore one(ranks.one, "nccl transport");
    one_met.set_value();
    std::this_thread::sleep_for(milliseconds(300));
    std::string error;
    try {
        one.wait_for("pipelens/nccl_device/0", "the device of rank 0", milliseconds(10'000));
    } catch (const TransportAborted& aborted) {
        error = aborted.what();
    }
    EXPECT_TRUE(zero.get());
    EXPECT_EQ(error, reason);
    EXPECT_EQ(one.known_abort_reason(), reason);
}

TEST(RendezvousStoreTest, RankZeroLingersNoLongerThanItsBoundForARankThatNeverLooks) {
    const TwoStoreRanks ranks;
    // Rank 0 aborts once rank 1 has met (rank 1 meeting reads an abort already there, and would
    // have looked), and rank 1 never looks again.
    std::promise<void> one_met;
    auto zero = std::async(std::launch::async, [&] {
        RendezvousStore store(ranks.zero, "nccl transport");
        one_met.get_future().wait();
        store.abort("rank 0: failed (injected by the test)");
        return store.linger_until_abort_seen(milliseconds(200));
    });
    RendezvousStore one(ranks.one, "nccl transport");
    one_met.set_value();
    EXPECT_FALSE(zero.get());
}

TEST(RendezvousStoreTest, OnlyRankZeroAfterAnAbortLingers) {
    const TwoStoreRanks ranks;
    // Rank 0 serves the store until rank 1 has met (a rank 0 gone at once left rank 1 reading a
    // lost store while it checked the world sizes: not what is tested here).
    std::promise<void> one_met;
    auto zero = std::async(std::launch::async, [&] {
        RendezvousStore store(ranks.zero, "nccl transport");
        const bool seen = store.linger_until_abort_seen(milliseconds(10'000));  // nothing aborted
        one_met.get_future().wait();
        return seen;
    });
    {
        RendezvousStore one(ranks.one, "nccl transport");
        one_met.set_value();
        EXPECT_TRUE(one.linger_until_abort_seen(milliseconds(10'000)));
    }
    EXPECT_TRUE(zero.get());
}

// A rank whose own wait ended just before rank 0 gave up waits a little for rank 0's reason:
// one recorded within the grace is taken, none is nullopt once the grace is over.
TEST(RendezvousStoreTest, ARecordedReasonIsWaitedForWithinTheGraceOnly) {
    const TwoStoreRanks ranks;
    const std::string reason = "rank 0 gave up the rendezvous (injected by the test)";
    std::promise<void> one_looked;  // once, before rank 0 records its reason
    std::promise<void> one_done;
    auto zero = std::async(std::launch::async, [&] {
        RendezvousStore store(ranks.zero, "gloo transport");
        one_looked.get_future().wait();
        std::this_thread::sleep_for(milliseconds(300));
        store.abort(reason);
        one_done.get_future().wait();
    });
    RendezvousStore one(ranks.one, "gloo transport");
    EXPECT_EQ(one.recorded_abort_reason(milliseconds(0)), std::nullopt);
    one_looked.set_value();
    EXPECT_EQ(one.recorded_abort_reason(milliseconds(10'000)), reason);
    one_done.set_value();
    zero.get();
}

// A store that is gone is nobody's reason: the caller keeps its own error, where abort_reason()
// reads the lost store as the reason.
TEST(RendezvousStoreTest, ALostStoreIsNoRecordedReason) {
    const TwoStoreRanks ranks;
    std::promise<void> one_met;
    auto zero = std::async(std::launch::async, [&] {
        RendezvousStore store(ranks.zero, "gloo transport");
        one_met.get_future().wait();
    });
    RendezvousStore one(ranks.one, "gloo transport");
    one_met.set_value();
    zero.get();  // rank 0's store is gone
    const auto started = Clock::now();
    EXPECT_EQ(one.recorded_abort_reason(milliseconds(10'000)), std::nullopt);
    EXPECT_LT(Clock::now() - started, milliseconds(5'000));  // not the whole grace
    const std::optional<std::string> lost = one.abort_reason();
    ASSERT_TRUE(lost);
    EXPECT_NE(lost->find("lost the rendezvous store"), std::string::npos) << *lost;
}

}  // namespace
}  // namespace pipelens::runtime
