// The dry run: the dependency rules (dependencies.hpp) under blocking semantics, driven by the
// one work list until every rank blocks or finishes. Linear in the number of actions. On a hang
// the wait links are rebuilt from where each rank stopped, then followed from the lowest stuck
// rank.
#include "engine/schedule/dry_run.hpp"

#include "engine/schedule/stage_microbatch_flags.hpp"
#include "engine/schedule/static_check.hpp"
#include "engine/schedule/work_list.hpp"

#include <optional>

#include <fmt/format.h>

namespace pipelens {
namespace {

class DryRunner {
  public:
    DryRunner(const Schedule& schedule, const DependencyRules& rules)
        : schedule_(schedule),
          rules_(rules),
          done_(schedule.stage_count, schedule.microbatch_count),
          work_(schedule, WorkOrder::until_blocked) {}

    DryRunResult run() {
        DryRunResult result;
        work_.run([&](int rank, const Action& action) {
            if (first_missing(rank, action))
                return false;
            for (const Action& part : schedule_.parts_of(action))
                complete(part);
            ++result.actions_run;
            return true;
        });
        result.completed = work_.finished();
        if (!result.completed)
            result.hang = explain();
        return result;
    }

  private:
    // Per-stage and per-rank signals come earlier on the waiting rank itself, so under
    // blocking semantics they are met by the time the rank gets there.
    bool has(const Input& input) const {
        return input.program_order ||
               done_.has(input.stage, input.microbatch, signal_bit(input.signal));
    }

    std::optional<Input> first_missing(int rank, const Action& action) const {
        std::optional<Input> missing;
        for (const Action& part : schedule_.parts_of(action))
            if (!rules_.for_each_input(schedule_, rank, part, [&](const Input& input) {
                    if (has(input))
                        return true;
                    missing = input;
                    return false;
                }))
                break;
        return missing;
    }

    void complete(const Action& part) {
        for (Signal signal : rules_.products_of(part.kind)) {
            if (!is_per_microbatch(signal))
                continue;
            done_.set(part.stage, part.microbatch, signal_bit(signal));
            for (int waiter : rules_.waiters_of(schedule_, signal, part.stage))
                work_.wake(waiter);
        }
    }

    // Where the holder runs an action producing `missing`, at or after the step it stopped at;
    // -1 when it never does.
    int find_step(const Input& missing, ActionKind& producer) const {
        const auto& actions = schedule_.ranks[missing.holder];
        const auto producers = rules_.producers_of(missing.signal);
        for (std::size_t step = work_.next_step(missing.holder); step < actions.size(); ++step)
            for (const Action& part : schedule_.parts_of(actions[step]))
                for (ActionKind kind : producers)
                    if (part.kind == kind && part.stage == missing.stage &&
                        part.microbatch == missing.microbatch) {
                        producer = kind;
                        return static_cast<int>(step);
                    }
        return -1;
    }

    WaitLink link_for(int rank) const {
        const std::size_t step = work_.next_step(rank);
        const Action& action = schedule_.ranks[rank][step];
        const Input missing = *first_missing(rank, action);
        WaitLink link;
        link.rank = rank;
        link.step = static_cast<int>(step);
        link.action = schedule_.text(action);
        link.holder_rank = missing.holder;
        const auto producers = rules_.producers_of(missing.signal);
        ActionKind producer = producers.kinds[0];
        link.holder_step = find_step(missing, producer);
        link.needed = action_text(make_action(missing.stage, producer, missing.microbatch));
        if (link.holder_step < 0)
            for (int i = 1; i < producers.count; ++i)
                link.needed += fmt::format(
                    " (or {})", action_text(make_action(missing.stage, producers.kinds[i],
                                                        missing.microbatch)));
        return link;
    }

    HangReport explain() const {
        HangReport report;
        const int rank_count = static_cast<int>(schedule_.ranks.size());
        std::vector<int> link_index(rank_count, -1);
        for (int rank = 0; rank < rank_count; ++rank)
            if (work_.next_step(rank) < schedule_.ranks[rank].size()) {
                link_index[rank] = static_cast<int>(report.blocked.size());
                report.blocked.push_back(link_for(rank));
            }
        // Follow the waits from the lowest stuck rank until a rank repeats or the chain ends.
        std::vector<bool> visited(rank_count, false);
        int rank = report.blocked.front().rank;
        std::vector<WaitLink> chain;
        while (!visited[rank]) {
            visited[rank] = true;
            const WaitLink& link = report.blocked[link_index[rank]];
            chain.push_back(link);
            if (link.holder_step < 0 || link_index[link.holder_rank] < 0)
                break;
            rank = link.holder_rank;
        }
        // Keep only the cycle itself when the chain closes on a rank further along it.
        if (chain.back().holder_step >= 0) {
            const int closing = chain.back().holder_rank;
            std::size_t start = 0;
            while (start < chain.size() && chain[start].rank != closing)
                ++start;
            chain.erase(chain.begin(), chain.begin() + static_cast<std::ptrdiff_t>(start));
        }
        report.cycle = std::move(chain);
        return report;
    }

    const Schedule& schedule_;
    const DependencyRules& rules_;
    StageMicrobatchFlags done_;
    WorkList work_;
};

std::string describe(const WaitLink& link) {
    std::string line = fmt::format("rank {} is stuck at step {} ({}): it needs {}, ", link.rank,
                                   link.step, link.action, link.needed);
    if (!link.holder_note.empty())
        return line + link.holder_note;
    if (link.holder_step < 0)
        return line + "which no rank ever runs";
    if (link.holder_rank == link.rank)
        return line + fmt::format("which rank {} itself only runs later, at step {}", link.rank,
                                  link.holder_step);
    return line +
           fmt::format("which rank {} only runs at step {}", link.holder_rank, link.holder_step);
}

}  // namespace

std::string HangReport::text(std::string_view subject) const {
    if (cycle.empty())
        return "schedule runs to completion";
    std::string out;
    if (!closes_cycle()) {
        out = fmt::format("{}: a rank waits for an action that never runs", subject);
    } else if (cycle.size() == 1) {
        out = fmt::format("{}: rank {} waits on itself", subject, cycle.front().rank);
    } else {
        std::string ranks;
        for (const auto& link : cycle)
            ranks += fmt::format("rank {} -> ", link.rank);
        out = fmt::format("{}: wait cycle {}rank {}", subject, ranks, cycle.front().rank);
    }
    for (const auto& link : cycle)
        out += "\n  " + describe(link);
    std::size_t others = 0;
    for (const auto& link : blocked) {
        bool in_cycle = false;
        for (const auto& cycle_link : cycle)
            in_cycle |= cycle_link.rank == link.rank;
        if (in_cycle)
            continue;
        if (others++ == 0)
            out += "\n also stuck:";
        out += "\n  " + describe(link);
    }
    return out;
}

DryRunResult dry_run(const Schedule& schedule, const DependencyRules& rules) {
    require_valid_structure(schedule);
    return DryRunner(schedule, rules).run();
}

ScheduleHangError::ScheduleHangError(HangReport report, const std::string& source)
    : std::runtime_error(source.empty() ? report.text() : source + ": " + report.text()),
      report_(std::move(report)) {}

}  // namespace pipelens
