// The nccl transport: ncclSend/ncclRecv between one process per GPU, through the CUDA runtime
// API only (no kernels of its own, so no nvcc), bootstrapped, aborted and gathered through a
// RendezvousStore.
//
// Why it is built the way it is. NCCL has no tags, matches a pair's sends and receives in the
// order they are issued, and a send does not complete (and blocks everything queued behind it
// on its stream) until the peer posts the matching receive. The schedules assume non-blocking,
// tagged sends. So:
//   - every ordered pair of ranks (sender, receiver) gets a channel of its own: a two-rank
//     communicator and a stream on each side, so a send waiting for its receiver holds up only
//     later sends to the same peer, never a receive or a send to another peer;
//   - every message is a fixed-size header (tag, dtypes, element counts; message_header.hpp)
//     followed by one send per tensor, and a receiver takes a channel's messages in the order
//     they come, keeping those with other tags until they are asked for;
//   - all channels are created and connected (one byte each way) in the constructor, where
//     every rank takes part, because NCCL connects a pair lazily at its first operation and
//     that would make the first send wait for the peer.
// CPU tensors (this LibTorch is CPU-only) are staged through device memory taken with
// cudaMallocAsync and given back with cudaFreeAsync in stream order: cudaFree would synchronise
// the device, and with an operation stuck on a peer that never returns. Host copies run on a
// separate copy stream that never carries NCCL work, so a pageable copy (which may wait for its
// stream) cannot wait for a peer either. CUDA tensors (a CUDA LibTorch) are copied on the GPU
// into the same staging after the legacy default stream, where LibTorch computes by default,
// has produced them; the copy keeps the caller free to reuse them, as on the other transports.
//
// Invariants: send never waits for a peer; every wait polls its CUDA event with a deadline and
// ends within kAbortPollInterval of some rank's abort; a channel that timed out, failed or saw
// an abort is aborted with ncclCommAbort (which ends its stuck kernels) and refuses further use;
// the destructor aborts the communicators whose operations may not have completed and destroys
// the others, so it never blocks on a peer.
#include "engine/runtime/nccl_transport.hpp"

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <unistd.h>

#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "engine/runtime/message_header.hpp"
#include "engine/runtime/rendezvous_store.hpp"

namespace pipelens::runtime {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kTransportName = "nccl transport";
constexpr auto kAbortPollInterval = std::chrono::milliseconds(50);
constexpr auto kLongestPollSleep = std::chrono::microseconds(1000);
constexpr int kSpinsBeforeSleeping = 64;
// The communicator ranks inside a channel.
constexpr int kSenderRank = 0;
constexpr int kReceiverRank = 1;

std::string nccl_error_text(ncclResult_t result, ncclComm_t comm) {
    std::string text = ncclGetErrorString(result);
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 13, 0)
    if (comm != nullptr) {
        const char* last = ncclGetLastError(comm);
        if (last != nullptr && *last != '\0')
            text += fmt::format(" ({})", last);
    }
#else
    (void)comm;
#endif
    return text;
}

void check_cuda(cudaError_t result, int rank, const char* what) {
    if (result != cudaSuccess)
        throw std::runtime_error(fmt::format("{}: rank {}: {} failed: {}", kTransportName, rank,
                                             what, cudaGetErrorString(result)));
}

void check_nccl(ncclResult_t result, ncclComm_t comm, int rank, const char* what) {
    if (result != ncclSuccess && result != ncclInProgress)
        throw std::runtime_error(fmt::format("{}: rank {}: {} failed: {}", kTransportName, rank,
                                             what, nccl_error_text(result, comm)));
}

