// Nearest names by edit distance (nearest_names.hpp).
#include "engine/text/nearest_names.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

namespace pipelens {
namespace {

char folded(char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

std::size_t allowed_edits(std::string_view typed) {
    return std::clamp<std::size_t>(typed.size() / 3, 1, 3);
}

}  // namespace

std::size_t edit_distance(std::string_view left, std::string_view right) {
    // Three rows of the optimal-string-alignment table: two back are needed for a swap.
    const std::size_t width = right.size() + 1;
    std::vector<std::size_t> before(width), previous(width), current(width);
    for (std::size_t j = 0; j < width; ++j)
        previous[j] = j;
    for (std::size_t i = 1; i <= left.size(); ++i) {
        current[0] = i;
        for (std::size_t j = 1; j < width; ++j) {
            const bool same = folded(left[i - 1]) == folded(right[j - 1]);
            current[j] =
                std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (same ? 0 : 1)});
            if (i > 1 && j > 1 && folded(left[i - 1]) == folded(right[j - 2]) &&
                folded(left[i - 2]) == folded(right[j - 1]))
                current[j] = std::min(current[j], before[j - 2] + 1);
        }
        before.swap(previous);
        previous.swap(current);
    }
    return previous[right.size()];
}

std::vector<std::string> nearest_names(std::string_view typed,
                                       const std::vector<std::string>& candidates) {
    std::size_t best = std::numeric_limits<std::size_t>::max();
    std::vector<std::string> nearest;
    for (const std::string& candidate : candidates) {
        const std::size_t distance = edit_distance(typed, candidate);
        if (distance > allowed_edits(typed) || distance > best)
            continue;
        if (distance < best) {
            best = distance;
            nearest.clear();
        }
        if (std::find(nearest.begin(), nearest.end(), candidate) == nearest.end())
            nearest.push_back(candidate);
    }
    return nearest;
}

std::string quoted_alternatives(const std::vector<std::string>& names, std::string_view quote) {
    std::string text;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (i > 0)
            text += i + 1 == names.size() ? " or " : ", ";
        text += std::string(quote) + names[i] + std::string(quote);
    }
    return text;
}

}  // namespace pipelens
