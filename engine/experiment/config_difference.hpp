// Where two runs' configurations differ, as a user reads it: the first setting (tables and keys
// in name order, as pipelens writes them) that one sets and the other leaves out or sets to
// another value. A run records its
// configuration as TOML (experiment_toml_writer); runs pooled as repeats of one configuration
// (calibrate, diff) must record the same one, and a refusal names the setting that is not.
//
// Invariant: two configurations differ here exactly when their TOML values differ; formatting
// (key order, spacing, quoting) never counts, and text that is not TOML compares as text.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace pipelens {

struct ConfigDifference {
    std::string setting;                     // "[model] hidden"; empty when a text is not TOML
    std::optional<std::string> value;        // as the first configuration sets it, TOML-written
    std::optional<std::string> other_value;  // as the other sets it; nullopt: not set there
};

std::optional<ConfigDifference> config_difference(std::string_view config, std::string_view other);

// "[model] hidden is 128 where run 1 has 64", `other_name` naming the other configuration.
std::string describe_difference(const ConfigDifference& difference, std::string_view other_name);

}  // namespace pipelens
