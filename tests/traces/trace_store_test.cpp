// TraceWriter and TraceReader against real SQLite files in a temporary directory: every field
// round-trips exactly and in the documented order, strings are interned, a second session
// appends without touching the first, rows become visible batch by batch, and one writer at a
// time appends only to its own runs. Bad files and schema versions: trace_file_checks_test.cpp.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/traces/trace_store_fixture.hpp"

namespace pipelens::traces {
namespace {

TEST_F(TraceStoreTest, EveryFieldRoundTripsInTheDocumentedOrder) {
    const fs::path path = file("trace.db");
    RunRecord run = simulated_run("Interleaved1F1B", 2, 4);
    run.v = 2;
    // Written deliberately out of order: the reader sorts as documented.
    std::vector<ActionRecord> actions = {
        action(1, 0, ActionLane::communication, 5, 1, 0, "1RECV_F0", 1000, 1500, 4096, 0),
        action(1, 1, ActionLane::compute, 0, 1, 0, "1F0", 1500, 2500),
        action(0, 1, ActionLane::communication, 4, 0, 0, "0SEND_F0", 1000, 1500, 4096, 0),
        action(0, 0, ActionLane::compute, 0, 0, 0, "0F0", 0, 1000),
        action(0, 2, ActionLane::compute, 0, 0, 1, "0F1", 1000, 2000),
        action(0, 3, ActionLane::compute, 8, -1, -1, "(0F1;0B0)OVERLAP_F_B", 2000, 4000, 0, -1,
               {{0, 0, 1}, {3, 0, 0}}),
        action(0, 4, ActionLane::compute, 9, 0, -1, "0UNSHARD", 2000, 2000),  // ties on start
        action(1, 2, ActionLane::compute, 3, 1, 0, "1B0", 2500, 4500),
        action(0, 5, ActionLane::compute, 0, 0, 1, "0F1", 4000, 5000),  // label repeated
    };
    std::vector<RankRecord> ranks(2);
    ranks[1] = {1, 3500, 1000, 0.2, 8 << 20, 1000, 0, R"({"0":1000})", -5'000'120, 45, 2'500};
    ranks[0] = {0,   4000, 500,          0.1,          16 << 20,    0,
                500, "{}", std::nullopt, std::nullopt, std::nullopt};
    std::vector<PairRecord> pairs = {{7, 0, 1, 1, 0, 4096}, {3, 1, 5, 0, 9, 2048}};
    std::vector<MemoryRecord> memory = {{1, 1500, 100}, {0, 1000, 300}, {0, 0, 200}, {1, 0, 0}};
    std::vector<EventRecord> events = {
        {2, 0, 1, "aten.mm", R"({"a":[4,8]})", "ok", -2500},
        {1, 0, std::nullopt, "forward", "{}", "ok", std::nullopt},
        {1, 1, std::nullopt, "forward", "{}", "shape mismatch: [4,8] vs [4,9]", 700},
    };
    std::vector<ErrorRecord> errors = {
        {1, 1, 0, "1F0", "shape_mismatch", "[4,8]", "[4,9]", "tensor 0 of 1F0", 1500, 1200},
        {-1, -1, -1, "", "rank_died", "", "", "rank 1 exited with signal 9", std::nullopt,
         std::nullopt},
    };
    std::vector<ShardingRecord> sharding = {
        {2, "aten.add.Tensor(Tensor self, Tensor other)", "DeviceMesh((tp=4), 'cuda')", "[]", -1,
         "[]"},
        {1, "aten.mm.default(Tensor self, Tensor mat2)", "DeviceMesh((tp=4), 'cuda')",
         R"([{"total":3.5}])", 0, R"json([{"from":"R","to":"S(0)"}])json"},
    };

    std::int64_t run_id = 0;
    {
        TraceWriter writer(path);
        EXPECT_EQ(writer.path(), path);
        run_id = writer.begin_run(run);
        EXPECT_EQ(run_id, 1);
        for (const RankRecord& rank : ranks)
            writer.add_rank(run_id, rank);
        for (const ActionRecord& record : actions)
            writer.add_action(run_id, record);
        for (const PairRecord& pair : pairs)
            writer.add_pair(run_id, pair);
        for (const MemoryRecord& sample : memory)
            writer.add_memory(run_id, sample);
        for (const EventRecord& event : events)
            writer.add_event(run_id, event);
        for (const ErrorRecord& error : errors)
            writer.add_error(run_id, error);
        for (const ShardingRecord& decision : sharding)
            writer.add_sharding(run_id, decision);
        writer.finish_run(run_id, 5000, 0.125);
    }

    TraceReader reader(path);
    EXPECT_EQ(reader.path(), path);
    EXPECT_EQ(reader.schema_version(), kSchemaVersion);
    EXPECT_EQ(reader.latest_run_id(), run_id);
    RunRecord stored = reader.run(run_id);
    RunRecord expected_run = run;
    expected_run.id = run_id;
    expected_run.status = RunStatus::finished;
    expected_run.step_time_ns = 5000;
    expected_run.bubble_ratio = 0.125;
    ASSERT_TRUE(stored.finished_at_ns.has_value());
    EXPECT_GT(*stored.finished_at_ns, 1'700'000'000'000'000'000);  // the wall clock, not 0
    expected_run.finished_at_ns = stored.finished_at_ns;
    EXPECT_EQ(fields(stored), fields(expected_run));

    expect_same(reader.ranks(run_id), {ranks[0], ranks[1]});
    expect_same(reader.actions(run_id), {actions[3], actions[2], actions[4], actions[5], actions[6],
                                         actions[8], actions[0], actions[1], actions[7]});
    EXPECT_EQ(reader.action_count(run_id), 9);
    expect_same(reader.pairs(run_id), {pairs[1], pairs[0]});
    expect_same(reader.memory(run_id), {memory[2], memory[1], memory[3], memory[0]});
    expect_same(reader.events(run_id), {events[1], events[0], events[2]});
    expect_same(reader.errors(run_id), errors);
    expect_same(reader.sharding(run_id), {sharding[1], sharding[0]});

    // What a user sees with the sqlite3 shell: integer ns, what an action is as integers (an
    // OVERLAP_F_B's parts in their own table), no label text, -1 for "none".
    RawDatabase raw(path, SQLITE_OPEN_READONLY);
    EXPECT_EQ(raw.value("SELECT value FROM meta WHERE key = 'schema_version'"), "10");
    EXPECT_EQ(raw.value("SELECT value FROM meta WHERE key = 'application'"), "pipelens");
    // 0x50504C4E, "PPLN" in the header: what the desktop's MIME type matches.
    EXPECT_EQ(raw.value("PRAGMA application_id"), "1347439694");
    EXPECT_EQ(raw.value("SELECT kind, status, step_time_ns FROM runs"), "sim|finished|5000");
    EXPECT_EQ(raw.value("SELECT stage, microbatch, label_id IS NULL FROM actions WHERE kind = 8"),
              "-1|-1|1");
    EXPECT_EQ(raw.rows("SELECT part, kind, stage, microbatch FROM action_parts ORDER BY part"),
              (std::vector<std::string>{"0|0|0|1", "1|3|0|0"}));
    EXPECT_EQ(raw.value("SELECT group_concat(text, ',') FROM (SELECT text FROM strings ORDER BY "
                        "text)"),
              "aten.mm,forward");  // event names only
    EXPECT_TRUE(raw.rows("PRAGMA foreign_key_check").empty());
}

TEST_F(TraceStoreTest, StateSnapshotsRoundTripOnePerRank) {
    const fs::path path = file("snapshots.db");
    std::int64_t run_id = 0;
    {
        TraceWriter writer(path);
        run_id = writer.begin_run(RunRecord{});
        writer.add_state_snapshot(run_id, {1, 7, R"([["rank","1"]])"});
        writer.add_state_snapshot(run_id, {0, 3, R"([["rank","0"]])"});
        writer.add_state_snapshot(run_id, {0, 9, R"([["rank","0"],["x","y"]])"});  // replaces
        writer.finish_run(run_id, 1, 0);
    }
    TraceReader reader(path);
    const auto snapshots = reader.state_snapshots(run_id);
    ASSERT_EQ(snapshots.size(), 2u);
    EXPECT_EQ(snapshots[0].rank, 0);
    EXPECT_EQ(snapshots[0].after_sequence, 9);
    EXPECT_EQ(snapshots[0].state, R"([["rank","0"],["x","y"]])");
    EXPECT_EQ(snapshots[1].rank, 1);
    EXPECT_EQ(snapshots[1].after_sequence, 7);
}

TEST_F(TraceStoreTest, WalWhileWritingOneSelfContainedFileAfterwards) {
    const fs::path path = file("closed.db");
    const fs::path wal = path.string() + "-wal";
    const fs::path shm = path.string() + "-shm";
    {
        TraceWriter writer(path);
        writer.begin_run(simulated_run());
        EXPECT_TRUE(fs::exists(wal));
        EXPECT_EQ(RawDatabase(path, SQLITE_OPEN_READONLY).value("PRAGMA journal_mode"), "wal");
    }
    EXPECT_FALSE(fs::exists(wal));
    EXPECT_FALSE(fs::exists(shm));
    {
        TraceReader reader(path);  // reading creates no side files
        EXPECT_EQ(reader.runs().size(), 1u);
        EXPECT_FALSE(fs::exists(wal));
        EXPECT_FALSE(fs::exists(shm));

        // A reader opened before a writer starts follows it into WAL mode, and keeps reading
        // after it goes (the file then stays in WAL mode until the last reader is gone too).
        {
            TraceWriter writer(path);
            std::int64_t run_id = writer.begin_run(simulated_run("GPipe"));
            EXPECT_EQ(reader.runs().size(), 2u);
            writer.add_action(run_id, action(0, 0, ActionLane::compute, 0, 0, 0, "0F0", 0, 1));
            writer.finish_run(run_id, 1, 0);
        }
        EXPECT_EQ(reader.run(2).status, RunStatus::finished);
        EXPECT_EQ(reader.action_count(2), 1);
    }
    EXPECT_EQ(TraceReader(path).runs().size(), 2u);
    TraceWriter(path).flush();  // the next writer to close with no reader tidies up
    EXPECT_FALSE(fs::exists(wal));
    EXPECT_FALSE(fs::exists(shm));
}

TEST_F(TraceStoreTest, RunsKeepTheirOwnRowsAndStatuses) {
    const fs::path path = file("runs.db");
    std::int64_t finished = 0, failed = 0, unfinished = 0;
    {
        TraceWriter writer(path);
        finished = writer.begin_run(simulated_run("GPipe"));
        RunRecord real = simulated_run("ZBVZeroBubble");
        real.kind = RunKind::real;
        failed = writer.begin_run(real);
        unfinished = writer.begin_run(simulated_run("DualPipeV", 2, 8));
        // Rows of the three runs interleaved.
        writer.add_action(finished, action(0, 0, ActionLane::compute, 0, 0, 0, "0F0", 0, 10));
        writer.add_action(failed, action(1, 0, ActionLane::compute, 0, 1, 0, "1F0", 5, 15));
        writer.add_action(unfinished, action(0, 0, ActionLane::compute, 0, 0, 0, "0F0", 0, 20));
        writer.add_action(finished, action(1, 0, ActionLane::compute, 0, 1, 0, "1F0", 10, 20));
        writer.finish_run(finished, 20, 0.5);
        writer.fail_run(failed, "rank 1 died: signal 9");
        // `unfinished` is never finished: the writer goes away with the run still running.
    }
    TraceReader reader(path);
    std::vector<RunRecord> runs = reader.runs();
    ASSERT_EQ(runs.size(), 3u);
    EXPECT_EQ(runs[0].id, finished);
    EXPECT_EQ(runs[0].schedule, "GPipe");
    EXPECT_EQ(runs[0].status, RunStatus::finished);
    EXPECT_EQ(runs[0].step_time_ns, 20);
    EXPECT_EQ(runs[0].bubble_ratio, 0.5);
    EXPECT_EQ(runs[0].failure, "");
    EXPECT_EQ(runs[1].id, failed);
    EXPECT_EQ(runs[1].kind, RunKind::real);
    EXPECT_EQ(runs[1].status, RunStatus::failed);
    EXPECT_EQ(runs[1].failure, "rank 1 died: signal 9");
    EXPECT_TRUE(runs[1].finished_at_ns.has_value());
    EXPECT_EQ(runs[1].step_time_ns, std::nullopt);
    EXPECT_EQ(runs[1].bubble_ratio, std::nullopt);
    EXPECT_EQ(runs[2].id, unfinished);
    EXPECT_EQ(runs[2].status, RunStatus::running);
    EXPECT_EQ(runs[2].finished_at_ns, std::nullopt);
    EXPECT_EQ(runs[2].step_time_ns, std::nullopt);
    EXPECT_EQ(fields(reader.run(failed)), fields(runs[1]));
    EXPECT_EQ(reader.latest_run_id(), unfinished);

    expect_same(reader.actions(finished),
                {action(0, 0, ActionLane::compute, 0, 0, 0, "0F0", 0, 10),
                 action(1, 0, ActionLane::compute, 0, 1, 0, "1F0", 10, 20)});
    expect_same(reader.actions(failed), {action(1, 0, ActionLane::compute, 0, 1, 0, "1F0", 5, 15)});
    expect_same(reader.actions(unfinished),
                {action(0, 0, ActionLane::compute, 0, 0, 0, "0F0", 0, 20)});
    EXPECT_TRUE(reader.actions(99).empty());
    EXPECT_EQ(reader.action_count(99), 0);
}

// The writer takes only the shapes the reader reads back: a run of more ranks than a trace holds
// once made every later read of the whole file fail as corrupt.
TEST_F(TraceStoreTest, ARunOfAShapeNoReaderTakesIsNotWritten) {
    const fs::path path = file("shapes.db");
    TraceWriter writer(path);
    const std::int64_t kept = writer.begin_run(simulated_run("GPipe"));
    RunRecord huge = simulated_run("GPipe");
    huge.pp = kMostRanks + 1;
    try {
        writer.begin_run(huge);
        ADD_FAILURE() << "a run of " << huge.pp << " ranks was written";
    } catch (const TraceError& error) {
        EXPECT_EQ(std::string(error.what()),
                  path.string() +
                      ": cannot record a run with pp = 1048577: a trace holds pp "
                      "from 0 to 1048576");
    }
    huge.pp = 2;
    huge.m = -1;
    EXPECT_THROW(writer.begin_run(huge), TraceError);
    writer.finish_run(kept, 10, 0.5);
    writer.flush();
    const std::vector<RunRecord> runs = TraceReader(path).runs();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].id, kept);
}

TEST_F(TraceStoreTest, StartTimeDefaultsToTheWallClock) {
    const fs::path path = file("clock.db");
    RunRecord run = simulated_run();
    run.started_at_ns = 0;
    std::int64_t run_id = TraceWriter(path).begin_run(run);
    EXPECT_GT(TraceReader(path).run(run_id).started_at_ns, 1'700'000'000'000'000'000);
}

// A million actions must not add a million strings: what an action is is stored as integers
// and its text derived when read; only event names are interned.
TEST_F(TraceStoreTest, ActionTextsAreDerivedNotStored) {
    const fs::path path = file("interned.db");
    {
        TraceWriter writer(path);
        std::int64_t run_id = writer.begin_run(simulated_run());
        const int kinds[] = {0, 3, 4};  // F, B, SEND_F
        for (int index = 0; index < 3000; ++index)
            writer.add_action(run_id, action(0, index, ActionLane::compute, kinds[index % 3], 0,
                                             index, "", index, index + 1));
        writer.add_event(run_id, {0, 0, std::nullopt, "forward", "{}", "ok", std::nullopt});
        writer.add_event(run_id, {1, 0, std::nullopt, "forward", "{}", "ok", std::nullopt});
        writer.finish_run(run_id, 3001, 0);
    }
    RawDatabase raw(path, SQLITE_OPEN_READONLY);
    EXPECT_EQ(raw.value("SELECT count(*) FROM strings"), "1");
    EXPECT_EQ(raw.value("SELECT count(*) FROM actions WHERE label_id IS NULL"), "3000");
    std::vector<ActionRecord> read = TraceReader(path).actions(1);
    ASSERT_EQ(read.size(), 3000u);
    EXPECT_EQ(read[2997].label, "0F2997");
    EXPECT_EQ(read[2998].label, "0B2998");
    EXPECT_EQ(read[2999].label, "0SEND_F2999");
}

// What the viewer loads with, one rank per thread: actions by start time without text, the
// texts of OVERLAP_F_B actions by step, memory samples, and how many ranks have actions.
TEST_F(TraceStoreTest, BulkReadsOneRankAtATime) {
    const fs::path path = file("bulk.db");
    std::int64_t run_id = 0, empty_run = 0;
    {
        TraceWriter writer(path);
        run_id = writer.begin_run(simulated_run());
        writer.add_action(run_id, action(1, 0, ActionLane::compute, 0, 1, 0, "1F0", 50, 60));
        writer.add_action(
            run_id, action(0, 1, ActionLane::communication, 6, 0, 0, "0SEND_B0", 10, 12, 4096, 7));
        writer.add_action(run_id, action(0, 0, ActionLane::compute, 0, 0, 0, "0F0", 0, 10));
        writer.add_action(run_id, action(1, 1, ActionLane::compute, 0, 1, 1, "1F1", 30, 40));
        writer.add_action(run_id, action(1, 7, ActionLane::compute, 8, -1, -1, "", 70, 80, 0, -1,
                                         {{0, 1, 2}, {1, 1, 1}}));
        writer.add_memory(run_id, {1, 40, 300});
        writer.add_memory(run_id, {0, 5, 100});
        writer.add_memory(run_id, {1, 10, 200});
        writer.finish_run(run_id, 60, 0.5);
        empty_run = writer.begin_run(simulated_run());
        writer.finish_run(empty_run, 0, 0);
    }
    TraceReader reader(path);
    EXPECT_EQ(reader.action_rank_limit(run_id), 2);
    EXPECT_EQ(reader.action_rank_limit(empty_run), 0);
    const std::vector<StoredAction> rank0 = reader.stored_actions(run_id, 0);
    ASSERT_EQ(rank0.size(), 2u);
    EXPECT_EQ(std::tie(rank0[0].step, rank0[0].start_ns, rank0[0].end_ns, rank0[0].lane),
              std::make_tuple(0, 0, 10, ActionLane::compute));
    EXPECT_EQ(
        std::tie(rank0[1].step, rank0[1].kind, rank0[1].stage, rank0[1].microbatch,
                 rank0[1].start_ns, rank0[1].end_ns, rank0[1].bytes, rank0[1].pair_id,
                 rank0[1].lane),
        std::make_tuple(1, std::uint8_t{6}, 0, 0, 10, 12, 4096, 7, ActionLane::communication));
    const std::vector<StoredAction> rank1 = reader.stored_actions(run_id, 1);
    ASSERT_EQ(rank1.size(), 3u);  // by start time, not by step
    EXPECT_EQ(std::tie(rank1[0].step, rank1[1].step, rank1[2].step), std::make_tuple(1, 0, 7));
    EXPECT_TRUE(reader.stored_actions(run_id, 2).empty());
    EXPECT_TRUE(reader.stored_labels(run_id, 0).empty());
    EXPECT_EQ(reader.stored_labels(run_id, 1),
              (std::vector<std::pair<std::int32_t, std::string>>{{7, "(1F2;1I1)OVERLAP_F_B"}}));
    expect_same(reader.memory(run_id, 1), {{1, 10, 200}, {1, 40, 300}});
    expect_same(reader.memory(run_id, 0), {{0, 5, 100}});
}

TEST_F(TraceStoreTest, SecondSessionAppendsAndReusesStrings) {
    const fs::path path = file("append.db");
    std::vector<ActionRecord> first = {
        action(0, 0, ActionLane::compute, 0, 0, 0, "0F0", 0, 10),
        action(0, 1, ActionLane::compute, 3, 0, 0, "0B0", 10, 30),
    };
    const auto event = [](int sequence, std::string name) {
        return EventRecord{sequence, 0, std::nullopt, std::move(name), "{}", "ok", std::nullopt};
    };
    {
        TraceWriter writer(path);
        std::int64_t run_id = writer.begin_run(simulated_run());
        for (const ActionRecord& record : first)
            writer.add_action(run_id, record);
        writer.add_event(run_id, event(0, "choose_schedule"));
        writer.add_event(run_id, event(1, "lower_schedule"));
        writer.finish_run(run_id, 30, 0);
    }
    RawDatabase raw(path, SQLITE_OPEN_READONLY);
    std::string lower_id = raw.value("SELECT id FROM strings WHERE text = 'lower_schedule'");
    {
        TraceWriter writer(path);
        std::int64_t run_id = writer.begin_run(simulated_run("GPipe"));
        EXPECT_EQ(run_id, 2);
        writer.add_action(run_id, action(0, 0, ActionLane::compute, 3, 0, 0, "0B0", 0, 20));
        writer.add_action(run_id, action(0, 1, ActionLane::compute, 2, 0, 0, "0W0", 20, 25));
        writer.add_event(run_id, event(0, "lower_schedule"));
        writer.add_event(run_id, event(1, "split_model"));
        writer.finish_run(run_id, 25, 0);
    }
    EXPECT_EQ(raw.value("SELECT count(*) FROM strings"), "3");
    EXPECT_EQ(raw.value("SELECT id FROM strings WHERE text = 'lower_schedule'"), lower_id);
    TraceReader reader(path);
    ASSERT_EQ(reader.runs().size(), 2u);
    EXPECT_EQ(reader.run(1).status, RunStatus::finished);
    EXPECT_EQ(reader.run(1).schedule, "1F1B");
    expect_same(reader.actions(1), first);
    expect_same(reader.actions(2), {action(0, 0, ActionLane::compute, 3, 0, 0, "0B0", 0, 20),
                                    action(0, 1, ActionLane::compute, 2, 0, 0, "0W0", 20, 25)});
}

TEST_F(TraceStoreTest, RowsBecomeVisibleBatchByBatch) {
    const fs::path path = file("batches.db");
    TraceWriter writer(path, TraceWriterOptions{.batch_rows = 10});
    std::int64_t run_id = writer.begin_run(simulated_run());
    TraceReader reader(path);  // while the writer is open, as the viewer would
    EXPECT_EQ(reader.run(run_id).status, RunStatus::running);
    for (int index = 0; index < 25; ++index)
        writer.add_action(run_id,
                          action(0, index, ActionLane::compute, 0, 0, 0, "0F0", index, index + 1));
    EXPECT_EQ(reader.action_count(run_id), 20);  // two full batches committed
    writer.flush();
    EXPECT_EQ(reader.action_count(run_id), 25);
    EXPECT_EQ(reader.actions(run_id).size(), 25u);
    writer.finish_run(run_id, 25, 0);
    EXPECT_EQ(reader.run(run_id).status, RunStatus::finished);
}

// What a viewer polls to see a trace grow: the version moves with each commit of the writer's
// and stays put while nothing is committed, however often it is asked.
TEST_F(TraceStoreTest, DataVersionMovesOnlyWhenTheWriterCommits) {
    const fs::path path = file("data_version.db");
    TraceWriter writer(path);
    const std::int64_t run_id = writer.begin_run(simulated_run());
    TraceReader reader(path);
    const std::int64_t opened = reader.data_version();
    EXPECT_EQ(reader.data_version(), opened);
    writer.add_action(run_id, action(0, 0, ActionLane::compute, 0, 0, 0, "0F0", 0, 1));
    EXPECT_EQ(reader.data_version(), opened);  // added, not yet committed
    writer.flush();
    const std::int64_t committed = reader.data_version();
    EXPECT_NE(committed, opened);
    EXPECT_EQ(reader.data_version(), committed);
    writer.finish_run(run_id, 1, 0);
    EXPECT_NE(reader.data_version(), committed);
}

TEST_F(TraceStoreTest, ActionsInAWindowOverlapItOnOneRank) {
    const fs::path path = file("window.db");
    std::vector<ActionRecord> rank0 = {
        action(0, 0, ActionLane::compute, 0, 0, 0, "0F0", 0, 100),   // ends at from: out
        action(0, 1, ActionLane::compute, 0, 0, 1, "0F1", 50, 150),  // straddles from: in
        action(0, 2, ActionLane::communication, 4, 0, 0, "0SEND_F0", 100, 120, 64, 0),  // in
        action(0, 3, ActionLane::compute, 0, 0, 2, "0F2", 150, 199),  // inside: in
        action(0, 4, ActionLane::compute, 0, 0, 3, "0F3", 190, 400),  // straddles to: in
        action(0, 5, ActionLane::compute, 3, 0, 0, "0B0", 200, 300),  // starts at to: out
    };
    {
        TraceWriter writer(path);
        std::int64_t run_id = writer.begin_run(simulated_run());
        for (auto index : {5, 3, 0, 4, 2, 1})
            writer.add_action(run_id, rank0[index]);
        writer.add_action(run_id, action(1, 0, ActionLane::compute, 0, 1, 0, "1F0", 120, 180));
        writer.finish_run(run_id, 400, 0);
    }
    TraceReader reader(path);
    expect_same(reader.actions(1, 0, 100, 200), {rank0[1], rank0[2], rank0[3], rank0[4]});
    expect_same(reader.actions(1, 1, 100, 200),
                {action(1, 0, ActionLane::compute, 0, 1, 0, "1F0", 120, 180)});
    EXPECT_TRUE(reader.actions(1, 0, 400, 500).empty());
    EXPECT_TRUE(reader.actions(1, 2, 0, 500).empty());
    expect_same(reader.actions(1, 0, 0, 1000), rank0);
}

TEST_F(TraceStoreTest, EmptyFileBecomesATrace) {
    const fs::path path = file("made_by_mktemp.db");
    write_text(path, "");
    TraceWriter(path).begin_run(simulated_run());
    EXPECT_EQ(TraceReader(path).runs().size(), 1u);
}

TEST_F(TraceStoreTest, OneWriterPerFile) {
    const fs::path path = file("locked.db");
    TraceWriter first(path);
    std::int64_t run_id = first.begin_run(simulated_run());
    EXPECT_EQ(error_of([&] { TraceWriter second(path); }),
              path.string() +
                  ": cannot append to trace: database is locked (another pipelens process is "
                  "writing it)");
    first.add_action(run_id, action(0, 0, ActionLane::compute, 0, 0, 0, "0F0", 0, 1));
    first.finish_run(run_id, 1, 0);
    EXPECT_EQ(TraceReader(path).action_count(run_id), 1);
}

// A writer told to wait (a run recording itself after its work) gets the file once the writer
// holding it closes, and still fails, naming the file, when that takes longer than it waits.
TEST_F(TraceStoreTest, AWriterThatWaitsGetsTheFileWhenTheOtherCloses) {
    const fs::path path = file("waited.db");
    auto first = std::make_unique<TraceWriter>(path);
    first->finish_run(first->begin_run(simulated_run()), 1, 0);
    EXPECT_EQ(error_of([&] {
                  TraceWriter second(path,
                                     {.wait_for_other_writer = std::chrono::milliseconds(50)});
              }),
              path.string() +
                  ": cannot append to trace: database is locked (another pipelens process is "
                  "writing it)");
    std::thread closer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        first.reset();
    });
    {
        TraceWriter second(path, {.wait_for_other_writer = std::chrono::seconds(60)});
        second.finish_run(second.begin_run(simulated_run()), 1, 0);
    }
    closer.join();
    EXPECT_EQ(TraceReader(path).runs().size(), 2u);
}

