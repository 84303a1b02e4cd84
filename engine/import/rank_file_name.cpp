// A rank word must not be the end of another word ("frankly1" is not rank 1); trailing digits
// are only trusted where the format's own writer names files that way.
#include "engine/import/rank_file_name.hpp"

#include <cctype>
#include <charconv>
#include <limits>

namespace pipelens::import {
namespace {

std::optional<int> number_at(std::string_view text) {
    int value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end == text.data())
        return std::nullopt;
    return value;
}

bool is_letter(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) != 0;
}
bool is_digit(char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

std::optional<int> after_rank_word(std::string_view name) {
    for (std::size_t at = 0; at + 4 <= name.size(); ++at) {
        std::string_view word = name.substr(at, 4);
        const bool rank = (word[0] == 'r' || word[0] == 'R') && word.substr(1) == "ank";
        if (!rank || (at > 0 && is_letter(name[at - 1])))
            continue;
        std::size_t digits = at + 4;
        if (digits < name.size() && (name[digits] == '_' || name[digits] == '-'))
            ++digits;
        if (digits < name.size() && is_digit(name[digits]))
            return number_at(name.substr(digits));
    }
    return std::nullopt;
}

std::optional<int> trailing_digits(std::string_view name) {
    for (const std::string_view extension : {".pkl", ".pickle", ".json"})
        if (name.size() > extension.size() && name.ends_with(extension))
            name.remove_suffix(extension.size());
    std::size_t digits = 0;
    while (digits < name.size() && is_digit(name[name.size() - 1 - digits]))
        ++digits;
    if (digits == 0)
        return std::nullopt;
    // All of them: the last nine of a timestamp once made a rank. One past int reads as the
    // largest int, which no job has, so the caller refuses it instead of guessing.
    return number_at(name.substr(name.size() - digits)).value_or(std::numeric_limits<int>::max());
}

}  // namespace

std::optional<int> rank_from_file_name(std::string_view path, RankNaming naming) {
    const std::string_view name = path.substr(path.find_last_of('/') + 1);  // npos + 1 == 0
    if (const auto rank = after_rank_word(name))
        return rank;
    if (naming == RankNaming::rank_word_or_trailing)
        return trailing_digits(name);
    return std::nullopt;
}

}  // namespace pipelens::import
