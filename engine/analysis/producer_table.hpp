// Which action produced a per-(stage, microbatch) signal (dependencies.hpp), found in one table
// built from a timed run: what the hold graph, the re-timing and the pairing of transfers ask to
// learn which action an input came from.
//
// Invariants: only actions that ended produce anything; the first producer of a signal within a
// training step counts (a repeat within the step is another action's); a run that repeats its
// program (run --steps N) produces every signal once per training step (training_steps.hpp), and
// a consumer is paired with the producer of its own step: step 0 in a dense table, as a one-step
// run needs, later steps in a hash table beside it. A table far larger than the run (stages x
// microbatches beyond what its actions can name) is refused as a damaged record.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "engine/analysis/critical_path.hpp"
#include "engine/schedule/dependencies.hpp"

namespace pipelens::analysis {

class ProducerTable {
  public:
    // Throws traces::TraceError when the run's stage and microbatch counts are damaged.
    ProducerTable(const TimedSchedule& timed, const DependencyRules& rules);

    // What produced `input` (a per-(stage, microbatch) one) for `consumer`: the producer of the
    // consumer's own training step; nullopt for none, or for a per-stage or per-rank signal.
    std::optional<ActionRef> find(const Input& input, ActionRef consumer) const;

  private:
    struct StepCell {
        std::int32_t step;
        std::size_t cell;
        friend bool operator==(const StepCell&, const StepCell&) = default;
    };
    struct StepCellHash {
        std::size_t operator()(const StepCell& key) const;
    };

    std::int32_t step_of(ActionRef ref) const;
    std::size_t cell(Signal signal, int stage, int microbatch) const;
    void add(const Products& products, const Action& part, ActionRef self);

    const DependencyRules& rules_;
    int stages_ = 0;
    int microbatches_ = 0;
    std::vector<std::vector<std::int32_t>> steps_;  // each action's training step
    std::vector<ActionRef> table_;
    std::unordered_map<StepCell, ActionRef, StepCellHash> later_;
};

}  // namespace pipelens::analysis
