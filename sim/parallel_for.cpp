// A shared counter hands out items; the caller's thread waits on a condition variable and
// reports progress, so the workers are the only busy threads (one per core, never more).
#include "sim/parallel_for.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace pipelens::sim {

unsigned worker_count(std::size_t items, unsigned workers) {
    const unsigned wanted =
        workers > 0 ? workers : std::max(1u, std::thread::hardware_concurrency());
    return static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(wanted, items)));
}

void parallel_for(std::size_t count, unsigned workers, const std::function<void(std::size_t)>& work,
                  const std::function<void(std::size_t done)>& progress) {
    std::atomic<std::size_t> next{0};
    std::atomic<std::size_t> done{0};
    std::atomic<bool> failed{false};
    std::exception_ptr failure;
    std::mutex lock;
    std::condition_variable finished;
    unsigned running = worker_count(count, workers);
    const auto worker = [&] {
        for (std::size_t index = next++; index < count && !failed; index = next++) {
            try {
                work(index);
            } catch (...) {
                const std::lock_guard guard(lock);
                if (!failure)
                    failure = std::current_exception();
                failed = true;
            }
            ++done;
        }
        const std::lock_guard guard(lock);
        if (--running == 0)
            finished.notify_all();
    };
    std::vector<std::thread> threads;
    const unsigned started = running;
    for (unsigned thread = 0; thread < started; ++thread)
        threads.emplace_back(worker);
    {
        std::unique_lock guard(lock);
        while (
            !finished.wait_for(guard, std::chrono::milliseconds(100), [&] { return running == 0; }))
            if (progress) {
                guard.unlock();
                progress(done);
                guard.lock();
            }
    }
    for (std::thread& thread : threads)
        thread.join();
    if (failure)
        std::rethrow_exception(failure);
    if (progress)
        progress(done);
}

}  // namespace pipelens::sim
