// Two recorded configurations compared setting by setting: formatting never counts, the first
// setting that differs is named with both values, and text that is not TOML compares as text.
#include "engine/experiment/config_difference.hpp"

#include <gtest/gtest.h>

namespace pipelens {
namespace {

constexpr std::string_view kConfig = R"([model]
hidden = 64
layers = 8
name = 'mlp'

[costs]
f = [ '1000ns', '1000ns' ]
)";

TEST(ConfigDifference, TheSameSettingsWrittenAnotherWayAreTheSame) {
    EXPECT_EQ(config_difference(kConfig, kConfig), std::nullopt);
    EXPECT_EQ(config_difference(kConfig,
                                "[costs]\nf=['1000ns','1000ns']\n[model]\nname=\"mlp\"\n"
                                "layers=8\nhidden=64\n"),
              std::nullopt);
}

TEST(ConfigDifference, TheFirstSettingThatDiffersIsNamedWithBothValues) {
    const std::string other = R"([model]
hidden = 128
layers = 16
name = 'mlp'

[costs]
f = [ '1000ns', '1000ns' ]
)";
    const auto difference = config_difference(kConfig, other);
    ASSERT_TRUE(difference);
    EXPECT_EQ(difference->setting, "[model] hidden");
    EXPECT_EQ(difference->value, "64");
    EXPECT_EQ(difference->other_value, "128");
    EXPECT_EQ(describe_difference(*difference, "run 1"),
              "[model] hidden is 64 where run 1 has 128");
    const auto arrays = config_difference("[costs]\nf = ['1000ns', '1000ns']\n",
                                          "[costs]\nf = ['1000ns', '2000ns']\n");
    ASSERT_TRUE(arrays);
    EXPECT_EQ(arrays->setting, "[costs] f");
}

TEST(ConfigDifference, ASettingOnlyOneSideHasIsNamedAsMissingOnTheOther) {
    const auto extra =
        config_difference("seed = 5\n[run]\ntransport = 'gloo'\n", "[run]\ntransport = 'gloo'\n");
    ASSERT_TRUE(extra);
    EXPECT_EQ(describe_difference(*extra, "run 2"), "seed is 5 where run 2 does not set it");
    const auto missing = config_difference(
        "[run]\ntransport = 'gloo'\n", "[run]\ntransport = 'gloo'\n[run.nested]\nthreads = 2\n");
    ASSERT_TRUE(missing);
    EXPECT_EQ(describe_difference(*missing, "run 2"),
              "[run.nested] threads is not set where run 2 has 2");
}

TEST(ConfigDifference, TextThatIsNotTomlComparesAsText) {
    EXPECT_EQ(config_difference("not = = toml", "not = = toml"), std::nullopt);
    const auto difference = config_difference("not = = toml", kConfig);
    ASSERT_TRUE(difference);
    EXPECT_EQ(describe_difference(*difference, "run 1"),
              "its recorded configuration is not run 1's");
}

}  // namespace
}  // namespace pipelens
