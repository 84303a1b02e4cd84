// The ping-pong. The sender's clock alone times a round trip, so no clock offset enters it.
#include "engine/runtime/link_profiler.hpp"

#include <algorithm>

#include <torch/torch.h>

#include "engine/run_plan/repeated_timing.hpp"

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

int link_profile_tag_count(std::size_t size_count) {
    return kPhases * static_cast<int>(size_count) * kExchanges * 2;
}

std::vector<std::int64_t> link_profile_sizes(std::int64_t boundary_bytes) {
    const std::int64_t boundary = std::max<std::int64_t>(boundary_bytes, 4096);
    std::vector<std::int64_t> sizes{std::max<std::int64_t>(boundary / 4, 1024), boundary,
                                    4 * boundary};
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    return sizes;
}

std::vector<ProfileFigure> profile_links(Transport& transport, int tag_base,
                                         const std::vector<std::int64_t>& sizes,
                                         std::chrono::milliseconds timeout) {
    const int rank = transport.rank();
    std::vector<ProfileFigure> figures;
    for (int phase = 0; phase < kPhases; ++phase) {
        const bool asks = rank % 2 == phase && rank + 1 < transport.world_size();
        const bool answers = rank >= 1 && (rank - 1) % 2 == phase;
        if (!asks && !answers)
            continue;
        const int peer = asks ? rank + 1 : rank - 1;
        for (std::size_t size_index = 0; size_index < sizes.size(); ++size_index) {
            const torch::Tensor message = torch::zeros({sizes[size_index]}, torch::kUInt8);
            TensorList buffer{torch::empty({sizes[size_index]}, torch::kUInt8)};
            std::vector<std::int64_t> one_way;
            for (int exchange = 0; exchange < kExchanges; ++exchange) {
                const auto tag = [&](int direction) {
                    return tag_of(tag_base, sizes.size(), phase, size_index, exchange, direction);
                };
                if (answers) {
                    transport.recv(peer, tag(0), buffer, timeout);
                    transport.send(peer, tag(1), {message});
                    continue;
                }
                const auto start = std::chrono::steady_clock::now();
                transport.send(peer, tag(0), {message});
                transport.recv(peer, tag(1), buffer, timeout);
                const auto round_trip = std::chrono::steady_clock::now() - start;
                if (exchange >= kLinkWarmupExchanges)
                    one_way.push_back(
                        std::chrono::duration_cast<std::chrono::nanoseconds>(round_trip).count() /
                        2);
            }
            if (asks) {
                const Spread spread = spread_of(std::move(one_way));
                figures.push_back({rank, -1, -1, "", "link", peer, sizes[size_index], spread.median,
                                   spread.low, spread.high, spread.samples});
            }
        }
        transport.finish_sends(timeout);
    }
    return figures;
}

}  // namespace pipelens::runtime
