// The viewer's data model without a window: opening a real trace file, showing and comparing
// runs (actions matched by text, the largest differences found), a file that is not a trace
// leaving the open one in place, opened files remembered in a kept recent-files list, and a
// failed real run shown by where it failed rather than a step time.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "app/viewer/trace_session.hpp"
#include "app/viewer/viewer_layout.hpp"
#include "engine/run_record/run_trace.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "sim/simulation_trace.hpp"
#include "sim/simulator.hpp"
#include "tests/fresh_trace.hpp"
#include "traces/text/quantities.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::viewer {
namespace {

namespace fs = std::filesystem;

std::string contents(const fs::path& path) {
    std::ifstream file(path);
    std::ostringstream text;
    text << file.rdbuf();
    return text.str();
}

// Two simulated runs of 1F1B pp=2 m=4: run 1 with 1000 ns forwards, run 2 with 1500 ns.
fs::path two_runs(const std::string& name) {
    const fs::path path = testing::fresh_trace(name);
    const Schedule lowered = lower(generate_schedule({ScheduleKind::one_f_one_b, 2, 1, 4}));
    traces::TraceWriter writer(path);
    for (const std::int64_t forward_ns : {1000, 1500}) {
        sim::CostModel costs;
        costs.stages = {sim::StageCost{forward_ns, 1000, 1000, std::nullopt}};
        traces::RunRecord run;
        run.schedule = lowered.name;
        run.pp = 2;
        run.m = 4;
        sim::record_simulation(writer, lowered, costs, sim::simulate(lowered, costs), run);
    }
    return path;
}

TEST(TraceSession, OpeningShowsTheLatestRunAndComparingMatchesActionsByText) {
    const fs::path path = two_runs("session_compare");
    TraceSession session;
    ASSERT_TRUE(open_trace(session, path)) << session.error;
    EXPECT_EQ(session.runs.size(), 2u);
    EXPECT_EQ(session.run_id, 2);
    ASSERT_TRUE(session.model);
    EXPECT_FALSE(session.compared);

    compare_with(session, 1);
    ASSERT_TRUE(session.compared);
    EXPECT_EQ(session.compared_run_id, 1);
    const auto forward = session.model->find("1F2");
    ASSERT_TRUE(forward);
    const TimelineAction& action = session.model->action(*forward);
    EXPECT_EQ(action.end_ns - action.start_ns, 1500);
    EXPECT_EQ(session.match.durations.at(action.label), 1000);
    // Every forward is 500 ns slower and nothing else changed: the 8 largest are the forwards.
    const std::vector<ActionDifference> largest = largest_differences(session.match, std::nullopt);
    ASSERT_EQ(largest.size(), 8u);
    for (const ActionDifference& difference : largest) {
        const std::string label(session.model->label(session.model->action(difference.at)).view());
        EXPECT_EQ(difference.delta_ns, 500) << label;
        EXPECT_NE(label.find('F'), std::string::npos) << label;
    }

    compare_with(session, 2);  // the shown run itself: no comparison
    EXPECT_FALSE(session.compared);
    EXPECT_TRUE(session.match.durations.empty());
    fs::remove(path);
}

TEST(TraceSession, AFileThatIsNotATraceKeepsTheOpenOneAndSaysWhy) {
    const fs::path path = two_runs("session_keep");
    TraceSession session;
    ASSERT_TRUE(open_trace(session, path, 1));
    EXPECT_EQ(session.run_id, 1);
    const fs::path text = testing::fresh_trace("session_not_a_trace");
    std::ofstream(text) << "hello, not sqlite\n";
    EXPECT_FALSE(open_trace(session, text));
    EXPECT_EQ(session.error.rfind(text.string() + ": ", 0), 0u) << session.error;
    EXPECT_EQ(session.reader->path(), path);
    EXPECT_EQ(session.run_id, 1);
    ASSERT_TRUE(session.model);
    EXPECT_FALSE(show_run(session, 7));
    EXPECT_EQ(session.run_id, 1);
    fs::remove(path);
    fs::remove(text);
}

TEST(TraceSession, OpenedFilesGoToAKeptRecentFilesList) {
    const fs::path path = two_runs("session_recent");
    const fs::path directory =
        fs::temp_directory_path() / ("pipelens_session_config_" + std::to_string(::getpid()));
    fs::remove_all(directory);
    TraceSession session;
    session.recent_files = RecentFiles::kept_in(directory / "recent_files");
    ASSERT_TRUE(open_trace(session, path));
    EXPECT_FALSE(open_trace(session, directory / "missing.db"));
    EXPECT_EQ(contents(directory / "recent_files"), fs::absolute(path).string() + "\n");
    fs::remove_all(directory);
    fs::remove(path);
}

// A real run of 1F1B pp=2 m=4 recorded as `pipelens run --fault stage1=dtype:bf16` records it:
// rank 1's forward of stage 1 finds its outputs in bf16, and rank 0 stops because of it.
run_record::PipelineRunResult failed_real_run(const Schedule& lowered) {
    run_record::PipelineRunResult result;
    result.completed = false;
    result.step_time_ns = 2'500;  // the last action's end: no step
    run_record::RankRun rank0;
    rank0.rank = 0;
    rank0.timeline = {{0, 0, 1'000, 0}, {1, 1'000, 1'100, 0}};  // 0F0, 0SEND_F0
    rank0.busy_ns = 1'000;
    rank0.failure = run_record::RunFailure{
        0, -1, -1, "", "stopped", "", "", "stopped: rank 1 failed", 3'000, std::nullopt};
    run_record::RankRun rank1;
    rank1.rank = 1;
    rank1.timeline = {{0, 1'000, 1'200, 0}};  // 1RECV_F0
    rank1.failure = run_record::RunFailure{1,
                                           1,
                                           0,
                                           "1F0",
                                           "dtype_mismatch",
                                           "f32",
                                           "bf16",
                                           "Stage 1 forward outputs[0] has a dtype mismatch: "
                                           "expected torch.float32 actual torch.bfloat16 (rank 1, "
                                           "microbatch 0)",
                                           2'500,
                                           1'200};
    result.ranks = {rank0, rank1};
    EXPECT_EQ(lowered.text(lowered.ranks[0][0]), "0F0");
    EXPECT_EQ(lowered.text(lowered.ranks[0][1]), "0SEND_F0");
    EXPECT_EQ(lowered.text(lowered.ranks[1][0]), "1RECV_F0");
    return result;
}

// A failed run has no step: the header strip says where it failed, with its first error, the
// runs list marks it FAILED, and comparing it with a finished run says there is no step to
// compare, instead of the last action's end passed off as its step.
TEST(TraceSession, AFailedRunSaysWhereItFailedInsteadOfAStep) {
    const fs::path path = two_runs("session_failed");
    const Schedule lowered = lower(generate_schedule({ScheduleKind::one_f_one_b, 2, 1, 4}));
    {
        traces::TraceWriter writer(path);
        run_record::record_measured_run(writer, lowered, failed_real_run(lowered), "");
    }
    TraceSession session;
    ASSERT_TRUE(open_trace(session, path)) << session.error;
    ASSERT_EQ(session.run_id, 3);
    const std::string failed_at =
        "failed at rank 1, stage 1, action 1F0: Stage 1 forward outputs[0] has a dtype mismatch: "
        "expected torch.float32 actual torch.bfloat16 (rank 1, microbatch 0)";
    EXPECT_EQ(session.summary_line, failed_at + "  |  peak memory n/a  |  busiest rank 0");
    EXPECT_FALSE(session.summary.step_ns);
    EXPECT_FALSE(session.summary.bubble_ratio);
    // Nor has any rank a bubble to measure against it (the lanes said "bubble 87%" and "100%"
    // where `summary` prints "-"): its busy time stands, as a time.
    for (const RankTimeline& rank : session.model->ranks())
        EXPECT_EQ(rank_shares_text(rank, session.summary),
                  "busy " + format_duration(rank.figures.busy_ns));
    // Its critical path goes only as far as the run did, as `summary --critical-path` says.
    EXPECT_EQ(critical_path_text(*session.model, session.summary.steps.size())
                  .rfind("critical path, up to where the run "
                         "stopped:",
                         0),
              0u)
        << critical_path_text(*session.model, session.summary.steps.size());
    // Nor has it a cool-down: the Ranks panel's column says "-" as `summary`'s does.
    ASSERT_FALSE(session.summary.ranks.empty());
    for (const RankRow& row : session.summary.ranks)
        EXPECT_FALSE(row.cooldown_ns) << "rank " << row.rank;
    ASSERT_EQ(session.runs.size(), 3u);
    EXPECT_EQ(run_list_text(session.runs[2]), "3 real pp=2 m=4  1F1B  FAILED");
    // Sharding decisions are a run without a step: no "0 ns" for one.
    traces::RunRecord sharding;
    sharding.id = 4;
    sharding.schedule = "sharding";
    sharding.pp = 8;
    sharding.status = traces::RunStatus::finished;
    sharding.step_time_ns = 0;
    EXPECT_EQ(run_list_text(sharding), "4 sim 8 devices  sharding");
    ASSERT_TRUE(session.runs[0].step_time_ns);
    EXPECT_EQ(run_list_text(session.runs[0]),
              "1 sim pp=2 m=4  1F1B  " + format_duration(*session.runs[0].step_time_ns));

    compare_with(session, 1);
    EXPECT_EQ(comparison_line(session), "vs run 1: no step to compare: run 3 " + failed_at);
    ASSERT_TRUE(show_run(session, 2));
    EXPECT_EQ(comparison_line(session).rfind("vs run 1: step +", 0), 0u)
        << comparison_line(session);
    const RankTimeline& finished = session.model->ranks().front();
    EXPECT_EQ(rank_shares_text(finished, session.summary),
              fmt::format("busy {:.0f}%  bubble {:.0f}%",
                          100.0 * finished.figures.busy_ns /
                              (finished.figures.busy_ns + finished.figures.bubble_ns),
                          100.0 * finished.figures.bubble_ratio));
    EXPECT_EQ(rank_shares_text(finished, session.summary, true), "no step: it hangs");
    EXPECT_EQ(session.summary.ranks.front().cooldown_ns, finished.figures.cooldown_ns);
    compare_with(session, 3);
    EXPECT_EQ(comparison_line(session), "vs run 3: no step to compare: run 3 " + failed_at);
    fs::remove(path);
}

// The header at 1024 px: right of the badge, ProggyClean's 7 px per character, what the window
// leaves is 612 px on two lines. A failed run's message is cut short so that the peak, the
// busiest rank and the critical path all show; a finished run's figures wrap whole.
float proggy_width(std::string_view text) {
    return 7.0f * static_cast<float>(text.size());
}
constexpr float kHeaderWidthAt1024 = 1024 - (kBadgeLeft + kBadgeWidth + 10) - kRightMargin;

TEST(TraceSession, EveryHeaderFigureFitsAt1024Pixels) {
    const fs::path path = two_runs("session_header");
    const Schedule lowered = lower(generate_schedule({ScheduleKind::one_f_one_b, 2, 1, 4}));
    {
        traces::TraceWriter writer(path);
        run_record::record_measured_run(writer, lowered, failed_real_run(lowered), "");
    }
    TraceSession session;
    ASSERT_TRUE(open_trace(session, path)) << session.error;
    finish_analysis(session);
    const std::vector<std::string> figures = header_figures(session, false);
    ASSERT_EQ(figures.size(), 4u);  // failure, peak, busiest rank, critical path
    const std::vector<std::string> lines =
        fit_figures(figures, kHeaderWidthAt1024, kHeaderLines, proggy_width);
    ASSERT_EQ(lines.size(), 2u);
    for (const std::string& line : lines)
        EXPECT_LE(proggy_width(line), kHeaderWidthAt1024) << line;
    EXPECT_EQ(lines[0].rfind("failed at rank 1, stage 1, action 1F0: Stage 1", 0), 0u) << lines[0];
    const std::string both = lines[0] + "\n" + lines[1];
    for (const std::string& figure : {figures[1], figures[2], figures[3]})
        EXPECT_NE(both.find(figure), std::string::npos) << figure << " not in\n" << both;
    EXPECT_NE(both.find("..."), std::string::npos) << both;

    ASSERT_TRUE(show_run(session, 2));  // finished: every figure whole, none cut
    finish_analysis(session);
    const std::vector<std::string> finished = header_figures(session, false);
    const std::vector<std::string> wrapped =
        fit_figures(finished, kHeaderWidthAt1024, kHeaderLines, proggy_width);
    std::string joined;
    for (const std::string& line : wrapped) {
        EXPECT_LE(proggy_width(line), kHeaderWidthAt1024) << line;
        joined += line + "  |  ";
    }
    for (const std::string& figure : finished)
        EXPECT_NE(joined.find(figure), std::string::npos) << figure;
    fs::remove(path);
}

// Lines are filled in turn, a figure never split; one too wide for a line is cut at its end.
TEST(TraceSession, FiguresWrapWholeAndOnlyTheFirstIsCut) {
    EXPECT_EQ(fit_figures({"aaaa", "bbbb", "cccc"}, 7 * 13, 2, proggy_width),
              (std::vector<std::string>{"aaaa  |  bbbb", "cccc"}));
    EXPECT_EQ(fit_figures({"aaaaaaaaaaaaaaaaaaaa", "bb", "cc"}, 7 * 10, 2, proggy_width),
              (std::vector<std::string>{"aaaaaaa...", "bb  |  cc"}));
    EXPECT_TRUE(fit_figures({}, 100, 2, proggy_width).empty());
}

// A checked schedule that can hang never ends: its header has no step, bubble or critical
// path figures, says why in their place, and the runs list says HANGS.
TEST(TraceSession, AScheduleThatCanHangHasNoStepFigures) {
    const fs::path path = two_runs("session_hangs");
    TraceSession session;
    ASSERT_TRUE(open_trace(session, path)) << session.error;
    finish_analysis(session);
    const std::vector<std::string> figures = header_figures(session, true);
    EXPECT_EQ(figures.front(), kHangsNoStep);
    EXPECT_EQ(figures.back(), kHangsNoPath);
    for (const std::string& figure : figures) {
        EXPECT_NE(figure.rfind("step ", 0), 0u) << figure;
        EXPECT_NE(figure.rfind("bubble ", 0), 0u) << figure;
    }
    EXPECT_EQ(run_list_text(session.runs[1], true), "2 sim pp=2 m=4  1F1B  HANGS");
    EXPECT_EQ(header_figures(session, false).front().rfind("step ", 0), 0u);
    fs::remove(path);
}

}  // namespace
}  // namespace pipelens::viewer
