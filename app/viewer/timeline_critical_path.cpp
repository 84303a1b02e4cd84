// The critical path and whom each bubble waited on (engine/analysis's hold graph and bubble
// accounting), and the run's stragglers (engine/analysis/stragglers), found from the actions the
// model already holds (no second read of the file), then mapped back to lane positions.
//
// The analysis needs each rank's actions in program order, as timed_schedule_from_rows orders
// them: training step first (the k-th row of a recorded index, by start, is step k's), then the
// recorded index; the lanes hold them by start time. `by_step[r]` is the bridge: rank r's lane
// positions in that order, so the analysis's index i on rank r is by_step[r][i]. A real run of
// several steps repeats each recorded index once per step, so an index alone never names an
// action. A training step analysed alone is a schedule of its own (training_steps.hpp);
// StepPositions maps its indices to the run's and back, by the engine's own step numbers.
#include <algorithm>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "app/viewer/timeline_model.hpp"
#include "engine/analysis/bubble_accounting.hpp"
#include "engine/analysis/training_steps.hpp"
#include "engine/schedule/action.hpp"
#include "engine/schedule/action_facts.hpp"
#include "traces/trace_error.hpp"

namespace pipelens::viewer {
namespace {

traces::StoredAction stored(const TimelineAction& action, bool communication) {
    traces::StoredAction row;
    row.step = action.step;
    row.stage = action.stage;
    row.microbatch = action.microbatch;
    row.pair_id = action.pair_id;
    row.start_ns = action.start_ns;
    row.end_ns = action.end_ns;
    row.bytes = action.bytes;
    row.lane = communication ? traces::ActionLane::communication : traces::ActionLane::compute;
    row.kind = action.kind;
    return row;
}

// An action's place in program order: (training step, recorded index), and where it is.
struct Ordered {
    std::int32_t training_step = 0;
    std::int32_t step = 0;
    ActionLocation at;
};

// Rank `rank`'s actions by start, then recorded index (the two lanes merged), as the engine
// reads the rows in time order to count each index's copies.
std::vector<Ordered> by_start(const RankTimeline& rank) {
    std::vector<Ordered> order;
    order.reserve(rank.compute.actions.size() + rank.communication.actions.size());
    for (bool communication : {false, true}) {
        const Lane& lane = communication ? rank.communication : rank.compute;
        for (std::size_t index = 0; index < lane.actions.size(); ++index)
            order.push_back({0, lane.actions[index].step, {rank.rank, communication, index}});
    }
    const auto start = [&](const Ordered& item) {
        const Lane& lane = item.at.communication ? rank.communication : rank.compute;
        return lane.actions[item.at.index].start_ns;
    };
    std::stable_sort(order.begin(), order.end(), [&](const Ordered& left, const Ordered& right) {
        return std::pair(start(left), left.step) < std::pair(start(right), right.step);
    });
    return order;
}

// Rank `rank`'s actions in program order. A run whose recorded indices are all distinct (one
// training step, or a writer numbering on through the run) is in index order: each lane is by
// start, which is nearly always index order too, so the two lanes merge. Otherwise each index's
// copies are counted in start order, the k-th being training step k's.
std::vector<ActionLocation> program_order(const RankTimeline& rank) {
    const auto lane_order = [&](bool communication) {
        const Lane& lane = communication ? rank.communication : rank.compute;
        std::vector<std::pair<std::int32_t, ActionLocation>> order;
        order.reserve(lane.actions.size());
        for (std::size_t index = 0; index < lane.actions.size(); ++index)
            order.emplace_back(lane.actions[index].step,
                               ActionLocation{rank.rank, communication, index});
        const auto by_step = [](const auto& left, const auto& right) {
            return left.first < right.first;
        };
        if (!std::is_sorted(order.begin(), order.end(), by_step))
            std::stable_sort(order.begin(), order.end(), by_step);
        return order;
    };
    const auto compute = lane_order(false), communication = lane_order(true);
    std::vector<std::pair<std::int32_t, ActionLocation>> merged(compute.size() +
                                                                communication.size());
    std::merge(compute.begin(), compute.end(), communication.begin(), communication.end(),
               merged.begin(),
               [](const auto& left, const auto& right) { return left.first < right.first; });
    std::vector<ActionLocation> locations;
    const bool repeated = std::adjacent_find(merged.begin(), merged.end(), [](auto& l, auto& r) {
                              return l.first == r.first;
                          }) != merged.end();
    if (!repeated) {
        locations.reserve(merged.size());
        for (const auto& entry : merged)
            locations.push_back(entry.second);
        return locations;
    }
    std::vector<Ordered> order = by_start(rank);
    std::unordered_map<std::int32_t, std::int32_t> copies;
    for (Ordered& item : order)
        item.training_step = copies[item.step]++;
    std::stable_sort(order.begin(), order.end(), [](const Ordered& left, const Ordered& right) {
        return std::pair(left.training_step, left.step) <
               std::pair(right.training_step, right.step);
    });
    locations.reserve(order.size());
    for (const Ordered& item : order)
        locations.push_back(item.at);
    return locations;
}

// The model's rows for the analysis, each rank's in program order; `by_step` gets their lane
// positions.
std::vector<analysis::RankRows> program_rows(const TimelineModel& model,
                                             std::vector<std::vector<ActionLocation>>& by_step) {
    const auto& ranks = model.ranks();
    std::vector<analysis::RankRows> rows(ranks.size());
    by_step.assign(ranks.size(), {});
    for (std::size_t rank = 0; rank < ranks.size(); ++rank) {
        by_step[rank] = program_order(ranks[rank]);
        rows[rank].actions.reserve(by_step[rank].size());
        for (const ActionLocation& at : by_step[rank]) {  // in step order: no sort needed later
            const TimelineAction& action = model.action(at);
            rows[rank].actions.push_back(stored(action, at.communication));
            if (action.kind == static_cast<std::uint8_t>(ActionKind::overlap_forward_backward))
                rows[rank].stored_labels.emplace_back(action.step,
                                                      std::string(model.label(action)));
        }
    }
    return rows;
}

// A step's schedule against the run's: to_run[r][i] is the run's program index of the step's
// action i on rank r, from_run the reverse, -1 for an action of another step. The step holds
// the run's actions of its training step in program order (training_steps.hpp), so its i-th
// action on a rank is the i-th of the run's whose engine step number is the step's.
struct StepPositions {
    std::vector<std::vector<std::int32_t>> to_run, from_run;
};

StepPositions step_positions(const analysis::TimedSchedule& run, int step) {
    const std::vector<std::vector<std::int32_t>> numbers = analysis::action_steps(run.schedule);
    StepPositions positions;
    positions.to_run.resize(run.times.size());
    positions.from_run.resize(run.times.size());
    for (std::size_t rank = 0; rank < run.times.size(); ++rank) {
        positions.from_run[rank].assign(run.times[rank].size(), -1);
        for (std::size_t index = 0; index < numbers[rank].size(); ++index)
            if (numbers[rank][index] == step) {
                positions.from_run[rank][index] =
                    static_cast<std::int32_t>(positions.to_run[rank].size());
                positions.to_run[rank].push_back(static_cast<std::int32_t>(index));
            }
    }
    return positions;
}

// The path and the bubbles' waits of `analysed`: the whole run (`positions` null) or one step.
class HoldFinder {
  public:
    HoldFinder(const TimelineModel& model, const std::vector<std::vector<ActionLocation>>& by_step,
               const analysis::TimedSchedule& analysed, const StepPositions* positions)
        : model_(model),
          by_step_(by_step),
          analysed_(analysed),
          holds_(analysed),
          positions_(positions),
          compute_program_(compute_program(by_step)) {}

