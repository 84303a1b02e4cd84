// What the trace store tests share: a fresh directory per test, record fields as tuples for
// exact comparison, a run to write, the one-line error of a failing call, and a raw SQLite
// connection to inspect or damage a file as the sqlite3 shell would.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "tests/raw_database.hpp"
#include "tests/temp_directory.hpp"
#include "traces/schema.hpp"
#include "traces/trace_reader.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::traces {

namespace fs = std::filesystem;

// A fresh directory per test, removed with everything in it afterwards.
class TraceStoreTest : public testing::TempDirectoryTest {
  protected:
    TraceStoreTest() : TempDirectoryTest("traces") {}
    fs::path file(const std::string& name) const { return directory_ / name; }
};

inline auto fields(const RunRecord& run) {
    return std::tie(run.id, run.kind, run.schedule, run.pp, run.v, run.m, run.config, run.status,
                    run.started_at_ns, run.finished_at_ns, run.step_time_ns, run.bubble_ratio,
                    run.failure);
}
inline auto fields(const RankRecord& rank) {
    return std::tie(rank.rank, rank.busy_ns, rank.bubble_ns, rank.bubble_ratio,
                    rank.peak_memory_bytes, rank.warmup_ns, rank.cooldown_ns, rank.waiting_on,
                    rank.clock_offset_ns, rank.clock_uncertainty_ns, rank.core_wait_ns);
}
inline auto fields(const ActionRecord& action) {
    return std::tie(action.rank, action.step, action.lane, action.kind, action.stage,
                    action.microbatch, action.label, action.start_ns, action.end_ns, action.bytes,
                    action.pair_id);
}
inline auto fields(const PairRecord& pair) {
    return std::tie(pair.pair_id, pair.send_rank, pair.send_step, pair.recv_rank, pair.recv_step,
                    pair.bytes, pair.training_step);
}
inline auto fields(const MemoryRecord& sample) {
    return std::tie(sample.rank, sample.time_ns, sample.bytes);
}
inline auto fields(const EventRecord& event) {
    return std::tie(event.sequence, event.rank, event.parent, event.name, event.arguments,
                    event.outcome, event.time_ns);
}
inline auto fields(const ErrorRecord& error) {
    return std::tie(error.rank, error.stage, error.microbatch, error.action, error.kind,
                    error.expected, error.actual, error.message, error.time_ns, error.started_ns);
}
inline auto fields(const ShardingRecord& decision) {
    return std::tie(decision.sequence, decision.op, decision.mesh, decision.strategies,
                    decision.chosen, decision.redistributions);
}

template <typename Record>
void expect_same(const std::vector<Record>& actual, const std::vector<Record>& expected) {
    ASSERT_EQ(actual.size(), expected.size());
    for (std::size_t index = 0; index < actual.size(); ++index)
        EXPECT_EQ(fields(actual[index]), fields(expected[index])) << "row " << index;
}

// `label` is the text the reader must derive from kind, stage and microbatch (and `parts`).
inline ActionRecord action(int rank, int step, ActionLane lane, int kind, int stage, int microbatch,
                           std::string label, std::int64_t start_ns, std::int64_t end_ns,
                           std::int64_t bytes = 0, int pair_id = -1,
                           std::vector<ActionPartRecord> parts = {}) {
    ActionRecord record;
    record.rank = rank;
    record.step = step;
    record.lane = lane;
    record.kind = static_cast<std::uint8_t>(kind);
    record.stage = stage;
    record.microbatch = microbatch;
    record.label = std::move(label);
    record.parts = std::move(parts);
    record.start_ns = start_ns;
    record.end_ns = end_ns;
    record.bytes = bytes;
    record.pair_id = pair_id;
    return record;
}

inline RunRecord simulated_run(std::string schedule = "1F1B", int pp = 2, int m = 4) {
    RunRecord run;
    run.kind = RunKind::simulated;
    run.schedule = std::move(schedule);
    run.pp = pp;
    run.v = 1;
    run.m = m;
    run.config = R"({"costs":{"forward_ns":1000}})";
    run.started_at_ns = 1'700'000'000'000'000'000;
    return run;
}

// The exact message of the TraceError `call` throws; fails the test if it throws nothing.
template <typename Call>
std::string error_of(Call&& call) {
    try {
        call();
    } catch (const TraceError& error) {
        std::string message = error.what();
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
        return message;
    }
    ADD_FAILURE() << "no TraceError thrown";
    return {};
}

using testing::RawDatabase;

inline void write_text(const fs::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
}

// A closed trace holding one finished run of `count` actions over 4 ranks.
inline void write_trace_with_actions(const fs::path& path, int count) {
    TraceWriter writer(path);
    std::int64_t run_id = writer.begin_run(simulated_run("GPipe", 4, 64));
    for (int index = 0; index < count; ++index)
        writer.add_action(run_id,
                          action(index % 4, index / 4, ActionLane::compute, index % 8, index % 4,
                                 index % 64, "", index * 1000, index * 1000 + 900, 1 << 20));
    writer.finish_run(run_id, count * 1000, 0.25);
}

// A file as a build of schema `version` made it: the schema without the later sections, its
// meta, and one finished run (id 1).
inline void write_older_trace(const fs::path& path, int version) {
    const std::string_view schema = schema_sql();
    const std::string later = "\n-- @since " + std::to_string(version + 1);
    ASSERT_NE(schema.find(later), std::string_view::npos) << later;
    RawDatabase raw(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    raw.execute(std::string(schema.substr(0, schema.find(later))));
    raw.execute("INSERT INTO meta VALUES ('application', 'pipelens'), ('schema_version', '" +
                std::to_string(version) + "')");
    raw.execute(
        "INSERT INTO runs (id, kind, schedule, pp, v, m, status, started_at_ns, config, "
        "step_time_ns, bubble_ratio) VALUES (1, 'sim', '1F1B', 2, 1, 4, 'finished', 0, '', 100, "
        "0.25)");
}

}  // namespace pipelens::traces
