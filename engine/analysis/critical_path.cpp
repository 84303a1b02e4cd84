// HoldGraph and the critical path (see critical_path.hpp for the rule and its invariant).
//
// Producers of per-(stage, microbatch) signals are found through one table built in a first pass
// over every rank (producer_table.hpp); per-stage and per-rank signals (UNSHARD, the rank's
// computation) come earlier on the waiting rank by the rules, so the second pass tracks them
// while it walks each rank in program order.
#include "engine/analysis/critical_path.hpp"

#include <algorithm>
#include <limits>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "engine/analysis/producer_table.hpp"

namespace pipelens::analysis {
namespace {

// Walks one rank in program order, choosing each action's holder.
class RankHolds {
  public:
    RankHolds(const TimedSchedule& timed, const DependencyRules& rules,
              const ProducerTable& producers, int rank)
        : timed_(timed), rules_(rules), producers_(producers), rank_(rank) {}

    void run(std::vector<ActionRef>& out) {
        const auto& actions = timed_.schedule.ranks[rank_];
        for (std::size_t index = 0; index < actions.size(); ++index) {
            out.push_back(holder_of(static_cast<std::int32_t>(index)));
            note_products(static_cast<std::int32_t>(index));
        }
    }

  private:
    std::int64_t end_of(ActionRef ref) const { return timed_.times[ref.rank][ref.index].end_ns; }

    // The candidate ready last; `>=` lets a later candidate win a tie (inputs come after the
    // stream, in rule order).
    void consider(std::optional<ActionRef> candidate, ActionRef& best) const {
        if (!candidate || candidate->rank < 0)
            return;
        if (best.rank < 0 || end_of(*candidate) >= end_of(best))
            best = *candidate;
    }

    std::optional<ActionRef> program_order_producer(const Input& input) const {
        if (input.signal == Signal::rank_compute)
            return last_compute_;
        const auto found = last_unshard_.find(input.stage);
        if (found == last_unshard_.end())
            return std::nullopt;
        return found->second;
    }

    ActionRef holder_of(std::int32_t index) const {
        const Schedule& schedule = timed_.schedule;
        const ActionSpan& span = timed_.times[rank_][index];
        ActionRef best;
        // A posted RECV holds no stream and waits for none, as the simulator and the re-timing
        // time it: only its inputs hold it (a SEND before it on its lane once did).
        if (holds_stream(schedule.ranks[rank_][index].kind))
            consider(stream_holder_[span.communication_lane ? 1 : 0], best);
        for (const Action& part : schedule.parts_of(schedule.ranks[rank_][index]))
            rules_.for_each_input(schedule, rank_, part, [&](const Input& input) {
                consider(input.program_order ? program_order_producer(input)
                                             : producers_.find(input, {rank_, index}),
                         best);
                return true;
            });
        return best;
    }

    void note_products(std::int32_t index) {
        const ActionSpan& span = timed_.times[rank_][index];
        if (span.end_ns < 0)
            return;
        const ActionRef self{rank_, index};
        const Action& action = timed_.schedule.ranks[rank_][index];
        // The stream is free once the latest-ending of the earlier actions holding it is done.
        std::optional<ActionRef>& holder = stream_holder_[span.communication_lane ? 1 : 0];
        if (holds_stream(action.kind) && (!holder || span.end_ns >= end_of(*holder)))
            holder = self;
        if (is_compute(action.kind))
            last_compute_ = self;
        if (action.kind == ActionKind::unshard)
            last_unshard_[action.stage] = self;
    }

    const TimedSchedule& timed_;
    const DependencyRules& rules_;
    const ProducerTable& producers_;
    int rank_;
    std::array<std::optional<ActionRef>, 2> stream_holder_{};  // compute, communication
    std::optional<ActionRef> last_compute_;
    std::unordered_map<int, ActionRef> last_unshard_;
};

// The ended action that ends last; on a tie a compute action, then the lowest rank.
std::optional<ActionRef> last_to_end(const TimedSchedule& timed) {
    std::optional<ActionRef> last;
    std::int64_t last_end = -1;
    bool last_compute = false;
    for (std::size_t rank = 0; rank < timed.times.size(); ++rank)
        for (std::size_t index = 0; index < timed.times[rank].size(); ++index) {
            const ActionSpan& span = timed.times[rank][index];
            const bool compute = !span.communication_lane;
            if (span.end_ns > last_end || (span.end_ns == last_end && compute && !last_compute)) {
                last = ActionRef{static_cast<std::int32_t>(rank), static_cast<std::int32_t>(index)};
                last_end = span.end_ns;
                last_compute = compute;
            }
        }
    return last;
}

// Re-times a run action by action in program order, each rank as far as its inputs from other
// ranks are re-timed (retime in critical_path.hpp).
class Retimer {
  public:
    Retimer(const TimedSchedule& timed, const DependencyRules& rules,
            const std::function<std::int64_t(ActionRef)>& duration_ns, ReceivedData received)
        : timed_(timed),
          rules_(rules),
          received_(received),
          producers_(timed, rules),
          duration_ns_(duration_ns),
          cursors_(timed.times.size()) {
        for (const auto& spans : timed.times) {
            for (const ActionSpan& span : spans)
                if (span.end_ns >= 0)
                    step_start_ = std::min(step_start_, span.start_ns);
            starts_.emplace_back(spans.size(), -1);
            ends_.emplace_back(spans.size(), -1);
            done_.emplace_back(spans.size(), false);
        }
    }

