// Each device's part of a dim is found from its mesh coordinate, one mesh dim at a time: the
// positions that mesh dim keeps of what the earlier ones left (a Shard: its torch.chunk piece,
// ceil-sized, the last shorter or empty; a _S(d, f): its piece of each of f torch.chunk pieces),
// mapped back to global indices. Indices are kept as runs so a dim of 2^40 rows costs as little
// as one of 8; a layout that scatters a device's part into more runs than a person can read is
// refused rather than enumerated.
#include "engine/sharding/sharding_visualize.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

namespace pipelens::sharding {
namespace {

using Runs = std::vector<IndexRun>;

std::int64_t ceil_div(std::int64_t value, std::int64_t divisor) {
    return value / divisor + (value % divisor != 0);
}

// torch.chunk's piece `index` of `size` elements in `chunks` pieces, as positions.
IndexRun chunk_of(std::int64_t size, std::int64_t chunks, std::int64_t index) {
    const std::int64_t piece = ceil_div(size, chunks);
    std::int64_t begin = 0;
    if (piece == 0 || __builtin_mul_overflow(piece, index, &begin) || begin > size)
        begin = size;
    return {begin, begin + std::min(piece, size - begin)};
}

// `run` added after `runs`, merged into the last when adjacent; empty runs add nothing.
void append(Runs& runs, IndexRun run, const DTensorSpec& spec, int tensor_dim) {
    if (run.begin >= run.end)
        return;
    if (!runs.empty() && runs.back().end == run.begin) {
        runs.back().end = run.end;
        return;
    }
    if (runs.size() == kMostIndexRuns)
        throw std::invalid_argument(fmt::format(
            "{}: a device holds tensor dim {} in more than {} separate runs of indices; the "
            "layout reads the same on a smaller tensor",
            to_string(spec), tensor_dim, kMostIndexRuns));
    runs.push_back(run);
}

// The positions of `size` local elements a _S(d, factor) keeps on mesh coordinate `index` of
// `chunks`: the first split cuts `factor` pieces, each cut again into `chunks`; all but perhaps
// the last piece have the same length, so they keep the same part of themselves.
Runs strided_positions(std::int64_t size, std::int64_t chunks, std::int64_t index,
                       std::int64_t factor, const DTensorSpec& spec, int tensor_dim) {
    Runs positions;
    if (size == 0)
        return positions;
    const std::int64_t piece = ceil_div(size, factor);
    const std::int64_t full = size / piece;
    const IndexRun kept = chunk_of(piece, chunks, index);
    if (kept.end - kept.begin == piece)
        append(positions, {0, full * piece}, spec, tensor_dim);
    else if (kept.end > kept.begin)
        for (std::int64_t at = 0; at < full; ++at)
            append(positions, {at * piece + kept.begin, at * piece + kept.end}, spec, tensor_dim);
    const IndexRun last = chunk_of(size - full * piece, chunks, index);
    append(positions, {full * piece + last.begin, full * piece + last.end}, spec, tensor_dim);
    return positions;
}

// The global indices at `positions` of what a device held so far.
Runs select(const Runs& held, const Runs& positions, const DTensorSpec& spec, int tensor_dim) {
    Runs result;
    for (const IndexRun& wanted : positions) {
        std::int64_t skip = wanted.begin;
        std::int64_t take = wanted.end - wanted.begin;
        for (const IndexRun& run : held) {
            const std::int64_t length = run.end - run.begin;
            if (skip >= length) {
                skip -= length;
                continue;
            }
            const std::int64_t count = std::min(take, length - skip);
            append(result, {run.begin + skip, run.begin + skip + count}, spec, tensor_dim);
            take -= count;
            skip = 0;
            if (take == 0)
                break;
        }
    }
    return result;
}

std::int64_t count_of(const Runs& runs) {
    std::int64_t count = 0;
    for (const IndexRun& run : runs)
        count += run.end - run.begin;
    return count;
}

std::string runs_text(const Runs& runs) {
    if (runs.empty())
        return "(empty)";
    std::vector<std::string> parts;
    for (const IndexRun& run : runs)
        parts.push_back(fmt::format("{}-{}", run.begin, run.end - 1));
    return fmt::format("{}", fmt::join(parts, ","));
}

// Distinct parts in order of their first index, a part no device holds last.
std::vector<Runs> ordered(const std::set<Runs>& parts) {
    std::vector<Runs> result(parts.begin(), parts.end());
    std::stable_partition(result.begin(), result.end(),
                          [](const Runs& runs) { return !runs.empty(); });
    return result;
}

}  // namespace

std::vector<IndexRun> held_indices(const DTensorSpec& spec, const std::vector<int>& coordinate,
                                   int tensor_dim) {
    Runs held;
    append(held, {0, spec.tensor.shape.at(tensor_dim)}, spec, tensor_dim);
    for (int mesh_dim = 0; mesh_dim < spec.mesh.ndim(); ++mesh_dim) {
        const Placement& placement = spec.placements[mesh_dim];
        if (!placement.is_shard(tensor_dim))
            continue;
        const std::int64_t size = count_of(held);
        const int chunks = spec.mesh.size(mesh_dim);
        const Runs positions = placement.kind == PlacementKind::strided_shard
                                   ? strided_positions(size, chunks, coordinate[mesh_dim],
                                                       placement.split_factor, spec, tensor_dim)
                                   : Runs{chunk_of(size, chunks, coordinate[mesh_dim])};
        held = select(held, positions, spec, tensor_dim);
    }
    return held;
}

LocalShard local_shard(const DTensorSpec& spec, const std::vector<int>& coordinate) {
    LocalShard shard;
    for (int dim = 0; dim < static_cast<int>(spec.tensor.shape.size()); ++dim) {
        const Runs held = held_indices(spec, coordinate, dim);
        shard.shape.push_back(count_of(held));
        shard.offset.push_back(held.empty() ? spec.tensor.shape[dim] : held.front().begin);
    }
    return shard;
}

std::string visualize_sharding(const DTensorSpec& spec) {
    const int ndim = static_cast<int>(spec.tensor.shape.size());
    if (ndim < 1 || ndim > 2)
        throw std::invalid_argument(
            fmt::format("--show draws 1-D and 2-D tensors; {} has {} dims", to_string(spec), ndim));
    // A drawing is read by a person: a million devices took minutes and 95 MB of text.
    if (spec.mesh.size() > kLargestDrawnMesh)
        throw std::invalid_argument(fmt::format(
            "a drawing shows at most {} devices; {} has {} (the layout reads the same on "
            "a smaller mesh of the same shape)",
            kLargestDrawnMesh, to_string(spec.mesh), spec.mesh.size()));
    std::map<std::pair<Runs, Runs>, std::vector<int>> holders;
    std::set<Runs> row_set, column_set;
    for (int device = 0; device < spec.mesh.size(); ++device) {
        const std::vector<int> coordinate = spec.mesh.coordinate_of(device);
        const Runs row = ndim == 2 ? held_indices(spec, coordinate, 0) : Runs{{0, 1}};
        const Runs column = held_indices(spec, coordinate, ndim - 1);
        holders[{row, column}].push_back(device);
        row_set.insert(row);
        column_set.insert(column);
    }
    const std::vector<Runs> rows = ordered(row_set);
    const std::vector<Runs> columns = ordered(column_set);
    const std::string device_prefix = spec.mesh.device_type + ":";
    const auto cell = [&](const Runs& row, const Runs& column) {
        const auto found = holders.find({row, column});
        if (found == holders.end())
            return std::string("-");
        std::vector<std::string> names;
        for (int device : found->second)
            names.push_back(device_prefix + std::to_string(device));
        return fmt::format("{}", fmt::join(names, ", "));
    };
    const auto row_label = [&](const Runs& row) {
        return ndim == 2 ? fmt::format("rows {}", runs_text(row)) : std::string();
    };
    const auto column_label = [&](const Runs& column) {
        return fmt::format("{}{}", ndim == 2 ? "cols " : "", runs_text(column));
    };
    // Every label and cell keeps two spaces from the next, however long its numbers.
    std::size_t row_width = 12, width = 10;
    for (const Runs& row : rows) {
        row_width = std::max(row_width, row_label(row).size() + 2);
        for (const Runs& column : columns)
            width = std::max(width, cell(row, column).size() + 2);
    }
    for (const Runs& column : columns)
        width = std::max(width, column_label(column).size() + 2);
    std::string text = fmt::format("{} on {}\n", to_string(spec), to_string(spec.mesh));
    text += fmt::format("{:<{}}", "", row_width);
    for (const Runs& column : columns)
        text += fmt::format("{:<{}}", column_label(column), width);
    text += "\n";
    for (const Runs& row : rows) {
        text += fmt::format("{:<{}}", row_label(row), row_width);
        for (const Runs& column : columns)
            text += fmt::format("{:<{}}", cell(row, column), width);
        text += "\n";
    }
    if (spec.has_partial())
        text +=
            "partial: the devices of a cell each hold a partial value of it; a reduction "
            "completes it\n";
    std::string trimmed;  // without the padding at the end of each line
    for (char c : text) {
        if (c == '\n')
            while (!trimmed.empty() && trimmed.back() == ' ')
                trimmed.pop_back();
        trimmed += c;
    }
    return trimmed;
}

}  // namespace pipelens::sharding
