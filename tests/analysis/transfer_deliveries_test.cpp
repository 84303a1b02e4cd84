// Transfers as a timeline shows them, with exact values from a simulated 1F1B pp=2 m=4 (F 1000,
// B 2000, every transfer 100): each RECV meets the SEND the rules name; a receiver that reached
// its consumer before the send began sees the whole delivery, one still busy does not; and the
// runtime's own record (a RECV posted early and ended when its data was needed) gives the same
// deliveries wherever they were seen.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

#include "engine/analysis/transfer_deliveries.hpp"
#include "tests/analysis/simulated_run.hpp"

namespace pipelens::analysis {
namespace {

constexpr ScheduleShape kOneFOneB{ScheduleKind::one_f_one_b, 2, 1, 4};
using Bound = std::pair<std::int64_t, bool>;  // at most, seen

std::string text_of(const TimedSchedule& timed, ActionRef ref) {
    return timed.schedule.text(timed.schedule.ranks[ref.rank][ref.index]);
}

// "SEND -> RECV" for every transfer, with its bound and whether it was seen.
std::map<std::string, Bound> by_pair(const TimedSchedule& timed) {
    std::map<std::string, Bound> out;
    for (const TransferDelivery& delivery : transfer_deliveries(timed))
        out[text_of(timed, delivery.send) + " -> " + text_of(timed, delivery.receive)] = {
            delivery.at_most_ns, delivery.seen};
    return out;
}

TEST(TransferDeliveries, EachReceiveMeetsItsSendAndSeesItWhereItsRankWaited) {
    const auto sim = testing::simulate_run(kOneFOneB, testing::round_costs());
    const auto pairs = by_pair(sim.timed);
    // Rank 1 waits from the start for F0 and after 1B1 for F2; rank 0 waits after F1, B1 and
    // F3 for the gradients of B0, B2 and B3. Rank 1 is computing (1B0, 1B2) when F1 and F3
    // are sent, and rank 0 is computing 0F2 when B1's gradient is sent.
    const std::map<std::string, Bound> expected{
        {"0SEND_F0 -> 1RECV_F0", {100, true}}, {"0SEND_F1 -> 1RECV_F1", {100, false}},
        {"0SEND_F2 -> 1RECV_F2", {100, true}}, {"0SEND_F3 -> 1RECV_F3", {100, false}},
        {"1SEND_B0 -> 0RECV_B0", {100, true}}, {"1SEND_B1 -> 0RECV_B1", {100, false}},
        {"1SEND_B2 -> 0RECV_B2", {100, true}}, {"1SEND_B3 -> 0RECV_B3", {100, true}}};
    EXPECT_EQ(pairs, expected);
}

TEST(TransferDeliveries, AReceivePostedEarlyAndNeededLateIsABoundNotADelivery) {
    const auto sim = testing::simulate_run(kOneFOneB, testing::round_costs());
    const TimedSchedule recorded = testing::as_the_runtime_records(sim.timed);
    // 1RECV_F1 is posted at 2100 (after 1F0) and its data, sent at 2000, lands at 2100; 1F1
    // needs it only at 4200 (after 1B0 and 1SEND_B0): the RECV ends then, 2200 after the send.
    const ActionRef receive = testing::find_action(recorded, 1, "1RECV_F1");
    EXPECT_EQ(recorded.times[1][receive.index].start_ns, 2100);
    EXPECT_EQ(recorded.times[1][receive.index].end_ns, 4200);
    const auto pairs = by_pair(recorded);
    EXPECT_EQ(pairs.at("0SEND_F1 -> 1RECV_F1"), Bound(2200, false));
    // Where the receiver waited from before the send, the record shows the delivery itself.
    for (const char* seen : {"0SEND_F0 -> 1RECV_F0", "0SEND_F2 -> 1RECV_F2", "1SEND_B0 -> 0RECV_B0",
                             "1SEND_B2 -> 0RECV_B2", "1SEND_B3 -> 0RECV_B3"})
        EXPECT_EQ(pairs.at(seen), Bound(100, true)) << seen;
}

TEST(TransferDeliveries, ATransferCarriesItsSendsBytes) {
    auto sim = testing::simulate_run(kOneFOneB, testing::round_costs());
    const ActionRef send = testing::find_action(sim.timed, 0, "0SEND_F2");
    sim.timed.times[0][send.index].bytes = 32768;
    for (const TransferDelivery& delivery : transfer_deliveries(sim.timed))
        EXPECT_EQ(delivery.bytes, delivery.send == send ? 32768 : 0);
}

TEST(TransferDeliveries, AReceiveWhoseConsumerNeverRanIsNotSeen) {
    auto sim = testing::simulate_run(kOneFOneB, testing::round_costs());
    const ActionRef before = testing::find_action(sim.timed, 1, "1B1");
    sim.timed.times[1][before.index].end_ns = -1;  // a rank that died in 1B1
    const auto pairs = by_pair(sim.timed);
    EXPECT_FALSE(pairs.at("0SEND_F2 -> 1RECV_F2").second);
}

}  // namespace
}  // namespace pipelens::analysis
