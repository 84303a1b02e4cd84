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
#include <vector>

#include "engine/experiment/experiment.hpp"

namespace pipelens {

// Parses (validate_experiment checks the values); `source_name` prefixes every error (usually the
// file path). A relative `schedule.file` is resolved against `base_directory`.
Experiment parse_experiment_toml(std::string_view text, const std::string& source_name,
                                 const std::filesystem::path& base_directory = {});
Experiment read_experiment_file(const std::filesystem::path& path);

// One field's value as a file would write it: `key` dotted ("schedule.pp", "costs.f"),
// `value` TOML value text ("4", "\"1.5ms\"", "[\"1ms\", \"2ms\"]").
struct ExperimentSetting {
    std::string key;
    std::string value;
};

// `base` with `settings` applied as if its file named them: the same checks and error texts, with
// `source_name` where the file's name would be. Not validated (validate_experiment does that).
Experiment apply_experiment_settings(const Experiment& base,
                                     const std::vector<ExperimentSetting>& settings,
                                     const std::string& source_name);

// A `[sweep]` table's key ("schedule.pp", from `pp` in `[sweep.schedule]` or `schedule.pp` in
// `[sweep]`) and the values it tries, as TOML value text; `where` is "file:line:column: sweep.KEY".
struct SweepAxisText {
    std::string key;
    std::vector<std::string> values;
    std::string where;
};

// An experiment file that may hold a `[sweep]` table: the experiment, and the table's axes in the
// file's order. The axes' keys and values are not checked here (engine/experiment/sweep_grid).
struct ExperimentSweep {
    Experiment experiment;
    std::vector<SweepAxisText> axes;
};
ExperimentSweep parse_experiment_sweep_toml(std::string_view text, const std::string& source_name,
                                            const std::filesystem::path& base_directory = {});
ExperimentSweep read_experiment_sweep_file(const std::filesystem::path& path);

// The TOML text of `experiment`, which parse_experiment_toml reads back to an equal experiment.
std::string experiment_to_toml(const Experiment& experiment);

// assets/examples/default.toml, embedded in the binary at build time.
std::string_view default_experiment_toml();

}  // namespace pipelens
