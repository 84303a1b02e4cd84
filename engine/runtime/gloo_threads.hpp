// The two threads the gloo transport (gloo_transport.cpp) runs beside its caller: a watchdog
// that ends blocking receive waits when their deadline passes or some rank aborts, and a
// completer that retires sends oldest first, dropping each tensor copy once it has left.
//
// Why threads: gloo cannot tell whether a send or receive is done without waiting for it, and a
// gloo wait that reaches its own timeout closes every connection of the process group. So a
// receive waits with a limit well past its deadline and the watchdog ends it with abort(); a
// send is waited for here, off the caller's thread.
//
// Invariants: a receive wait ends within one kAbortPollInterval of an abort or at its deadline;
// the watchdog costs a receive no thread switch while no deadline is near; a send's tensor lives
// until gloo has sent it; destruction never blocks on a peer (a send still waiting is aborted).
// Included by gloo_transport.cpp only, which is built only where gloo's headers are.
#pragma once

#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO  // LibTorch's CMake config does not export it; libtorch_cpu has gloo
#endif

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include "engine/runtime/rendezvous_store.hpp"

namespace pipelens::runtime::gloo_threads {

using GlooClock = std::chrono::steady_clock;
// c10d::Work in LibTorch 1.13 and 2.x alike, whatever its spelling.
using GlooWork = decltype(std::declval<c10d::ProcessGroupGloo&>().send(
    std::declval<std::vector<at::Tensor>&>(), 0, 0));

inline constexpr const char* kGlooTransportName = "gloo transport";
// How often a waiting receive looks at the store's abort flag.
inline constexpr auto kAbortPollInterval = std::chrono::milliseconds(50);
// Gloo's own limit on one send wait; sends wait for their receiver for as long as the run goes
// on, and finish_sends() or the destructor bound the wait instead.
inline constexpr auto kSendWaitLimit = std::chrono::hours(24 * 7);

// Ends blocking receive waits from outside when their deadline passes or some rank aborts. It
// sleeps while nothing waits and is woken only when a wait's deadline comes before its next
// planned wake-up, so a receive costs it no thread switch on the fast path.
class ReceiveWatchdog {
  public:
    enum class Verdict { pending, timed_out, aborted };
    struct Watch {
        std::vector<GlooWork> works;
        GlooClock::time_point deadline;
        Verdict verdict = Verdict::pending;
    };

    explicit ReceiveWatchdog(RendezvousStore& store) : store_(store), thread_([this] { run(); }) {}
    ~ReceiveWatchdog() {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        changed_.notify_all();
        thread_.join();
    }
    ReceiveWatchdog(const ReceiveWatchdog&) = delete;
    ReceiveWatchdog& operator=(const ReceiveWatchdog&) = delete;

    void watch(Watch* watch) {
        std::lock_guard lock(mutex_);
        watches_.push_back(watch);
        if (watch->deadline < planned_wake_)
            changed_.notify_all();
    }

    // Stops watching; the verdict is final once this returns.
    Verdict unwatch(Watch* watch) {
        std::lock_guard lock(mutex_);
        watches_.erase(std::remove(watches_.begin(), watches_.end(), watch), watches_.end());
        return watch->verdict;
    }

    // Look at the abort flag now (this rank has just aborted).
    void poke() {
        std::lock_guard lock(mutex_);
        poll_now_ = true;
        changed_.notify_all();
    }

  private:
    void run() {
        std::unique_lock lock(mutex_);
        auto last_poll = GlooClock::now();
        while (!stopping_) {
            if (watches_.empty()) {
                planned_wake_ = GlooClock::time_point::max();
                changed_.wait(lock, [&] { return stopping_ || !watches_.empty(); });
                // The first look at the store is one interval after waiting starts, so that
                // short receives never meet a store round trip.
                last_poll = GlooClock::now();
                continue;
            }
            planned_wake_ = last_poll + kAbortPollInterval;
            for (const Watch* watch : watches_)
                planned_wake_ = std::min(planned_wake_, watch->deadline);
            changed_.wait_until(lock, planned_wake_);  // a new earlier deadline wakes it
            if (stopping_)
                break;
            std::optional<std::string> reason;
            if (poll_now_ || GlooClock::now() >= last_poll + kAbortPollInterval) {
                poll_now_ = false;
                lock.unlock();
                reason = store_.abort_reason();
                lock.lock();
                last_poll = GlooClock::now();
            }
            end_expired_waits(reason.has_value());
        }
    }

