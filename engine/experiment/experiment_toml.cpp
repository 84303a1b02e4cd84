// Experiment TOML reading; writing is experiment_toml_writer.cpp, flag files flag_file.cpp.
// Each TOML table is read through a FieldReader that knows the table's path, marks the keys it
// consumed and refuses the rest, so every error names file:line:column and the dotted key. These
// three and toml_document.cpp are the only translation units that include toml++.
#include "engine/experiment/experiment_toml.hpp"

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <new>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "engine/experiment/toml_document.hpp"
#include "engine/experiment/units.hpp"
#include "engine/schedule/schedule_csv.hpp"
#include "engine/text/shortened.hpp"
#include "engine/text/text_file.hpp"

namespace pipelens {
namespace {

class FieldReader {
  public:
    FieldReader(const toml::table& table, std::string prefix, const std::string& source)
        : table_(table), prefix_(std::move(prefix)), source_(source) {}

    [[noreturn]] void fail(const toml::node& node, std::string_view key,
                           const std::string& why) const {
        fail_at(node.source(), key, why);
    }

    [[noreturn]] void fail_at(const toml::source_region& where, std::string_view key,
                              const std::string& why) const {
        throw ExperimentError(fmt::format("{}:{}: {}{}: {}", source_, toml_position(where), prefix_,
                                          shortened(key, 64), why));
    }

    const std::string& source() const { return source_; }

    const toml::node* take(std::string_view key) {
        used_.insert(std::string(key));
        return table_.get(key);
    }

    void integer(std::string_view key, int& out, int minimum, int maximum = 1'000'000'000) {
        if (const toml::node* node = take(key)) {
            const auto value = node->value_exact<std::int64_t>();
            if (!value)
                fail(*node, key, "expected an integer");
            if (*value < minimum || *value > maximum)
                fail(*node, key,
                     fmt::format("{} is out of range ({} to {})", *value, minimum, maximum));
            out = static_cast<int>(*value);
        }
    }

    void number(std::string_view key, double& out) {
        if (const toml::node* node = take(key)) {
            const auto value = node->value<double>();
            if (!value)
                fail(*node, key, "expected a number");
            out = *value;
        }
    }

    void boolean(std::string_view key, bool& out) {
        if (const toml::node* node = take(key)) {
            const auto value = node->value_exact<bool>();
            if (!value)
                fail(*node, key, "expected true or false");
            out = *value;
        }
    }

    void text(std::string_view key, std::string& out) {
        if (const toml::node* node = take(key)) {
            const auto value = node->value_exact<std::string>();
            if (!value)
                fail(*node, key, "expected a string");
            out = *value;
        }
    }

    // A string naming one of a few choices: `parse` takes the text and throws Error, whose message
    // says what it takes, for any other; `expected` says it where the value is not a string.
    template <typename Error, typename Parse>
    void choice(std::string_view key, std::string_view expected, Parse parse) {
        if (const toml::node* node = take(key)) {
            const auto text = node->value_exact<std::string>();
            if (!text)
                fail(*node, key, fmt::format("expected {}", expected));
            try {
                parse(*text);
            } catch (const Error& error) {
                fail(*node, key, error.what());
            }
        }
    }

    // A quantity given as a bare number (in the default unit) or a string with a unit.
    template <typename Result>
    Result quantity(const toml::node& node, std::string_view key,
                    Result (*parse)(std::string_view)) const {
        try {
            if (const auto text = node.value_exact<std::string>())
                return parse(*text);
            if (const auto integer = node.value_exact<std::int64_t>())  // past a double's 2^53
                return parse(fmt::format("{}", *integer));
            if (const auto number = node.value<double>())
                return parse(fmt::format("{}", *number));
        } catch (const UnitParseError& error) {
            fail(node, key, error.what());
        }
        fail(node, key, "expected a number or a string with a unit");
    }

    void duration(std::string_view key, std::int64_t& out) {
        if (const toml::node* node = take(key))
            out = quantity(*node, key, parse_duration_ns);
    }

    // A share of a whole, as the command line takes it: 0.6 or "60%"; 60 is refused here, with
    // its place in the file, as "did you mean 60%?".
    void ratio(std::string_view key, double& out) {
        if (const toml::node* node = take(key))
            out = quantity(*node, key, parse_ratio);
    }

