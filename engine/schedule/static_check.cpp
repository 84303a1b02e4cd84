// The static schedule check: one pass over every action with one flag byte per
// (stage, microbatch), then per-stage counts and, for lowered schedules, pairing.
#include "engine/schedule/static_check.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "engine/schedule/stage_microbatch_flags.hpp"

namespace pipelens {
namespace {

enum SeenFlag : std::uint8_t {
    kForward = 1 << 0,
    kInput = 1 << 1,
    kWeight = 1 << 2,
    kFull = 1 << 3,
    kSendForward = 1 << 4,
    kRecvForward = 1 << 5,
    kSendBackward = 1 << 6,
    kRecvBackward = 1 << 7,
};

std::uint8_t flag_of(ActionKind kind) {
    switch (kind) {
        case ActionKind::forward:
            return kForward;
        case ActionKind::backward_input:
            return kInput;
        case ActionKind::backward_weight:
            return kWeight;
        case ActionKind::full_backward:
            return kFull;
        case ActionKind::send_forward:
            return kSendForward;
        case ActionKind::recv_forward:
            return kRecvForward;
        case ActionKind::send_backward:
            return kSendBackward;
        case ActionKind::recv_backward:
            return kRecvBackward;
        default:
            return 0;
    }
}

class StructureChecker {
  public:
    StructureChecker(const Schedule& schedule, std::size_t max_problems)
        : schedule_(schedule), max_problems_(max_problems) {}

    CheckReport run() {
        if (!check_shape())
            return report_;
        // Sized by the microbatches the actions name, not the declared m (`check --m`): beyond
        // them nothing is seen, and the counts below account for that without a table.
        seen_columns_ = std::min(schedule_.microbatch_count, highest_named_microbatch() + 1);
        seen_ = StageMicrobatchFlags(schedule_.stage_count, seen_columns_);
        for (int rank = 0; rank < static_cast<int>(schedule_.ranks.size()); ++rank)
            for (int step = 0; step < static_cast<int>(schedule_.ranks[rank].size()); ++step)
                for (const Action& part : schedule_.parts_of(schedule_.ranks[rank][step]))
                    check_action(rank, step, part);
        check_counts();
        if (schedule_.has_communication) {
            check_pairing();
            check_fsdp();
        }
        return report_;
    }

  private:
    template <typename... Args>
    void problem(fmt::format_string<Args...> format, Args&&... args) {
        if (report_.problems.size() >= max_problems_) {
            report_.truncated = true;
            return;
        }
        report_.problems.push_back(fmt::format(format, std::forward<Args>(args)...));
    }

    bool check_shape() {
        if (static_cast<int>(schedule_.ranks.size()) != schedule_.rank_count)
            problem("the schedule has {} rank rows but pp is {}", schedule_.ranks.size(),
                    schedule_.rank_count);
        if (static_cast<int>(schedule_.stage_to_rank.size()) != schedule_.stage_count)
            problem("the stage-to-rank mapping has {} entries for {} stages",
                    schedule_.stage_to_rank.size(), schedule_.stage_count);
        if (schedule_.stage_count < 1)
            problem("the schedule has no stages");
        for (int stage = 0; stage < static_cast<int>(schedule_.stage_to_rank.size()); ++stage)
            if (schedule_.stage_to_rank[stage] < 0 ||
                schedule_.stage_to_rank[stage] >= schedule_.rank_count)
                problem(
                    "stage {} is not run by any rank (stages must be numbered 0..{} without gaps)",
                    stage, schedule_.stage_count - 1);
        if (schedule_.microbatch_count < 1)
            problem("the schedule has no microbatches");
        return report_.ok();
    }

    std::uint8_t seen(int stage, int microbatch) const { return seen_.get(stage, microbatch); }

    int highest_named_microbatch() const {
        int highest = -1;
        for (const auto& actions : schedule_.ranks)
            for (const Action& action : actions)
                for (const Action& part : schedule_.parts_of(action))
                    highest = std::max(highest, part.microbatch);
        return highest;
    }

