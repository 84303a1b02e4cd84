// Chart scenes rasterised to PNG without a GPU or a font file: shapes are filled by their
// coverage of each pixel (anti-aliased edges), text is stb_easy_font's segment font scaled to
// the text's size, and stb_image_write encodes the pixels.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include <stb/stb_easy_font.h>
#pragma GCC diagnostic pop
#include <stb/stb_image_write.h>

#include "app/cli/chart_scene.hpp"

namespace pipelens::cli {
namespace {

class Canvas {
  public:
    Canvas(int width, int height, ChartColor background)
        : width_(width), height_(height), pixels_(std::size_t(width) * height * 3) {
        for (std::size_t at = 0; at < pixels_.size(); at += 3) {
            pixels_[at] = background.r;
            pixels_[at + 1] = background.g;
            pixels_[at + 2] = background.b;
        }
    }

    void blend(int x, int y, ChartColor color, double coverage) {
        if (x < 0 || y < 0 || x >= width_ || y >= height_ || coverage <= 0)
            return;
        coverage = std::min(coverage, 1.0);
        std::uint8_t* pixel = &pixels_[(std::size_t(y) * width_ + x) * 3];
        const std::uint8_t channels[] = {color.r, color.g, color.b};
        for (int channel = 0; channel < 3; ++channel)
            pixel[channel] = static_cast<std::uint8_t>(
                std::lround(pixel[channel] + (channels[channel] - pixel[channel]) * coverage));
    }

    // Each pixel covered by the share of its area inside [x0, x1) x [y0, y1).
    void fill_rect(double x0, double y0, double x1, double y1, ChartColor color) {
        for (int y = std::max(0, int(std::floor(y0))); y < std::min(height_, int(std::ceil(y1)));
             ++y)
            for (int x = std::max(0, int(std::floor(x0))); x < std::min(width_, int(std::ceil(x1)));
                 ++x) {
                const double cover_x = std::min(x1, x + 1.0) - std::max(x0, double(x));
                const double cover_y = std::min(y1, y + 1.0) - std::max(y0, double(y));
                blend(x, y, color, cover_x * cover_y);
            }
    }

    // Pixels within `radius` of the point, edges anti-aliased over one pixel.
    void fill_disc(double cx, double cy, double radius, ChartColor color) {
        for (int y = int(std::floor(cy - radius - 1)); y <= int(std::ceil(cy + radius + 1)); ++y)
            for (int x = int(std::floor(cx - radius - 1)); x <= int(std::ceil(cx + radius + 1));
                 ++x)
                blend(x, y, color, radius + 0.5 - std::hypot(x + 0.5 - cx, y + 0.5 - cy));
    }

    // A polyline of `width`: each pixel takes its best coverage over the segments, so joints are
    // not painted twice.
    void stroke(const ChartLine& line) {
        if (line.points.empty())
            return;
        const double reach = line.width / 2 + 1;
        double left = width_, top = height_, right = 0, bottom = 0;
        for (const auto& [x, y] : line.points) {
            left = std::min(left, x - reach), right = std::max(right, x + reach);
            top = std::min(top, y - reach), bottom = std::max(bottom, y + reach);
        }
        const int x0 = std::max(0, int(left)), x1 = std::min(width_ - 1, int(right));
        const int y0 = std::max(0, int(top)), y1 = std::min(height_ - 1, int(bottom));
        if (x0 > x1 || y0 > y1)
            return;
        std::vector<float> coverage(std::size_t(x1 - x0 + 1) * (y1 - y0 + 1), 0.f);
        for (std::size_t at = 0; at + 1 < std::max<std::size_t>(line.points.size(), 2); ++at) {
            const auto [ax, ay] = line.points[at];
            const auto [bx, by] = line.points[std::min(at + 1, line.points.size() - 1)];
            segment_coverage(ax, ay, bx, by, line.width, x0, y0, x1, y1, coverage);
        }
        for (int y = y0; y <= y1; ++y)
            for (int x = x0; x <= x1; ++x)
                blend(x, y, line.color, coverage[std::size_t(y - y0) * (x1 - x0 + 1) + (x - x0)]);
    }

