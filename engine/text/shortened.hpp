// Text quoted back in an error message, cut short: a message names what it refuses, but a
// crafted or runaway input (a 100,000-character layout, a huge JSON string) must not make the
// message itself huge.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace pipelens {

// `text` as it is when it has at most `most` characters (at least 4), else its start and "...",
// `most` characters in all.
inline std::string shortened(std::string_view text, std::size_t most) {
    if (text.size() <= most)
        return std::string(text);
    return std::string(text.substr(0, most - 3)) + "...";
}

// `text` as a message may quote it: cut short as shortened() does, and every byte outside
// printable ASCII written as \xNN (a NUL byte once ended a message where it stood).
inline std::string shown_text(std::string_view text, std::size_t most) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (const char c : text.substr(0, text.size() <= most ? most : most - 3)) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte < ' ' || byte > '~')
            out += std::string("\\x") + kHex[byte >> 4] + kHex[byte & 15];
        else
            out += c;
    }
    return text.size() <= most ? out : out + "...";
}

}  // namespace pipelens
