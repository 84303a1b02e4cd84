// Stragglers: ranks whose computations ran slower than the same work elsewhere, per training
// step, whether they set the step time and what they cost it.
//
// A rank's ratio in a step is the median over its computations of the computation's time over
// its reference: the calibrated cost of its (stage, kind) when the run holds one (the trace's
// `profile` rows of whole stages, docs/calibration.md), else the median time of the same kind
// on the other ranks in that step (their stages taken to cost the same, as an even split does).
// A rank is flagged when its ratio is above the threshold (1.2 by default). When the run's ranks
// hold stages of different layer counts (its assign_layers events say so; with v > 1 what
// counts is each rank's set of stages) and it has no calibration, no other rank's time is a
// fair reference (a stage of 4 layers beside one of 2 "straggled" at 1.6x, and the last stage's
// loss and fixed costs do not scale with layers either): the report then measures nothing and
// says why.
//
// Its cost: the step re-timed (critical_path.hpp's `retime`: the same dependency rules as the
// critical path and the simulator, each action's host overhead kept) with the rank's
// computations divided by its ratio, subtracted from the step time.
//
// Megatron's straggler detector's figure is here too: each step's relative throughput, the
// slowest rank's throughput over the fastest's (their ratios' min over max), in (0, 1].
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/analysis/timed_schedule.hpp"
#include "traces/trace_reader.hpp"

namespace pipelens::analysis {

inline constexpr double kDefaultStragglerThreshold = 1.2;

struct StragglerOptions {
    double threshold = kDefaultStragglerThreshold;
    // (stage, kind) -> calibrated time; empty: the other ranks are the reference.
    std::map<std::pair<int, ActionKind>, std::int64_t> calibrated_ns;
    // Each stage's layer count (stage_layer_counts; empty: unknown, taken as alike); where the
    // ranks' stages differ and there is no calibration, the other ranks are no reference.
    std::vector<std::size_t> stage_layers = {};
    // A real or imported run: each rank posts a RECV when its program reaches it, after the
    // computation before it returned (on a CPU rank, after it ended), so re-timing a slow rank
    // moves its receives with its computations (the rendezvous rules). A simulation's receives
    // follow the simulator's rules (pytorch()).
    bool receives_posted_in_program_order = false;
    // With the above: a simulation with --rendezvous, whose transfers start once the receive is
    // posted (retime's ReceivedData::once_posted); a real run's data arrives as it was sent.
    bool transfers_wait_for_post = false;
};

// The options read_stragglers and the viewer use for `run`: its profile's calibration, its
// stages' layers from its events, and receives posted in program order unless it is a
// simulation.
StragglerOptions straggler_options(const traces::RunRecord& run,
                                   const std::vector<traces::ProfileRecord>& profile,
                                   const std::vector<traces::EventRecord>& events,
                                   double threshold = kDefaultStragglerThreshold);

// Each stage's layer count, from the first rank's `assign_layers` events (a real run records
// which layers each stage holds); empty when the events do not give every stage from 0 on.
std::vector<std::size_t> stage_layer_counts(const std::vector<traces::EventRecord>& events);

struct RankStraggle {
    int rank = 0;
    int step = 0;
    double ratio = 1;      // median computation time over its reference; 1 when none compares
    int computations = 0;  // how many had a reference
    bool flagged = false;  // ratio > threshold
    bool on_critical_path = false;  // one of its computations is on the step's critical path
    std::int64_t cost_ns = 0;       // step time saved at the reference speed (flagged only)
};

struct StepStraggle {
    int step = 0;
    std::int64_t step_time_ns = 0;
    double relative_throughput = 1;  // slowest rank's throughput over the fastest's
    int slowest_rank = -1, fastest_rank = -1;
    std::vector<RankStraggle> ranks;  // index = rank
};

struct StragglerReport {
    double threshold = kDefaultStragglerThreshold;
    bool calibrated = false;  // the reference is the run's calibration, not its other ranks
    // Why nothing was measured, when so ("the stages hold 4, 2 layers, ..."); steps then empty.
    std::string not_measured;
    std::vector<StepStraggle> steps;
    std::vector<RankStraggle> flagged;  // every flagged (rank, step), by step then rank
};

StragglerReport find_stragglers(const TimedSchedule& run, const StragglerOptions& options = {});

// The straggler report of a recorded run, its calibration taken from the run's profile rows.
StragglerReport read_stragglers(const traces::TraceReader& reader, const traces::RunRecord& run,
                                double threshold = kDefaultStragglerThreshold);

// The calibrated (stage, kind) times in a run's profile: whole-stage F, I, W and B medians.
std::map<std::pair<int, ActionKind>, std::int64_t> calibrated_stage_costs(
    const std::vector<traces::ProfileRecord>& profile);

// A few lines for a person: each flagged rank and step, or that none is, and the throughput.
std::string format_stragglers(const StragglerReport& report);

}  // namespace pipelens::analysis
