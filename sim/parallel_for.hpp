// Independent work items spread over the cores: the planner's layouts, a sweep's configurations.
//
// Invariants: every item runs at most once, on some worker; results go wherever `work` puts them
// (by index), so nothing depends on the thread count; once an item throws, no new item starts,
// and the first exception is rethrown on the calling thread after every worker has stopped.
#pragma once

#include <cstddef>
#include <functional>

namespace pipelens::sim {

// One worker per core (at most one per item) unless `workers` says how many (> 0).
unsigned worker_count(std::size_t items, unsigned workers = 0);

// Calls work(i) for i in [0, count). `progress(done)`, when given, runs on the calling thread
// (which only waits) about ten times a second and once when all is done, so it may draw a bar.
void parallel_for(std::size_t count, unsigned workers, const std::function<void(std::size_t)>& work,
                  const std::function<void(std::size_t done)>& progress = {});

}  // namespace pipelens::sim
