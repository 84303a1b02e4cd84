// Copying runs between trace files (`pipelens merge`): every row of every run arrives under a new
// id with its text re-interned, the destination's own runs stay, the source is not touched, and a
// source that cannot be read changes nothing.
#include <gtest/gtest.h>

#include "tests/traces/trace_store_fixture.hpp"
#include "traces/trace_merge.hpp"

namespace pipelens::traces {
namespace {

using TraceMerge = TraceStoreTest;

std::string bytes_of(const fs::path& path) {
    std::ifstream file(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(file), {});
}

// A run with a row in every table, events and errors named so their strings' ids differ between
// the files.
std::int64_t write_run(TraceWriter& writer, const std::string& tag, bool fail) {
    RunRecord run;
    run.schedule = "1F1B";
    run.pp = 2;
    run.m = 2;
    run.config = "name = \"" + tag + "\"";
    const std::int64_t id = writer.begin_run(run);
    writer.add_rank(id, RankRecord{0, 10, 2, 0.2, 64, 1, 1, "{\"1\":2}", 5, 1, 7'000});
    ActionRecord forward;
    forward.kind = 0;
    forward.stage = 0;
    forward.microbatch = 1;
    forward.start_ns = 3;
    forward.end_ns = 7;
    writer.add_action(id, forward);
    writer.add_pair(id, PairRecord{0, 0, 1, 1, 0, 4096});
    writer.add_memory(id, MemoryRecord{0, 7, 64});
    writer.add_event(id, EventRecord{0, 0, std::nullopt, tag + "_event", "{}", "ok", 2});
    writer.add_event(id, EventRecord{1, 0, 0, "shared_event", "{\"a\":1}", "ok", std::nullopt});
    writer.add_sharding(id,
                        ShardingRecord{0, "aten.mm.default", "DeviceMesh((tp=2))", "[]", -1, "[]"});
    writer.add_state_snapshot(id, StateSnapshotRecord{0, 1, "[]"});
    ProfileRecord figure;
    figure.quantity = "F";
    figure.median = 5;
    writer.add_profile(id, figure);
    if (fail) {
        writer.add_error(id, ErrorRecord{1, 0, 1, "0F1", "timeout", "a", "b", tag, 9, 4});
        writer.fail_run(id, "rank 1 timed out");
    } else {
        writer.finish_run(id, 10, 0.2);
    }
    return id;
}

template <typename Read>
void expect_same_rows(const TraceReader& a, std::int64_t run_a, const TraceReader& b,
                      std::int64_t run_b, Read read) {
    expect_same(read(b, run_b), read(a, run_a));
}

TEST_F(TraceMerge, EveryRowOfEveryRunArrivesUnderANewId) {
    const fs::path source = file("source.db"), destination = file("merged.db");
    {
        TraceWriter writer(source);
        write_run(writer, "first", false);
        write_run(writer, "second", true);
    }
    {
        TraceWriter writer(destination);
        write_run(writer, "already_there", false);
    }
    const std::string source_bytes = bytes_of(source);
    EXPECT_EQ(copy_trace_runs(source, destination), (std::vector<std::int64_t>{2, 3}));
    EXPECT_EQ(bytes_of(source), source_bytes);

    const TraceReader from(source), into(destination);
    ASSERT_EQ(into.runs().size(), 3u);
    EXPECT_EQ(into.run(1).config, "name = \"already_there\"");
    for (const auto& [old_id, new_id] : {std::pair{1, 2}, std::pair{2, 3}}) {
        RunRecord expected = from.run(old_id);
        expected.id = new_id;
        EXPECT_EQ(fields(into.run(new_id)), fields(expected));
        expect_same_rows(from, old_id, into, new_id,
                         [](const TraceReader& r, std::int64_t id) { return r.ranks(id); });
        expect_same_rows(from, old_id, into, new_id,
                         [](const TraceReader& r, std::int64_t id) { return r.actions(id); });
        expect_same_rows(from, old_id, into, new_id,
                         [](const TraceReader& r, std::int64_t id) { return r.pairs(id); });
        expect_same_rows(from, old_id, into, new_id,
                         [](const TraceReader& r, std::int64_t id) { return r.memory(id); });
        expect_same_rows(from, old_id, into, new_id,
                         [](const TraceReader& r, std::int64_t id) { return r.events(id); });
        expect_same_rows(from, old_id, into, new_id,
                         [](const TraceReader& r, std::int64_t id) { return r.errors(id); });
        expect_same_rows(from, old_id, into, new_id,
                         [](const TraceReader& r, std::int64_t id) { return r.sharding(id); });
        EXPECT_EQ(into.profile(new_id), from.profile(old_id));
        ASSERT_EQ(into.state_snapshots(new_id).size(), 1u);
        EXPECT_EQ(into.state_snapshots(new_id)[0].after_sequence, 1);
    }
    EXPECT_EQ(into.events(3)[0].name, "second_event");
    EXPECT_EQ(into.events(1)[0].name, "already_there_event");
}

TEST_F(TraceMerge, ASourceThatIsNotATraceChangesNothing) {
    const fs::path source = file("notes.db"), destination = file("merged.db");
    std::ofstream(source) << "not a trace at all, just text that is long enough to be looked at";
    {
        TraceWriter writer(destination);
        write_run(writer, "kept", false);
    }
    try {
        copy_trace_runs(source, destination);
        FAIL() << "copied from a file that is not a trace";
    } catch (const TraceError& error) {
        EXPECT_NE(std::string(error.what()).find(source.string()), std::string::npos)
            << error.what();
    }
    EXPECT_EQ(TraceReader(destination).runs().size(), 1u);
}

// Before version 8 a two-step run shared each SEND/RECV pair between its steps. Merged from such a
// file, the run arrives as the upgrade rewrites it (the second step's copies get a pair of their
// own), as if the file had been upgraded first; the older file itself is not changed.
TEST_F(TraceMerge, AnOlderSourceArrivesUpgradedAndStaysAsItWas) {
    const fs::path source = file("v7.db"), destination = file("merged.db");
    write_older_trace(source, 7);
    {
        testing::RawDatabase raw(source);
        // Two steps: rank 0 runs 0SEND_F0 (pair 0) at 10 and 110, rank 1 1RECV_F0 at 5 and 105.
        raw.execute(
            "INSERT INTO actions (run_id, rank, step, lane, kind, stage, microbatch, start_ns, "
            "end_ns, bytes, pair_id) VALUES (1, 0, 0, 1, 4, 0, 0, 10, 12, 64, 0), "
            "(1, 0, 0, 1, 4, 0, 0, 110, 112, 64, 0), (1, 1, 0, 1, 5, 1, 0, 5, 15, 64, 0), "
            "(1, 1, 0, 1, 5, 1, 0, 105, 115, 64, 0)");
        raw.execute(
            "INSERT INTO pairs (run_id, pair_id, send_rank, send_step, recv_rank, recv_step, "
            "bytes) VALUES (1, 0, 0, 0, 1, 0, 64)");
    }
    const std::string before = bytes_of(source);
    {
        TraceWriter writer(destination);
        write_run(writer, "kept", false);
    }
    EXPECT_EQ(copy_trace_runs(source, destination), std::vector<std::int64_t>{2});
    EXPECT_EQ(bytes_of(source), before);
    expect_same(TraceReader(destination).pairs(2),
                {PairRecord{0, 0, 0, 1, 0, 64, 0}, PairRecord{1, 0, 0, 1, 0, 64, 1}});
    testing::RawDatabase merged(destination, SQLITE_OPEN_READONLY);
    EXPECT_EQ(merged.rows("SELECT rank || ' ' || start_ns || ' ' || pair_id FROM actions "
                          "WHERE run_id = 2 ORDER BY rank, start_ns"),
              (std::vector<std::string>{"0 10 0", "0 110 1", "1 5 0", "1 105 1"}));
    for (const auto& entry : fs::directory_iterator(directory_))
        EXPECT_EQ(entry.path().filename().string().find("merge-source"), std::string::npos)
            << "the upgraded copy is removed: " << entry.path();
}

}  // namespace
}  // namespace pipelens::traces
