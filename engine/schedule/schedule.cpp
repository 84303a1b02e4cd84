// Small helpers on the Schedule value.
#include "engine/schedule/schedule.hpp"

namespace pipelens {

std::size_t Schedule::action_count() const {
    std::size_t count = 0;
    for (const auto& actions : ranks)
        count += actions.size();
    return count;
}

void Schedule::add_overlap(int rank, std::initializer_list<Action> overlap_parts) {
    ranks[rank].push_back(append_overlap(parts, {overlap_parts.begin(), overlap_parts.size()}));
}

bool same_actions(const Schedule& left, const Schedule& right) {
    if (left.rank_count != right.rank_count || left.stage_to_rank != right.stage_to_rank ||
        left.microbatch_count != right.microbatch_count || left.ranks.size() != right.ranks.size())
        return false;
    for (std::size_t rank = 0; rank < left.ranks.size(); ++rank) {
        if (left.ranks[rank].size() != right.ranks[rank].size())
            return false;
        for (std::size_t index = 0; index < left.ranks[rank].size(); ++index)
            if (left.text(left.ranks[rank][index]) != right.text(right.ranks[rank][index]))
                return false;
    }
    return true;
}

Schedule empty_like(const Schedule& shape_source) {
    Schedule result;
    result.name = shape_source.name;
    result.rank_count = shape_source.rank_count;
    result.stages_per_rank = shape_source.stages_per_rank;
    result.microbatch_count = shape_source.microbatch_count;
    result.stage_count = shape_source.stage_count;
    result.stage_to_rank = shape_source.stage_to_rank;
    result.ranks.resize(shape_source.ranks.size());
    return result;
}

}  // namespace pipelens
