// TimelineModel: one run of a trace, arranged for drawing — per rank a compute lane and a
// communication lane of actions sorted by start, the idle gaps of the compute lane with their
// cause, the send/recv pairs, memory samples — with no GUI in it, so it is tested and
// benchmarked without a window (Tracy keeps its data model apart from its views the same way).
//
// Invariants: each lane's actions are sorted by start_ns, and `max_end` is their running
// maximum of end_ns, so the actions overlapping [from, to) are found by two binary searches.
// Labels are derived from what each action is when shown (only OVERLAP_F_B texts are kept), and
// bubble causes stay indices until shown: millions of actions load without a string each.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/viewer/action_text.hpp"
#include "engine/analysis/critical_path.hpp"
#include "engine/analysis/stragglers.hpp"
#include "traces/trace_reader.hpp"

namespace pipelens::viewer {

struct TimelineAction {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int64_t bytes = 0;
    std::int32_t stage = -1;
    std::int32_t microbatch = -1;
    std::int32_t pair_id = -1;
    std::int32_t step = 0;
    // Its id, 1.. in load order: indexes per-action tables (a compared run's durations) and, for
    // an OVERLAP_F_B, its stored text.
    std::uint32_t label = 0;
    std::uint8_t kind = 0;  // pipelens::ActionKind
    bool on_critical_path = false;
};

// Per run of kLaneChunk consecutive actions of a lane: time by kind and the latest end, so a
// merged block's dominant kind and true end cost per chunk, not per action. The times are
// floats: they only decide which kind dominates, and at 4 bytes per action the chunks stay
// small beside the actions (48 bytes each). A chunk fills one cache line.
inline constexpr std::size_t kLaneChunk = 16;
struct LaneChunk {
    std::array<float, 12> kind_ns{};  // by ActionKind
    std::int64_t first_start = 0;     // its first action's start
    std::int64_t max_end = 0;
};

struct Lane {
    std::vector<TimelineAction> actions;  // by start_ns
    std::vector<std::int64_t> max_end;    // running max of end_ns
    std::vector<LaneChunk> chunks;        // actions [16 c, 16 c + 16) of chunk c
};

// Sorts a lane's actions by start (stable: a trace's own order breaks ties) and makes its
// max_end and chunks, which TimelineModel::visible_blocks relies on.
void index_lane(Lane& lane);

enum class BubbleCause : std::uint8_t { warm_up, cool_down, waiting, idle };

// An idle gap of a rank's compute lane and why it is there (TimelineModel::describe says it in
// words).
struct ActionLocation {
    int rank = 0;
    bool communication = false;
    std::size_t index = 0;
    friend bool operator==(const ActionLocation&, const ActionLocation&) = default;
};

// A gap between two computations is `idle` until engine/analysis's bubble accounting names the
// peer its computation waited for (TimelineModel::apply); one waiting on nothing from a peer
// stays `idle`.
struct Bubble {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    BubbleCause cause = BubbleCause::idle;
    std::int32_t peer = -1;        // waiting: the rank waited on
    std::int32_t waited_for = -1;  // waiting: the receive's index in the rank's communication lane
                                   // when one of its receives held the computation
    std::int32_t before = -1;      // the compute action that ends it (index in the compute lane)
    // The computation the action after the gap waited for last, through any transfers (the
    // dependency rules, engine/analysis): where a click on the bubble goes.
    std::optional<ActionLocation> waited_on;
};

struct RankTimeline {
    int rank = 0;
    Lane compute;
    Lane communication;
    std::vector<Bubble> bubbles;
    std::vector<traces::MemoryRecord> memory;
    traces::RankRecord figures;
};

// What to draw for a lane at the current zoom: actions wide enough to see, and runs of actions
// too narrow to tell apart merged into one block with a count.
struct DrawBlock {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;  // a merged block ends where the last of its actions ends
    std::size_t first = 0;    // index of the first action
    std::size_t count = 1;    // > 1: a merged block
    std::uint8_t kind = 0;    // the action's kind; for a merged block, the kind with most time
};

struct PairEnds {
    std::optional<ActionLocation> send;
    std::optional<ActionLocation> receive;
    int send_rank = -1;  // as the pair's record names them, recorded actions or not
    int receive_rank = -1;
};

// The critical path as the timeline shows it (engine/analysis/critical_path.hpp for the rule).
struct TimelineCriticalPath {
    std::vector<ActionLocation> actions;  // earliest first, transfers included
    // The part of actions[i] on the path, [from, end) on the run's clock (a RECV posted early
    // joins it only at its SEND's hand-over), side by side: drawing the path walks these, not
    // actions spread over every lane (thousands of cache misses a frame at 10 M actions).
    std::vector<std::pair<std::int64_t, std::int64_t>> times;
    std::array<std::int64_t, analysis::kPathShareCount> share_ns{};
    std::string error;  // why there is none, when the run's actions cannot be analysed
};

// Whom the computation after one bubble waited for (engine/analysis/bubble_accounting.hpp).
struct BubbleWait {
    std::size_t bubble = 0;  // index in the rank's bubbles
    std::int32_t peer = -1;  // -1: nothing from a peer
    std::int32_t waited_for = -1;
    std::optional<ActionLocation> waited_on;
};

// What engine/analysis finds for a model (timeline_critical_path.cpp), apart from the model so it
// can be found on another thread while the timeline is already shown.
struct HoldAnalysis {
    // The training step analysed alone (engine/analysis/training_steps.hpp, numbered as
    // run_steps.hpp's steps), or the whole run.
    std::optional<int> step;
    TimelineCriticalPath path;
    // Per rank, one for each of its bubbles that ends in a computation (of `step`, when set).
    std::vector<std::vector<BubbleWait>> waits;
    // engine/analysis/stragglers of the whole run (every step); empty for a step's analysis.
    analysis::StragglerReport stragglers;
};

// What analyse_holds is asked for: one step or the whole run, and for the whole run the
// straggler threshold and calibration (read_stragglers takes the calibration from the run's
// profile rows; TraceSession does the same).
struct HoldRequest {
    std::optional<int> step;
    analysis::StragglerOptions stragglers;
};

class TimelineModel {
  public:
    // Reads one run, ranks in parallel on their own connections to the reader's file
    // (timeline_load.cpp); TraceError from the reader for a bad file or run. With `analyse`,
    // the critical path and whom each bubble waited on are found before it returns; without,
    // they come later through analyse_holds() and apply() (TraceSession does that on a thread).
    static TimelineModel load(const traces::TraceReader& reader, std::int64_t run_id,
                              bool analyse = true);

