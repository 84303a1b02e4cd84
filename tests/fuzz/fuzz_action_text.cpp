// Fuzz target: one action token in PyTorch's notation (parse_action).
// Invariants: any input either parses or throws ActionParseError, nothing else; an accepted
// action prints to a text that parses back to the same action (same kind, stage, microbatch and
// parts) and prints to the same text again.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/schedule/action.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace {

using pipelens::Action;

bool same_action(const Action& left, std::span<const Action> left_parts, const Action& right,
                 std::span<const Action> right_parts) {
    if (left.kind != right.kind || left.stage != right.stage ||
        left.microbatch != right.microbatch || left.part_count != right.part_count)
        return false;
    if (left.kind != pipelens::ActionKind::overlap_forward_backward)
        return true;
    for (int index = 0; index < left.part_count; ++index)
        if (!(left_parts[left.link + index] == right_parts[right.link + index]))
            return false;
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    std::vector<Action> parts;
    Action action;
    try {
        action = pipelens::parse_action(text, parts);
    } catch (const pipelens::ActionParseError&) {
        return 0;
    }
    const std::string printed = pipelens::action_text(action, parts);
    std::vector<Action> reparsed_parts;
    Action reparsed;
    try {
        reparsed = pipelens::parse_action(printed, reparsed_parts);
    } catch (const pipelens::ActionParseError&) {
        PIPELENS_FUZZ_REQUIRE(false, "the printed text of an accepted action does not parse");
    }
    PIPELENS_FUZZ_REQUIRE(same_action(action, parts, reparsed, reparsed_parts),
                          "parse -> text -> parse changes the action");
    PIPELENS_FUZZ_REQUIRE(pipelens::action_text(reparsed, reparsed_parts) == printed,
                          "text -> parse -> text changes the text");
    return 0;
}
