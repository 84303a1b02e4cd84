// "Did you mean": the known names closest to a mistyped one, for every lookup a user can
// mistype (commands, flags, schedule kinds). One definition, so every such message suggests by
// the same rule.
//
// Invariants: comparison ignores case; distance is the optimal-string-alignment edit distance
// (insert, delete, replace, or swap two neighbours: each costs 1), so "1FB1" is one edit from
// "1F1B"; a name is suggested only when it is within a third of the typed length (at least 1,
// at most 3 edits) and no other name is closer; ties keep the candidates' order.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pipelens {

std::size_t edit_distance(std::string_view left, std::string_view right);

// The closest candidates to `typed` (several on a tie), or none when none is close enough.
std::vector<std::string> nearest_names(std::string_view typed,
                                       const std::vector<std::string>& candidates);

// "'simulate'" or "'1F1B' or 'GPipe'", each name between `quote`s; empty for no names.
std::string quoted_alternatives(const std::vector<std::string>& names, std::string_view quote);

}  // namespace pipelens
