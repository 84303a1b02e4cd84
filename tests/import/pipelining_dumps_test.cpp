// Import of torch.distributed.pipelining's unit-step dumps against the fixtures of
// tests/data/pipelining (made by make_dumps.py: 1F1B pp=2 m=4 lowered with SEND/RECV and laid out
// step by step as _simulate_comms_compute does, then written as _dump_chrometrace and _dump_csv
// write it): exact actions and steps per rank, the inferred shape, the run recorded into a real
// SQLite trace and read back, and one clear ImportError naming the file for bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "engine/import/pipelining_dumps.hpp"
#include "tests/import/imported_steps.hpp"
#include "tests/temp_directory.hpp"
#include "tests/thrown_message.hpp"
#include "traces/trace_reader.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::import {
namespace {

namespace fs = std::filesystem;

const fs::path kData = fs::path(PIPELENS_SOURCE_DIR) / "tests" / "data" / "pipelining";
const std::string kChrometrace = (kData / "1f1b_pp2_m4_comms.json").string();
const std::string kCsv = (kData / "1f1b_pp2_m4_comms.csv").string();

using testing::Step;
using testing::steps_of;

// One unit step of `text` at `step`: 1 us each.
Step at(const char* text, std::int64_t step) {
    return {text, step * 1000, step * 1000 + 1000};
}

// The simulated layout of the fixture (make_dumps.py prints it): rank 1 receives in the step
// rank 0 sends, and each rank idles while the other computes what it waits for.
const std::vector<Step> kRank0{
    at("0F0", 0),       at("0SEND_F0", 1), at("0F1", 2),       at("0SEND_F1", 3),
    at("0RECV_B0", 5),  at("0B0", 6),      at("0F2", 7),       at("0SEND_F2", 8),
    at("0RECV_B1", 10), at("0B1", 11),     at("0F3", 12),      at("0SEND_F3", 13),
    at("0RECV_B2", 15), at("0B2", 16),     at("0RECV_B3", 18), at("0B3", 19)};
const std::vector<Step> kRank1{
    at("1RECV_F0", 1),  at("1F0", 2),  at("1RECV_F1", 3),  at("1B0", 4),
    at("1SEND_B0", 5),  at("1F1", 6),  at("1RECV_F2", 8),  at("1B1", 9),
    at("1SEND_B1", 10), at("1F2", 11), at("1RECV_F3", 13), at("1B2", 14),
    at("1SEND_B2", 15), at("1F3", 16), at("1B3", 17),      at("1SEND_B3", 18)};

void expect_fixture_run(const ImportedRun& run, const std::string& format) {
    EXPECT_EQ(run.format, format);
    EXPECT_TRUE(run.unit_steps);
    EXPECT_EQ(run.schedule.name, "1f1b_pp2_m4_comms");
    EXPECT_EQ(run.schedule.rank_count, 2);
    EXPECT_EQ(run.schedule.stages_per_rank, 1);
    EXPECT_EQ(run.schedule.microbatch_count, 4);
    EXPECT_EQ(run.schedule.stage_count, 2);
    EXPECT_EQ(run.schedule.stage_to_rank, (std::vector<int>{0, 1}));
    EXPECT_TRUE(run.schedule.has_communication);
    EXPECT_EQ(steps_of(run, 0), kRank0);
    EXPECT_EQ(steps_of(run, 1), kRank1);
    ASSERT_EQ(run.notes.size(), 1u);  // the unit-step note; the file does show waiting
    EXPECT_NE(run.notes.front().find("unit steps"), std::string::npos);
}

// A fresh directory per test for traces and hand-made files, removed afterwards.
class PipeliningDumpsTest : public testing::TempDirectoryTest {
  protected:
    PipeliningDumpsTest() : TempDirectoryTest("dumps") {}
    template <typename Reader>
    static std::string error_of(Reader reader, const std::vector<std::string>& files) {
        return testing::required_message<ImportError>([&] { reader(files); });
    }
};

TEST_F(PipeliningDumpsTest, ReadsTheChrometraceAsUnitStepsInStepOrder) {
    expect_fixture_run(read_pipelining_chrometrace({kChrometrace}), "pipelining-chrometrace");
}

TEST_F(PipeliningDumpsTest, ReadsTheCsvWithEachColumnAStep) {
    expect_fixture_run(read_pipelining_csv({kCsv}), "pipelining-csv");
}

TEST_F(PipeliningDumpsTest, RecordsTheRunIntoATraceWithStepTimeBubblesPairsAndActionRows) {
    const fs::path trace = directory_ / "dumps.db";
    std::int64_t run_id = 0;
    {
        traces::TraceWriter writer(trace);
        run_id = record_imported_run(writer, read_pipelining_chrometrace({kChrometrace}));
    }
    traces::TraceReader reader(trace);
    const traces::RunRecord run = reader.run(run_id);
    EXPECT_EQ(run.kind, traces::RunKind::simulated);  // unit steps are PyTorch's simulation
    EXPECT_EQ(run.status, traces::RunStatus::finished);
    EXPECT_EQ(run.schedule, "1f1b_pp2_m4_comms");
    EXPECT_EQ(run.pp, 2);
    EXPECT_EQ(run.v, 1);
    EXPECT_EQ(run.m, 4);
    EXPECT_NE(run.config.find("\"unit_steps\": true"), std::string::npos) << run.config;
    EXPECT_EQ(run.step_time_ns, 20'000);  // rank 0's 0B3 fills step 19

    const std::vector<traces::RankRecord> ranks = reader.ranks(run_id);
    ASSERT_EQ(ranks.size(), 2u);
    for (const traces::RankRecord& rank : ranks) {
        EXPECT_EQ(rank.busy_ns, 8'000) << rank.rank;  // 4 F and 4 B; SEND/RECV are not compute
        EXPECT_EQ(rank.bubble_ns, 12'000) << rank.rank;
    }
    EXPECT_EQ(ranks[0].warmup_ns, 0);
    EXPECT_EQ(ranks[0].cooldown_ns, 0);
    // Gaps are attributed by the dependency rules (engine/analysis/bubble_accounting.hpp), and a
    // rank never waits on itself. Rank 0 idles one step on its own (its SEND_F0 takes the step
    // before F1, which needs nothing from rank 1), then waits 11 steps for rank 1's gradients.
    // Rank 1's 8 steps between computations are its own SEND and RECV steps: its backwards need
    // only its own forwards, and each F's input had arrived by the time its stream was free.
    EXPECT_EQ(traces::waiting_on_map(ranks[0].waiting_on),
              (std::map<int, std::int64_t>{{1, 11'000}}));
    EXPECT_EQ(ranks[1].warmup_ns, 2'000);
    EXPECT_EQ(ranks[1].cooldown_ns, 2'000);
    EXPECT_TRUE(traces::waiting_on_map(ranks[1].waiting_on).empty());
    // What no peer explains, local idle time, is what the bubble holds besides.
    EXPECT_EQ(ranks[0].bubble_ns - ranks[0].warmup_ns - ranks[0].cooldown_ns - 11'000, 1'000);
    EXPECT_EQ(ranks[1].bubble_ns - ranks[1].warmup_ns - ranks[1].cooldown_ns, 8'000);

    const std::vector<traces::ActionRecord> actions = reader.actions(run_id);
    ASSERT_EQ(actions.size(), 32u);
    const traces::ActionRecord& recv = actions[16];  // rank 1's first action
    EXPECT_EQ(recv.rank, 1);
    EXPECT_EQ(recv.step, 0);
    EXPECT_EQ(recv.label, "1RECV_F0");
    EXPECT_EQ(recv.lane, traces::ActionLane::communication);
    EXPECT_EQ(recv.start_ns, 1'000);
    EXPECT_EQ(recv.end_ns, 2'000);
    EXPECT_EQ(actions[1].label, "0SEND_F0");
    EXPECT_EQ(actions[1].pair_id, recv.pair_id);
    EXPECT_GE(recv.pair_id, 0);

    const std::vector<traces::PairRecord> pairs = reader.pairs(run_id);
    ASSERT_EQ(pairs.size(), 8u);  // 4 SEND_F/RECV_F and 4 SEND_B/RECV_B
    const auto first = std::find_if(pairs.begin(), pairs.end(),
                                    [&](const auto& pair) { return pair.pair_id == recv.pair_id; });
    ASSERT_NE(first, pairs.end());
    EXPECT_EQ(std::tie(first->send_rank, first->send_step, first->recv_rank, first->recv_step),
              std::make_tuple(0, 1, 1, 0));
}

TEST_F(PipeliningDumpsTest, AcceptsTheBareArrayFormLongerActionsAndSkipsOtherPhases) {
    const std::string file = write(
        "bare.json",
        R"([{"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "rank 0"}},)"
        R"( {"name": "0F0", "cat": "computation", "ph": "X", "pid": 0, "tid": 0, "ts": 0,)"
        R"( "dur": 1}, {"name": "0B0", "ph": "X", "pid": 0, "tid": 0, "ts": 3.0, "dur": 2}])");
    const ImportedRun run = read_pipelining_chrometrace({file});
    EXPECT_EQ(run.schedule.name, "bare");
    EXPECT_EQ(steps_of(run, 0), (std::vector<Step>{{"0F0", 0, 1'000}, {"0B0", 3'000, 5'000}}));
}

TEST_F(PipeliningDumpsTest, SaysWhenACsvHasNoIdleCellsAndIsOnlyAnOrder) {
    // `_dump_csv` of a lowered, unsimulated schedule: every rank's actions back to back.
    const std::string file = write("lowered.csv",
                                   "0F0,0SEND_F0,0RECV_B0,0B0\r\n"
                                   "1RECV_F0,1F0,1B0,1SEND_B0\r\n");
    const ImportedRun run = read_pipelining_csv({file});
    EXPECT_EQ(steps_of(run, 1), (std::vector<Step>{at("1RECV_F0", 0), at("1F0", 1), at("1B0", 2),
                                                   at("1SEND_B0", 3)}));
    ASSERT_EQ(run.notes.size(), 2u);
    EXPECT_NE(run.notes[1].find("action order"), std::string::npos) << run.notes[1];
}

TEST_F(PipeliningDumpsTest, OneFileOnly) {
    const std::string message = error_of(read_pipelining_chrometrace, {kChrometrace, kCsv});
    EXPECT_NE(message.find("expected one file"), std::string::npos) << message;
    EXPECT_NE(message.find(kCsv), std::string::npos) << message;
    EXPECT_NE(error_of(read_pipelining_csv, {}).find("_dump_csv: expected one file"),
              std::string::npos);
}

TEST_F(PipeliningDumpsTest, BadChrometracesNameTheFileAndEvent) {
    const std::string truncated = write("truncated.json", R"({"traceEvents": [{"name": "0F0")");
    EXPECT_NE(error_of(read_pipelining_chrometrace, {truncated})
                  .find(truncated + ": not valid JSON (byte "),
              std::string::npos);
    const std::string not_trace = write("other.json", R"({"events": []})");
    EXPECT_NE(error_of(read_pipelining_chrometrace, {not_trace})
                  .find(not_trace + ": expected {\"traceEvents\": [...]}"),
              std::string::npos);
    const std::string bad_name =
        write("name.json", R"({"traceEvents": [{"name": "0F0", "ph": "X", "pid": 0, "ts": 0},)"
                           R"( {"name": "0Q1", "ph": "X", "pid": 0, "ts": 1}]})");
    const std::string name_message = error_of(read_pipelining_chrometrace, {bad_name});
    EXPECT_NE(name_message.find(bad_name + ": event 1: "), std::string::npos) << name_message;
    EXPECT_NE(name_message.find("0Q1"), std::string::npos) << name_message;
    const std::string gap =
        write("gap.json", R"({"traceEvents": [{"name": "0F0", "ph": "X", "pid": 0, "ts": 0},)"
                          R"( {"name": "2F0", "ph": "X", "pid": 2, "ts": 1}]})");
    EXPECT_NE(error_of(read_pipelining_chrometrace, {gap})
                  .find(gap + ": rank 1 has no events but rank 2 has"),
              std::string::npos);
    const std::string same_step =
        write("same.json", R"({"traceEvents": [{"name": "0F0", "ph": "X", "pid": 0, "ts": 4},)"
                           R"( {"name": "0F1", "ph": "X", "pid": 0, "ts": 4}]})");
    EXPECT_NE(error_of(read_pipelining_chrometrace, {same_step})
                  .find(same_step + ": rank 0 has two actions at step 4: event 0 (0F0) and "
                                    "event 1 (0F1)"),
              std::string::npos);
    const std::string bad_step =
        write("step.json", R"({"traceEvents": [{"name": "0F0", "ph": "X", "pid": 0, "ts": 0.5}]})");
    EXPECT_NE(error_of(read_pipelining_chrometrace, {bad_step})
                  .find(bad_step + ": event 0 (0F0): \"ts\" is not a step number"),
              std::string::npos);
    const std::string empty = write("empty.json", R"({"traceEvents": []})");
    EXPECT_NE(error_of(read_pipelining_chrometrace, {empty}).find(empty + ": no action events"),
              std::string::npos);
    const std::string missing = (directory_ / "absent.json").string();
    EXPECT_NE(error_of(read_pipelining_chrometrace, {missing}).find(missing + ": cannot open"),
              std::string::npos);
}

TEST_F(PipeliningDumpsTest, BadCsvsNameTheFileRowAndCell) {
    const std::string bad_cell = write("cell.csv", "0F0,,0Z1\r\n");
    const std::string message = error_of(read_pipelining_csv, {bad_cell});
    EXPECT_NE(message.find(bad_cell + ":1: rank 0, cell 3"), std::string::npos) << message;
    const std::string empty = write("empty.csv", "");
    EXPECT_NE(error_of(read_pipelining_csv, {empty}).find(empty), std::string::npos);
    const std::string missing = (directory_ / "absent.csv").string();
    EXPECT_NE(error_of(read_pipelining_csv, {missing}).find(missing + ": cannot open"),
              std::string::npos);
}

}  // namespace
}  // namespace pipelens::import