    // The critical path and whom each bubble waited on, of the whole run or of one training
    // step alone (its own dependencies only: what came before the step holds nothing), and for
    // the whole run its stragglers; a run the analysis refuses keeps its timeline (gaps between
    // computations idle), with the reason in the result's path.error. Reads the model only.
    HoldAnalysis analyse_holds(const std::string& source, const HoldRequest& request = {}) const;
    // Shows an analysis: the whole run's is kept, so a step's is drawn over it (its bubbles'
    // causes replace the whole run's, its path replaces the whole run's path) and
    // apply_whole_run() goes back to it without analysing again.
    void apply(HoldAnalysis analysis);
    void apply_whole_run();
    // The step the critical path and bubble causes are of; nullopt: the whole run.
    std::optional<int> analysed_step() const { return analysed_step_; }
    const analysis::StragglerReport& stragglers() const { return whole_run_.stragglers; }
    // The run as engine/analysis reads it (the rows the trace holds), for comparing it with
    // another run; throws traces::TraceError where the analysis refuses the run.
    analysis::TimedSchedule timed_schedule(const std::string& source) const;

    const traces::RunRecord& run() const { return run_; }
    const std::vector<RankTimeline>& ranks() const { return ranks_; }
    // The action's text; its data() is NUL-terminated (a C string for ImGui).
    ActionText label(const TimelineAction& action) const;
    // Whether the action's text is its own rather than PyTorch's for its kind, stage and
    // microbatch (an imported flight-recorder op, whose stage and microbatch are its process
    // group or peer and sequence number, not pipeline terms to show).
    bool has_own_text(const TimelineAction& action) const;
    std::int64_t label_id_limit() const { return label_id_limit_; }  // bound of label ids
    std::int64_t end_ns() const { return end_ns_; }
    // The earliest action's start, or 0 when none starts before the step's zero.
    std::int64_t start_ns() const { return start_ns_; }
    std::size_t action_count() const { return action_count_; }
    std::int64_t memory_peak() const { return memory_peak_; }   // over all ranks' samples
    int memory_peak_rank() const { return memory_peak_rank_; }  // -1 without samples

