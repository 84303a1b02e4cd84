// Independent work items spread over worker threads, the one worker loop of the project: the
// planner's layouts, a sweep's configurations, an import's rank files, a viewer load's ranks.
//
// Invariants:
// - never more threads run items than worker_count() gives for the request: without a progress
//   callback the calling thread is one of them, with one it only waits (and reports progress);
// - every item runs at most once, and items are handed out in index order, so results that
//   `work` puts by index do not depend on the thread count;
// - once an item has thrown no later item starts (those already running finish), every earlier
//   one still runs, and the exception of the lowest-numbered failing item is rethrown on the
//   calling thread after every worker has stopped: the same exception a plain loop would throw,
//   whatever the timing.
#pragma once

#include <cstddef>
#include <functional>

namespace pipelens::run_record {

// `requested` workers when > 0, else one per core this process may use (available_cores());
// never more than there are items, and at least one.
unsigned worker_count(std::size_t items, unsigned requested = 0);

// Called on the calling thread with the number of items done, about ten times a second and once
// when all are done. An exception from it stops new items and is rethrown after the workers
// stop (an item's own exception goes first).
using ItemProgress = std::function<void(std::size_t done)>;

// Calls work(item) for every item in [0, count) on worker_count(count, workers) threads.
void parallel_for(std::size_t count, unsigned workers,
                  const std::function<void(std::size_t item)>& work,
                  const ItemProgress& progress = {});

// The same, telling `work` which worker (0 .. worker_count - 1) runs the item, for state each
// worker keeps for itself (a database connection of its own). Worker 0 is the calling thread
// when there is no progress callback.
void parallel_for_by_worker(std::size_t count, unsigned workers,
                            const std::function<void(unsigned worker, std::size_t item)>& work,
                            const ItemProgress& progress = {});

}  // namespace pipelens::run_record
