// The viewer's data model without a window: opening a real trace file, showing and comparing
// runs (actions matched by text, the largest differences found), a file that is not a trace
// leaving the open one in place, and opened files remembered in a kept recent-files list.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/viewer/trace_session.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "sim/simulation_trace.hpp"
#include "sim/simulator.hpp"
#include "tests/fresh_trace.hpp"
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
    EXPECT_EQ(session.compared_durations.at(action.label), 1000);
    // Every forward is 500 ns slower and nothing else changed: the 8 largest are the forwards.
    ASSERT_EQ(session.largest_differences.size(), 8u);
    for (const TraceSession::Difference& difference : session.largest_differences) {
        EXPECT_EQ(difference.delta_ns, 500) << difference.label;
        EXPECT_NE(difference.label.find('F'), std::string::npos) << difference.label;
    }

    compare_with(session, 2);  // the shown run itself: no comparison
    EXPECT_FALSE(session.compared);
    EXPECT_TRUE(session.compared_durations.empty());
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

}  // namespace
}  // namespace pipelens::viewer
