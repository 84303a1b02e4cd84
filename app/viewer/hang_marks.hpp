// Where a schedule's hang (engine/schedule's HangReport, as `pipelens check` reports it) falls
// on the timeline of that schedule: each blocked rank's stuck action, the action it waits for
// on the rank that holds it, and which ranks close the wait cycle. GUI-free, so the overlay
// (hang_overlay.cpp) and the screenshot tests place it with the same lookup.
//
// Invariants: a report's (rank, step) is the step-th action of the rank's list, which is the
// `step` a trace records for it (actions.step), so an action is found by rank and step, in
// either lane; a link whose action the timeline does not hold (or that no rank runs) has no
// location, and is drawn without that end.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/viewer/timeline_model.hpp"
#include "app/viewer/viewer_layout.hpp"
#include "engine/schedule/dry_run.hpp"
#include "traces/palette.hpp"

namespace pipelens::viewer {

// The wait cycle's ranks and its arrows; magenta, apart from every action and failure colour.
inline constexpr palette::Rgb kWaitCycle = {235, 60, 235};
// A rank of the wait cycle is marked by a bar of kWaitCycle down the right edge of its gutter,
// across its lanes: x in [kCycleBarRight - kCycleBarWidth, kCycleBarRight).
inline constexpr float kCycleBarWidth = 6;
inline constexpr float kCycleBarRight = kSidebarWidth + kGutterWidth - 3;

struct HangWait {
    int rank = 0;
    std::optional<ActionLocation> stuck;   // the action the rank could not run
    std::optional<ActionLocation> needed;  // what it waits for, where its holder runs it
    bool in_cycle = false;
    std::string needs;  // the needed action's text, e.g. "1SEND_B1"
};

struct HangMarks {
    std::vector<int> cycle_ranks;  // in the cycle's order
    std::vector<HangWait> waits;   // the cycle's links first, then the other blocked ranks
    bool in_cycle(int rank) const;
};

// The action `step` of `rank` in `model`, in either lane.
std::optional<ActionLocation> find_step(const TimelineModel& model, int rank, int step);

HangMarks hang_marks(const TimelineModel& model, const HangReport& report);

}  // namespace pipelens::viewer
