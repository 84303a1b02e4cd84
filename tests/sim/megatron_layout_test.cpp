// Megatron layout strings: Megatron's own examples read as it documents them, what pipelens
// writes read back, and every refusal with its exact column and reason.
#include <gtest/gtest.h>

#include "engine/stage_plan/megatron_layout.hpp"

namespace pipelens::runtime {
namespace {

std::string refusal(std::string_view text) {
    try {
        parse_megatron_layout(text);
    } catch (const LayoutError& error) {
        return error.what();
    }
    return "accepted";
}

TEST(MegatronLayout, ReadsRepetitionsGroupsAndCommas) {
    EXPECT_EQ(parse_megatron_layout("Et*3|(tt|)*2ttL"), (std::vector<int>{3, 2, 2, 2}));
    EXPECT_EQ(parse_megatron_layout("Et,t|t|tL"), (std::vector<int>{2, 1, 1}));
    EXPECT_EQ(parse_megatron_layout("EtL"), (std::vector<int>{1}));
    EXPECT_EQ(parse_megatron_layout("E(t*2)*3|tL"), (std::vector<int>{6, 1}));
}

TEST(MegatronLayout, WritesRunsOfEqualStagesAsGroupsAndReadsThemBack) {
    EXPECT_EQ(megatron_layout({3, 2, 2, 2}), "Et*3|(t*2|)*2t*2L");
    EXPECT_EQ(megatron_layout({1, 3, 2, 1}), "Et|t*3|t*2|tL");
    EXPECT_EQ(megatron_layout({4}), "Et*4L");
    EXPECT_EQ(megatron_layout({2, 1}), "Et*2|tL");
    for (const std::vector<int>& split :
         {std::vector<int>{3, 2, 2, 2}, {1, 3, 2, 1}, {4}, {2, 2, 2, 2, 2, 5}})
        EXPECT_EQ(parse_megatron_layout(megatron_layout(split)), split);
}

TEST(MegatronLayout, RefusesWithTheColumnOfTheFault) {
    EXPECT_EQ(refusal(""), "column 1: empty layout");
    EXPECT_EQ(refusal("Et*3|(tt|L"), "column 6: '(' is never closed");
    EXPECT_EQ(refusal("Et)|tL"), "column 3: ')' closes no '('");
    EXPECT_EQ(refusal("Et*|tL"), "column 3: '*' needs a count after it");
    EXPECT_EQ(refusal("Et*0|tL"), "column 4: a count of 0 repeats nothing");
    EXPECT_EQ(refusal("E*2t|tL"),
              "column 1: E (the embedding) belongs once, at the start of the first stage");
    EXPECT_EQ(refusal("Et|m|tL"), "column 4: 'm' (an MTP layer): pipelens models no MTP layers");
    EXPECT_EQ(refusal("Et|x|tL"), "column 4: 'x' is not E, t, L, |, (, ), * or ,");
    EXPECT_EQ(refusal("Et||tL"), "column 4: stage 1 holds no t: every stage needs a layer");
    EXPECT_EQ(refusal("Et|tLt"), "column 6: after L: the loss ends the last stage");
    EXPECT_EQ(refusal("t|tL"), "column 1: no E: the first stage starts with the embedding");
    EXPECT_EQ(refusal("Et|t"), "column 5: no L: the last stage ends with the loss");
    EXPECT_EQ(refusal("*2Et|tL"), "column 1: '*' repeats nothing: put it after a symbol or a ')'");
    // Nested repetitions multiply: refused at the symbol or group that would pass the bound,
    // before it is expanded (the first text would be ten billion symbols, the second two million).
    EXPECT_EQ(refusal("E(t*100000|)*100000tL"),
              "column 11: the layout expands to more than 100000 symbols; write fewer or smaller "
              "repetitions");
    EXPECT_EQ(refusal("E((t|)*1000)*1000tL"),
              "column 2: the layout expands to more than 100000 symbols; write fewer or smaller "
              "repetitions");
    // The bound itself: 100,000 symbols are read, one more is refused where it would go over.
    EXPECT_EQ(parse_megatron_layout("Et*99998L"), std::vector<int>{99998});
    EXPECT_EQ(refusal("Et*99999L"),
              "column 9: the layout expands to more than 100000 symbols; write fewer or smaller "
              "repetitions");
    // Groups nest at most 64 deep: a text of many '(' is refused at the first too many, not by
    // running out of stack.
    EXPECT_EQ(parse_megatron_layout("E" + std::string(64, '(') + "t" + std::string(64, ')') + "L"),
              std::vector<int>{1});
    EXPECT_EQ(refusal("E" + std::string(100000, '(') + "tL"),
              "column 66: groups nest deeper than 64 levels");
}

}  // namespace
}  // namespace pipelens::runtime
