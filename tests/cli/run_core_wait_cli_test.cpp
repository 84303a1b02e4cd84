// A real run says how long each rank waited for a core, from the kernel's run-queue delay of the
// rank's thread: every real rank's row holds it (threads and processes alike), a simulation's
// none; ranks made to share one core with a busy loop are named, in `run`'s report and in
// `calibrate`'s notes, as waiting for cores.
#include <gtest/gtest.h>

#include <sched.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli/run_pipelens.hpp"
#include "tests/fresh_trace.hpp"
#include "tests/raw_database.hpp"

namespace pipelens {
namespace {

using pipelens::testing::fresh_trace;
using testing::run_command;
using testing::run_pipelens;

// The kernel keeps the figure: this thread, given a core, has timeslices counted in it.
bool kernel_keeps_run_queue_delay() {
    std::ifstream schedstat("/proc/thread-self/schedstat");
    long long on_core = 0, delay = 0, timeslices = 0;
    return static_cast<bool>(schedstat >> on_core >> delay >> timeslices) && timeslices > 0;
}

constexpr const char* kRun =
    "run --schedule 1F1B --pp 2 --m 4 --model mlp --layers 4 --hidden 256 --no-reference "
    "--steps 3 --out ";

TEST(RunCli, EveryRealRankRecordsItsWaitForACore) {
    if (!kernel_keeps_run_queue_delay())
        GTEST_SKIP() << "this kernel keeps no run-queue delay";
    for (const std::string transport : {"", " --transport gloo --nproc 2"}) {
        SCOPED_TRACE(transport);
        if (!transport.empty() && !PIPELENS_GLOO_TRANSPORT)
            continue;  // built without the gloo transport: the threads alone
        const auto trace = fresh_trace("core_wait");
        const auto result = run_pipelens(kRun + trace.string() + transport + " --json");
        ASSERT_EQ(result.exit_code, 0) << result.err;
        testing::RawDatabase raw(trace, SQLITE_OPEN_READONLY);
        EXPECT_EQ(raw.value("SELECT count(*) FROM ranks WHERE core_wait_ns >= 0"), "2");
        const nlohmann::json json = nlohmann::json::parse(result.out);
        for (const nlohmann::json& rank : json.at("ranks"))
            EXPECT_EQ(rank.at("core_wait_ns").get<std::int64_t>(),
                      std::stoll(raw.value("SELECT core_wait_ns FROM ranks WHERE rank = " +
                                           std::to_string(rank.at("rank").get<int>()))));
        const auto summary = run_pipelens("summary " + trace.string());
        EXPECT_NE(summary.out.find("waited for a core (ready to run, none free): rank 0 "),
                  std::string::npos)
            << summary.out;
    }
    const auto simulated = fresh_trace("core_wait_sim");
    ASSERT_EQ(
        run_pipelens("simulate --schedule 1F1B --pp 2 --m 4 --out " + simulated.string()).exit_code,
        0);
    EXPECT_EQ(testing::RawDatabase(simulated, SQLITE_OPEN_READONLY)
                  .value("SELECT count(*) FROM ranks WHERE core_wait_ns IS NULL"),
              "2");
    EXPECT_EQ(run_pipelens("summary " + simulated.string()).out.find("waited for a core"),
              std::string::npos);
}

// The first core this process may run on.
int first_allowed_core() {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    sched_getaffinity(0, sizeof allowed, &allowed);
    for (int core = 0; core < CPU_SETSIZE; ++core)
        if (CPU_ISSET(core, &allowed))
            return core;
    return 0;
}

TEST(RunCli, RanksSharingTheirCoreWithABusyLoopAreSaidToWaitForIt) {
    if (!kernel_keeps_run_queue_delay())
        GTEST_SKIP() << "this kernel keeps no run-queue delay";
    const auto trace = fresh_trace("core_wait_busy");
    const std::string core = std::to_string(first_allowed_core());
    // Both ranks and a loop that never sleeps on one core: whenever a rank is ready to compute,
    // the loop may hold the core.
    const auto result = run_command("(taskset -c " + core +
                                    " sh -c 'while :; do :; done' & spinner=$!; taskset -c " +
                                    core + " " + PIPELENS_BINARY + " " + kRun + trace.string() +
                                    " --threads 1; status=$?; kill $spinner; exit $status)");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("waited for cores for more than 5% of the step"), std::string::npos)
        << result.out;
    testing::RawDatabase raw(trace, SQLITE_OPEN_READONLY);
    EXPECT_NE(raw.value("SELECT count(*) FROM ranks, runs WHERE core_wait_ns > step_time_ns / 20"),
              "0");
    const auto calibrated = run_pipelens("calibrate " + trace.string());
    ASSERT_EQ(calibrated.exit_code, 0) << calibrated.err;
    EXPECT_NE(calibrated.out.find("note: ranks waited for a core (ready to run, none free) for "
                                  "more than 5% of the median step: run 1 rank "),
              std::string::npos)
        << calibrated.out;
    const auto json = nlohmann::json::parse(run_pipelens("calibrate --json " + trace.string()).out);
    ASSERT_EQ(json.at("core_waits").size(), 2u);
    EXPECT_EQ(json.at("core_waits").at(0).at("run_id"), 1);
}

}  // namespace
}  // namespace pipelens
