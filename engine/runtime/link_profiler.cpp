// The ping-pong. The sender's clock alone times a round trip, so no clock offset enters it.
#include "engine/runtime/link_profiler.hpp"

#include <algorithm>

#include <torch/torch.h>

#include "engine/run_record/repeated_timing.hpp"

namespace pipelens::runtime {
namespace {

constexpr int kExchanges = kLinkWarmupExchanges + kLinkTimedExchanges;
constexpr int kPhases = 2;

int tag_of(int tag_base, std::size_t size_count, int phase, std::size_t size_index, int exchange,
           int direction) {
    const int per_phase = static_cast<int>(size_count) * kExchanges * 2;
    return tag_base + phase * per_phase +
           (static_cast<int>(size_index) * kExchanges + exchange) * 2 + direction;
}

}  // namespace

// Large enough that the bytes term stands out of a loaded machine's scheduling noise, small
// enough to cost milliseconds.
constexpr std::int64_t kLargestLinkMessage = std::int64_t{64} << 20;

int link_profile_tag_count(std::size_t size_count) {
    return kPhases * static_cast<int>(size_count) * kExchanges * 2;
}

std::vector<std::int64_t> link_profile_sizes(std::int64_t boundary_bytes) {
    const std::int64_t boundary = std::max<std::int64_t>(boundary_bytes, 4096);
    std::vector<std::int64_t> sizes{std::max<std::int64_t>(boundary / 4, 1024), boundary,
                                    std::min<std::int64_t>(16 * boundary, kLargestLinkMessage)};
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    return sizes;
}

std::vector<run_record::ProfileFigure> profile_links(Transport& transport, int tag_base,
                                                     const std::vector<std::int64_t>& sizes,
                                                     std::chrono::milliseconds timeout) {
    const int rank = transport.rank();
    std::vector<run_record::ProfileFigure> figures;
    for (int phase = 0; phase < kPhases; ++phase) {
        const bool asks = rank % 2 == phase && rank + 1 < transport.world_size();
        const bool answers = rank >= 1 && (rank - 1) % 2 == phase;
        if (!asks && !answers)
            continue;
        const int peer = asks ? rank + 1 : rank - 1;
        std::vector<torch::Tensor> messages;
        std::vector<TensorList> buffers;
        for (const std::int64_t size : sizes) {
            messages.push_back(torch::zeros({size}, torch::kUInt8));
            buffers.push_back({torch::empty({size}, torch::kUInt8)});
        }
        // Sizes take turns within each round, so a load that comes and goes lands on all of
        // them alike instead of on whichever size was being timed then.
        std::vector<std::vector<std::int64_t>> one_way(sizes.size());
        for (int exchange = 0; exchange < kExchanges; ++exchange)
            for (std::size_t size_index = 0; size_index < sizes.size(); ++size_index) {
                const auto tag = [&](int direction) {
                    return tag_of(tag_base, sizes.size(), phase, size_index, exchange, direction);
                };
                if (answers) {
                    transport.recv(peer, tag(0), buffers[size_index], timeout);
                    transport.send(peer, tag(1), {messages[size_index]});
                    continue;
                }
                const auto start = std::chrono::steady_clock::now();
                transport.send(peer, tag(0), {messages[size_index]});
                transport.recv(peer, tag(1), buffers[size_index], timeout);
                const auto round_trip = std::chrono::steady_clock::now() - start;
                if (exchange >= kLinkWarmupExchanges)
                    one_way[size_index].push_back(
                        std::chrono::duration_cast<std::chrono::nanoseconds>(round_trip).count() /
                        2);
            }
        for (std::size_t size_index = 0; asks && size_index < sizes.size(); ++size_index) {
            const run_record::Spread spread = run_record::spread_of(std::move(one_way[size_index]));
            figures.push_back({rank, -1, -1, "", "link", peer, sizes[size_index], spread.median,
                               spread.low, spread.high, spread.samples});
        }
        transport.finish_sends(timeout);
    }
    return figures;
}

}  // namespace pipelens::runtime
