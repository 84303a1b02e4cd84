// Kind spellings and plain action text; see action_label.hpp.
#include "traces/text/action_label.hpp"

#include <array>
#include <charconv>

namespace pipelens::text {
namespace {

constexpr std::array<std::string_view, kActionKindNames> kKindNames = {
    "F",      "I",      "W",           "B",       "SEND_F",  "RECV_F",
    "SEND_B", "RECV_B", "OVERLAP_F_B", "UNSHARD", "RESHARD", "REDUCE_GRAD",
};

void append_number(std::string& out, std::int64_t value) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
    out.append(digits, end);
}

}  // namespace

std::string_view action_kind_name(int kind) {
    return kind >= 0 && kind < kActionKindNames ? kKindNames[kind] : std::string_view("?");
}

void append_plain_action(std::string& out, std::int64_t stage, int kind, std::int64_t microbatch) {
    append_number(out, stage);
    out += action_kind_name(kind);
    if (microbatch >= 0)
        append_number(out, microbatch);
}

}  // namespace pipelens::text
