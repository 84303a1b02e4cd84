// A real run's RECV rows end when the data arrived, not when the action needing it got round to
// asking: with ranks as threads the transport sees the data land. A rank that computes slowly
// receives its next inputs while it computes, so its RECVs end early and the critical path runs
// through its computations, not through transfers that were already done.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli/run_pipelens.hpp"
#include "tests/cli/sqlite_edit.hpp"
#include "tests/fresh_trace.hpp"

namespace pipelens {
namespace {

using pipelens::testing::fresh_trace;
using testing::run_pipelens;

constexpr std::int64_t kSleepNs = 200'000'000;  // stage 1's forward, --fault stage1=sleep:200ms

TEST(RunCli, ARecvEndsWhenItsDataArrivedNotWhenItWasNeeded) {
    const auto trace = fresh_trace("arrival");
    const auto result = run_pipelens(
        "run --schedule 1F1B --pp 2 --m 4 --batch 16 --fault stage1=sleep:200ms --out " +
        trace.string());
    ASSERT_EQ(result.exit_code, 0) << result.err;

    // Rank 0 computes fast: rank 1's inputs for microbatches 1 to 3 land while it sleeps in an
    // earlier forward, before it even posts their RECVs (PyTorch's lowering posts each after the
    // forward before), so each RECV ends as it is posted, not when its forward asked for it.
    EXPECT_EQ(testing::query_trace(trace,
                                   "SELECT count(*) FROM actions WHERE rank = 1 AND kind = 5 AND "
                                   "microbatch > 0 AND end_ns = start_ns"),
              "3");
    // And no RECV ends before its SEND began.
    EXPECT_EQ(testing::receives_ending_before_their_send(trace), "0");

    // The step is rank 1's four sleeping forwards and what lies between them, not transfers.
    const auto paths = run_pipelens("summary --critical-path --json " + trace.string());
    ASSERT_EQ(paths.exit_code, 0) << paths.err;
    const nlohmann::json summary = nlohmann::json::parse(paths.out);
    const nlohmann::json& path = summary["runs"][0]["critical_path"];
    const auto end_ns = path["end_ns"].get<std::int64_t>();
    EXPECT_GE(path["shares"]["F"].get<std::int64_t>(), 4 * kSleepNs) << path.dump();
    EXPECT_LT(path["shares"]["communication"].get<std::int64_t>(), end_ns / 10) << path.dump();
}

}  // namespace
}  // namespace pipelens