    void end_expired_waits(bool aborted) {
        const auto now = GlooClock::now();
        for (Watch* watch : watches_) {
            if (watch->verdict != Verdict::pending)
                continue;
            if (aborted)
                watch->verdict = Verdict::aborted;
            else if (now >= watch->deadline)
                watch->verdict = Verdict::timed_out;
            else
                continue;
            for (const GlooWork& work : watch->works)
                work->abort();
        }
    }

    RendezvousStore& store_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<Watch*> watches_;
    GlooClock::time_point planned_wake_ = GlooClock::time_point::max();
    bool stopping_ = false;
    bool poll_now_ = false;
    std::thread thread_;  // last: it starts once the members above exist
};

// Waits for sends in the order they were posted and drops each with its tensor copy as soon as
// gloo has sent it, so a copy lives as long as its message is in flight, as PyTorch's isend
// holds its tensor. Holding them until the step's end instead kept every message of the step
// (16 messages of 33 KB, 528 KB more per rank of a 1F1B pp=2 m=16 step than over `local`),
// which the memory model, rightly, does not count.
class SendCompleter {
  public:
    struct PendingSend {
        GlooWork work;
        torch::Tensor tensor;  // kept alive until gloo has sent it
        int peer = 0;
        int tag = 0;
    };

    SendCompleter() : thread_([this] { run(); }) {}
    ~SendCompleter() {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
            if (in_wait_)
                in_wait_->abort();  // the peer may never receive it; end the wait now
        }
        changed_.notify_all();
        thread_.join();
    }
    SendCompleter(const SendCompleter&) = delete;
    SendCompleter& operator=(const SendCompleter&) = delete;

    void add(PendingSend send) {
        std::lock_guard lock(mutex_);
        pending_.push_back(std::move(send));
        changed_.notify_all();
    }

    // True when every send added so far has completed (or failed), false at `until`.
    bool drain_until(GlooClock::time_point until) {
        std::unique_lock lock(mutex_);
        return changed_.wait_until(lock, until, [&] { return pending_.empty(); });
    }

    // (peer, tag) of the oldest send still waiting for its receiver.
    std::optional<std::pair<int, int>> oldest_pending() {
        std::lock_guard lock(mutex_);
        if (pending_.empty())
            return std::nullopt;
        return std::make_pair(pending_.front().peer, pending_.front().tag);
    }

    // The first send that failed, as a one-line message.
    std::optional<std::string> failure() {
        std::lock_guard lock(mutex_);
        return failure_;
    }

  private:
    void run() {
        std::unique_lock lock(mutex_);
        for (;;) {
            changed_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
            while (!stopping_ && !pending_.empty())
                complete_oldest(lock);
            if (stopping_)
                return;
        }
    }

    void complete_oldest(std::unique_lock<std::mutex>& lock) {
        in_wait_ = pending_.front().work;
        lock.unlock();
        std::optional<std::string> error;
        try {
            if (!in_wait_->wait(kSendWaitLimit))
                error = "the wait was aborted";
        } catch (const std::exception& caught) {
            error = describe_exception(caught);
        }
        lock.lock();
        in_wait_.reset();
        if (stopping_)
            return;
        if (error && !failure_)
            failure_ =
                fmt::format("{}: the send to rank {} (tag {}) failed: {}", kGlooTransportName,
                            pending_.front().peer, pending_.front().tag, *error);
        pending_.pop_front();
        changed_.notify_all();
    }

    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<PendingSend> pending_;
    GlooWork in_wait_;
    std::optional<std::string> failure_;
    bool stopping_ = false;
    std::thread thread_;  // last: it starts once the members above exist
};

}  // namespace pipelens::runtime::gloo_threads
