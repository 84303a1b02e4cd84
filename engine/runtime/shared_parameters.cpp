// Shared parameter discovery (by tensor identity across the layers of different stages) and
// the gradient exchange: every owner sends to every other owner first (sends never block),
// then receives and adds, so no order between owners can deadlock.
#include "engine/runtime/shared_parameters.hpp"

#include <map>
#include <set>

namespace pipelens::runtime {

std::vector<SharedParameter> find_shared_parameters(const PipelineModel& model,
                                                    const std::vector<StageLayers>& stages,
                                                    const Schedule& lowered, int rank) {
    struct Use {
        int id = 0;
        torch::Tensor tensor;
        std::set<int> ranks;
    };
    std::map<const void*, Use> uses;
    int next_id = 0;
    for (std::size_t stage = 0; stage < stages.size(); ++stage)
        for (int layer = stages[stage].first; layer < stages[stage].first + stages[stage].count;
             ++layer)
            for (const torch::Tensor& parameter : model.layers[layer].parameters) {
                auto [entry, added] = uses.try_emplace(parameter.unsafeGetTensorImpl());
                if (added) {
                    entry->second.id = next_id++;
                    entry->second.tensor = parameter;
                }
                entry->second.ranks.insert(lowered.stage_to_rank[stage]);
            }
    std::vector<SharedParameter> shared;
    for (auto& [key, use] : uses)
        if (use.ranks.size() > 1 && use.ranks.contains(rank))
            shared.push_back({use.id, use.tensor, {use.ranks.begin(), use.ranks.end()}});
    std::sort(shared.begin(), shared.end(),
              [](const SharedParameter& left, const SharedParameter& right) {
                  return left.id < right.id;
              });
    return shared;
}

void sum_shared_gradients(const std::vector<SharedParameter>& shared, int rank,
                          Transport& transport, int tag_base, std::chrono::milliseconds timeout) {
    for (const SharedParameter& parameter : shared) {
        const torch::Tensor gradient = parameter.copy.grad().defined()
                                           ? parameter.copy.grad()
                                           : torch::zeros_like(parameter.copy);
        for (int owner : parameter.owner_ranks)
            if (owner != rank)
                transport.send(owner, tag_base + parameter.id, {gradient.detach()});
    }
    for (const SharedParameter& parameter : shared) {
        torch::Tensor total = parameter.copy.grad().defined()
                                  ? parameter.copy.grad().detach().clone()
                                  : torch::zeros_like(parameter.copy);
        for (int owner : parameter.owner_ranks) {
            if (owner == rank)
                continue;
            TensorList buffer{torch::empty_like(total)};
            transport.recv(owner, tag_base + parameter.id, buffer, timeout);
            total += buffer[0];
        }
        parameter.copy.mutable_grad() = total;
    }
}

}  // namespace pipelens::runtime
