// SVG drawing of a timeline, in the viewer's colours (traces/palette.hpp), so a picture exported
// here reads the same as the window it came from.
#include "traces/svg_timeline.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "traces/palette.hpp"
#include "traces/run_memory.hpp"
#include "traces/run_outcome.hpp"
#include "traces/text/quantities.hpp"
#include "traces/text/xml_escape.hpp"

namespace pipelens::traces {
namespace {

constexpr int kLeftMargin = 150;
constexpr int kRightMargin = 20;
constexpr int kTopMargin = 56;
constexpr int kComputeHeight = 22;
constexpr int kCommunicationHeight = 10;
constexpr int kRankGap = 8;
constexpr int kRankHeight = kComputeHeight + kCommunicationHeight + kRankGap;

std::string colour_of(std::uint8_t kind) {
    return palette::hex(palette::action_colour(kind));
}

// Ruler step: 1, 2 or 5 times a power of ten, giving about ten ticks.
std::int64_t tick_step(std::int64_t span) {
    const double raw = std::max(1.0, static_cast<double>(span) / 10);
    const double power = std::pow(10.0, std::floor(std::log10(raw)));
    for (double factor : {1.0, 2.0, 5.0, 10.0})
        if (factor * power >= raw)
            return static_cast<std::int64_t>(factor * power);
    return static_cast<std::int64_t>(10 * power);
}

// to - from, held to int64 where a damaged or foreign trace's times are further apart.
std::int64_t span_between(std::int64_t from, std::int64_t to) {
    const __int128 span = static_cast<__int128>(to) - from;
    return static_cast<std::int64_t>(
        std::clamp<__int128>(span, 0, std::numeric_limits<std::int64_t>::max()));
}

// Time [from, from + span) onto the drawing area; times outside it land on its edges.
class Canvas {
  public:
    Canvas(int width, std::int64_t from_ns, std::int64_t span_ns)
        : width_(width), from_(from_ns), span_(std::max<std::int64_t>(1, span_ns)) {}

    double x(std::int64_t ns) const {
        const double fraction =
            std::clamp(static_cast<double>(ns - from_) / static_cast<double>(span_), 0.0, 1.0);
        return kLeftMargin + fraction * (width_ - kLeftMargin - kRightMargin);
    }
    std::int64_t from() const { return from_; }
    std::int64_t to() const { return from_ + span_; }
    static int lane_top(int rank, ActionLane lane) {
        return kTopMargin + rank * kRankHeight + (lane == ActionLane::compute ? 0 : kComputeHeight);
    }
    static int lane_height(ActionLane lane) {
        return lane == ActionLane::compute ? kComputeHeight - 2 : kCommunicationHeight - 2;
    }

