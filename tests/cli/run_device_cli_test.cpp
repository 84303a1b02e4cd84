// `pipelens run --device` as a user types it, on this CPU-only build: text that is not a device
// is a usage error naming the flag, a GPU this build cannot use is refused saying why (once,
// before any rank starts, with --nproc), and the device a run used is in its report and in each
// rank's recorded configure_transport event.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli/run_pipelens.hpp"
#include "tests/fresh_trace.hpp"
#include "tests/raw_database.hpp"

namespace pipelens {
namespace {

using pipelens::testing::fresh_trace;
using testing::run_pipelens;

constexpr const char* kRun = "run --schedule 1F1B --pp 2 --m 4 --model mlp ";

TEST(RunDeviceCli, TextThatIsNoDeviceIsAUsageErrorNamingTheFlag) {
    for (const std::string text : {"gpu", "cuda:-1", "cuda:x"}) {
        for (const std::string launch : {"", "--transport gloo --nproc 2 "}) {
            const auto result = run_pipelens(kRun + launch + "--device " + text);
            EXPECT_EQ(result.exit_code, 2) << text << launch;
            EXPECT_EQ(result.err,
                      "pipelens: --device '" + text +
                          "': expected cpu, cuda or cuda:N (N a GPU index: 0, 1, ...)\n")
                << launch;
            EXPECT_EQ(result.out, "");
        }
    }
}

// What a CUDA request gets where it cannot be met: this build has no CUDA (the CPU LibTorch
// these tests run against), or, on a CUDA build, no GPU is visible. Where a GPU is seen the run
// simply works, and there is nothing to refuse.
void expect_refused_as_unusable(const std::string& device, const std::string& launch,
                                const std::string& environment = "") {
    const auto result = testing::run_command(environment + std::string(PIPELENS_BINARY) + " " +
                                             kRun + launch + "--device " + device);
    if (result.exit_code == 0)
        GTEST_SKIP() << "a GPU is usable here";
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_EQ(result.out, "");
    const std::string prefix = "pipelens: run: --device " + device + ": ";
    const std::string no_cuda = "this build of pipelens-runtime has no CUDA (LibTorch ";
    const std::string no_cuda_end =
        " CPU); give --device cpu, or build pipelens against a CUDA "
        "LibTorch\n";
    ASSERT_EQ(result.err.rfind(prefix, 0), 0u) << result.err;
    const std::string reason = result.err.substr(prefix.size());
    if (reason.rfind(no_cuda, 0) == 0) {
        EXPECT_EQ(reason.substr(reason.size() - no_cuda_end.size()), no_cuda_end) << reason;
        // The version between them, e.g. 1.13.0: digits and dots.
        const std::string version =
            reason.substr(no_cuda.size(), reason.size() - no_cuda.size() - no_cuda_end.size());
        EXPECT_FALSE(version.empty());
        EXPECT_EQ(version.find_first_not_of("0123456789.+abcdefghijklmnopqrstuvwxyz"),
                  std::string::npos)
            << version;
    } else if (reason.rfind("no GPU seen", 0) != 0) {
        // A CUDA build with fewer GPUs than asked for: cuda:N past the last one, or more ranks
        // per host than GPUs.
        const bool past_the_last = reason.rfind("only ", 0) == 0;
        const bool too_many_ranks = reason.rfind("the rank with LOCAL_RANK ", 0) == 0;
        EXPECT_TRUE(past_the_last || too_many_ranks) << reason;
        EXPECT_NE(reason.find(" seen (cuda:0"), std::string::npos) << reason;
    } else {
        EXPECT_EQ(reason.rfind("no GPU seen (CUDA_VISIBLE_DEVICES", 0), 0u) << reason;
    }
    // Said once, by the launcher, not by every rank.
    EXPECT_EQ(result.err.find(prefix, 1), std::string::npos) << result.err;
}

TEST(RunDeviceCli, CudaWhereThisBuildCannotUseItIsAUsageErrorSayingWhy) {
    expect_refused_as_unusable("cuda", "");
    expect_refused_as_unusable("cuda:0", "--no-reference ");
    expect_refused_as_unusable("cuda", "", "CUDA_VISIBLE_DEVICES= ");
    expect_refused_as_unusable("cuda:1", "--transport gloo --nproc 2 ");
    // More ranks than GPUs on this host: each rank takes cuda:LOCAL_RANK, so the launcher
    // refuses once, before any rank starts, where one rank would find no GPU of its own.
    expect_refused_as_unusable("cuda", "--transport gloo --nproc 64 ");
}

TEST(RunDeviceCli, TheDeviceIsInTheReportAndRecordedForEveryRank) {
    const auto trace = fresh_trace("device_recorded");
    const auto result =
        run_pipelens(std::string(kRun) + "--device cpu --json --out " + trace.string());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto json = nlohmann::json::parse(result.out);
    EXPECT_EQ(json["device"], "cpu");
    EXPECT_FALSE(json.contains("device_shared"));  // only for ranks sharing a GPU

    testing::RawDatabase raw(trace, SQLITE_OPEN_READONLY);
    const std::vector<std::string> rows = raw.rows(
        "SELECT e.rank, e.arguments FROM events e JOIN strings s ON s.id = e.name_id "
        "WHERE e.run_id = 1 AND s.text = 'configure_transport' ORDER BY e.rank");
    ASSERT_EQ(rows.size(), 2u);
    for (int rank = 0; rank < 2; ++rank) {
        const std::string& row = rows[rank];
        ASSERT_EQ(row.rfind(std::to_string(rank) + "|", 0), 0u) << row;
        EXPECT_EQ(nlohmann::json::parse(row.substr(row.find('|') + 1))["device"], "cpu") << row;
    }

    const auto text = run_pipelens(std::string(kRun) + "--no-reference --device cpu");
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("transport local (real run, cpu)"), std::string::npos) << text.out;
    EXPECT_EQ(text.out.find("share one GPU"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace pipelens