    std::vector<std::vector<std::int64_t>> run() {
        bool force = false;  // a producer that never gets timed (a damaged record) is skipped
        while (!finished()) {
            bool progress = false;
            for (std::size_t rank = 0; rank < cursors_.size(); ++rank)
                while (advance(static_cast<std::int32_t>(rank), force)) {
                    progress = true;
                    force = false;
                }
            force = !progress;
        }
        return std::move(ends_);
    }

  private:
    struct Cursor {
        std::size_t next = 0;
        std::array<std::int64_t, 2> recorded_free{-1, -1};  // compute, communication stream
        std::array<std::int64_t, 2> new_free{-1, -1};
        std::optional<ActionRef> last_compute;
        std::unordered_map<int, ActionRef> last_unshard;
    };

    // When an action's dependencies were ready, recorded and re-timed. An edge keeps how much
    // earlier than its producer's end the action started (a receive starts as its send is
    // issued), never the slack after it: that was waiting, which the new times decide afresh.
    struct Ready {
        std::int64_t start_ns;
        std::int64_t recorded = std::numeric_limits<std::int64_t>::min();
        std::int64_t retimed = std::numeric_limits<std::int64_t>::min();
        bool any = false;
        void add(std::int64_t recorded_end, std::int64_t new_end) {
            const std::int64_t offset = std::min<std::int64_t>(0, start_ns - recorded_end);
            recorded = std::max(recorded, recorded_end + offset);
            retimed = std::max(retimed, new_end + offset);
            any = true;
        }
    };

    bool finished() const {
        for (std::size_t rank = 0; rank < cursors_.size(); ++rank)
            if (cursors_[rank].next < timed_.times[rank].size())
                return false;
        return true;
    }

    std::optional<ActionRef> producer_of(const Cursor& cursor, const Input& input,
                                         ActionRef consumer) const {
        if (!input.program_order)
            return producers_.find(input, consumer);
        if (input.signal == Signal::rank_compute)
            return cursor.last_compute;
        const auto found = cursor.last_unshard.find(input.stage);
        return found == cursor.last_unshard.end() ? std::nullopt
                                                  : std::optional<ActionRef>(found->second);
    }

    // Times the rank's next action if its inputs are timed; false when it must wait (or is done).
    bool advance(std::int32_t rank, bool force) {
        Cursor& cursor = cursors_[rank];
        if (cursor.next >= timed_.times[rank].size())
            return false;
        const auto index = static_cast<std::int32_t>(cursor.next);
        const ActionSpan& span = timed_.times[rank][index];
        const Action& action = timed_.schedule.ranks[rank][index];
        const int lane = span.communication_lane ? 1 : 0;
        if (span.end_ns >= 0) {
            Ready ready{span.start_ns};
            if (holds_stream(action.kind) && cursor.recorded_free[lane] >= 0)  // not a posted RECV
                ready.add(cursor.recorded_free[lane], cursor.new_free[lane]);
            std::optional<ActionRef> data;
            bool posted_in_order = false;
            if (!add_inputs(cursor, {rank, index}, action, force, ready, data, posted_in_order))
                return false;
            std::int64_t start =
                ready.any ? ready.retimed + (span.start_ns - ready.recorded) : span.start_ns;
            std::optional<std::int64_t> end;
            if (posted_in_order)
                std::tie(start, end) = rendezvous_receive(span, ready, data, start);
            else
                end = waited_receive_end(span, action, data, start);
            starts_[rank][index] = start;
            ends_[rank][index] = end.value_or(start + duration_ns_({rank, index}));
            note(cursor, {rank, index}, action, lane);
        }
        done_[rank][index] = true;
        ++cursor.next;
        return true;
    }

