// fr_trace's matching rules for collectives and transfers (see flight_recorder_rules.hpp).
#include "engine/import/flight_recorder_rules.hpp"

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <set>
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

std::int64_t plus(std::int64_t a, std::int64_t b) {
    std::int64_t sum = 0;
    return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<std::int64_t>::max() : sum;
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
    const std::string part = side == "output" ? "input" : "output";
    return OpDifference{"size_mismatch",
                        fmt::format("{} ({} {} elements x {} ranks)", expected,
                                    numel(reference_part), part, group_size),
                        fmt::format("{}", numel(whole)), side + " element count"};
}

}  // namespace

// Since PyTorch 2.7 a batch of collectives closes with an entry named after its op type in
// capitals ("ALLGATHER_coalesced", "REDUCE_SCATTER_coalesced"), and the ops inside stay
// "scheduled"; lower-case names ("allreduce_coalesced") are collectives of their own.
bool is_marker(const FlightRecorderEntry& entry) {
    const std::string& type = entry.op.type;
    const std::string suffix = "_coalesced";
    if (type == "coalesced")
        return true;
    if (type.size() <= suffix.size() ||
        type.compare(type.size() - suffix.size(), suffix.size(), suffix) != 0)
        return false;
    return std::all_of(type.begin(), type.end() - static_cast<std::ptrdiff_t>(suffix.size()),
                       [](char c) { return (c >= 'A' && c <= 'Z') || c == '_'; });
}

bool is_collective(const FlightRecorderEntry& entry) {
    return !entry.op.is_p2p() && !is_marker(entry);
}

bool is_gloo(const FlightRecorderEntry& entry) {
    return entry.op.backend == "gloo";
}

// Gloo records its collectives only: a send or recv takes the next op id without an entry, so
// ids missing before the first entry or between two are such ops, and one that never finished
// leaves no trace at all.
std::string gloo_dump_note(const FlightRecorderDump& dump) {
    if (std::none_of(dump.entries.begin(), dump.entries.end(), is_gloo))
        return "";
    std::int64_t unrecorded = 0;
    std::int64_t previous =
        dump.entries.front().record_id == 0 ? 0 : dump.entries.front().op_id - 1;
    for (const FlightRecorderEntry& entry : dump.entries) {
        if (entry.op_id > previous + 1)
            unrecorded += entry.op_id - previous - 1;
        previous = std::max(previous, entry.op_id);
    }
    return fmt::format(
        "rank {}: a Gloo dump: its entries stay 'scheduled' (Gloo records no events), so a "
        "retired one counts as completed on this rank, though Gloo retires an op that failed "
        "too; only collectives are recorded ({} op id(s) have no entry: sends or receives), so "
        "a hang in a send or recv does not show",
        dump.rank, unrecorded);
}

std::string gloo_missing_caveat(const FlightRecorderEntry& posted, const std::vector<int>& absent) {
    if (!is_gloo(posted))
        return "";
    return fmt::format(
        ": Gloo retires an op whether it ran or failed (timed out waiting), so the ranks that "
        "retired it do not show that rank(s) {} took part: a possible hang, unless the dump of "
        "rank(s) {} was taken before they posted it",
        fmt::join(absent, ", "), fmt::join(absent, ", "));
}

// The op a transfer's other side posts: "nccl:send 0->1" pairs with "nccl:recv 1<-0".
std::string partner_name(const FlightRecorderEntry& entry) {
    return entry.op.is_send()
               ? fmt::format("{}:recv {}<-{}", entry.op.backend, entry.op.dst, entry.op.src)
               : fmt::format("{}:send {}->{}", entry.op.backend, entry.op.src, entry.op.dst);
}

