// A chart as plain shapes in pixel coordinates, drawn once as SVG (chart_svg) and once as PNG
// (chart_png) so the two files of a picture show the same thing. Shapes are drawn in order, later
// ones on top.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace pipelens::cli {

struct ChartColor {
    std::uint8_t r = 0, g = 0, b = 0;
};

struct ChartRect {
    double x = 0, y = 0, width = 0, height = 0;
    ChartColor fill;
};

struct ChartLine {
    std::vector<std::pair<double, double>> points;  // a polyline
    ChartColor color;
    double width = 1;
};

struct ChartMarker {
    double x = 0, y = 0, radius = 3;
    ChartColor fill;
    bool outlined = false;  // a dark ring around it (the Pareto front's points)
};

enum class TextAnchor : std::uint8_t { start, middle, end };

struct ChartText {
    double x = 0, y = 0;  // the baseline's anchor point
    std::string text;     // ASCII
    ChartColor color;
    int size = 13;  // pixels
    TextAnchor anchor = TextAnchor::start;
    bool vertical = false;  // read bottom to top (a y axis's title)
};

using ChartShape = std::variant<ChartRect, ChartLine, ChartMarker, ChartText>;

struct ChartScene {
    int width = 0, height = 0;
    ChartColor background{255, 255, 255};
    std::vector<ChartShape> shapes;
};

std::string chart_svg(const ChartScene& scene);
// The PNG file's bytes. Throws std::runtime_error if the encoder fails.
std::string chart_png(const ChartScene& scene);

}  // namespace pipelens::cli
