// Files the trace store must refuse or bring up to date: the embedded schema and its version
// sections, version-1 files read and upgraded, and every kind of bad file (not a trace, foreign
// SQLite, newer or unreadable version, truncated, overwritten pages, unknown runs) refused with
// one line that names the file and the reason.
#include <gtest/gtest.h>

#include <random>

#include "tests/traces/trace_store_fixture.hpp"

namespace pipelens::traces {
namespace {

TEST(TraceSchemaTest, EmbeddedSchemaCarriesTheCurrentVersion) {
    std::string_view schema = schema_sql();
    std::string first_line =
        "-- pipelens trace schema version " + std::to_string(kSchemaVersion) + ".";
    EXPECT_EQ(schema.substr(0, first_line.size()), first_line);
    for (const char* table : {"meta", "strings", "runs", "ranks", "actions", "pairs", "memory",
                              "events", "errors", "sharding", "state_snapshots"})
        EXPECT_NE(schema.find(std::string("CREATE TABLE ") + table + " ("), std::string::npos)
            << table;
}

TEST_F(TraceStoreTest, VersionOneFilesAreReadAndUpgradedOnAppend) {
    const fs::path path = file("v1.db");
    write_older_trace(path, 1);
    EXPECT_EQ(schema_sql_since(1).rfind("\n-- @since 2\n", 0), 0u) << schema_sql_since(1);
    EXPECT_NE(schema_sql_since(1).find("CREATE TABLE state_snapshots"), std::string::npos);
    EXPECT_EQ(schema_sql_since(kSchemaVersion), "");
    {
        TraceReader reader(path);
        EXPECT_EQ(reader.schema_version(), 1);
        EXPECT_TRUE(reader.state_snapshots(1).empty());
    }
    {
        TraceWriter writer(path);
        const std::int64_t run_id = writer.begin_run(RunRecord{});
        writer.add_state_snapshot(run_id, {0, 0, "[]"});
        writer.finish_run(run_id, 1, 0);
    }
    TraceReader reader(path);
    EXPECT_EQ(reader.schema_version(), kSchemaVersion);
    EXPECT_EQ(reader.runs().size(), 2u);
    EXPECT_EQ(reader.state_snapshots(2).size(), 1u);
}

TEST_F(TraceStoreTest, VersionTwoEventsHaveNoTimeUntilAWriterAddsTheColumn) {
    const fs::path path = file("v2.db");
    write_older_trace(path, 2);
    {
        RawDatabase raw(path);
        raw.execute("INSERT INTO strings (id, text) VALUES (1, 'configure_transport')");
        raw.execute(
            "INSERT INTO events (run_id, rank, sequence, parent, name_id, arguments, outcome) "
            "VALUES (1, 0, 0, NULL, 1, '{}', 'ok')");
    }
    EXPECT_EQ(schema_sql_since(2).rfind("\n-- @since 3\n", 0), 0u) << schema_sql_since(2);
    EXPECT_NE(schema_sql_since(2).find("ALTER TABLE events ADD COLUMN time_ns"), std::string::npos);
    {
        TraceReader reader(path);
        EXPECT_EQ(reader.schema_version(), 2);
        expect_same(reader.events(1),
                    {{0, 0, std::nullopt, "configure_transport", "{}", "ok", std::nullopt}});
    }
    {
        TraceWriter writer(path);
        const std::int64_t run_id = writer.begin_run(RunRecord{});
        writer.add_event(run_id, {0, 0, std::nullopt, "configure_transport", "{}", "ok", -1200});
        writer.finish_run(run_id, 1, 0);
    }
    TraceReader reader(path);
    EXPECT_EQ(reader.schema_version(), kSchemaVersion);
    EXPECT_EQ(reader.events(1).at(0).time_ns, std::nullopt);
    EXPECT_EQ(reader.events(2).at(0).time_ns, std::optional<std::int64_t>(-1200));
}

TEST_F(TraceStoreTest, VersionFourRanksHaveNoClockOffsetUntilAWriterAddsTheColumns) {
    const fs::path path = file("v4.db");
    write_older_trace(path, 4);
    RawDatabase(path).execute(
        "INSERT INTO ranks (run_id, rank, busy_ns, bubble_ns, bubble_ratio, peak_memory_bytes, "
        "warmup_ns, cooldown_ns, waiting_on) VALUES (1, 0, 10, 0, 0, 0, 0, 0, '{}')");
    EXPECT_NE(schema_sql_since(4).find("ALTER TABLE ranks ADD COLUMN clock_offset_ns"),
              std::string::npos);
    {
        TraceReader reader(path);
        EXPECT_EQ(reader.schema_version(), 4);
        EXPECT_EQ(reader.ranks(1).at(0).clock_offset_ns, std::nullopt);
    }
    {
        TraceWriter writer(path);
        const std::int64_t run_id = writer.begin_run(RunRecord{});
        RankRecord measured;
        measured.rank = 1;
        measured.clock_offset_ns = -5'000'000;
        measured.clock_uncertainty_ns = 30'000;
        writer.add_rank(run_id, measured);
        writer.finish_run(run_id, 1, 0);
    }
    TraceReader reader(path);
    EXPECT_EQ(reader.schema_version(), kSchemaVersion);
    EXPECT_EQ(reader.ranks(1).at(0).clock_uncertainty_ns, std::nullopt);
    EXPECT_EQ(reader.ranks(2).at(0).clock_offset_ns, std::optional<std::int64_t>(-5'000'000));
    EXPECT_EQ(reader.ranks(2).at(0).clock_uncertainty_ns, std::optional<std::int64_t>(30'000));
}

TEST_F(TraceStoreTest, VersionNineRanksHaveNoCoreWaitUntilAWriterAddsTheColumn) {
    const fs::path path = file("v9.db");
    write_older_trace(path, 9);
    RawDatabase(path).execute(
        "INSERT INTO ranks (run_id, rank, busy_ns, bubble_ns, bubble_ratio, peak_memory_bytes, "
        "warmup_ns, cooldown_ns, waiting_on) VALUES (1, 0, 10, 0, 0, 0, 0, 0, '{}')");
    EXPECT_EQ(schema_sql_since(9).rfind("\n-- @since 10\n", 0), 0u) << schema_sql_since(9);
    EXPECT_EQ(TraceReader(path).ranks(1).at(0).core_wait_ns, std::nullopt);
    {
        TraceWriter writer(path);
        const std::int64_t run_id = writer.begin_run(RunRecord{});
        RankRecord measured;
        measured.core_wait_ns = 1'250'000;
        writer.add_rank(run_id, measured);
        writer.finish_run(run_id, 1, 0);
    }
    TraceReader reader(path);
    EXPECT_EQ(reader.schema_version(), kSchemaVersion);
    EXPECT_EQ(reader.ranks(1).at(0).core_wait_ns, std::nullopt);
    EXPECT_EQ(reader.ranks(2).at(0).core_wait_ns, std::optional<std::int64_t>(1'250'000));
}

// Version 3 stored every action's text; version 4 derives it. Old rows keep showing their
// stored text (an OVERLAP_F_B's too) after a writer brings the file up to date, new rows are
// derived, and the memory index then covers the bytes column.
TEST_F(TraceStoreTest, VersionThreeLabelsSurviveTheUpgrade) {
    const fs::path path = file("v3.db");
    write_older_trace(path, 3);
    {
        RawDatabase raw(path);
        raw.execute(
            "INSERT INTO strings (id, text) VALUES (1, '0F0'), (2, '(0F1;0B0)OVERLAP_F_B')");
        raw.execute(
            "INSERT INTO actions (run_id, rank, step, lane, kind, stage, microbatch, label_id, "
            "start_ns, end_ns, bytes, pair_id) VALUES (1, 0, 0, 0, 0, 0, 0, 1, 0, 10, 0, -1), "
            "(1, 0, 1, 0, 8, -1, -1, 2, 10, 30, 0, -1)");
    }
    const auto labels = [&](std::int64_t run) {
        std::vector<std::string> texts;
        for (const ActionRecord& action : TraceReader(path).actions(run))
            texts.push_back(action.label);
        return texts;
    };
    EXPECT_EQ(labels(1), (std::vector<std::string>{"0F0", "(0F1;0B0)OVERLAP_F_B"}));
    EXPECT_EQ(TraceReader(path).stored_labels(1, 0),
              (std::vector<std::pair<std::int32_t, std::string>>{{1, "(0F1;0B0)OVERLAP_F_B"}}));
    {
        TraceWriter writer(path);
        const std::int64_t run_id = writer.begin_run(RunRecord{});
        ActionRecord overlap;
        overlap.kind = 8;
        overlap.stage = overlap.microbatch = -1;
        overlap.parts = {{0, 0, 2}, {1, 0, 1}};
        writer.add_action(run_id, overlap);
        writer.finish_run(run_id, 1, 0);
    }
    EXPECT_EQ(TraceReader(path).schema_version(), kSchemaVersion);
    EXPECT_EQ(labels(1), (std::vector<std::string>{"0F0", "(0F1;0B0)OVERLAP_F_B"}));
    EXPECT_EQ(labels(2), (std::vector<std::string>{"(0F2;0I1)OVERLAP_F_B"}));
    RawDatabase raw(path, SQLITE_OPEN_READONLY);
    EXPECT_EQ(raw.value("SELECT group_concat(name) FROM pragma_index_info('memory_by_rank_time')"),
              "run_id,rank,time_ns,bytes");
    EXPECT_TRUE(raw.rows("PRAGMA foreign_key_check").empty());
}

// Before version 8 a run of `run --steps 2` named each SEND/RECV pair once for both steps, so a
// join of pairs to actions matched both copies. A writer's upgrade gives the second step's
// copies their own pair id (the first step's plus the run's pair count) and their pair a row,
// with its training step; a one-step run keeps its ids.
TEST_F(TraceStoreTest, VersionSevenStepsGetPairsOfTheirOwnOnAppend) {
    const fs::path path = file("v7.db");
    write_older_trace(path, 7);
    {
        RawDatabase raw(path);
        raw.execute(
            "INSERT INTO runs (id, kind, schedule, pp, v, m, status, started_at_ns, config, "
            "step_time_ns, bubble_ratio) VALUES (2, 'real', '1F1B', 2, 1, 1, 'finished', 0, '', 5, "
            "0)");
        // Run 1, two steps: rank 0 runs 0F0 then 0SEND_F0 (pair 0), rank 1 1RECV_F0 then 1F0.
        raw.execute(
            "INSERT INTO actions (run_id, rank, step, lane, kind, stage, microbatch, start_ns, "
            "end_ns, bytes, pair_id) VALUES "
            "(1, 0, 0, 0, 0, 0, 0, 0, 10, 0, -1), (1, 0, 1, 1, 4, 0, 0, 10, 12, 64, 0), "
            "(1, 0, 0, 0, 0, 0, 0, 100, 110, 0, -1), (1, 0, 1, 1, 4, 0, 0, 110, 112, 64, 0), "
            "(1, 1, 0, 1, 5, 1, 0, 5, 15, 64, 0), (1, 1, 1, 0, 0, 1, 0, 15, 25, 0, -1), "
            "(1, 1, 0, 1, 5, 1, 0, 105, 115, 64, 0), (1, 1, 1, 0, 0, 1, 0, 115, 125, 0, -1), "
            "(2, 0, 0, 1, 4, 0, 0, 0, 2, 64, 0), (2, 1, 0, 1, 5, 1, 0, 0, 5, 64, 0)");
        raw.execute(
            "INSERT INTO pairs (run_id, pair_id, send_rank, send_step, recv_rank, recv_step, "
            "bytes) VALUES (1, 0, 0, 1, 1, 0, 64), (2, 0, 0, 0, 1, 0, 64)");
    }
    const PairRecord first{0, 0, 1, 1, 0, 64, 0};
    expect_same(TraceReader(path).pairs(1), {first});
    {
        TraceWriter writer(path);
        const std::int64_t run_id = writer.begin_run(RunRecord{});
        writer.add_pair(run_id, {5, 0, 1, 1, 0, 8, 2});
        writer.finish_run(run_id, 1, 0);
    }
    const TraceReader reader(path);
    EXPECT_EQ(reader.schema_version(), kSchemaVersion);
    expect_same(reader.pairs(1), {first, {1, 0, 1, 1, 0, 64, 1}});
    expect_same(reader.pairs(2), {{0, 0, 0, 1, 0, 64, 0}});
    expect_same(reader.pairs(3), {{5, 0, 1, 1, 0, 8, 2}});
    RawDatabase raw(path, SQLITE_OPEN_READONLY);
    EXPECT_EQ(raw.rows("SELECT run_id || ' ' || rank || ' ' || start_ns || ' ' || pair_id FROM "
                       "actions WHERE pair_id >= 0 ORDER BY run_id, rank, start_ns"),
              (std::vector<std::string>{"1 0 10 0", "1 0 110 1", "1 1 5 0", "1 1 105 1", "2 0 0 0",
                                        "2 1 0 0"}));
}

TEST_F(TraceStoreTest, ReaderRefusesWhatIsNotATrace) {
    const fs::path missing = file("missing.db");
    EXPECT_EQ(error_of([&] { TraceReader reader(missing); }), missing.string() + ": no such file");

    const fs::path text = file("notes.db");
    write_text(text, "step,rank,action\n0,0,0F0\n");
    EXPECT_EQ(error_of([&] { TraceReader reader(text); }),
              text.string() + ": not an SQLite database (it is some other kind of file)");

    const fs::path random = file("random.db");
    std::mt19937 generator(7);
    std::string bytes(64 * 1024, '\0');
    for (char& byte : bytes)
        byte = static_cast<char>(generator());
    write_text(random, bytes);
    EXPECT_EQ(error_of([&] { TraceReader reader(random); }),
              random.string() + ": not an SQLite database (it is some other kind of file)");

    const fs::path empty = file("empty.db");
    write_text(empty, "");
    EXPECT_EQ(error_of([&] { TraceReader reader(empty); }),
              empty.string() + ": not a pipelens trace (empty file)");

    EXPECT_EQ(error_of([&] { TraceReader reader(directory_); }),
              directory_.string() + ": is a directory, not a trace file");

    const fs::path foreign = file("foreign.db");
    {
        RawDatabase raw(foreign, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
        raw.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)");
    }
    EXPECT_EQ(error_of([&] { TraceReader reader(foreign); }),
              foreign.string() + ": not a pipelens trace (no meta table)");

    const fs::path other_meta = file("other_meta.db");
    {
        RawDatabase raw(other_meta, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
        raw.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)");
        raw.execute("INSERT INTO meta VALUES ('application', 'photos'), ('schema_version', '1')");
    }
    EXPECT_EQ(error_of([&] { TraceReader reader(other_meta); }),
              other_meta.string() + ": not a pipelens trace (meta application is 'photos')");

    const fs::path no_tables = file("no_tables.db");
    {
        RawDatabase raw(no_tables, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
        raw.execute("PRAGMA user_version = 3");  // a valid database file without a table
    }
    EXPECT_EQ(error_of([&] { TraceReader reader(no_tables); }),
              no_tables.string() + ": not a pipelens trace (an SQLite database with no tables)");

    // A writer killed before its first checkpoint leaves its tables in the log beside the file;
    // a damaged log is ignored by SQLite, which left "not a pipelens trace" to explain it.
    const fs::path in_log = file("in_log.db");
    {
        RawDatabase raw(in_log, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
        raw.execute("PRAGMA journal_mode = WAL");
    }
    write_text(in_log.string() + "-wal", bytes.substr(0, 5000));
    EXPECT_EQ(error_of([&] { TraceReader reader(in_log); }),
              in_log.string() + ": its tables are in its write-ahead log " + in_log.string() +
                  "-wal, which SQLite could not use: the log is damaged or belongs to another "
                  "file");
}

TEST_F(TraceStoreTest, NewerOrUnreadableSchemaVersionsAreRefused) {
    const fs::path newer = file("newer.db");
    TraceWriter(newer).begin_run(simulated_run());
    RawDatabase(newer).execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'");
    const std::string expected = newer.string() +
                                 ": trace schema version 99 is newer than this pipelens supports "
                                 "(" +
                                 std::to_string(kSchemaVersion) + "); upgrade pipelens";
    EXPECT_EQ(error_of([&] { TraceReader reader(newer); }), expected);
    EXPECT_EQ(error_of([&] { TraceWriter writer(newer); }), expected);
    EXPECT_EQ(RawDatabase(newer).value("SELECT count(*) FROM runs"), "1");  // left untouched

    const fs::path garbled = file("garbled.db");
    TraceWriter(garbled).flush();
    RawDatabase(garbled).execute("UPDATE meta SET value = 'one' WHERE key = 'schema_version'");
    EXPECT_EQ(error_of([&] { TraceReader reader(garbled); }),
              garbled.string() + ": trace schema version 'one' is not a number");

    const fs::path zero = file("zero.db");
    TraceWriter(zero).flush();
    RawDatabase(zero).execute("UPDATE meta SET value = '0' WHERE key = 'schema_version'");
    EXPECT_EQ(error_of([&] { TraceReader reader(zero); }),
              zero.string() + ": trace schema version 0 is not valid (versions start at 1)");
}

TEST_F(TraceStoreTest, TruncatedTraceIsReportedAsCorrupt) {
    const fs::path path = file("truncated.db");
    write_trace_with_actions(path, 60'000);
    ASSERT_FALSE(fs::exists(path.string() + "-wal"));  // checkpointed into the file on close
    const std::uintmax_t size = fs::file_size(path);
    ASSERT_GT(size, 2u << 20);
    TraceReader(path).actions(1);  // intact before
    fs::resize_file(path, size / 2);
    const std::string message = error_of([&] { TraceReader reader(path); });
    EXPECT_EQ(message, path.string() + ": trace is corrupt: database disk image is malformed");
    const std::string writer_message = error_of([&] { TraceWriter writer(path); });
    EXPECT_EQ(writer_message, message);
}

TEST_F(TraceStoreTest, OverwrittenPagesFailTheIntegrityCheck) {
    const fs::path path = file("garbage.db");
    write_trace_with_actions(path, 60'000);
    const std::uintmax_t size = fs::file_size(path);
    {
        std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
        std::mt19937 generator(11);
        std::string garbage(64 * 1024, '\0');
        for (char& byte : garbage)
            byte = static_cast<char>(generator());
        file.seekp(static_cast<std::streamoff>(size / 2 / 4096 * 4096));
        file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
    }
    ASSERT_EQ(fs::file_size(path), size);
    const std::string message = error_of([&] { TraceReader reader(path); });
    EXPECT_EQ(message.rfind(path.string() + ": trace is corrupt: ", 0), 0u) << message;
    EXPECT_EQ(error_of([&] { TraceWriter writer(path); }), message);
}

// A stored text that is gone is damage: an event's name, or an action's text in a file written
// before version 4 (which then stored every action's text).
TEST_F(TraceStoreTest, ALabelMissingFromTheStringsTableIsCorruption) {
    const fs::path path = file("lost_string.db");
    write_older_trace(path, 3);
    {
        RawDatabase raw(path);
        raw.execute("INSERT INTO strings (id, text) VALUES (5, '0F0'), (6, 'choose_schedule')");
        raw.execute(
            "INSERT INTO actions (run_id, rank, step, lane, kind, stage, microbatch, label_id, "
            "start_ns, end_ns, bytes, pair_id) VALUES (1, 0, 0, 0, 0, 0, 0, 5, 0, 10, 0, -1)");
        raw.execute(
            "INSERT INTO events (run_id, rank, sequence, parent, name_id, arguments, "
            "outcome) VALUES (1, 0, 0, NULL, 6, '{}', 'ok')");
    }
    TraceWriter(path).flush();  // brought up to version 4: the old row keeps its stored text
    const std::string label_id = "5", name_id = "6";
    EXPECT_EQ(TraceReader(path).actions(1).at(0).label, "0F0");
    RawDatabase(path).execute("DELETE FROM strings");
    TraceReader reader(path);
    const std::string lost = path.string() + ": trace is corrupt: string id ";
    EXPECT_EQ(error_of([&] { reader.actions(1); }),
              lost + label_id + " is not in the strings table");
    EXPECT_EQ(error_of([&] { reader.actions(1, 0, 0, 100); }),
              lost + label_id + " is not in the strings table");
    EXPECT_EQ(error_of([&] { reader.events(1); }), lost + name_id + " is not in the strings table");
    EXPECT_EQ(reader.strings().find(std::stoll(label_id)), std::nullopt);
}

// Damage no writer produces is refused where it is read, naming the run and the row: before,
// a pp of 10^9 made `export` write gigabytes of empty rank records, and a kind of 999 read as
// 231 through the 8-bit field.
TEST_F(TraceStoreTest, RowsNoWriterProducesAreCorruption) {
    const fs::path path = file("damaged_rows.db");
    const std::string corrupt = path.string() + ": trace is corrupt: ";
    const auto damaged = [&](const std::string& change) {
        fs::remove(path);
        write_trace_with_actions(path, 8);
        RawDatabase(path).execute(change);
    };
    const auto run_error = [&] { return error_of([&] { TraceReader(path).run(1); }); };
    // Both ways of reading actions refuse it alike: the records, and the narrowed rows the
    // analyses (critical path, stragglers, diff) read.
    const auto actions_error = [&] {
        const std::string stored = error_of([&] { TraceReader(path).stored_actions(1, 0); });
        const std::string records = error_of([&] { TraceReader(path).actions(1); });
        EXPECT_EQ(stored, records);
        return records;
    };
    damaged("UPDATE runs SET pp = 1000000000");
    EXPECT_EQ(run_error(), corrupt + "run 1 has pp = 1000000000");
    damaged("UPDATE runs SET m = 9223372036854775807");
    EXPECT_EQ(run_error(), corrupt + "run 1 has m = 9223372036854775807");
    damaged("UPDATE runs SET v = -1");
    EXPECT_EQ(run_error(), corrupt + "run 1 has v = -1");
    // A rank row outside the run's ranks, or with figures no writer records, was printed as read.
    const auto ranks_error = [&] { return error_of([&] { TraceReader(path).ranks(1); }); };
    const std::string rank_row =
        "INSERT INTO ranks (run_id, rank, busy_ns, bubble_ns, bubble_ratio, peak_memory_bytes, "
        "warmup_ns, cooldown_ns, waiting_on) VALUES (1, ";
    damaged(rank_row + "9, 100, 0, 0.0, 0, 0, 0, '{}')");
    EXPECT_EQ(ranks_error(), corrupt + "run 1 rank 9: outside its 4 ranks");
    damaged(rank_row + "1, -100, 0, 0.0, 0, 0, 0, '{}')");
    EXPECT_EQ(ranks_error(), corrupt + "run 1 rank 1: busy_ns = -100");
    damaged(rank_row + "1, 100, 0, 1.5, 0, 0, 0, '{}')");
    EXPECT_EQ(ranks_error(), corrupt + "run 1 rank 1: bubble_ratio = 1.5");
    damaged(rank_row + "1, 100, 50, 0.5, 0, 10, 40, '{}')");
    EXPECT_EQ(TraceReader(path).ranks(1).size(), 1u);
    // Rows the reports once read as nothing wrong: an unreadable waiting_on as no waiting, a
    // negative uncertainty printed as "± -5 ns", a negative memory sample as no samples, a
    // transfer or an error on a rank the run does not have.
    damaged(rank_row + "1, 100, 50, 0.5, 0, 10, 40, '{not json')");
    EXPECT_EQ(ranks_error(),
              corrupt +
                  "run 1 rank 1: waiting_on is not a JSON object of peer rank to ns: "
                  "{not json");
    damaged(rank_row + "1, 100, 50, 0.5, 0, 10, 40, '{\"99\":5}')");
    EXPECT_EQ(ranks_error(), corrupt +
                                 "run 1 rank 1: waiting_on names peer '99', not one of its "
                                 "ranks");
    damaged(rank_row + "1, 100, 50, 0.5, -8, 10, 40, '{\"2\":5}')");
    EXPECT_EQ(ranks_error(), corrupt + "run 1 rank 1: peak_memory_bytes = -8");
    damaged(
        "INSERT INTO ranks (run_id, rank, busy_ns, bubble_ns, bubble_ratio, peak_memory_bytes, "
        "warmup_ns, cooldown_ns, waiting_on, core_wait_ns) VALUES (1, 1, 100, 0, 0.0, 0, 0, 0, "
        "'{}', -3)");
    EXPECT_EQ(ranks_error(), corrupt + "run 1 rank 1: core_wait_ns = -3");
    damaged("INSERT INTO memory (run_id, rank, time_ns, bytes) VALUES (1, 0, 10, -1000)");
    EXPECT_EQ(error_of([&] { TraceReader(path).memory(1); }),
              corrupt + "run 1 rank 0: a memory sample at 10 ns of -1000 bytes");
    EXPECT_EQ(error_of([&] { TraceReader(path).memory(1, 0); }),
              corrupt + "run 1 rank 0: a memory sample at 10 ns of -1000 bytes");
    damaged(
        "INSERT INTO pairs (run_id, pair_id, send_rank, send_step, recv_rank, recv_step, "
        "bytes) VALUES (1, 7, 99, 0, 1, 0, 64)");
    EXPECT_EQ(error_of([&] { TraceReader(path).pairs(1); }),
              corrupt + "run 1 pair 7: its SEND is on rank 99, outside its 4 ranks");
    damaged(
        "INSERT INTO errors (run_id, rank, stage, microbatch, action, kind, expected, actual, "
        "message) VALUES (1, 99, 0, 0, '', 'weird', '', '', 'x')");
    EXPECT_EQ(error_of([&] { TraceReader(path).errors(1); }),
              corrupt + "run 1 has an error on rank 99, outside its 4 ranks");
    damaged("UPDATE runs SET step_time_ns = -5");
    EXPECT_EQ(run_error(), corrupt + "run 1 has step_time_ns = -5");
    damaged("UPDATE runs SET step_time_ns = 9223372036854775807");
    EXPECT_EQ(run_error(), corrupt + "run 1 has step_time_ns = 9223372036854775807");
    damaged("UPDATE runs SET step_time_ns = NULL");
    EXPECT_EQ(run_error(), corrupt + "run 1 is finished but has no step_time_ns");
    damaged("UPDATE runs SET bubble_ratio = NULL");
    EXPECT_EQ(run_error(), corrupt + "run 1 is finished but has no bubble_ratio");
    damaged("UPDATE runs SET bubble_ratio = 5.0");
    EXPECT_EQ(run_error(), corrupt + "run 1 has bubble_ratio = 5");
    damaged("UPDATE actions SET kind = 999 WHERE rank = 0 AND step = 0");
    EXPECT_EQ(actions_error(), corrupt +
                                   "run 1 rank 0 step 0: action kind 999 is not a pipeline "
                                   "action");
    // A row outside the run's ranks: the readers that go rank by rank once dropped it (a
    // critical path without 0F0), those that read the whole run drew a rank the run lacks.
    for (const int rank : {-7, 4}) {
        damaged("UPDATE actions SET rank = " + std::to_string(rank) +
                " WHERE rank = 0 AND step = 0");
        const std::string outside = corrupt + "run 1 has an action on rank " +
                                    std::to_string(rank) + ", outside its 4 ranks";
        EXPECT_EQ(error_of([&] { TraceReader(path).actions(1); }), outside);
        EXPECT_EQ(error_of([&] { TraceReader(path).action_rank_limit(1); }), outside);
    }
    damaged("UPDATE actions SET end_ns = 9223372036854775000 WHERE rank = 0 AND step = 0");
    EXPECT_EQ(actions_error(), corrupt +
                                   "run 1 rank 0 step 0: it spans 0 to 9223372036854775000 ns, "
                                   "past 2^62 ns from the run's start");
    damaged("UPDATE actions SET microbatch = -2 WHERE rank = 0 AND step = 0");
    EXPECT_EQ(actions_error(), corrupt + "run 1 rank 0 step 0: microbatch -2 is out of range");
    damaged("UPDATE actions SET stage = 1000000000 WHERE rank = 0 AND step = 0");
    EXPECT_EQ(actions_error(), corrupt + "run 1 rank 0 step 0: stage 1000000000 is out of range");
    damaged("UPDATE actions SET end_ns = start_ns - 1 WHERE rank = 0 AND step = 0");
    EXPECT_EQ(actions_error(),
              corrupt + "run 1 rank 0 step 0: it ends at -1 ns, before it starts at 0 ns");
    damaged("UPDATE actions SET end_ns = start_ns WHERE rank = 0 AND step = 0");
    EXPECT_EQ(TraceReader(path).actions(1).size(), 8u);  // an empty action is no damage
    EXPECT_FALSE(TraceReader(path).stored_actions(1, 0).empty());
}

// A cell of the wrong type (an edit by hand, another tool's writer) is refused naming the table,
// the column and what it holds: SQLite reads text as 0 and cuts a real, so an action ending at
// 'soon' was read as ending at 0 and then refused as ending before it started.
TEST_F(TraceStoreTest, CellsOfTheWrongTypeAreCorruptionNotZero) {
    const fs::path path = file("wrong_types.db");
    const std::string corrupt = path.string() + ": trace is corrupt: ";
    const auto damaged = [&](const std::string& change) {
        fs::remove(path);
        write_trace_with_actions(path, 8);
        RawDatabase(path).execute(change);
    };
    const auto actions_error = [&] {
        const std::string stored = error_of([&] { TraceReader(path).stored_actions(1, 0); });
        const std::string records = error_of([&] { TraceReader(path).actions(1); });
        EXPECT_EQ(stored, records);
        return records;
    };
    damaged("UPDATE actions SET end_ns = 'soon' WHERE rank = 0 AND step = 0");
    EXPECT_EQ(actions_error(),
              corrupt + "actions.end_ns holds the text 'soon' where an integer belongs");
    damaged("UPDATE actions SET bytes = 1.5 WHERE rank = 0 AND step = 0");
    EXPECT_EQ(actions_error(),
              corrupt + "actions.bytes holds the real number 1.5 where an integer belongs");
    damaged("UPDATE actions SET kind = x'00ff' WHERE rank = 0 AND step = 0");
    EXPECT_EQ(actions_error(),
              corrupt + "actions.kind holds a blob (2 bytes) where an integer belongs");
    damaged("UPDATE runs SET pp = 'two'");
    EXPECT_EQ(error_of([&] { TraceReader(path).run(1); }),
              corrupt + "runs.pp holds the text 'two' where an integer belongs");
    EXPECT_EQ(error_of([&] { TraceReader(path).runs(); }),
              corrupt + "runs.pp holds the text 'two' where an integer belongs");
    // Text SQLite can read as the number it says is that number: the column's affinity stored it
    // as one.
    damaged("UPDATE actions SET end_ns = '10' WHERE rank = 0 AND step = 0");
    EXPECT_EQ(TraceReader(path).actions(1).size(), 8u);
}

TEST_F(TraceStoreTest, UnknownRunsAndEmptyTracesAreErrors) {
    const fs::path path = file("no_runs.db");
    TraceWriter(path).flush();
    TraceReader reader(path);
    EXPECT_TRUE(reader.runs().empty());
    EXPECT_EQ(error_of([&] { reader.latest_run_id(); }), path.string() + ": the trace has no runs");
    EXPECT_EQ(error_of([&] { reader.run(42); }), path.string() + ": no run 42 in this trace");
}

TEST_F(TraceStoreTest, WriterRefusesFilesItCannotAppendTo) {
    const fs::path text = file("notes.txt");
    write_text(text, "hello\n");
    EXPECT_EQ(error_of([&] { TraceWriter writer(text); }),
              text.string() + ": not an SQLite database (it is some other kind of file)");
    EXPECT_EQ(fs::file_size(text), 6u);  // untouched

    const fs::path foreign = file("foreign.db");
    {
        RawDatabase raw(foreign, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
        raw.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY)");
    }
    EXPECT_EQ(error_of([&] { TraceWriter writer(foreign); }),
              foreign.string() + ": not a pipelens trace (no meta table)");
    EXPECT_EQ(RawDatabase(foreign).value("PRAGMA journal_mode"), "delete");  // not switched to WAL

    EXPECT_EQ(error_of([&] { TraceWriter writer(directory_); }),
              directory_.string() + ": is a directory, not a trace file");

    const fs::path nowhere = file("no/such/dir/trace.db");
    EXPECT_EQ(error_of([&] { TraceWriter writer(nowhere); }),
              nowhere.string() + ": cannot create trace: directory " +
                  file("no/such/dir").string() + " does not exist");

    const fs::path under_file = text / "trace.db";
    EXPECT_EQ(
        error_of([&] { TraceWriter writer(under_file); }),
        under_file.string() + ": cannot create trace: " + text.string() + " is not a directory");

    // Even root cannot create files in /proc.
    EXPECT_EQ(error_of([&] { TraceWriter writer("/proc/pipelens_trace.db"); }),
              "/proc/pipelens_trace.db: cannot create trace: unable to open database file (check "
              "that the directory exists and is writable)");

    EXPECT_EQ(error_of([&] { TraceWriter writer(""); }), "no trace file given (the path is empty)");
    EXPECT_EQ(error_of([&] { TraceReader reader(""); }), "no trace file given (the path is empty)");
    EXPECT_EQ(error_of([&] { TraceWriter writer("/dev/null"); }),
              "/dev/null: is not a regular file, so it cannot be a trace");

    EXPECT_EQ(error_of([&] { TraceWriter writer(file("zero.db"), {.batch_rows = 0}); }),
              file("zero.db").string() + ": batch_rows must be at least 1 (got 0)");

    // A run added beside a damaged one could not be read back (readers read every run's header
    // first), so the damage is named before anything is written; run's --out check says the
    // same before the run's work.
    const fs::path damaged = file("damaged.db");
    {
        TraceWriter writer(damaged);
        writer.finish_run(writer.begin_run(RunRecord{}), 1, 0);
    }
    RawDatabase(damaged).execute("UPDATE runs SET pp = 1000000000");
    const std::string refused = damaged.string() + ": trace is corrupt: run 1 has pp = 1000000000";
    EXPECT_EQ(error_of([&] { TraceWriter writer(damaged); }), refused);
    EXPECT_EQ(error_of([&] { check_trace_destination(damaged); }), refused);
    EXPECT_EQ(RawDatabase(damaged).value("SELECT count(*) FROM runs"), "1");
}

}  // namespace
}  // namespace pipelens::traces
