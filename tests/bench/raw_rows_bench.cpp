// The yardstick for trace writing: the best raw SQLite can do with the rows of a run that
// pipelens already wrote. Reads run RUN of TRACE (its actions, OVERLAP_F_B parts, pairs and
// memory samples), then times writing exactly those rows into a fresh file with the same schema
// (the same embedded text, so the same keys and indexes), the same pragmas and batch size, one
// prepared INSERT per table and integers only. Prints one line of figures; used by
// scripts/bench_trace_write.sh, which times `pipelens simulate --out` against it.
//
//   pipelens_bench_raw_rows TRACE.db RUN OUT.db
#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "traces/schema.hpp"
#include "traces/trace_reader.hpp"
#include "traces/trace_writer.hpp"

namespace {

using namespace pipelens::traces;

void check(int code, int expected, sqlite3* connection, const char* doing) {
    if (code != expected) {
        std::fprintf(stderr, "raw sqlite: %s: %s\n", doing, sqlite3_errmsg(connection));
        std::exit(1);
    }
}

void execute(sqlite3* connection, const std::string& sql) {
    check(sqlite3_exec(connection, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK, connection,
          sql.c_str());
}

// One prepared INSERT, committed every `batch_rows` rows as TraceWriter does.
class Inserter {
  public:
    Inserter(sqlite3* connection, const char* sql, int& pending)
        : connection_(connection), pending_(pending) {
        check(sqlite3_prepare_v3(connection, sql, -1, SQLITE_PREPARE_PERSISTENT, &statement_,
                                 nullptr),
              SQLITE_OK, connection, "prepare");
    }
    ~Inserter() { sqlite3_finalize(statement_); }
    sqlite3_stmt* get() const { return statement_; }
    void step() {
        check(sqlite3_step(statement_), SQLITE_DONE, connection_, "insert");
        sqlite3_reset(statement_);
        if (++pending_ == TraceWriterOptions{}.batch_rows) {
            execute(connection_, "COMMIT; BEGIN IMMEDIATE");
            pending_ = 0;
        }
    }

  private:
    sqlite3* connection_;
    sqlite3_stmt* statement_ = nullptr;
    int& pending_;
};

struct Rows {
    std::vector<ActionRecord> actions;
    std::vector<PairRecord> pairs;
    std::vector<MemoryRecord> memory;
};

void write_raw(const std::filesystem::path& path, const Rows& rows) {
    sqlite3* connection = nullptr;
    check(
        sqlite3_open_v2(path.c_str(), &connection,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr),
        SQLITE_OK, connection, "open");
    execute(connection,  // TraceWriter's settings for a new file (traces/trace_writer.cpp)
            "PRAGMA page_size = 16384; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; "
            "PRAGMA temp_store = MEMORY; PRAGMA cache_size = -32768; PRAGMA foreign_keys = OFF;");
    execute(connection, "BEGIN IMMEDIATE");
    execute(connection, std::string(schema_sql()));
    execute(connection,
            "INSERT INTO runs (kind, schedule, pp, v, m, config, status, started_at_ns) "
            "VALUES ('sim', 'x', 1, 1, 1, '', 'running', 0)");
    int pending = 0;
    {
        Inserter action(connection,
                        "INSERT INTO actions (run_id, rank, step, lane, kind, stage, microbatch, "
                        "start_ns, end_ns, bytes, pair_id) VALUES (1,?,?,?,?,?,?,?,?,?,?)",
                        pending);
        Inserter part(connection,
                      "INSERT INTO action_parts (run_id, rank, step, part, kind, stage, "
                      "microbatch) VALUES (1,?,?,?,?,?,?)",
                      pending);
        for (const ActionRecord& row : rows.actions) {
            sqlite3_stmt* s = action.get();
            sqlite3_bind_int(s, 1, row.rank);
            sqlite3_bind_int(s, 2, row.step);
            sqlite3_bind_int(s, 3, static_cast<int>(row.lane));
            sqlite3_bind_int(s, 4, row.kind);
            sqlite3_bind_int(s, 5, row.stage);
            sqlite3_bind_int(s, 6, row.microbatch);
            sqlite3_bind_int64(s, 7, row.start_ns);
            sqlite3_bind_int64(s, 8, row.end_ns);
            sqlite3_bind_int64(s, 9, row.bytes);
            sqlite3_bind_int(s, 10, row.pair_id);
            action.step();
            for (std::size_t index = 0; index < row.parts.size(); ++index) {
                sqlite3_stmt* p = part.get();
                sqlite3_bind_int(p, 1, row.rank);
                sqlite3_bind_int(p, 2, row.step);
                sqlite3_bind_int(p, 3, static_cast<int>(index));
                sqlite3_bind_int(p, 4, row.parts[index].kind);
                sqlite3_bind_int(p, 5, row.parts[index].stage);
                sqlite3_bind_int(p, 6, row.parts[index].microbatch);
                part.step();
            }
        }
        Inserter pair(connection,
                      "INSERT INTO pairs (run_id, pair_id, send_rank, send_step, recv_rank, "
                      "recv_step, bytes) VALUES (1,?,?,?,?,?,?)",
                      pending);
        for (const PairRecord& row : rows.pairs) {
            sqlite3_stmt* s = pair.get();
            sqlite3_bind_int(s, 1, row.pair_id);
            sqlite3_bind_int(s, 2, row.send_rank);
            sqlite3_bind_int(s, 3, row.send_step);
            sqlite3_bind_int(s, 4, row.recv_rank);
            sqlite3_bind_int(s, 5, row.recv_step);
            sqlite3_bind_int64(s, 6, row.bytes);
            pair.step();
        }
        Inserter memory(connection,
                        "INSERT INTO memory (run_id, rank, time_ns, bytes) VALUES (1,?,?,?)",
                        pending);
        for (const MemoryRecord& row : rows.memory) {
            sqlite3_bind_int(memory.get(), 1, row.rank);
            sqlite3_bind_int64(memory.get(), 2, row.time_ns);
            sqlite3_bind_int64(memory.get(), 3, row.bytes);
            memory.step();
        }
    }
    execute(connection, "UPDATE runs SET status = 'finished' WHERE id = 1; COMMIT");
    execute(connection, "PRAGMA journal_mode = DELETE");  // as TraceWriter's close does
    check(sqlite3_close(connection), SQLITE_OK, connection, "close");
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s TRACE.db RUN OUT.db\n", argv[0]);
        return 2;
    }
    Rows rows;
    {
        TraceReaderOptions options;
        options.check_integrity = false;
        const TraceReader reader(argv[1], options);
        const std::int64_t run = std::atoll(argv[2]);
        rows.actions = reader.actions(run);
        rows.pairs = reader.pairs(run);
        rows.memory = reader.memory(run);
    }
    std::filesystem::remove(argv[3]);
    const auto start = std::chrono::steady_clock::now();
    write_raw(argv[3], rows);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::size_t total = rows.actions.size() + rows.pairs.size() + rows.memory.size();
    std::printf("raw_seconds=%.3f actions=%zu rows=%zu rows_per_s=%.0f\n", seconds,
                rows.actions.size(), total, total / seconds);
    return 0;
}