    // Positive: 0 once meant an unlimited link, which is now said by leaving the key out.
    void bandwidth(std::string_view key, double& out) {
        if (const toml::node* node = take(key)) {
            out = quantity(*node, key, parse_bandwidth_bytes_per_ns);
            if (!(out > 0))
                fail(*node, key,
                     "bandwidth must be positive; leave the key out for unlimited links");
        }
    }

    // One value or a list of values (one per stage) of a quantity.
    void per_stage(std::string_view key, std::vector<std::int64_t>& out,
                   std::int64_t (*parse)(std::string_view)) {
        const toml::node* node = take(key);
        if (!node)
            return;
        out.clear();
        if (const toml::array* array = node->as_array()) {
            if (array->empty())
                fail(*node, key, "the list is empty (give one value, or one per stage)");
            for (const toml::node& element : *array)
                out.push_back(quantity(element, key, parse));
            return;
        }
        out.push_back(quantity(*node, key, parse));
    }

    void texts(std::string_view key, std::vector<std::string>& out, std::string_view example) {
        const toml::node* node = take(key);
        if (!node)
            return;
        const toml::array* array = node->as_array();
        if (!array)
            fail(*node, key, fmt::format("expected a list of strings such as \"{}\"", example));
        out.clear();
        for (const toml::node& element : *array) {
            const auto text = element.value_exact<std::string>();
            if (!text)
                fail(element, key, fmt::format("expected strings such as \"{}\"", example));
            out.push_back(*text);
        }
    }

    void numbers(std::string_view key, std::vector<double>& out) {
        const toml::node* node = take(key);
        if (!node)
            return;
        const toml::array* array = node->as_array();
        if (!array)
            fail(*node, key, "expected a list of numbers");
        out.clear();
        for (const toml::node& element : *array) {
            const auto value = element.value<double>();
            if (!value)
                fail(element, key, "expected numbers");
            out.push_back(*value);
        }
    }

    void integers(std::string_view key, std::vector<int>& out) {
        const toml::node* node = take(key);
        if (!node)
            return;
        const toml::array* array = node->as_array();
        if (!array)
            fail(*node, key, "expected a list of integers");
        out.clear();
        for (const toml::node& element : *array) {
            const auto value = element.value_exact<std::int64_t>();
            if (!value || *value < 0)
                fail(element, key, "expected non-negative integers");
            out.push_back(static_cast<int>(*value));
        }
    }

    const toml::table* subtable(std::string_view key) {
        const toml::node* node = take(key);
        if (!node)
            return nullptr;
        if (!node->is_table())
            fail(*node, key, "expected a table ([" + prefix_ + std::string(key) + "])");
        return node->as_table();
    }

    // Every key of the table must have been consumed.
    void finish() const {
        for (const auto& [key, node] : table_)
            if (!used_.contains(std::string(key.str())))
                fail_at(key.source(), key.str(), "unknown key");
    }

