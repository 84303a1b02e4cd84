// Placement text: the short forms DTensor prints (upstream main since late 2025, 2026 too:
// Partial shows its reduce op, `P(sum)`), and a reader for them so specs can be typed on the
// command line.
#include "engine/sharding/placement.hpp"

#include <charconv>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace pipelens::sharding {
namespace {

int read_int(std::string_view text, std::size_t& at) {
    int value = 0;
    const auto [end, error] = std::from_chars(text.data() + at, text.data() + text.size(), value);
    if (error != std::errc())
        throw std::invalid_argument(
            fmt::format("placements '{}': expected a number at position {}", text, at));
    at = static_cast<std::size_t>(end - text.data());
    return value;
}

void expect(std::string_view text, std::size_t& at, char wanted) {
    if (at >= text.size() || text[at] != wanted)
        throw std::invalid_argument(
            fmt::format("placements '{}': expected '{}' at position {}", text, wanted, at));
    ++at;
}

// A shard-order index after a shard, as a Spec prints it ("S(0)[1]", late-2025 upstream's
// "_S(0, 2)[1]"), when there is one. A strided shard's split factor already carries its order.
std::optional<int> read_shard_order(std::string_view text, std::size_t& at) {
    if (at >= text.size() || text[at] != '[')
        return std::nullopt;
    ++at;
    const int order = read_int(text, at);
    expect(text, at, ']');
    return order;
}

// Placements here apply in mesh-dim order, left to right: a tensor dim sharded on several mesh
// dims is split by the first of them first, which upstream writes S(0)[0]S(0)[1]. Another order
// (S(0)[1]S(0)[0]: the later mesh dim first) is a layout they cannot give, and was drawn as the
// default one; indices past the shards of their dim, or repeated, are no order at all.
void require_mesh_dim_order(std::string_view text,
                            const std::vector<std::pair<int, std::optional<int>>>& shards) {
    std::map<int, std::vector<std::optional<int>>> by_dim;
    for (const auto& [dim, order] : shards)
        by_dim[dim].push_back(order);
    for (const auto& [dim, orders] : by_dim) {
        bool given = false;
        bool in_order = true;
        for (std::size_t index = 0; index < orders.size(); ++index) {
            given |= orders[index].has_value();
            in_order &= !orders[index] || *orders[index] == static_cast<int>(index);
        }
        if (given && !in_order)
            throw std::invalid_argument(fmt::format(
                "placements '{}': the shard-order indices of tensor dim {} are not 0 to {} in "
                "mesh-dim order: pipelens splits a dim by its mesh dims left to right (S({})[0] "
                "first); give them in that order or without indices",
                text, dim, orders.size() - 1, dim));
    }
}

}  // namespace

bool operator==(const Placement& left, const Placement& right) {
    if (left.kind != right.kind)
        return false;
    switch (left.kind) {
        case PlacementKind::shard:
            return left.dim == right.dim;
        case PlacementKind::strided_shard:
            return left.dim == right.dim && left.split_factor == right.split_factor;
        case PlacementKind::partial:
            return left.reduce_op == right.reduce_op;
        case PlacementKind::mask_partial:
            return left.reduce_op == right.reduce_op && left.offset_shape == right.offset_shape &&
                   left.offset_dim == right.offset_dim;
        case PlacementKind::replicate:
            return true;
    }
    return false;
}

std::string to_string(const Placement& placement) {
    switch (placement.kind) {
        case PlacementKind::shard:
            return fmt::format("S({})", placement.dim);
        case PlacementKind::strided_shard:
            return fmt::format("_S({}, {})", placement.dim, placement.split_factor);
        case PlacementKind::partial:
            return fmt::format("P({})", placement.reduce_op);
        case PlacementKind::mask_partial:
            return fmt::format("MaskP({}, torch.Size([{}]), {})", placement.reduce_op,
                               fmt::join(placement.offset_shape, ", "), placement.offset_dim);
        case PlacementKind::replicate:
            return "R";
    }
    return "?";
}

std::string to_string(const std::vector<Placement>& placements) {
    std::string text;
    for (const Placement& placement : placements)
        text += to_string(placement);
    return text;
}

std::vector<Placement> parse_placements(std::string_view text) {
    std::vector<Placement> placements;
    std::vector<std::pair<int, std::optional<int>>> shards;  // plain shards' dims and orders
    std::size_t at = 0;
    while (at < text.size()) {
        if (text[at] == ' ' || text[at] == ',') {
            ++at;
        } else if (text[at] == 'R') {
            placements.push_back(Placement::replicate());
            ++at;
        } else if (text.substr(at, 2) == "S(") {
            at += 2;
            const int dim = read_int(text, at);
            expect(text, at, ')');
            placements.push_back(Placement::shard(dim));
            shards.push_back({dim, read_shard_order(text, at)});
        } else if (text.substr(at, 3) == "_S(") {
            at += 3;
            const int dim = read_int(text, at);
            expect(text, at, ',');
            while (at < text.size() && text[at] == ' ')
                ++at;
            const int factor = read_int(text, at);
            expect(text, at, ')');
            if (factor < 1)  // upstream's _StridedShard splits each shard `factor` ways
                throw std::invalid_argument(
                    fmt::format("placements '{}': _S({}, {}): a split factor is at least 1", text,
                                dim, factor));
            placements.push_back(Placement::strided_shard(dim, factor));
            read_shard_order(text, at);
        } else if (text[at] == 'P') {
            ++at;
            std::string op = "sum";
            if (at < text.size() && text[at] == '(') {
                const std::size_t close = text.find(')', at);
                if (close == std::string_view::npos)
                    throw std::invalid_argument(fmt::format("placements '{}': unclosed P(", text));
                op = std::string(text.substr(at + 1, close - at - 1));
                at = close + 1;
            }
            if (op != "sum" && op != "avg" && op != "max" && op != "min")
                throw std::invalid_argument(fmt::format(
                    "placements '{}': unknown reduce op '{}' (sum, avg, max, min)", text, op));
            placements.push_back(Placement::partial(op));
        } else {
            throw std::invalid_argument(fmt::format(
                "placements '{}': expected S(d), _S(d, f), R or P(op) at position {}", text, at));
        }
    }
    require_mesh_dim_order(text, shards);
    return placements;
}

}  // namespace pipelens::sharding
