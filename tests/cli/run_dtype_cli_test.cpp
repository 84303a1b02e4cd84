// `pipelens run --dtype` as a user types it, on real LibTorch tensors: a bfloat16 mlp run
// completes with its single-rank reference matching, says bfloat16 in its JSON, its text and each
// rank's recorded configure_transport event; a dtype it does not compute in is a usage error
// naming the flag, before any rank starts; float32, given or not, reports what it always did.
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

TEST(RunDtypeCli, Bfloat16MlpMatchesItsReferenceAndSaysSo) {
    const auto trace = fresh_trace("dtype_recorded");
    const auto result =
        run_pipelens(std::string(kRun) + "--dtype bfloat16 --json --out " + trace.string());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto json = nlohmann::json::parse(result.out);
    EXPECT_EQ(json["dtype"], "bfloat16");
    EXPECT_TRUE(json["completed"].get<bool>());
    EXPECT_TRUE(json["reference"]["outputs_match"].get<bool>()) << json["reference"].dump();
    EXPECT_TRUE(json["reference"]["gradients_match"].get<bool>()) << json["reference"].dump();

    testing::RawDatabase raw(trace, SQLITE_OPEN_READONLY);
    const std::vector<std::string> rows = raw.rows(
        "SELECT e.rank, e.arguments FROM events e JOIN strings s ON s.id = e.name_id "
        "WHERE e.run_id = 1 AND s.text = 'configure_transport' ORDER BY e.rank");
    ASSERT_EQ(rows.size(), 2u);
    for (const std::string& row : rows)
        EXPECT_EQ(nlohmann::json::parse(row.substr(row.find('|') + 1))["dtype"], "bfloat16") << row;

    const auto text = run_pipelens(std::string(kRun) + "--no-reference --dtype bfloat16");
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("transport local (real run, cpu, bfloat16)"), std::string::npos)
        << text.out;
}

TEST(RunDtypeCli, ADtypeItDoesNotComputeInIsAUsageErrorNamingTheFlag) {
    for (const std::string text : {"half", "bf16", "float64"}) {
        for (const std::string launch : {"", "--transport gloo --nproc 2 "}) {
            const auto result = run_pipelens(kRun + launch + "--dtype " + text);
            EXPECT_EQ(result.exit_code, 2) << text << launch;
            EXPECT_EQ(result.err, "pipelens: --dtype: '" + text +
                                      "' is not a dtype pipelens run computes in (float32 or "
                                      "bfloat16)\n")
                << launch;
            EXPECT_EQ(result.out, "");
        }
    }
}

TEST(RunDtypeCli, Float32GivenOrNotReportsWhatItAlwaysDid) {
    const auto plain = run_pipelens(std::string(kRun) + "--json");
    const auto given = run_pipelens(std::string(kRun) + "--dtype float32 --json");
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    ASSERT_EQ(given.exit_code, 0) << given.err;
    const auto plain_json = nlohmann::ordered_json::parse(plain.out);
    const auto given_json = nlohmann::ordered_json::parse(given.out);
    std::vector<std::string> plain_keys, given_keys;
    for (const auto& item : plain_json.items())
        plain_keys.push_back(item.key());
    for (const auto& item : given_json.items())
        given_keys.push_back(item.key());
    EXPECT_EQ(given_keys, plain_keys);
    EXPECT_FALSE(given_json.contains("dtype"));
    EXPECT_EQ(given_json["loss"], plain_json["loss"]);
    EXPECT_EQ(given_json["reference"]["loss"], plain_json["reference"]["loss"]);

    const auto text = run_pipelens(std::string(kRun) + "--no-reference --dtype float32");
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("transport local (real run, cpu)"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace pipelens
