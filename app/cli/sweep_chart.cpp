// Layout of the sweep picture: two panels of the same size, axes with round ticks, a legend of
// schedules shared by both.
#include "app/cli/sweep_chart.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "traces/text/quantities.hpp"

namespace pipelens::cli {
namespace {

constexpr int kWidth = 1400, kHeight = 620;
constexpr ChartColor kInk{40, 40, 40}, kGrid{228, 228, 228}, kMuted{110, 110, 110};
constexpr ChartColor kSchedulePalette[] = {{31, 119, 180},  {255, 127, 14},  {44, 160, 44},
                                           {214, 39, 40},   {148, 103, 189}, {140, 86, 75},
                                           {227, 119, 194}, {23, 190, 207}};

ChartColor faded(ChartColor color) {
    const auto fade = [](std::uint8_t channel) {
        return static_cast<std::uint8_t>(channel + (255 - channel) * 0.55);
    };
    return {fade(color.r), fade(color.g), fade(color.b)};
}

// Ticks at 1, 2 or 5 times a power of ten, about five over [low, high].
std::vector<double> round_ticks(double low, double high) {
    const double rough = (high - low) / 5;
    const double power = std::pow(10.0, std::floor(std::log10(rough)));
    const double step = rough / power < 1.5 ? power : rough / power < 3.5 ? 2 * power : 5 * power;
    std::vector<double> ticks;
    for (double tick = std::ceil(low / step) * step; tick <= high + step * 1e-9; tick += step)
        ticks.push_back(std::abs(tick) < step * 1e-9 ? 0 : tick);
    return ticks;
}

std::string tick_label(double value) {
    return std::abs(value - std::round(value)) < 1e-9 ? fmt::format("{:.0f}", value)
                                                      : fmt::format("{:g}", value);
}

// A panel's plot area and value ranges; maps values to pixels.
struct Panel {
    double left, top, right, bottom;
    double x_low, x_high, y_low, y_high;

