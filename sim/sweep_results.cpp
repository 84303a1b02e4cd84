// Sweep results: JSON both ways, CSV, the ranked table, and the merge of shards.
#include "sim/sweep_results.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "traces/text/quantities.hpp"

namespace pipelens::sim {
namespace {

constexpr const char* kResultsFormat = "pipelens sweep";
constexpr int kResultsVersion = 1;

constexpr std::int64_t kMostSequences = std::numeric_limits<int>::max();

std::string global_batch_text(int global_batch) {
    return global_batch > 0 ? fmt::format("{} sequences", global_batch) : "none";
}

std::string shard_text(const SweepShard& shard) {
    return fmt::format("{}/{}", shard.index, shard.count);
}

std::vector<std::string> point_labels(const SweepResults& results, const SweepPoint& point) {
    const std::vector<std::size_t> indices = sweep_value_indices(results.axes, point.index);
    std::vector<std::string> labels;
    for (std::size_t axis = 0; axis < results.axes.size(); ++axis)
        labels.push_back(results.axes[axis].labels[indices[axis]]);
    return labels;
}

bool is_schedule_key(const std::string& key) {
    return key == "schedule.kind" || key == "schedule.pp" || key == "schedule.v" ||
           key == "schedule.m";
}

// Reads fields of one JSON file, naming the file and the field's path in every error.
class JsonFields {
  public:
    explicit JsonFields(const std::string& source) : source_(source) {}

    // A top-level field is named alone ("grid_size"), a nested one by its path.
    static std::string child(const std::string& path, const std::string& key) {
        return path.empty() ? key : path + "." + key;
    }

    [[noreturn]] void fail(const std::string& path, const std::string& why) const {
        throw SweepResultsError(fmt::format("{}: {}: {}", source_, path, why));
    }

    const nlohmann::json& member(const nlohmann::json& object, const std::string& path,
                                 const std::string& key) const {
        if (!object.is_object())
            fail(path, "expected an object");
        const auto found = object.find(key);
        if (found == object.end())
            fail(child(path, key), "missing");
        return *found;
    }

    std::string text(const nlohmann::json& object, const std::string& path,
                     const std::string& key) const {
        const nlohmann::json& value = member(object, path, key);
        if (!value.is_string())
            fail(child(path, key), "expected a string");
        return value.get<std::string>();
    }

    std::int64_t integer(const nlohmann::json& object, const std::string& path,
                         const std::string& key, std::int64_t minimum,
                         std::int64_t maximum = std::numeric_limits<std::int64_t>::max()) const {
        const nlohmann::json& value = member(object, path, key);
        if (!value.is_number_integer() || value.get<std::int64_t>() < minimum ||
            value.get<std::int64_t>() > maximum)
            fail(child(path, key),
                 maximum == std::numeric_limits<std::int64_t>::max()
                     ? fmt::format("expected an integer of at least {}", minimum)
                     : fmt::format("expected an integer from {} to {}", minimum, maximum));
        return value.get<std::int64_t>();
    }

    double number(const nlohmann::json& object, const std::string& path,
                  const std::string& key) const {
        const nlohmann::json& value = member(object, path, key);
        if (!value.is_number())
            fail(child(path, key), "expected a number");
        return value.get<double>();
    }

    const nlohmann::json& array(const nlohmann::json& object, const std::string& path,
                                const std::string& key) const {
        const nlohmann::json& value = member(object, path, key);
        if (!value.is_array())
            fail(child(path, key), "expected a list");
        return value;
    }

