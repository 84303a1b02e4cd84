// The ping-pong behind ClockAlignment: a question is one int64 (unused), an answer three: when
// rank 0 received the question, when it answered, and its time zero, all on rank 0's clock.
#include "engine/runtime/clock_sync.hpp"

#include <vector>

#include <torch/torch.h>

namespace pipelens::runtime {
namespace {

torch::Tensor int64s(std::initializer_list<std::int64_t> values) {
    return torch::tensor(std::vector<std::int64_t>(values), torch::kInt64);
}

void answer_everyone(Transport& transport, int tag_base, const run_record::RankClock& clock,
                     std::int64_t own_zero_ns, std::chrono::milliseconds timeout) {
    for (int peer = 1; peer < transport.world_size(); ++peer)
        for (int exchange = 0; exchange < kClockExchanges; ++exchange) {
            TensorList question = {torch::empty({1}, torch::kInt64)};
            transport.recv(peer, tag_base + 2 * exchange, question, timeout);
            const std::int64_t received = clock.now_ns();
            transport.send(peer, tag_base + 2 * exchange + 1,
                           {int64s({received, clock.now_ns(), own_zero_ns})});
        }
}

}  // namespace

ClockAlignment align_clock_with_rank_zero(Transport& transport, int tag_base,
                                          const run_record::RankClock& clock,
                                          std::int64_t own_zero_ns,
                                          std::chrono::milliseconds timeout) {
    if (transport.rank() == 0) {
        answer_everyone(transport, tag_base, clock, own_zero_ns, timeout);
        return {{0, 0}, own_zero_ns};
    }
    std::vector<run_record::ClockExchange> exchanges;
    std::int64_t rank_zero_zero_ns = 0;
    for (int exchange = 0; exchange < kClockExchanges; ++exchange) {
        TensorList answer = {torch::empty({3}, torch::kInt64)};
        const std::int64_t asked = clock.now_ns();
        transport.send(0, tag_base + 2 * exchange, {int64s({exchange})});
        transport.recv(0, tag_base + 2 * exchange + 1, answer, timeout);
        const std::int64_t answer_received = clock.now_ns();
        const auto* values = answer[0].data_ptr<std::int64_t>();
        exchanges.push_back({asked, values[0], values[1], answer_received});
        rank_zero_zero_ns = values[2];
    }
    return {run_record::estimate_clock_offset(exchanges), rank_zero_zero_ns};
}

}  // namespace pipelens::runtime
