// Sweep axes from flags and files, and the grid's numbering of configurations.
#include "engine/experiment/sweep_grid.hpp"

#include <charconv>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "engine/text/trim.hpp"

namespace pipelens {
namespace {

constexpr std::size_t kLargestGrid = std::size_t{1} << 62;

std::string trimmed(std::string_view text) {
    return std::string(trim(text));
}

// The key as the experiment file names it.
std::string resolved_key(const std::string& key) {
    if (key.find('.') != std::string::npos)
        return key;
    if (key == "kind" || key == "schedule")
        return "schedule.kind";
    if (key == "pp" || key == "v" || key == "m" || key == "file" || key == "max_activations" ||
        key == "defer_recv")
        return "schedule." + key;
    if (key == "rendezvous")
        return "network." + key;
    return "costs." + key;
}

bool is_toml_number(const std::string& word) {
    double number = 0;
    const char* end = word.data() + word.size();
    const auto [stop, error] = std::from_chars(word.data(), end, number);
    return !word.empty() && error == std::errc() && stop == end;
}

std::string toml_scalar(const std::string& word) {
    if (word.empty())
        throw ExperimentError("an empty value");
    if (is_toml_number(word) || word == "true" || word == "false" || word.front() == '"')
        return word;
    std::string quoted = "\"";
    for (const char c : word) {
        if (c == '"' || c == '\\')
            quoted += '\\';
        quoted += c;
    }
    return quoted + '"';
}

// Splits at commas outside brackets.
std::vector<std::string> split_values(std::string_view text) {
    std::vector<std::string> parts;
    int depth = 0;
    std::size_t begin = 0;
    for (std::size_t at = 0; at <= text.size(); ++at) {
        if (at == text.size() || (text[at] == ',' && depth == 0)) {
            parts.push_back(trimmed(text.substr(begin, at - begin)));
            begin = at + 1;
        } else if (text[at] == '[') {
            ++depth;
        } else if (text[at] == ']' && --depth < 0) {
            throw ExperimentError("a ']' without its '['");
        }
    }
    if (depth != 0)
        throw ExperimentError("a '[' without its ']'");
    return parts;
}

std::string toml_value(const std::string& word) {
    if (word.empty() || word.front() != '[')
        return toml_scalar(word);
    if (word.back() != ']')
        throw ExperimentError(fmt::format("'{}': text after a list's ']'", word));
    std::string list = "[";
    for (const std::string& element :
         split_values(std::string_view(word).substr(1, word.size() - 2)))
        list += (list.size() > 1 ? ", " : "") + toml_scalar(element);
    return list + "]";
}

// Checks every value against its field, and refuses two values that set the experiment alike
// ("pp=4,4", "kind=1f1b,1F1B"): each would be simulated and ranked as a configuration of its own.
void refuse_repeated_values(const Experiment& base, const SweepAxis& axis) {
    std::map<std::string, std::size_t> seen;  // the experiment a value makes -> the value
    for (std::size_t at = 0; at < axis.values.size(); ++at) {
        const std::string made = experiment_to_toml(
            apply_experiment_settings(base, {{axis.key, axis.values[at]}}, axis.where));
        const auto [earlier, fresh] = seen.emplace(made, at);
        if (!fresh)
            throw ExperimentError(fmt::format("{}: {} and {} set {} alike: give each value once",
                                              axis.where, axis.labels[earlier->second],
                                              axis.labels[at], axis.key));
    }
}

}  // namespace

std::string sweep_value_label(std::string_view toml_value) {
    std::string label;
    char quote = 0;  // the quote of the string being read: '"' (escapes) or '\'' (literal)
    for (std::size_t at = 0; at < toml_value.size(); ++at) {
        const char c = toml_value[at];
        if (quote == 0 && (c == '"' || c == '\''))
            quote = c;
        else if (c == quote)
            quote = 0;
        else if (quote == '"' && c == '\\' && at + 1 < toml_value.size())
            label += toml_value[++at];
        else if (quote != 0 || c != ' ' || (!label.empty() && label.back() != '['))
            label += c;
    }
    if (label.size() >= 2 && label.back() == ']' && label[label.size() - 2] == ' ')
        label.erase(label.size() - 2, 1);
    return label;
}

SweepAxis parse_sweep_flag(std::string_view text) {
    const std::string where = fmt::format("--sweep {}", text);
    const std::size_t equals = text.find('=');
    if (equals == std::string_view::npos || trimmed(text.substr(0, equals)).empty())
        throw ExperimentError(
            fmt::format("{}: expected KEY=VALUE,VALUE,... such as pp=2,4,8", where));
    SweepAxis axis{resolved_key(trimmed(text.substr(0, equals))), {}, {}, where};
    try {
        for (const std::string& word : split_values(text.substr(equals + 1))) {
            axis.values.push_back(toml_value(word));
            axis.labels.push_back(sweep_value_label(axis.values.back()));
        }
    } catch (const ExperimentError& error) {
        throw ExperimentError(fmt::format("{}: {}", where, error.what()));
    }
    return axis;
}

SweepAxis sweep_axis_from_file(const SweepAxisText& text) {
    // A bare key names the table --sweep reads it in, so a file and a flag sweep alike.
    SweepAxis axis{resolved_key(text.key), text.values, {}, text.where};
    for (const std::string& value : axis.values)
        axis.labels.push_back(sweep_value_label(value));
    return axis;
}

std::size_t SweepShard::size_of(std::size_t grid_size) const {
    return grid_size / count + (grid_size % count > index - 1 ? 1 : 0);
}

SweepShard parse_sweep_shard(std::string_view text) {
    const std::size_t slash = text.find('/');
    SweepShard shard;
    const auto number = [&](std::string_view part, std::size_t& out) {
        const auto [stop, error] = std::from_chars(part.data(), part.data() + part.size(), out);
        return !part.empty() && error == std::errc() && stop == part.data() + part.size();
    };
    if (slash == std::string_view::npos || !number(text.substr(0, slash), shard.index) ||
        !number(text.substr(slash + 1), shard.count) || shard.count == 0 || shard.index == 0 ||
        shard.index > shard.count)
        throw ExperimentError(fmt::format(
            "--shard: expected I/N with 1 <= I <= N (this process's part of N), got '{}'", text));
    return shard;
}

SweepGrid::SweepGrid(Experiment base, std::vector<SweepAxis> axes)
    : base_(std::move(base)), axes_(std::move(axes)) {
    std::set<std::string> keys;
    for (const SweepAxis& axis : axes_) {
        if (!keys.insert(axis.key).second)
            throw ExperimentError(fmt::format("{}: {} is swept twice", axis.where, axis.key));
        if (axis.values.empty())
            throw ExperimentError(fmt::format("{}: no values to try", axis.where));
        refuse_repeated_values(base_, axis);
        if (size_ > kLargestGrid / axis.values.size())  // too large for any memory: exit 3
            throw std::overflow_error(fmt::format(
                "{}: the grid would hold more than 2^62 configurations, more than any memory "
                "holds the results of",
                axis.where));
        size_ *= axis.values.size();
    }
}

std::vector<std::size_t> sweep_value_indices(const std::vector<SweepAxis>& axes,
                                             std::size_t index) {
    std::vector<std::size_t> indices(axes.size());
    for (std::size_t axis = axes.size(); axis-- > 0;) {
        indices[axis] = index % axes[axis].values.size();
        index /= axes[axis].values.size();
    }
    return indices;
}

std::vector<std::size_t> SweepGrid::value_indices(std::size_t index) const {
    return sweep_value_indices(axes_, index);
}

Experiment SweepGrid::configuration(std::size_t index) const {
    const std::vector<std::size_t> indices = value_indices(index);
    std::vector<ExperimentSetting> settings;
    settings.reserve(axes_.size());
    for (std::size_t axis = 0; axis < axes_.size(); ++axis)
        settings.push_back({axes_[axis].key, axes_[axis].values[indices[axis]]});
    return apply_experiment_settings(base_, settings, fmt::format("sweep configuration {}", index));
}

}  // namespace pipelens
