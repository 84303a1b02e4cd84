// Which file is which pipeline rank. A profiler trace names its rank in the whole job (its global
// rank, distributedInfo.rank) and the process groups it belongs to (distributedInfo.pg_config);
// a pipeline is any set of those ranks (ranks 4, 12, 20, 28 of a 32-rank job; rank 34 alone of
// 300), and pipelens numbers its ranks 0..n-1 in pipeline order.
//
// Invariants: the order is the pipeline group's own order when the files name one (a group
// described as pipeline-parallel, "mesh_pp" or "pp", holding every file's rank; else a group
// of exactly the files' ranks), their global ranks ascending otherwise; every file keeps its
// global rank; two files of one global rank are an error naming both; a file with no global
// rank is an error naming it unless it is the only file (then it is global rank 0).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "engine/import/chrome_trace_stream.hpp"

namespace pipelens::import {

struct RankSource {
    std::string path;
    std::optional<int> global_rank;  // distributedInfo.rank, else from the file name
    std::vector<ProcessGroupInfo> groups;
};

struct PipelineRanks {
    std::vector<std::size_t> order;         // order[pipeline rank]: the index of its source
    std::vector<int> global_ranks;          // global_ranks[pipeline rank]
    std::optional<ProcessGroupInfo> group;  // the pipeline group the order follows, if any
};

// Throws ImportError naming the file(s) for a missing or duplicate global rank.
PipelineRanks pipeline_ranks(const std::vector<RankSource>& sources);

// "pipeline ranks 0..1 are global ranks 4, 12 (in the order of process group 'mesh_pp' ...)";
// "" when pipeline rank r is global rank r and no group decided the order.
std::string pipeline_ranks_note(const PipelineRanks& ranks);

}  // namespace pipelens::import
