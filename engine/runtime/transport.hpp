// How ranks exchange tensors: the one interface the executor talks to, implemented by `local`
// (ranks as threads of one process), `gloo` (one process per rank over TCP) and `nccl` (one
// process per GPU).
//
// Contract: send() never blocks on the peer (the schedule's deadlock freedom assumes
// non-blocking sends and blocking receives, as PyTorch's isend/irecv runtime does); recv()
// fills pre-allocated buffers and waits at most `timeout`, then throws TransportTimeout naming
// the peer and tag. Once any rank calls abort(), every wait on every rank ends within a bounded
// time with TransportAborted carrying the failing rank's reason, so a failure never becomes a
// hang.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/runtime/model_library.hpp"

namespace pipelens::runtime {

// How a rank's process ended ("killed by signal 9 (Killed)"), once a launcher has noticed it
// ended without success (its notice, rank_files.hpp); nullopt while it runs or when no launcher
// watches.
using RankEnded = std::function<std::optional<std::string>(int rank)>;

// How long rank 0 stays after refusing a run for the other ranks to read why
// (Transport::stay_until_abort_read): a refusal found at the rendezvous, with the others at most
// a model's building behind.
inline constexpr auto kStayForAbortReaders = std::chrono::milliseconds(2000);

class TransportTimeout : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// Another rank failed; what() is its reason ("rank 1: Stage 1 forward outputs[0] has ...").
class TransportAborted : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// The transport can not be created here (no device, not built in): the message says why.
class TransportUnavailable : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// Where the ranks of a multi-process run meet, torchrun's way: rank 0 serves a TCP store at
// master_address:master_port and the others connect to it.
struct Rendezvous {
    std::string master_address = "127.0.0.1";
    int master_port = 29500;
    int rank = 0;
    int world_size = 1;
    std::chrono::milliseconds timeout{10'000};  // connecting, and every later wait
    // The launcher's notices (may be empty). A rank that ended can no longer join, meet at a
    // barrier, send or report: every wait ends early once one has (as an abort naming it), not
    // at its timeout.
    RankEnded ended;
};

// When a received message had arrived, on the steady clock; empty when not known.
using ReceiveArrival = std::optional<std::chrono::steady_clock::time_point>;

// What a receiver expects a message to hold: each tensor's byte size, from the configured stage
// metadata both ends share (the receiving stage's inputs, or its outputs' gradients). A transport
// that stages messages sizes that staging by it; a message that differs still arrives and is
// refused by the receiver's checks. Unknown (`known` false): the transport assumes its largest.
struct ExpectedMessage {
    std::vector<std::int64_t> tensor_bytes;
    bool known = false;
};

class Transport {
  public:
    virtual ~Transport() = default;
    virtual int rank() const = 0;
    virtual int world_size() const = 0;

    virtual void send(int peer, int tag, const TensorList& tensors) = 0;
    // The same, saying what the receiver expects (its post_recv's `expected` must be the same):
    // the executor's sends. The default ignores it.
    virtual void send_expected(int peer, int tag, const TensorList& tensors,
                               const ExpectedMessage& /*expected*/) {
        send(peer, tag, tensors);
    }
    // Returns when the message was whole in this process, where the transport saw that happen
    // before recv() was asked (a thread's deposit into a mailbox); empty where only recv()'s
    // own return says it (the data may have been there long before).
    virtual ReceiveArrival recv(int peer, int tag, TensorList& buffers,
                                std::chrono::milliseconds timeout) = 0;
    // Starts receiving `tag` from `peer` now, where the transport can, and recv() of the same
    // peer and tag completes it later (PyTorch's irecv, then wait). A RECV action posts; the
    // action consuming its data receives. Gloo needs it: a sender's data moves only once the
    // receiver has posted its buffer, so a receive posted only when the data is needed costs a
    // round trip on the critical path. `expected` is what the sender's send_expected says;
    // `buffers` (may be empty) are the ones recv() will be given, which the transport may fill
    // from now on, but only with a message the size `expected` says. The default does nothing,
    // and recv() does all the work.
    virtual void post_recv(int /*peer*/, int /*tag*/, const ExpectedMessage& /*expected*/,
                           const TensorList& /*buffers*/) {}
    // Waits until this rank's sends have left (end of a step).
    virtual void finish_sends(std::chrono::milliseconds timeout) = 0;

    // Tells every rank to stop; `reason` says which rank failed and why.
    virtual void abort(const std::string& reason) = 0;
    // Throws TransportAborted when some rank has aborted.
    virtual void check_aborted() = 0;
    // For rank 0 after an abort, about to end with nothing left to gather: where rank 0 serves
    // the ranks' meeting place (gloo, nccl), a rank that looks after rank 0 has gone learns only
    // that it is lost, not why. So rank 0 stays until every other rank has read the reason, at
    // most `longest` and never past the rendezvous timeout. The default (ranks that are threads
    // of one process) returns at once.
    virtual void stay_until_abort_read(std::chrono::milliseconds /*longest*/) {}

    // Whether every rank reads one clock (threads of one process): their offsets are then
    // known, not estimated. Processes, even on one host, measure theirs.
    virtual bool shares_one_clock() const { return false; }

    // Returns once every rank has called it (so all ranks start a step together). The default
    // returns at once, for transports that cannot synchronise: their timelines start skewed.
    virtual void barrier(std::chrono::milliseconds /*timeout*/) {}

    // Every rank calls it; rank 0 gets all ranks' payloads in rank order, the others nothing.
    // It works after an abort too (reports explain failures); a rank that has not reported
    // within `timeout` (it died or hangs), or that has ended without reporting (Rendezvous::
    // ended), gets an empty payload, unless it left a last report (below).
    virtual std::vector<std::string> gather_to_rank_zero(const std::string& payload,
                                                         std::chrono::milliseconds timeout) = 0;
    // For a rank ending in an error before it reached the gather: its report (its failure),
    // which rank 0's gather takes in its place, so that the run says why that rank ended
    // rather than that it sent nothing. Never throws; the default (thread ranks, whose errors
    // their process sees) does nothing.
    virtual void leave_last_report(const std::string& /*payload*/) {}
};

}  // namespace pipelens::runtime