    // `data`: the SEND whose data a RECV receives, when it was timed. `posted_in_order`: the
    // RECV is posted when its rank's program reaches it (rendezvous rules) and its data flows
    // once posted (ReceivedData::once_posted); its start is then its posting alone, and the
    // send's part is left to rendezvous_receive.
    bool add_inputs(const Cursor& cursor, ActionRef self, const Action& action, bool force,
                    Ready& ready, std::optional<ActionRef>& data, bool& posted_in_order) const {
        const bool receive =
            action.kind == ActionKind::recv_forward || action.kind == ActionKind::recv_backward;
        if (receive && received_ == ReceivedData::once_posted)
            for (const Input& input : rules_.inputs_of(timed_.schedule, self.rank, action))
                posted_in_order |= input.program_order && input.signal == Signal::rank_compute;
        bool blocked = false;
        for (const Action& part : timed_.schedule.parts_of(action))
            rules_.for_each_input(timed_.schedule, self.rank, part, [&](const Input& input) {
                const std::optional<ActionRef> producer = producer_of(cursor, input, self);
                if (!producer)
                    return true;
                if (!done_[producer->rank][producer->index]) {
                    blocked = !force;
                    return force;
                }
                const ActionKind kind = timed_.schedule.ranks[producer->rank][producer->index].kind;
                const bool sends =
                    kind == ActionKind::send_forward || kind == ActionKind::send_backward;
                if (sends)
                    data = producer;
                if (!(sends && posted_in_order))
                    ready.add(timed_.times[producer->rank][producer->index].end_ns,
                              ends_[producer->rank][producer->index]);
                return true;
            });
        return !blocked;
    }

    // A RECV posted in program order (rendezvous transfers: NCCL's, Gloo's, a simulation's with
    // --rendezvous): its data flows once both the send is issued and the receive is posted, for
    // as long as it flowed in the recorded run; a wait for either, recorded, is decided afresh
    // by the new times (keeping it once made a slowed rank's cost come out short by a fifth
    // where transfers are long against the computations).
    // Its new posting and end; `start` (as any action's) when its send was not timed. A span
    // that starts at its send's issue (a simulation's) was posted before, right after the
    // computation before it; one that starts later (a real run's) was posted then.
    std::pair<std::int64_t, std::optional<std::int64_t>> rendezvous_receive(
        const ActionSpan& span, const Ready& ready, const std::optional<ActionRef>& data,
        std::int64_t start) const {
        if (!data || starts_[data->rank][data->index] < 0)
            return {start, std::nullopt};
        const std::int64_t issued = timed_.times[data->rank][data->index].start_ns;
        std::int64_t posted = span.start_ns;
        if (ready.any) {
            const std::int64_t recorded_post =
                span.start_ns > issued ? span.start_ns : std::min(span.start_ns, ready.recorded);
            posted = ready.retimed + (recorded_post - ready.recorded);
        } else if (span.start_ns == issued) {  // nothing ran before it: posted as the step began
            posted = std::min(span.start_ns, step_start_);
        }
        const std::int64_t flowed = span.end_ns - std::max(issued, span.start_ns);
        return {posted, std::max(posted, starts_[data->rank][data->index]) +
                            std::max<std::int64_t>(0, flowed)};
    }

    // A RECV posted before its data was sent waited for it: it ends when the data arrives, as
    // long after the SEND's new end as it arrived after its recorded end, not a recorded
    // duration after its post (which held the whole wait); posted after the data arrives in the
    // new times, it still takes what it took after the send ended (taking the data in). Nothing
    // for any other action.
    std::optional<std::int64_t> waited_receive_end(const ActionSpan& span, const Action& action,
                                                   const std::optional<ActionRef>& data,
                                                   std::int64_t start) const {
        if ((action.kind != ActionKind::recv_forward && action.kind != ActionKind::recv_backward) ||
            !data || ends_[data->rank][data->index] < 0)
            return std::nullopt;
        const std::int64_t sent = timed_.times[data->rank][data->index].end_ns;
        if (span.start_ns >= sent)
            return std::nullopt;  // its data was there when it was posted
        const std::int64_t after_send = span.end_ns - sent;
        return std::max(start + std::max<std::int64_t>(0, after_send),
                        ends_[data->rank][data->index] + after_send);
    }

    void note(Cursor& cursor, ActionRef self, const Action& action, int lane) {
        if (holds_stream(action.kind)) {
            cursor.recorded_free[lane] =
                std::max(cursor.recorded_free[lane], timed_.times[self.rank][self.index].end_ns);
            cursor.new_free[lane] = std::max(cursor.new_free[lane], ends_[self.rank][self.index]);
        }
        if (is_compute(action.kind))
            cursor.last_compute = self;
        if (action.kind == ActionKind::unshard)
            cursor.last_unshard[action.stage] = self;
    }

