// The `local` transport: ranks are threads of one process sharing a LocalFabric of mailboxes.
// A send copies the tensors into the receiver's mailbox (so the receiver never aliases the
// sender's memory, as with a real wire); a receive waits on a condition variable for its
// (sender, tag) slot, the abort flag or the deadline. On a GPU each rank thread computes on its
// own stream (rank_streams.hpp): the copy is made on the sender's stream, and the receiver's
// stream waits for an event recorded after it before copying it into the receive buffer, the
// copy's memory marked as used by the receiver's stream, so no host wait orders them.
// A message on the host has arrived when it is deposited (the receiver only copies it out); one on
// a GPU arrives when the sender's stream has made the copy, which the host does not see, so only
// host messages report their arrival.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>

#include "engine/runtime/rank_streams.hpp"
#include "engine/runtime/transport.hpp"

namespace pipelens::runtime {

class LocalFabric {
  public:
    explicit LocalFabric(int world_size) : world_size_(world_size), gathered_(world_size) {}
    int world_size() const { return world_size_; }
    // Every rank's report so far, "" for a rank that has not reported: once the rank threads
    // have ended, the reports that came in after rank 0 stopped waiting too.
    std::vector<std::string> reports();

  private:
    friend class LocalTransport;
    using Key = std::tuple<int, int, int>;  // receiver, sender, tag
    struct Delivery {
        TensorList tensors;
        StreamHandOver ready;  // after the copy, on the sender's stream
        std::chrono::steady_clock::time_point deposited;
    };

    int world_size_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::map<Key, Delivery> mailboxes_;
    std::optional<std::string> abort_reason_;
    int barrier_arrived_ = 0;
    std::int64_t barrier_generation_ = 0;
    std::vector<std::optional<std::string>> gathered_;
};

class LocalTransport : public Transport {
  public:
    LocalTransport(std::shared_ptr<LocalFabric> fabric, int rank)
        : fabric_(std::move(fabric)), rank_(rank) {}

    int rank() const override { return rank_; }
    int world_size() const override { return fabric_->world_size(); }
    void send(int peer, int tag, const TensorList& tensors) override;
    ReceiveArrival recv(int peer, int tag, TensorList& buffers,
                        std::chrono::milliseconds timeout) override;
    void finish_sends(std::chrono::milliseconds) override {}
    bool shares_one_clock() const override { return true; }
    void barrier(std::chrono::milliseconds timeout) override;
    void abort(const std::string& reason) override;
    void check_aborted() override;
    std::vector<std::string> gather_to_rank_zero(const std::string& payload,
                                                 std::chrono::milliseconds timeout) override;

  private:
    std::shared_ptr<LocalFabric> fabric_;
    int rank_;
};

}  // namespace pipelens::runtime
