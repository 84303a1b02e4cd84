// Experiments as TOML files: reading (strict: unknown keys and wrong types are errors that
// name the file, line, column and key, because a typo silently ignored is a wrong
// simulation) and writing the effective experiment back out, which a run stores in its trace
// so it can be repeated exactly.
//
// Durations are microseconds unless a unit is given ("1.5ms"); bandwidths GB/s unless given;
// sizes bytes unless given ("16MiB"). Per-stage quantities take one value or a list with one
// value per stage.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "engine/experiment/experiment.hpp"

namespace pipelens {

// Parses (validate_experiment checks the values); `source_name` prefixes every error (usually the
// file path). A relative `schedule.file` is resolved against `base_directory`.
Experiment parse_experiment_toml(std::string_view text, const std::string& source_name,
                                 const std::filesystem::path& base_directory = {});
Experiment read_experiment_file(const std::filesystem::path& path);

// The TOML text of `experiment`, which parse_experiment_toml reads back to an equal experiment.
std::string experiment_to_toml(const Experiment& experiment);

// assets/examples/default.toml, embedded in the binary at build time.
std::string_view default_experiment_toml();

}  // namespace pipelens
