// Fuzz target: opening a trace file. The input's bytes are written to a file of this process's
// own, which TraceReader opens; then the runs and a few rows of each are read, as `summary`,
// `export` and the viewer do.
// Invariants: a damaged or foreign file is refused with traces::TraceError (naming the file),
// never another exception or a crash; nothing is written to the file (the reader is read-only).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/fresh_trace.hpp"
#include "traces/trace_reader.hpp"

namespace {

namespace traces = pipelens::traces;

void read_some(const traces::TraceReader& reader) {
    (void)reader.schema_version();
    (void)reader.strings();
    int runs_read = 0;
    for (const traces::RunRecord& run : reader.runs()) {
        if (++runs_read > 3)
            break;
        (void)reader.ranks(run.id);
        (void)reader.action_count(run.id);
        (void)reader.actions(run.id, 0, 0, 1'000'000);
        const int rank_limit = reader.action_rank_limit(run.id);
        if (rank_limit > 0)
            (void)reader.stored_actions(run.id, rank_limit - 1);
        (void)reader.pairs(run.id);
        (void)reader.memory(run.id, 0);
        (void)reader.events(run.id);
        (void)reader.errors(run.id);
        (void)reader.sharding(run.id);
        (void)reader.state_snapshots(run.id);
    }
    if (runs_read > 0)
        (void)reader.run(reader.latest_run_id());
}

std::filesystem::path own_file() {
    return pipelens::testing::process_temp_path("fuzz_trace.db");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::filesystem::path path = own_file();
    {
        std::ofstream file(path, std::ios::binary | std::ios::trunc);
        file.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    }
    try {
        const traces::TraceReader reader(path);
        read_some(reader);
    } catch (const traces::TraceError&) {
    }
    std::error_code ignored;
    std::filesystem::remove(path.string() + "-wal", ignored);
    std::filesystem::remove(path.string() + "-shm", ignored);
    return 0;
}
