// Whether every rank pair's transfers are posted in one order on both sides. NCCL has no tags:
// it pairs the sends one rank posts to another with the receives that rank posts from it in
// the order each side posts them. A lowered schedule whose receives from a peer come in another
// order than that peer's sends (pairing by stage and microbatch, as `check` and gloo do, finds
// nothing wrong) would, run by PyTorch over NCCL, hand the receives the wrong tensors or hang
// on their sizes.
#pragma once

#include <optional>
#include <string>

#include "engine/schedule/schedule.hpp"

namespace pipelens {

// The first crossing, over the rank pairs in order, e.g. "rank 0 to rank 1: rank 0's 3rd send
// is 0SEND_F2, but the 3rd receive rank 1 posts from rank 0 is 2RECV_B0"; none when every
// pair's sides agree (or the schedule has no transfers).
std::optional<std::string> posting_order_crossing(const Schedule& lowered);

}  // namespace pipelens
