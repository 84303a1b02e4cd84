// Building the pooled raster (rank_raster.hpp). Each rank's compute lane is walked once at one
// pixel's resolution (TimelineModel::visible_blocks merges what is narrower), then its bubbles,
// into every pixel row it covers; the cost is ranks x visible blocks, paid once per view change.
#include "app/viewer/rank_raster.hpp"

#include <algorithm>
#include <cmath>

namespace pipelens::viewer {
namespace {

// Lower ranks first: waiting, warm-up, cool-down, idle (BubbleCause order: warm-up, cool-down,
// waiting, idle).
int bubble_rank(std::uint8_t code) {
    static constexpr int kOrder[] = {1, 2, 0, 3};
    return kOrder[std::min<int>(code - kRasterBubble, 3)];
}

void put(std::uint8_t& pixel, std::uint8_t code) {
    if (pixel == 0)
        pixel = code;
    else if (code >= kRasterBubble &&
             (pixel < kRasterBubble || bubble_rank(code) < bubble_rank(pixel)))
        pixel = code;
}

}  // namespace

RankSpan ranks_of_row(int row, int height, int rank_count) {
    const auto first = static_cast<int>(static_cast<std::int64_t>(row) * rank_count / height);
    const auto last = static_cast<int>(static_cast<std::int64_t>(row + 1) * rank_count / height);
    return {first, std::max(last, first + 1)};
}

RankRaster rank_raster(const TimelineModel& model, std::int64_t view_start, std::int64_t view_end,
                       int width, int height) {
    RankRaster raster;
    raster.width = std::max(1, width);
    raster.height = std::max(1, height);
    raster.codes.assign(static_cast<std::size_t>(raster.width) * raster.height, 0);
    const int rank_count = static_cast<int>(model.ranks().size());
    if (rank_count == 0 || view_end <= view_start)
        return raster;
    const double pixels_per_ns = raster.width / static_cast<double>(view_end - view_start);
    const auto column = [&](std::int64_t time) {
        return static_cast<int>(
            std::clamp(std::floor((time - view_start) * pixels_per_ns), 0.0, double(raster.width)));
    };
    const auto min_ns = static_cast<std::int64_t>(1 / pixels_per_ns);
    std::vector<DrawBlock> blocks;
    for (int rank = 0; rank < rank_count; ++rank) {
        // The pixel rows this rank lands in (several when there is room, one shared otherwise).
        const int first_row =
            static_cast<int>(static_cast<std::int64_t>(rank) * raster.height / rank_count);
        const int last_row = std::max(
            first_row + 1,
            static_cast<int>(static_cast<std::int64_t>(rank + 1) * raster.height / rank_count));
        const RankTimeline& timeline = model.ranks()[static_cast<std::size_t>(rank)];
        blocks.clear();
        TimelineModel::visible_blocks(timeline.compute, view_start, view_end, min_ns, blocks);
        const auto fill = [&](std::int64_t start, std::int64_t end, std::uint8_t code) {
            const int from = column(start);
            const int to = std::max(from + 1, column(end));
            for (int row = first_row; row < std::min(last_row, raster.height); ++row) {
                std::uint8_t* line =
                    raster.codes.data() + static_cast<std::size_t>(row) * raster.width;
                for (int x = from; x < std::min(to, raster.width); ++x)
                    put(line[x], code);
            }
        };
        for (const DrawBlock& block : blocks)
            fill(block.start_ns, block.end_ns, static_cast<std::uint8_t>(1 + block.kind));
        const auto first = std::lower_bound(
            timeline.bubbles.begin(), timeline.bubbles.end(), view_start,
            [](const Bubble& bubble, std::int64_t time) { return bubble.end_ns <= time; });
        for (auto bubble = first; bubble != timeline.bubbles.end() && bubble->start_ns < view_end;
             ++bubble) {
            // Host overhead between actions (sub-pixel, idle) would tint every pixel of a real
            // run; a gap with a cause shows however short.
            if (bubble->cause == BubbleCause::idle && bubble->end_ns - bubble->start_ns < min_ns)
                continue;
            fill(bubble->start_ns, bubble->end_ns,
                 static_cast<std::uint8_t>(kRasterBubble + static_cast<int>(bubble->cause)));
        }
    }
    return raster;
}

std::vector<float> busy_share_by_column(const TimelineModel& model, TimeSpan span, int width) {
    width = std::max(1, width);
    std::vector<double> busy(static_cast<std::size_t>(width), 0);
    const double column_ns = std::max(1.0, static_cast<double>(span.length()) / width);
    std::vector<DrawBlock> blocks;
    for (const RankTimeline& rank : model.ranks()) {
        blocks.clear();
        TimelineModel::visible_blocks(rank.compute, span.start_ns, span.end_ns,
                                      static_cast<std::int64_t>(column_ns), blocks);
        for (const DrawBlock& block : blocks) {
            // A merged block's own actions' time, spread evenly over the columns it spans.
            const TimelineAction& first = rank.compute.actions[block.first];
            std::int64_t time = first.end_ns - first.start_ns;
            if (block.count > 1)
                time = block.end_ns - block.start_ns;
            const auto from = static_cast<std::size_t>(
                std::clamp((block.start_ns - span.start_ns) / column_ns, 0.0, double(width - 1)));
            const auto to = static_cast<std::size_t>(std::clamp(
                (block.end_ns - span.start_ns) / column_ns, double(from), double(width - 1)));
            for (std::size_t column = from; column <= to; ++column)
                busy[column] += static_cast<double>(time) / static_cast<double>(to - from + 1);
        }
    }
    std::vector<float> share(busy.size());
    const double capacity = column_ns * std::max<std::size_t>(1, model.ranks().size());
    for (std::size_t column = 0; column < busy.size(); ++column)
        share[column] = static_cast<float>(std::clamp(busy[column] / capacity, 0.0, 1.0));
    return share;
}

void add_critical_path(RankRaster& raster, const TimelineModel& model, std::int64_t view_start,
                       std::int64_t view_end) {
    const int rank_count = static_cast<int>(model.ranks().size());
    if (rank_count == 0 || view_end <= view_start)
        return;
    const double pixels_per_ns = raster.width / static_cast<double>(view_end - view_start);
    const auto column = [&](std::int64_t time) {
        return static_cast<int>(std::clamp(std::floor((time - view_start) * pixels_per_ns), -1.0,
                                           double(raster.width)));
    };
    const auto row_of = [&](int rank) {
        return std::min(raster.height - 1, static_cast<int>(static_cast<std::int64_t>(rank) *
                                                            raster.height / rank_count));
    };
    const auto set = [&](int x, int y) {
        if (x >= 0 && x < raster.width && y >= 0 && y < raster.height)
            raster.codes[static_cast<std::size_t>(y) * raster.width + x] = kRasterCriticalPath;
    };
    int previous_row = -1;
    for (const ActionLocation& at : model.critical_path().actions) {
        const TimelineAction& action = model.action(at);
        if (action.end_ns < view_start || action.start_ns > view_end)
            continue;
        const int row = row_of(at.rank);
        const int from = column(action.start_ns);
        for (int x = from; x <= std::max(from, column(action.end_ns) - 1); ++x)
            set(x, row);
        if (previous_row >= 0 && previous_row != row)
            for (int y = std::min(previous_row, row); y <= std::max(previous_row, row); ++y)
                set(from, y);
        previous_row = row;
    }
}

Rgb raster_colour(std::uint8_t code) {
    if (code == 0)
        return kBackground;
    if (code == kRasterCriticalPath)
        return kCriticalPath;
    if (code >= kRasterBubble)
        return kBubbleFills[std::min<int>(code - kRasterBubble, 3)];
    return palette::action_colour(code - 1);
}

}  // namespace pipelens::viewer
