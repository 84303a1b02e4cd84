// The c10d TCPStore where the ranks of a multi-process transport (gloo, nccl) meet, and the small
// protocol the transports keep in it beyond their own bootstrap: the abort flag, barriers and the
// reports gathered on rank 0.
//
// Invariants: the first abort reason written wins and is never overwritten, so every rank sees
// the same reason; once this rank has seen a reason it keeps it (a rank that has aborted stays
// aborted); every wait here has a deadline and ends early when some rank aborts; the store is
// used by one thread at a time (c10d does not promise more); a store that can no longer be
// reached (rank 0, which serves it, is gone) reads as an abort whose reason says so, because
// nothing useful can follow it; rank 0 can stay, within a bound, until every rank has read the
// reason it aborted with (linger_until_abort_seen); a rank the launcher saw end
// (Rendezvous::ended) reads as an abort naming it, written to the store as any rank's abort is.
// Keys live under "pipelens/", apart from the transports' own bootstrap keys, and barriers and
// gathers number their keys so two calls never collide.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "engine/runtime/transport.hpp"

namespace pipelens::runtime {

// One line for a user: c10 errors without their C++ backtrace, anything after a newline dropped.
std::string describe_exception(const std::exception& error);

// "rank 2 ended (killed by signal 9 (Killed))" for the first rank other than this one that the
// launcher saw end (Rendezvous::ended); nullopt when none has, or no launcher watches.
std::optional<std::string> ended_rank_reason(const Rendezvous& rendezvous);

// How often the launcher's notices of ended ranks are read: each look opens a file per rank.
inline constexpr auto kEndedCheckInterval = std::chrono::milliseconds(20);
// How long a connect that failed waits for a notice that a rank ended: the socket of a killed
// rank closes before its launcher has reaped it and written why.
inline constexpr auto kNoticeGrace = std::chrono::milliseconds(300);

// A connection given up, because another rank ended first (what() is ended_rank_reason's) or
// because the bound passed.
class ConnectionGivenUp : public std::runtime_error {
  public:
    enum class Why { rank_ended, bound_passed };
    ConnectionGivenUp(Why why, const std::string& text) : std::runtime_error(text), why_(why) {}
    Why why() const { return why_; }

  private:
    Why why_;
};

// Runs `connect` on a thread of its own and returns what it returns, unless another rank ends
// first or `bound` passes: then throws ConnectionGivenUp and leaves the thread behind, still
// blocked in a connect that cannot succeed (c10d's and gloo's connects do not all keep a
// deadline of their own, and none looks at the launcher's notices). A connect that fails names
// the rank that ended, where the launcher says one did, else throws its own error. `connect`
// must own everything it uses (no store or socket this rank goes on using): the rank is about to
// end with the error, and pipelens-runtime ends without static destructors (runtime_main.cpp).
template <typename Result>
Result connect_unless_a_rank_ends(const Rendezvous& rendezvous, std::chrono::milliseconds bound,
                                  std::function<Result()> connect) {
    using Clock = std::chrono::steady_clock;
    auto task = std::make_shared<std::packaged_task<Result()>>(std::move(connect));
    std::future<Result> result = task->get_future();
    std::thread([task] { (*task)(); }).detach();
    const auto deadline = Clock::now() + bound;
    while (result.wait_until(std::min(deadline, Clock::now() + kEndedCheckInterval)) !=
           std::future_status::ready) {
        if (std::optional<std::string> ended = ended_rank_reason(rendezvous))
            throw ConnectionGivenUp(ConnectionGivenUp::Why::rank_ended, *ended);
        if (Clock::now() >= deadline)
            throw ConnectionGivenUp(ConnectionGivenUp::Why::bound_passed, "");
    }
    try {
        return result.get();
    } catch (const std::exception&) {
        for (const auto until = Clock::now() + kNoticeGrace; rendezvous.ended;) {
            if (std::optional<std::string> ended = ended_rank_reason(rendezvous))
                throw ConnectionGivenUp(ConnectionGivenUp::Why::rank_ended, *ended);
            if (Clock::now() >= until)
                break;
            std::this_thread::sleep_for(kEndedCheckInterval);
        }
        throw;
    }
}

// A client connection of its own to the rendezvous's store, for a bootstrap run by
// connect_unless_a_rank_ends (ProcessGroupGloo's): one it may leave blocked without holding the
// connection the rank goes on using.
c10::intrusive_ptr<c10d::Store> connect_another_client(const Rendezvous& rendezvous);

class RendezvousStore {
  public:
    // Rank 0 serves the store and waits until all world_size ranks have joined; the others
    // connect, retrying until the rendezvous timeout. Throws TransportUnavailable naming the
    // address, the rank and the timeout. `transport_name` ("gloo transport") starts messages.
    RendezvousStore(const Rendezvous& rendezvous, std::string transport_name);
    RendezvousStore(const RendezvousStore&) = delete;
    RendezvousStore& operator=(const RendezvousStore&) = delete;

    // The raw store (tests read it). Only use it before any other thread uses this object.
    c10::intrusive_ptr<c10d::Store> store() const { return store_; }

    // Records `reason` unless some rank recorded one first; returns the reason that holds. Never
    // throws: a store that cannot be reached leaves the reason recorded here only.
    std::string abort(const std::string& reason);