namespace {

bool one_of(const std::string& type, std::initializer_list<const char*> names) {
    return std::any_of(names.begin(), names.end(), [&](const char* name) { return type == name; });
}

// fr_trace's test of a side: its first tensor has a shape. A rank that is not the root of a
// gather or scatter records an empty placeholder there, and its dtype then says nothing.
bool has_tensor(const Shapes& shapes) {
    return !shapes.empty() && !shapes.front().empty();
}

std::set<std::string> dtype_set(const std::vector<std::string>& dtypes) {
    return {dtypes.begin(), dtypes.end()};
}

// fr_trace's Op.dtype_mismatch: dtypes compared as sets, sides without a tensor skipped, and
// the sides a collective leaves unused on some ranks exempt (a broadcast's input, a gather's
// output, a scatter's input).
bool dtypes_differ(const FlightRecorderEntry& ref, const FlightRecorderEntry& other) {
    const std::string& type = ref.op.type;
    if (!one_of(type, {"scatter", "gather", "broadcast"}) &&
        dtype_set(other.input_dtypes) != dtype_set(other.output_dtypes) &&
        has_tensor(other.input_sizes) && has_tensor(other.output_sizes))
        return true;
    if (!one_of(type, {"scatter", "broadcast"}) &&
        dtype_set(ref.input_dtypes) != dtype_set(other.input_dtypes) &&
        has_tensor(ref.input_sizes) && has_tensor(other.input_sizes))
        return true;
    return type != "gather" && dtype_set(ref.output_dtypes) != dtype_set(other.output_dtypes) &&
           has_tensor(ref.output_sizes) && has_tensor(other.output_sizes);
}

std::optional<OpDifference> size_rules(const FlightRecorderEntry& ref,
                                       const FlightRecorderEntry& other, std::size_t group_size) {
    const std::string& type = ref.op.type;
    std::optional<OpDifference> found;
    if (!one_of(type, {"all_to_all", "scatter"}) &&
        (found = size_difference("input sizes", ref.input_sizes, other.input_sizes)))
        return found;
    if (!one_of(type, {"all_to_all", "gather"}) &&
        (found = size_difference("output sizes", ref.output_sizes, other.output_sizes)))
        return found;
    if (one_of(type, {"all_reduce", "allreduce_coalesced"}) &&
        (found = size_difference("output sizes", ref.input_sizes, other.output_sizes)))
        return found;
    const auto group = static_cast<std::int64_t>(group_size);
    // fr_trace lists "all_gather_base", a name PyTorch never records, so it never checks
    // _all_gather_base; its rule holds for it all the same.
    if (one_of(type, {"all_gather", "_all_gather_base", "all_gather_into_tensor_coalesced"}) &&
        (found = element_count_difference(ref.input_sizes, other.output_sizes, group, "output")))
        return found;
    if (one_of(type,
               {"reduce_scatter", "_reduce_scatter_base", "reduce_scatter_tensor_coalesced"}) &&
        (found = element_count_difference(ref.output_sizes, other.input_sizes, group, "input")))
        return found;
    return std::nullopt;
}

}  // namespace

// fr_trace's collective rules (types.py, Op.match), in its order: type, sizes, dtypes, state.
std::optional<OpDifference> compare_collective(const FlightRecorderEntry& ref, EntryState ref_state,
                                               const FlightRecorderEntry& other,
                                               EntryState other_state, std::size_t group_size) {
    if (ref.op.type != other.op.type)
        return OpDifference{"type_mismatch", ref.profiling_name, other.profiling_name, "op"};
    if (std::optional<OpDifference> size = size_rules(ref, other, group_size))
        return size;
    if (dtypes_differ(ref, other))
        return OpDifference{
            "dtype_mismatch",
            dtypes_text(ref.input_dtypes) + " -> " + dtypes_text(ref.output_dtypes),
            dtypes_text(other.input_dtypes) + " -> " + dtypes_text(other.output_dtypes),
            "dtypes (in -> out)"};
    if (ref_state != other_state)
        return OpDifference{"state_mismatch", std::string(entry_state_name(ref_state)),
                            std::string(entry_state_name(other_state)), "state"};
    return std::nullopt;
}

// fr_trace's check_size_alltoall: whatever each rank sends and receives, the group as a whole
// receives every element it sends.
std::optional<OpDifference> compare_all_to_all_totals(
    const std::vector<const FlightRecorderEntry*>& entries) {
    std::int64_t in = 0;
    std::int64_t out = 0;
    for (const FlightRecorderEntry* entry : entries) {
        in = plus(in, numel(entry->input_sizes));
        out = plus(out, numel(entry->output_sizes));
    }
    if (in == out)
        return std::nullopt;
    return OpDifference{"size_mismatch", fmt::format("{} elements", in),
                        fmt::format("{} elements", out), "elements sent and received in all"};
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

bool records_all_to_all_sizes(const std::string& version) {
    const std::size_t dot = version.find('.');
    const int major = std::atoi(version.substr(0, dot).c_str());
    const int minor = dot == std::string::npos ? 0 : std::atoi(version.substr(dot + 1).c_str());
    return major > 2 || (major == 2 && minor >= 4);
}

}  // namespace pipelens::import
