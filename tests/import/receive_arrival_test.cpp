// When a receive's data arrived (engine/import/receive_arrival.hpp): the rule on spans made up
// here, and its effect on the multi-stage traces PyTorch 2.11 wrote on one host over Gloo
// (tests/data/pytorch/profiler/Interleaved1F1B_pp{2,4}_*_cpu), whose ranks share one clock: with
// each RECV ending at its `gloo:recv` span, every send/recv pair agrees with the files' own
// timestamps, and the pairs bound each rank's clock offset to well under a millisecond around 0.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "engine/import/imported_run.hpp"
#include "engine/import/pytorch_profiler.hpp"
#include "engine/import/receive_arrival.hpp"
#include "tests/import/pytorch_written_fixtures.hpp"

namespace pipelens::import {
namespace {
namespace fs = std::filesystem;

// ---- The rule ----

const std::vector<TimedSpan> kTransfers{
    {100, 150, "1/1"},  // ends inside a post [90, 200]: tells nothing beyond the post
    {210, 900, "1/2"},  // another thread's
    {220, 700, "1/1"},  // the post [205, 300]'s own
    {250, 800, "1/1"},  // a later span of that post: not the first
    {400, 450, "1/1"},
};

TEST(ReceiveArrival, TheFirstSpanOfThePostsThreadThatStartsInIt) {
    EXPECT_EQ(receive_arrival(kTransfers, {205, 300, "1/1"}), 700);
    EXPECT_EQ(receive_arrival(kTransfers, {205, 300, "1/2"}), 900);
}

TEST(ReceiveArrival, SpansStartingAtThePostsEdgesCount) {
    EXPECT_EQ(receive_arrival(kTransfers, {220, 230, "1/1"}), 700);  // starts with the post
    EXPECT_EQ(receive_arrival(kTransfers, {390, 400, "1/1"}), 450);  // starts as it ends
}

TEST(ReceiveArrival, NoneWithoutASpanEndingAfterThePost) {
    EXPECT_EQ(receive_arrival(kTransfers, {90, 200, "1/1"}), std::nullopt);   // ends inside
    EXPECT_EQ(receive_arrival(kTransfers, {101, 200, "1/1"}), std::nullopt);  // started before
    EXPECT_EQ(receive_arrival(kTransfers, {300, 399, "1/1"}), std::nullopt);  // none in it
    EXPECT_EQ(receive_arrival(kTransfers, {205, 300, "2/1"}), std::nullopt);  // other thread
    EXPECT_EQ(receive_arrival({}, {0, 1000, "1/1"}), std::nullopt);
}

// ---- On the traces PyTorch wrote ----

std::vector<std::string> rank_files(const std::string& run, int ranks) {
    return testing::profiler_rank_files(run, ranks);
}

struct PairEnds {
    int send_rank = -1;
    std::int64_t send_start_ns = 0;
    int recv_rank = -1;
    std::int64_t recv_end_ns = 0;
};

std::map<int, PairEnds> linked_pairs(const ImportedRun& run) {
    std::map<int, PairEnds> pairs;
    for (int rank = 0; rank < static_cast<int>(run.schedule.ranks.size()); ++rank)
        for (std::size_t step = 0; step < run.schedule.ranks[rank].size(); ++step) {
            const Action& action = run.schedule.ranks[rank][step];
            if (!is_communication(action.kind) || action.link < 0)
                continue;
            PairEnds& ends = pairs[action.link];
            if (action.kind == ActionKind::send_forward ||
                action.kind == ActionKind::send_backward) {
                ends.send_rank = rank;
                ends.send_start_ns = run.timings[rank][step].start_ns;
            } else {
                ends.recv_rank = rank;
                ends.recv_end_ns = run.timings[rank][step].end_ns;
            }
        }
    return pairs;
}

// What the pairs allow rank r's clock shift (added to its times) to be, rank 0 fixed at 0: each
// pair says shift[recv] - shift[send] >= send start - recv end; the tightest bounds on
// shift[r] - shift[0] both ways are longest paths over those constraints (Floyd-Warshall).
struct ShiftBound {
    std::int64_t low_ns = 0;
    std::int64_t high_ns = 0;
};

std::vector<ShiftBound> shift_bounds(const ImportedRun& run) {
    const int ranks = static_cast<int>(run.timings.size());
    constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::min() / 4;
    std::vector<std::vector<std::int64_t>> least(ranks, std::vector<std::int64_t>(ranks, kNone));
    for (int rank = 0; rank < ranks; ++rank)
        least[rank][rank] = 0;
    for (const auto& [link, ends] : linked_pairs(run)) {
        std::int64_t& slot = least[ends.send_rank][ends.recv_rank];
        slot = std::max(slot, ends.send_start_ns - ends.recv_end_ns);
    }
    for (int via = 0; via < ranks; ++via)
        for (int from = 0; from < ranks; ++from)
            for (int to = 0; to < ranks; ++to)
                if (least[from][via] > kNone && least[via][to] > kNone)
                    least[from][to] = std::max(least[from][to], least[from][via] + least[via][to]);
    std::vector<ShiftBound> bounds;
    for (int rank = 0; rank < ranks; ++rank)
        bounds.push_back({least[0][rank], -least[rank][0]});
    return bounds;
}

void expect_one_clock(const std::string& run_name, int ranks, int rank_pairs,
                      const std::vector<ShiftBound>& expected_bounds) {
    const std::vector<std::string> files = rank_files(run_name, ranks);
    for (const std::string& file : files)
        if (!fs::exists(file))
            GTEST_SKIP() << testing::kNoPyTorchFixturesYet;
    const ImportedRun run = read_pytorch_profiler(files);
    const std::string note =
        "clocks: the files' own timestamps, consistent with every send/recv (" +
        std::to_string(rank_pairs) + " rank pairs checked)";
    EXPECT_NE(std::find(run.notes.begin(), run.notes.end(), note), run.notes.end())
        << testing::first_lines(run.notes);
    for (const auto& clock : run.clocks)
        EXPECT_FALSE(clock.has_value());  // no rank moved
    for (const auto& [link, ends] : linked_pairs(run)) {
        ASSERT_GE(ends.send_rank, 0);
        ASSERT_GE(ends.recv_rank, 0);
        EXPECT_GT(ends.recv_end_ns, ends.send_start_ns) << "pair " << link;
    }
    const std::vector<ShiftBound> bounds = shift_bounds(run);
    ASSERT_EQ(bounds.size(), expected_bounds.size());
    for (int rank = 1; rank < ranks; ++rank) {
        const ShiftBound& bound = bounds[rank];
        std::cout << run_name << ": rank " << rank << " shift in [" << bound.low_ns << ", "
                  << bound.high_ns << "] ns, half-width " << (bound.high_ns - bound.low_ns) / 2
                  << " ns\n";
        EXPECT_LE(bound.low_ns, 0) << rank;
        EXPECT_GE(bound.high_ns, 0) << rank;
        EXPECT_LT(bound.high_ns - bound.low_ns, 2'000'000) << rank;  // half-width under 1 ms
        // The exact bounds: the quickest transfer each way, in ns as the files' microseconds
        // with three decimals give them (largest half-width 0.472 ms, rank 1 of pp=4).
        EXPECT_EQ(bound.low_ns, expected_bounds[rank].low_ns) << rank;
        EXPECT_EQ(bound.high_ns, expected_bounds[rank].high_ns) << rank;
    }
}

// Rank 1's first receive: `PP:1RECV_F0` lasts [..742.984, ..951.548] us, the `gloo:recv` span
// it begins [..909.795, ..999.684] us (after baseTimeNanoseconds 1790857026000000000 ns); the
// RECV ends with the span, not with the range.
TEST(ReceiveArrival, ARecvRangeEndsWithItsGlooSpan) {
    const std::vector<std::string> files = rank_files("Interleaved1F1B_pp2_v2_m4_cpu", 2);
    for (const std::string& file : files)
        if (!fs::exists(file))
            GTEST_SKIP() << testing::kNoPyTorchFixturesYet;
    const ImportedRun run = read_pytorch_profiler(files);
    const auto& actions = run.schedule.ranks.at(1);
    const auto found = std::find_if(actions.begin(), actions.end(), [&](const Action& action) {
        return run.schedule.text(action) == "1RECV_F0";
    });
    ASSERT_NE(found, actions.end());
    const ImportedTiming& timing = run.timings[1][found - actions.begin()];
    EXPECT_EQ(timing.start_ns, 1'795'719'217'853'742'984);
    EXPECT_EQ(timing.end_ns, 1'795'719'217'853'999'684);
}

TEST(ReceiveArrival, InterleavedTwoRanksShareOneClock) {
    expect_one_clock("Interleaved1F1B_pp2_v2_m4_cpu", 2, 2, {{0, 0}, {-143'229, 170'914}});
}

TEST(ReceiveArrival, InterleavedFourRanksShareOneClock) {
    expect_one_clock("Interleaved1F1B_pp4_v2_m8_cpu", 4, 8,
                     {{0, 0}, {-167'207, 777'192}, {-286'448, 430'288}, {-158'682, 271'445}});
}

// PyTorch starts a computation's range before it waits for its input, and that wait leaves no
// trace: rank 0's `PP:2F0` begins 3.26 ms before the `gloo:recv` of its input ends. The forward
// starts computing at the arrival, so the wait is a bubble, and every computation that takes a
// receive's data starts no earlier than that data arrived.
TEST(ReceiveArrival, AComputationStartsWhenItsInputArrived) {
    for (const auto& [name, ranks] : std::vector<std::pair<std::string, int>>{
             {"Interleaved1F1B_pp2_v2_m4_cpu", 2}, {"Interleaved1F1B_pp4_v2_m8_cpu", 4}}) {
        const std::vector<std::string> files = rank_files(name, ranks);
        for (const std::string& file : files)
            if (!fs::exists(file))
                GTEST_SKIP() << testing::kNoPyTorchFixturesYet;
        const ImportedRun run = read_pytorch_profiler(files);
        int checked = 0;
        for (int rank = 0; rank < ranks; ++rank) {
            std::map<std::string, ImportedTiming> by_text;
            const auto& actions = run.schedule.ranks.at(rank);
            for (std::size_t i = 0; i < actions.size(); ++i)
                by_text[run.schedule.text(actions[i])] = run.timings[rank][i];
            for (const auto& [text, timing] : by_text) {
                const auto recv = text.find("RECV_");
                if (recv == std::string::npos)
                    continue;
                // 2RECV_F0 feeds 2F0; 2RECV_B0 feeds 2B0 (or 2I0 where B is split).
                const std::string stage = text.substr(0, recv);
                const std::string rest = text.substr(recv + 5);
                for (const std::string& consumer :
                     rest[0] == 'F'
                         ? std::vector<std::string>{stage + rest}
                         : std::vector<std::string>{stage + rest, stage + "I" + rest.substr(1)}) {
                    const auto found = by_text.find(consumer);
                    if (found == by_text.end())
                        continue;
                    EXPECT_GE(found->second.start_ns, timing.end_ns)
                        << name << " rank " << rank << ": " << consumer << " before " << text;
                    ++checked;
                }
            }
        }
        EXPECT_EQ(checked, ranks == 2 ? 24 : 112) << name;  // every receive with a consumer
    }
    const ImportedRun run = read_pytorch_profiler(rank_files("Interleaved1F1B_pp2_v2_m4_cpu", 2));
    std::map<std::string, ImportedTiming> rank0;
    for (std::size_t i = 0; i < run.schedule.ranks[0].size(); ++i)
        rank0[run.schedule.text(run.schedule.ranks[0][i])] = run.timings[0][i];
    EXPECT_EQ(rank0.at("2F0").start_ns, rank0.at("2RECV_F0").end_ns);
    EXPECT_LT(rank0.at("2F0").end_ns - rank0.at("2F0").start_ns, 200'000);  // its 175 us of work
}

}  // namespace
}  // namespace pipelens::import
