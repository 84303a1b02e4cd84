// A file dropped on the viewer, without a window: routed by its kind, a schedule checked as
// `pipelens check` checks it (the swapped-receive example's stuck actions and wait cycle found
// on its timeline), one that cannot hang simulated, profiler traces imported as `pipelens
// import` imports them, and a malformed file refused with the importer's message, naming the
// file and the byte.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/viewer/file_drop.hpp"
#include "app/viewer/hang_marks.hpp"
#include "app/viewer/timeline_model.hpp"
#include "tests/temp_directory.hpp"
#include "traces/trace_reader.hpp"

namespace pipelens::viewer {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = PIPELENS_SOURCE_DIR;

class FileDropTest : public testing::TempDirectoryTest {
  protected:
    FileDropTest() : TempDirectoryTest("file_drop") {}

    // Drops work on copies: a drop writes its trace beside the file.
    fs::path copy(const fs::path& from) const {
        const fs::path to = directory_ / from.filename();
        fs::copy_file(from, to);
        return to;
    }
};

TEST(DropRoute, EachKindGoesWhereItsCommandWouldTakeIt) {
    using traces::FileKind;
    EXPECT_EQ(route_of(FileKind::sqlite), DropRoute::open_trace);
    EXPECT_EQ(route_of(FileKind::schedule_csv), DropRoute::check_schedule);
    EXPECT_EQ(route_of(FileKind::pytorch_profiler), DropRoute::import_files);
    EXPECT_EQ(route_of(FileKind::pipelining_chrometrace), DropRoute::import_files);
    EXPECT_EQ(route_of(FileKind::flight_recorder), DropRoute::import_files);
    EXPECT_EQ(route_of(FileKind::megatron_timers), DropRoute::import_files);
    EXPECT_EQ(route_of(FileKind::experiment_toml), DropRoute::refuse);
    EXPECT_EQ(route_of(FileKind::plan_toml), DropRoute::refuse);
    EXPECT_EQ(route_of(FileKind::unknown), DropRoute::refuse);
}

TEST_F(FileDropTest, TheTraceIsRecordedBesideTheFileOrInTheTemporaryFolder) {
    EXPECT_EQ(derived_trace_path(directory_ / "rank0.json"), directory_ / "rank0.json.pipelens.db");
    EXPECT_EQ(derived_trace_path("/no/such/folder/rank0.json"),
              fs::temp_directory_path() / "rank0.json.pipelens.db");
}

TEST_F(FileDropTest, TheSwappedReceiveExampleShowsItsStuckActionsAndWaitCycle) {
    const fs::path csv = copy(kSource / "assets/examples/swapped_recvs.csv");
    const DropOutcome outcome = process_drop({csv});
    ASSERT_EQ(outcome.error, "");
    EXPECT_EQ(outcome.route, DropRoute::check_schedule);
    // What `pipelens check` prints for it, word for word.
    EXPECT_EQ(outcome.report,
              csv.string() +
                  ": schedule can hang: wait cycle rank 0 -> rank 1 -> rank 0\n"
                  "  rank 0 is stuck at step 8 (0RECV_B1): it needs 1SEND_B1, which rank 1 only "
                  "runs at step 8\n"
                  "  rank 1 is stuck at step 6 (1RECV_F3): it needs 0SEND_F3, which rank 0 only "
                  "runs at step 11");
    ASSERT_TRUE(outcome.hang);
    EXPECT_EQ(outcome.trace, directory_ / "swapped_recvs.csv.pipelens.db");
    ASSERT_EQ(outcome.run_id, 1);

    // Its timeline: the file's order at one unit step (1 us) per action.
    const traces::TraceReader reader(outcome.trace);
    const TimelineModel model = TimelineModel::load(reader, *outcome.run_id);
    ASSERT_EQ(model.ranks().size(), 2u);
    EXPECT_EQ(model.action_count(), 32u);
    const HangMarks marks = hang_marks(model, *outcome.hang);
    EXPECT_EQ(marks.cycle_ranks, (std::vector<int>{0, 1}));
    ASSERT_EQ(marks.waits.size(), 2u);
    const HangWait& first = marks.waits[0];
    EXPECT_EQ(first.rank, 0);
    EXPECT_TRUE(first.in_cycle);
    EXPECT_EQ(first.stuck, model.find("0RECV_B1"));
    EXPECT_EQ(first.needed, model.find("1SEND_B1"));
    EXPECT_EQ(first.needs, "1SEND_B1");
    EXPECT_EQ(model.action(*first.stuck).start_ns, 8000);   // step 8
    EXPECT_EQ(model.action(*first.needed).start_ns, 8000);  // rank 1's step 8
    const HangWait& second = marks.waits[1];
    EXPECT_EQ(second.rank, 1);
    EXPECT_EQ(second.stuck, model.find("1RECV_F3"));
    EXPECT_EQ(second.needed, model.find("0SEND_F3"));
    EXPECT_EQ(model.action(*second.stuck).start_ns, 6000);
    EXPECT_EQ(model.action(*second.needed).start_ns, 11000);
}

TEST_F(FileDropTest, AChainEndingAtAnActionNobodyRunsIsNoCycle) {
    const fs::path csv = copy(kSource / "assets/examples/swapped_recvs.csv");
    const DropOutcome outcome = process_drop({csv});
    ASSERT_EQ(outcome.error, "");
    const traces::TraceReader reader(outcome.trace);
    const TimelineModel model = TimelineModel::load(reader, 1);
    // Rank 0 waits at step 8 for an action no rank runs; rank 1, stuck at step 6, is not in the
    // chain and comes after it.
    HangReport report;
    report.cycle = {{0, 8, "0RECV_B1", "1SEND_B9", -1, -1, ""}};
    report.blocked = {report.cycle[0], {1, 6, "1RECV_F3", "0SEND_F3", 0, 11, ""}};
    const HangMarks marks = hang_marks(model, report);
    EXPECT_TRUE(marks.cycle_ranks.empty());
    EXPECT_FALSE(marks.in_cycle(0));
    ASSERT_EQ(marks.waits.size(), 2u);
    EXPECT_EQ(marks.waits[0].stuck, model.find("0RECV_B1"));
    EXPECT_FALSE(marks.waits[0].needed);
    EXPECT_FALSE(marks.waits[0].in_cycle);
    EXPECT_EQ(marks.waits[0].needs, "1SEND_B9");
    EXPECT_EQ(marks.waits[1].rank, 1);
    EXPECT_EQ(marks.waits[1].needed, model.find("0SEND_F3"));
    // A step past a rank's actions, or a rank the run does not have, is nowhere.
    EXPECT_EQ(find_step(model, 0, 16), std::nullopt);
    EXPECT_EQ(find_step(model, 2, 0), std::nullopt);
    EXPECT_EQ(find_step(model, 1, 0), model.find("1RECV_F0"));
}

TEST_F(FileDropTest, AScheduleThatCannotHangIsSimulated) {
    const fs::path csv = directory_ / "one_f_one_b.csv";
    std::ofstream(csv) << "0F0,0F1,0B0,0F2,0B1,0F3,0B2,0B3\n1F0,1B0,1F1,1B1,1F2,1B2,1F3,1B3\n";
    const DropOutcome outcome = process_drop({csv});
    ASSERT_EQ(outcome.error, "");
    EXPECT_FALSE(outcome.hang);
    ASSERT_EQ(outcome.run_id, 1);
    EXPECT_EQ(outcome.report,
              csv.string() +
                  ": ok: pp=2, 2 stages, m=4, 16 actions (compute only; lowers to 32 actions "
                  "with 8 send/recv pairs); dry run completes; simulated with F = I = W = 1 us as "
                  "run 1 in " +
                  outcome.trace.string());
    // As `pipelens simulate --schedule-file` simulates it: (m + pp - 1) x (F + B) = 5 x 3 us.
    const traces::TraceReader reader(outcome.trace);
    const traces::RunRecord run = reader.run(1);
    EXPECT_EQ(run.kind, traces::RunKind::simulated);
    EXPECT_EQ(run.step_time_ns, 15000);
    EXPECT_EQ(TimelineModel::load(reader, 1).action_count(), 32u);
}

TEST_F(FileDropTest, DroppingAgainReplacesTheTraceItWrote) {
    const fs::path csv = copy(kSource / "assets/examples/swapped_recvs.csv");
    ASSERT_EQ(process_drop({csv}).error, "");
    const DropOutcome again = process_drop({csv});
    ASSERT_EQ(again.error, "");
    EXPECT_EQ(again.run_id, 1);
    EXPECT_EQ(traces::TraceReader(again.trace).runs().size(), 1u);
}

TEST_F(FileDropTest, ProfilerTracesAreImportedAsTheImportCommandImportsThem) {
    const fs::path rank0 = copy(kSource / "tests/data/pytorch_profiler/gpipe_rank0.json");
    const fs::path rank1 = copy(kSource / "tests/data/pytorch_profiler/gpipe_rank1.json");
    const DropOutcome outcome = process_drop({rank0, rank1});
    ASSERT_EQ(outcome.error, "");
    EXPECT_EQ(outcome.route, DropRoute::import_files);
    EXPECT_FALSE(outcome.hang);
    EXPECT_EQ(outcome.trace, directory_ / "gpipe_rank0.json.pipelens.db");
    ASSERT_EQ(outcome.run_id, 1);
    EXPECT_EQ(outcome.report,
              "imported 2 file(s) (pytorch-profiler) as run 1 in " + outcome.trace.string());
    const traces::TraceReader reader(outcome.trace);
    EXPECT_EQ(reader.run(1).kind, traces::RunKind::real);
    const TimelineModel model = TimelineModel::load(reader, 1);
    EXPECT_EQ(model.ranks().size(), 2u);
    EXPECT_EQ(model.action_count(), 16u);  // what `pipelens import` records for them
}

TEST_F(FileDropTest, AMalformedProfilerTraceIsTheImportersMessageWithTheByte) {
    const std::string bad =
        write("bad.json", R"({"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2}, x]})");
    const DropOutcome outcome = process_drop({bad});
    EXPECT_EQ(outcome.route, DropRoute::import_files);
    EXPECT_EQ(outcome.error, bad +
                                 ": traceEvents[1] is not an object at byte 62 (line 1) (read as "
                                 "pytorch-profiler)");
    EXPECT_FALSE(outcome.run_id);
    // Nothing is left behind: no trace, no partial one.
    EXPECT_FALSE(fs::exists(directory_ / "bad.json.pipelens.db"));
    EXPECT_FALSE(fs::exists(directory_ / "bad.json.pipelens.db.partial"));
}

