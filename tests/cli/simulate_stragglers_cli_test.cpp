// Straggler what-ifs from the command line (`simulate --rank-slowdown`): the slowed run's
// closed-form step, its replay, and the cost `summary --stragglers` gives its slow rank.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

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

// A simulation with rendezvous transfers posts its receives in program order and starts each
// transfer once its receive is posted: its straggler's cost is re-timed so, exactly what the
// simulation without the slowdown saves (1F1B pp=4 m=8, F = 100 us, B = 200 us, rank 1 at 3x;
// 20 us links: 7.760 ms against 3.640 ms, 4.120 ms; 200 us links: 10.100 against 6.800 ms,
// 3.300 ms). Read with the plain rules it was 1.800 ms; keeping each transfer's recorded wait
// for its post, 4.080 and 2.700 ms.
TEST(SimulateCli, ARendezvousSimulationsStragglerCostsWhatTheSlowdownAdded) {
    for (const auto& [latency, slowed, base, cost] :
         {std::tuple("20us", "7.760 ms", 3'640'000, "4.120 ms"),
          std::tuple("200us", "10.100 ms", 6'800'000, "3.300 ms")}) {
        SCOPED_TRACE(latency);
        const std::string shape = std::string(
                                      "simulate --schedule 1F1B --pp 4 --m 8 --f 100us "
                                      "--b 200us --rendezvous --p2p-latency ") +
                                  latency + " ";
        const auto trace = fresh_trace("rendezvous_straggler");
        ASSERT_EQ(run_pipelens(shape + "--rank-slowdown 1,3,1,1 --out " + trace.string()).exit_code,
                  0);
        const auto unslowed = run_pipelens(shape + "--json");
        ASSERT_EQ(unslowed.exit_code, 0) << unslowed.err;
        EXPECT_EQ(nlohmann::json::parse(unslowed.out)["step_time_ns"], base);
        const auto stragglers = run_pipelens("summary --stragglers " + trace.string());
        ASSERT_EQ(stragglers.exit_code, 0) << stragglers.err;
        EXPECT_NE(stragglers.out.find(std::string("step time ") + slowed), std::string::npos)
            << stragglers.out;
        EXPECT_NE(stragglers.out.find(std::string("rank 1 step 0: 3.00x, on the critical path: "
                                                  "yes, costs the step ") +
                                      cost),
                  std::string::npos)
            << stragglers.out;
    }
}

}  // namespace
}  // namespace pipelens
