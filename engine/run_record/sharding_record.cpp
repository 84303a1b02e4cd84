// Writing sharding decisions as a run (sharding_record.hpp).
#include "engine/run_record/sharding_record.hpp"

#include "engine/recorder/recorded_trace.hpp"

namespace pipelens::run_record {

std::int64_t record_sharding_run(traces::TraceWriter& writer, const sharding::DeviceMesh& mesh,
                                 const std::vector<sharding::ShardingDecision>& decisions,
                                 const std::string& config) {
    traces::RunRecord run;
    run.kind = traces::RunKind::simulated;
    run.schedule = "sharding";
    run.pp = mesh.size();
    run.v = 1;
    run.m = 1;
    run.config = config;
    const std::int64_t run_id = writer.begin_run(run);
    recorder::StateRecorder recording(-1, "sim");
    for (std::size_t index = 0; index < decisions.size(); ++index) {
        const sharding::ShardingDecision& decision = decisions[index];
        traces::ShardingRecord row;
        row.sequence = static_cast<std::int64_t>(index);
        row.op = sharding::to_string(decision.schema);
        row.mesh = sharding::to_string(mesh);
        row.strategies = sharding::strategies_json(decision);
        row.chosen = static_cast<std::int32_t>(decision.chosen);
        row.redistributions = sharding::redistributions_json(decision);
        writer.add_sharding(run_id, row);
        recording.decide_sharding(row.op, sharding::to_string(decision.chosen_spec()),
                                  decision.chosen_spec().total_cost());
    }
    recorder::write_recording(writer, run_id, recording);
    writer.finish_run(run_id, 0, 0);
    return run_id;
}

}  // namespace pipelens::run_record
