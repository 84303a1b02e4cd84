// TraceWriter against the best raw SQLite can do, on the same 1 M action rows, plus TraceReader
// reading them back.
//
// Raw SQLite gets every advantage TraceWriter cannot have: the same schema (the same embedded
// text, so the same indexes), the same pragmas and batch size, one prepared INSERT, integers
// only. TraceWriter must reach 80% of its rows/s. Each iteration writes
// a fresh file (open, schema, rows, close with its checkpoint) in a temporary directory. Each is
// timed on its own, then both in alternation (BM_TraceWriterVersusRawSqlite), whose ratio is the
// verdict printed last.
//
//   pipelens_bench_trace_writer [--benchmark_filter=...]
#include <benchmark/benchmark.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "traces/schema.hpp"
#include "traces/trace_reader.hpp"
#include "traces/trace_writer.hpp"

namespace {

namespace fs = std::filesystem;
using namespace pipelens::traces;

constexpr int kRows = 1'000'000;
constexpr int kRanks = 8;
constexpr int kBatchRows = TraceWriterOptions{}.batch_rows;

// Representative rows, rank by rank in program order as the simulator emits them: 50 kinds of
// action (F, B, W, SEND_F, RECV_B of two stages and five microbatches), durations of 1-100 us
// with small gaps, transfer sizes and pair ids on the communication lane.
struct Workload {
    std::vector<ActionRecord> actions;

    Workload() {
        const int kind_values[] = {0, 3, 2, 4, 7};
        const int kLabels = 50;
        std::mt19937_64 generator(2024);
        std::uniform_int_distribution<int> pick_label(0, kLabels - 1);
        std::uniform_int_distribution<std::int64_t> duration(1'000, 100'000);
        std::uniform_int_distribution<std::int64_t> gap(0, 200);
        actions.reserve(kRows);
        int pair_id = 0;
        for (int rank = 0; rank < kRanks; ++rank) {
            std::int64_t clock = 0;
            for (int step = 0; step < kRows / kRanks; ++step) {
                int label = pick_label(generator);
                int kind = (label / 5) % 5;
                bool communication = kind >= 3;
                ActionRecord action;
                action.rank = rank;
                action.step = step;
                action.lane = communication ? ActionLane::communication : ActionLane::compute;
                action.kind = static_cast<std::uint8_t>(kind_values[kind]);
                action.stage = rank * 2 + label / 25;
                action.microbatch = label % 5;
                action.start_ns = clock + gap(generator);
                action.end_ns = action.start_ns + duration(generator);
                action.bytes = communication ? 16 << 20 : 0;
                action.pair_id = communication ? pair_id++ : -1;
                clock = action.end_ns;
                actions.push_back(action);
            }
        }
    }
};

const Workload& workload() {
    static const Workload instance;
    return instance;
}

RunRecord bench_run() {
    RunRecord run;
    run.schedule = "Interleaved1F1B";
    run.pp = kRanks;
    run.v = 2;
    run.m = 5;
    run.config = "{}";
    return run;
}

// A temporary directory for the whole process, removed at exit.
class ScratchDirectory {
  public:
    ScratchDirectory() {
        std::string pattern = (fs::temp_directory_path() / "pipelens_bench_XXXXXX").string();
        if (mkdtemp(pattern.data()) == nullptr)
            std::abort();
        path_ = pattern;
    }
    ~ScratchDirectory() {
        std::error_code ignored;
        fs::remove_all(path_, ignored);
    }
    // A path with no file (nor WAL) behind it.
    fs::path fresh(const std::string& name) const {
        fs::path file = path_ / name;
        for (const char* suffix : {"", "-wal", "-shm"})
            fs::remove(file.string() + suffix);
        return file;
    }