    const Lane& lane(const ActionLocation& at) const;
    const TimelineAction& action(const ActionLocation& at) const;

    // Blocks of `lane` overlapping [from, to), actions narrower than `min_ns` merged with their
    // neighbours; appended to `out`.
    static void visible_blocks(const Lane& lane, std::int64_t from, std::int64_t to,
                               std::int64_t min_ns, std::vector<DrawBlock>& out);

    // The action whose text is `label` (e.g. "2F5"), first by rank.
    std::optional<ActionLocation> find(const std::string& text) const;
    // Both ends of a SEND/RECV pair; an end whose action was never recorded (the run failed
    // first) is empty. No value for an id the run has no pair for.
    std::optional<PairEnds> pair_ends(std::int32_t pair_id) const;
    // "warm-up", "cool-down", "idle" or "waiting on rank 2 (1RECV_F3)".
    std::string describe(const RankTimeline& rank, const Bubble& bubble) const;
    const TimelineCriticalPath& critical_path() const { return critical_path_; }
    // The action covering `time_ns` on a lane, if any.
    std::optional<std::size_t> action_at(const Lane& lane, std::int64_t time_ns) const;

    // Builds a model from records (a simulation the viewer shows without a file, tests); with
    // `analyse` as load() has it.
    static TimelineModel from_records(traces::RunRecord run,
                                      std::vector<traces::ActionRecord> actions,
                                      std::vector<traces::PairRecord> pairs,
                                      std::vector<traces::RankRecord> figures,
                                      const std::vector<traces::MemoryRecord>& memory,
                                      bool analyse = true);

  private:
    // One RankTimeline per rank 0..n-1, n covering `action_ranks` and every figure's rank.
    void set_up_ranks(int action_ranks, std::vector<traces::RankRecord> figures);
    // Gives every action its id, and its text where the integers do not give it (by rank, step).
    void label_actions(
        const std::filesystem::path& path,
        const std::vector<std::vector<std::pair<std::int32_t, std::string>>>& stored_labels);
    static void index_rank(RankTimeline& rank);  // sorts and indexes lanes, finds bubbles
    // The worker threads a load or an index pass over `items` uses: one per core, at most 8.
    static unsigned worker_threads(std::size_t items);
    void finish();  // what needs every rank: ends, pairs
    std::optional<std::size_t> pair_position(std::int32_t pair_id) const;  // index into pairs_
    // apply()'s parts: back to no analysis (the loaded causes, no path), then a path and waits.
    void clear_analysis();
    void show_path(const TimelineCriticalPath& path);
    void show_waits(const std::vector<std::vector<BubbleWait>>& waits);

    traces::RunRecord run_;
    std::vector<RankTimeline> ranks_;
    std::vector<traces::PairRecord> pairs_;  // by pair id
    traces::StringTable
        labels_;  // texts that are not derived: OVERLAP_F_B's, kept texts, hand-made ones
    std::int64_t label_id_limit_ = 1;
    std::int64_t end_ns_ = 0;
    std::int64_t start_ns_ = 0;
    std::size_t action_count_ = 0;
    std::int64_t memory_peak_ = 0;
    int memory_peak_rank_ = -1;
    std::vector<PairEnds> pair_index_;  // parallel to pairs_
    TimelineCriticalPath critical_path_;
    HoldAnalysis whole_run_;  // as applied, kept to go back to from a step's
    std::optional<int> analysed_step_;
};

}  // namespace pipelens::viewer
