// Model flags: registration, application to the experiment, and the runtime's view of them.
#include "app/cli/model_options.hpp"

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include <fmt/format.h>

#include "app/cli/commands.hpp"
#include "engine/schedule/schedule_size.hpp"
#include "engine/stage_plan/model_size.hpp"
#include "engine/stage_plan/stage_split.hpp"
#include "engine/text/shortened.hpp"
#include "traces/file_kind.hpp"
#include "traces/text/quantities.hpp"

namespace pipelens::cli {

void add_model_options(CLI::App& command, ModelOptions& options) {
    command.add_option("--model", options.model,
                       "mlp, example, kwargs, transformer, tied, empty, or a TorchScript .pt file");
    command.add_option("--layers", options.layers,
                       "Model layers (default: two per pipeline rank, whatever v)");
    command.add_option("--hidden", options.hidden, "Hidden size");
    command.add_option("--batch", options.batch, "Batch size (split into m microbatches)");
    command.add_option("--chunk-dim", options.chunk_dim,
                       "The dim microbatches are cut along (default 0)");
    command.add_option("--input-shape", options.input_shape,
                       "TorchScript models: one sample's shape, e.g. 64 or 16,64");
    command.add_option("--split", options.split_points,
                       "Split point: LAYER (split before it) or LAYER:end; repeatable");
    command.add_option("--seed", options.seed, "Seed for parameters and data");
}

void apply_model_options(const ModelOptions& options, Experiment& experiment) {
    ModelDescription& model = experiment.model;
    if (options.model)
        model.name = *options.model;
    if (options.layers)
        model.layers = *options.layers;
    if (options.hidden)
        model.hidden = *options.hidden;
    if (options.batch)
        model.batch_size = *options.batch;
    if (options.chunk_dim)
        model.chunk_dim = *options.chunk_dim;
    if (options.seed) {
        // A negative seed wrapped round to 2^64 - 1 and was recorded as -1.
        if (*options.seed < 0)
            throw ExperimentError(
                fmt::format("--seed (model.seed): {} is out of range (at least 0)", *options.seed));
        model.seed = static_cast<std::uint64_t>(*options.seed);
    }
    if (!options.split_points.empty())
        model.split_points = options.split_points;
    if (options.input_shape) {
        model.input_shape.clear();
        std::size_t begin = 0;
        const std::string& text = *options.input_shape;
        while (begin <= text.size()) {
            const std::size_t comma = std::min(text.find(',', begin), text.size());
            const std::string_view size = std::string_view(text).substr(begin, comma - begin);
            std::int64_t value = 0;
            // atoll read "abc" as 0 and "9e99" as 9: a size is all digits, named when it is not.
            const auto [end, error] =
                std::from_chars(size.data(), size.data() + size.size(), value);
            if (error != std::errc() || end != size.data() + size.size())
                throw ExperimentError(fmt::format(
                    "--input-shape (model.input_shape): '{}' in '{}' is not a size (a whole "
                    "number of 1 or more)",
                    shown_text(size, 24), shown_text(text, 64)));
            model.input_shape.push_back(value);
            begin = comma + 1;
        }
    }
}

namespace {

// Sizes LibTorch would refuse with an error and a C++ backtrace (or, for a negative layer
// count, that would silently mean the default): refused here, naming the option and the field.
void check_model_sizes(const ModelDescription& model) {
    const auto at_least = [](std::int64_t value, std::int64_t least, const char* option,
                             const char* field, const char* what) {
        if (value < least)
            throw ExperimentError(
                fmt::format("{} (model.{}): {} is not {}", option, field, value, what));
    };
    at_least(model.layers, 0, "--layers", "layers",
             "a layer count (0 for two per pipeline rank, or more)");
    at_least(model.hidden, 1, "--hidden", "hidden", "a hidden size (1 or more)");
    at_least(model.batch_size, 1, "--batch", "batch_size", "a batch size (1 or more)");
    at_least(model.sequence, 1, "the sequence length", "sequence", "a length (1 or more)");
    at_least(model.heads, 1, "the head count", "heads", "a head count (1 or more)");
    for (const std::int64_t size : model.input_shape)
        at_least(size, 1, "--input-shape", "input_shape", "a size (every size 1 or more)");
}

// A model file is read by LibTorch, which would block on a FIFO until a writer came and answer
// a trace with its zip reader's error: both refused here, naming the file.
void check_model_file(const std::string& name) {
    for (const char* built_in : {"mlp", "example", "kwargs", "transformer", "tied", "empty"})
        if (name == built_in)
            return;
    std::error_code error;
    const auto status = std::filesystem::status(name, error);
    if (!std::filesystem::exists(status))
        return;  // the runtime says it cannot find it, with the built-in names
    if (!std::filesystem::is_regular_file(status))
        throw ExperimentError(
            fmt::format("--model (model.name): {} is not a regular file (a "
                        "directory, FIFO, device or socket); give the "
                        "TorchScript .pt file itself",
                        name));
    if (traces::file_kind_of(name) == traces::FileKind::sqlite)
        throw ExperimentError(fmt::format(
            "--model (model.name): {} is a pipelens trace, not a TorchScript model (a .pt file "
            "from torch.jit.save)",
            name));
}

}  // namespace

run_record::PipelineRunOptions pipeline_options_for(const ModelDescription& model) {
    check_model_sizes(model);
    check_model_file(model.name);
    run_record::PipelineRunOptions run;
    run.model = model.name;
    run.layers = model.layers;
    run.hidden = model.hidden;
    run.sequence = model.sequence;
    run.heads = model.heads;
    run.input_shape = model.input_shape;
    run.seed = model.seed;
    run.split_points = model.split_points;
    run.batch_size = model.batch_size;
    run.chunk_dim = model.chunk_dim;
    return run;
}

namespace {

// The batch is built whole before it is cut into microbatches: a float32 value per element of
// each sample (a row of `hidden`, a sequence of them for the transformer, `--input-shape` for a
// TorchScript model). More than the machine has is refused here, by name, rather than by
// LibTorch's allocator ("[enforce fail at alloc_cpu.cpp]", exit 1).
// A byte count computed in double, shown as a size (held at int64's end).
std::string bytes_text(double value) {
    return format_bytes(value >= 9.2e18 ? std::numeric_limits<std::int64_t>::max()
                                        : static_cast<std::int64_t>(value));
}

void refuse_batch_too_large(const std::string& command, const ModelDescription& model) {
    double per_sample = model.name == "transformer"
                            ? static_cast<double>(model.sequence) * model.hidden
                            : static_cast<double>(model.hidden);
    if (!model.input_shape.empty()) {
        per_sample = 1;
        for (const std::int64_t size : model.input_shape)
            per_sample *= static_cast<double>(size);
    }
    const double bytes = static_cast<double>(model.batch_size) * per_sample * 4.0;
    const std::int64_t available = available_memory_bytes();
    if (bytes <= static_cast<double>(available))
        return;
    throw CommandFailure(
        kExitTooLarge,
        fmt::format("pipelens: {}: a batch of {} samples of {:.3g} values each is {} in float32, "
                    "more than the {} this machine has available: lower --batch",
                    command, model.batch_size, per_sample, bytes_text(bytes),
                    format_bytes(available)));
}

// Only the parameters, 4 bytes each in float32: a lower bound of what the copies hold, so
// what is refused surely could not run.
void refuse_parameters_too_large(const std::string& command, const Experiment& experiment,
                                 const Schedule& lowered, int ranks_here, bool reference) {
    int layers = 0;
    try {
        layers = runtime::model_layer_count(experiment.model.layers, lowered.rank_count,
                                            lowered.stage_count);
    } catch (const std::exception&) {
        return;  // the runtime refuses the layer count itself, saying why
    }
    const std::optional<double> parameters =
        runtime::builtin_parameter_count(experiment.model.name, layers, experiment.model.hidden);
    if (!parameters)
        return;
    const int copies = ranks_here + (reference ? 1 : 0);
    const double per_copy = *parameters * 4.0;
    const std::int64_t available = available_memory_bytes();
    if (per_copy * copies <= static_cast<double>(available))
        return;
    const std::string builders =
        ranks_here == 1 ? "this rank builds the whole model"
                        : fmt::format("{} ranks each build the whole model", ranks_here);
    const std::string how_many =
        copies == 1 ? fmt::format("{} builds it once", command)
                    : fmt::format("this run builds {} copies of it ({}{}), {} in all", copies,
                                  builders, reference ? ", the reference one more" : "",
                                  bytes_text(per_copy * copies));
    throw CommandFailure(
        kExitTooLarge,
        fmt::format("pipelens: {}: the {} model ({} layers, hidden {}) has {:.3g} parameters, {} "
                    "in float32; {}, more than the {} this machine has available: lower --hidden "
                    "or --layers{}",
                    command, experiment.model.name, layers, experiment.model.hidden, *parameters,
                    bytes_text(per_copy), how_many, bytes_text(static_cast<double>(available)),
                    reference ? ", or give --no-reference" : ""));
}

}  // namespace

void refuse_model_too_large(const std::string& command, const Experiment& experiment,
                            const Schedule& lowered, int ranks_here, bool reference) {
    refuse_parameters_too_large(command, experiment, lowered, ranks_here, reference);
    refuse_batch_too_large(command, experiment.model);
}

}  // namespace pipelens::cli
