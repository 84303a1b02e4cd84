// `pipelens run`'s memory account as a user reads it from the trace: each rank's tensor bytes,
// a GPipe rank's activations growing with its forwards, and what the gloo transport holds beyond
// the same run on threads (sent copies in flight, posted landing buffers).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/cli/run_pipelens.hpp"
#include "tests/fresh_trace.hpp"
#include "tests/raw_database.hpp"

namespace pipelens {
namespace {

using pipelens::testing::fresh_trace;

using testing::run_pipelens;

// Peak tensor bytes per rank of run 1, by rank.
std::vector<std::int64_t> peak_memory(const std::filesystem::path& trace) {
    testing::RawDatabase raw(trace, SQLITE_OPEN_READONLY);
    std::vector<std::int64_t> peaks;
    for (const std::string& row :
         raw.rows("SELECT peak_memory_bytes FROM ranks WHERE run_id = 1 ORDER BY rank"))
        peaks.push_back(std::stoll(row));
    return peaks;
}

// An MLP layer keeps two [microbatch, hidden] float tensors per microbatch from F to B: its
// ReLU's result (saved by ReLU and by the second Linear) and its output (the next layer's saved
// input, or the stage's output kept as backward's root).
constexpr std::int64_t kHidden = 32;
constexpr std::int64_t kMicrobatchRows = 1024 / 8;
constexpr std::int64_t kHeldPerLayer = 2 * kMicrobatchRows * kHidden * 4;

TEST(RunCli, EachRankRecordsTheTensorBytesItHolds) {
    PIPELENS_SKIP_WITHOUT_GLOO();
    for (const std::string transport : {"", " --transport gloo --nproc 4"}) {
        SCOPED_TRACE(transport);
        const auto trace = fresh_trace("memory_1f1b");
        // Four layers per stage: rank r of 1F1B holds pp - r microbatches at its peak.
        const auto result = run_pipelens(
            "run --schedule 1F1B --pp 4 --m 8 --model mlp --layers 16 --hidden 32 --batch 1024 "
            "--no-reference --out " +
            trace.string() + transport);
        ASSERT_EQ(result.exit_code, 0) << result.err;
        const std::vector<std::int64_t> peaks = peak_memory(trace);
        ASSERT_EQ(peaks.size(), 4u);
        EXPECT_GE(peaks[0], 4 * 4 * kHeldPerLayer);
        EXPECT_LT(peaks[3], peaks[0]);
        // On threads a sent copy lives until the receiver copies it; gloo keeps its copy until
        // gloo has sent it (gloo_transport.cpp), which the sender is charged for while it is
        // in flight, so only the activations order the ranks strictly there.
        if (transport.empty()) {
            for (int rank = 1; rank < 4; ++rank)
                EXPECT_LT(peaks[rank], peaks[rank - 1]) << "rank " << rank;
        }
        testing::RawDatabase raw(trace, SQLITE_OPEN_READONLY);
        EXPECT_EQ(raw.value("SELECT count(DISTINCT rank) FROM memory WHERE run_id = 1"), "4");
        EXPECT_EQ(raw.value("SELECT count(*) FROM ranks r WHERE run_id = 1 AND "
                            "peak_memory_bytes != (SELECT max(bytes) FROM memory m "
                            "WHERE m.run_id = 1 AND m.rank = r.rank)"),
                  "0");
    }
}

// Each rank's peak over gloo less its peak on threads, for `run` (ending in "--out "), the
// traces named after `name`.
std::vector<std::int64_t> gloo_peaks_over_threads(const std::string& run, const std::string& name) {
    const auto local_trace = fresh_trace(name + "_local");
    const auto local = run_pipelens(run + local_trace.string());
    EXPECT_EQ(local.exit_code, 0) << local.err;
    const auto gloo_trace = fresh_trace(name + "_gloo");
    const auto gloo = run_pipelens(run + gloo_trace.string() + " --transport gloo --nproc 2");
    EXPECT_EQ(gloo.exit_code, 0) << gloo.err;
    const std::vector<std::int64_t> on_threads = peak_memory(local_trace);
    const std::vector<std::int64_t> over_gloo = peak_memory(gloo_trace);
    EXPECT_EQ(on_threads.size(), over_gloo.size());
    std::vector<std::int64_t> extra;
    for (std::size_t rank = 0; rank < std::min(on_threads.size(), over_gloo.size()); ++rank)
        extra.push_back(over_gloo[rank] - on_threads[rank]);
    return extra;
}

// Gloo sends a copy of each message; it is dropped once gloo has sent it, as PyTorch's isend
// holds its tensor, not at the step's end (which charged every rank all its step's messages:
// 16 here, about 300 KB over `local`, which the memory model does not count). A few may still
// be in flight at a rank's peak (two at most when measured, loaded or not; the bound allows ten).
TEST(RunCli, GlooHoldsASentMessageOnlyWhileItIsInFlight) {
    PIPELENS_SKIP_WITHOUT_GLOO();
    const std::vector<std::int64_t> extra = gloo_peaks_over_threads(
        "run --schedule 1F1B --pp 2 --m 16 --model mlp --layers 8 --hidden 32 --batch 2048 "
        "--no-reference --out ",
        "memory_sends");
    constexpr std::int64_t kMessageBytes = 2048 / 16 * kHidden * 4;  // one microbatch's output
    ASSERT_EQ(extra.size(), 2u);
    for (std::size_t rank = 0; rank < 2; ++rank)
        EXPECT_LT(extra[rank], 10 * (kMessageBytes + 1024)) << "rank " << rank;
}

// A posted gloo receive holds a landing buffer until its data is taken: as large as the message
// the receiving stage expects (here 32 rows x 8 floats, 1 KiB), not gloo's largest inline
// message (64 KiB), which on a small model outweighed what the stage itself held. How many
// messages are in flight or posted at a rank's peak depends on how the two processes were
// scheduled, so the messages are kept small: even all of a step's messages both ways at once
// (2 x m x (1 KiB + a 272-byte header), about 21 KiB) stay below the bound, which one landing
// buffer of 64 KiB alone exceeds. The exact bytes a posting holds are transport_test's.
TEST(RunCli, GlooPostsAReceiveOnlyAsLargeAsItsMessage) {
    PIPELENS_SKIP_WITHOUT_GLOO();
    const std::vector<std::int64_t> extra = gloo_peaks_over_threads(
        "run --schedule 1F1B --pp 2 --m 8 --model mlp --layers 4 --hidden 8 --batch 256 "
        "--no-reference --out ",
        "memory_posted");
    constexpr std::int64_t kLargestInlineBytes = 64 * 1024;
    ASSERT_EQ(extra.size(), 2u);
    for (std::size_t rank = 0; rank < 2; ++rank)
        EXPECT_LT(extra[rank], kLargestInlineBytes / 2) << "rank " << rank;
}

TEST(RunCli, GPipeRankZeroHoldsEveryForwardsActivationsUntilItsBackwards) {
    const auto trace = fresh_trace("memory_gpipe");
    const auto result = run_pipelens(
        "run --schedule GPipe --pp 2 --m 8 --model mlp --layers 8 --hidden 32 --batch 1024 "
        "--no-reference --out " +
        trace.string());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    testing::RawDatabase raw(trace, SQLITE_OPEN_READONLY);
    // Rank 0's bytes at the end of each of its forwards (the last sample at that moment). Four
    // layers per stage; the only other tensors it can hold then are outputs it sent and rank 1
    // has not yet copied, one per earlier microbatch at most.
    const std::vector<std::string> held = raw.rows(
        "SELECT (SELECT bytes FROM memory m WHERE m.run_id = 1 AND m.rank = 0 AND "
        "m.time_ns = a.end_ns ORDER BY m.rowid DESC LIMIT 1) FROM actions a "
        "WHERE a.run_id = 1 AND a.rank = 0 AND a.kind = 0 ORDER BY a.start_ns");
    ASSERT_EQ(held.size(), 8u);
    for (std::int64_t microbatch = 0; microbatch < 8; ++microbatch) {
        const std::int64_t bytes = std::stoll(held[microbatch]);
        const std::int64_t activations = (microbatch + 1) * 4 * kHeldPerLayer;
        EXPECT_GE(bytes, activations) << "after F" << microbatch;
        EXPECT_LE(bytes, activations + microbatch * kHeldPerLayer / 2) << "after F" << microbatch;
    }
}

}  // namespace
}  // namespace pipelens
