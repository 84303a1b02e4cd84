// The bounds form a system of difference constraints (shift[recv] - shift[send] >= send start -
// recv end), solved by Bellman-Ford from all-zero shifts: the result is the least non-negative
// shift that satisfies them, so ranks whose clocks already agree are left alone. A bound that
// still fails after rank-count rounds means a positive cycle: no single shift per rank can
// satisfy every pair (the clocks drifted during the trace); the best effort is kept and said.
#include "engine/import/clock_alignment.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace pipelens::import {
namespace {

struct Bound {
    int send_rank = 0;
    int recv_rank = 0;
    std::int64_t needed_ns = 0;  // shift[recv] - shift[send] must be at least this
};

std::vector<Bound> transfer_bounds(const ImportedRun& run) {
    struct End {
        int rank = -1;
        std::size_t step = 0;
    };
    std::map<int, std::pair<End, End>> pairs;  // link -> (send, recv)
    const Schedule& schedule = run.schedule;
    for (int rank = 0; rank < static_cast<int>(schedule.ranks.size()); ++rank)
        for (std::size_t step = 0; step < schedule.ranks[rank].size(); ++step) {
            const Action& action = schedule.ranks[rank][step];
            if (!is_communication(action.kind) || action.link < 0)
                continue;
            const bool sends =
                action.kind == ActionKind::send_forward || action.kind == ActionKind::send_backward;
            (sends ? pairs[action.link].first : pairs[action.link].second) = {rank, step};
        }
    // The tightest bound per (send rank, recv rank) is all the relaxation needs.
    std::map<std::pair<int, int>, std::int64_t> tightest;
    for (const auto& [link, ends] : pairs) {
        const auto& [send, recv] = ends;
        if (send.rank < 0 || recv.rank < 0 || send.rank == recv.rank)
            continue;
        const std::int64_t needed =
            run.timings[send.rank][send.step].start_ns - run.timings[recv.rank][recv.step].end_ns;
        auto [slot, inserted] = tightest.try_emplace({send.rank, recv.rank}, needed);
        if (!inserted)
            slot->second = std::max(slot->second, needed);
    }
    std::vector<Bound> bounds;
    for (const auto& [ranks, needed] : tightest)
        bounds.push_back({ranks.first, ranks.second, needed});
    return bounds;
}

}  // namespace

ClockAlignment align_clocks(ImportedRun& run) {
    const std::size_t ranks = run.timings.size();
    ClockAlignment alignment;
    alignment.shift_ns.assign(ranks, 0);
    const std::vector<Bound> bounds = transfer_bounds(run);
    alignment.pairs_used = static_cast<int>(bounds.size());
    for (const Bound& bound : bounds)
        alignment.largest_violation_ns = std::max(alignment.largest_violation_ns, bound.needed_ns);
    auto& shift = alignment.shift_ns;
    bool changed = true;
    for (std::size_t round = 0; round <= ranks && changed; ++round) {
        changed = false;
        for (const Bound& bound : bounds)
            if (shift[bound.recv_rank] - shift[bound.send_rank] < bound.needed_ns) {
                shift[bound.recv_rank] = shift[bound.send_rank] + bound.needed_ns;
                changed = true;
            }
    }
    alignment.consistent = !changed;
    // Rank 0 is the reference clock: move everything so that its shift is zero.
    const std::int64_t reference = ranks > 0 ? shift[0] : 0;
    const bool moved = std::any_of(shift.begin(), shift.end(),
                                   [reference](std::int64_t value) { return value != reference; });
    run.clocks.assign(ranks, std::nullopt);
    for (std::size_t rank = 0; rank < ranks; ++rank) {
        shift[rank] -= reference;
        for (ImportedTiming& timing : run.timings[rank]) {
            timing.start_ns += shift[rank];
            timing.end_ns += shift[rank];
        }
        if (rank < run.memory.size())
            for (traces::MemoryRecord& point : run.memory[rank])
                point.time_ns += shift[rank];
        // Only a moved clock has an estimate to keep; its uncertainty is what the files' own
        // clocks disagreed by.
        if (moved)
            run.clocks[rank] = run_record::ClockOffset{shift[rank], alignment.largest_violation_ns};
    }
    return alignment;
}

std::string clock_alignment_note(const ClockAlignment& clocks) {
    if (!clocks.consistent)
        return "clocks: the ranks' send/recv times contradict any one offset per rank (clock "
               "drift?); times are the best effort";
    if (clocks.largest_violation_ns > 0)
        return fmt::format(
            "clocks: the files' timestamps had a RECV end {} before its SEND started; ranks "
            "shifted onto rank 0's clock by the least that orders all {} rank pairs",
            duration_text(clocks.largest_violation_ns), clocks.pairs_used);
    return fmt::format(
        "clocks: the files' own timestamps, consistent with every send/recv ({} rank pairs "
        "checked)",
        clocks.pairs_used);
}

std::string duration_text(std::int64_t ns) {
    return ns >= 1'000'000 ? fmt::format("{:.3f} ms", static_cast<double>(ns) / 1e6)
                           : fmt::format("{:.1f} us", static_cast<double>(ns) / 1e3);
}

}  // namespace pipelens::import
