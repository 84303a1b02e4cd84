// Mapping files to pipeline ranks (pipeline_ranks.hpp). A group's description is the only sign
// PyTorch writes of what it is for: DeviceMesh names each dimension's group "mesh_<dim>", and
// pipeline parallelism's dimension is "pp" in torchtitan and in PyTorch's own examples.
#include "engine/import/pipeline_ranks.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>

#include "engine/import/imported_run.hpp"

namespace pipelens::import {
namespace {

constexpr std::size_t kListedMembers = 16;  // a larger group's ranks are counted, not listed

// "mesh_pp", "pp", "pipeline_group": a word of the description is "pp" or starts "pipe".
bool describes_pipeline(std::string_view desc) {
    std::string word;
    auto is_pipeline_word = [&word] { return word == "pp" || word.starts_with("pipe"); };
    for (char c : desc) {
        if (std::isalnum(static_cast<unsigned char>(c))) {
            word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            continue;
        }
        if (is_pipeline_word())
            return true;
        word.clear();
    }
    return is_pipeline_word();
}

bool holds_all(const ProcessGroupInfo& group, const std::vector<int>& ranks) {
    return std::all_of(ranks.begin(), ranks.end(), [&](int rank) {
        return std::find(group.ranks.begin(), group.ranks.end(), rank) != group.ranks.end();
    });
}

// A group described as the pipeline's holding every rank given; else the smallest group that
// is exactly the ranks given (listed in its own order); else none.
std::optional<ProcessGroupInfo> pipeline_group(const std::vector<RankSource>& sources,
                                               const std::vector<int>& ranks) {
    std::optional<ProcessGroupInfo> exact;
    for (const RankSource& source : sources)
        for (const ProcessGroupInfo& group : source.groups) {
            if (!holds_all(group, ranks))
                continue;
            if (describes_pipeline(group.desc))
                return group;
            if (!exact && group.ranks.size() == ranks.size())
                exact = group;
        }
    return exact;
}

std::vector<int> global_ranks_of(const std::vector<RankSource>& sources) {
    std::vector<int> ranks;
    std::map<int, const std::string*> owner;
    for (const RankSource& source : sources) {
        if (!source.global_rank && sources.size() > 1)
            throw ImportError(fmt::format(
                "{}: cannot tell which rank it is: the trace has no distributedInfo.rank and "
                "the file name no \"rank<N>\"",
                source.path));
        const int rank = source.global_rank.value_or(0);
        const auto [slot, inserted] = owner.try_emplace(rank, &source.path);
        if (!inserted)
            throw ImportError(fmt::format("{} and {} both hold global rank {}", *slot->second,
                                          source.path, rank));
        ranks.push_back(rank);
    }
    return ranks;
}

std::size_t position_in(const ProcessGroupInfo& group, int rank) {
    return static_cast<std::size_t>(std::find(group.ranks.begin(), group.ranks.end(), rank) -
                                    group.ranks.begin());
}

}  // namespace

PipelineRanks pipeline_ranks(const std::vector<RankSource>& sources) {
    const std::vector<int> ranks = global_ranks_of(sources);
    PipelineRanks result;
    result.group = pipeline_group(sources, ranks);
    for (std::size_t index = 0; index < sources.size(); ++index)
        result.order.push_back(index);
    std::sort(result.order.begin(), result.order.end(), [&](std::size_t left, std::size_t right) {
        if (result.group)
            return position_in(*result.group, ranks[left]) <
                   position_in(*result.group, ranks[right]);
        return ranks[left] < ranks[right];
    });
    for (std::size_t index : result.order)
        result.global_ranks.push_back(ranks[index]);
    return result;
}

std::string pipeline_ranks_note(const PipelineRanks& ranks) {
    bool identity = true;
    for (std::size_t rank = 0; rank < ranks.global_ranks.size(); ++rank)
        identity &= ranks.global_ranks[rank] == static_cast<int>(rank);
    if (identity)
        return "";  // nothing to say: the files' ranks are the pipeline's
    std::string order = "by global rank: no process group of exactly these ranks";
    if (ranks.group) {
        const ProcessGroupInfo& group = *ranks.group;
        const std::string members = group.ranks.size() <= kListedMembers
                                        ? fmt::format("ranks {}", fmt::join(group.ranks, ", "))
                                        : fmt::format("{} ranks", group.ranks.size());
        order = fmt::format("in the order of process group '{}'{} of {}", group.name,
                            group.desc.empty() ? "" : fmt::format(" ({})", group.desc), members);
    }
    return fmt::format("pipeline ranks 0..{} are global ranks {} ({})",
                       ranks.global_ranks.size() - 1, fmt::join(ranks.global_ranks, ", "), order);
}

}  // namespace pipelens::import
