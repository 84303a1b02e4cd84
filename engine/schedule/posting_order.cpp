// Posting-order agreement of each rank pair (posting_order.hpp). One pass over the actions;
// a transfer is named by its direction, the stage that sends it and its microbatch, so a
// SEND and the RECV that takes it have one name.
#include "engine/schedule/posting_order.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "engine/schedule/action_facts.hpp"

namespace pipelens {
namespace {

using TransferName = std::tuple<bool, int, int>;  // forward, sending stage, microbatch

struct Posted {
    TransferName name;
    const Action* action = nullptr;
};

std::string ordinal(std::size_t index) {
    const std::size_t n = index + 1;
    const char* suffix = (n % 100 >= 11 && n % 100 <= 13) ? "th"
                         : n % 10 == 1                    ? "st"
                         : n % 10 == 2                    ? "nd"
                         : n % 10 == 3                    ? "rd"
                                                          : "th";
    return fmt::format("{}{}", n, suffix);
}

}  // namespace

std::optional<std::string> posting_order_crossing(const Schedule& lowered) {
    std::map<std::pair<int, int>, std::vector<Posted>> sends, receives;  // (from, to)
    for (int rank = 0; rank < static_cast<int>(lowered.ranks.size()); ++rank)
        for (const Action& action : lowered.ranks[rank]) {
            if (!is_communication(action.kind))
                continue;
            int peer = 0;
            try {
                peer = transfer_peer_rank(lowered, action);
            } catch (const std::out_of_range&) {
                continue;  // a transfer past the pipeline's end: the structure check's to say
            }
            const bool forward =
                action.kind == ActionKind::send_forward || action.kind == ActionKind::recv_forward;
            const bool sends_it =
                action.kind == ActionKind::send_forward || action.kind == ActionKind::send_backward;
            const int sender_stage = sends_it ? action.stage : transfer_peer_stage(action);
            const Posted posted{{forward, sender_stage, action.microbatch}, &action};
            if (sends_it)
                sends[{rank, peer}].push_back(posted);
            else
                receives[{peer, rank}].push_back(posted);
        }
    for (const auto& [pair, sent] : sends) {
        const auto found = receives.find(pair);
        if (found == receives.end())
            continue;
        const std::vector<Posted>& received = found->second;
        for (std::size_t index = 0; index < std::min(sent.size(), received.size()); ++index)
            if (sent[index].name != received[index].name)
                return fmt::format(
                    "rank {} to rank {}: rank {}'s {} send is {}, but the {} receive rank {} "
                    "posts from rank {} is {}",
                    pair.first, pair.second, pair.first, ordinal(index),
                    lowered.text(*sent[index].action), ordinal(index), pair.second, pair.first,
                    lowered.text(*received[index].action));
    }
    return std::nullopt;
}

}  // namespace pipelens
