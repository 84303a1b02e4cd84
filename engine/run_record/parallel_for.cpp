// A shared counter hands out items in order; the lowest failing item is kept under a lock and
// read by every worker before it starts an item, so nothing after a failure starts while
// everything before it still runs (which is what makes the reported failure the first one).
#include "engine/run_record/parallel_for.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "engine/run_record/thread_budget.hpp"

namespace pipelens::run_record {
namespace {

constexpr std::size_t kNoItem = std::numeric_limits<std::size_t>::max();

// What the workers share: the next item, how many are done, how many workers still run, and
// the lowest-numbered failure.
class SharedItems {
  public:
    SharedItems(std::size_t count, unsigned workers) : count_(count), running_(workers) {}

    // The next item to run; nothing once every item is handed out, an earlier one failed or the
    // caller stopped the loop.
    std::optional<std::size_t> take() {
        const std::size_t item = next_.fetch_add(1);
        if (item >= count_ || item > first_failed_.load() || stopped_.load())
            return std::nullopt;
        return item;
    }

    void fail(std::size_t item, std::exception_ptr error) {
        const std::lock_guard guard(lock_);
        if (item < first_failed_.load()) {
            first_failed_.store(item);
            failure_ = std::move(error);
        }
    }

    void item_done() { ++done_; }
    std::size_t done() const { return done_.load(); }
    void stop() { stopped_.store(true); }

    void worker_finished() {
        const std::lock_guard guard(lock_);
        if (--running_ == 0)
            finished_.notify_all();
    }

    // Until every worker has finished, calls progress(done) (when given) about ten times a
    // second.
    void wait(const ItemProgress& progress) {
        std::unique_lock guard(lock_);
        while (!finished_.wait_for(guard, std::chrono::milliseconds(100),
                                   [&] { return running_ == 0; }))
            if (progress) {
                guard.unlock();
                progress(done());
                guard.lock();
            }
    }

    void rethrow_failure() const {
        if (failure_)
            std::rethrow_exception(failure_);
    }

  private:
    const std::size_t count_;
    std::atomic<std::size_t> next_{0};
    std::atomic<std::size_t> done_{0};
    std::atomic<std::size_t> first_failed_{kNoItem};
    std::atomic<bool> stopped_{false};
    std::exception_ptr failure_;
    std::mutex lock_;
    std::condition_variable finished_;
    unsigned running_;
};

void run_worker(SharedItems& items, unsigned worker,
                const std::function<void(unsigned, std::size_t)>& work) {
    while (const std::optional<std::size_t> item = items.take()) {
        try {
            work(worker, *item);
        } catch (...) {
            items.fail(*item, std::current_exception());
        }
        items.item_done();
    }
    items.worker_finished();
}

}  // namespace

unsigned worker_count(std::size_t items, unsigned requested) {
    const std::size_t wanted = requested > 0 ? requested : static_cast<unsigned>(available_cores());
    return static_cast<unsigned>(
        std::clamp<std::size_t>(items, 1, std::max<std::size_t>(1, wanted)));
}

void parallel_for_by_worker(std::size_t count, unsigned workers,
                            const std::function<void(unsigned worker, std::size_t item)>& work,
                            const ItemProgress& progress) {
    const unsigned threads = worker_count(count, workers);
    SharedItems items(count, threads);
    // The caller works as worker 0 unless it reports progress.
    const unsigned first_helper = progress ? 0 : 1;
    std::exception_ptr caller_failure;
    {
        std::vector<std::jthread> helpers;  // joined when this scope ends, however it ends
        try {
            for (unsigned worker = first_helper; worker < threads; ++worker)
                helpers.emplace_back([&items, &work, worker] { run_worker(items, worker, work); });
        } catch (...) {  // no more threads to be had: stop, let the started ones finish
            items.stop();
            throw;
        }
        if (progress) {
            try {
                items.wait(progress);
            } catch (...) {
                caller_failure = std::current_exception();
                items.stop();
            }
        } else {
            run_worker(items, 0, work);
        }
    }
    items.rethrow_failure();
    if (caller_failure)
        std::rethrow_exception(caller_failure);
    if (progress)
        progress(items.done());
}

void parallel_for(std::size_t count, unsigned workers,
                  const std::function<void(std::size_t item)>& work, const ItemProgress& progress) {
    parallel_for_by_worker(
        count, workers, [&work](unsigned, std::size_t item) { work(item); }, progress);
}

}  // namespace pipelens::run_record