    double px(double x) const { return left + (x - x_low) / (x_high - x_low) * (right - left); }
    double py(double y) const { return bottom - (y - y_low) / (y_high - y_low) * (bottom - top); }
};

// [low, high] padded by 5% each side, never empty.
std::pair<double, double> padded(double low, double high) {
    if (high <= low)
        return {low - 1, high + 1};
    const double pad = (high - low) * 0.05;
    return {low - pad, high + pad};
}

void draw_frame(ChartScene& scene, const Panel& panel, const std::string& x_title,
                const std::string& y_title, bool x_ticks) {
    for (double tick : round_ticks(panel.y_low, panel.y_high)) {
        scene.shapes.push_back(
            ChartLine{{{panel.left, panel.py(tick)}, {panel.right, panel.py(tick)}}, kGrid, 1});
        scene.shapes.push_back(ChartText{panel.left - 6, panel.py(tick) + 4, tick_label(tick),
                                         kMuted, 12, TextAnchor::end});
    }
    if (x_ticks)
        for (double tick : round_ticks(panel.x_low, panel.x_high)) {
            scene.shapes.push_back(
                ChartLine{{{panel.px(tick), panel.top}, {panel.px(tick), panel.bottom}}, kGrid, 1});
            scene.shapes.push_back(ChartText{panel.px(tick), panel.bottom + 16, tick_label(tick),
                                             kMuted, 12, TextAnchor::middle});
        }
    scene.shapes.push_back(ChartLine{
        {{panel.left, panel.top}, {panel.left, panel.bottom}, {panel.right, panel.bottom}},
        kInk,
        1});
    scene.shapes.push_back(ChartText{(panel.left + panel.right) / 2, panel.bottom + 36, x_title,
                                     kInk, 13, TextAnchor::middle});
    scene.shapes.push_back(ChartText{panel.left - 48, (panel.top + panel.bottom) / 2, y_title, kInk,
                                     13, TextAnchor::middle, true});
}

void draw_time_memory(ChartScene& scene, const std::vector<const sim::SweepPoint*>& points,
                      const std::map<std::string, ChartColor>& colors, double left, double right,
                      sim::SweepRanking ranking) {
    // The figure the ranking and the front use, so the picture ranks as the table does.
    const auto time_ms = [&](const sim::SweepPoint* point) {
        return sim::ranked_time_ns(*point, ranking) / 1e6;
    };
    // One unit for the axis, the one format_bytes gives the largest peak.
    std::int64_t largest = 0;
    for (const sim::SweepPoint* point : points)
        largest = std::max(largest, point->peak_memory_bytes);
    const ByteUnit unit = byte_unit(largest);
    double memory_low = 1e300, memory_high = -1e300, time_low = 1e300, time_high = -1e300;
    for (const sim::SweepPoint* point : points) {
        memory_low = std::min(memory_low, point->peak_memory_bytes / unit.bytes);
        memory_high = std::max(memory_high, point->peak_memory_bytes / unit.bytes);
        time_low = std::min(time_low, time_ms(point));
        time_high = std::max(time_high, time_ms(point));
    }
    const auto [x_low, x_high] = padded(memory_low, memory_high);
    const auto [y_low, y_high] = padded(time_low, time_high);
    const Panel panel{left, 90, right, kHeight - 70, x_low, x_high, y_low, y_high};
    draw_frame(scene, panel, fmt::format("peak memory of the fullest rank ({})", unit.name),
               fmt::format("{} (ms)", sim::sweep_ranking_name(ranking)), true);
    for (const sim::SweepPoint* point : points)
        if (!point->pareto)
            scene.shapes.push_back(ChartMarker{panel.px(point->peak_memory_bytes / unit.bytes),
                                               panel.py(time_ms(point)), 3.5,
                                               faded(colors.at(point->schedule)), false});
    // Ranked order runs from the fastest (most memory) to the smallest: the front as a staircase.
    ChartLine front{{}, kInk, 1.5};
    for (const sim::SweepPoint* point : points)
        if (point->pareto) {
            const double x = panel.px(point->peak_memory_bytes / unit.bytes);
            if (!front.points.empty())
                front.points.emplace_back(x, front.points.back().second);
            front.points.emplace_back(x, panel.py(time_ms(point)));
        }
    scene.shapes.push_back(front);
    for (const sim::SweepPoint* point : points)
        if (point->pareto)
            scene.shapes.push_back(ChartMarker{panel.px(point->peak_memory_bytes / unit.bytes),
                                               panel.py(time_ms(point)), 5,
                                               colors.at(point->schedule), true});
    const char* plotted = ranking == sim::SweepRanking::per_global_batch ? "Step time"
                          : ranking == sim::SweepRanking::per_microbatch
                              ? "Step time over m"
                              : "Step time over m x microbatch size";
    scene.shapes.push_back(ChartText{
        left, 78,
        fmt::format("{} against peak memory; ringed and joined: the Pareto front", plotted), kInk,
        13});
}

void draw_bubble_by_m(ChartScene& scene, const std::vector<const sim::SweepPoint*>& points,
                      const std::map<std::string, ChartColor>& colors, double left, double right) {
    std::vector<int> ms;
    double bubble_high = 0;
    for (const sim::SweepPoint* point : points) {
        ms.push_back(point->m);
        bubble_high = std::max(bubble_high, point->bubble_ratio * 100);
    }
    std::sort(ms.begin(), ms.end());
    ms.erase(std::unique(ms.begin(), ms.end()), ms.end());
    // m evenly spaced in the order of its values (sweeps double it), labelled at each column.
    const auto column = [&](int m) {
        return double(std::lower_bound(ms.begin(), ms.end(), m) - ms.begin());
    };
    const Panel panel{
        left, 90, right, kHeight - 70, -0.5, ms.size() - 0.5, 0, std::max(1.0, bubble_high * 1.05)};
    draw_frame(scene, panel, "microbatches m", "bubble ratio (%)", false);
    for (int m : ms)
        scene.shapes.push_back(ChartText{panel.px(column(m)), panel.bottom + 16, std::to_string(m),
                                         kMuted, 12, TextAnchor::middle});
    std::map<std::string, std::map<int, double>> lowest;
    for (const sim::SweepPoint* point : points) {
        scene.shapes.push_back(ChartMarker{panel.px(column(point->m)),
                                           panel.py(point->bubble_ratio * 100), 2.5,
                                           faded(colors.at(point->schedule)), false});
        auto [at, added] = lowest[point->schedule].try_emplace(point->m, point->bubble_ratio);
        if (!added)
            at->second = std::min(at->second, point->bubble_ratio);
    }
    for (const auto& [schedule, by_m] : lowest) {
        ChartLine line{{}, colors.at(schedule), 2};
        for (const auto& [m, ratio] : by_m)
            line.points.emplace_back(panel.px(column(m)), panel.py(ratio * 100));
        scene.shapes.push_back(line);
        for (const auto& [x, y] : line.points)
            scene.shapes.push_back(ChartMarker{x, y, 3.5, colors.at(schedule), false});
    }
    scene.shapes.push_back(ChartText{left, 78,
                                     "Bubble ratio against m per schedule; line: the lowest at "
                                     "each m",
                                     kInk, 13});
}

}  // namespace

ChartScene sweep_chart(const std::vector<sim::SweepPoint>& points, const std::string& title,
                       sim::SweepRanking ranking) {
    ChartScene scene{kWidth, kHeight, {255, 255, 255}, {}};
    std::vector<const sim::SweepPoint*> simulated;
    std::map<std::string, ChartColor> colors;
    std::vector<std::string> schedules;  // in order of first appearance in the ranking
    for (const sim::SweepPoint& point : points)
        if (point.simulated()) {
            simulated.push_back(&point);
            if (colors.try_emplace(point.schedule, kSchedulePalette[colors.size() % 8]).second)
                schedules.push_back(point.schedule);
        }
    scene.shapes.push_back(ChartText{24, 30, title, kInk, 16});
    double legend_x = 24;
    for (const std::string& schedule : schedules) {
        scene.shapes.push_back(ChartMarker{legend_x + 5, 50, 5, colors.at(schedule), false});
        scene.shapes.push_back(ChartText{legend_x + 15, 55, schedule, kInk, 13});
        legend_x += 30 + 8.0 * schedule.size();
    }
    if (simulated.empty()) {
        scene.shapes.push_back(ChartText{kWidth / 2.0, kHeight / 2.0,
                                         "no configuration could be simulated", kMuted, 16,
                                         TextAnchor::middle});
        return scene;
    }
    draw_time_memory(scene, simulated, colors, 90, kWidth / 2.0 - 40, ranking);
    draw_bubble_by_m(scene, simulated, colors, kWidth / 2.0 + 80, kWidth - 30);
    return scene;
}

}  // namespace pipelens::cli