  private:
    const toml::table& table_;
    std::string prefix_;
    const std::string& source_;
    std::set<std::string> used_;
};

void read_schedule(FieldReader& fields, Experiment& experiment,
                   const std::filesystem::path& base_directory) {
    std::string kind;
    fields.text("kind", kind);
    if (!kind.empty()) {
        try {
            experiment.shape.kind = parse_schedule_kind(kind);
        } catch (const ScheduleConfigError& error) {
            fields.fail(*fields.take("kind"), "kind", error.what());
        }
        experiment.shape.stages_per_rank = is_multi_stage(experiment.shape.kind) ? 2 : 1;
    }
    fields.text("file", experiment.schedule_file);
    // Each gives the schedule, as --schedule and --schedule-file do: the kind beside a file was
    // ignored without a word.
    if (!kind.empty() && !experiment.schedule_file.empty()) {
        // The file may be the base's (apply_experiment_settings) rather than this document's.
        const toml::node* file = fields.take("file");
        fields.fail(file != nullptr ? *file : *fields.take("kind"),
                    file != nullptr ? "file" : "kind",
                    fmt::format("\"{}\" and kind = \"{}\" each give the schedule: keep one",
                                experiment.schedule_file, kind));
    }
    fields.choice<ScheduleFileError>("notation", "\"auto\", \"current\" or \"legacy\"",
                                     [&](const std::string& text) {
                                         experiment.schedule_notation = parse_notation_choice(text);
                                     });
    if (!experiment.schedule_file.empty() && !base_directory.empty() &&
        std::filesystem::path(experiment.schedule_file).is_relative())
        experiment.schedule_file = (base_directory / experiment.schedule_file).string();
    if (const toml::node* pp = fields.take("pp"))
        experiment.rank_count_source =
            fmt::format("{}:{}: schedule.pp", fields.source(), toml_position(pp->source()));
    if (const toml::node* v = fields.take("v"))
        experiment.stages_per_rank_source =
            fmt::format("{}:{}: schedule.v", fields.source(), toml_position(v->source()));
    if (const toml::node* m = fields.take("m"))
        experiment.microbatch_count_source =
            fmt::format("{}:{}: schedule.m", fields.source(), toml_position(m->source()));
    fields.integer("pp", experiment.shape.rank_count, 1);
    fields.integer("v", experiment.shape.stages_per_rank, 1);
    fields.integer("m", experiment.shape.microbatch_count, 1);
    fields.boolean("defer_recv", experiment.defer_receives);
    if (const toml::node* limit = fields.take("max_activations")) {
        std::string text;
        if (const auto count = limit->value_exact<std::int64_t>())
            text = std::to_string(*count);
        else if (const auto written = limit->value_exact<std::string>())
            text = *written;
        else
            fields.fail(*limit, "max_activations", "expected a count or a string like \"2p\"");
        try {
            experiment.max_activations = parse_activation_limit(text);
        } catch (const ExperimentError& error) {
            fields.fail(*limit, "max_activations", error.what());
        }
    }
    fields.finish();
}

void read_costs(FieldReader& fields, Experiment& experiment) {
    fields.choice<ExperimentError>(
        "per", "a string: \"stage\", \"model\" or \"layer\"",
        [&](const std::string& text) { experiment.cost_scope = parse_cost_scope(text); });
    fields.per_stage("f", experiment.forward_ns, parse_duration_ns);
    fields.per_stage("i", experiment.input_ns, parse_duration_ns);
    fields.per_stage("w", experiment.weight_ns, parse_duration_ns);
    fields.per_stage("b", experiment.backward_ns, parse_duration_ns);
    fields.per_stage("activation_bytes", experiment.activation_bytes, parse_byte_count);
    fields.per_stage("held_activation_bytes", experiment.held_activation_bytes, parse_byte_count);
    fields.ratio("overlap_efficiency", experiment.overlap_efficiency);
    fields.numbers("rank_slowdown", experiment.rank_slowdown);
    fields.duration("unshard", experiment.unshard_ns);
    fields.duration("reshard", experiment.reshard_ns);
    fields.duration("reduce_grad", experiment.reduce_grad_ns);
    fields.finish();
}

void read_transformer(FieldReader& fields, Experiment& experiment) {
    TransformerSpec spec = experiment.transformer.value_or(TransformerSpec{});
    fields.integer("layers", spec.layers, 1);
    fields.integers("layers_per_stage", spec.layers_per_stage);
    fields.integer("hidden", spec.hidden, 1);
    fields.integer("sequence", spec.sequence, 1);
    fields.integer("microbatch_size", spec.microbatch_size, 1);
    fields.integer("heads", spec.heads, 1);
    fields.text("dtype", spec.dtype);
    fields.number("device_tflops", spec.device_tflops);
    fields.integer("vocabulary", spec.vocabulary, 0);
    fields.finish();
    experiment.transformer = std::move(spec);
}

void read_network(FieldReader& fields, Experiment& experiment) {
    std::int64_t latency = -1;
    double bandwidth = -1;
    fields.duration("latency", latency);
    fields.bandwidth("bandwidth", bandwidth);
    if (latency >= 0)
        experiment.intra_host.latency_ns = experiment.inter_host.latency_ns = latency;
    if (bandwidth >= 0)
        experiment.intra_host.bytes_per_ns = experiment.inter_host.bytes_per_ns = bandwidth;
    fields.duration("intra_host_latency", experiment.intra_host.latency_ns);
    fields.bandwidth("intra_host_bandwidth", experiment.intra_host.bytes_per_ns);
    fields.duration("inter_host_latency", experiment.inter_host.latency_ns);
    fields.bandwidth("inter_host_bandwidth", experiment.inter_host.bytes_per_ns);
    fields.integer("ranks_per_host", experiment.ranks_per_host, 1);
    fields.boolean("rendezvous", experiment.rendezvous);
    fields.duration("send_issue", experiment.send_issue_ns);
    fields.boolean("posted_receive_buffers", experiment.posted_receive_buffers);
    fields.finish();
}

void read_layers(FieldReader& fields, Experiment& experiment) {
    LayerCosts& layers = experiment.layers ? *experiment.layers : experiment.layers.emplace();
    fields.texts("names", layers.names, "layers.0");
    fields.per_stage("f", layers.forward_ns, parse_duration_ns);
    fields.per_stage("i", layers.input_ns, parse_duration_ns);
    fields.per_stage("w", layers.weight_ns, parse_duration_ns);
    fields.per_stage("b", layers.backward_ns, parse_duration_ns);
    fields.per_stage("held_bytes", layers.held_bytes, parse_byte_count);
    fields.per_stage("output_bytes", layers.output_bytes, parse_byte_count);
    fields.per_stage("gradient_bytes", layers.gradient_bytes, parse_byte_count);
    fields.per_stage("backward_peak_bytes", layers.backward_peak_bytes, parse_byte_count);
    fields.per_stage("input_kept_bytes", layers.input_kept_bytes, parse_byte_count);
    for (auto [prefix, extra] :
         {std::pair{"stage_", &layers.stage_overhead}, std::pair{"loss_", &layers.loss}}) {
        const std::string key = prefix;
        fields.duration(key + "f", extra->forward_ns);
        fields.duration(key + "i", extra->input_ns);
        fields.duration(key + "w", extra->weight_ns);
        fields.duration(key + "b", extra->backward_ns);
        if (const toml::node* node = fields.take(key + "held_bytes"))
            extra->held_bytes = fields.quantity(*node, key + "held_bytes", parse_byte_count);
        if (const toml::node* node = fields.take(key + "kept_bytes"))
            extra->kept_bytes = fields.quantity(*node, key + "kept_bytes", parse_byte_count);
        if (const toml::node* node = fields.take(key + "input_kept_bytes"))
            extra->input_kept_bytes =
                fields.quantity(*node, key + "input_kept_bytes", parse_byte_count);
    }
    fields.finish();
}

void read_model(FieldReader& fields, Experiment& experiment) {
    ModelDescription& model = experiment.model;
    fields.text("name", model.name);
    fields.integer("layers", model.layers, 0);
    fields.integer("hidden", model.hidden, 1);
    fields.integer("sequence", model.sequence, 1);
    fields.integer("heads", model.heads, 1);
    std::vector<int> shape;
    fields.integers("input_shape", shape);
    model.input_shape.assign(shape.begin(), shape.end());
    fields.texts("split_points", model.split_points, "layers.3");
    fields.integer("batch_size", model.batch_size, 1);
    fields.integer("chunk_dim", model.chunk_dim, 0);
    int seed = 0;
    fields.integer("seed", seed, 0);
    model.seed = static_cast<std::uint64_t>(seed);
    fields.finish();
}

void read_run(FieldReader& fields, Experiment& experiment) {
    fields.choice<ExperimentError>("transport", "\"local\", \"gloo\" or \"nccl\"",
                                   [&](const std::string& text) {
                                       check_transport_name(text);
                                       experiment.run.transport = text;
                                   });
    fields.duration("timeout", experiment.run.timeout_ns);
    fields.finish();
}

void read_jitter(FieldReader& fields, Experiment& experiment) {
    JitterSpec& jitter = experiment.jitter ? *experiment.jitter : experiment.jitter.emplace();
    fields.numbers("quantiles", jitter.quantiles);
    fields.numbers("step_quantiles", jitter.step_quantiles);
    fields.choice<ExperimentError>(
        "centre", "a string: \"mean\" or \"median\"",
        [&](const std::string& text) { jitter.centre = parse_jitter_centre(text); });
    fields.integer("draws", jitter.draws, 1, kMostJitterDraws);
    fields.integer("seed", jitter.seed, 0);
    fields.finish();
}

void read_section(FieldReader& top, std::string_view key, const std::string& source,
                  const std::function<void(FieldReader&)>& read) {
    if (const toml::table* table = top.subtable(key)) {
        FieldReader fields(*table, std::string(key) + ".", source);
        read(fields);
    }
}

}  // namespace

namespace {

toml::table parse_document(std::string_view text, const std::string& source_name) {
    return parse_toml_document(text, source_name);
}

// Reads `document`'s tables into `experiment`: a field the document does not name keeps its value.
void read_document(const toml::table& document, Experiment& experiment,
                   const std::string& source_name, const std::filesystem::path& base_directory) {
    FieldReader top(document, "", source_name);
    top.text("name", experiment.name);
    read_section(top, "schedule", source_name,
                 [&](FieldReader& fields) { read_schedule(fields, experiment, base_directory); });
    read_section(top, "costs", source_name,
                 [&](FieldReader& fields) { read_costs(fields, experiment); });
    read_section(top, "transformer", source_name,
                 [&](FieldReader& fields) { read_transformer(fields, experiment); });
    read_section(top, "layers", source_name,
                 [&](FieldReader& fields) { read_layers(fields, experiment); });
    read_section(top, "network", source_name,
                 [&](FieldReader& fields) { read_network(fields, experiment); });
    read_section(top, "model", source_name,
                 [&](FieldReader& fields) { read_model(fields, experiment); });
    read_section(top, "run", source_name,
                 [&](FieldReader& fields) { read_run(fields, experiment); });
    read_section(top, "jitter", source_name,
                 [&](FieldReader& fields) { read_jitter(fields, experiment); });
    top.finish();
}

// "SOURCE:LINE:COLUMN: why" -> "SOURCE: why": a position in a document pipelens wrote itself
// would point nowhere the user can look.
std::string without_position(std::string message, const std::string& source_name) {
    const std::size_t after_source = source_name.size();
    if (message.compare(0, after_source, source_name) != 0 || message.size() <= after_source ||
        message[after_source] != ':')
        return message;
    const std::size_t end = message.find(": ", after_source + 1);
    if (end == std::string::npos ||
        message.find_first_not_of("0123456789:", after_source) != end + 1)
        return message;
    return message.erase(after_source, end - after_source);
}

Experiment fresh_experiment(const std::string& source_name) {
    Experiment experiment;
    experiment.source = source_name;
    experiment.shape.rank_count = 0;  // required: validate_experiment names what is missing
    experiment.shape.microbatch_count = 0;
    return experiment;
}

// A sweep axis's values as TOML value text; `where` is the key's position in the file.
SweepAxisText sweep_axis(const toml::node& node, const std::string& key,
                         const std::string& source_name) {
    const std::string where =
        fmt::format("{}:{}: sweep.{}", source_name, toml_position(node.source()), key);
    const toml::array* values = node.as_array();
    if (!values || values->empty())
        throw ExperimentError(where + ": expected a non-empty list of the values to try");
    SweepAxisText axis{key, {}, where};
    for (const toml::node& value : *values) {
        std::ostringstream text;
        value.visit([&](const auto& element) { text << element; });
        axis.values.push_back(text.str());
    }
    return axis;
}

// [sweep]'s keys, dotted where they name a table ("schedule.pp"), in the file's order.
void collect_sweep_axes(const toml::table& table, const std::string& prefix,
                        const std::string& source_name, std::vector<SweepAxisText>& axes) {
    std::vector<std::pair<std::string, const toml::node*>> entries;
    for (const auto& [key, node] : table)
        entries.emplace_back(std::string(key.str()), &node);
    std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
        const toml::source_position& first = a.second->source().begin;
        const toml::source_position& second = b.second->source().begin;
        return std::pair{first.line, first.column} < std::pair{second.line, second.column};
    });
    for (const auto& [key, node] : entries) {
        if (const toml::table* nested = node->as_table())
            collect_sweep_axes(*nested, prefix + key + ".", source_name, axes);
        else
            axes.push_back(sweep_axis(*node, prefix + key, source_name));
    }
}

}  // namespace