// The device this rank uses, checked before anything else is set up.
void select_device(int rank, int device) {
    int count = 0;
    const cudaError_t result = cudaGetDeviceCount(&count);
    if (result != cudaSuccess || count == 0)
        throw TransportUnavailable(fmt::format(
            "{}: no CUDA device is visible to rank {} (cudaGetDeviceCount: {})", kTransportName,
            rank, result != cudaSuccess ? cudaGetErrorString(result) : "0 devices"));
    if (device < 0 || device >= count)
        throw TransportUnavailable(fmt::format(
            "{}: rank {} was given CUDA device {} but {} device{} visible (0..{})", kTransportName,
            rank, device, count, count == 1 ? " is" : "s are", count - 1));
    check_cuda(cudaSetDevice(device), rank, "cudaSetDevice");
    int pools = 0;
    check_cuda(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device), rank,
               "cudaDeviceGetAttribute");
    if (pools == 0)
        throw TransportUnavailable(fmt::format(
            "{}: CUDA device {} of rank {} has no stream-ordered allocator (cudaMallocAsync)",
            kTransportName, device, rank));
}

// Where this rank's GPU is: host and PCI bus id, so two ranks on one GPU can be told apart
// from two ranks on equal GPUs of different hosts.
std::string device_location(int rank, int device) {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    char bus[64] = {};
    check_cuda(cudaDeviceGetPCIBusId(bus, sizeof bus, device), rank, "cudaDeviceGetPCIBusId");
    return fmt::format("{} {}", host, bus);
}

std::string channel_key(int sender, int receiver) {
    return fmt::format("pipelens/nccl_id/{}/{}", sender, receiver);
}

// One direction between two ranks: a two-rank communicator and this rank's stream for it.
struct Channel {
    int peer = 0;
    bool outgoing = false;  // this rank sends on it
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
    bool may_have_work = false;         // an operation was issued and not seen to complete
    std::optional<std::string> broken;  // why it can no longer be used

    int peer_rank_in_comm() const { return outgoing ? kReceiverRank : kSenderRank; }
};

// A sent message, until its CUDA event says the channel is done with it.
struct PendingSend {
    int peer = 0;
    int tag = 0;
    cudaEvent_t done = nullptr;
    TensorList sources;  // kept until the staging copies have surely read them
};

// A message taken off a channel for another tag than the one being waited for.
struct ReceivedMessage {
    MessageHeader header;
    TensorList tensors;  // on the CPU
};

class NcclTransport final : public StoreBackedTransport {
  public:
    NcclTransport(const Rendezvous& rendezvous, int device);
    ~NcclTransport() override;
    NcclTransport(const NcclTransport&) = delete;
    NcclTransport& operator=(const NcclTransport&) = delete;

    void send(int peer, int tag, const TensorList& tensors) override;
    ReceiveArrival recv(int peer, int tag, TensorList& buffers,
                        std::chrono::milliseconds timeout) override;
    void finish_sends(std::chrono::milliseconds timeout) override;
    void abort(const std::string& reason) override;

  private:
    void require_distinct_devices();
    void create_channels();
    void connect_channels();
    Channel& channel(int peer, bool outgoing, const char* action);
    void* allocate(std::size_t bytes, cudaStream_t stream);
    cudaEvent_t record_event(cudaStream_t stream);
    void copy_to_host(void* host, const void* device, std::size_t bytes);
    void reap_completed_sends();
    // Polls `event` until it completes; see the invariants above. `describe_timeout` gives the
    // TransportTimeout message.
    void wait_for(Channel& channel, cudaEvent_t event, Clock::time_point deadline,
                  const std::function<std::string()>& describe_timeout);
    // Aborts the channel's communicator; it refuses further use, saying `why`.
    void break_channel(Channel& channel, const std::string& why);
    void break_all_channels(const std::string& why);
    ReceivedMessage receive_next_message(Channel& channel, int wanted_tag,
                                         Clock::time_point deadline,
                                         std::chrono::milliseconds timeout);

    int device_;
    cudaStream_t copy_stream_ = nullptr;
    std::vector<Channel> channels_;  // for each peer but this rank: outgoing, then incoming
    std::deque<PendingSend> pending_sends_;
    std::map<int, std::map<std::int64_t, std::deque<ReceivedMessage>>>
        kept_messages_;  // by peer, tag
};

