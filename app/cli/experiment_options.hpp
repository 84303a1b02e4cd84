// The experiment flags shared by the commands that take an experiment (simulate now; run and
// explain later): an optional TOML file, then flags that override single fields of it. The
// flags use the same units as the file, so `--f 1.5ms` and `f = "1.5ms"` mean the same.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "engine/experiment/experiment.hpp"
#include "engine/experiment/experiment_toml.hpp"

namespace pipelens::cli {

struct ExperimentOptions {
    std::string file;  // empty: the embedded default experiment
    std::optional<std::string> schedule;
    std::optional<std::string> schedule_file;
    std::optional<std::string> notation;  // the schedule file's: auto, current or legacy
    std::optional<int> pp;
    std::optional<int> v;
    std::optional<int> m;
    bool defer_recv = false;
    std::optional<std::string> max_activations;                   // "2p", "12"
    std::optional<std::string> forward, input, weight, backward;  // one value or a comma list
    std::optional<std::string> activation_bytes;
    std::optional<std::string> held_activation_bytes;
    std::optional<std::string> p2p_latency;
    std::optional<std::string> p2p_bandwidth;
    std::optional<int> ranks_per_host;
    bool rendezvous = false;
    std::optional<double> overlap_efficiency;
    std::optional<std::string> rank_slowdown;  // "1,1.8": one factor per rank
    std::optional<std::string> costs_per;      // "stage", "model", "layer"
    // The [transformer] section as flags: any of them makes (or edits) the transformer.
    struct TransformerFlags {
        std::optional<int> layers, hidden, heads, sequence, microbatch_size, vocabulary;
        std::optional<std::string> dtype;
        std::optional<double> device_tflops;
        bool any_but_layers() const {
            return hidden || heads || sequence || microbatch_size || dtype || device_tflops ||
                   vocabulary;
        }
    } transformer;
};

// An integer flag (--pp, --m, ...) read by pipelens rather than CLI11, so that a bad value is
// one message naming the flag and exit 2: not an integer, above 1,000,000,000, or below
// `minimum` ("--pp must be at least 1, got 0").
CLI::Option* add_count_option(CLI::App& command, const std::string& name,
                              std::optional<int>& target, const std::string& description,
                              int minimum);

// A ratio flag (0.2 or 20%, at most 1: engine/experiment/units.hpp parse_ratio) read by
// pipelens, so that every share a command takes is read by the one rule and a bad value is one
// message naming the flag, exit 2 ("--overlap-efficiency: 50 is above 1; did you mean 50%?").
CLI::Option* add_ratio_option(CLI::App& command, const std::string& name,
                              std::optional<double>& target, const std::string& description);
CLI::Option* add_ratio_option(CLI::App& command, const std::string& name, double& target,
                              const std::string& description);

// --layers, --hidden, ...: the [transformer] section as flags (added by add_experiment_options
// with costs).
void add_transformer_options(CLI::App& command, ExperimentOptions::TransformerFlags& flags);

// `with_costs` false: only the file and the schedule flags (for real runs).
void add_experiment_options(CLI::App& command, ExperimentOptions& options, bool with_costs = true);

// Reads the file and applies the flags. Without a file: the embedded default experiment when
// no experiment flag is given, else plain_experiment() with the flags applied. Bad values throw
// ExperimentError naming the flag. The result is not yet validated against its schedule. A
// schedule file found to be in PyTorch's older action notation is noted on stderr.
Experiment load_experiment(const ExperimentOptions& options);

// The same for a file that may hold a `[sweep]` table (`pipelens sweep`): its axes come back
// apart from the experiment.
ExperimentSweep load_experiment_sweep(const ExperimentOptions& options);
// The files the experiment reads: the experiment file, --schedule-file, and the schedule file
// the experiment file names (when it parses: one that does not is the command's error to say).
// What an output of the command must not replace.
std::vector<std::string> experiment_input_files(const ExperimentOptions& options);

// The flag in `options` that was given and sets the experiment field `key` ("schedule.pp" ->
// "--pp"); empty when none was given. A sweep axis over a field a flag fixes is a contradiction.
std::string flag_setting(const ExperimentOptions& options, const std::string& key);

// The flags given in `options` applied to `experiment`.
Experiment apply_experiment_flags(const ExperimentOptions& options, Experiment experiment);

}  // namespace pipelens::cli
