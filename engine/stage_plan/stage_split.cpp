// Split planning. Split points become a sorted set of cut positions (a cut at i means layer i
// starts a stage); the count must then be stage_count - 1 exactly, since a pipeline with
// more or fewer stages than the schedule has would silently drop or duplicate work.
#include "engine/stage_plan/stage_split.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "engine/text/shortened.hpp"

namespace pipelens::runtime {

SplitPoint parse_split_point(const std::string& text) {
    SplitPoint point;
    const auto colon = text.rfind(':');
    point.layer = text.substr(0, colon);
    if (colon != std::string::npos) {
        const std::string where = text.substr(colon + 1);
        if (where == "end")
            point.at_end = true;
        else if (where != "beginning")
            throw SplitError(fmt::format(
                "split point '{}': expected LAYER, LAYER:beginning or LAYER:end", text));
    }
    if (point.layer.empty())
        throw SplitError(fmt::format("split point '{}' names no layer", text));
    return point;
}

int model_layer_count(int layers_given, int rank_count, int stage_count) {
    if (layers_given > 0)
        return layers_given;
    const int layers = 2 * rank_count;
    if (layers < stage_count)
        throw SplitError(fmt::format(
            "the default model has two layers per pipeline rank ({} for pp={}), too few for {} "
            "stages ({} per rank): give --layers (a multiple of {} splits evenly)",
            layers, rank_count, stage_count, stage_count / std::max(rank_count, 1), stage_count));
    return layers;
}

namespace {

int layer_index(const std::vector<std::string>& names, const SplitPoint& point) {
    const auto found = std::find(names.begin(), names.end(), point.layer);
    if (found != names.end())
        return static_cast<int>(found - names.begin());
    // A number past int's range is no layer either (std::stoi threw "stoi" for it).
    if (!point.layer.empty() && point.layer.size() <= 9 &&
        std::all_of(point.layer.begin(), point.layer.end(), ::isdigit)) {
        const int index = std::stoi(point.layer);
        if (index < static_cast<int>(names.size()))
            return index;
    }
    throw SplitError(
        fmt::format("split point '{}': no such layer (the model has {} layers: {} .. {})",
                    shortened(point.layer, 64), names.size(), names.front(), names.back()));
}

}  // namespace

std::vector<StageLayers> split_layers(const std::vector<std::string>& layer_names, int stage_count,
                                      const std::vector<SplitPoint>& points) {
    const int layer_count = static_cast<int>(layer_names.size());
    if (stage_count < 1 || layer_count < stage_count)
        throw SplitError(fmt::format("{} layers cannot fill {} stages", layer_count, stage_count));
    std::set<int> cuts;
    if (points.empty()) {
        int first = 0;
        for (int stage = 0; stage + 1 < stage_count; ++stage) {
            first += layer_count / stage_count + (stage < layer_count % stage_count ? 1 : 0);
            cuts.insert(first);
        }
    }
    for (const SplitPoint& point : points) {
        const int cut = layer_index(layer_names, point) + (point.at_end ? 1 : 0);
        if (cut <= 0 || cut >= layer_count)
            throw SplitError(fmt::format("split point '{}{}' would leave a stage empty",
                                         point.layer, point.at_end ? ":end" : ""));
        cuts.insert(cut);
    }
    if (static_cast<int>(cuts.size()) != stage_count - 1)
        throw SplitError(
            fmt::format("{} distinct split points make {} stages, but the schedule has {} stages",
                        cuts.size(), cuts.size() + 1, stage_count));
    std::vector<StageLayers> stages;
    int first = 0;
    for (int cut : cuts) {
        stages.push_back({first, cut - first});
        first = cut;
    }
    stages.push_back({first, layer_count - first});
    return stages;
}

}  // namespace pipelens::runtime