NcclTransport::NcclTransport(const Rendezvous& rendezvous, int device)
    : StoreBackedTransport(rendezvous, kTransportName), device_(device) {
    try {
        // After the store, so that a rank whose device is unusable tells the others at once
        // (below) instead of leaving them to wait for it until their timeout.
        select_device(rank(), device_);
        require_distinct_devices();
        check_cuda(cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking), rank(),
                   "cudaStreamCreateWithFlags");
        create_channels();
        connect_channels();
    } catch (const std::exception& error) {
        // Tell the other ranks, which would otherwise wait for this one until their timeout.
        store_.abort(fmt::format("rank {}: {}", rank(), error.what()));
        break_all_channels("the transport could not be set up");
        for (Channel& channel : channels_)
            if (channel.stream != nullptr)
                cudaStreamDestroy(channel.stream);
        if (copy_stream_ != nullptr)
            cudaStreamDestroy(copy_stream_);
        // Rank 0 serves the store: leaving at once would let the others read "lost the store"
        // instead of this reason (as a second rank given the same GPU did).
        stay_until_abort_read(kStayForAbortReaders);
        throw;
    }
}

NcclTransport::~NcclTransport() {
    cudaSetDevice(device_);
    for (Channel& channel : channels_) {
        if (channel.comm == nullptr)
            continue;
        // A communicator whose work all completed is destroyed (which flushes it); any other
        // is aborted, which cannot block on a peer.
        if (channel.may_have_work || channel.broken)
            ncclCommAbort(channel.comm);
        else
            ncclCommDestroy(channel.comm);
        channel.comm = nullptr;
    }
    for (PendingSend& pending : pending_sends_)
        cudaEventDestroy(pending.done);
    for (Channel& channel : channels_)
        cudaStreamDestroy(channel.stream);
    cudaStreamDestroy(copy_stream_);
}

// NCCL refuses two ranks of one communicator on one GPU with a bare "invalid usage"; this
// names the ranks and the device instead.
void NcclTransport::require_distinct_devices() {
    const std::string mine = device_location(rank(), device_);
    store_.publish(fmt::format("pipelens/nccl_device/{}", rank()),
                   std::vector<std::uint8_t>(mine.begin(), mine.end()));
    for (int peer = 0; peer < world_size(); ++peer) {
        if (peer == rank())
            continue;
        const std::vector<std::uint8_t> bytes = store_.wait_for(
            fmt::format("pipelens/nccl_device/{}", peer),
            fmt::format("the device of rank {}", peer), store_.rendezvous().timeout);
        if (std::string(bytes.begin(), bytes.end()) == mine)
            throw TransportUnavailable(fmt::format(
                "{}: ranks {} and {} both use CUDA device {} ({}); NCCL needs one GPU per rank: "
                "give each rank its own device (LOCAL_RANK), or use --transport gloo",
                kTransportName, std::min(rank(), peer), std::max(rank(), peer), device_, mine));
    }
}

