// The gloo transport: c10d::ProcessGroupGloo point-to-point sends and receives between one
// process per rank, bootstrapped, aborted and gathered through a RendezvousStore.
//
// Why it is built the way it is. Gloo cannot tell whether a send or receive is done without
// waiting for it, and a gloo wait that reaches its timeout does not just fail: it closes every
// connection of the process group ("Application timeout caused pair closure"). So no wait here
// is ever allowed to reach gloo's own timeout. Instead:
//   - a receive blocks in Work::wait with a limit well past its deadline, while a watchdog thread
//     polls the store's abort flag and the deadline and, when either fires, ends the wait with
//     Work::abort() (the wait returns false and the connections stay intact);
//   - a completion thread waits for sends, oldest first, and drops each copy of the sent tensors
//     as soon as its send is done; finish_sends() waits until none is left.
// Gloo also cannot receive a message larger than the buffer posted for it (it aborts the
// process) and fills a larger buffer without saying so. So every message starts with a header
// (message_header.hpp) at gloo tag tag*16 that the receiver checks before any data reaches its
// buffers. A small message travels inside that first wire message: one gloo exchange (the
// receiver's ready notice, then the data). Small means its tensors fit the inline capacity that
// sender and receiver both derive from the same ExpectedMessage (the receiver's configured
// tensors, up to kInlinePayloadBytes; kInlinePayloadBytes when unknown), so the receiver's
// buffer, header plus that capacity, holds the message it expects and can never be overrun by
// one it does not. A larger one sends its tensors at tags tag*16+1..., which the receiver posts,
// straight into its buffers, once the header has passed the check.
// Gloo sends only to a posted buffer, so post_recv posts the header's buffer when the schedule's
// RECV runs and recv() waits for it when the data is needed: a sender's message then moves while
// the receiver computes, instead of one round trip (ready notice, data) after it asks.
//
// Gloo's point-to-point works on host memory only: tensors on a GPU (`--device cuda` with
// `--transport gloo`) are copied to the host to be sent and land in a host buffer that is then
// copied to the GPU, so gloo + CUDA copies every message through the host both ways. That is
// correct but slow; nccl moves GPU tensors without the host.
//
// Invariants: a send copies its tensors before it returns (the caller may reuse them) and
// never blocks on the peer; every wait ends by its deadline or within one watchdog interval of
// an abort; a receive that timed out or was aborted stays posted in gloo (gloo holds only a weak
// pointer to its buffer and would stall the connection if the buffer went away while data is
// on its way), so its work is kept until the transport is destroyed, and it absorbs the message
// that arrives for it late: after a timeout or abort the transport should be dropped.
// Destruction never blocks on a peer: it aborts the waits still in progress, and gloo's
// destructors close the sockets without waiting for pending operations. Any method may be
// called from any thread (the executor uses one; abort() may come from another).
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO  // LibTorch's CMake config does not export it; libtorch_cpu has gloo
#endif

#include "engine/runtime/gloo_transport.hpp"

#include <algorithm>
#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include "engine/runtime/message_header.hpp"
#include "engine/runtime/rendezvous_store.hpp"

