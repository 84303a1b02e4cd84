// The transfers of a timed run (transfer_deliveries.hpp for the rule). Each rank is walked once
// in program order: the time its thread reached each action, and the computation that consumed
// each of its receives (a receive waits in a queue keyed by what it carries until a computation
// part takes it); then each receive is paired with its SEND through the dependency rules.
#include "engine/analysis/transfer_deliveries.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <tuple>

#include "engine/analysis/producer_table.hpp"
#include "engine/schedule/action_facts.hpp"

namespace pipelens::analysis {
namespace {

constexpr std::int64_t kNeverReached = std::numeric_limits<std::int64_t>::max();

// For one rank: when its thread reached each action (every earlier computation and SEND ended,
// every earlier RECV posted), and for each RECV the computation that consumed it (-1).
struct RankWalk {
    std::vector<std::int64_t> reached;
    std::vector<std::int32_t> consumer;
};

RankWalk walk_rank(const TimedSchedule& timed, std::size_t rank) {
    const Schedule& schedule = timed.schedule;
    const auto& actions = schedule.ranks[rank];
    const auto& times = timed.times[rank];
    RankWalk walk{std::vector<std::int64_t>(actions.size()),
                  std::vector<std::int32_t>(actions.size(), -1)};
    using Carried = std::tuple<ActionKind, int, int>;  // receive kind, stage, microbatch
    std::map<Carried, std::deque<std::int32_t>> pending;
    std::int64_t reached = 0;
    for (std::size_t index = 0; index < actions.size(); ++index) {
        walk.reached[index] = reached;
        const Action& action = actions[index];
        for (const Action& part : schedule.parts_of(action)) {
            const auto taken = receive_consumed_by(part.kind);
            if (!taken)
                continue;
            const auto found = pending.find({*taken, part.stage, part.microbatch});
            if (found == pending.end() || found->second.empty())
                continue;
            walk.consumer[static_cast<std::size_t>(found->second.front())] =
                static_cast<std::int32_t>(index);
            found->second.pop_front();
        }
        const ActionSpan& span = times[index];
        if (is_receive(action.kind))
            pending[{action.kind, action.stage, action.microbatch}].push_back(
                static_cast<std::int32_t>(index));
        // A RECV only posts on the way (its end is its consumer's wait, not the thread's).
        const std::int64_t done = is_receive(action.kind) ? span.start_ns : span.end_ns;
        reached =
            span.end_ns < 0 || reached == kNeverReached ? kNeverReached : std::max(reached, done);
    }
    return walk;
}

// The SEND `receive` waits for, by the rules; nullopt if none ended.
std::optional<ActionRef> send_of(const TimedSchedule& timed, const ProducerTable& producers,
                                 ActionRef receive) {
    const Action& action = timed.schedule.ranks[receive.rank][receive.index];
    std::optional<ActionRef> send;
    DependencyRules::pytorch().for_each_input(
        timed.schedule, receive.rank, action, [&](const Input& input) {
            if (input.signal == Signal::sent_forward || input.signal == Signal::sent_backward)
                send = producers.find(input, receive);
            return !send;
        });
    return send;
}

}  // namespace

std::vector<TransferDelivery> transfer_deliveries(const TimedSchedule& timed) {
    std::vector<TransferDelivery> deliveries;
    if (!timed.schedule.has_communication)
        return deliveries;
    const ProducerTable producers(timed, DependencyRules::pytorch());
    for (std::size_t rank = 0; rank < timed.schedule.ranks.size(); ++rank) {
        const RankWalk walk = walk_rank(timed, rank);
        const auto& actions = timed.schedule.ranks[rank];
        for (std::size_t index = 0; index < actions.size(); ++index) {
            if (!is_receive(actions[index].kind) || timed.times[rank][index].end_ns < 0)
                continue;
            const ActionRef receive{static_cast<std::int32_t>(rank),
                                    static_cast<std::int32_t>(index)};
            const std::optional<ActionRef> send = send_of(timed, producers, receive);
            if (!send)
                continue;
            const ActionSpan& sent = timed.times[send->rank][send->index];
            const ActionSpan& received = timed.times[rank][index];
            TransferDelivery delivery{*send, receive, sent.bytes > 0 ? sent.bytes : received.bytes,
                                      received.end_ns - sent.start_ns, false};
            const std::int32_t consumer = walk.consumer[index];
            delivery.seen =
                consumer >= 0 && walk.reached[static_cast<std::size_t>(consumer)] <= sent.start_ns;
            deliveries.push_back(delivery);
        }
    }
    return deliveries;
}

}  // namespace pipelens::analysis