// Every rank publishes an id for each channel it sends on and reads the ids of the channels
// it receives on; then all communicators are created together (one NCCL group), so no rank
// waits for a peer that is still creating another channel.
void NcclTransport::create_channels() {
    std::map<int, ncclUniqueId> sending_ids;
    for (int peer = 0; peer < world_size(); ++peer) {
        if (peer == rank())
            continue;
        check_nccl(ncclGetUniqueId(&sending_ids[peer]), nullptr, rank(), "ncclGetUniqueId");
        const auto* bytes = reinterpret_cast<const std::uint8_t*>(&sending_ids[peer]);
        store_.publish(channel_key(rank(), peer),
                       std::vector<std::uint8_t>(bytes, bytes + sizeof(ncclUniqueId)));
    }
    std::vector<ncclUniqueId> ids;  // in the order of channels_
    for (int peer = 0; peer < world_size(); ++peer) {
        if (peer == rank())
            continue;
        const std::vector<std::uint8_t> theirs =
            store_.wait_for(channel_key(peer, rank()), fmt::format("the NCCL id of rank {}", peer),
                            store_.rendezvous().timeout);
        if (theirs.size() != sizeof(ncclUniqueId))
            throw TransportUnavailable(fmt::format(
                "{}: rank {} read an NCCL id of {} bytes from rank {} (expected {}); do all "
                "ranks run the same NCCL?",
                kTransportName, rank(), theirs.size(), peer, sizeof(ncclUniqueId)));
        ncclUniqueId receiving_id;
        std::memcpy(&receiving_id, theirs.data(), sizeof receiving_id);
        Channel outgoing;
        outgoing.peer = peer;
        outgoing.outgoing = true;
        Channel incoming;
        incoming.peer = peer;
        channels_.push_back(outgoing);
        ids.push_back(sending_ids[peer]);
        channels_.push_back(incoming);
        ids.push_back(receiving_id);
    }
    for (Channel& channel : channels_)
        check_cuda(cudaStreamCreateWithFlags(&channel.stream, cudaStreamNonBlocking), rank(),
                   "cudaStreamCreateWithFlags");
    check_nccl(ncclGroupStart(), nullptr, rank(), "ncclGroupStart");
    for (std::size_t index = 0; index < channels_.size(); ++index) {
        Channel& channel = channels_[index];
        ncclResult_t result = ncclCommInitRank(&channel.comm, 2, ids[index],
                                               channel.outgoing ? kSenderRank : kReceiverRank);
        if (result != ncclSuccess && result != ncclInProgress) {
            ncclGroupEnd();
            check_nccl(result, nullptr, rank(), "ncclCommInitRank");
        }
    }
    const ncclResult_t created = ncclGroupEnd();
    if (created != ncclSuccess)
        throw TransportUnavailable(
            fmt::format("{}: rank {} could not create its NCCL communicators: {}", kTransportName,
                        rank(), nccl_error_text(created, nullptr)));
}

// One byte each way on every channel, so that NCCL connects all pairs now.
void NcclTransport::connect_channels() {
    if (channels_.empty())
        return;
    void* byte = allocate(channels_.size(), copy_stream_);
    check_cuda(cudaMemsetAsync(byte, 0, channels_.size(), copy_stream_), rank(), "cudaMemsetAsync");
    const cudaEvent_t ready = record_event(copy_stream_);
    check_nccl(ncclGroupStart(), nullptr, rank(), "ncclGroupStart");
    for (std::size_t index = 0; index < channels_.size(); ++index) {
        Channel& channel = channels_[index];
        void* slot = static_cast<std::uint8_t*>(byte) + index;
        cudaStreamWaitEvent(channel.stream, ready, 0);
        channel.may_have_work = true;
        const ncclResult_t result = channel.outgoing
                                        ? ncclSend(slot, 1, ncclUint8, channel.peer_rank_in_comm(),
                                                   channel.comm, channel.stream)
                                        : ncclRecv(slot, 1, ncclUint8, channel.peer_rank_in_comm(),
                                                   channel.comm, channel.stream);
        if (result != ncclSuccess && result != ncclInProgress) {
            ncclGroupEnd();
            check_nccl(result, channel.comm, rank(), "connecting ncclSend/ncclRecv");
        }
    }
    check_nccl(ncclGroupEnd(), nullptr, rank(), "ncclGroupEnd (connecting)");
    cudaEventDestroy(ready);
    const auto deadline = Clock::now() + store_.rendezvous().timeout;
    for (Channel& channel : channels_) {
        const cudaEvent_t connected = record_event(channel.stream);
        try {
            wait_for(channel, connected, deadline, [&] {
                return fmt::format("{}: rank {} could not connect to rank {} within {} ms",
                                   kTransportName, rank(), channel.peer,
                                   store_.rendezvous().timeout.count());
            });
        } catch (const TransportTimeout& error) {
            cudaEventDestroy(connected);
            throw TransportUnavailable(error.what());
        }
        cudaEventDestroy(connected);
        channel.may_have_work = false;
    }
    check_cuda(cudaFreeAsync(byte, copy_stream_), rank(), "cudaFreeAsync");
}

