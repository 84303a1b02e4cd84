// Straggler what-ifs from the command line (`simulate --rank-slowdown`): the slowed run's
// closed-form step, its replay, and the cost `summary --stragglers` gives its slow rank.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli/run_pipelens.hpp"
#include "tests/fresh_trace.hpp"

namespace pipelens {
namespace {

using pipelens::testing::fresh_trace;
using testing::run_pipelens;

// A straggler what-if from the command line: GPipe pp=2 m=4 with rank 1 at twice its costs
// takes (p - 1)(F + B) + m x 2 (F + B); the recorded run replays to the same times.
TEST(SimulateCli, RankSlowdownMakesAStragglerAndReplays) {
    const auto trace = fresh_trace("straggler");
    auto result = run_pipelens(
        "simulate --schedule GPipe --pp 2 --m 4 --f 1ms --i 0.5ms --w 0.5ms --rank-slowdown 1,2 "
        "--json --out " +
        trace.string());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(nlohmann::json::parse(result.out)["step_time_ns"].get<std::int64_t>(),
              2'000'000 + 4 * 2 * 2'000'000);
    result = run_pipelens("replay " + trace.string() + " --check");
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    result = run_pipelens("replay " + trace.string());
    EXPECT_NE(result.out.find("costs.rank_slowdown: 1, 2"), std::string::npos) << result.out;
    result = run_pipelens("simulate --schedule GPipe --pp 2 --m 4 --rank-slowdown 1,fast");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err,
              "pipelens: --rank-slowdown: 'fast' is not a number (give one factor "
              "per rank, e.g. 1,1.8)\n");
}

// A simulation with rendezvous transfers posts its receives in program order: its straggler's
// cost is re-timed so, near what the simulation without the slowdown saves (1F1B pp=4 m=8, F =
// 100 us, B = 200 us, 20 us links, rank 1 at 3x: 7.760 ms against 3.640 ms, 4.120 ms; the
// re-timing keeps the time sends waited for their post, so 4.080 ms). Read with the plain
// rules it was 1.800 ms.
TEST(SimulateCli, ARendezvousSimulationsStragglerCostsNearlyWhatTheSlowdownAdded) {
    const std::string shape =
        "simulate --schedule 1F1B --pp 4 --m 8 --f 100us --b 200us --p2p-latency 20us "
        "--rendezvous ";
    const auto trace = fresh_trace("rendezvous_straggler");
    ASSERT_EQ(run_pipelens(shape + "--rank-slowdown 1,3,1,1 --out " + trace.string()).exit_code, 0);
    const auto base = run_pipelens(shape + "--json");
    ASSERT_EQ(base.exit_code, 0) << base.err;
    EXPECT_EQ(nlohmann::json::parse(base.out)["step_time_ns"], 3'640'000);
    const auto stragglers = run_pipelens("summary --stragglers " + trace.string());
    ASSERT_EQ(stragglers.exit_code, 0) << stragglers.err;
    EXPECT_NE(stragglers.out.find("step time 7.760 ms"), std::string::npos) << stragglers.out;
    EXPECT_NE(stragglers.out.find("rank 1 step 0: 3.00x, on the critical path: yes, costs the "
                                  "step 4.080 ms"),
              std::string::npos)
        << stragglers.out;
}

}  // namespace
}  // namespace pipelens
