// Simulation to trace rows. Actions are stored as what they are (kind, stage, microbatch,
// parts), so a reader derives exactly the action strings PyTorch prints; the pairs table is
// rebuilt from the timeline's pair ids, which the lowering made unique per schedule.
#include "sim/simulation_trace.hpp"

#include "engine/recorder/recorded_trace.hpp"

#include <algorithm>
#include <tuple>
#include <vector>

namespace pipelens::sim {
namespace {

traces::ActionRecord action_record(const Schedule& lowered, int rank, int step,
                                   const TimelineEntry& entry) {
    traces::ActionRecord record = recorder::action_record(lowered, rank, step);
    record.start_ns = entry.start_ns;
    record.end_ns = entry.end_ns;
    record.bytes = entry.bytes;
    return record;
}

template <typename Visit>
void for_each_entry(const Schedule& lowered, const SimulationResult& result, Visit&& visit) {
    for (std::size_t rank = 0; rank < lowered.ranks.size(); ++rank)
        for (std::size_t step = 0; step < lowered.ranks[rank].size(); ++step)
            visit(static_cast<int>(rank), static_cast<int>(step),
                  result.timeline[result.first_entry[rank] + step]);
}

// Each rank's steps in the order of the actions table's key (start, then step): rows arriving in
// key order are appended to the B-tree instead of searched into it, which is most of what
// writing a large run costs.
template <typename Visit>
void for_each_entry_in_key_order(const Schedule& lowered, const SimulationResult& result,
                                 Visit&& visit) {
    std::vector<std::int32_t> steps;
    for (std::size_t rank = 0; rank < lowered.ranks.size(); ++rank) {
        const TimelineEntry* entries = result.timeline.data() + result.first_entry[rank];
        steps.resize(lowered.ranks[rank].size());
        for (std::size_t step = 0; step < steps.size(); ++step)
            steps[step] = static_cast<std::int32_t>(step);
        std::stable_sort(steps.begin(), steps.end(), [&](std::int32_t left, std::int32_t right) {
            return entries[left].start_ns < entries[right].start_ns;
        });
        for (std::int32_t step : steps)
            visit(static_cast<int>(rank), step, entries[step]);
    }
}

// Memory samples by (rank, time), the memory index's order, for the same reason.
std::vector<MemorySample> memory_in_key_order(const SimulationResult& result) {
    std::vector<MemorySample> samples = result.memory;
    std::stable_sort(samples.begin(), samples.end(), [](const auto& left, const auto& right) {
        return std::tie(left.rank, left.time_ns) < std::tie(right.rank, right.time_ns);
    });
    return samples;
}

std::vector<traces::PairRecord> pairs_of(const Schedule& lowered, const SimulationResult& result) {
    std::vector<traces::PairRecord> pairs(static_cast<std::size_t>(lowered.pair_count));
    for_each_entry(lowered, result, [&](int rank, int step, const TimelineEntry& entry) {
        if (entry.pair_id == kNoPair)
            return;
        traces::PairRecord& pair = pairs[entry.pair_id];
        pair.pair_id = entry.pair_id;
        const ActionKind kind = lowered.ranks[rank][step].kind;
        if (kind == ActionKind::send_forward || kind == ActionKind::send_backward) {
            pair.send_rank = rank;
            pair.send_step = step;
            pair.bytes = entry.bytes;
        } else {
            pair.recv_rank = rank;
            pair.recv_step = step;
        }
    });
    return pairs;
}

}  // namespace

traces::RankRecord rank_record(const RankResult& rank) {
    traces::RankRecord record;
    record.rank = rank.rank;
    record.busy_ns = rank.busy_ns;
    record.bubble_ns = rank.bubble_ns;
    record.bubble_ratio = rank.bubble_ratio;
    record.peak_memory_bytes = rank.peak_memory_bytes;
    record.warmup_ns = rank.bubbles.warmup_ns;
    record.cooldown_ns = rank.bubbles.cooldown_ns;
    record.waiting_on = traces::waiting_on_json(rank.bubbles.waiting_on_rank);
    return record;
}

std::size_t simulation_row_count(const Schedule& lowered, const SimulationResult& result) {
    return result.ranks.size() + result.timeline.size() + result.memory.size() +
           static_cast<std::size_t>(lowered.pair_count);
}

std::int64_t record_simulation(traces::TraceWriter& writer, const Schedule& lowered,
                               const SimulationResult& result, traces::RunRecord run,
                               const RecordProgress& progress,
                               const recorder::StateRecorder* recording) {
    run.kind = traces::RunKind::simulated;
    const std::int64_t run_id = writer.begin_run(run);
    const std::size_t total = simulation_row_count(lowered, result);
    std::size_t written = 0;
    const auto advance = [&] {
        if (progress && ++written % 65536 == 0)
            progress(written, total);
    };
    try {
        if (recording != nullptr)
            recorder::write_recording(writer, run_id, *recording);
        for (const RankResult& rank : result.ranks) {
            writer.add_rank(run_id, rank_record(rank));
            advance();
        }
        for_each_entry_in_key_order(
            lowered, result, [&](int rank, int step, const TimelineEntry& entry) {
                writer.add_action(run_id, action_record(lowered, rank, step, entry));
                advance();
            });
        for (const traces::PairRecord& pair : pairs_of(lowered, result)) {
            writer.add_pair(run_id, pair);
            advance();
        }
        for (const MemorySample& sample : memory_in_key_order(result)) {
            writer.add_memory(run_id, {sample.rank, sample.time_ns, sample.bytes});
            advance();
        }
        writer.finish_run(run_id, result.step_time_ns, result.bubble_ratio);
    } catch (const std::exception& error) {
        try {
            writer.fail_run(run_id, error.what());
        } catch (const std::exception&) {
            // The file itself is failing; the original error says why.
        }
        throw;
    }
    if (progress)
        progress(total, total);
    return run_id;
}

}  // namespace pipelens::sim