Channel& NcclTransport::channel(int peer, bool outgoing, const char* action) {
    if (peer < 0 || peer >= world_size() || peer == rank())
        throw std::invalid_argument(fmt::format("{}: rank {} cannot {} rank {} (world size {})",
                                                kTransportName, rank(), action, peer,
                                                world_size()));
    const int index = 2 * (peer < rank() ? peer : peer - 1) + (outgoing ? 0 : 1);
    Channel& found = channels_[index];
    if (found.broken)
        throw std::runtime_error(
            fmt::format("{}: rank {} cannot {} rank {}: the channel was closed after {}",
                        kTransportName, rank(), action, peer, *found.broken));
    return found;
}

void* NcclTransport::allocate(std::size_t bytes, cudaStream_t stream) {
    void* pointer = nullptr;
    check_cuda(cudaMallocAsync(&pointer, std::max<std::size_t>(bytes, 1), stream), rank(),
               "cudaMallocAsync");
    return pointer;
}

cudaEvent_t NcclTransport::record_event(cudaStream_t stream) {
    cudaEvent_t event = nullptr;
    check_cuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), rank(),
               "cudaEventCreateWithFlags");
    const cudaError_t recorded = cudaEventRecord(event, stream);
    if (recorded != cudaSuccess) {
        cudaEventDestroy(event);
        check_cuda(recorded, rank(), "cudaEventRecord");
    }
    return event;
}

// Only called once the device data is known to be complete, so the copy stream never waits
// for a peer.
void NcclTransport::copy_to_host(void* host, const void* device, std::size_t bytes) {
    check_cuda(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDefault, copy_stream_), rank(),
               "cudaMemcpyAsync (device to host)");
    check_cuda(cudaStreamSynchronize(copy_stream_), rank(), "cudaStreamSynchronize (copy)");
}

void NcclTransport::break_channel(Channel& channel, const std::string& why) {
    if (channel.comm != nullptr && !channel.broken)
        ncclCommAbort(channel.comm);
    if (!channel.broken) {
        channel.comm = nullptr;
        channel.broken = why;
    }
}

void NcclTransport::break_all_channels(const std::string& why) {
    for (Channel& channel : channels_)
        break_channel(channel, why);
}

void NcclTransport::wait_for(Channel& channel, cudaEvent_t event, Clock::time_point deadline,
                             const std::function<std::string()>& describe_timeout) {
    auto next_store_poll = Clock::now() + kAbortPollInterval;
    auto sleep = std::chrono::microseconds(20);
    for (int spins = 0;; ++spins) {
        const cudaError_t state = cudaEventQuery(event);
        if (state == cudaSuccess)
            return;
        if (state != cudaErrorNotReady) {
            break_channel(channel, "a CUDA error");
            check_cuda(state, rank(), "cudaEventQuery");
        }
        ncclResult_t async_error = ncclSuccess;
        ncclCommGetAsyncError(channel.comm, &async_error);
        if (async_error != ncclSuccess && async_error != ncclInProgress) {
            const std::string text = nccl_error_text(async_error, channel.comm);
            break_channel(channel, "an NCCL error");
            if (std::optional<std::string> reason = store_.abort_reason())
                throw TransportAborted(*reason);
            throw std::runtime_error(fmt::format("{}: rank {}: the channel with rank {} failed: {}",
                                                 kTransportName, rank(), channel.peer, text));
        }
        const auto now = Clock::now();
        std::optional<std::string> reason = store_.known_abort_reason();
        if (!reason && now >= next_store_poll) {
            reason = store_.abort_reason();
            next_store_poll = now + kAbortPollInterval;
        }
        if (reason) {
            break_all_channels("an abort");
            throw TransportAborted(*reason);
        }
        if (now >= deadline) {
            break_channel(channel, "a timeout");
            throw TransportTimeout(describe_timeout());
        }
        if (spins < kSpinsBeforeSleeping) {
            std::this_thread::yield();
        } else {
            std::this_thread::sleep_for(sleep);
            sleep = std::min<std::chrono::microseconds>(sleep * 2, kLongestPollSleep);
        }
    }
}

