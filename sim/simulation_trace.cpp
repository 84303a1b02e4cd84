// Simulation to trace rows. Actions are stored as what they are (kind, stage, microbatch,
// parts), so a reader derives exactly the action strings PyTorch prints. The pairs come from
// the lowered schedule (its pair ids are unique per schedule) and the cost model, not from
// simulated times, so they can be written while the simulation runs.
#include "sim/simulation_trace.hpp"

#include "engine/recorder/recorded_trace.hpp"

#include <algorithm>
#include <exception>
#include <future>
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

// Every SEND/RECV pair of the lowered schedule: who sends and who receives are fixed by the
// lowering and what it carries by the cost model, so the pairs need no simulated time.
std::vector<traces::PairRecord> pairs_of(const Schedule& lowered, const CostModel& costs) {
    std::vector<traces::PairRecord> pairs(static_cast<std::size_t>(lowered.pair_count));
    for (std::size_t rank = 0; rank < lowered.ranks.size(); ++rank) {
        for (std::size_t step = 0; step < lowered.ranks[rank].size(); ++step) {
            const Action& action = lowered.ranks[rank][step];
            if (!is_communication(action.kind) || action.link == kNoPair)
                continue;
            traces::PairRecord& pair = pairs[action.link];
            pair.pair_id = action.link;
            if (action.kind == ActionKind::send_forward ||
                action.kind == ActionKind::send_backward) {
                pair.send_rank = static_cast<int>(rank);
                pair.send_step = static_cast<int>(step);
                pair.bytes = costs.message_bytes(action);
            } else {
                pair.recv_rank = static_cast<int>(rank);
                pair.recv_step = static_cast<int>(step);
            }
        }
    }
    return pairs;
}

// Counts rows as they are written; `total` grows once the simulation says how many memory
// samples there are.
class RowCounter {
  public:
    RowCounter(const RecordProgress& progress, std::size_t total)
        : progress_(progress), total_(total) {}
    void add_to_total(std::size_t rows) { total_ += rows; }
    void advance() {
        if (progress_ && ++written_ % 65536 == 0)
            progress_(written_, total_);
    }
    void finish() const {
        if (progress_)
            progress_(total_, total_);
    }

  private:
    const RecordProgress& progress_;
    std::size_t total_;
    std::size_t written_ = 0;
};

// Marks the run failed with `error` and rethrows it; a failure of the file itself while doing
// so is dropped, as the original error says why.
[[noreturn]] void fail_and_rethrow(traces::TraceWriter& writer, std::int64_t run_id) {
    try {
        throw;
    } catch (const std::exception& error) {
        try {
            writer.fail_run(run_id, error.what());
        } catch (const std::exception&) {
        }
        throw;
    }
}

// What a run's recording needs before its simulation: the run row, the events that built the
// simulated state, and the pairs.
std::int64_t begin_record(traces::TraceWriter& writer, const Schedule& lowered,
                          const CostModel& costs, traces::RunRecord run, RowCounter& rows,
                          const recorder::StateRecorder* recording) {
    run.kind = traces::RunKind::simulated;
    const std::int64_t run_id = writer.begin_run(run);
    try {
        if (recording != nullptr)
            recorder::write_recording(writer, run_id, *recording);
        for (const traces::PairRecord& pair : pairs_of(lowered, costs)) {
            writer.add_pair(run_id, pair);
            rows.advance();
        }
    } catch (...) {
        fail_and_rethrow(writer, run_id);
    }
    return run_id;
}

// The rows only the simulation can give, then the run's figures, which finish it.
void finish_record(traces::TraceWriter& writer, std::int64_t run_id, const Schedule& lowered,
                   const SimulationResult& result, RowCounter& rows) {
    try {
        for (const RankResult& rank : result.ranks) {
            writer.add_rank(run_id, rank_record(rank));
            rows.advance();
        }
        for_each_entry_in_key_order(
            lowered, result, [&](int rank, int step, const TimelineEntry& entry) {
                writer.add_action(run_id, action_record(lowered, rank, step, entry));
                rows.advance();
            });
        for (const MemorySample& sample : memory_in_key_order(result)) {
            writer.add_memory(run_id, {sample.rank, sample.time_ns, sample.bytes});
            rows.advance();
        }
        writer.finish_run(run_id, result.step_time_ns, result.bubble_ratio);
    } catch (...) {
        fail_and_rethrow(writer, run_id);
    }
    rows.finish();
}

std::size_t rows_before_memory(const Schedule& lowered) {
    return lowered.ranks.size() + lowered.action_count() +
           static_cast<std::size_t>(lowered.pair_count);
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

SimulationRows simulation_rows(const Schedule& lowered, const CostModel& costs,
                               const SimulationResult& result) {
    SimulationRows rows;
    rows.pairs = pairs_of(lowered, costs);
    for (const RankResult& rank : result.ranks)
        rows.ranks.push_back(rank_record(rank));
    rows.actions.reserve(result.timeline.size());
    for_each_entry_in_key_order(
        lowered, result, [&](int rank, int step, const TimelineEntry& entry) {
            traces::ActionRecord record = action_record(lowered, rank, step, entry);
            const Action& action = lowered.ranks[rank][step];
            // Only the text the integers cannot give, as the trace file keeps it.
            if (action.kind == ActionKind::overlap_forward_backward)
                record.label = lowered.text(action);  // its parts index the whole pool
            rows.actions.push_back(std::move(record));
        });
    for (const MemorySample& sample : memory_in_key_order(result))
        rows.memory.push_back({sample.rank, sample.time_ns, sample.bytes});
    return rows;
}

std::size_t simulation_row_count(const Schedule& lowered, const SimulationResult& result) {
    return rows_before_memory(lowered) + result.memory.size();
}

std::int64_t record_simulation(traces::TraceWriter& writer, const Schedule& lowered,
                               const CostModel& costs, const SimulationResult& result,
                               traces::RunRecord run, const RecordProgress& progress,
                               const recorder::StateRecorder* recording) {
    RowCounter rows(progress, simulation_row_count(lowered, result));
    const std::int64_t run_id =
        begin_record(writer, lowered, costs, std::move(run), rows, recording);
    finish_record(writer, run_id, lowered, result, rows);
    return run_id;
}

RecordedSimulation simulate_and_record(traces::TraceWriter& writer, const Schedule& lowered,
                                       const CostModel& costs, traces::RunRecord run,
                                       const RecordProgress& progress,
                                       const recorder::StateRecorder* recording) {
    RowCounter rows(progress, rows_before_memory(lowered));
    // The writer starts on what needs no simulated time while this thread simulates: the two
    // share only read-only inputs, and the writer is handed back by get() before it is used here.
    std::future<std::int64_t> begun = std::async(std::launch::async, [&] {
        return begin_record(writer, lowered, costs, std::move(run), rows, recording);
    });
    RecordedSimulation recorded;
    try {
        recorded.result = simulate(lowered, costs);
    } catch (const std::exception& error) {
        // The run has begun (unless the writer failed, whose error matters less than this one):
        // it records why it has no timeline.
        std::int64_t run_id = -1;
        try {
            run_id = begun.get();
            writer.fail_run(run_id, error.what());
        } catch (const std::exception&) {
        }
        throw;
    }
    recorded.run_id = begun.get();
    rows.add_to_total(recorded.result.memory.size());
    finish_record(writer, recorded.run_id, lowered, recorded.result, rows);
    return recorded;
}

}  // namespace pipelens::sim