namespace pipelens::runtime {
namespace {

using Clock = std::chrono::steady_clock;
// c10d::Work in LibTorch 1.13 and 2.x alike, whatever its spelling.
using WorkHandle = decltype(std::declval<c10d::ProcessGroupGloo&>().send(
    std::declval<std::vector<at::Tensor>&>(), 0, 0));

constexpr const char* kTransportName = "gloo transport";
constexpr int kSlotsPerTag = kMaxTensorsPerMessage + 1;  // the header, then the tensors
constexpr int kLargestTag = INT_MAX / kSlotsPerTag - 1;
// A message whose tensors fit in this many bytes travels inside its header's wire message: one
// gloo exchange (the receiver's ready notice, then the data) instead of two. The receiver posts
// a buffer of this size for every header, so a sender can never overrun it.
constexpr std::int64_t kInlinePayloadBytes = std::int64_t{64} << 10;
constexpr std::int64_t kInlineAlignment = 16;  // any dtype may be viewed at an inline offset
// How often a waiting receive looks at the store's abort flag.
constexpr auto kAbortPollInterval = std::chrono::milliseconds(50);
// Gloo's own limit on a receive wait, past the receive's deadline; the watchdog ends the wait
// first, so reaching this would mean the watchdog is stuck.
constexpr auto kGlooWaitMargin = std::chrono::seconds(30);
// Gloo's own limit on one send wait; sends wait for their receiver for as long as the run goes
// on, and finish_sends() or the destructor bound the wait instead.
constexpr auto kSendWaitLimit = std::chrono::hours(24 * 7);

std::chrono::milliseconds until(Clock::time_point deadline) {
    return std::max(std::chrono::milliseconds(0),
                    std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
}

// The gloo tag of tensor `index` (0: the header, 1...: the tensors) of message `tag`.
int gloo_slot(int tag, int index) {
    if (tag < 0 || tag > kLargestTag)
        throw std::invalid_argument(
            fmt::format("{}: tag {} is outside 0..{} (each message uses {} gloo tags)",
                        kTransportName, tag, kLargestTag, kSlotsPerTag));
    return tag * kSlotsPerTag + index;
}

std::int64_t aligned(std::int64_t bytes) {
    return (bytes + kInlineAlignment - 1) / kInlineAlignment * kInlineAlignment;
}

// The bytes `items` take inline, each at an aligned offset.
template <typename Items, typename BytesOf>
std::int64_t aligned_total(const Items& items, BytesOf bytes_of) {
    std::int64_t total = 0;
    for (const auto& item : items)
        total += aligned(bytes_of(item));
    return total;
}

std::int64_t inline_bytes(const TensorList& tensors) {
    return aligned_total(tensors, [](const torch::Tensor& tensor) {
        return static_cast<std::int64_t>(tensor.nbytes());
    });
}

std::int64_t inline_bytes(const MessageHeader& header) {
    return aligned_total(header.tensors,
                         [](const TensorDescription& tensor) { return tensor.bytes(); });
}

// The most tensor bytes a message on a link travels inline with: what the receiver expects when
// it fits kInlinePayloadBytes (else nothing: such a message comes in parts), kInlinePayloadBytes
// when nobody said.
std::int64_t inline_capacity(const ExpectedMessage& expected) {
    if (!expected.known)
        return kInlinePayloadBytes;
    const std::int64_t total =
        aligned_total(expected.tensor_bytes, [](std::int64_t bytes) { return bytes; });
    return total <= kInlinePayloadBytes ? total : 0;
}

// The header and then each tensor's bytes at an aligned offset, as one uint8 tensor.
torch::Tensor pack_inline_message(int tag, const TensorList& tensors) {
    const torch::Tensor header = encode_message_header(tag, tensors, true, kTransportName);
    torch::Tensor packed =
        torch::zeros({kMessageHeaderBytes + inline_bytes(tensors)}, torch::kUInt8);
    std::uint8_t* bytes = packed.data_ptr<std::uint8_t>();
    std::memcpy(bytes, header.data_ptr(), kMessageHeaderBytes);
    std::int64_t offset = kMessageHeaderBytes;
    for (const torch::Tensor& tensor : tensors) {
        if (tensor.numel() == 0)
            continue;
        const torch::Tensor source = tensor.detach().to(torch::kCPU).contiguous();
        std::memcpy(bytes + offset, source.data_ptr(), source.nbytes());
        offset += aligned(static_cast<std::int64_t>(source.nbytes()));
    }
    return packed;
}

// Copies the tensors of a packed message (already checked to fit) into `buffers`.
void unpack_inline_message(const torch::Tensor& packed, TensorList& buffers) {
    torch::NoGradGuard no_grad;
    std::int64_t offset = kMessageHeaderBytes;
    for (torch::Tensor& buffer : buffers) {
        if (buffer.numel() == 0)
            continue;
        const auto bytes = static_cast<std::int64_t>(buffer.nbytes());
        buffer.copy_(
            packed.narrow(0, offset, bytes).view(buffer.scalar_type()).view(buffer.sizes()));
        offset += aligned(bytes);
    }
}

bool is_loopback(const std::string& address) {
    return address == "localhost" || address.rfind("127.", 0) == 0 || address == "::1";
}

// The network device gloo binds to. Like torchrun: GLOO_SOCKET_IFNAME names the interface when
// set; a loopback rendezvous means a single machine, so loopback it is; otherwise the address
// this machine's hostname resolves to.
std::shared_ptr<::gloo::transport::Device> make_gloo_device(const Rendezvous& rendezvous) {
    const char* interface = std::getenv("GLOO_SOCKET_IFNAME");
    if (interface != nullptr && *interface != '\0') {
        const std::string interfaces = interface;
        return c10d::ProcessGroupGloo::createDeviceForInterface(
            interfaces.substr(0, interfaces.find(',')));
    }
    if (is_loopback(rendezvous.master_address))
        return c10d::ProcessGroupGloo::createDeviceForHostname(rendezvous.master_address);
    return c10d::ProcessGroupGloo::createDefaultDevice();
}

c10::intrusive_ptr<c10d::ProcessGroupGloo> make_process_group(RendezvousStore& store) {
    const Rendezvous& rendezvous = store.rendezvous();
    try {
        auto options = c10d::ProcessGroupGloo::Options::create(rendezvous.timeout);
        options->devices.push_back(make_gloo_device(rendezvous));
        options->threads = 1;  // the pool runs collectives only; point-to-point needs none
        auto prefixed = c10::make_intrusive<c10d::PrefixStore>("pipelens/gloo", store.store());
        return c10::make_intrusive<c10d::ProcessGroupGloo>(prefixed, rendezvous.rank,
                                                           rendezvous.world_size, options);
    } catch (const std::exception& error) {
        throw TransportUnavailable(fmt::format(
            "{}: rank {} could not connect to the other ranks through gloo within {} ms: {}",
            kTransportName, rendezvous.rank, rendezvous.timeout.count(),
            describe_exception(error)));
    }
}

// Ends blocking receive waits from outside when their deadline passes or some rank aborts. It
// sleeps while nothing waits and is woken only when a wait's deadline comes before its next
// planned wake-up, so a receive costs it no thread switch on the fast path.
class ReceiveWatchdog {
  public:
    enum class Verdict { pending, timed_out, aborted };
    struct Watch {
        std::vector<WorkHandle> works;
        Clock::time_point deadline;
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
        auto last_poll = Clock::now();
        while (!stopping_) {
            if (watches_.empty()) {
                planned_wake_ = Clock::time_point::max();
                changed_.wait(lock, [&] { return stopping_ || !watches_.empty(); });
                // The first look at the store is one interval after waiting starts, so that
                // short receives never meet a store round trip.
                last_poll = Clock::now();
                continue;
            }
            planned_wake_ = last_poll + kAbortPollInterval;
            for (const Watch* watch : watches_)
                planned_wake_ = std::min(planned_wake_, watch->deadline);
            changed_.wait_until(lock, planned_wake_);  // a new earlier deadline wakes it
            if (stopping_)
                break;
            std::optional<std::string> reason;
            if (poll_now_ || Clock::now() >= last_poll + kAbortPollInterval) {
                poll_now_ = false;
                lock.unlock();
                reason = store_.abort_reason();
                lock.lock();
                last_poll = Clock::now();
            }
            end_expired_waits(reason.has_value());
        }
    }

    void end_expired_waits(bool aborted) {
        const auto now = Clock::now();
        for (Watch* watch : watches_) {
            if (watch->verdict != Verdict::pending)
                continue;
            if (aborted)
                watch->verdict = Verdict::aborted;
            else if (now >= watch->deadline)
                watch->verdict = Verdict::timed_out;
            else
                continue;
            for (const WorkHandle& work : watch->works)
                work->abort();
        }
    }

    RendezvousStore& store_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<Watch*> watches_;
    Clock::time_point planned_wake_ = Clock::time_point::max();
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
        WorkHandle work;
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
    bool drain_until(Clock::time_point until) {
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
            failure_ = fmt::format("{}: the send to rank {} (tag {}) failed: {}", kTransportName,
                                   pending_.front().peer, pending_.front().tag, *error);
        pending_.pop_front();
        changed_.notify_all();
    }

    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<PendingSend> pending_;
    WorkHandle in_wait_;
    std::optional<std::string> failure_;
    bool stopping_ = false;
    std::thread thread_;  // last: it starts once the members above exist
};

class GlooTransport final : public StoreBackedTransport {
  public:
    explicit GlooTransport(const Rendezvous& rendezvous)
        : StoreBackedTransport(rendezvous, kTransportName),
          process_group_(make_process_group(store_)),
          watchdog_(store_) {}

    void send(int peer, int tag, const TensorList& tensors) override;
    void send_expected(int peer, int tag, const TensorList& tensors,
                       const ExpectedMessage& expected) override;
    void post_recv(int peer, int tag, const ExpectedMessage& expected) override;
    ReceiveArrival recv(int peer, int tag, TensorList& buffers,
                        std::chrono::milliseconds timeout) override;
    void finish_sends(std::chrono::milliseconds timeout) override;
    void abort(const std::string& reason) override;

  private:
    void check_peer(int peer, const char* action) const;
    void post_send(const torch::Tensor& tensor, int peer, int tag, int index);
    WorkHandle post_receive(const torch::Tensor& tensor, int peer, int tag, int index);
    void send_inline_up_to(int peer, int tag, const TensorList& tensors, std::int64_t capacity);
    // A message's first wire message: its header, with room for an inline payload.
    struct PostedHeader {
        torch::Tensor buffer;
        WorkHandle work;
        std::int64_t capacity = 0;  // inline tensor bytes the buffer holds after the header
    };
    PostedHeader post_header(int peer, int tag, std::int64_t capacity);
    PostedHeader take_posted_header(int peer, int tag);
    void wait_for_receives(std::vector<WorkHandle> works, int peer, int tag,
                           Clock::time_point deadline, std::chrono::milliseconds timeout);
    [[noreturn]] void throw_failure(const std::string& what, const std::string& detail);

    c10::intrusive_ptr<c10d::ProcessGroupGloo> process_group_;
    SendCompleter sends_;
    ReceiveWatchdog watchdog_;
    std::mutex abandoned_mutex_;
    std::vector<WorkHandle> abandoned_receives_;  // see the invariants above
    std::mutex posted_mutex_;
    // Headers posted ahead by post_recv, by (peer, tag), until recv takes them; one never taken
    // (its step failed) stays posted until the transport is destroyed, as an abandoned one does.
    std::map<std::pair<int, int>, PostedHeader> posted_headers_;
};

void GlooTransport::check_peer(int peer, const char* action) const {
    if (peer < 0 || peer >= world_size() || peer == rank())
        throw std::invalid_argument(fmt::format("{}: rank {} cannot {} rank {} (world size {})",
                                                kTransportName, rank(), action, peer,
                                                world_size()));
}

// A failure gloo reported: when some rank aborted (a peer that fails usually aborts before its
// connections close), that reason is the one the user needs.
void GlooTransport::throw_failure(const std::string& what, const std::string& detail) {
    if (std::optional<std::string> reason = store_.abort_reason())
        throw TransportAborted(*reason);
    throw std::runtime_error(
        fmt::format("{}: rank {} {}: {}", kTransportName, rank(), what, detail));
}

void GlooTransport::post_send(const torch::Tensor& tensor, int peer, int tag, int index) {
    std::vector<at::Tensor> one{tensor};
    WorkHandle work;
    try {
        work = process_group_->send(one, peer, gloo_slot(tag, index));
    } catch (const std::invalid_argument&) {
        throw;
    } catch (const std::exception& error) {
        throw_failure(fmt::format("could not send to rank {} (tag {})", peer, tag),
                      describe_exception(error));
    }
    sends_.add({std::move(work), tensor, peer, tag});
}

void GlooTransport::send(int peer, int tag, const TensorList& tensors) {
    send_inline_up_to(peer, tag, tensors, kInlinePayloadBytes);
}

void GlooTransport::send_expected(int peer, int tag, const TensorList& tensors,
                                  const ExpectedMessage& expected) {
    send_inline_up_to(peer, tag, tensors, inline_capacity(expected));
}

void GlooTransport::send_inline_up_to(int peer, int tag, const TensorList& tensors,
                                      std::int64_t capacity) {
    check_peer(peer, "send to");
    gloo_slot(tag, 0);  // checks the tag before anything is posted
    if (inline_bytes(tensors) <= capacity) {
        post_send(pack_inline_message(tag, tensors), peer, tag, 0);
        return;
    }
    post_send(encode_message_header(tag, tensors, false, kTransportName), peer, tag, 0);
    for (std::size_t index = 0; index < tensors.size(); ++index) {
        if (tensors[index].numel() == 0)
            continue;  // the header says so; nothing to put on the wire
        torch::Tensor copy =
            at::empty_like(tensors[index], tensors[index].options().device(torch::kCPU),
                           at::MemoryFormat::Contiguous);
        copy.copy_(tensors[index].detach());
        post_send(copy, peer, tag, static_cast<int>(index) + 1);
    }
}

WorkHandle GlooTransport::post_receive(const torch::Tensor& tensor, int peer, int tag, int index) {
    std::vector<at::Tensor> one{tensor};
    try {
        return process_group_->recv(one, peer, gloo_slot(tag, index));
    } catch (const std::invalid_argument&) {
        throw;
    } catch (const std::exception& error) {
        throw_failure(fmt::format("could not receive from rank {} (tag {})", peer, tag),
                      describe_exception(error));
    }
}

void GlooTransport::wait_for_receives(std::vector<WorkHandle> works, int peer, int tag,
                                      Clock::time_point deadline,
                                      std::chrono::milliseconds timeout) {
    ReceiveWatchdog::Watch watch{works, deadline};
    watchdog_.watch(&watch);
    bool completed = true;
    std::optional<std::string> error;
    try {
        for (const WorkHandle& work : works) {
            if (!work->wait(until(deadline) + kGlooWaitMargin)) {
                completed = false;
                break;
            }
        }
    } catch (const std::exception& caught) {
        completed = false;
        error = describe_exception(caught);
    }
    const ReceiveWatchdog::Verdict verdict = watchdog_.unwatch(&watch);
    if (completed)
        return;
    {
        std::lock_guard lock(abandoned_mutex_);
        abandoned_receives_.insert(abandoned_receives_.end(), works.begin(), works.end());
    }
    if (verdict == ReceiveWatchdog::Verdict::aborted)
        throw TransportAborted(store_.abort_reason().value_or("aborted"));
    if (verdict == ReceiveWatchdog::Verdict::timed_out)
        throw TransportTimeout(
            fmt::format("no data from rank {} (tag {}) within {} ms", peer, tag, timeout.count()));
    throw_failure(fmt::format("could not receive from rank {} (tag {})", peer, tag),
                  error.value_or("the wait ended without data"));
}

GlooTransport::PostedHeader GlooTransport::post_header(int peer, int tag, std::int64_t capacity) {
    torch::Tensor buffer = torch::empty({kMessageHeaderBytes + capacity}, torch::kUInt8);
    WorkHandle work = post_receive(buffer, peer, tag, 0);
    return {std::move(buffer), std::move(work), capacity};
}

void GlooTransport::post_recv(int peer, int tag, const ExpectedMessage& expected) {
    check_peer(peer, "receive from");
    PostedHeader posted = post_header(peer, tag, inline_capacity(expected));
    std::lock_guard lock(posted_mutex_);
    if (!posted_headers_.emplace(std::pair(peer, tag), std::move(posted)).second)
        throw std::logic_error(
            fmt::format("{}: rank {} posted a receive from rank {} (tag {}) twice", kTransportName,
                        rank(), peer, tag));
}

// The header post_recv posted for (peer, tag), or one posted now for a message nobody described
// (the largest inline capacity, as a plain send() assumes).
GlooTransport::PostedHeader GlooTransport::take_posted_header(int peer, int tag) {
    {
        std::lock_guard lock(posted_mutex_);
        const auto found = posted_headers_.find({peer, tag});
        if (found != posted_headers_.end()) {
            PostedHeader posted = std::move(found->second);
            posted_headers_.erase(found);
            return posted;
        }
    }
    return post_header(peer, tag, kInlinePayloadBytes);
}

// Gloo cannot say when a posted receive completed without waiting for it (see the top), so the
// arrival of a message that came while this rank computed is not known: recv() returns none.
ReceiveArrival GlooTransport::recv(int peer, int tag, TensorList& buffers,
                                   std::chrono::milliseconds timeout) {
    check_peer(peer, "receive from");
    if (std::optional<std::string> reason = store_.known_abort_reason())
        throw TransportAborted(*reason);
    const auto deadline = Clock::now() + timeout;

    const PostedHeader header_receive = take_posted_header(peer, tag);
    const torch::Tensor& first = header_receive.buffer;
    wait_for_receives({header_receive.work}, peer, tag, deadline, timeout);
    const MessageHeader header = decode_message_header(
        first.narrow(0, 0, kMessageHeaderBytes).view(torch::kInt64), peer, rank(), kTransportName);
    if (header.tag != tag ||
        (header.inline_payload && inline_bytes(header) > header_receive.capacity))
        throw std::runtime_error(
            fmt::format("{}: rank {} received a malformed message header from rank {} (tag {})",
                        kTransportName, rank(), peer, tag));
    check_message_fits(header, buffers, peer, rank());
    if (header.inline_payload) {
        unpack_inline_message(first, buffers);
        return std::nullopt;
    }

    // Receive straight into the caller's buffers when gloo can write them as they are.
    TensorList landing(buffers.size());
    std::vector<WorkHandle> works;
    for (std::size_t index = 0; index < buffers.size(); ++index) {
        const torch::Tensor& buffer = buffers[index];
        if (buffer.numel() == 0)
            continue;
        landing[index] = buffer.is_cpu() && buffer.is_contiguous()
                             ? buffer
                             : torch::empty({buffer.numel()}, buffer.options().device(torch::kCPU));
        works.push_back(post_receive(landing[index], peer, tag, static_cast<int>(index) + 1));
    }
    wait_for_receives(std::move(works), peer, tag, deadline, timeout);
    for (std::size_t index = 0; index < buffers.size(); ++index) {
        if (landing[index].defined() && !landing[index].is_same(buffers[index])) {
            torch::NoGradGuard no_grad;
            buffers[index].copy_(landing[index].view(buffers[index].sizes()));
        }
    }
    return std::nullopt;
}

void GlooTransport::finish_sends(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (!sends_.drain_until(std::min(Clock::now() + kAbortPollInterval, deadline))) {
        if (std::optional<std::string> reason = store_.abort_reason())
            throw TransportAborted(*reason);
        if (Clock::now() >= deadline) {
            const auto oldest = sends_.oldest_pending();
            if (!oldest)
                break;  // drained just now
            throw TransportTimeout(fmt::format(
                "rank {} did not receive the message from rank {} (tag {}) within {} ms",
                oldest->first, rank(), oldest->second, timeout.count()));
        }
    }
    if (std::optional<std::string> failure = sends_.failure()) {
        if (std::optional<std::string> reason = store_.abort_reason())
            throw TransportAborted(*reason);
        throw std::runtime_error(*failure);
    }
}

void GlooTransport::abort(const std::string& reason) {
    store_.abort(reason);
    watchdog_.poke();
}

}  // namespace

bool gloo_transport_built() {
    return true;
}

std::unique_ptr<Transport> make_gloo_transport(const Rendezvous& rendezvous) {
    return std::make_unique<GlooTransport>(rendezvous);
}

}  // namespace pipelens::runtime
