// Local transport. One mutex guards the whole fabric: a step moves a few hundred messages, and
// one lock keeps abort, delivery and waiting trivially consistent.
#include "engine/runtime/local_transport.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace pipelens::runtime {

void LocalTransport::send(int peer, int tag, const TensorList& tensors) {
    TensorList copies;
    copies.reserve(tensors.size());
    for (const torch::Tensor& tensor : tensors)
        copies.push_back(tensor.detach().clone());
    StreamHandOver ready = StreamHandOver::after_current_work(copies);
    {
        std::lock_guard lock(fabric_->mutex_);
        fabric_->mailboxes_[{peer, rank_, tag}] = {std::move(copies), std::move(ready),
                                                   std::chrono::steady_clock::now()};
    }
    fabric_->changed_.notify_all();
}

ReceiveArrival LocalTransport::recv(int peer, int tag, TensorList& buffers,
                                    std::chrono::milliseconds timeout) {
    std::unique_lock lock(fabric_->mutex_);
    const LocalFabric::Key key{rank_, peer, tag};
    const bool ready = fabric_->changed_.wait_for(
        lock, timeout, [&] { return fabric_->abort_reason_ || fabric_->mailboxes_.contains(key); });
    if (fabric_->abort_reason_)
        throw TransportAborted(*fabric_->abort_reason_);
    if (!ready)
        throw TransportTimeout(
            fmt::format("no data from rank {} (tag {}) within {} ms", peer, tag, timeout.count()));
    LocalFabric::Delivery delivery = std::move(fabric_->mailboxes_.at(key));
    fabric_->mailboxes_.erase(key);
    lock.unlock();
    const TensorList& sent = delivery.tensors;
    delivery.ready.before_use_on_current_stream(sent);
    if (sent.size() != buffers.size())
        throw std::runtime_error(
            fmt::format("rank {} sent {} tensors (tag {}) but rank {} expects {}", peer,
                        sent.size(), tag, rank_, buffers.size()));
    for (std::size_t index = 0; index < sent.size(); ++index) {
        if (sent[index].numel() != buffers[index].numel() ||
            sent[index].scalar_type() != buffers[index].scalar_type())
            throw std::runtime_error(fmt::format(
                "rank {} sent tensor {} (tag {}) with {} elements of {} but rank {} expects {} of "
                "{}",
                peer, index, tag, sent[index].numel(), c10::toString(sent[index].scalar_type()),
                rank_, buffers[index].numel(), c10::toString(buffers[index].scalar_type())));
        buffers[index].copy_(sent[index].view(buffers[index].sizes()));
    }
    const bool on_host = std::all_of(sent.begin(), sent.end(),
                                     [](const torch::Tensor& tensor) { return tensor.is_cpu(); });
    return on_host ? ReceiveArrival(delivery.deposited) : std::nullopt;
}

void LocalTransport::barrier(std::chrono::milliseconds timeout) {
    std::unique_lock lock(fabric_->mutex_);
    const std::int64_t generation = fabric_->barrier_generation_;
    if (++fabric_->barrier_arrived_ == fabric_->world_size()) {
        fabric_->barrier_arrived_ = 0;
        ++fabric_->barrier_generation_;
        fabric_->changed_.notify_all();
        return;
    }
    const bool passed = fabric_->changed_.wait_for(lock, timeout, [&] {
        return fabric_->abort_reason_ || fabric_->barrier_generation_ != generation;
    });
    if (fabric_->abort_reason_)
        throw TransportAborted(*fabric_->abort_reason_);
    if (!passed)
        throw TransportTimeout(
            fmt::format("not every rank reached the barrier within {} ms", timeout.count()));
}

void LocalTransport::abort(const std::string& reason) {
    {
        std::lock_guard lock(fabric_->mutex_);
        if (!fabric_->abort_reason_)
            fabric_->abort_reason_ = reason;
    }
    fabric_->changed_.notify_all();
}

void LocalTransport::check_aborted() {
    std::lock_guard lock(fabric_->mutex_);
    if (fabric_->abort_reason_)
        throw TransportAborted(*fabric_->abort_reason_);
}

std::vector<std::string> LocalTransport::gather_to_rank_zero(const std::string& payload,
                                                             std::chrono::milliseconds timeout) {
    std::unique_lock lock(fabric_->mutex_);
    fabric_->gathered_[rank_] = payload;
    fabric_->changed_.notify_all();
    if (rank_ != 0)
        return {};
    // A rank that has not reported in time is still computing (a thread cannot be stopped in
    // the middle of an operation): it gets an empty payload, as a silent process would.
    fabric_->changed_.wait_for(lock, timeout, [&] {
        for (const auto& item : fabric_->gathered_)
            if (!item)
                return false;
        return true;
    });
    std::vector<std::string> all;
    for (const auto& item : fabric_->gathered_)
        all.push_back(item.value_or(""));
    return all;
}

std::vector<std::string> LocalFabric::reports() {
    std::lock_guard lock(mutex_);
    std::vector<std::string> all;
    for (const auto& item : gathered_)
        all.push_back(item.value_or(""));
    return all;
}

}  // namespace pipelens::runtime