  private:
    const std::string& source_;
};

std::vector<std::string> texts(const JsonFields& fields, const nlohmann::json& object,
                               const std::string& path, const std::string& key) {
    std::vector<std::string> out;
    for (const nlohmann::json& value : fields.array(object, path, key)) {
        if (!value.is_string())
            fields.fail(fmt::format("{}.{}[{}]", path, key, out.size()), "expected a string");
        out.push_back(value.get<std::string>());
    }
    return out;
}

SweepAxis axis_from_json(const JsonFields& fields, const nlohmann::json& json,
                         const std::string& path) {
    SweepAxis axis{fields.text(json, path, "key"), texts(fields, json, path, "values"),
                   texts(fields, json, path, "labels"), path};
    if (axis.values.empty() || axis.values.size() != axis.labels.size())
        fields.fail(path, "expected as many labels as values, at least one");
    return axis;
}

SweepPoint point_from_json(const JsonFields& fields, const nlohmann::json& json,
                           const std::string& path, std::size_t grid_size) {
    SweepPoint point;
    point.index = static_cast<std::size_t>(fields.integer(json, path, "index", 0));
    if (point.index >= grid_size)
        fields.fail(path + ".index",
                    fmt::format("{} is outside the grid of {}", point.index, grid_size));
    if (json.contains("error")) {
        point.error = fields.text(json, path, "error");
        if (json.contains("too_large")) {
            if (!json["too_large"].is_boolean())
                fields.fail(path + ".too_large", "expected true or false");
            point.too_large = json["too_large"].get<bool>();
        }
        return point;
    }
    point.schedule = fields.text(json, path, "schedule");
    constexpr std::int64_t most = std::numeric_limits<int>::max();
    point.pp = static_cast<int>(fields.integer(json, path, "pp", 1, most));
    point.v = static_cast<int>(fields.integer(json, path, "v", 1, most));
    point.m = static_cast<int>(fields.integer(json, path, "m", 1, most));
    if (json.contains("microbatch_size"))  // files written before it was kept: 1
        point.microbatch_size =
            static_cast<int>(fields.integer(json, path, "microbatch_size", 1, most));
    point.step_time_ns = fields.integer(json, path, "step_time_ns", 0);
    point.bubble_ratio = fields.number(json, path, "bubble_ratio");
    if (!(point.bubble_ratio >= 0 && point.bubble_ratio <= 1))
        fields.fail(path + ".bubble_ratio",
                    fmt::format("{} is not a ratio from 0 to 1", json["bubble_ratio"].dump()));
    point.peak_memory_bytes = fields.integer(json, path, "peak_memory_bytes", 0);
    point.peak_memory_rank =
        static_cast<int>(fields.integer(json, path, "peak_memory_rank", -1, most));
    return point;
}

// A configuration's "values" are what the grid gives its index: written for people and other
// tools, read back only to refuse a file whose configurations were edited or mixed up (a figure
// filed under another configuration's values would be ranked as that one's).
void check_point_values(const JsonFields& fields, const nlohmann::json& json,
                        const std::string& path, const SweepResults& results,
                        const SweepPoint& point) {
    if (!json.contains("values"))
        return;
    const nlohmann::json& values = json["values"];
    if (!values.is_object())
        fields.fail(path + ".values", "expected an object");
    const std::vector<std::string> labels = point_labels(results, point);
    for (std::size_t axis = 0; axis < results.axes.size(); ++axis) {
        const std::string& key = results.axes[axis].key;
        const std::string field = fmt::format("{}.values[\"{}\"]", path, key);
        const auto found = values.find(key);
        if (found == values.end())
            fields.fail(field, "missing");
        if (!found->is_string() || found->get<std::string>() != labels[axis])
            fields.fail(field, fmt::format("{} where configuration {} of the grid has \"{}\"",
                                           found->dump(), point.index, labels[axis]));
    }
}

// The number of configurations the axes make, or 0 past what a size_t holds.
std::size_t grid_size_of(const std::vector<SweepAxis>& axes) {
    std::size_t size = 1;
    for (const SweepAxis& axis : axes) {
        if (axis.values.size() > std::numeric_limits<std::size_t>::max() / size)
            return 0;
        size *= axis.values.size();
    }
    return size;
}

std::string csv_field(const std::string& text) {
    if (text.find_first_of(",\"\n\r") == std::string::npos)
        return text;
    std::string quoted = "\"";
    for (const char c : text)
        quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}

}  // namespace

std::string sweep_point_subject(const SweepResults& results, const SweepPoint& point) {
    std::vector<std::string> values;
    const std::vector<std::string> labels = point_labels(results, point);
    for (std::size_t axis = 0; axis < results.axes.size(); ++axis)
        if (!point.simulated() || !is_schedule_key(results.axes[axis].key))
            values.push_back(fmt::format("{}={}", results.axes[axis].key, labels[axis]));
    const std::string subject =
        point.simulated()
            ? fmt::format("{} pp={} v={} m={}", point.schedule, point.pp, point.v, point.m)
            : fmt::format("configuration {}", point.index);
    return values.empty() ? subject : fmt::format("{} ({})", subject, fmt::join(values, ", "));
}

nlohmann::ordered_json sweep_results_json(const SweepResults& results) {
    nlohmann::ordered_json json;
    json["format"] = kResultsFormat;
    json["version"] = kResultsVersion;
    json["experiment"] = results.experiment_toml;
    json["axes"] = nlohmann::ordered_json::array();
    for (const SweepAxis& axis : results.axes)
        json["axes"].push_back(
            {{"key", axis.key}, {"values", axis.values}, {"labels", axis.labels}});
    json["grid_size"] = results.grid_size;
    json["shard"] = shard_text(results.shard);
    nlohmann::ordered_json& configurations = json["configurations"] =
        nlohmann::ordered_json::array();
    for (const SweepPoint& point : results.points) {
        nlohmann::ordered_json entry{{"index", point.index}};
        nlohmann::ordered_json values = nlohmann::ordered_json::object();
        const std::vector<std::string> labels = point_labels(results, point);
        for (std::size_t axis = 0; axis < results.axes.size(); ++axis)
            values[results.axes[axis].key] = labels[axis];
        entry["values"] = values;
        if (!point.simulated()) {
            entry["error"] = point.error;
            if (point.too_large)
                entry["too_large"] = true;
        } else {
            entry["schedule"] = point.schedule;
            entry["pp"] = point.pp;
            entry["v"] = point.v;
            entry["m"] = point.m;
            entry["microbatch_size"] = point.microbatch_size;
            entry["step_time_ns"] = point.step_time_ns;
            entry["bubble_ratio"] = point.bubble_ratio;
            entry["peak_memory_bytes"] = point.peak_memory_bytes;
            entry["peak_memory_rank"] = point.peak_memory_rank;
            entry["place"] = point.place;
            entry["pareto"] = point.pareto;
        }
        configurations.push_back(std::move(entry));
    }
    json["ranked_by"] = sweep_ranking_name(results.ranking);
    json["global_batch"] =
        results.global_batch > 0 ? nlohmann::ordered_json(results.global_batch) : nullptr;
    return json;
}

SweepResults sweep_results_from_json(const std::string& text, const std::string& source) {
    const JsonFields fields(source);
    nlohmann::json json;
    try {
        json = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& error) {  // a cut file says where it ends
        throw SweepResultsError(
            fmt::format("{}: not JSON (byte {}{})", source, error.byte,
                        error.byte > text.size() ? ", the end: a truncated file?" : ""));
    } catch (const nlohmann::json::exception&) {
        throw SweepResultsError(fmt::format("{}: not JSON", source));
    }
    if (!json.is_object() || !json.contains("format") || json["format"] != kResultsFormat)
        throw SweepResultsError(
            fmt::format("{}: not a pipelens sweep's results (no \"format\": "
                        "\"{}\"); write them with pipelens sweep --json",
                        source, kResultsFormat));
    if (fields.integer(json, "", "version", 0) != kResultsVersion)
        fields.fail("version", fmt::format("version {} is not the {} this pipelens reads",
                                           json["version"].dump(), kResultsVersion));
    SweepResults results;
    results.experiment_toml = fields.text(json, "", "experiment");
    const nlohmann::json& axes = fields.array(json, "", "axes");
    for (std::size_t axis = 0; axis < axes.size(); ++axis)
        results.axes.push_back(axis_from_json(fields, axes[axis], fmt::format("axes[{}]", axis)));
    results.grid_size = static_cast<std::size_t>(fields.integer(json, "", "grid_size", 1));
    if (const std::size_t made = grid_size_of(results.axes); made != results.grid_size)
        fields.fail("grid_size", fmt::format("{} where the axes make {} configurations",
                                             results.grid_size, made));
    try {
        results.shard = parse_sweep_shard(fields.text(json, "", "shard"));
    } catch (const ExperimentError& error) {
        fields.fail("shard", error.what());
    }
    const nlohmann::json& configurations = fields.array(json, "", "configurations");
    for (std::size_t at = 0; at < configurations.size(); ++at) {
        const std::string path = fmt::format("configurations[{}]", at);
        results.points.push_back(
            point_from_json(fields, configurations[at], path, results.grid_size));
        check_point_values(fields, configurations[at], path, results, results.points.back());
    }
    if (json.contains("ranked_by")) {
        try {
            results.ranking = parse_sweep_ranking(fields.text(json, "", "ranked_by"));
        } catch (const std::invalid_argument& error) {
            fields.fail("ranked_by", error.what());
        }
    }
    if (json.contains("global_batch") && !json["global_batch"].is_null())
        results.global_batch =
            static_cast<int>(fields.integer(json, "", "global_batch", 1, kMostSequences));
    rank_sweep(results.points, results.ranking);
    return results;
}

std::string sweep_results_csv(const SweepResults& results) {
    std::string out = "place,pareto,index";
    for (const SweepAxis& axis : results.axes)
        out += fmt::format(",{}", csv_field(axis.key));
    out +=
        ",schedule,pp,v,m,microbatch_size,step_time_ns,bubble_ratio,peak_memory_bytes,"
        "peak_memory_rank,error\n";
    for (const SweepPoint& point : results.points) {
        out += point.simulated()
                   ? fmt::format("{},{},{}", point.place, point.pareto ? 1 : 0, point.index)
                   : fmt::format(",,{}", point.index);
        for (const std::string& label : point_labels(results, point))
            out += fmt::format(",{}", csv_field(label));
        out += point.simulated() ? fmt::format(",{},{},{},{},{},{},{:.6f},{},{},\n", point.schedule,
                                               point.pp, point.v, point.m, point.microbatch_size,
                                               point.step_time_ns, point.bubble_ratio,
                                               point.peak_memory_bytes, point.peak_memory_rank)
                                 : fmt::format(",,,,,,,,,,{}\n", csv_field(point.error));
    }
    return out;
}

std::string sweep_results_table(const SweepResults& results, std::size_t top) {
    std::vector<std::size_t> other_axes;  // shown as columns; the schedule's are always shown
    for (std::size_t axis = 0; axis < results.axes.size(); ++axis)
        if (!is_schedule_key(results.axes[axis].key))
            other_axes.push_back(axis);
    std::vector<std::vector<std::string>> rows{{"place", "front", "schedule", "pp", "v", "m"}};
    for (std::size_t axis : other_axes)
        rows[0].push_back(results.axes[axis].key);
    for (const char* title : {"step time", "bubble", "peak memory (rank)"})
        rows[0].push_back(title);
    std::size_t skipped = 0;
    for (const SweepPoint& point : results.points) {
        if (!point.simulated()) {
            ++skipped;
            continue;
        }
        if (rows.size() > top)
            continue;
        std::vector<std::string> row{
            std::to_string(point.place), point.pareto ? "*" : "", point.schedule,
            std::to_string(point.pp),    std::to_string(point.v), std::to_string(point.m)};
        const std::vector<std::string> labels = point_labels(results, point);
        for (std::size_t axis : other_axes)
            row.push_back(labels[axis]);
        row.push_back(format_duration(point.step_time_ns));
        row.push_back(fmt::format("{:.1f}%", point.bubble_ratio * 100));
        row.push_back(
            fmt::format("{} ({})", format_bytes(point.peak_memory_bytes), point.peak_memory_rank));
        rows.push_back(std::move(row));
    }
    std::vector<std::size_t> widths(rows[0].size(), 0);
    for (const auto& row : rows)
        for (std::size_t column = 0; column < row.size(); ++column)
            widths[column] = std::max(widths[column], row[column].size());
    std::string out;
    for (const auto& row : rows) {
        std::string line;
        for (std::size_t column = 0; column < row.size(); ++column)
            line += fmt::format("{:<{}}  ", row[column], widths[column]);
        line.erase(line.find_last_not_of(' ') + 1);
        out += line;
        out += '\n';
    }
    const std::size_t simulated = results.points.size() - skipped;
    if (simulated > top)
        out += fmt::format("... {} more (all of them in --csv and --json)\n", simulated - top);
    if (skipped > 0) {
        const SweepPoint& first = results.points[simulated];
        out += fmt::format("{} configuration{} not simulated, e.g. {}: {}\n", skipped,
                           skipped == 1 ? " was" : "s were", sweep_point_subject(results, first),
                           first.error);
    }
    return out;
}

SweepResults merge_sweep_results(const std::vector<std::pair<std::string, SweepResults>>& shards) {
    if (shards.empty())
        throw std::invalid_argument("merge_sweep_results: no sweep results to merge");
    const auto& [first_name, first] = shards.front();
    const auto fail = [](const std::string& why) { throw SweepMergeError(why); };
    std::map<std::size_t, std::string> shard_files;
    SweepResults merged{first.experiment_toml, first.axes,        first.grid_size, SweepShard{}, {},
                        first.ranking,         first.global_batch};
    std::set<std::size_t> indices;
    for (const auto& [name, part] : shards) {
        std::vector<std::string> differences;
        if (part.experiment_toml != first.experiment_toml)
            differences.push_back("experiment");
        if (part.grid_size != first.grid_size ||
            !std::equal(part.axes.begin(), part.axes.end(), first.axes.begin(), first.axes.end(),
                        [](const SweepAxis& a, const SweepAxis& b) {
                            return a.key == b.key && a.values == b.values;
                        }))
            differences.push_back("axes");
        if (part.ranking != first.ranking)
            differences.push_back("ranking");
        if (part.global_batch != first.global_batch)
            differences.push_back(fmt::format("global batch ({} against {})",
                                              global_batch_text(part.global_batch),
                                              global_batch_text(first.global_batch)));
        if (part.shard.count != first.shard.count)
            differences.push_back(
                fmt::format("shard count ({} against {})", part.shard.count, first.shard.count));
        if (!differences.empty())
            fail(fmt::format("{} is not a shard of the same sweep as {}: they differ in {}", name,
                             first_name, fmt::join(differences, " and ")));
        const auto [at, added] = shard_files.emplace(part.shard.index, name);
        if (!added)
            fail(fmt::format("{} and {} are both shard {}", at->second, name,
                             shard_text(part.shard)));
        for (const SweepPoint& point : part.points) {
            if (!part.shard.holds(point.index))
                fail(fmt::format("{}: configuration {} does not belong to shard {}", name,
                                 point.index, shard_text(part.shard)));
            if (!indices.insert(point.index).second)
                fail(fmt::format("{}: configuration {} appears twice", name, point.index));
            merged.points.push_back(point);
        }
        if (part.points.size() != part.shard.size_of(part.grid_size))
            fail(fmt::format("{}: shard {} holds {} of its {} configurations", name,
                             shard_text(part.shard), part.points.size(),
                             part.shard.size_of(part.grid_size)));
    }
    std::vector<std::string> missing;
    for (std::size_t index = 1; index <= first.shard.count && missing.size() < 10; ++index)
        if (!shard_files.count(index))
            missing.push_back(fmt::format("{}/{}", index, first.shard.count));
    if (!missing.empty())
        fail(fmt::format("shard{} {} missing", missing.size() == 1 ? "" : "s",
                         fmt::join(missing, ", ")));
    merged.ranking = first.ranking;
    rank_sweep(merged.points, merged.ranking);
    return merged;
}

}  // namespace pipelens::sim
