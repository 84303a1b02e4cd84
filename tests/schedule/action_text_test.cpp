// The Action text form: PyTorch's exact notation, round trips, and errors that name the token.
#include <gtest/gtest.h>

#include "engine/schedule/action.hpp"

namespace pipelens {
namespace {

std::string round_trip(const std::string& text) {
    std::vector<Action> parts;
    const Action action = parse_action(text, parts);
    return action_text(action, parts);
}

TEST(ActionText, PrintsPyTorchNotation) {
    EXPECT_EQ(action_text(make_action(0, ActionKind::forward, 1)), "0F1");
    EXPECT_EQ(action_text(make_action(3, ActionKind::backward_input, 0)), "3I0");
    EXPECT_EQ(action_text(make_action(2, ActionKind::backward_weight, 5)), "2W5");
    EXPECT_EQ(action_text(make_action(1, ActionKind::full_backward, 12)), "1B12");
    EXPECT_EQ(action_text(make_action(1, ActionKind::recv_forward, 0)), "1RECV_F0");
    EXPECT_EQ(action_text(make_action(0, ActionKind::send_backward, 2)), "0SEND_B2");
    EXPECT_EQ(action_text(make_action(0, ActionKind::unshard)), "0UNSHARD");
    EXPECT_EQ(action_text(make_action(4, ActionKind::reduce_grad)), "4REDUCE_GRAD");
}

TEST(ActionText, EveryKindRoundTrips) {
    for (const char* text :
         {"0F1", "3I0", "2W7", "1B3", "0SEND_F2", "1RECV_F2", "2SEND_B9", "1RECV_B9", "0UNSHARD",
          "0RESHARD", "5REDUCE_GRAD", "10F100", "(0F7;7B3)OVERLAP_F_B"})
        EXPECT_EQ(round_trip(text), text);
}

TEST(ActionText, OverlapKeepsItsPartsInThePool) {
    std::vector<Action> parts;
    const Action overlap = parse_action("(0F7;7B3)OVERLAP_F_B", parts);
    EXPECT_EQ(overlap.kind, ActionKind::overlap_forward_backward);
    ASSERT_EQ(overlap.part_count, 2);
    EXPECT_EQ(parts[overlap.link], make_action(0, ActionKind::forward, 7));
    EXPECT_EQ(parts[overlap.link + 1], make_action(7, ActionKind::full_backward, 3));
}

// A second overlap's parts go after the first's, and its link points at them.
TEST(ActionText, AppendOverlapLinksPastThePartsAlreadyPooled) {
    std::vector<Action> parts{make_action(0, ActionKind::forward, 0)};
    const std::vector<Action> own{make_action(1, ActionKind::forward, 2),
                                  make_action(3, ActionKind::backward_weight, 1)};
    const Action overlap = append_overlap(parts, own);
    EXPECT_EQ(overlap.stage, -1);
    EXPECT_EQ(overlap.kind, ActionKind::overlap_forward_backward);
    EXPECT_EQ(overlap.link, 1);
    EXPECT_EQ(overlap.part_count, 2);
    EXPECT_EQ(parts, (std::vector<Action>{make_action(0, ActionKind::forward, 0), own[0], own[1]}));
    EXPECT_EQ(action_text(overlap, parts), "(1F2;3W1)OVERLAP_F_B");
}

TEST(ActionText, ToleratesSurroundingBlanks) {
    EXPECT_EQ(round_trip(" 2F0 "), "2F0");
}

TEST(ActionText, ActionIsSixteenBytes) {
    EXPECT_EQ(sizeof(Action), 16u);
}

void expect_parse_error(const std::string& text, const std::string& fragment) {
    std::vector<Action> parts;
    try {
        parse_action(text, parts);
        FAIL() << "'" << text << "' parsed";
    } catch (const ActionParseError& error) {
        EXPECT_EQ(error.token(), text);
        EXPECT_NE(std::string(error.what()).find("'" + text + "'"), std::string::npos)
            << error.what();
        EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
    }
}

TEST(ActionText, MalformedTokensAreNamed) {
    expect_parse_error("XF1", "does not start with a stage number");
    expect_parse_error("1X1", "unknown action kind");
    expect_parse_error("1F1x", "unexpected text after the microbatch");
    expect_parse_error("1F-1", "unexpected text after the action kind");
    expect_parse_error("(0F7;7B3", "without a matching ')'");
    expect_parse_error("(0F7;7B3)F", "must be followed by OVERLAP_F_B");
    expect_parse_error("(0F7;1SEND_F0)OVERLAP_F_B", "must be compute actions");
    expect_parse_error("()OVERLAP_F_B", "has no parts");
    expect_parse_error("0OVERLAP_F_B", "takes parts in parentheses");
    expect_parse_error("99999999999F0", "number out of range");
}

}  // namespace
}  // namespace pipelens
