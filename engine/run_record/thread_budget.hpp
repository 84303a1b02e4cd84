// How many intra-op threads each rank of a real run gets: the cores this process may use,
// shared by the ranks on this host, unless the user says otherwise. Ranks that share cores
// time-slice, and then measured step times are the scheduler's, not the pipeline's: that is
// said once, before the run, in the words of `warning()`. Torch-free; the runtime applies it.
#pragma once

#include <optional>
#include <string>

namespace pipelens::run_record {

struct ThreadBudget {
    int cores = 1;        // that this process may run on
    int local_ranks = 1;  // ranks on this host (threads of this process, or processes)
    int threads_per_rank = 1;

    bool oversubscribed() const { return local_ranks * threads_per_rank > cores; }
    // "4 ranks x 1 thread on 2 cores: ranks will time-slice; timings will not match a pipeline",
    // or empty when the ranks fit.
    std::string warning() const;
};

// `requested` (--threads) wins; otherwise each rank gets an equal share of the cores, at least
// one. Throws std::invalid_argument for a request below 1.
ThreadBudget plan_threads(int cores, int local_ranks, std::optional<int> requested);

// The cores this process may run on (its CPU affinity), at least 1.
int available_cores();

}  // namespace pipelens::run_record
