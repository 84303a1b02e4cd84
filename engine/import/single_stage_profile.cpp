// Recovering a single-stage schedule's actions from the operators a rank's trace holds. Only
// the top-level operators of each thread count (what a step called, not what those calls ran
// inside), and the process group's transfer spans are no operators: they last as long as the
// transfer, overlapping whatever the thread computes meanwhile.
#include "engine/import/single_stage_profile.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "engine/import/profiler_event_times.hpp"
#include "engine/import/receive_arrival.hpp"

namespace pipelens::import {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
    return text.substr(0, prefix.size()) == prefix;
}

std::optional<StageOpKind> stage_op_kind(const ChromeEvent& event) {
    if (event.name == "c10d::send")
        return StageOpKind::send_post;
    if (event.name == "c10d::recv_")
        return StageOpKind::recv_post;
    if (starts_with(event.name, "gloo:send") || starts_with(event.name, "nccl:send"))
        return StageOpKind::send_transfer;
    if (starts_with(event.name, "gloo:recv") || starts_with(event.name, "nccl:recv"))
        return StageOpKind::recv_transfer;
    if (starts_with(event.name, "autograd::engine::evaluate_function:"))
        return StageOpKind::backward_node;
    if (event.cat == "cpu_op" &&
        std::any_of(event.args.begin(), event.args.end(),
                    [](const ChromeArg& arg) { return arg.key == "Sequence number"; }))
        return StageOpKind::autograd_op;
    return std::nullopt;
}

bool is_transfer(StageOpKind kind) {
    return kind == StageOpKind::send_transfer || kind == StageOpKind::recv_transfer;
}

// Each thread's operators that no other kept operator of that thread encloses, by start.
std::vector<const StageOp*> top_level(const std::vector<StageOp>& ops) {
    std::vector<const StageOp*> sorted;
    for (const StageOp& op : ops)
        if (!is_transfer(op.kind))
            sorted.push_back(&op);
    std::sort(sorted.begin(), sorted.end(), [](const StageOp* left, const StageOp* right) {
        return left->start_ns != right->start_ns ? left->start_ns < right->start_ns
                                                 : left->end_ns > right->end_ns;
    });
    std::map<std::string, std::int64_t> busy_until;
    std::vector<const StageOp*> top;
    for (const StageOp* op : sorted) {
        auto [at, fresh] = busy_until.try_emplace(op->thread, op->end_ns);
        if (!fresh && op->start_ns < at->second)
            continue;
        at->second = op->end_ns;
        top.push_back(op);
    }
    return top;
}

// Flow ends of one direction per thread, by time: which flows a range holds.
class FlowIndex {
  public:
    FlowIndex(const std::vector<AutogradFlow>& flows, bool starts) {
        for (const AutogradFlow& flow : flows)
            if (flow.start == starts)
                by_thread_[flow.thread].emplace_back(flow.ts_ns, flow.id);
        for (auto& [thread, points] : by_thread_)
            std::sort(points.begin(), points.end());
    }
    std::vector<std::int64_t> inside(const StageOp& op) const {
        std::vector<std::int64_t> ids;
        const auto found = by_thread_.find(op.thread);
        if (found == by_thread_.end())
            return ids;
        const auto& points = found->second;
        for (auto at =
                 std::lower_bound(points.begin(), points.end(),
                                  std::pair{op.start_ns, std::numeric_limits<std::int64_t>::min()});
             at != points.end() && at->first <= op.end_ns; ++at)
            ids.push_back(at->second);
        return ids;
    }

  private:
    std::map<std::string, std::vector<std::pair<std::int64_t, std::int64_t>>> by_thread_;
};

enum class Step : std::uint8_t { forward, backward, send, recv };

struct Item {
    Step step = Step::forward;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::vector<std::int64_t> flows;  // compute: the autograd flows it holds
    int microbatch = -1;
};

// The process group's receive spans by start (receive_arrival.hpp).
std::vector<TimedSpan> receive_transfers(const std::vector<StageOp>& ops) {
    std::vector<TimedSpan> transfers;
    for (const StageOp& op : ops)
        if (op.kind == StageOpKind::recv_transfer)
            transfers.push_back({op.start_ns, op.end_ns, op.thread});
    std::stable_sort(transfers.begin(), transfers.end(),
                     [](const TimedSpan& left, const TimedSpan& right) {
                         return left.start_ns < right.start_ns;
                     });
    return transfers;
}

// Forwards and backwards as runs of their operators, posts one by one, in the order they ran.
std::vector<Item> step_items(const StageOperators& operators) {
    const FlowIndex starts(operators.flows, true);
    const FlowIndex finishes(operators.flows, false);
    const std::vector<TimedSpan> transfers = receive_transfers(operators.ops);
    std::vector<Item> items;
    for (const StageOp* op : top_level(operators.ops)) {
        if (op->kind == StageOpKind::send_post || op->kind == StageOpKind::recv_post) {
            const bool send = op->kind == StageOpKind::send_post;
            items.push_back(
                {send ? Step::send : Step::recv,
                 op->start_ns,
                 send ? op->end_ns
                      : receive_arrival(transfers, {op->start_ns, op->end_ns, op->thread})
                            .value_or(op->end_ns),
                 {},
                 -1});
            continue;
        }
        const bool backward = op->kind == StageOpKind::backward_node;
        std::vector<std::int64_t> flows = (backward ? finishes : starts).inside(*op);
        if (!backward && flows.empty())  // recorded no node: input splitting, grad scaling
            continue;
        const Step step = backward ? Step::backward : Step::forward;
        if (items.empty() || items.back().step != step)
            items.push_back({step, op->start_ns, op->end_ns, {}, -1});
        Item& run = items.back();
        run.end_ns = std::max(run.end_ns, op->end_ns);
        run.flows.insert(run.flows.end(), flows.begin(), flows.end());
    }
    return items;
}

