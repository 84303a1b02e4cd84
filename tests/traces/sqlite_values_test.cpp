// The traces' SQLite plumbing on an in-memory database: values bound and read back by their C++
// type (bind_values, read_columns), step_once's one-line error, and the writer's string
// interner handing out the ids the `strings` table holds.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>

#include "traces/sqlite_handle.hpp"
#include "traces/string_interner.hpp"
#include "traces/trace_records.hpp"

namespace pipelens::traces::detail {
namespace {

Connection memory_database() {
    return open_connection(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, "cannot open");
}

struct Row {
    std::int32_t small = 0;
    std::uint8_t kind = 0;
    ActionLane lane = ActionLane::compute;
    std::int64_t wide = 0;
    double ratio = 0;
    std::string text;
    std::optional<std::int64_t> present;
    std::optional<std::int64_t> absent;
    std::optional<double> maybe_ratio;
};

TEST(SqliteValues, BindAndReadEveryColumnByItsType) {
    const Connection db = memory_database();
    execute(db.get(), "memory", "CREATE TABLE t (a, b, c, d, e, f, g, h, i)", "cannot create");
    const Statement insert =
        prepare(db.get(), "memory", "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", "prepare");
    const std::optional<std::int64_t> none;
    bind_values(insert.get(), 1, std::int32_t{-7}, std::uint8_t{200}, ActionLane::communication,
                std::int64_t{1} << 40, 0.25, std::string("label"), std::optional<std::int64_t>(-3),
                none, 1.5);
    step_once(insert.get(), "memory", [] { return std::string("cannot insert"); });

    const Statement select =
        prepare(db.get(), "memory", "SELECT a, b, c, d, e, f, g, h, i, typeof(h) FROM t", "select");
    ASSERT_EQ(sqlite3_step(select.get()), SQLITE_ROW);
    Row row;
    read_columns(select.get(), 0, row.small, row.kind, row.lane, row.wide, row.ratio, row.text,
                 row.present, row.absent, row.maybe_ratio);
    EXPECT_EQ(row.small, -7);
    EXPECT_EQ(row.kind, 200);
    EXPECT_EQ(row.lane, ActionLane::communication);
    EXPECT_EQ(row.wide, std::int64_t{1} << 40);
    EXPECT_EQ(row.ratio, 0.25);
    EXPECT_EQ(row.text, "label");
    EXPECT_EQ(row.present, std::optional<std::int64_t>(-3));
    EXPECT_EQ(row.absent, std::nullopt);
    EXPECT_EQ(row.maybe_ratio, std::optional<double>(1.5));
    EXPECT_EQ(column_text(select.get(), 9), "null");  // an empty optional is stored as NULL
}

TEST(SqliteValues, ReadColumnsStartsAtTheGivenColumn) {
    const Connection db = memory_database();
    const Statement select = prepare(db.get(), "memory", "SELECT 1, 2, 'three'", "select");
    ASSERT_EQ(sqlite3_step(select.get()), SQLITE_ROW);
    int second = 0;
    std::string third;
    read_columns(select.get(), 1, second, third);
    EXPECT_EQ(second, 2);
    EXPECT_EQ(third, "three");
}

TEST(SqliteValues, StepOnceNamesTheFileWhatFailedAndWhy) {
    const Connection db = memory_database();
    execute(db.get(), "memory", "CREATE TABLE t (id INTEGER PRIMARY KEY)", "cannot create");
    const Statement insert = prepare(db.get(), "memory", "INSERT INTO t VALUES (1)", "prepare");
    step_once(insert.get(), "trace.db", [] { return std::string("cannot add row 1"); });
    try {
        step_once(insert.get(), "trace.db", [] { return std::string("cannot add row 1"); });
        FAIL() << "a second row with the same key was added";
    } catch (const TraceError& error) {
        EXPECT_EQ(std::string(error.what()),
                  "trace.db: cannot add row 1: UNIQUE constraint failed: t.id");
    }
}

TEST(StringInterner, GivesTheIdsTheStringsTableHolds) {
    const Connection db = memory_database();
    execute(db.get(), "memory",
            "CREATE TABLE strings (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE);"
            "INSERT INTO strings (id, text) VALUES (5, 'known');",
            "cannot create");
    const std::filesystem::path path = "memory";
    StringInterner strings;
    strings.attach(db.get(), path);
    strings.load();
    strings.prepare();
    EXPECT_EQ(strings.intern("known"), 5);
    const std::int64_t fresh = strings.intern("fresh");
    EXPECT_EQ(fresh, 6);
    EXPECT_EQ(strings.intern("fresh"), 6);
    EXPECT_EQ(strings.intern("known"), 5);

    // Added behind the mirror's back (as a second writer could): read back, not duplicated.
    execute(db.get(), "memory", "INSERT INTO strings (id, text) VALUES (9, 'other')", "insert");
    EXPECT_EQ(strings.intern("other"), 9);

    strings.load();
    EXPECT_EQ(strings.intern("fresh"), 6);
    const Statement count = prepare(db.get(), "memory", "SELECT count(*) FROM strings", "count");
    ASSERT_EQ(sqlite3_step(count.get()), SQLITE_ROW);
    EXPECT_EQ(sqlite3_column_int(count.get(), 0), 3);
}

}  // namespace
}  // namespace pipelens::traces::detail
