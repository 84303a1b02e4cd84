// Printable-ASCII checks for the small text parsers (mesh, op call, tensor): what they accept is
// printed and written into JSON, which needs valid text, so a stray byte is refused where it
// is read, with its position, instead of failing later in a JSON writer.
#pragma once

#include <cstddef>
#include <string_view>

namespace pipelens {

// The index of the first byte outside printable ASCII (space to '~'), or npos.
inline std::size_t first_unprintable(std::string_view text) {
    for (std::size_t index = 0; index < text.size(); ++index)
        if (text[index] < ' ' || text[index] > '~')
            return index;
    return std::string_view::npos;
}

// A name such as a dtype (f32, bf16) or a mesh dimension (dp, tp): letters, digits, '_'.
inline bool is_plain_name(std::string_view text) {
    if (text.empty())
        return false;
    for (char c : text)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_'))
            return false;
    return true;
}

}  // namespace pipelens
