// pipelens-view as a person sees it: the real binary in a real (Xvfb) window renders a
// simulated trace to a PNG, and the pixels where a known action, bubble and send/recv arrow
// must be are checked against the model and layout the viewer draws with. Also: a file that is
// not a trace leaves the app running with the reader's error.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "app/viewer/timeline_model.hpp"
#include "app/viewer/viewer_layout.hpp"
#include "tests/cli/run_pipelens.hpp"
#include "tests/fresh_trace.hpp"

#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>

namespace pipelens::viewer {
namespace {

namespace fs = std::filesystem;

struct Image {
    int width = 0, height = 0;
    std::vector<unsigned char> pixels;
    Rgb at(float x, float y) const {
        const std::size_t offset =
            (static_cast<std::size_t>(y) * width + static_cast<std::size_t>(x)) * 4;
        return {pixels[offset], pixels[offset + 1], pixels[offset + 2]};
    }
};

Image load_png(const fs::path& path) {
    Image image;
    int channels = 0;
    unsigned char* data = stbi_load(path.c_str(), &image.width, &image.height, &channels, 4);
    EXPECT_NE(data, nullptr) << path;
    if (data != nullptr) {
        image.pixels.assign(data, data + static_cast<std::size_t>(image.width) * image.height * 4);
        stbi_image_free(data);
    }
    return image;
}

bool near(Rgb actual, Rgb expected, int tolerance = 3) {
    return std::abs(actual.r - expected.r) <= tolerance &&
           std::abs(actual.g - expected.g) <= tolerance &&
           std::abs(actual.b - expected.b) <= tolerance;
}

std::string text(Rgb colour) {
    return std::to_string(colour.r) + "," + std::to_string(colour.g) + "," +
           std::to_string(colour.b);
}

int run_viewer(const std::string& arguments, std::string* errors = nullptr) {
    const fs::path err =
        fs::temp_directory_path() / ("pipelens_view_" + std::to_string(::getpid()) + ".err");
    const std::string command = "xvfb-run -a -s '-screen 0 1280x800x24' " PIPELENS_VIEW_BINARY " " +
                                arguments + " 2>" + err.string();
    const int status = std::system(command.c_str());
    if (errors != nullptr)
        *errors = testing::read_file(err);
    fs::remove(err);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(ViewerScreenshot, ActionsBubblesAndArrowsAreWhereTheModelPutsThem) {
    const fs::path trace = testing::fresh_trace("viewer_shot");
    ASSERT_EQ(testing::run_pipelens("simulate --pp 4 --m 8 --out " + trace.string()).exit_code, 0);
    const fs::path png =
        fs::temp_directory_path() / ("pipelens_view_" + std::to_string(::getpid()) + ".png");
    ASSERT_EQ(run_viewer(trace.string() + " --screenshot " + png.string() +
                         " --size 1280x800 --frames 3 --select 1RECV_F0"),
              0);
    const Image image = load_png(png);
    ASSERT_EQ(image.width, 1280);
    ASSERT_EQ(image.height, 800);

    const traces::TraceReader reader(trace);
    const TimelineModel model = TimelineModel::load(reader, reader.latest_run_id());
    const TimelineGeometry geometry = fitted_geometry(1280, model.end_ns());
    // Every compute action of rank 2, in the kind's colour (bottom rows: below its label).
    for (const TimelineAction& action : model.ranks()[2].compute.actions) {
        const float x = (geometry.x(action.start_ns) + geometry.x(action.end_ns)) / 2;
        const float y = geometry.lane_top(2, false) + kLaneHeight - 1.5f;
        EXPECT_TRUE(near(image.at(x, y), kActionColours[action.kind]))
            << model.label(action) << " at " << x << "," << y << " is " << text(image.at(x, y));
    }
    // Rank 3's warm-up bubble: its fill and its hatching, and no action colour.
    const Bubble& warmup = model.ranks()[3].bubbles.front();
    EXPECT_EQ(model.describe(model.ranks()[3], warmup), "warm-up");
    bool fill = false, hatch = false;
    for (float x = geometry.x(warmup.start_ns) + 2; x < geometry.x(warmup.end_ns) - 2; x += 1) {
        const Rgb pixel = image.at(x, geometry.lane_top(3, false) + kLaneHeight / 2);
        fill |= near(pixel, kBubbleFill);
        hatch |= pixel.r > kBubbleFill.r + 30;
    }
    EXPECT_TRUE(fill);
    EXPECT_TRUE(hatch);
    // The selected receive's arrow: from 0SEND_F0 on rank 0 to 1RECV_F0 on rank 1; its middle
    // lies in the gap between the two ranks, where only the arrow is drawn.
    const auto receive = model.find("1RECV_F0");
    ASSERT_TRUE(receive);
    const auto ends = model.pair_ends(model.action(*receive).pair_id);
    ASSERT_TRUE(ends);
    const float from_x = geometry.x(model.action(ends->first).start_ns);
    const float from_y = geometry.lane_top(0, true) + kLaneHeight / 2;
    const float to_x = geometry.x(model.action(ends->second).end_ns);
    const float to_y = geometry.lane_top(1, true) + kLaneHeight / 2;
    const float gap_y = geometry.lane_top(1, false) - kRankGap / 2;
    const float gap_x = from_x + (to_x - from_x) * (gap_y - from_y) / (to_y - from_y);
    const Rgb arrow = image.at(gap_x, gap_y);
    EXPECT_GT(arrow.r + arrow.g + arrow.b, 3 * 180) << text(arrow);
    const Rgb beside = image.at(gap_x + 40, gap_y);
    EXPECT_TRUE(near(beside, kBackground, 6)) << text(beside);
    fs::remove(png);
}

TEST(ViewerScreenshot, AFileThatIsNotATraceKeepsTheAppUpWithTheReadersError) {
    const fs::path text_file = testing::temp_file("not_a_trace.db", "hello, not sqlite\n");
    const fs::path png =
        fs::temp_directory_path() / ("pipelens_view_bad_" + std::to_string(::getpid()) + ".png");
    std::string errors;
    EXPECT_EQ(run_viewer(text_file.string() + " --screenshot " + png.string() + " --size 800x600",
                         &errors),
              0);
    EXPECT_NE(errors.find(text_file.string() + ": "), std::string::npos) << errors;
    EXPECT_TRUE(fs::exists(png));
    fs::remove(png);
    fs::remove(text_file);
}

TEST(ViewerScreenshot, PipelensViewStartsTheViewer) {
    const fs::path trace = testing::fresh_trace("viewer_via_cli");
    ASSERT_EQ(testing::run_pipelens("simulate --pp 2 --m 4 --out " + trace.string()).exit_code, 0);
    const fs::path png =
        fs::temp_directory_path() / ("pipelens_view_cli_" + std::to_string(::getpid()) + ".png");
    const std::string command = "xvfb-run -a " PIPELENS_BINARY " view " + trace.string() +
                                " --screenshot " + png.string() + " --size 640x480";
    EXPECT_EQ(std::system(command.c_str()), 0);
    const Image image = load_png(png);
    EXPECT_EQ(image.width, 640);
    fs::remove(png);
}

}  // namespace
}  // namespace pipelens::viewer
