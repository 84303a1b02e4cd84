// A run of several training steps written the way a recording process writes one, step by
// step, with traces' TraceWriter: the viewer's step tests (model, screenshot, live) read it.
//
// Each step is the same two-rank pipeline of one microbatch, kStepPeriodNs after the one before:
// rank 0 runs 0F0 [0, 1000) and 0B0 [4000, 6000), rank 1 runs 1F0 [1200, 2200) and
// 1B0 [2200, 3800), all relative to the step's start. So step k spans
// [k * kStepPeriodNs, k * kStepPeriodNs + 6000), with 5600 ns of compute over its two ranks.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "tests/fresh_trace.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::testing {

inline constexpr std::int64_t kStepPeriodNs = 10'000;
inline constexpr std::int64_t kStepSpanNs = 6'000;
inline constexpr std::int64_t kStepBusyNs = 5'600;

enum class ActionNumbering { through_the_run, afresh_each_step };

inline std::int64_t begin_multi_step_run(traces::TraceWriter& writer) {
    traces::RunRecord run;
    run.schedule = "1F1B";
    run.pp = 2;
    run.m = 1;
    return writer.begin_run(run);
}

// Adds step `step`'s four actions; `actions.step` numbers them through the run or per step.
inline void write_step(traces::TraceWriter& writer, std::int64_t run_id, int step,
                       ActionNumbering numbering = ActionNumbering::through_the_run) {
    const std::int64_t base = step * kStepPeriodNs;
    const int first = numbering == ActionNumbering::through_the_run ? 2 * step : 0;
    struct Piece {
        int rank, stage;
        std::uint8_t kind;  // 0 F, 3 B
        std::int64_t start, end;
    };
    const Piece pieces[] = {
        {0, 0, 0, 0, 1000}, {0, 0, 3, 4000, 6000}, {1, 1, 0, 1200, 2200}, {1, 1, 3, 2200, 3800}};
    int index = 0;
    for (const Piece& piece : pieces) {
        traces::ActionRecord action;
        action.rank = piece.rank;
        action.step = first + index++ % 2;
        action.kind = piece.kind;
        action.stage = piece.stage;
        action.microbatch = 0;
        action.start_ns = base + piece.start;
        action.end_ns = base + piece.end;
        writer.add_action(run_id, action);
    }
}

// A finished run of `steps` steps in a fresh trace file.
inline std::filesystem::path multi_step_trace(
    const std::string& name, int steps,
    ActionNumbering numbering = ActionNumbering::through_the_run) {
    const std::filesystem::path path = fresh_trace(name);
    traces::TraceWriter writer(path);
    const std::int64_t run_id = begin_multi_step_run(writer);
    for (int step = 0; step < steps; ++step)
        write_step(writer, run_id, step, numbering);
    writer.finish_run(run_id, kStepSpanNs, 1.0 - kStepBusyNs / (2.0 * kStepSpanNs));
    return path;
}

}  // namespace pipelens::testing
