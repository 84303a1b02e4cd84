// Rendezvous store. Waiting is done by polling with short sleeps rather than Store::wait, so
// that no store operation holds the store for longer than one round trip: the transports' abort
// watchers must be able to ask for the abort flag while another thread waits here.
#include "engine/runtime/rendezvous_store.hpp"

#include <algorithm>
#include <cerrno>
#include <future>
#include <memory>
#include <string_view>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "engine/run_record/tcp_port.hpp"
#include "engine/runtime/out_of_memory.hpp"

namespace pipelens::runtime {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kAbortKey = "pipelens/abort";
constexpr const char* kAbortSeenKey = "pipelens/abort_seen";  // ranks other than 0 that read it
constexpr const char* kJoinedKey = "pipelens/joined";         // ranks connected to the store
// Each rank's world size, set before it counts itself in: ranks started with different ones
// failed inside gloo ("enforce fail ... 136 vs 272") instead of saying so.
std::string world_size_key(int rank) {
    return fmt::format("pipelens/world_size/{}", rank);
}
constexpr auto kLongestPollSleep = std::chrono::milliseconds(20);

std::vector<std::uint8_t> to_bytes(const std::string& text) {
    return std::vector<std::uint8_t>(text.begin(), text.end());
}

std::string to_text(const std::vector<std::uint8_t>& bytes) {
    return std::string(bytes.begin(), bytes.end());
}

// Sleeps 1, 2, 4 ... ms (at most kLongestPollSleep) but never past `deadline`.
void sleep_before_next_poll(int& attempt, Clock::time_point deadline) {
    const auto wanted = std::min<std::chrono::milliseconds>(
        std::chrono::milliseconds(1 << std::min(attempt, 8)), kLongestPollSleep);
    ++attempt;
    std::this_thread::sleep_until(std::min(Clock::now() + wanted, deadline));
}

// The first rank other than this one that the launcher saw end, and how it ended.
std::optional<std::pair<int, std::string>> first_ended_rank(const Rendezvous& rendezvous) {
    if (!rendezvous.ended)
        return std::nullopt;
    for (int rank = 0; rank < rendezvous.world_size; ++rank)
        if (rank != rendezvous.rank)
            if (std::optional<std::string> how = rendezvous.ended(rank))
                return std::make_pair(rank, *how);
    return std::nullopt;
}

void check_rendezvous(const Rendezvous& rendezvous, const std::string& transport_name) {
    if (rendezvous.world_size < 1 || rendezvous.rank < 0 ||
        rendezvous.rank >= rendezvous.world_size)
        throw std::invalid_argument(fmt::format("{}: rank {} is outside world size {}",
                                                transport_name, rendezvous.rank,
                                                rendezvous.world_size));
    if (rendezvous.master_port < 1 || rendezvous.master_port > 65535)
        throw std::invalid_argument(fmt::format("{}: master port {} is outside 1..65535",
                                                transport_name, rendezvous.master_port));
    if (rendezvous.timeout.count() <= 0)
        throw std::invalid_argument(
            fmt::format("{}: the rendezvous timeout must be positive", transport_name));
}

// Connects and counts this rank in (kJoinedKey). c10d's client waits for the server's answers
// with no deadline of its own once connected: a port held by a program that accepts and never
// answers held the rank for good. Past `bound`, or once another rank has ended (rank 0 serves the
// store, and a run with a rank gone cannot start), the connecting thread is left behind (the rank
// is about to end with this error).
c10::intrusive_ptr<c10d::Store> connect_within(const Rendezvous& rendezvous,
                                               const c10d::TCPStoreOptions& options,
                                               std::chrono::milliseconds bound) {
    const std::string address = rendezvous.master_address;
    const std::string own_key = world_size_key(rendezvous.rank);
    const std::string world_size = std::to_string(rendezvous.world_size);
    try {
        return connect_unless_a_rank_ends<c10::intrusive_ptr<c10d::Store>>(
            rendezvous, bound,
            [address, options, own_key, world_size]() -> c10::intrusive_ptr<c10d::Store> {
                auto store = c10::make_intrusive<c10d::TCPStore>(address, options);
                store->set(own_key, to_bytes(world_size));
                store->add(kJoinedKey, 1);
                return store;
            });
    } catch (const ConnectionGivenUp& given_up) {
        if (given_up.why() == ConnectionGivenUp::Why::rank_ended)
            throw;
        throw std::runtime_error(
            fmt::format("nothing answered as a rendezvous store does within {} ms (is another "
                        "program listening on that port?)",
                        bound.count()));
    }
}

// How long the ranks may take to meet. c10d's client counts its connect timeout in whole
// seconds: a --timeout under one (999 ms) became 0 s, and even rank 0 could not reach its own
// store. Meeting takes at least a second, rounded up; waits for data keep the timeout as given.
std::chrono::milliseconds meeting_timeout(const Rendezvous& rendezvous) {
    return std::chrono::ceil<std::chrono::seconds>(
        std::max<std::chrono::milliseconds>(rendezvous.timeout, std::chrono::seconds(1)));
}

// Whether another socket listens on `port` here. c10d's server, asked to listen on it, logged
// its attempts through glog (lines before any of ours) and was reported as not holding the
// rendezvous "within N ms" of an immediate refusal.
bool port_taken(int port) {
    try {
        return run_record::probe_tcp_port(port).error == EADDRINUSE;
    } catch (const std::runtime_error&) {
        return false;  // c10d's own attempt will say what is wrong
    }
}

// A connection to the rendezvous's store, within the meeting's time. The ranks count themselves in
// (connect_within, wait_for_every_rank): c10d's server, told to wait for its workers, gives up
// silently in LibTorch 1.13, and the transport's own bootstrap then waited a second timeout
// before anything said a rank was missing.
c10d::TCPStoreOptions client_options(const Rendezvous& rendezvous) {
    c10d::TCPStoreOptions options;
    options.port = static_cast<std::uint16_t>(rendezvous.master_port);
    options.isServer = false;
    options.waitWorkers = false;
    options.timeout = meeting_timeout(rendezvous);
    return options;
}

c10::intrusive_ptr<c10d::Store> connect_store(const Rendezvous& rendezvous,
                                              const std::string& transport_name) {
    check_rendezvous(rendezvous, transport_name);
    if (rendezvous.rank == 0 && port_taken(rendezvous.master_port))
        throw TransportUnavailable(fmt::format(
            "{}: rank 0 cannot hold the rendezvous at {}:{}: the port is in use (another program "
            "or run listens on it); give --master another port, or --nproc to have one picked",
            transport_name, rendezvous.master_address, rendezvous.master_port));
    c10d::TCPStoreOptions options = client_options(rendezvous);
    options.isServer = rendezvous.rank == 0;
    options.numWorkers = static_cast<std::size_t>(rendezvous.world_size);
    const std::chrono::milliseconds timeout = options.timeout;
    try {
        return connect_within(rendezvous, options, timeout + std::chrono::milliseconds(2'000));
    } catch (const ConnectionGivenUp& ended) {
        throw TransportUnavailable(
            fmt::format("{}: rank {} stopped connecting to the rendezvous "
                        "at {}:{}: {}",
                        transport_name, rendezvous.rank, rendezvous.master_address,
                        rendezvous.master_port, ended.what()));
    } catch (const std::exception& error) {
        if (rendezvous.rank == 0)
            throw TransportUnavailable(fmt::format(
                "{}: rank 0 cannot hold the rendezvous for {} ranks at {}:{} within {} ms: {}",
                transport_name, rendezvous.world_size, rendezvous.master_address,
                rendezvous.master_port, timeout.count(), describe_exception(error)));
        throw TransportUnavailable(
            fmt::format("{}: rank {} cannot reach the rendezvous at {}:{} within {} ms: {}",
                        transport_name, rendezvous.rank, rendezvous.master_address,
                        rendezvous.master_port, timeout.count(), describe_exception(error)));
    }
}

}  // namespace

c10::intrusive_ptr<c10d::Store> connect_another_client(const Rendezvous& rendezvous) {
    return c10::make_intrusive<c10d::TCPStore>(rendezvous.master_address,
                                               client_options(rendezvous));
}

std::optional<std::string> ended_rank_reason(const Rendezvous& rendezvous) {
    if (const auto ended = first_ended_rank(rendezvous))
        return fmt::format("rank {} ended ({})", ended->first, ended->second);
    return std::nullopt;
}

std::string describe_exception(const std::exception& error) {
    std::string text = error_text(error);
    const std::size_t line_end = text.find('\n');
    if (line_end != std::string::npos)
        text.erase(line_end);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\r'))
        text.pop_back();
    return text;
}

RendezvousStore::RendezvousStore(const Rendezvous& rendezvous, std::string transport_name)
    : rendezvous_(rendezvous), transport_name_(std::move(transport_name)) {
    const auto deadline = Clock::now() + meeting_timeout(rendezvous_);
    store_ = connect_store(rendezvous_, transport_name_);
    try {
        if (rendezvous_.rank == 0)
            wait_for_every_rank(deadline);
        check_world_sizes(deadline);
    } catch (const TransportUnavailable& error) {
        if (rendezvous_.rank == 0)
            stay_for_the_ranks_that_came(error.what());
        throw;
    }
}

// The ranks that came wait in their transport's own connect for those that did not, and rank 0
// serves the store: leaving at once left them "Connection reset by peer". Unless the launcher
// told every rank that one ended, it writes why it gives up and stays, at most their connect's
// timeout and a second, until each has read it.
void RendezvousStore::stay_for_the_ranks_that_came(const std::string& why) {
    if (ended_rank_reason(rendezvous_))
        return;  // the others read the launcher's notice themselves
    std::int64_t came = 1;
    try {
        std::lock_guard lock(mutex_);
        came = store_->add(kJoinedKey, 0);  // adding 0 reads the count
    } catch (const std::exception&) {
        return;
    }
    std::string_view reason = why;
    if (const std::string prefix = transport_name_ + ": "; reason.starts_with(prefix))
        reason.remove_prefix(prefix.size());
    abort(fmt::format("rank 0 gave up the rendezvous: {}", reason));
    linger_until_abort_seen(
        rendezvous_.timeout + std::chrono::seconds(1),
        static_cast<int>(std::min<std::int64_t>(came, rendezvous_.world_size)) - 1);
}

void RendezvousStore::check_world_sizes(Clock::time_point deadline) {
    const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::max(deadline - Clock::now(), Clock::duration(std::chrono::milliseconds(100))));
    const auto world_size_of = [&](int rank) {
        const std::string text = to_text(
            wait_for(world_size_key(rank), fmt::format("rank {}'s world size", rank), remaining));
        return std::stoll(text);
    };
    const auto refuse = [&](int rank, long long of_rank, long long of_zero) {
        const std::string why = fmt::format(
            "rank {} was started with world size {}, rank 0 with {}: start every rank with the "
            "same --world-size (or give --nproc)",
            rank, of_rank, of_zero);
        if (rendezvous_.rank != 0)
            abort(why);  // read here, so rank 0 need not stay for this rank to read it
        throw TransportUnavailable(fmt::format("{}: {}", transport_name_, why));
    };
    try {
        if (rendezvous_.rank != 0) {
            if (const long long zero = world_size_of(0); zero != rendezvous_.world_size)
                refuse(rendezvous_.rank, rendezvous_.world_size, zero);
            return;
        }
        for (int rank = 1; rank < rendezvous_.world_size; ++rank)
            if (const long long theirs = world_size_of(rank); theirs != rendezvous_.world_size)
                refuse(rank, theirs, rendezvous_.world_size);
    } catch (const TransportTimeout& error) {
        throw TransportUnavailable(fmt::format("{}: {}", transport_name_, error.what()));
    } catch (const TransportAborted& error) {  // the other side refused first, or gave up
        throw TransportUnavailable(fmt::format("{}: {}", transport_name_, error.what()));
    }
}

void RendezvousStore::wait_for_every_rank(Clock::time_point deadline) {
    try {
        std::int64_t joined = store_->add(kJoinedKey, 0);  // adding 0 reads the count
        for (int attempt = 0; joined < rendezvous_.world_size;) {
            if (const auto ended = first_ended_rank(rendezvous_))
                throw TransportUnavailable(fmt::format(
                    "{}: rank {} ended ({}) before every rank joined the rendezvous ({} of {} did)",
                    transport_name_, ended->first, ended->second, joined, rendezvous_.world_size));
            if (Clock::now() >= deadline)
                throw TransportUnavailable(fmt::format(
                    "{}: only {} of {} ranks joined the rendezvous at {}:{} within {} ms (start "
                    "every rank with --world-size {} and this --master, or give --nproc {})",
                    transport_name_, joined, rendezvous_.world_size, rendezvous_.master_address,
                    rendezvous_.master_port, meeting_timeout(rendezvous_).count(),
                    rendezvous_.world_size, rendezvous_.world_size));
            sleep_before_next_poll(attempt, deadline);
            joined = store_->add(kJoinedKey, 0);
        }
    } catch (const TransportUnavailable&) {
        throw;
    } catch (const std::exception& error) {
        throw TransportUnavailable(lost_store_reason(error));
    }
}

std::string RendezvousStore::lost_store_reason(const std::exception& error) const {
    return fmt::format("{}: rank {} lost the rendezvous store at {}:{} (has rank 0 exited?): {}",
                       transport_name_, rendezvous_.rank, rendezvous_.master_address,
                       rendezvous_.master_port, describe_exception(error));
}

std::string RendezvousStore::abort(const std::string& reason) {
    const std::string written =
        reason.empty() ? fmt::format("rank {} aborted without a reason", rendezvous_.rank) : reason;
    std::lock_guard lock(mutex_);
    if (known_abort_reason_)
        return *known_abort_reason_;
    try {
        // An empty expected value means "only if the key is absent": the first reason wins.
        known_abort_reason_ = to_text(store_->compareSet(kAbortKey, {}, to_bytes(written)));
        acknowledge_abort_locked();
    } catch (const std::exception&) {
        known_abort_reason_ = known_abort_reason_.value_or(written);
    }
    return *known_abort_reason_;
}

void RendezvousStore::read_abort_reason_locked() {
    if (store_->check({kAbortKey})) {
        known_abort_reason_ = to_text(store_->get(kAbortKey));
        acknowledge_abort_locked();
    } else if (std::optional<std::string> ended = ended_rank_reason_locked()) {
        // Written as an abort, so every rank stops with the same first reason.
        known_abort_reason_ = to_text(store_->compareSet(kAbortKey, {}, to_bytes(*ended)));
        acknowledge_abort_locked();
    }
}

std::optional<std::string> RendezvousStore::abort_reason() {
    std::lock_guard lock(mutex_);
    if (known_abort_reason_)
        return known_abort_reason_;
    try {
        read_abort_reason_locked();
    } catch (const std::exception& error) {
        known_abort_reason_ = known_abort_reason_.value_or(lost_store_reason(error));
    }
    return known_abort_reason_;
}

std::optional<std::string> RendezvousStore::recorded_abort_reason(std::chrono::milliseconds grace) {
    for (const auto deadline = Clock::now() + grace;;
         std::this_thread::sleep_for(std::chrono::milliseconds(20))) {
        {
            std::lock_guard lock(mutex_);
            if (known_abort_reason_)
                return known_abort_reason_;
            try {
                read_abort_reason_locked();
            } catch (const std::exception&) {
                return std::nullopt;  // the store is gone: nobody's reason, and none will come
            }
            if (known_abort_reason_)
                return known_abort_reason_;
        }
        if (Clock::now() >= deadline)
            return std::nullopt;
    }
}

std::optional<std::string> RendezvousStore::ended_rank_reason_locked() {
    const auto now = Clock::now();
    if (!rendezvous_.ended || now < next_ended_check_)
        return std::nullopt;
    next_ended_check_ = now + kEndedCheckInterval;
    return ended_rank_reason(rendezvous_);
}

void RendezvousStore::acknowledge_abort_locked() {
    if (rendezvous_.rank != 0)
        store_->add(kAbortSeenKey, 1);
}

bool RendezvousStore::linger_until_abort_seen(std::chrono::milliseconds bound,
                                              std::optional<int> readers) {
    if (rendezvous_.rank != 0 || !known_abort_reason())
        return true;
    const int awaited = readers.value_or(rendezvous_.world_size - 1);
    const auto deadline = Clock::now() + bound;
    auto next_ended_look = Clock::now();
    for (int attempt = 0;;) {
        std::int64_t seen = 0;
        {
            std::lock_guard lock(mutex_);
            try {
                seen = store_->add(kAbortSeenKey, 0);  // adding 0 reads the count
            } catch (const std::exception&) {
                return false;
            }
        }
        if (seen >= awaited)
            return true;
        // A rank the kernel killed never reads the reason: once the launcher has seen every
        // other rank fail or be killed, nobody is left to wait for (and the launcher's grace,
        // counted from the first death, may be running out).
        if (Clock::now() >= next_ended_look) {
            if (every_other_rank_ended())
                return true;
            next_ended_look = Clock::now() + kEndedCheckInterval;
        }
        if (Clock::now() >= deadline)
            return false;
        sleep_before_next_poll(attempt, deadline);
    }
}

bool RendezvousStore::every_other_rank_ended() const {
    if (!rendezvous_.ended)
        return false;
    for (int rank = 0; rank < rendezvous_.world_size; ++rank)
        if (rank != rendezvous_.rank && !rendezvous_.ended(rank))
            return false;
    return true;
}

std::optional<std::string> RendezvousStore::known_abort_reason() {
    std::lock_guard lock(mutex_);
    return known_abort_reason_;
}

void RendezvousStore::throw_if_aborted() {
    if (std::optional<std::string> reason = abort_reason())
        throw TransportAborted(*reason);
}

void RendezvousStore::publish(const std::string& key, const std::vector<std::uint8_t>& value) {
    std::lock_guard lock(mutex_);
    try {
        store_->set(key, value);
    } catch (const std::exception& error) {
        known_abort_reason_ = known_abort_reason_.value_or(lost_store_reason(error));
        throw TransportAborted(*known_abort_reason_);
    }
}

std::vector<std::uint8_t> RendezvousStore::wait_for(const std::string& key, const std::string& what,
                                                    std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    for (int attempt = 0;;) {
        throw_if_aborted();
        {
            std::lock_guard lock(mutex_);
            try {
                if (store_->check({key}))
                    return store_->get(key);
            } catch (const std::exception& error) {
                known_abort_reason_ = known_abort_reason_.value_or(lost_store_reason(error));
                throw TransportAborted(*known_abort_reason_);
            }
        }
        if (Clock::now() >= deadline)
            throw TransportTimeout(
                fmt::format("{} did not arrive within {} ms", what, timeout.count()));
        sleep_before_next_poll(attempt, deadline);
    }
}

void RendezvousStore::barrier(std::chrono::milliseconds timeout) {
    constexpr int kQuickPolls = 200;
    constexpr auto kQuickPollSleep = std::chrono::microseconds(250);
    constexpr auto kSlowPollSleep = std::chrono::milliseconds(2);
    std::string key;
    {
        std::lock_guard lock(mutex_);
        key = fmt::format("pipelens/barrier/{}", barriers_started_++);
    }
    const auto deadline = Clock::now() + timeout;
    throw_if_aborted();
    const auto count = [&](std::int64_t increment) {
        std::lock_guard lock(mutex_);
        try {
            return store_->add(key, increment);  // adding 0 reads the count
        } catch (const std::exception& error) {
            known_abort_reason_ = known_abort_reason_.value_or(lost_store_reason(error));
            throw TransportAborted(*known_abort_reason_);
        }
    };
    for (std::int64_t increment = 1, attempt = 0;; increment = 0, ++attempt) {
        std::int64_t arrived = count(increment);
        // Counted before the abort is asked: a rank that met the others here and ended just
        // after does not fail a barrier every rank reached. And counted again once an abort is
        // seen: the last rank may have arrived, left and been noted as ended between the count
        // above and the look at the launcher's notices (it counted itself before it ended).
        if (arrived >= rendezvous_.world_size)
            return;
        if (std::optional<std::string> reason = abort_reason()) {
            if (arrived = count(0); arrived >= rendezvous_.world_size)
                return;
            throw TransportAborted(*reason);
        }
        if (Clock::now() >= deadline)
            throw TransportTimeout(
                fmt::format("not every rank reached the barrier within {} ms ({} of {} did)",
                            timeout.count(), arrived, rendezvous_.world_size));
        std::this_thread::sleep_until(std::min<Clock::time_point>(
            Clock::now() + (attempt < kQuickPolls
                                ? std::chrono::duration_cast<Clock::duration>(kQuickPollSleep)
                                : std::chrono::duration_cast<Clock::duration>(kSlowPollSleep)),
            deadline));
    }
}

namespace {
std::string last_report_key(int rank) {
    return fmt::format("pipelens/last-report/{}", rank);
}
}  // namespace

void RendezvousStore::leave_last_report(const std::string& payload) {
    try {
        publish(last_report_key(rendezvous_.rank), to_bytes(payload));
    } catch (const std::exception&) {
    }
}

std::vector<std::string> RendezvousStore::gather_to_rank_zero(const std::string& payload,
                                                              std::chrono::milliseconds timeout) {
    std::int64_t call = 0;
    {
        std::lock_guard lock(mutex_);
        call = gathers_started_++;
    }
    const std::string prefix = fmt::format("pipelens/report/{}/", call);
    publish(prefix + std::to_string(rendezvous_.rank), to_bytes(payload));
    if (rendezvous_.rank != 0)
        return {};

    const auto deadline = Clock::now() + timeout;
    std::vector<std::optional<std::string>> reports(rendezvous_.world_size);
    // Reports are what explains a failure, so an abort does not end this wait; a rank that has
    // not reported by the deadline (it died or hangs) gets an empty payload. So does one known
    // to have ended, but only after one more look: it may have reported just before it ended.
    bool last_look = false;
    for (int attempt = 0;;) {
        std::vector<int> missing;
        {
            std::lock_guard lock(mutex_);
            try {
                for (int rank = 0; rank < rendezvous_.world_size; ++rank) {
                    if (reports[rank])
                        continue;
                    const std::string key = prefix + std::to_string(rank);
                    if (store_->check({key})) {
                        reports[rank] = to_text(store_->get(key));
                        store_->deleteKey(key);
                    } else if (const std::string last = last_report_key(rank);
                               store_->check({last})) {  // it ended before this gather
                        reports[rank] = to_text(store_->get(last));
                    } else {
                        missing.push_back(rank);
                    }
                }
            } catch (const std::exception& error) {
                known_abort_reason_ = known_abort_reason_.value_or(lost_store_reason(error));
                throw TransportAborted(*known_abort_reason_);
            }
        }
        if (missing.empty() || last_look || Clock::now() >= deadline)
            break;
        const RankEnded& ended = rendezvous_.ended;
        last_look = ended && std::all_of(missing.begin(), missing.end(),
                                         [&](int rank) { return ended(rank).has_value(); });
        if (!last_look)
            sleep_before_next_poll(attempt, deadline);
    }
    std::vector<std::string> all;
    all.reserve(reports.size());
    for (std::optional<std::string>& report : reports)
        all.push_back(report.value_or(""));
    return all;
}

}  // namespace pipelens::runtime
