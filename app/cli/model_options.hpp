// The model flags shared by the commands that build a real pipeline (`run`, `explain`), applied
// on top of an experiment's [model] section, and the model part of the runtime's options.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "engine/experiment/experiment.hpp"
#include "engine/runtime/pipeline_run.hpp"
#include "engine/schedule/schedule.hpp"

namespace pipelens::cli {

struct ModelOptions {
    std::optional<std::string> model;
    std::optional<int> layers, hidden, batch, chunk_dim, seed;
    std::optional<std::string> input_shape;  // "16,64"
    std::vector<std::string> split_points;
};

void add_model_options(CLI::App& command, ModelOptions& options);

// Replaces the fields of experiment.model that a flag gives.
void apply_model_options(const ModelOptions& options, Experiment& experiment);

// PipelineRunOptions with the model fields filled from experiment.model; the rest default.
run_record::PipelineRunOptions pipeline_options_for(const ModelDescription& model);

// Every rank builds the whole model and the single-rank reference one more copy: throws
// CommandFailure (exit 3, "the work cannot fit"), its message starting "pipelens: COMMAND: ",
// when the parameters of `ranks_here` copies (and the reference's) would not fit the memory this
// machine has available, naming what to lower. A TorchScript file's size is unknown until it is
// loaded: it is not checked.
void refuse_model_too_large(const std::string& command, const Experiment& experiment,
                            const Schedule& lowered, int ranks_here, bool reference);

}  // namespace pipelens::cli