    // Action texts are only built for problems: formatting every action would dominate.
    void check_action(int rank, int step, const Action& action) {
        auto text = [&] { return schedule_.text(action); };
        if (action.stage < 0 || action.stage >= schedule_.stage_count) {
            problem("rank {}, step {}: {} names stage {}, but the schedule has stages 0..{}", rank,
                    step, text(), action.stage, schedule_.stage_count - 1);
            return;
        }
        if (schedule_.stage_to_rank[action.stage] != rank) {
            problem(
                "rank {}, step {}: {} runs stage {} on rank {}, but stage {} is assigned to "
                "rank {}",
                rank, step, text(), action.stage, rank, action.stage,
                schedule_.stage_to_rank[action.stage]);
            return;
        }
        if (!needs_microbatch(action.kind)) {
            if (action.microbatch != kNoMicrobatch)
                problem("rank {}, step {}: {} must not name a microbatch", rank, step, text());
            return;
        }
        if (action.microbatch == kNoMicrobatch) {
            problem("rank {}, step {}: {} has no microbatch index", rank, step, text());
            return;
        }
        if (action.microbatch >= schedule_.microbatch_count) {
            problem("rank {}, step {}: {} names microbatch {}, but m is {}", rank, step, text(),
                    action.microbatch, schedule_.microbatch_count);
            return;
        }
        const std::uint8_t flags = seen(action.stage, action.microbatch);
        const std::uint8_t flag = flag_of(action.kind);
        if (flags & flag) {
            problem("rank {}, step {}: {} appears a second time", rank, step, text());
            return;
        }
        check_order(rank, step, action, flags);
        seen_.set(action.stage, action.microbatch, flag);
    }

    void check_order(int rank, int step, const Action& action, std::uint8_t flags) {
        const int stage = action.stage;
        const int mb = action.microbatch;
        switch (action.kind) {
            case ActionKind::backward_input:
            case ActionKind::full_backward:
                if (!(flags & kForward))
                    problem(
                        "rank {}, step {}: {} runs the {} backward of stage {}, microbatch {} "
                        "before its forward",
                        rank, step, schedule_.text(action),
                        action.kind == ActionKind::full_backward ? "full" : "input", stage, mb);
                if (flags & (kInput | kFull))
                    problem(
                        "rank {}, step {}: {}: stage {}, microbatch {} already ran a backward "
                        "(B and I are exclusive)",
                        rank, step, schedule_.text(action), stage, mb);
                break;
            case ActionKind::backward_weight:
                if (!(flags & kInput))
                    problem(
                        "rank {}, step {}: {} runs the weight backward of stage {}, "
                        "microbatch {} before its input backward (I)",
                        rank, step, schedule_.text(action), stage, mb);
                break;
            default:
                break;
        }
    }

    void check_counts() {
        for (int stage = 0; stage < schedule_.stage_count; ++stage) {
            int forwards = 0, inputs = 0, weights = 0, fulls = 0;
            for (int mb = 0; mb < seen_columns_; ++mb) {
                const std::uint8_t flags = seen(stage, mb);
                forwards += (flags & kForward) != 0;
                inputs += (flags & kInput) != 0;
                weights += (flags & kWeight) != 0;
                fulls += (flags & kFull) != 0;
            }
            const int m = schedule_.microbatch_count;
            const int rank = owner(stage);
            if (forwards != m)
                problem("stage {}: {} of {} microbatches have a forward (F){}", stage, forwards, m,
                        forwards < m ? fmt::format(" (rank {}: {}F{} is missing)", rank, stage,
                                                   first_without(stage, kForward, 0))
                                     : "");
            if (inputs != weights)
                problem("stage {}: I and W counts differ: I={}, W={}{}", stage, inputs, weights,
                        inputs > weights ? fmt::format(" (rank {}: {}W{} is missing)", rank, stage,
                                                       first_without(stage, kWeight, kInput))
                                         : "");
            if (fulls + inputs != m) {
                const int missing = first_without(stage, kInput | kFull, 0);
                problem("stage {}: expected {} backwards (B + I), got B={}, I={}{}", stage, m,
                        fulls, inputs,
                        fulls + inputs < m ? fmt::format(" (rank {}: {}B{} or {}I{} is missing)",
                                                         rank, stage, missing, stage, missing)
                                           : "");
            }
        }
    }