    const TimedSchedule& timed_;
    const DependencyRules& rules_;
    const ReceivedData received_;
    const ProducerTable producers_;
    const std::function<std::int64_t(ActionRef)>& duration_ns_;
    std::vector<Cursor> cursors_;
    std::int64_t step_start_ = std::numeric_limits<std::int64_t>::max();  // earliest recorded
    std::vector<std::vector<std::int64_t>> starts_;
    std::vector<std::vector<std::int64_t>> ends_;
    std::vector<std::vector<bool>> done_;
};

}  // namespace

std::string_view share_name(PathShare share) {
    static constexpr std::array<std::string_view, kPathShareCount> names = {
        "F", "I", "W", "B", "overlap", "communication", "collective", "waiting"};
    return names[static_cast<std::size_t>(share)];
}

PathShare share_of(ActionKind kind) {
    switch (kind) {
        case ActionKind::forward:
            return PathShare::forward;
        case ActionKind::backward_input:
            return PathShare::backward_input;
        case ActionKind::backward_weight:
            return PathShare::backward_weight;
        case ActionKind::full_backward:
            return PathShare::full_backward;
        case ActionKind::overlap_forward_backward:
            return PathShare::overlap;
        case ActionKind::unshard:
        case ActionKind::reshard:
        case ActionKind::reduce_grad:
            return PathShare::collective;
        default:
            return PathShare::communication;
    }
}

HoldGraph::HoldGraph(const TimedSchedule& timed, const DependencyRules& rules) {
    const ProducerTable producers(timed, rules);
    const Schedule& schedule = timed.schedule;
    holders_.reserve(schedule.action_count());
    for (int rank = 0; rank < schedule.rank_count; ++rank) {
        first_.push_back(holders_.size());
        RankHolds(timed, rules, producers, rank).run(holders_);
    }
    first_.push_back(holders_.size());
}

std::optional<ActionRef> HoldGraph::held_by(ActionRef action) const {
    if (action.rank < 0 || static_cast<std::size_t>(action.rank) + 1 >= first_.size())
        return std::nullopt;
    const std::size_t at = first_[action.rank] + static_cast<std::size_t>(action.index);
    if (action.index < 0 || at >= first_[action.rank + 1] || holders_[at].rank < 0)
        return std::nullopt;
    return holders_[at];
}

CriticalPath critical_path(const TimedSchedule& timed, const HoldGraph& holds) {
    CriticalPath path;
    std::optional<ActionRef> current = last_to_end(timed);
    if (!current || timed.times[current->rank][current->index].end_ns < 0)
        return path;
    path.end_ns = timed.times[current->rank][current->index].end_ns;
    path.start_ns = path.end_ns;
    for (const auto& rank : timed.times)
        for (const ActionSpan& span : rank)
            if (span.end_ns >= 0)
                path.start_ns = std::min(path.start_ns, span.start_ns);
    std::int64_t cursor = path.end_ns;  // the path is laid out from here to its start
    // Each action is on the path at most once; the bound stops a damaged trace's cycle.
    for (std::size_t guard = timed.schedule.action_count() + 1; current && guard > 0; --guard) {
        const ActionSpan& span = timed.times[current->rank][current->index];
        const std::optional<ActionRef> holder = holds.held_by(*current);
        const std::int64_t holder_end =
            holder ? timed.times[holder->rank][holder->index].end_ns : path.start_ns;
        PathLink link{*current, 0, std::min(span.end_ns, cursor), 0};
        link.from_ns = std::clamp(holder_end, std::min(span.start_ns, link.end_ns), link.end_ns);
        cursor = std::max(path.start_ns, std::min(holder_end, link.from_ns));
        if (!holder)
            cursor = path.start_ns;
        link.waited_ns = link.from_ns - cursor;
        const Action& action = timed.schedule.ranks[current->rank][current->index];
        path.share_ns[static_cast<std::size_t>(share_of(action.kind))] +=
            link.end_ns - link.from_ns;
        path.share_ns[static_cast<std::size_t>(PathShare::waiting)] += link.waited_ns;
        path.links.push_back(link);
        current = holder;
    }
    std::reverse(path.links.begin(), path.links.end());
    return path;
}

std::vector<std::vector<std::int64_t>> retime(
    const TimedSchedule& timed, const std::function<std::int64_t(ActionRef)>& duration_ns,
    const DependencyRules& rules, ReceivedData received) {
    return Retimer(timed, rules, duration_ns, received).run();
}

std::int64_t retimed_end(const std::vector<std::vector<std::int64_t>>& ends) {
    std::int64_t end = 0;
    for (const auto& rank : ends)
        for (std::int64_t value : rank)
            end = std::max(end, value);
    return end;
}

}  // namespace pipelens::analysis