TEST_F(FileDropTest, AScheduleThatCannotBeReadNamesItsLine) {
    const std::string bad = write("bad.csv", "0F0,0F1\n1F0,1X1\n");
    const DropOutcome outcome = process_drop({bad});
    EXPECT_EQ(outcome.route, DropRoute::check_schedule);
    EXPECT_EQ(outcome.error.rfind(bad + ":2: rank 1, cell 2:", 0), 0u) << outcome.error;
}

// Only an import reads several files as one run: several traces or schedules dropped at once
// once opened the first and said nothing of the others.
TEST_F(FileDropTest, SeveralFilesThatOpenAloneAreRefusedNamingThem) {
    const std::string first = write("a.csv", "0F0,0B0\n");
    const std::string second = write("b.csv", "0F0,0B0\n");
    const DropOutcome outcome = process_drop({first, second});
    EXPECT_EQ(outcome.route, DropRoute::check_schedule);
    EXPECT_EQ(outcome.error, "2 files were dropped (a.csv, b.csv): " + first +
                                 " is a schedule (PyTorch CSV), which opens alone; drop one at "
                                 "a time");
    EXPECT_FALSE(fs::exists(derived_trace_path(first)));
}

TEST_F(FileDropTest, AnExperimentIsRefusedForWhatItIs) {
    const std::string toml = write("e.toml", "name = \"x\"\n[schedule]\nkind = \"1F1B\"\n");
    const DropOutcome outcome = process_drop({toml});
    EXPECT_EQ(outcome.route, DropRoute::refuse);
    EXPECT_EQ(outcome.error.rfind(toml + ": is an experiment (TOML); the viewer opens", 0), 0u)
        << outcome.error;
    const fs::path missing = directory_ / "missing.json";
    EXPECT_EQ(process_drop({missing}).error, missing.string() + ": no such file");
}

TEST_F(FileDropTest, ADropRunsOffTheCallingThreadAndKeepsItsHangForItsTrace) {
    const fs::path csv = copy(kSource / "assets/examples/swapped_recvs.csv");
    FileDrop drop;
    ASSERT_TRUE(start_drop(drop, {csv}));
    EXPECT_TRUE(drop.busy());
    const std::optional<DropOutcome> outcome = take_finished_drop(drop, true);
    ASSERT_TRUE(outcome);
    EXPECT_FALSE(drop.busy());
    EXPECT_EQ(drop.stage->load(), static_cast<int>(DropStage::done));
    remember_outcome(drop, *outcome);
    EXPECT_EQ(drop.dialog, "");
    const traces::TraceReader reader(outcome->trace);
    const TimelineModel model = TimelineModel::load(reader, 1);
    locate_hang(drop, outcome->trace, model);
    ASSERT_NE(marks_for(drop, outcome->trace), nullptr);
    EXPECT_EQ(marks_for(drop, outcome->trace)->cycle_ranks, (std::vector<int>{0, 1}));
    EXPECT_EQ(marks_for(drop, directory_ / "another.db"), nullptr);
}

}  // namespace
}  // namespace pipelens::viewer