    // The first microbatch of `stage` that has every flag of `having` and none of `wanted`, for
    // naming a missing action; past every named microbatch when all have it.
    int first_without(int stage, std::uint8_t wanted, std::uint8_t having) const {
        for (int mb = 0; mb < seen_columns_; ++mb) {
            const std::uint8_t flags = seen(stage, mb);
            if ((flags & having) == having && !(flags & wanted))
                return mb;
        }
        return seen_columns_;
    }

    int owner(int stage) const { return schedule_.stage_to_rank[stage]; }

    void check_pairing() {
        const int last = schedule_.stage_count - 1;
        for (int stage = 0; stage <= last; ++stage) {
            for (int mb = 0; mb < seen_columns_; ++mb) {
                const std::uint8_t flags = seen(stage, mb);
                const bool forward_crosses = stage < last && owner(stage + 1) != owner(stage);
                const bool backward_crosses = stage > 0 && owner(stage - 1) != owner(stage);
                const std::uint8_t next = stage < last ? seen(stage + 1, mb) : 0;
                const std::uint8_t previous = stage > 0 ? seen(stage - 1, mb) : 0;
                check_direction(stage, mb, forward_crosses, flags & kForward, flags & kSendForward,
                                next & kRecvForward, "F", "SEND_F", stage + 1, "RECV_F");
                check_direction(stage, mb, backward_crosses, flags & (kInput | kFull),
                                flags & kSendBackward, previous & kRecvBackward, "B", "SEND_B",
                                stage - 1, "RECV_B");
                if (stage == 0 && (flags & kRecvForward))
                    problem(
                        "stage 0 receives microbatch {} (0RECV_F{}), but the first stage has "
                        "no upstream stage",
                        mb, mb);
                if (stage == last && (flags & kRecvBackward))
                    problem(
                        "the last stage {} receives a gradient ({}RECV_B{}) but has no "
                        "downstream stage",
                        stage, stage, mb);
            }
        }
    }

    void check_direction(int stage, int mb, bool crosses, bool computed, bool sent, bool received,
                         const char* compute, const char* send, int peer_stage, const char* recv) {
        if (!crosses) {
            if (sent)
                problem(
                    "rank {}: {}{}{} sends to stage {} on the same rank or past the pipeline's "
                    "end; neighbouring stages on one rank pass tensors locally",
                    owner(stage), stage, send, mb, peer_stage);
            if (received)
                problem("rank {}: {}{}{} has no matching sender on another rank", owner(peer_stage),
                        peer_stage, recv, mb);
            return;
        }
        if (computed && !sent)
            problem("rank {} runs {}{}{} but never sends it: {}{}{} is missing", owner(stage),
                    stage, compute, mb, stage, send, mb);
        if (sent && !received)
            problem("rank {} sends {}{}{} but rank {} never receives it: {}{}{} is missing",
                    owner(stage), stage, send, mb, owner(peer_stage), peer_stage, recv, mb);
        if (received && !sent)
            problem("rank {} waits for {}{}{} but rank {} never sends it: {}{}{} is missing",
                    owner(peer_stage), peer_stage, recv, mb, owner(stage), stage, send, mb);
    }