  private:
    int width_;
    std::int64_t from_;
    std::int64_t span_;
};

void draw_actions(std::string& svg, const Canvas& canvas,
                  const std::vector<ActionRecord>& actions) {
    // Merges consecutive sub-pixel actions of one lane into a single block, a block per lane:
    // a rank's actions alternate between its compute and communication lanes, so one block for
    // all would be cut at every transfer and merge nothing.
    struct Block {
        double left = 0, right = 0;
        std::uint8_t kind = 0;
        int count = 0;
        std::array<std::int64_t, 12> kind_ns{};
    };
    using LaneKey = std::pair<int, ActionLane>;
    std::map<LaneKey, Block> blocks;
    const auto flush = [&](const LaneKey& key, Block& block) {
        if (block.count == 0)
            return;
        svg += fmt::format(
            R"svg(<rect x="{:.2f}" y="{}" width="{:.2f}" height="{}" fill="{}" fill-opacity="0.75"><title>{} merged actions</title></rect>)svg"
            "\n",
            block.left, Canvas::lane_top(key.first, key.second),
            std::max(0.5, block.right - block.left), Canvas::lane_height(key.second),
            colour_of(block.kind), block.count);
        block.count = 0;
    };
    for (const ActionRecord& action : actions) {
        if (action.end_ns <= canvas.from() || action.start_ns >= canvas.to())
            continue;
        const double left = canvas.x(action.start_ns);
        const double right = canvas.x(action.end_ns);
        const LaneKey key{action.rank, action.lane};
        Block& block = blocks[key];
        if (right - left < 1.0) {
            if (block.count > 0 && left - block.right > 1.0)
                flush(key, block);
            if (block.count == 0)
                block = {left, right, action.kind, 0, {}};
            block.right = std::max(block.right, right);
            // The block takes the colour of the kind it holds most time of.
            block.kind_ns[std::min<std::size_t>(action.kind, block.kind_ns.size() - 1)] +=
                action.end_ns - action.start_ns;
            block.kind = static_cast<std::uint8_t>(
                std::max_element(block.kind_ns.begin(), block.kind_ns.end()) -
                block.kind_ns.begin());
            ++block.count;
            continue;
        }
        flush(key, block);
        const int top = Canvas::lane_top(action.rank, action.lane);
        const int height = Canvas::lane_height(action.lane);
        svg += fmt::format(
            R"svg(<rect x="{:.2f}" y="{}" width="{:.2f}" height="{}" fill="{}"><title>{} rank {} {:.3f}-{:.3f} us</title></rect>)svg"
            "\n",
            left, top, right - left, height, colour_of(action.kind), xml_escaped(action.label),
            action.rank, action.start_ns / 1e3, action.end_ns / 1e3);
        if (action.lane == ActionLane::compute && right - left >= 7.0 * action.label.size())
            svg += fmt::format(
                R"svg(<text x="{:.2f}" y="{}" font-size="11" text-anchor="middle" fill="#fff">{}</text>)svg"
                "\n",
                (left + right) / 2, top + 15, xml_escaped(action.label));
    }
    for (auto& [key, block] : blocks)
        flush(key, block);
}

void draw_bubbles(std::string& svg, const Canvas& canvas, const std::vector<ActionRecord>& actions,
                  std::int64_t step_time) {
    std::map<int, std::int64_t> cursor;  // per rank: end of the compute seen so far
    const auto gap = [&](int rank, std::int64_t from, std::int64_t to) {
        if (canvas.x(to) - canvas.x(from) < 1.0)
            return;
        svg += fmt::format(
            R"svg(<rect x="{:.2f}" y="{}" width="{:.2f}" height="{}" fill="url(#bubble)"/>)svg"
            "\n",
            canvas.x(from), Canvas::lane_top(rank, ActionLane::compute),
            canvas.x(to) - canvas.x(from), Canvas::lane_height(ActionLane::compute));
    };
    for (const ActionRecord& action : actions) {
        if (action.lane != ActionLane::compute)
            continue;
        std::int64_t& end = cursor.try_emplace(action.rank, 0).first->second;
        if (action.start_ns > end)
            gap(action.rank, end, action.start_ns);
        end = std::max(end, action.end_ns);
    }
    for (const auto& [rank, end] : cursor)
        if (step_time > end)
            gap(rank, end, step_time);
}

void draw_arrows(std::string& svg, const Canvas& canvas, const std::vector<ActionRecord>& actions,
                 const std::vector<PairRecord>& pairs) {
    // By (rank, pair id): each training step's copy of a transfer has its own pair id.
    std::map<std::pair<int, int>, const ActionRecord*> by_pair;
    for (const ActionRecord& action : actions)
        if (action.pair_id >= 0)
            by_pair[{action.rank, action.pair_id}] = &action;
    for (const PairRecord& pair : pairs) {
        const auto send = by_pair.find({pair.send_rank, pair.pair_id});
        const auto recv = by_pair.find({pair.recv_rank, pair.pair_id});
        if (send == by_pair.end() || recv == by_pair.end())
            continue;
        const int y1 = Canvas::lane_top(pair.send_rank, ActionLane::communication) + 4;
        const int y2 = Canvas::lane_top(pair.recv_rank, ActionLane::communication) + 4;
        svg += fmt::format(
            R"svg(<line x1="{:.2f}" y1="{}" x2="{:.2f}" y2="{}" stroke="#333" stroke-width="0.8" marker-end="url(#head)"/>)svg"
            "\n",
            canvas.x(send->second->start_ns), y1, canvas.x(recv->second->end_ns), y2);
    }
}

}  // namespace

std::string svg_timeline(const TraceReader& reader, std::int64_t run_id,
                         const SvgTimelineOptions& options) {
    const RunRecord run = reader.run(run_id);
    const std::vector<RankRecord> ranks = reader.ranks(run_id);
    const std::vector<ActionRecord> actions = reader.actions(run_id);
    // The drawn span: to the last end of all the run's recorded steps, which for a run of
    // several steps is far longer than one step.
    std::int64_t timeline_end = run.step_time_ns.value_or(0);
    for (const ActionRecord& action : actions)
        timeline_end = std::max(timeline_end, action.end_ns);
    const int rank_count = std::max<int>(run.pp, static_cast<int>(ranks.size()));
    const std::int64_t from = std::max<std::int64_t>(0, options.from_ns.value_or(0));
    const std::int64_t to = std::max(from + 1, options.to_ns.value_or(timeline_end));
    const Canvas canvas(options.width, from, to - from);
    const int height = kTopMargin + rank_count * kRankHeight + 40;

    std::string svg = fmt::format(
        R"svg(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" font-family="sans-serif">)svg"
        "\n",
        options.width, height);
    svg +=
        R"svg(<defs><pattern id="bubble" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#f4f4f4"/><line x1="0" y1="0" x2="0" y2="6" stroke="#d62728" stroke-width="2" stroke-opacity="0.35"/></pattern>)svg"
        R"svg(<marker id="head" markerWidth="6" markerHeight="6" refX="5" refY="3" orient="auto"><path d="M0,0 L6,3 L0,6 z" fill="#333"/></marker></defs>)svg"
        "\n";
    svg += fmt::format(R"svg(<rect width="{}" height="{}" fill="#fff"/>)svg"
                       "\n",
                       options.width, height);
    svg += fmt::format(
        R"svg(<text x="10" y="20" font-size="15" font-weight="bold">run {}: {} pp={} v={} m={}</text>)svg"
        "\n",
        run.id, xml_escaped(run.schedule), run.pp, run.v, run.m);
    // The ranks' "peak" is named once here, saying what it counts (run_memory.hpp); a run
    // without a step says where it failed instead, alone on the line (run_outcome.hpp).
    const RunOutcome outcome = read_run_outcome(reader, run);
    const std::int64_t step_time = run.step_time_ns.value_or(timeline_end);
    std::string_view counted = peak_memory_label(memory_counts_of(reader, run));
    if (counted.starts_with("peak "))  // "peak: activation memory", not "peak: peak ..."
        counted.remove_prefix(5);
    const std::string figures_line =
        step_figures_apply(outcome)
            ? fmt::format(
                  "step time {}{}, bubble ratio {:.1f}% (hatched: idle compute); "
                  "peak: {}",
                  format_duration(step_time),
                  timeline_end > step_time
                      ? fmt::format(" (the median step; the timeline spans {})",
                                    format_duration(timeline_end))
                      : std::string(),
                  run.bubble_ratio.value_or(0) * 100, counted)
            : xml_escaped(outcome_text(outcome));
    svg += fmt::format(R"svg(<text x="10" y="38" font-size="12"{}>{}</text>)svg"
                       "\n",
                       step_figures_apply(outcome) ? "" : R"svg( fill="#d62728")svg", figures_line);

    const std::int64_t step = tick_step(span_between(from, to));
    const int ruler_y = kTopMargin + rank_count * kRankHeight + 4;
    // Counted, not stepped until past `to`: near int64's end the next tick would wrap round.
    const std::int64_t first_tick = (from + step - 1) / step * step;
    const std::int64_t ticks = first_tick > to ? 0 : (to - first_tick) / step + 1;
    for (std::int64_t index = 0; index < std::min<std::int64_t>(ticks, 100); ++index) {
        const std::int64_t tick = first_tick + index * step;
        svg += fmt::format(
            R"svg(<line x1="{0:.2f}" y1="{1}" x2="{0:.2f}" y2="{2}" stroke="#ccc"/><text x="{0:.2f}" y="{3}" font-size="10" text-anchor="middle">{4}</text>)svg"
            "\n",
            canvas.x(tick), kTopMargin - 4, ruler_y, ruler_y + 14, format_tick(tick, step));
    }
    for (int rank = 0; rank < rank_count; ++rank) {
        const RankRecord* figures = nullptr;
        for (const RankRecord& record : ranks)
            if (record.rank == rank)
                figures = &record;
        const int top = Canvas::lane_top(rank, ActionLane::compute);
        svg += fmt::format(
            R"svg(<text x="10" y="{}" font-size="12" font-weight="bold">rank {}</text>)svg"
            "\n",
            top + 12, rank);
        // A run without a step has no bubble ratio to show (run_outcome.hpp).
        if (figures)
            svg += fmt::format(R"svg(<text x="10" y="{}" font-size="10">{}peak {}</text>)svg"
                               "\n",
                               top + 26,
                               step_figures_apply(outcome)
                                   ? fmt::format("bubble {:.1f}%, ", figures->bubble_ratio * 100)
                                   : "",
                               format_bytes(figures->peak_memory_bytes));
    }
    draw_bubbles(svg, canvas, actions, step_time);
    draw_actions(svg, canvas, actions);
    const std::vector<PairRecord> pairs = reader.pairs(run_id);
    if (static_cast<int>(pairs.size()) <= options.max_arrows)
        draw_arrows(svg, canvas, actions, pairs);
    svg += "</svg>\n";
    return svg;
}

}  // namespace pipelens::traces