TEST_F(TraceStoreTest, RowsGoOnlyToRunsThisWriterHasOpen) {
    const fs::path path = file("closed.db");
    std::int64_t earlier = 0;
    {
        TraceWriter writer(path);
        earlier = writer.begin_run(simulated_run());
    }
    TraceWriter writer(path);
    const ActionRecord record = action(0, 0, ActionLane::compute, 0, 0, 0, "0F0", 0, 1);
    EXPECT_EQ(
        error_of([&] { writer.add_action(earlier, record); }),
        path.string() + ": cannot add an action to run 1: run 1 was not begun by this writer");
    EXPECT_EQ(error_of([&] { writer.finish_run(earlier, 1, 0); }),
              path.string() + ": cannot finish run 1: it was not begun by this writer");
    std::int64_t run_id = writer.begin_run(simulated_run());
    writer.finish_run(run_id, 1, 0);
    EXPECT_EQ(error_of([&] { writer.add_rank(run_id, RankRecord{}); }),
              path.string() + ": cannot add a rank to run 2: the run is already finished");
    EXPECT_EQ(error_of([&] { writer.fail_run(run_id, "late"); }),
              path.string() + ": cannot mark run 2 as failed: it is already finished");

    std::int64_t duplicated = writer.begin_run(simulated_run());
    writer.add_rank(duplicated, RankRecord{});
    EXPECT_EQ(
        error_of([&] { writer.add_rank(duplicated, RankRecord{}); }),
        path.string() +
            ": cannot add rank 0 to run 3: UNIQUE constraint failed: ranks.run_id, ranks.rank");
    writer.add_action(duplicated, record);  // the writer is still usable after a rejected row
    writer.finish_run(duplicated, 1, 0);
    EXPECT_EQ(TraceReader(path).action_count(duplicated), 1);
}

}  // namespace
}  // namespace pipelens::traces
