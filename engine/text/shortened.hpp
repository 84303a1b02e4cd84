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

}  // namespace pipelens