void NcclTransport::reap_completed_sends() {
    while (!pending_sends_.empty()) {
        const cudaError_t state = cudaEventQuery(pending_sends_.front().done);
        if (state == cudaErrorNotReady)
            return;
        check_cuda(state, rank(), "cudaEventQuery (send)");
        cudaEventDestroy(pending_sends_.front().done);
        pending_sends_.pop_front();
    }
}

void NcclTransport::send(int peer, int tag, const TensorList& tensors) {
    Channel& out = channel(peer, true, "send to");
    reap_completed_sends();
    const torch::Tensor header = encode_message_header(tag, tensors, false, kTransportName);

    // Stage the header and the tensors in device memory on the copy stream.
    PendingSend pending{peer, tag, nullptr, {}};
    std::vector<std::pair<void*, std::size_t>> staged;
    bool waited_for_default_stream = false;
    for (std::size_t index = 0; index <= tensors.size(); ++index) {
        const torch::Tensor source = index == 0 ? header : tensors[index - 1].detach().contiguous();
        if (source.numel() == 0)
            continue;
        if (source.is_cuda() && !waited_for_default_stream) {
            const cudaEvent_t produced = record_event(cudaStreamLegacy);
            cudaStreamWaitEvent(copy_stream_, produced, 0);
            cudaEventDestroy(produced);
            waited_for_default_stream = true;
        }
        void* device = allocate(source.nbytes(), copy_stream_);
        check_cuda(cudaMemcpyAsync(device, source.data_ptr(), source.nbytes(), cudaMemcpyDefault,
                                   copy_stream_),
                   rank(), "cudaMemcpyAsync (to the staging buffer)");
        staged.emplace_back(device, source.nbytes());
        pending.sources.push_back(source);
    }
    const cudaEvent_t staged_event = record_event(copy_stream_);
    check_cuda(cudaStreamWaitEvent(out.stream, staged_event, 0), rank(), "cudaStreamWaitEvent");
    cudaEventDestroy(staged_event);

    // The header, then each tensor, in order: the receiver takes them in the same order.
    out.may_have_work = true;
    for (const auto& [device, bytes] : staged) {
        const ncclResult_t result =
            ncclSend(device, bytes, ncclUint8, out.peer_rank_in_comm(), out.comm, out.stream);
        if (result != ncclSuccess && result != ncclInProgress) {
            const std::string text = nccl_error_text(result, out.comm);
            break_channel(out, "a failed send");
            throw std::runtime_error(
                fmt::format("{}: rank {} could not send to rank {} (tag {}): {}", kTransportName,
                            rank(), peer, tag, text));
        }
    }
    for (const auto& [device, bytes] : staged)
        check_cuda(cudaFreeAsync(device, out.stream), rank(), "cudaFreeAsync");
    pending.done = record_event(out.stream);
    pending_sends_.push_back(std::move(pending));
}

