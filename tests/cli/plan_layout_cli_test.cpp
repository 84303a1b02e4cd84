// `pipelens plan` and layer splits as a user sees them: a Megatron-LM layout pinned with
// --layout comes back exactly in the table and the JSON, priced as the search prices that
// split; a malformed one is exit 2 with the column of the fault, one of the wrong layer count
// names both counts; by default a layout whose output layer is heavy gets an uneven split with
// both steps reported, and --even-split keeps every split even.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "tests/cli/run_pipelens.hpp"

namespace pipelens {
namespace {

using testing::run_pipelens;

// A vocabulary of 64,000 makes the output layer weigh about 4.8 layers' forward.
constexpr const char* kHeavyOutput =
    "plan --layers 8 --hidden 1024 --heads 16 --sequence 512 --vocabulary 64000 "
    "--global-batch 16 --gpus 8 --tp 2 --dp 2 --microbatch-size 4";

TEST(PlanLayoutCli, APinnedLayoutComesBackExactlyAndPricesAsTheSearchedSplit) {
    const std::string layout = "Et|(t*3|)*2tL";  // four stages on --pp 2: v = 2
    const auto pinned =
        run_pipelens(std::string(kHeavyOutput) + " --pp 2 --layout \"" + layout + "\" --json");
    ASSERT_EQ(pinned.exit_code, 0) << pinned.err;
    const auto layouts = nlohmann::json::parse(pinned.out);
    ASSERT_EQ(layouts.size(), 1u);
    EXPECT_EQ(layouts[0]["layout"], layout);
    EXPECT_EQ(layouts[0]["schedule"], "Interleaved1F1B");
    EXPECT_EQ(layouts[0]["v"], 2);
    EXPECT_EQ(layouts[0]["step_time_s"], layouts[0]["even_split_step_time_s"]);  // not searched
    const auto text =
        run_pipelens(std::string(kHeavyOutput) + " --pp 2 --layout \"" + layout + "\"");
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find(" 6.522 ms "), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("  " + layout + "\n"), std::string::npos) << text.out;

    // The search finds that split by itself and reports the even one's step beside it.
    const auto searched =
        run_pipelens(std::string(kHeavyOutput) + " --pp 2 --schedule Interleaved1F1B --v 2 --json");
    ASSERT_EQ(searched.exit_code, 0) << searched.err;
    const auto found = nlohmann::json::parse(searched.out);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0]["layout"], layout);
    EXPECT_EQ(found[0]["step_time_s"], layouts[0]["step_time_s"]);
    const auto ns = [](const nlohmann::json& seconds) {
        return std::llround(seconds.get<double>() * 1e9);
    };
    EXPECT_EQ(ns(found[0]["step_time_s"]), 6'522'346);
    EXPECT_EQ(ns(found[0]["even_split_step_time_s"]), 6'861'052);
    const auto searched_text =
        run_pipelens(std::string(kHeavyOutput) + " --pp 2 --schedule Interleaved1F1B --v 2");
    ASSERT_EQ(searched_text.exit_code, 0) << searched_text.err;
    EXPECT_NE(searched_text.out.find("#1 splits its layers unevenly: 6.522 ms against 6.861 ms "
                                     "for the even split Et*2|(t*2|)*2t*2L (4.9% faster)\n"),
              std::string::npos)
        << searched_text.out;
}

TEST(PlanLayoutCli, EvenSplitKeepsEveryLayoutEven) {
    const auto result = run_pipelens(std::string(kHeavyOutput) + " --even-split --json");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto layouts = nlohmann::json::parse(result.out);
    ASSERT_FALSE(layouts.empty());
    for (const auto& layout : layouts) {
        EXPECT_EQ(layout["step_time_s"], layout["even_split_step_time_s"]) << layout.dump();
        if (layout["pp"] == 2 && layout["v"] == 2) {
            EXPECT_EQ(layout["layout"], "Et*2|(t*2|)*2t*2L");
        }
    }
}

TEST(PlanLayoutCli, AMalformedLayoutOrOneOfOtherLayersIsAUsageError) {
    const auto malformed = run_pipelens(std::string(kHeavyOutput) + " --layout \"Et*3|t*|t*3L\"");
    EXPECT_EQ(malformed.exit_code, 2);
    EXPECT_EQ(malformed.err,
              "pipelens plan: --layout \"Et*3|t*|t*3L\": column 7: '*' needs a count after it\n");
    const auto layers = run_pipelens(std::string(kHeavyOutput) + " --layout \"Et*3|t*3|t*3L\"");
    EXPECT_EQ(layers.exit_code, 2);
    EXPECT_EQ(layers.err,
              "pipelens plan: --layout has 9 transformer layers, the model 8 (--layers)\n");
    const auto stages =
        run_pipelens(std::string(kHeavyOutput) + " --pp 4 --layout \"Et*3|t*3|t*2L\"");
    EXPECT_EQ(stages.exit_code, 2);
    EXPECT_EQ(stages.err,
              "pipelens plan: --layout has 3 stages: --pp 4 must divide them (pp x v stages)\n");
    // Without --pp the layout's stages are pp: the error says so instead of naming --pp.
    const auto derived = run_pipelens(
        "plan --layers 8 --hidden 1024 --heads 16 --sequence 512 --vocabulary 64000 "
        "--global-batch 16 --gpus 8 --layout \"Et*3|t*3|t*2L\"");
    EXPECT_EQ(derived.exit_code, 2);
    EXPECT_EQ(derived.err,
              "pipelens plan: --layout has 3 stages, so pp is 3: it must divide the GPUs (8; give "
              "--pp to run the stages as pp x v)\n");
    // A runaway layout is refused at once and quoted by its first 77 characters.
    const std::string deep = "E" + std::string(1000, '(') + "tL";
    const auto nested = run_pipelens(std::string(kHeavyOutput) + " --layout \"" + deep + "\"");
    EXPECT_EQ(nested.exit_code, 2);
    EXPECT_EQ(nested.err, "pipelens plan: --layout \"" + deep.substr(0, 77) +
                              "...\": column 66: groups nest deeper than 64 levels\n");
}

}  // namespace
}  // namespace pipelens