    std::string png() const {
        std::string file;
        const auto append = [](void* context, void* data, int size) {
            static_cast<std::string*>(context)->append(static_cast<const char*>(data), size);
        };
        if (stbi_write_png_to_func(append, &file, width_, height_, 3, pixels_.data(), width_ * 3) ==
            0)
            throw std::runtime_error("the PNG encoder failed");
        return file;
    }

  private:
    static void segment_coverage(double ax, double ay, double bx, double by, double width, int x0,
                                 int y0, int x1, int y1, std::vector<float>& coverage) {
        const double dx = bx - ax, dy = by - ay, length2 = dx * dx + dy * dy;
        const double reach = width / 2 + 1;
        for (int y = std::max(y0, int(std::min(ay, by) - reach));
             y <= std::min(y1, int(std::max(ay, by) + reach)); ++y)
            for (int x = std::max(x0, int(std::min(ax, bx) - reach));
                 x <= std::min(x1, int(std::max(ax, bx) + reach)); ++x) {
                const double px = x + 0.5 - ax, py = y + 0.5 - ay;
                const double along =
                    length2 > 0 ? std::clamp((px * dx + py * dy) / length2, 0.0, 1.0) : 0.0;
                const double distance = std::hypot(px - along * dx, py - along * dy);
                float& cell = coverage[std::size_t(y - y0) * (x1 - x0 + 1) + (x - x0)];
                cell = std::max(cell, float(std::clamp(width / 2 + 0.5 - distance, 0.0, 1.0)));
            }
    }

    int width_, height_;
    std::vector<std::uint8_t> pixels_;
};

// stb_easy_font draws capitals 7 units tall from its top; the text's size is its line height.
void draw_text(Canvas& canvas, const ChartText& text) {
    constexpr double kCapitalUnits = 7;
    const double scale = text.size / 11.0;
    std::vector<char> characters(text.text.begin(), text.text.end());
    characters.push_back('\0');
    std::vector<char> vertices(characters.size() * 64 * 20);
    const int quads = stb_easy_font_print(0, 0, characters.data(), nullptr, vertices.data(),
                                          static_cast<int>(vertices.size()));
    const double width = stb_easy_font_width(characters.data()) * scale;
    const double shift = text.anchor == TextAnchor::start    ? 0
                         : text.anchor == TextAnchor::middle ? -width / 2
                                                             : -width;
    for (int quad = 0; quad < quads; ++quad) {
        const float* corner = reinterpret_cast<const float*>(vertices.data() + quad * 64);
        // Corners 0 and 2 (16 bytes apart each) are opposite.
        const double left = corner[0] * scale + shift, top = (corner[1] - kCapitalUnits) * scale;
        const double right = corner[8] * scale + shift,
                     bottom = (corner[9] - kCapitalUnits) * scale;
        if (text.vertical)
            canvas.fill_rect(text.x + top, text.y - right, text.x + bottom, text.y - left,
                             text.color);
        else
            canvas.fill_rect(text.x + left, text.y + top, text.x + right, text.y + bottom,
                             text.color);
    }
}

struct PngShape {
    Canvas& canvas;
    void operator()(const ChartRect& rect) const {
        canvas.fill_rect(rect.x, rect.y, rect.x + rect.width, rect.y + rect.height, rect.fill);
    }
    void operator()(const ChartLine& line) const { canvas.stroke(line); }
    void operator()(const ChartMarker& marker) const {
        if (marker.outlined)
            canvas.fill_disc(marker.x, marker.y, marker.radius + 1.5, ChartColor{32, 32, 32});
        canvas.fill_disc(marker.x, marker.y, marker.radius, marker.fill);
    }
    void operator()(const ChartText& text) const { draw_text(canvas, text); }
};

}  // namespace

std::string chart_png(const ChartScene& scene) {
    Canvas canvas(scene.width, scene.height, scene.background);
    for (const ChartShape& shape : scene.shapes)
        std::visit(PngShape{canvas}, shape);
    return canvas.png();
}

}  // namespace pipelens::cli