Experiment parse_experiment_toml(std::string_view text, const std::string& source_name,
                                 const std::filesystem::path& base_directory) {
    const toml::table document = parse_document(text, source_name);
    Experiment experiment = fresh_experiment(source_name);
    read_document(document, experiment, source_name, base_directory);
    return experiment;
}

ExperimentSweep parse_experiment_sweep_toml(std::string_view text, const std::string& source_name,
                                            const std::filesystem::path& base_directory) {
    toml::table document = parse_document(text, source_name);
    ExperimentSweep sweep{fresh_experiment(source_name), {}};
    if (const toml::node* node = document.get("sweep")) {
        const toml::table* table = node->as_table();
        if (!table)
            throw ExperimentError(fmt::format("{}:{}: sweep: expected a table of keys and lists",
                                              source_name, toml_position(node->source())));
        collect_sweep_axes(*table, "", source_name, sweep.axes);
        document.erase("sweep");
    }
    read_document(document, sweep.experiment, source_name, base_directory);
    return sweep;
}

Experiment apply_experiment_settings(const Experiment& base,
                                     const std::vector<ExperimentSetting>& settings,
                                     const std::string& source_name) {
    // Grouped by table and written as a small document, so the settings pass exactly the checks
    // a file's fields do.
    std::map<std::string, std::string> tables;
    std::string top_level;
    for (const ExperimentSetting& setting : settings) {
        const std::size_t dot = setting.key.find('.');
        if (dot == std::string::npos)
            top_level += fmt::format("{} = {}\n", setting.key, setting.value);
        else
            tables[setting.key.substr(0, dot)] +=
                fmt::format("{} = {}\n", setting.key.substr(dot + 1), setting.value);
    }
    std::string text = top_level;
    for (const auto& [table, lines] : tables)
        text += fmt::format("[{}]\n{}", table, lines);
    Experiment experiment = base;
    // A kind set here replaces a schedule file the base was read from (a grid or sweep of kinds
    // over a file's experiment): the two would each give the schedule. pp, v and m stay as the
    // file gave them, no longer tied to it.
    if (std::any_of(settings.begin(), settings.end(), [](const ExperimentSetting& setting) {
            return setting.key == "schedule.kind";
        })) {
        experiment.schedule_file.clear();
        experiment.schedule_notation.reset();
    }
    try {
        read_document(parse_document(text, source_name), experiment, source_name, {});
    } catch (const ExperimentError& error) {
        throw ExperimentError(without_position(error.what(), source_name));
    }
    // Another m is set as --m sets it (set_microbatch_count), unless the batch is set too.
    const bool batch_given = std::any_of(
        settings.begin(), settings.end(),
        [](const ExperimentSetting& setting) { return setting.key == "model.batch_size"; });
    if (const int m = experiment.shape.microbatch_count;
        m != base.shape.microbatch_count && !batch_given) {
        experiment.shape.microbatch_count = base.shape.microbatch_count;
        set_microbatch_count(experiment, m);
    }
    return experiment;
}

