// What `pipelens sweep` and `pipelens merge` both do with ranked results: the table on the
// terminal, --json / --csv files (or standard output with "-"), the --png / --svg picture, and
// the CI gates on every simulated configuration.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "app/cli/ci_gates.hpp"
#include "sim/sweep_results.hpp"

namespace pipelens::cli {

struct SweepOutputOptions {
    std::optional<std::string> json, csv, png, svg;
    std::optional<int> top;
};

void add_sweep_output_options(CLI::App& command, SweepOutputOptions& options);
// Refuses (exit 2) two outputs on standard output, before any work.
// Before any work: standard output taken once, pictures to files, and no output over an input,
// a trace or another output (refuse_outputs).
void check_sweep_outputs(const SweepOutputOptions& options, const std::string& command,
                         const std::vector<std::string>& inputs = {});
// What a sweep or merge writes besides its trace, as (option, path) pairs: the files a --junit
// report must not name.
std::vector<std::pair<std::string, std::string>> sweep_output_files(
    const SweepOutputOptions& options, const std::optional<std::string>& trace);

// `heading` and the table go to standard output, or to standard error when a file goes there.
void write_sweep_outputs(const sim::SweepResults& results, const SweepOutputOptions& options,
                         const std::string& heading);

// A grid none of whose configurations simulated is a failed command, after its outputs say
// why: exit 3 when every one was too large for this machine's memory, else exit 2. One shard of
// a job array whose part simulated nothing only says so (exit 0): that is a configuration's
// outcome, and `merge` judges the whole grid.
void refuse_empty_ranking(const sim::SweepResults& results, const std::string& command);

// Every simulated configuration is one gated subject (one JUnit test case per gate).
void enforce_sweep_gates(const sim::SweepResults& results, const GateLimits& limits,
                         const GateOptions& options, const std::string& suite);

}  // namespace pipelens::cli
