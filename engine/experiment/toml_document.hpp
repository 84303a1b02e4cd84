// Parsing a TOML document for pipelens: toml++'s parser behind one guard and one error form.
// Invariant: no text reaches toml++ with a key of more dotted parts than kDeepestTomlKey (each
// part is one more nested table, built and torn down by recursion: 40,000 parts overflowed the
// stack), and every parse error is an ExperimentError "FILE:LINE:COLUMN: what".
#pragma once

#include <string>
#include <string_view>

#include <toml++/toml.h>

namespace pipelens {

// The most dotted parts a key or table header may have; pipelens's own keys have at most 3.
inline constexpr int kDeepestTomlKey = 64;

// "LINE:COLUMN" of where `region` begins.
std::string toml_position(const toml::source_region& region);

// Throws ExperimentError naming `source` for a key deeper than kDeepestTomlKey or text that is
// not TOML.
toml::table parse_toml_document(std::string_view text, const std::string& source);

}  // namespace pipelens
