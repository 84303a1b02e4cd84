// A sweep's results as `pipelens sweep` prints and writes them (table, CSV, JSON) and as
// `pipelens merge` reads them back from shards: the one definition of the results format, below
// the CLI so that any tool reading or joining shards gets the same checks.
//
// Invariants: the JSON holds everything needed to check that shards belong together (the base
// experiment's text, the axes, the grid's size, the shard) and to redo the ranking; reading it
// back names the file and the field of anything missing or of the wrong type, of a grid size the
// axes do not make, of a configuration's values that are not its index's in the grid and of a
// bubble ratio outside 0..1; merging refuses
// shards of different sweeps, a shard given twice, a missing shard, and a configuration in the
// wrong shard, naming the files.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/experiment/sweep_grid.hpp"
#include "sim/sweep.hpp"

namespace pipelens::sim {

// A file that cannot be read as a sweep's results: not JSON, not the format, a field missing or
// of the wrong type. what() names the file and the field.
class SweepResultsError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// Shards that do not make one whole grid: different sweeps, a shard given twice or missing, a
// configuration in the wrong shard. what() names the files.
class SweepMergeError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

struct SweepResults {
    std::string experiment_toml;  // the experiment every configuration starts from
    std::vector<SweepAxis> axes;
    std::size_t grid_size = 0;
    SweepShard shard;                                       // 1/1 for a whole grid
    std::vector<SweepPoint> points;                         // ranked (rank_sweep)
    SweepRanking ranking = SweepRanking::per_global_batch;  // what `points` are ranked by
    int global_batch = 0;  // sequences per step cut into m microbatches; 0: a fixed microbatch
};

// {"format": "pipelens sweep", "version": 1, "experiment", "axes": [{key, values, labels}],
//  "grid_size", "shard": "I/N", "configurations": [{index, values: {key: label}, schedule, pp, v,
//  m, microbatch_size, step_time_ns, bubble_ratio, peak_memory_bytes, peak_memory_rank, place,
//  pareto} or {index, values, error[, too_large: true]}], "ranked_by": "time per global batch",
//  "time per microbatch" or "time per sequence", "global_batch": sequences or null}
// (a file without ranked_by was ranked by the step: per global batch; one without global_batch
// had none; a configuration without microbatch_size had microbatches of one sequence)
nlohmann::ordered_json sweep_results_json(const SweepResults& results);
// Throws SweepResultsError naming `source` and the field.
SweepResults sweep_results_from_json(const std::string& text, const std::string& source);

// One header line, then one line per configuration in ranked order (RFC 4180 quoting).
std::string sweep_results_csv(const SweepResults& results);

// The `top` best configurations as a table, then a line on those that were not simulated.
std::string sweep_results_table(const SweepResults& results, std::size_t top);

// The shards joined into the whole grid, re-ranked. `shards` pairs each file's name with what
// it held. Throws SweepMergeError when they do not make one whole grid, std::invalid_argument
// when there are none.
SweepResults merge_sweep_results(const std::vector<std::pair<std::string, SweepResults>>& shards);

// "Interleaved1F1B pp=4 v=2 m=8 (costs.f=1ms)", or "configuration 7 (...every axis...)" for one
// not simulated: names a configuration in messages and gates.
std::string sweep_point_subject(const SweepResults& results, const SweepPoint& point);

}  // namespace pipelens::sim
