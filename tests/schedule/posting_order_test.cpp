// Posting-order agreement: a rank pair whose receives come in another order than the peer's
// sends is named at its first crossing; every kind's eager lowering agrees on every pair, and
// the deferred lowering of ZBVZeroBubble, as upstream's pass orders it, does not.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "engine/schedule/posting_order.hpp"
#include "engine/schedule/schedule_csv.hpp"

namespace pipelens {
namespace {

TEST(PostingOrder, CrossedReceivesAreNamedAtTheFirstCrossing) {
    const Schedule crossed = parse_schedule_csv(
        "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n"
        "1RECV_F1,1RECV_F0,1F0,1B0,1SEND_B0,1F1,1B1,1SEND_B1\n",
        "crossed.csv");
    EXPECT_EQ(posting_order_crossing(crossed),
              std::optional<std::string>("rank 0 to rank 1: rank 0's 1st send is 0SEND_F0, but "
                                         "the 1st receive rank 1 posts from rank 0 is 1RECV_F1"));
}

TEST(PostingOrder, EveryEagerLoweringAgreesAndZbvDeferredDoesNot) {
    for (const ScheduleKind kind : all_schedule_kinds()) {
        if (kind == ScheduleKind::zero_bubble_auto)
            continue;  // its order needs costs
        const int v = is_multi_stage(kind) ? 2 : 1;
        for (const int pp : {2, 3, 4}) {
            const Schedule lowered = lower(generate_schedule({kind, pp, v, 2 * pp * v}));
            EXPECT_EQ(posting_order_crossing(lowered), std::nullopt)
                << schedule_kind_name(kind) << " pp=" << pp;
        }
    }
    const Schedule deferred = lower(generate_schedule({ScheduleKind::zbv_zero_bubble, 2, 2, 4}),
                                    {.defer_receives = true});
    EXPECT_EQ(posting_order_crossing(deferred),
              std::optional<std::string>("rank 0 to rank 1: rank 0's 3rd send is 0SEND_F2, but "
                                         "the 3rd receive rank 1 posts from rank 0 is 2RECV_B0"));
}

}  // namespace
}  // namespace pipelens
