// The thread budget's arithmetic and the affinity query behind available_cores().
#include "engine/run_record/thread_budget.hpp"

#include <sched.h>

#include <algorithm>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

namespace pipelens::run_record {

std::string ThreadBudget::warning() const {
    if (!oversubscribed())
        return "";
    return fmt::format(
        "{} rank{} x {} thread{} on {} core{}: ranks will time-slice; timings will "
        "not match a pipeline",
        local_ranks, local_ranks == 1 ? "" : "s", threads_per_rank,
        threads_per_rank == 1 ? "" : "s", cores, cores == 1 ? "" : "s");
}

ThreadBudget plan_threads(int cores, int local_ranks, std::optional<int> requested) {
    if (requested && *requested < 1)
        throw std::invalid_argument(
            fmt::format("--threads: {} is not a thread count (give 1 or more)", *requested));
    ThreadBudget budget;
    budget.cores = std::max(1, cores);
    budget.local_ranks = std::max(1, local_ranks);
    budget.threads_per_rank = requested.value_or(std::max(1, budget.cores / budget.local_ranks));
    return budget;
}

int available_cores() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        return std::max(1, CPU_COUNT(&set));
    return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace pipelens::run_record
