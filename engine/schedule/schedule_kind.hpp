// The schedule families pipelens generates, their names, and the rules on (pp, v, m) each one
// accepts. Names follow PyTorch's `get_schedule_class` (case-insensitive, with or without the
// `Schedule` class prefix). A combination a family cannot run is refused with the rule and the
// values that broke it, before any generation starts.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pipelens {

enum class ScheduleKind {
    gpipe,
    one_f_one_b,
    interleaved_1f1b,
    looped_bfs,
    interleaved_zero_bubble,
    zbv_zero_bubble,
    dual_pipe_v,
    zero_bubble_h2,    // Qi et al.'s handcrafted ZB-H2
    zero_bubble_auto,  // Qi et al.'s automatic scheduler (ZB-1p, ZB-2p, ...)
};

enum class StagePlacement { loop, v_shape };

// What the automatic zero-bubble scheduler builds its order from: one time per kind for every
// stage, the time a boundary transfer takes, and the memory limit. Times of 0 mean unit times
// (F = I = W = 1, free transfers), so a bare shape still names one schedule.
struct ZeroBubbleInputs {
    std::int64_t forward_ns = 0;
    std::int64_t input_ns = 0;  // the paper's B
    std::int64_t weight_ns = 0;
    std::int64_t communication_ns = 0;
    // Activations a stage may hold, in microbatches' worth; 0 means pp (ZB-1p, 1F1B's memory).
    int max_activations = 0;

    friend bool operator==(const ZeroBubbleInputs&, const ZeroBubbleInputs&) = default;
};

struct ScheduleShape {
    ScheduleKind kind = ScheduleKind::one_f_one_b;
    int rank_count = 1;              // pp
    int stages_per_rank = 1;         // v
    int microbatch_count = 1;        // m
    ZeroBubbleInputs zero_bubble{};  // ZeroBubbleAuto only
};

// An impossible configuration: names the rule and the values that broke it.
class ScheduleConfigError : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

// A shape past kMaxStageMicrobatches: a configuration error where it is typed, a size no
// engine builds where it is replayed from a trace.
class ScheduleSizeLimitError : public ScheduleConfigError {
  public:
    using ScheduleConfigError::ScheduleConfigError;
};

const std::vector<ScheduleKind>& all_schedule_kinds();
std::string_view schedule_kind_name(ScheduleKind kind);   // PyTorch's name: "Interleaved1F1B"
ScheduleKind parse_schedule_kind(std::string_view name);  // throws ScheduleConfigError
StagePlacement stage_placement(ScheduleKind kind);        // v_shape for ZBV and DualPipeV
bool is_multi_stage(ScheduleKind kind);                   // takes v stages per rank

// Throws ScheduleConfigError when `shape` is not a combination its family can run.
void validate_shape(const ScheduleShape& shape);

// The most (stage, microbatch) pairs, pp*v*m, any schedule may have: indices stay in int with
// room for the lowered actions (at most seven per pair). validate_shape refuses more.
inline constexpr std::int64_t kMaxStageMicrobatches = INT32_MAX / 4;

// Stage index -> rank, PyTorch's generate_stage_to_rank_mapping ("loop" or "v").
std::vector<int> stage_to_rank_mapping(StagePlacement placement, int rank_count, int stage_count);

}  // namespace pipelens
