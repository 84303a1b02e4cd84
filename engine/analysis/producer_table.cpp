// The producer table (producer_table.hpp): step 0's producers in
// table[(signal * stages + stage) * microbatches + mb], a later step's in later_ by step and cell.
#include "engine/analysis/producer_table.hpp"

#include <fmt/format.h>

#include "engine/analysis/training_steps.hpp"
#include "traces/trace_error.hpp"

namespace pipelens::analysis {

ProducerTable::ProducerTable(const TimedSchedule& timed, const DependencyRules& rules)
    : rules_(rules),
      stages_(timed.schedule.stage_count),
      microbatches_(timed.schedule.microbatch_count),
      steps_(action_steps(timed.schedule)) {
    const Schedule& schedule = timed.schedule;
    // Every (stage, microbatch) a run names has an F somewhere, so a table far larger than the
    // run is a damaged header, not a pipeline.
    const auto cells = static_cast<std::size_t>(stages_) * static_cast<std::size_t>(microbatches_);
    if (cells > 16 * schedule.action_count() + 4096)
        throw traces::TraceError(fmt::format(
            "{}{} names {} stages x {} microbatches but holds only {} actions: its stage or "
            "microbatch numbers are damaged",
            timed.source, timed.source.empty() ? "run" : "", stages_, microbatches_,
            schedule.action_count()));
    table_.assign(cells * kMicrobatchSignalCount, ActionRef{});
    for (int rank = 0; rank < schedule.rank_count; ++rank)
        for (std::size_t index = 0; index < schedule.ranks[rank].size(); ++index) {
            if (!timed.ended(rank, static_cast<int>(index)))
                continue;
            const ActionRef self{rank, static_cast<std::int32_t>(index)};
            for (const Action& part : schedule.parts_of(schedule.ranks[rank][index]))
                add(rules_.products_of(part.kind), part, self);
        }
}

std::optional<ActionRef> ProducerTable::find(const Input& input, ActionRef consumer) const {
    const int stage = input.stage, microbatch = input.microbatch;
    if (stage < 0 || stage >= stages_ || microbatch < 0 || microbatch >= microbatches_ ||
        !is_per_microbatch(input.signal))
        return std::nullopt;
    const std::size_t at = cell(input.signal, stage, microbatch);
    const std::int32_t step = step_of(consumer);
    if (step > 0) {
        const auto found = later_.find(StepCell{step, at});
        return found == later_.end() ? std::nullopt : std::optional<ActionRef>(found->second);
    }
    const ActionRef found = table_[at];
    if (found.rank < 0)
        return std::nullopt;
    return found;
}

std::size_t ProducerTable::StepCellHash::operator()(const StepCell& key) const {
    return std::hash<std::size_t>()(key.cell) ^
           (std::hash<std::int32_t>()(key.step) * 0x9e3779b97f4a7c15ULL);
}

std::int32_t ProducerTable::step_of(ActionRef ref) const {
    return steps_[static_cast<std::size_t>(ref.rank)][static_cast<std::size_t>(ref.index)];
}

std::size_t ProducerTable::cell(Signal signal, int stage, int microbatch) const {
    return (static_cast<std::size_t>(signal) * static_cast<std::size_t>(stages_) +
            static_cast<std::size_t>(stage)) *
               static_cast<std::size_t>(microbatches_) +
           static_cast<std::size_t>(microbatch);
}

void ProducerTable::add(const Products& products, const Action& part, ActionRef self) {
    const std::int32_t step = step_of(self);
    for (Signal signal : products) {
        if (!is_per_microbatch(signal) || part.stage < 0 || part.microbatch < 0)
            continue;
        const std::size_t at = cell(signal, part.stage, part.microbatch);
        if (step > 0) {
            later_.try_emplace(StepCell{step, at}, self);
            continue;
        }
        ActionRef& slot = table_[at];
        if (slot.rank < 0)
            slot = self;
    }
}

}  // namespace pipelens::analysis