    // The reason some rank aborted with, or nullopt. Asks the store unless a reason is known.
    std::optional<std::string> abort_reason();
    // The reason some rank recorded in the store, or the launcher's notice of a rank that ended,
    // waiting at most `grace` for one to come; nullopt when none did or the store was lost
    // meanwhile (a lost store is nobody's reason: the caller keeps its own error).
    std::optional<std::string> recorded_abort_reason(std::chrono::milliseconds grace);
    // The reason this rank already knows of, without asking the store (no I/O).
    std::optional<std::string> known_abort_reason();

    // For rank 0 after an abort with nothing left to wait for (no report to gather): rank 0
    // serves the store, and a rank that reads it after rank 0 has gone learns only that the store
    // is lost, not why. Waits, at most `bound`, until every other rank has seen the reason (each
    // acknowledges it once, when it first learns it from the store) or the launcher has seen
    // every other rank fail or be killed; returns whether it stopped so. Other ranks, and a rank 0
    // that knows of no abort, return true at once. `readers`: how many ranks to wait for (default:
    // every other rank).
    bool linger_until_abort_seen(std::chrono::milliseconds bound,
                                 std::optional<int> readers = std::nullopt);

    // Publishes `value` under `key` for the other ranks.
    void publish(const std::string& key, const std::vector<std::uint8_t>& value);

    // Waits for another rank to publish `key`, polling, abort-aware. Throws TransportTimeout
    // ("`what` did not arrive within N ms") or TransportAborted.
    std::vector<std::uint8_t> wait_for(const std::string& key, const std::string& what,
                                       std::chrono::milliseconds timeout);

    // See Transport::barrier. Polls briefly at first, so ranks that arrive together leave within
    // a fraction of a millisecond of each other, then backs off.
    void barrier(std::chrono::milliseconds timeout);

    // See Transport::gather_to_rank_zero.
    std::vector<std::string> gather_to_rank_zero(const std::string& payload,
                                                 std::chrono::milliseconds timeout);
    // See Transport::leave_last_report.
    void leave_last_report(const std::string& payload);

    const Rendezvous& rendezvous() const { return rendezvous_; }
    const std::string& transport_name() const { return transport_name_; }

  private:
    // Rank 0: waits until every rank has counted itself in, or throws TransportUnavailable at
    // `deadline` saying how many did.
    void wait_for_every_rank(std::chrono::steady_clock::time_point deadline);
    // Every rank's world size is rank 0's, or TransportUnavailable names the two that differ.
    void check_world_sizes(std::chrono::steady_clock::time_point deadline);
    // Rank 0, giving up on the meeting: see the definition.
    void stay_for_the_ranks_that_came(const std::string& why);
    // The reason to report when the store itself failed under an operation.
    std::string lost_store_reason(const std::exception& error) const;
    // Throws TransportAborted when some rank has aborted.
    void throw_if_aborted();
    // Tells rank 0 that this rank has learnt the abort reason from the store; mutex_ held.
    void acknowledge_abort_locked();
    // "rank N ended (how)" for the first other rank the launcher saw end, asked at most every
    // few milliseconds (file reads); mutex_ held.
    // Reads a recorded reason into known_abort_reason_ (none recorded: left empty); throws
    // what the store throws.
    void read_abort_reason_locked();
    std::optional<std::string> ended_rank_reason_locked();
    // Whether the launcher has seen every rank but this one fail or be killed (its notices say
    // nothing of a rank that ended well; false without a launcher).
    bool every_other_rank_ended() const;

    Rendezvous rendezvous_;
    std::string transport_name_;
    c10::intrusive_ptr<c10d::Store> store_;
    std::mutex mutex_;  // one store operation at a time; guards the members below
    std::optional<std::string> known_abort_reason_;
    std::int64_t gathers_started_ = 0;
    std::int64_t barriers_started_ = 0;
    std::chrono::steady_clock::time_point next_ended_check_{};
};

// The part of the gloo and nccl transports that lives in the store: rank and world size, the
// abort check, the barrier and the gather. Each transport adds its data path and its abort
// (which may have to wake its own waits).
class StoreBackedTransport : public Transport {
  public:
    int rank() const override { return store_.rendezvous().rank; }
    int world_size() const override { return store_.rendezvous().world_size; }

    void check_aborted() override {
        if (std::optional<std::string> reason = store_.abort_reason())
            throw TransportAborted(*reason);
    }
    void stay_until_abort_read(std::chrono::milliseconds longest) override {
        store_.linger_until_abort_seen(
            std::min<std::chrono::milliseconds>(store_.rendezvous().timeout, longest));
    }
    void barrier(std::chrono::milliseconds timeout) override { store_.barrier(timeout); }
    std::vector<std::string> gather_to_rank_zero(const std::string& payload,
                                                 std::chrono::milliseconds timeout) override {
        return store_.gather_to_rank_zero(payload, timeout);
    }
    void leave_last_report(const std::string& payload) override {
        store_.leave_last_report(payload);
    }

  protected:
    StoreBackedTransport(const Rendezvous& rendezvous, std::string transport_name)
        : store_(rendezvous, std::move(transport_name)) {}

    RendezvousStore store_;
};

}  // namespace pipelens::runtime