    // `offset_ns`: where the analysed schedule's zero lies on the run's clock (a step analysed
    // alone starts at 0).
    TimelineCriticalPath path(std::int64_t offset_ns) const {
        TimelineCriticalPath result;
        const analysis::CriticalPath path = analysis::critical_path(analysed_, holds_);
        for (const analysis::PathLink& link : path.links) {
            result.actions.push_back(location(link.action));
            // The part of the action on the path: a RECV posted early is on it only from its
            // SEND's hand-over, not from when it was posted.
            result.times.emplace_back(link.from_ns + offset_ns, link.end_ns + offset_ns);
        }
        result.share_ns = path.share_ns;
        return result;
    }

    // One for each bubble ending in a computation of the analysed schedule.
    std::vector<std::vector<BubbleWait>> waits() const {
        std::vector<std::vector<BubbleWait>> waits(model_.ranks().size());
        for (const RankTimeline& rank : model_.ranks())
            for (std::size_t index = 0; index < rank.bubbles.size(); ++index)
                if (const auto wait = wait_of(rank, index))
                    waits[static_cast<std::size_t>(rank.rank)].push_back(*wait);
        return waits;
    }

  private:
    // Per rank, each compute action's program index (by_step's reverse for the compute lane).
    static std::vector<std::vector<std::int32_t>> compute_program(
        const std::vector<std::vector<ActionLocation>>& by_step) {
        std::vector<std::vector<std::int32_t>> program(by_step.size());
        for (std::size_t rank = 0; rank < by_step.size(); ++rank) {
            program[rank].resize(by_step[rank].size());
            for (std::size_t index = 0; index < by_step[rank].size(); ++index)
                if (!by_step[rank][index].communication)
                    program[rank][by_step[rank][index].index] = static_cast<std::int32_t>(index);
        }
        return program;
    }