void number_compute(std::vector<Item>& items) {
    std::map<std::int64_t, int> forward_of_flow;
    int forwards = 0;
    int backwards = 0;
    for (Item& item : items) {
        if (item.step == Step::forward) {
            item.microbatch = forwards++;
            for (std::int64_t flow : item.flows)
                forward_of_flow.emplace(flow, item.microbatch);
        } else if (item.step == Step::backward) {
            int traced = -1;
            for (std::int64_t flow : item.flows)
                if (const auto found = forward_of_flow.find(flow); found != forward_of_flow.end())
                    traced = traced < 0 ? found->second : std::min(traced, found->second);
            item.microbatch = traced >= 0 ? traced : backwards;
            ++backwards;
        }
    }
}

ActionKind communication_kind(Step communication, Step compute) {
    if (communication == Step::send)
        return compute == Step::forward ? ActionKind::send_forward : ActionKind::send_backward;
    return compute == Step::forward ? ActionKind::recv_forward : ActionKind::recv_backward;
}

const Item* compute_beside(const std::vector<Item>& items, std::size_t index) {
    const bool before = items[index].step == Step::send;
    for (std::size_t at = index; before ? at-- > 0 : ++at < items.size();)
        if (items[at].step == Step::forward || items[at].step == Step::backward)
            return &items[at];
    return nullptr;
}

}  // namespace

bool StageOperators::has_point_to_point() const {
    return std::any_of(ops.begin(), ops.end(), [](const StageOp& op) {
        return op.kind == StageOpKind::send_post || op.kind == StageOpKind::recv_post;
    });
}

void keep_stage_operator(StageOperators& into, const ChromeEvent& event, const std::string& path) {
    if ((event.ph == "s" || event.ph == "f") && event.cat == "fwdbwd") {
        into.flows.push_back({event.id, event.ts_ns,
                              fmt::format("{}/{}", event.pid_text, event.tid_text),
                              event.ph == "s"});
        return;
    }
    if (event.ph != "X")
        return;
    if (const auto kind = stage_op_kind(event)) {
        check_range_times(path, event, "an operator a single-stage schedule's action is read from");
        into.ops.push_back({*kind, event.ts_ns,
                            event.ts_ns + std::max<std::int64_t>(event.dur_ns, 0),
                            fmt::format("{}/{}", event.pid_text, event.tid_text)});
    }
}

StageRecovery recover_stage_actions(const StageOperators& operators, int stage) {
    std::vector<Item> items = step_items(operators);
    number_compute(items);
    StageRecovery recovery;
    for (std::size_t index = 0; index < items.size(); ++index) {
        const Item& item = items[index];
        Action action;
        if (item.step == Step::forward || item.step == Step::backward) {
            action = make_action(
                stage, item.step == Step::forward ? ActionKind::forward : ActionKind::full_backward,
                item.microbatch);
        } else if (const Item* compute = compute_beside(items, index)) {
            action = make_action(stage, communication_kind(item.step, compute->step),
                                 compute->microbatch);
        } else {
            recovery.unplaced.push_back(
                fmt::format("a {} at {} ns with no forward or backward {} it",
                            item.step == Step::send ? "send (c10d::send)" : "receive (c10d::recv_)",
                            item.start_ns, item.step == Step::send ? "before" : "after"));
            continue;
        }
        recovery.actions.push_back(action);
        recovery.timings.push_back({item.start_ns, item.end_ns, -1});
    }
    return recovery;
}

void check_single_stage(const StageRecovery& recovery, int stage, int pp, int microbatches,
                        const std::string& path, const std::string& who) {
    const std::string where = fmt::format("{}: {} (pipeline rank {} of {})", path, who, stage, pp);
    constexpr std::array kinds{ActionKind::forward,       ActionKind::full_backward,
                               ActionKind::send_forward,  ActionKind::recv_forward,
                               ActionKind::send_backward, ActionKind::recv_backward};
    const bool has_next = stage + 1 < pp;
    const bool has_previous = stage > 0;
    const std::array<bool, kinds.size()> present{true,         true,         has_next,
                                                 has_previous, has_previous, has_next};
    std::string expected;
    std::string found;
    bool counts_differ = false;
    std::array<std::set<int>, kinds.size()> seen;
    for (std::size_t k = 0; k < kinds.size(); ++k) {
        int count = 0;
        for (const Action& action : recovery.actions)
            if (action.kind == kinds[k]) {
                ++count;
                seen[k].insert(action.microbatch);
            }
        const int wanted = present[k] ? microbatches : 0;
        counts_differ = counts_differ || count != wanted;
        const std::string separator = k == 0 ? "" : ", ";
        expected += fmt::format("{}{} {}", separator, wanted, kind_text(kinds[k]));
        found += fmt::format("{}{} {}", separator, count, kind_text(kinds[k]));
    }
    if (counts_differ || !recovery.unplaced.empty())
        throw ImportError(fmt::format(
            "{} does not fit a single-stage schedule of {} microbatches (read from its "
            "operators: no \"PP:\" ranges): expected {}; found {}{}{}",
            where, microbatches, expected, found, recovery.unplaced.empty() ? "" : ", and ",
            fmt::join(recovery.unplaced, ", ")));
    for (std::size_t k = 0; k < kinds.size(); ++k)
        if (present[k] && static_cast<int>(seen[k].size()) != microbatches)
            throw ImportError(fmt::format(
                "{}: its {} actions are microbatches {}, not 0..{} once each (a backward takes "
                "the microbatch of the forward its autograd flows lead back to)",
                where, kind_text(kinds[k]), fmt::join(seen[k], ", "), microbatches - 1));
}

}  // namespace pipelens::import
