// TOML files whose tables hold the values of command-line flags (`pipelens plan`'s [model],
// [cluster] and [plan]): each key is a flag's name with '_' for '-', each value a string, number
// or boolean, taken as the text the flag would have been given. The command applies the values
// whose flags were not given on the command line, so flags override the file.
//
// Invariants: only the tables and keys the caller allows are accepted; anything else (an
// unknown table or key, an array, a nested table) is an ExperimentError naming the file, line,
// column and dotted key, as experiment files' errors do.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace pipelens {

struct FlagValue {
    std::string flag;  // "gpu-memory" for [cluster] gpu_memory
    std::string text;  // "80GB", "80", "true"
};

// `allowed`: table name -> its keys (as written in the file, with '_'). `source_name` prefixes
// every error (usually the file's path).
std::vector<FlagValue> parse_flag_file(std::string_view text, const std::string& source_name,
                                       const std::map<std::string, std::set<std::string>>& allowed);
std::vector<FlagValue> read_flag_file(const std::filesystem::path& path,
                                      const std::map<std::string, std::set<std::string>>& allowed);

}  // namespace pipelens