  private:
    fs::path path_;
};

const ScratchDirectory& scratch() {
    static const ScratchDirectory instance;
    return instance;
}

void check(int code, int expected, sqlite3* connection, const char* what) {
    if (code != expected) {
        std::fprintf(stderr, "raw sqlite: %s: %s\n", what, sqlite3_errmsg(connection));
        std::abort();
    }
}

void execute(sqlite3* connection, const std::string& sql) {
    check(sqlite3_exec(connection, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK, connection,
          sql.c_str());
}

// (a) The trace store as the simulator uses it.
void write_with_trace_writer(const fs::path& path, const Workload& rows) {
    TraceWriter writer(path);
    std::int64_t run_id = writer.begin_run(bench_run());
    for (const ActionRecord& action : rows.actions)
        writer.add_action(run_id, action);
    writer.finish_run(run_id, rows.actions.back().end_ns, 0.1);
}

// (b) The best raw SQLite can do with the same file layout and settings.
void write_with_raw_sqlite(const fs::path& path, const Workload& rows) {
    sqlite3* connection = nullptr;
    check(
        sqlite3_open_v2(path.c_str(), &connection,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr),
        SQLITE_OK, connection, "open");
    // TraceWriter's settings for a new file (traces/trace_writer.cpp).
    execute(connection,
            "PRAGMA page_size = 16384; "
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; "
            "PRAGMA temp_store = MEMORY; PRAGMA cache_size = -32768; "
            "PRAGMA foreign_keys = OFF;");
    execute(connection, "BEGIN IMMEDIATE");
    execute(connection, std::string(schema_sql()));
    execute(connection,
            "INSERT INTO runs (kind, schedule, pp, v, m, config, status, started_at_ns) "
            "VALUES ('sim', 'Interleaved1F1B', 8, 2, 5, '{}', 'running', 0)");
    execute(connection, "COMMIT");
    const std::int64_t run_id = sqlite3_last_insert_rowid(connection);

    sqlite3_stmt* insert = nullptr;
    const char* sql =
        "INSERT INTO actions (run_id, rank, step, lane, kind, stage, microbatch, start_ns, "
        "end_ns, bytes, pair_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    check(sqlite3_prepare_v3(connection, sql, -1, SQLITE_PREPARE_PERSISTENT, &insert, nullptr),
          SQLITE_OK, connection, "prepare");
    execute(connection, "BEGIN IMMEDIATE");
    int pending = 0;
    for (std::size_t index = 0; index < rows.actions.size(); ++index) {
        const ActionRecord& action = rows.actions[index];
        sqlite3_bind_int64(insert, 1, run_id);
        sqlite3_bind_int(insert, 2, action.rank);
        sqlite3_bind_int(insert, 3, action.step);
        sqlite3_bind_int(insert, 4, static_cast<int>(action.lane));
        sqlite3_bind_int(insert, 5, action.kind);
        sqlite3_bind_int(insert, 6, action.stage);
        sqlite3_bind_int(insert, 7, action.microbatch);
        sqlite3_bind_int64(insert, 8, action.start_ns);
        sqlite3_bind_int64(insert, 9, action.end_ns);
        sqlite3_bind_int64(insert, 10, action.bytes);
        sqlite3_bind_int(insert, 11, action.pair_id);
        check(sqlite3_step(insert), SQLITE_DONE, connection, "insert");
        sqlite3_reset(insert);
        if (++pending == kBatchRows) {
            execute(connection, "COMMIT; BEGIN IMMEDIATE");
            pending = 0;
        }
    }
    execute(connection, "UPDATE runs SET status = 'finished' WHERE id = 1; COMMIT");
    sqlite3_finalize(insert);
    check(sqlite3_close(connection), SQLITE_OK, connection, "close");
}

void BM_TraceWriterAddAction(benchmark::State& state) {
    for (auto _ : state) {
        state.PauseTiming();
        fs::path path = scratch().fresh("writer.db");
        state.ResumeTiming();
        write_with_trace_writer(path, workload());
    }
    state.SetItemsProcessed(state.iterations() * kRows);
}

void BM_RawSqliteInsert(benchmark::State& state) {
    for (auto _ : state) {
        state.PauseTiming();
        fs::path path = scratch().fresh("raw.db");
        state.ResumeTiming();
        write_with_raw_sqlite(path, workload());
    }
    state.SetItemsProcessed(state.iterations() * kRows);
}

// The two in alternating order within each iteration, so a slower patch of the machine (disk
// flushes, a neighbour's build) weighs on both alike: this is the ratio to trust.
void BM_TraceWriterVersusRawSqlite(benchmark::State& state) {
    using Clock = std::chrono::steady_clock;
    double writer_seconds = 0;
    double raw_seconds = 0;
    bool writer_first = true;
    for (auto _ : state) {
        double seconds[2] = {0, 0};  // writer, raw
        for (int turn = 0; turn < 2; ++turn) {
            bool writer_turn = (turn == 0) == writer_first;
            fs::path path = scratch().fresh(writer_turn ? "writer.db" : "raw.db");
            auto start = Clock::now();
            if (writer_turn)
                write_with_trace_writer(path, workload());
            else
                write_with_raw_sqlite(path, workload());
            seconds[writer_turn ? 0 : 1] =
                std::chrono::duration<double>(Clock::now() - start).count();
        }
        writer_seconds += seconds[0];
        raw_seconds += seconds[1];
        writer_first = !writer_first;
        state.SetIterationTime(seconds[0] + seconds[1]);
    }
    const double rows = static_cast<double>(state.iterations()) * kRows;
    state.counters["writer_rows_per_s"] = rows / writer_seconds;
    state.counters["raw_rows_per_s"] = rows / raw_seconds;
    state.counters["writer_percent_of_raw"] = 100.0 * raw_seconds / writer_seconds;
}

// The 1 M-row trace the read benchmarks share, written once.
const fs::path& written_trace() {
    static const fs::path path = [] {
        fs::path file = scratch().fresh("read.db");
        TraceWriter writer(file);
        std::int64_t run_id = writer.begin_run(bench_run());
        for (const ActionRecord& action : workload().actions)
            writer.add_action(run_id, action);
        writer.finish_run(run_id, workload().actions.back().end_ns, 0.1);
        return file;
    }();
    return path;
}

void BM_TraceReaderActions(benchmark::State& state) {
    TraceReader reader(written_trace());
    for (auto _ : state) {
        std::vector<ActionRecord> actions = reader.actions(1);
        if (actions.size() != static_cast<std::size_t>(kRows))
            state.SkipWithError("wrong number of actions read back");
        benchmark::DoNotOptimize(actions.data());
    }
    state.SetItemsProcessed(state.iterations() * kRows);
}

// Opening includes the integrity check (PRAGMA quick_check) over the whole file.
void BM_TraceReaderOpen(benchmark::State& state) {
    const fs::path& path = written_trace();
    for (auto _ : state) {
        TraceReader reader(path);
        benchmark::DoNotOptimize(reader.schema_version());
    }
}

// A 1 ms window at the end of the last rank's timeline: the worst case of the window query,
// which scans the rank's index entries up to the window (see TraceReader::actions).
void BM_TraceReaderWindowAtEnd(benchmark::State& state) {
    TraceReader reader(written_trace());
    const std::int64_t end = workload().actions.back().end_ns;
    std::size_t found = 0;
    for (auto _ : state)
        found = reader.actions(1, kRanks - 1, end - 1'000'000, end).size();
    state.counters["actions_in_window"] = static_cast<double>(found);
}

BENCHMARK(BM_TraceWriterAddAction)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK(BM_RawSqliteInsert)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK(BM_TraceWriterVersusRawSqlite)
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime()
    ->Iterations(4);
BENCHMARK(BM_TraceReaderActions)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(4);
BENCHMARK(BM_TraceReaderOpen)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(4);
BENCHMARK(BM_TraceReaderWindowAtEnd)->Unit(benchmark::kMicrosecond)->UseRealTime();

// The console reporter, also keeping the paired benchmark's figures to print the verdict last.
class RatioReporter : public benchmark::ConsoleReporter {
  public:
    void ReportRuns(const std::vector<Run>& runs) override {
        ConsoleReporter::ReportRuns(runs);
        for (const Run& run : runs) {
            if (run.run_name.function_name != "BM_TraceWriterVersusRawSqlite" ||
                run.run_type != Run::RT_Iteration)
                continue;
            writer_ = run.counters.at("writer_rows_per_s").value;
            raw_ = run.counters.at("raw_rows_per_s").value;
            percent_ = run.counters.at("writer_percent_of_raw").value;
        }
    }
    void print_verdict() const {
        if (percent_ == 0)
            return;
        std::printf(
            "TraceWriter %.0f rows/s, raw SQLite %.0f rows/s (paired): TraceWriter at %.1f%% of "
            "raw, needs 80%%: %s\n",
            writer_, raw_, percent_, percent_ >= 80 ? "ok" : "TOO SLOW");
    }

  private:
    double writer_ = 0;
    double raw_ = 0;
    double percent_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    workload();  // built before any timing
    RatioReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    reporter.print_verdict();
    benchmark::Shutdown();
    return 0;
}
