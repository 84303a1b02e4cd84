// The PyTorch text of an action from integers alone: kind spellings and the one formatter used
// by the Action IR (engine/schedule) and by traces, which store what an action is as integers
// and derive its text when read. `0F1`, `1RECV_F3`, `0UNSHARD`, `(0F7;7B3)OVERLAP_F_B`.
//
// Kinds are PyTorch's, numbered as pipelens::ActionKind (0 = F ... 11 = REDUCE_GRAD); a number
// outside that range is spelled "?" so a damaged file still prints.
//
// It lives with the trace store (layer 0, which depends on nothing of ours) because the reader
// derives labels with it; every layer above includes it from here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace pipelens::text {

inline constexpr int kActionKindNames = 12;
inline constexpr int kOverlapKind = 8;  // OVERLAP_F_B: text made of its parts

std::string_view action_kind_name(int kind);

// Appends "<stage><KIND><microbatch>"; a negative microbatch is left out (FSDP actions).
void append_plain_action(std::string& out, std::int64_t stage, int kind, std::int64_t microbatch);

struct ActionPart {
    int kind = 0;
    std::int32_t stage = 0;
    std::int32_t microbatch = -1;
};

// Appends "(<part>;<part>...)OVERLAP_F_B"; `part_at(i)` gives part i as an ActionPart.
template <typename PartAt>
void append_overlap_action(std::string& out, int part_count, PartAt&& part_at) {
    out += '(';
    for (int index = 0; index < part_count; ++index) {
        if (index > 0)
            out += ';';
        const ActionPart part = part_at(index);
        append_plain_action(out, part.stage, part.kind, part.microbatch);
    }
    out += ')';
    out += action_kind_name(kOverlapKind);
}

}  // namespace pipelens::text