    ActionLocation location(analysis::ActionRef ref) const {
        const auto rank = static_cast<std::size_t>(ref.rank);
        const auto index = static_cast<std::size_t>(ref.index);
        return by_step_[rank][positions_ ? static_cast<std::size_t>(positions_->to_run[rank][index])
                                         : index];
    }

    std::optional<BubbleWait> wait_of(const RankTimeline& rank, std::size_t index) const {
        const Bubble& bubble = rank.bubbles[index];
        if (bubble.before < 0)
            return std::nullopt;
        auto analysed_index = compute_program_[static_cast<std::size_t>(rank.rank)]
                                              [static_cast<std::size_t>(bubble.before)];
        if (positions_) {
            analysed_index = positions_->from_run[static_cast<std::size_t>(rank.rank)]
                                                 [static_cast<std::size_t>(analysed_index)];
            if (analysed_index < 0)
                return std::nullopt;  // a computation of another step
        }
        const analysis::WaitedFor waited =
            analysis::waited_for(analysed_, holds_, {rank.rank, analysed_index});
        BubbleWait wait{index, waited.peer, -1, std::nullopt};
        if (waited.held_by && waited.held_by->rank == rank.rank) {
            const ActionLocation held = location(*waited.held_by);
            if (held.communication && is_receive(static_cast<ActionKind>(model_.action(held).kind)))
                wait.waited_for = static_cast<std::int32_t>(held.index);
        }
        if (waited.waited_on)
            wait.waited_on = location(*waited.waited_on);
        return wait;
    }

