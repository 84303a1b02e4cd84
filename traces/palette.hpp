// The colours of every picture of a trace — the viewer's timeline and the SVG export — so a kind
// reads the same everywhere. Action colours are the Okabe-Ito palette, which stays apart under
// the common colour-vision deficiencies: F blue, I sky blue, W bluish green, B vermillion,
// sends yellow, receives orange, OVERLAP_F_B reddish purple, FSDP actions grey.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace pipelens::palette {

struct Rgb {
    unsigned char r, g, b;
};

// By ActionKind: F, I, W, B, SEND_F, RECV_F, SEND_B, RECV_B, OVERLAP_F_B, UNSHARD, RESHARD,
// REDUCE_GRAD.
inline constexpr std::array<Rgb, 12> kActionColours = {{
    {0, 114, 178},
    {86, 180, 233},
    {0, 158, 115},
    {213, 94, 0},
    {240, 228, 66},
    {230, 159, 0},
    {240, 228, 66},
    {230, 159, 0},
    {204, 121, 167},
    {153, 153, 153},
    {153, 153, 153},
    {153, 153, 153},
}};
inline constexpr Rgb kUnknownKind = {153, 153, 153};

inline Rgb action_colour(int kind) {
    return kind >= 0 && kind < static_cast<int>(kActionColours.size())
               ? kActionColours[static_cast<std::size_t>(kind)]
               : kUnknownKind;
}

// "#0072b2"
inline std::string hex(Rgb colour) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string text = "#";
    for (unsigned char channel : {colour.r, colour.g, colour.b}) {
        text += kDigits[channel >> 4];
        text += kDigits[channel & 15];
    }
    return text;
}

}  // namespace pipelens::palette
