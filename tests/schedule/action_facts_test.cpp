// The action facts: which receive each kind consumes, and each transfer's peer stage and rank,
// with the pipeline's ends and a "V" placement (a rank holding two non-adjacent stages).
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <vector>

#include "engine/schedule/action_facts.hpp"

namespace pipelens {
namespace {

Action parsed(const char* text) {
    std::vector<Action> parts;
    return parse_action(text, parts);
}

TEST(ReceiveConsumedBy, ForwardTakesRecvFAndBothBackwardsWithAnInputTakeRecvB) {
    using K = ActionKind;
    EXPECT_EQ(receive_consumed_by(K::forward), K::recv_forward);
    EXPECT_EQ(receive_consumed_by(K::backward_input), K::recv_backward);
    EXPECT_EQ(receive_consumed_by(K::full_backward), K::recv_backward);
    // W needs only its own I; the container's parts are asked, never the container.
    for (K kind :
         {K::backward_weight, K::overlap_forward_backward, K::send_forward, K::recv_forward,
          K::send_backward, K::recv_backward, K::unshard, K::reshard, K::reduce_grad})
        EXPECT_EQ(receive_consumed_by(kind), std::nullopt) << kind_text(kind);
}

TEST(Consumes, OnlyTheReceiveOfTheOwnStageMicrobatchAndDirection) {
    EXPECT_TRUE(consumes(parsed("1F3"), parsed("1RECV_F3")));
    EXPECT_TRUE(consumes(parsed("1I3"), parsed("1RECV_B3")));
    EXPECT_TRUE(consumes(parsed("1B3"), parsed("1RECV_B3")));
    EXPECT_FALSE(consumes(parsed("1F3"), parsed("1RECV_B3")));
    EXPECT_FALSE(consumes(parsed("1B3"), parsed("1RECV_F3")));
    EXPECT_FALSE(consumes(parsed("1F3"), parsed("1RECV_F2")));
    EXPECT_FALSE(consumes(parsed("1F3"), parsed("0RECV_F3")));
    EXPECT_FALSE(consumes(parsed("1W3"), parsed("1RECV_B3")));
    // A send of the same stage and microbatch is not something a computation waits for.
    EXPECT_FALSE(consumes(parsed("1F3"), parsed("1SEND_F3")));
}

TEST(TransferPeer, ForwardFlowsUpTheStagesAndBackwardDown) {
    EXPECT_EQ(transfer_peer_offset(ActionKind::send_forward), 1);
    EXPECT_EQ(transfer_peer_offset(ActionKind::recv_forward), -1);
    EXPECT_EQ(transfer_peer_offset(ActionKind::send_backward), -1);
    EXPECT_EQ(transfer_peer_offset(ActionKind::recv_backward), 1);
    EXPECT_EQ(transfer_peer_stage(parsed("2SEND_F0")), 3);
    EXPECT_EQ(transfer_peer_stage(parsed("2RECV_F0")), 1);
    EXPECT_EQ(transfer_peer_stage(parsed("2SEND_B0")), 1);
    EXPECT_EQ(transfer_peer_stage(parsed("2RECV_B0")), 3);
    EXPECT_EQ(transfer_peer_stage(ActionKind::recv_forward, 0), -1);  // past the first stage
}

TEST(TransferPeer, OnlyTransfersHaveOne) {
    for (ActionKind kind : {ActionKind::forward, ActionKind::full_backward,
                            ActionKind::overlap_forward_backward, ActionKind::unshard})
        EXPECT_THROW(transfer_peer_offset(kind), std::invalid_argument) << kind_text(kind);
    try {
        transfer_peer_stage(parsed("1F0"));
        FAIL() << "an F was given a peer stage";
    } catch (const std::invalid_argument& error) {
        EXPECT_STREQ(error.what(), "F is not a SEND or RECV: only transfers have a peer stage");
    }
}

TEST(TransferPeer, RankFollowsTheVPlacement) {
    Schedule schedule;
    schedule.rank_count = 2;
    schedule.stage_count = 4;
    schedule.stage_to_rank = {0, 1, 1, 0};  // "V": rank 0 holds stages 0 and 3
    EXPECT_EQ(transfer_peer_rank(schedule, parsed("0SEND_F5")), 1);
    EXPECT_EQ(transfer_peer_rank(schedule, parsed("2SEND_F5")), 0);
    EXPECT_EQ(transfer_peer_rank(schedule, parsed("3RECV_F5")), 1);
    EXPECT_EQ(transfer_peer_rank(schedule, parsed("3SEND_B5")), 1);
    EXPECT_EQ(transfer_peer_rank(schedule, parsed("2RECV_B5")), 0);
    EXPECT_EQ(transfer_peer_rank(schedule, parsed("0RECV_B5")), 1);
    EXPECT_EQ(transfer_peer_rank(schedule, parsed("1SEND_F5")), 1);  // a same-rank neighbour too
    EXPECT_THROW(transfer_peer_rank(schedule, parsed("0RECV_F5")), std::out_of_range);
    EXPECT_THROW(transfer_peer_rank(schedule, parsed("3SEND_F5")), std::out_of_range);
}

TEST(TransferKinds, SendsAndReceives) {
    using K = ActionKind;
    EXPECT_TRUE(is_send(K::send_forward));
    EXPECT_TRUE(is_send(K::send_backward));
    EXPECT_TRUE(is_receive(K::recv_forward));
    EXPECT_TRUE(is_receive(K::recv_backward));
    for (K kind : {K::forward, K::backward_input, K::backward_weight, K::full_backward,
                   K::overlap_forward_backward, K::unshard, K::reshard, K::reduce_grad}) {
        EXPECT_FALSE(is_send(kind)) << kind_text(kind);
        EXPECT_FALSE(is_receive(kind)) << kind_text(kind);
    }
    EXPECT_FALSE(is_send(K::recv_forward));
    EXPECT_FALSE(is_receive(K::send_backward));
}

}  // namespace
}  // namespace pipelens