namespace {

// The whole file; `cannot_open` ends the error when it cannot be opened ("cannot open ...").
std::string file_text(const std::filesystem::path& path, std::string_view cannot_open) {
    try {
        return read_text_file(path);
    } catch (const TextFileError& error) {
        if (error.problem() == TextFileError::Problem::cannot_open)
            throw ExperimentError(fmt::format("{}: {}", path.string(), cannot_open));
        throw;
    }
}

}  // namespace

namespace {

// Parsing takes many times the file's size (every value a node): a file of tens of millions of
// values can pass what the machine has, which is a file too large, named, not "std::bad_alloc".
template <typename Parse>
auto parse_within_memory(const std::filesystem::path& path, const std::string& text,
                         const Parse& parse) {
    try {
        return parse(text);
    } catch (const std::bad_alloc&) {
        throw TextFileError(TextFileError::Problem::too_large,
                            fmt::format("{}: not enough memory to read its {} bytes of TOML",
                                        path.string(), text.size()));
    }
}

}  // namespace

Experiment read_experiment_file(const std::filesystem::path& path) {
    return parse_within_memory(
        path, file_text(path, "cannot open experiment file"), [&](const std::string& text) {
            return parse_experiment_toml(text, path.string(), path.parent_path());
        });
}

ExperimentSweep read_experiment_sweep_file(const std::filesystem::path& path) {
    return parse_within_memory(
        path, file_text(path, "cannot open experiment file"), [&](const std::string& text) {
            return parse_experiment_sweep_toml(text, path.string(), path.parent_path());
        });
}

}  // namespace pipelens