    // A lowered file's UNSHARD, RESHARD and REDUCE_GRAD, in each rank's order, by the rules
    // PyTorch's runtime asserts or relies on: a stage that is ever unsharded computes only while
    // unsharded, is unsharded and resharded in turn, and has its gradients reduced once, after
    // its last backward, if the schedule reduces any stage's.
    void check_fsdp() {
        const auto stages = static_cast<std::size_t>(schedule_.stage_count);
        std::vector<bool> ever_unsharded(stages), unsharded(stages), reduced(stages);
        bool reduces_any = false;
        for (const auto& actions : schedule_.ranks)
            for (const Action& action : actions) {
                for (const Action& part : schedule_.parts_of(action))
                    if (part.stage < 0 || part.stage >= schedule_.stage_count)
                        return;  // already a problem; the rules need a stage
                if (action.kind == ActionKind::unshard)
                    ever_unsharded[action.stage] = true;
                reduces_any = reduces_any || action.kind == ActionKind::reduce_grad;
            }
        for (int rank = 0; rank < static_cast<int>(schedule_.ranks.size()); ++rank)
            for (int step = 0; step < static_cast<int>(schedule_.ranks[rank].size()); ++step) {
                const Action& action = schedule_.ranks[rank][step];
                const auto stage = static_cast<std::size_t>(action.stage);
                const auto text = [&] { return schedule_.text(action); };
                if (action.kind == ActionKind::unshard) {
                    if (unsharded[stage])
                        problem(
                            "rank {}, step {}: {} unshards stage {} a second time without a "
                            "RESHARD between",
                            rank, step, text(), stage);
                    unsharded[stage] = true;
                } else if (action.kind == ActionKind::reshard) {
                    if (!unsharded[stage])
                        problem(
                            "rank {}, step {}: {} reshards stage {}, which no UNSHARD "
                            "unsharded",
                            rank, step, text(), stage);
                    unsharded[stage] = false;
                } else if (action.kind == ActionKind::reduce_grad) {
                    if (reduced[stage])
                        problem(
                            "rank {}, step {}: {} appears a second time: the gradients "
                            "would be reduced twice",
                            rank, step, text());
                    reduced[stage] = true;
                }
                for (const Action& part : schedule_.parts_of(action))
                    if (is_compute(part.kind))
                        check_fsdp_compute(rank, step, part, ever_unsharded[part.stage],
                                           unsharded[part.stage], reduced[part.stage]);
            }
        for (std::size_t stage = 0; stage < stages; ++stage)
            if (reduces_any && !reduced[stage])
                problem(
                    "stage {} has no REDUCE_GRAD, though the schedule reduces other stages' "
                    "gradients: {}REDUCE_GRAD is missing after its last backward",
                    stage, stage);
    }

    void check_fsdp_compute(int rank, int step, const Action& part, bool ever_unsharded,
                            bool unsharded, bool reduced) {
        if (ever_unsharded && !unsharded)
            problem(
                "rank {}, step {}: {} computes on stage {} while it is sharded (no UNSHARD "
                "since it was last resharded); PyTorch stops: Attempted to compute on sharded",
                rank, step, schedule_.text(part), part.stage);
        if (reduced && part.kind != ActionKind::forward)
            problem(
                "rank {}, step {}: {} runs a backward of stage {} after its REDUCE_GRAD: the "
                "gradients were reduced before this one was added",
                rank, step, schedule_.text(part), part.stage);
    }

    const Schedule& schedule_;
    std::size_t max_problems_;
    CheckReport report_;
    int seen_columns_ = 0;
    StageMicrobatchFlags seen_{0, 0};
};

}  // namespace

std::string CheckReport::text() const {
    if (problems.empty())
        return "schedule check passed";
    std::string out = fmt::format("schedule check failed ({} problem{}):", problems.size(),
                                  problems.size() == 1 ? "" : "s");
    for (const auto& line : problems)
        out += "\n  - " + line;
    if (truncated)
        out += "\n  - ... (more problems not shown)";
    return out;
}

ScheduleCheckError::ScheduleCheckError(CheckReport report, const std::string& source)
    : std::runtime_error(source.empty() ? report.text() : source + ": " + report.text()),
      report_(std::move(report)) {}

CheckReport check_structure(const Schedule& schedule, std::size_t max_problems) {
    return StructureChecker(schedule, max_problems).run();
}

void require_valid_structure(const Schedule& schedule) {
    CheckReport report = check_structure(schedule);
    if (!report.ok())
        throw ScheduleCheckError(std::move(report));
}

}  // namespace pipelens
