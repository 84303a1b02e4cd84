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
    std::string flag;   // "gpu-memory" for [cluster] gpu_memory
    std::string text;   // "80GB", "80", "true"
    std::string where;  // "job.toml:7:1: cluster.gpu_memory", for the flag's own errors
};

// The TOML type a key's value must have, as experiment files hold theirs: a count is an
// integer (`layers = "24"` and `layers = 24.0` are refused, not read as 24), a name or a layout
// a string, a switch true or false, a plain number an integer or float, and a quantity with a
// unit ("80GB", "70%") a string or a bare number.
enum class FlagKind { integer, number, quantity, text, boolean };

// `allowed`: table name -> its keys (as written in the file, with '_') and their kinds.
// `source_name` prefixes every error (usually the file's path).
using FlagFileKeys = std::map<std::string, std::map<std::string, FlagKind>>;
std::vector<FlagValue> parse_flag_file(std::string_view text, const std::string& source_name,
                                       const FlagFileKeys& allowed);
std::vector<FlagValue> read_flag_file(const std::filesystem::path& path,
                                      const FlagFileKeys& allowed);

}  // namespace pipelens
