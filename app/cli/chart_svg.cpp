// Chart scenes as SVG text: one element per shape, coordinates with one decimal.
#include <fmt/format.h>

#include "app/cli/chart_scene.hpp"
#include "traces/text/xml_escape.hpp"

namespace pipelens::cli {
namespace {

std::string css(ChartColor color) {
    return fmt::format("#{:02x}{:02x}{:02x}", color.r, color.g, color.b);
}

struct SvgShape {
    std::string& out;

    void operator()(const ChartRect& rect) const {
        out += fmt::format(
            "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
            "fill=\"{}\"/>\n",
            rect.x, rect.y, rect.width, rect.height, css(rect.fill));
    }
    void operator()(const ChartLine& line) const {
        std::string points;
        for (const auto& [x, y] : line.points)
            points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", x, y);
        out += fmt::format(
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" "
            "stroke-width=\"{:.1f}\" stroke-linejoin=\"round\"/>\n",
            points, css(line.color), line.width);
    }
    void operator()(const ChartMarker& marker) const {
        out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{:.1f}\" fill=\"{}\"{}/>\n",
                           marker.x, marker.y, marker.radius, css(marker.fill),
                           marker.outlined ? " stroke=\"#202020\" stroke-width=\"1.5\"" : "");
    }
    void operator()(const ChartText& text) const {
        static constexpr const char* kAnchors[] = {"start", "middle", "end"};
        out += fmt::format(
            "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"{}\" fill=\"{}\" text-anchor=\"{}\"{}>"
            "{}</text>\n",
            text.x, text.y, text.size, css(text.color), kAnchors[static_cast<int>(text.anchor)],
            text.vertical ? fmt::format(" transform=\"rotate(-90 {:.1f} {:.1f})\"", text.x, text.y)
                          : "",
            xml_escaped(text.text));
    }
};

}  // namespace

std::string chart_svg(const ChartScene& scene) {
    std::string out = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
        "viewBox=\"0 0 {0} {1}\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n",
        scene.width, scene.height);
    SvgShape{out}(ChartRect{0, 0, double(scene.width), double(scene.height), scene.background});
    for (const ChartShape& shape : scene.shapes)
        std::visit(SvgShape{out}, shape);
    return out + "</svg>\n";
}

}  // namespace pipelens::cli