    const TimelineModel& model_;
    const std::vector<std::vector<ActionLocation>>& by_step_;
    const analysis::TimedSchedule& analysed_;
    const analysis::HoldGraph holds_;
    const StepPositions* positions_;
    const std::vector<std::vector<std::int32_t>> compute_program_;
};

}  // namespace

analysis::TimedSchedule TimelineModel::timed_schedule(const std::string& source) const {
    std::vector<std::vector<ActionLocation>> by_step;
    return analysis::timed_schedule_from_rows(source, run_, program_rows(*this, by_step));
}

HoldAnalysis TimelineModel::analyse_holds(const std::string& source,
                                          const HoldRequest& request) const {
    HoldAnalysis result;
    result.step = request.step;
    try {
        std::vector<std::vector<ActionLocation>> by_step;
        const analysis::TimedSchedule timed =
            analysis::timed_schedule_from_rows(source, run_, program_rows(*this, by_step));
        if (!request.step) {
            const HoldFinder finder(*this, by_step, timed, nullptr);
            result.path = finder.path(0);
            result.waits = finder.waits();
            result.stragglers = analysis::find_stragglers(timed, request.stragglers);
            return result;
        }
        const std::vector<analysis::TrainingStep> steps = analysis::training_steps(timed);
        if (*request.step < 0 || *request.step >= static_cast<int>(steps.size())) {
            result.path.error = fmt::format("the run has no step {}", *request.step);
            return result;
        }
        const analysis::TrainingStep& step = steps[static_cast<std::size_t>(*request.step)];
        const StepPositions positions = step_positions(timed, *request.step);
        const HoldFinder finder(*this, by_step, step.timed, &positions);
        result.path = finder.path(step.offset_ns);
        result.waits = finder.waits();
    } catch (const traces::TraceError& error) {
        result = {};
        result.step = request.step;
        result.path.error = error.what();
    }
    return result;
}

void TimelineModel::clear_analysis() {
    for (const ActionLocation& at : critical_path_.actions) {
        RankTimeline& rank = ranks_[static_cast<std::size_t>(at.rank)];
        (at.communication ? rank.communication : rank.compute).actions[at.index].on_critical_path =
            false;
    }
    critical_path_ = {};
    for (RankTimeline& rank : ranks_)
        for (Bubble& bubble : rank.bubbles) {
            if (bubble.cause == BubbleCause::waiting)
                bubble.cause = BubbleCause::idle;
            bubble.peer = -1;
            bubble.waited_for = -1;
            bubble.waited_on.reset();
        }
}

void TimelineModel::show_path(const TimelineCriticalPath& path) {
    critical_path_ = path;
    const bool timed = critical_path_.times.size() == critical_path_.actions.size();
    if (!timed)
        critical_path_.times.clear();
    for (const ActionLocation& at : critical_path_.actions) {
        RankTimeline& rank = ranks_[static_cast<std::size_t>(at.rank)];
        TimelineAction& action =
            (at.communication ? rank.communication : rank.compute).actions[at.index];
        action.on_critical_path = true;
        if (!timed)  // a path given without its parts: each action whole
            critical_path_.times.emplace_back(action.start_ns, action.end_ns);
    }
}

void TimelineModel::show_waits(const std::vector<std::vector<BubbleWait>>& waits) {
    for (std::size_t rank = 0; rank < waits.size() && rank < ranks_.size(); ++rank)
        for (const BubbleWait& wait : waits[rank]) {
            Bubble& bubble = ranks_[rank].bubbles[wait.bubble];
            bubble.waited_on = wait.waited_on;
            if (bubble.cause != BubbleCause::idle && bubble.cause != BubbleCause::waiting)
                continue;  // warm-up: what it waited for is kept only as where a click goes
            bubble.cause = wait.peer >= 0 ? BubbleCause::waiting : BubbleCause::idle;
            bubble.peer = wait.peer;
            bubble.waited_for = wait.peer >= 0 ? wait.waited_for : -1;
        }
}

void TimelineModel::apply(HoldAnalysis analysis) {
    if (!analysis.step) {
        whole_run_ = std::move(analysis);
        apply_whole_run();
        return;
    }
    clear_analysis();
    show_waits(whole_run_.waits);  // outside the step, the whole run's causes stay
    show_waits(analysis.waits);
    show_path(analysis.path);
    analysed_step_ = analysis.step;
}

void TimelineModel::apply_whole_run() {
    clear_analysis();
    show_waits(whole_run_.waits);
    show_path(whole_run_.path);
    analysed_step_.reset();
}

}  // namespace pipelens::viewer