ReceivedMessage NcclTransport::receive_next_message(Channel& in, int wanted_tag,
                                                    Clock::time_point deadline,
                                                    std::chrono::milliseconds timeout) {
    const auto describe_timeout = [&] {
        return fmt::format("no data from rank {} (tag {}) within {} ms", in.peer, wanted_tag,
                           timeout.count());
    };
    auto receive_into_device = [&](std::size_t bytes) {
        void* device = allocate(bytes, in.stream);
        in.may_have_work = true;
        const ncclResult_t result =
            ncclRecv(device, bytes, ncclUint8, in.peer_rank_in_comm(), in.comm, in.stream);
        if (result != ncclSuccess && result != ncclInProgress) {
            const std::string text = nccl_error_text(result, in.comm);
            break_channel(in, "a failed receive");
            throw std::runtime_error(fmt::format("{}: rank {} could not receive from rank {}: {}",
                                                 kTransportName, rank(), in.peer, text));
        }
        return device;
    };
    auto wait_and_release = [&](cudaEvent_t event) {
        try {
            wait_for(in, event, deadline, describe_timeout);
        } catch (...) {
            cudaEventDestroy(event);
            throw;
        }
        cudaEventDestroy(event);
    };

    ReceivedMessage message;
    torch::Tensor header = empty_message_header();
    void* header_device = receive_into_device(kMessageHeaderBytes);
    wait_and_release(record_event(in.stream));
    copy_to_host(header.data_ptr(), header_device, kMessageHeaderBytes);
    check_cuda(cudaFreeAsync(header_device, copy_stream_), rank(), "cudaFreeAsync");
    try {
        message.header = decode_message_header(header, in.peer, rank(), kTransportName);
    } catch (...) {
        break_channel(in, "a malformed message");
        throw;
    }

    std::vector<void*> payloads;
    for (const TensorDescription& tensor : message.header.tensors) {
        message.tensors.push_back(torch::empty({tensor.elements}, tensor.dtype));
        payloads.push_back(tensor.elements == 0 ? nullptr : receive_into_device(tensor.bytes()));
    }
    if (!payloads.empty())
        wait_and_release(record_event(in.stream));
    in.may_have_work = false;
    for (std::size_t index = 0; index < payloads.size(); ++index) {
        if (payloads[index] == nullptr)
            continue;
        copy_to_host(message.tensors[index].data_ptr(), payloads[index],
                     message.tensors[index].nbytes());
        check_cuda(cudaFreeAsync(payloads[index], copy_stream_), rank(), "cudaFreeAsync");
    }
    return message;
}

// The data lands on the GPU in stream order, which the host does not see: no arrival time.
ReceiveArrival NcclTransport::recv(int peer, int tag, TensorList& buffers,
                                   std::chrono::milliseconds timeout) {
    Channel& in = channel(peer, false, "receive from");
    if (std::optional<std::string> reason = store_.known_abort_reason())
        throw TransportAborted(*reason);
    const auto deadline = Clock::now() + timeout;
    auto& kept = kept_messages_[peer][tag];
    ReceivedMessage message;
    if (!kept.empty()) {
        message = std::move(kept.front());
        kept.pop_front();
    } else {
        for (;;) {
            message = receive_next_message(in, tag, deadline, timeout);
            if (message.header.tag == tag)
                break;
            kept_messages_[peer][message.header.tag].push_back(std::move(message));
        }
    }
    check_message_fits(message.header, buffers, peer, rank());
    torch::NoGradGuard no_grad;
    for (std::size_t index = 0; index < buffers.size(); ++index)
        if (buffers[index].numel() > 0)
            buffers[index].copy_(message.tensors[index].view(buffers[index].sizes()));
    return std::nullopt;
}

void NcclTransport::finish_sends(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (!pending_sends_.empty()) {
        PendingSend& oldest = pending_sends_.front();
        Channel& out = channel(oldest.peer, true, "send to");
        wait_for(out, oldest.done, deadline, [&] {
            return fmt::format(
                "rank {} did not receive the message from rank {} (tag {}) within {} ms",
                oldest.peer, rank(), oldest.tag, timeout.count());
        });
        cudaEventDestroy(oldest.done);
        pending_sends_.pop_front();
    }
    for (Channel& channel : channels_)
        if (channel.outgoing)
            channel.may_have_work = false;
}

void NcclTransport::abort(const std::string& reason) {
    // Only the store here: another thread may be waiting on the channels, and it ends its wait
    // (and aborts the communicators) within one poll.
    store_.abort(reason);
}

}  // namespace

bool nccl_transport_built() {
    return true;
}

std::unique_ptr<Transport> make_nccl_transport(const Rendezvous& rendezvous, int device) {
    return std::make_unique<NcclTransport>(rendezvous, device);
}

}  // namespace pipelens::runtime
