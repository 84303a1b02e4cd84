// A run's identity and the first difference between two (run_identity.hpp).
#include "engine/run_record/run_identity.hpp"

namespace pipelens::run_record {

nlohmann::ordered_json run_identity(const PipelineRunOptions& options, const Schedule& lowered) {
    std::vector<std::size_t> actions;
    for (const auto& rank : lowered.ranks)
        actions.push_back(rank.size());
    // Keys are the flags that set each value, so a difference reads as what to change.
    return {{"--schedule", lowered.name},
            {"--pp", lowered.rank_count},
            {"--v", lowered.stages_per_rank},
            {"--m", lowered.microbatch_count},
            {"actions per rank", actions},
            {"--model", options.model},
            {"--layers", options.layers},
            {"--hidden", options.hidden},
            {"--sequence", options.sequence},
            {"--heads", options.heads},
            {"--input-shape", options.input_shape},
            {"--split", options.split_points},
            {"--batch", options.batch_size},
            {"--chunk-dim", options.chunk_dim},
            {"--dtype", options.dtype},
            {"--seed", options.seed},
            {"--steps", options.recorded_steps},
            {"--warmup", options.warmup_steps},
            {"--profile", options.profile}};
}

std::optional<IdentityDifference> identity_difference(const nlohmann::ordered_json& mine,
                                                      const nlohmann::ordered_json& theirs) {
    const auto said = [](const std::string& key, const nlohmann::ordered_json& value) {
        return key + " " + (value.is_string() ? value.get<std::string>() : value.dump());
    };
    for (const auto& [key, value] : mine.items()) {
        const auto other = theirs.find(key);
        if (other == theirs.end())
            return IdentityDifference{"no " + key, said(key, value)};
        if (*other != value)
            return IdentityDifference{said(key, *other), said(key, value)};
    }
    return std::nullopt;
}

}  // namespace pipelens::run_record
