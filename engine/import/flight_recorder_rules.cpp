// fr_trace's matching rules for collectives and transfers (see flight_recorder_rules.hpp).
#include "engine/import/flight_recorder_rules.hpp"

#include <limits>
#include <vector>

#include <fmt/format.h>

namespace pipelens::import {
namespace {

using Shapes = std::vector<std::vector<std::int64_t>>;

std::string shapes_text(const Shapes& shapes) {
    std::string out = "[";
    for (std::size_t i = 0; i < shapes.size(); ++i) {
        out += i == 0 ? "[" : ", [";
        for (std::size_t k = 0; k < shapes[i].size(); ++k)
            out += (k == 0 ? "" : ", ") + std::to_string(shapes[i][k]);
        out += "]";
    }
    return out + "]";
}

std::string dtypes_text(const std::vector<std::string>& dtypes) {
    std::string out;
    for (const std::string& dtype : dtypes)
        out += (out.empty() ? "" : ", ") + dtype;
    return "[" + out + "]";
}

// Saturating: a crafted dump's sizes must not overflow (they only feed comparisons).
std::int64_t times(std::int64_t a, std::int64_t b) {
    std::int64_t product = 0;
    return __builtin_mul_overflow(a, b, &product) ? std::numeric_limits<std::int64_t>::max()
                                                  : product;
}

std::int64_t numel(const Shapes& shapes) {
    if (shapes.empty())
        return 0;
    std::int64_t count = 1;
    for (const std::int64_t dim : shapes.front())
        count = times(count, dim);
    return count;
}

std::optional<OpDifference> size_difference(const std::string& what, const Shapes& expected,
                                            const Shapes& actual) {
    if (expected == actual)
        return std::nullopt;
    return OpDifference{"size_mismatch", shapes_text(expected), shapes_text(actual), what};
}

// all_gather and reduce_scatter: the whole side (`whole`, named `side`) holds group_size times
// the elements of the reference's part.
std::optional<OpDifference> element_count_difference(const Shapes& reference_part,
                                                     const Shapes& whole, std::int64_t group_size,
                                                     const std::string& side) {
    const std::int64_t expected = times(numel(reference_part), group_size);
    if (numel(whole) == expected)
        return std::nullopt;
    return OpDifference{"size_mismatch", fmt::format("{} {} elements", expected, side),
                        fmt::format("{}", numel(whole)), side + " size"};
}

}  // namespace

bool is_marker(const FlightRecorderEntry& entry) {
    return entry.op.type == "coalesced";
}

bool is_collective(const FlightRecorderEntry& entry) {
    return !entry.op.is_p2p() && !is_marker(entry);
}

// The op a transfer's other side posts: "nccl:send 0->1" pairs with "nccl:recv 1<-0".
std::string partner_name(const FlightRecorderEntry& entry) {
    return entry.op.is_send()
               ? fmt::format("{}:recv {}<-{}", entry.op.backend, entry.op.dst, entry.op.src)
               : fmt::format("{}:send {}->{}", entry.op.backend, entry.op.src, entry.op.dst);
}

// fr_trace's collective rules (types.py, Op.match), sizes and dtypes before state.
std::optional<OpDifference> compare_collective(const FlightRecorderEntry& ref, EntryState ref_state,
                                               const FlightRecorderEntry& other,
                                               EntryState other_state, std::size_t group_size) {
    const std::string& type = ref.op.type;
    if (type != other.op.type)
        return OpDifference{"type_mismatch", ref.profiling_name, other.profiling_name, "op"};
    if (other.input_dtypes != other.output_dtypes || ref.input_dtypes != other.input_dtypes ||
        ref.output_dtypes != other.output_dtypes)
        return OpDifference{
            "dtype_mismatch",
            dtypes_text(ref.input_dtypes) + " -> " + dtypes_text(ref.output_dtypes),
            dtypes_text(other.input_dtypes) + " -> " + dtypes_text(other.output_dtypes),
            "dtypes (in -> out)"};
    if (type != "all_to_all") {  // fr_trace cannot decide all_to_all sizes pairwise
        std::optional<OpDifference> found;
        if (type != "scatter" &&
            (found = size_difference("input sizes", ref.input_sizes, other.input_sizes)))
            return found;
        if (type != "gather" &&
            (found = size_difference("output sizes", ref.output_sizes, other.output_sizes)))
            return found;
        if (type == "all_reduce" &&
            (found = size_difference("output sizes", ref.input_sizes, other.output_sizes)))
            return found;
        const auto group = static_cast<std::int64_t>(group_size);
        if ((type == "all_gather" || type == "_allgather_base") &&
            (found =
                 element_count_difference(ref.input_sizes, other.output_sizes, group, "output")))
            return found;
        if ((type == "reduce_scatter" || type == "_reduce_scatter_base") &&
            (found = element_count_difference(ref.output_sizes, other.input_sizes, group, "input")))
            return found;
    }
    if (ref_state != other_state)
        return OpDifference{"state_mismatch", std::string(entry_state_name(ref_state)),
                            std::string(entry_state_name(other_state)), "state"};
    return std::nullopt;
}

std::optional<OpDifference> compare_transfer(const FlightRecorderEntry& send,
                                             const FlightRecorderEntry& recv) {
    if (send.input_sizes != recv.output_sizes)
        return OpDifference{"size_mismatch", shapes_text(send.input_sizes),
                            shapes_text(recv.output_sizes), "sizes"};
    if (!send.input_dtypes.empty() && !recv.output_dtypes.empty() &&
        send.input_dtypes != recv.output_dtypes)
        return OpDifference{"dtype_mismatch", dtypes_text(send.input_dtypes),
                            dtypes_text(recv.output_dtypes), "dtypes"};
    return std::nullopt;
}

}  // namespace pipelens::import
