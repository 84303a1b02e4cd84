// Telling a profiled window's training steps apart (profiler_steps.hpp). A ProfilerStep range
// counts as a step only when an action starts in it: the actions' CPU ranges for the pipelining
// runtime and GPipe, the send and receive posts for a single-stage schedule, whose every step
// posts some.
#include "engine/import/profiler_steps.hpp"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "engine/import/imported_run.hpp"
#include "engine/import/profiler_step_edges.hpp"
#include "engine/text/shortened.hpp"

namespace pipelens::import {
namespace {

// The index of the range of `windows` (by start, not overlapping) that holds `time_ns`, or -1.
int window_of(const std::vector<Range>& windows, std::int64_t time_ns) {
    const auto after = std::upper_bound(
        windows.begin(), windows.end(), time_ns,
        [](std::int64_t time, const Range& window) { return time < window.start_ns; });
    if (after == windows.begin() || time_ns >= std::prev(after)->end_ns)
        return -1;
    return static_cast<int>(std::distance(windows.begin(), after) - 1);
}

// When the rank's actions began: their ranges, or a single-stage schedule's posts.
std::vector<std::int64_t> action_starts(const RankFile& file) {
    std::vector<std::int64_t> starts;
    for (const Range& range : file.cpu_ranges)
        starts.push_back(range.start_ns);
    if (file.cpu_ranges.empty())
        for (const StageOp& op : file.stage_operators.ops)
            if (op.kind == StageOpKind::send_post || op.kind == StageOpKind::recv_post)
                starts.push_back(op.start_ns);
    return starts;
}

// The ProfilerStep ranges an action starts in.
std::vector<Range> windows_holding_actions(const RankFile& file) {
    std::vector<bool> used(file.profiler_steps.size(), false);
    for (const std::int64_t start : action_starts(file))
        if (const int window = window_of(file.profiler_steps, start); window >= 0)
            used[static_cast<std::size_t>(window)] = true;
    std::vector<Range> windows;
    for (std::size_t index = 0; index < used.size(); ++index)
        if (used[index])
            windows.push_back(file.profiler_steps[index]);
    return windows;
}

// The k-th range of a name is step k; as many steps as the rarest name has ranges. A
// single-stage trace (no ranges) is one step.
RankSteps by_occurrence(const RankFile& file) {
    RankSteps steps;
    std::map<std::string, int> seen;
    for (const Range& range : file.cpu_ranges)
        steps.of_range.push_back(seen[range.name]++);
    steps.count = seen.empty() ? 1 : std::numeric_limits<int>::max();
    for (const auto& [name, count] : seen)
        steps.count = std::min(steps.count, count);
    return steps;
}

ImportError repeated_in_step(const RankFile& file, const Range& window, const Range& first,
                             const Range& again) {
    return ImportError(fmt::format(
        "{} ({}): {} holds \"{}\" twice (bytes {} and {}): each ProfilerStep# range is read as "
        "one training step, which runs each action once; did the profiled loop run the "
        "schedule's step() more than once between two calls of the profiler's step()?",
        file.path, file.who, window.name, shown_text(first.name, 80), first.offset, again.offset));
}

RankSteps by_profiler_steps(const RankFile& file, std::vector<Range> windows) {
    RankSteps steps;
    steps.from_profiler_steps = true;
    steps.count = static_cast<int>(windows.size());
    steps.windows = std::move(windows);
    std::vector<std::map<std::string_view, const Range*>> seen(steps.windows.size());
    for (const Range& range : file.cpu_ranges) {
        const int window = window_of(steps.windows, range.start_ns);
        steps.of_range.push_back(window);
        if (window < 0) {
            ++steps.outside;
            continue;
        }
        const auto [at, fresh] = seen[static_cast<std::size_t>(window)].emplace(range.name, &range);
        if (!fresh)
            throw repeated_in_step(file, steps.windows[static_cast<std::size_t>(window)],
                                   *at->second, range);
    }
    return steps;
}

// "ProfilerStep#12" -> 12; -1 for a name without a number.
long long step_number(const std::string& name) {
    const std::size_t hash = name.rfind('#');
    try {
        return hash == std::string::npos ? -1 : std::stoll(name.substr(hash + 1));
    } catch (const std::exception&) {
        return -1;
    }
}

// torch.profiler closes one step's range where the next begins: ranges that overlap (a step
// nested in another) would put one step's actions in another's.
void refuse_overlapping_steps(const RankFile& file) {
    for (std::size_t index = 1; index < file.profiler_steps.size(); ++index) {
        const Range& earlier = file.profiler_steps[index - 1];
        const Range& later = file.profiler_steps[index];
        if (later.start_ns < earlier.end_ns)
            throw ImportError(fmt::format(
                "{} ({}): {} (byte {}) begins inside {} (byte {}): torch.profiler's step ranges "
                "follow one another, so these cannot say which step an action is in",
                file.path, file.who, later.name, later.offset, earlier.name, earlier.offset));
    }
}

bool in_window(const Range& window, std::int64_t time_ns) {
    return time_ns >= window.start_ns && time_ns < window.end_ns;
}

}  // namespace

std::vector<std::string> trim_step_edges(std::vector<RankFile>& files) {
    std::vector<std::string> notes;
    for (RankFile& file : files) {
        if (!windows_holding_actions(file).empty())  // the ProfilerStep ranges bound the steps
            continue;
        const std::size_t dropped = drop_leading_partial_step(file.cpu_ranges);
        if (dropped > 0)
            notes.push_back(fmt::format(
                "{} ({}): the profile began during a step: its first {} action ranges, that "
                "step's end, are left out",
                file.path, file.who, dropped));
        if (const std::size_t past =
                ranges_past_last_step(file.cpu_ranges, by_occurrence(file).count))
            notes.push_back(fmt::format(
                "{} ({}): {} action ranges past its last whole step (the profile stopped during "
                "a step, or an action ran again) are left out",
                file.path, file.who, past));
    }
    return notes;
}

RankSteps rank_steps(const RankFile& file) {
    refuse_overlapping_steps(file);
    std::vector<Range> windows = windows_holding_actions(file);
    return windows.empty() ? by_occurrence(file) : by_profiler_steps(file, std::move(windows));
}

std::vector<std::string> align_profiler_steps(const std::vector<RankFile>& files,
                                              std::vector<RankSteps>& steps) {
    std::optional<std::set<long long>> common;
    for (const RankSteps& rank : steps) {
        if (!rank.from_profiler_steps)
            continue;
        std::set<long long> numbers;
        for (const Range& window : rank.windows)
            numbers.insert(step_number(window.name));
        if (common) {
            std::set<long long> both;
            std::set_intersection(common->begin(), common->end(), numbers.begin(), numbers.end(),
                                  std::inserter(both, both.end()));
            common = std::move(both);
        } else {
            common = std::move(numbers);
        }
    }
    std::vector<std::string> notes;
    if (!common)
        return notes;
    if (common->empty()) {
        std::string held;
        for (std::size_t rank = 0; rank < files.size(); ++rank)
            if (steps[rank].from_profiler_steps)
                held +=
                    fmt::format("{}{} {}..{}", held.empty() ? "" : ", ", files[rank].path,
                                steps[rank].windows.front().name, steps[rank].windows.back().name);
        throw ImportError(fmt::format(
            "the ranks' profiles hold no training step in common ({}): profile the same steps on "
            "every rank (torch.profiler's schedule, started at the same iteration)",
            held));
    }
    for (std::size_t rank = 0; rank < files.size(); ++rank) {
        if (!steps[rank].from_profiler_steps || steps[rank].windows.size() == common->size())
            continue;
        std::vector<Range> kept, left;
        for (const Range& window : steps[rank].windows)
            (common->contains(step_number(window.name)) ? kept : left).push_back(window);
        std::string names;
        for (const Range& window : left)
            names += fmt::format("{}{}", names.empty() ? "" : ", ", window.name);
        notes.push_back(fmt::format("{} ({}): {} left out: not profiled on every rank",
                                    files[rank].path, files[rank].who, names));
        steps[rank] = by_profiler_steps(files[rank], std::move(kept));
    }
    return notes;
}

int common_steps(const std::vector<RankSteps>& steps) {
    int common = std::numeric_limits<int>::max();
    for (const RankSteps& rank : steps)
        common = std::min(common, rank.count);
    return common;
}

std::string uneven_steps(const std::vector<RankFile>& files, const std::vector<RankSteps>& steps) {
    std::string counts;
    bool uneven = false;
    for (std::size_t rank = 0; rank < files.size(); ++rank) {
        uneven |= steps[rank].count != steps.front().count;
        counts +=
            fmt::format("{}{} {}", counts.empty() ? "" : ", ", files[rank].path, steps[rank].count);
    }
    return uneven ? counts : std::string();
}

int chosen_step(int common, std::optional<int> asked, const std::string& uneven) {
    if (!asked)
        return common - 1;
    if (*asked < 0 || *asked >= common)
        throw ImportError(
            uneven.empty()
                ? fmt::format("step {} asked for, but every rank's trace holds only steps 0..{}",
                              *asked, common - 1)
                : fmt::format("step {} asked for, but not every rank's trace holds it (steps "
                              "per file: {}); give a step from 0 to {}",
                              *asked, uneven, common - 1));
    return *asked;
}

std::optional<TimeWindow> step_window(const RankFile& file, const RankSteps& steps, int step) {
    if (steps.from_profiler_steps) {
        const Range& window = steps.windows.at(static_cast<std::size_t>(step));
        return TimeWindow{window.start_ns, window.end_ns};
    }
    std::optional<TimeWindow> span;
    for (std::size_t index = 0; index < file.cpu_ranges.size(); ++index) {
        if (steps.of_range[index] != step)
            continue;
        const Range& range = file.cpu_ranges[index];
        if (!span)
            span = TimeWindow{range.start_ns, range.end_ns};
        span->start_ns = std::min(span->start_ns, range.start_ns);
        span->end_ns = std::max(span->end_ns, range.end_ns);
    }
    return span;
}

StageOperators step_operators(const RankFile& file, const RankSteps& steps, int step) {
    if (!steps.from_profiler_steps)
        return file.stage_operators;
    const Range& window = steps.windows.at(static_cast<std::size_t>(step));
    StageOperators inside;
    for (const StageOp& op : file.stage_operators.ops)
        if (in_window(window, op.start_ns))
            inside.ops.push_back(op);
    for (const AutogradFlow& flow : file.stage_operators.flows)
        if (in_window(window, flow.ts_ns))
            inside.flows.push_back(flow);
    return inside;
}

std::vector<std::string> profiler_step_notes(const std::vector<RankFile>& files,
                                             const std::vector<RankSteps>& steps, int step) {
    std::vector<std::string> notes;
    std::string names;
    for (std::size_t rank = 0; rank < files.size(); ++rank)
        if (steps[rank].from_profiler_steps)
            names += fmt::format("{}{} ({})", names.empty() ? "" : ", ",
                                 steps[rank].windows.at(static_cast<std::size_t>(step)).name,
                                 files[rank].path);
    if (!names.empty())
        notes.push_back(fmt::format(
            "steps are torch.profiler's steps (each ProfilerStep#N range that holds actions is "
            "one): step {} is {}",
            step, names));
    for (std::size_t rank = 0; rank < files.size(); ++rank)
        if (steps[rank].outside > 0)
            notes.push_back(fmt::format(
                "{} ({}): {} action ranges outside every ProfilerStep# range are left out",
                files[rank].path, files[rank].who, steps[rank].outside));
    return notes;
}

}  // namespace pipelens::import
