// `run`'s one clock, as a user checks it in the trace: threads and processes of one host placed
// on rank 0's clock exactly, a process whose clock a fault puts off estimated within its stated
// uncertainty, and no RECV ending before its SEND began.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "tests/cli/run_pipelens.hpp"
#include "tests/fresh_trace.hpp"
#include "tests/raw_database.hpp"

namespace pipelens {
namespace {

using pipelens::testing::fresh_trace;
using testing::run_pipelens;

// Pairs of run 1 whose RECV ends before its SEND starts by more than the two ranks' clock
// uncertainties: on one clock there are none.
int receives_before_their_sends(const std::filesystem::path& trace) {
    testing::RawDatabase raw(trace, SQLITE_OPEN_READONLY);
    return std::stoi(raw.value(
        "SELECT count(*) FROM pairs p "
        "JOIN actions s ON s.run_id = p.run_id AND s.rank = p.send_rank AND s.step = p.send_step "
        "JOIN actions r ON r.run_id = p.run_id AND r.rank = p.recv_rank AND r.step = p.recv_step "
        "JOIN ranks sr ON sr.run_id = p.run_id AND sr.rank = p.send_rank "
        "JOIN ranks rr ON rr.run_id = p.run_id AND rr.rank = p.recv_rank "
        "WHERE p.run_id = 1 AND "
        "r.end_ns < s.start_ns - sr.clock_uncertainty_ns - rr.clock_uncertainty_ns"));
}

// Each rank's measured offset to rank 0 and its uncertainty, by rank.
std::vector<std::pair<std::int64_t, std::int64_t>> clock_offsets(
    const std::filesystem::path& trace) {
    testing::RawDatabase raw(trace, SQLITE_OPEN_READONLY);
    std::vector<std::pair<std::int64_t, std::int64_t>> offsets;
    for (const std::string& row : raw.rows("SELECT clock_offset_ns, clock_uncertainty_ns "
                                           "FROM ranks WHERE run_id = 1 ORDER BY rank")) {
        const auto bar = row.find('|');
        offsets.emplace_back(std::stoll(row.substr(0, bar)), std::stoll(row.substr(bar + 1)));
    }
    return offsets;
}

TEST(RunCli, ThreadRanksAreOnOneClock) {
    for (int seed : {1, 2, 3}) {
        SCOPED_TRACE(seed);
        const auto trace = fresh_trace("one_clock_" + std::to_string(seed));
        const auto result =
            run_pipelens("run --schedule Interleaved1F1B --pp 2 --m 4 --model mlp --seed " +
                         std::to_string(seed) + " --out " + trace.string());
        ASSERT_EQ(result.exit_code, 0) << result.err;
        EXPECT_EQ(receives_before_their_sends(trace), 0);
        const auto offsets = clock_offsets(trace);
        ASSERT_EQ(offsets.size(), 2u);
        EXPECT_EQ(offsets[0], std::make_pair(std::int64_t{0}, std::int64_t{0}));
        // Threads share the clock: the offset is known to be 0, not estimated.
        EXPECT_EQ(offsets[1], std::make_pair(std::int64_t{0}, std::int64_t{0}));
    }
    // A clock fault between threads is known too: rank 0's clock minus rank 1's, exactly.
    const auto trace = fresh_trace("one_clock_skewed");
    const auto skewed = run_pipelens(
        "run --schedule 1F1B --pp 2 --m 4 --model mlp --fault rank1=clock:+5ms --out " +
        trace.string());
    ASSERT_EQ(skewed.exit_code, 0) << skewed.err;
    EXPECT_EQ(receives_before_their_sends(trace), 0);
    EXPECT_EQ(clock_offsets(trace)[1], std::make_pair(std::int64_t{-5'000'000}, std::int64_t{0}));
}

TEST(RunCliGloo, ASkewedClockIsRecoveredAndEveryReceiveEndsAfterItsSend) {
    PIPELENS_SKIP_WITHOUT_GLOO();
    // Processes on one host share their clock, so rank 1's is put 5 ms ahead on purpose: a
    // clock fault stands for another host's clock, whose offset is estimated.
    const auto trace = fresh_trace("skewed_clock");
    const auto result = run_pipelens(
        "run --schedule 1F1B --pp 3 --m 4 --batch 12 --model mlp --transport gloo --nproc 3 "
        "--fault rank1=clock:+5ms --out " +
        trace.string());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(receives_before_their_sends(trace), 0);
    const auto offsets = clock_offsets(trace);
    ASSERT_EQ(offsets.size(), 3u);
    EXPECT_EQ(offsets[0], std::make_pair(std::int64_t{0}, std::int64_t{0}));
    // Rank 0's clock minus rank 1's is -5 ms, within the stated uncertainty, and that
    // uncertainty is well below the skew (a loopback round trip is tens of microseconds).
    EXPECT_LE(std::abs(offsets[1].first + 5'000'000), offsets[1].second) << offsets[1].first;
    EXPECT_LT(offsets[1].second, 2'500'000);
    EXPECT_GT(offsets[1].second, 0);  // estimated, not read
    // Rank 2 reads rank 0's clock unskewed: it is placed by that clock, exactly.
    EXPECT_EQ(offsets[2], std::make_pair(std::int64_t{0}, std::int64_t{0}));
    const auto summary = run_pipelens("summary " + trace.string());
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    // The estimate says how surely it was made (its value is checked above, within that); the
    // read offset has no ±.
    const std::regex clocks(
        "clocks \\(rank 0's minus each rank's\\): rank 1 -[0-9]+\\.[0-9]{3} ms "
        "± [0-9.]+ [mu]?s, rank 2 0 ns\n");
    EXPECT_TRUE(std::regex_search(summary.out, clocks)) << summary.out;
}

}  // namespace
}  // namespace pipelens
