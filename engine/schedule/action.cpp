// Text form of the Action IR: printing and strict parsing of PyTorch's `_Action` notation.
#include "engine/schedule/action.hpp"

#include <charconv>
#include <stdexcept>
#include <string>

#include "engine/text/shortened.hpp"
#include "traces/text/action_label.hpp"

namespace pipelens {
namespace {

static_assert(text::kActionKindNames == kActionKindCount);
static_assert(text::kOverlapKind == static_cast<int>(ActionKind::overlap_forward_backward));

// What Python's str.strip() removes in ASCII, as PyTorch's _Action.from_str strips a token.
std::string_view trim(std::string_view text) {
    constexpr std::string_view kBlank = " \t\r\n\v\f";
    const std::size_t begin = text.find_first_not_of(kBlank);
    if (begin == std::string_view::npos)
        return {};
    return text.substr(begin, text.find_last_not_of(kBlank) - begin + 1);
}

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

// Reads a non-negative decimal number at the front of `text`; returns false if there is none.
bool take_number(std::string_view& text, std::int32_t& value, std::string_view token) {
    std::size_t digits = 0;
    while (digits < text.size() && is_digit(text[digits]))
        ++digits;
    if (digits == 0)
        return false;
    auto [end, error] = std::from_chars(text.data(), text.data() + digits, value);
    if (error != std::errc() || end != text.data() + digits)
        throw ActionParseError(std::string(token), "number out of range");
    text.remove_prefix(digits);
    return true;
}

struct KindName {
    std::string_view name;
    ActionKind kind;
};

// PyTorch's older spellings: B and W were the two halves of the backward, BW the whole one.
constexpr KindName kLegacyKindNames[] = {
    {"F", ActionKind::forward},
    {"B", ActionKind::backward_input},
    {"W", ActionKind::backward_weight},
    {"BW", ActionKind::full_backward},
    {"UNSHARD", ActionKind::unshard},
    {"RESHARD", ActionKind::reshard},
    {"SEND_F", ActionKind::send_forward},
    {"RECV_F", ActionKind::recv_forward},
    {"SEND_B", ActionKind::send_backward},
    {"RECV_B", ActionKind::recv_backward},
};

// The longest kind name at the front of `text`, so "SEND_F" wins over "S..." prefixes (and
// "BW" over "B" in the legacy notation).
bool take_kind(std::string_view& text, ActionKind& kind,
               ActionNotation notation = ActionNotation::current) {
    std::size_t best_length = 0;
    const auto consider = [&](std::string_view name, ActionKind candidate) {
        if (name.size() > best_length && text.substr(0, name.size()) == name) {
            best_length = name.size();
            kind = candidate;
        }
    };
    if (notation == ActionNotation::legacy)
        for (const KindName& entry : kLegacyKindNames)
            consider(entry.name, entry.kind);
    else
        for (int index = 0; index < kActionKindCount; ++index)
            consider(text::action_kind_name(index), static_cast<ActionKind>(index));
    text.remove_prefix(best_length);
    return best_length > 0;
}

// Why a kind the other notation has is not one here; empty when it is not the other's either.
std::string other_notation_hint(std::string_view kind_text, ActionNotation notation) {
    const bool starts_bw = kind_text.substr(0, 2) == "BW";
    if (notation == ActionNotation::current && starts_bw)
        return "BW is the full backward in PyTorch's older notation (today's B); read the file in "
               "the older notation, or write B";
    if (notation == ActionNotation::legacy && !kind_text.empty() && kind_text.front() == 'I')
        return "I is today's input backward; PyTorch's older notation has no I (its B is the "
               "input backward, BW the full one), so this file is in today's notation";
    return {};
}

const char* kExpectedForm =
    "expected [stage][kind][microbatch] such as 2F0, 1RECV_F3, 0UNSHARD or "
    "(0F7;7B3)OVERLAP_F_B";

Action parse_plain_action(std::string_view text, std::string_view token, ActionNotation notation) {
    Action action;
    std::string_view rest = text;
    if (!take_number(rest, action.stage, token))
        throw ActionParseError(std::string(token), "does not start with a stage number");
    if (const std::string hint = other_notation_hint(rest, notation); !hint.empty())
        throw ActionParseError(std::string(token), hint);
    if (!take_kind(rest, action.kind, notation))
        throw ActionParseError(std::string(token),
                               notation == ActionNotation::legacy
                                   ? "unknown action kind in PyTorch's older notation (F, B, W, "
                                     "BW, SEND_F, RECV_F, SEND_B, RECV_B, UNSHARD, RESHARD)"
                                   : "unknown action kind after the stage number");
    if (action.kind == ActionKind::overlap_forward_backward)
        throw ActionParseError(std::string(token),
                               "OVERLAP_F_B takes parts in parentheses, e.g. (0F7;7B3)OVERLAP_F_B");
    if (!rest.empty() && !take_number(rest, action.microbatch, token))
        throw ActionParseError(std::string(token), "unexpected text after the action kind");
    if (!rest.empty())
        throw ActionParseError(std::string(token), "unexpected text after the microbatch");
    return action;
}

}  // namespace

ActionParseError::ActionParseError(std::string token, const std::string& why)
    // Quoted cut short: a 10 MB cell once made a 10 MB error message.
    : std::runtime_error("invalid action '" + shown_text(token, 64) + "': " + why + " (" +
                         kExpectedForm + ")"),
      token_(std::move(token)) {}

std::string_view kind_text(ActionKind kind) {
    return text::action_kind_name(static_cast<int>(kind));
}

void append_action_text(std::string& out, const Action& action, std::span<const Action> parts) {
    if (action.kind != ActionKind::overlap_forward_backward) {
        text::append_plain_action(out, action.stage, static_cast<int>(action.kind),
                                  action.microbatch);
        return;
    }
    // An overlap's link indexes the schedule's whole pool; given its own parts instead
    // (Schedule::parts_of), it would read other actions' parts or past the end.
    if (action.link < 0 || static_cast<std::size_t>(action.link) + action.part_count > parts.size())
        throw std::out_of_range("OVERLAP_F_B parts from " + std::to_string(action.link) +
                                " lie outside the " + std::to_string(parts.size()) +
                                " parts given: pass the schedule's whole pool (Schedule::parts)");
    text::append_overlap_action(out, action.part_count, [&](int index) {
        const Action& part = parts[action.link + index];
        return text::ActionPart{static_cast<int>(part.kind), part.stage, part.microbatch};
    });
}

std::string action_text(const Action& action, std::span<const Action> parts) {
    std::string out;
    append_action_text(out, action, parts);
    return out;
}

Action append_overlap(std::vector<Action>& parts, std::span<const Action> own_parts) {
    Action overlap;
    overlap.stage = -1;
    overlap.kind = ActionKind::overlap_forward_backward;
    overlap.link = static_cast<std::int32_t>(parts.size());
    overlap.part_count = static_cast<std::uint8_t>(own_parts.size());
    parts.insert(parts.end(), own_parts.begin(), own_parts.end());
    return overlap;
}

Action parse_action(std::string_view text, std::vector<Action>& parts, ActionNotation notation) {
    const std::string_view token = text;
    text = trim(text);
    if (text.empty())
        throw ActionParseError(std::string(token), "empty action");
    if (text.front() != '(')
        return parse_plain_action(text, token, notation);
    if (notation == ActionNotation::legacy)
        throw ActionParseError(std::string(token),
                               "OVERLAP_F_B is not in PyTorch's older notation, so this file is in "
                               "today's notation");

    const std::size_t close = text.find(')');
    if (close == std::string_view::npos)
        throw ActionParseError(std::string(token), "'(' without a matching ')'");
    std::string_view inside = text.substr(1, close - 1);
    std::string_view kind_part = text.substr(close + 1);
    ActionKind kind{};
    if (!take_kind(kind_part, kind) || !kind_part.empty() ||
        kind != ActionKind::overlap_forward_backward)
        throw ActionParseError(std::string(token),
                               "parts in parentheses must be followed by OVERLAP_F_B");
    if (inside.find('(') != std::string_view::npos)
        throw ActionParseError(std::string(token), "nested parentheses are not supported");

    std::vector<Action> own_parts;
    while (true) {
        const std::size_t separator = inside.find(';');
        std::string_view piece = trim(inside.substr(0, separator));
        if (!piece.empty())
            own_parts.push_back(parse_plain_action(piece, token, notation));
        if (separator == std::string_view::npos)
            break;
        inside.remove_prefix(separator + 1);
    }
    if (own_parts.empty())
        throw ActionParseError(std::string(token), "OVERLAP_F_B has no parts");
    for (const Action& part : own_parts)
        if (!is_compute(part.kind))
            throw ActionParseError(std::string(token),
                                   "OVERLAP_F_B parts must be compute actions (F, I, W, B)");
    if (own_parts.size() > 255)
        throw ActionParseError(std::string(token), "too many parts");

    return append_overlap(parts, own_parts);
}

}  // namespace pipelens
