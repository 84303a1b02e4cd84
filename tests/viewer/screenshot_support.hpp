// What the viewer's screenshot tests share: running the real pipelens-view under Xvfb with
// this test process's own configuration directory, and reading the PNG it writes pixel by pixel.
// stb_image's implementation is compiled in viewer_screenshot_test.cpp, once.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <stb/stb_image.h>

#include "app/viewer/viewer_layout.hpp"
#include "tests/cli/run_pipelens.hpp"
#include "tests/fresh_trace.hpp"

namespace pipelens::viewer {

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

inline Image load_png(const fs::path& path) {
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

inline bool near(Rgb actual, Rgb expected, int tolerance = 3) {
    return std::abs(actual.r - expected.r) <= tolerance &&
           std::abs(actual.g - expected.g) <= tolerance &&
           std::abs(actual.b - expected.b) <= tolerance;
}

inline std::string text(Rgb colour) {
    return std::to_string(colour.r) + "," + std::to_string(colour.g) + "," +
           std::to_string(colour.b);
}

// This test process's configuration directory: the viewer runs never see the user's.
inline fs::path test_config_directory() {
    return testing::process_temp_path("view_config");
}

// `environment`: VAR=value words for the viewer (the config override by default).
inline int run_viewer(const std::string& arguments, std::string* errors = nullptr,
                      std::string environment = {}) {
    if (environment.empty())
        environment = "PIPELENS_CONFIG_DIR=" + test_config_directory().string() +
                      " XDG_CONFIG_HOME=" + test_config_directory().string();
    const fs::path err = testing::process_temp_path("view.err");
    const std::string command = "xvfb-run -a -s '-screen 0 1280x800x24' env " + environment +
                                " " PIPELENS_VIEW_BINARY " " + arguments + " 2>" + err.string();
    // xvfb-run itself sometimes fails to remove its own temporary directory when the viewer ends
    // at once under load ("xvfb-run: error: problem while cleaning up temporary directory", exit
    // 5, whatever the viewer returned): that run is asked again, once.
    int status = 0;
    std::string said;
    for (int attempt = 0; attempt < 2; ++attempt) {
        status = std::system(command.c_str());
        said = testing::read_file(err);
        if (!(WIFEXITED(status) && WEXITSTATUS(status) == 5 &&
              said.find("xvfb-run: error: problem while cleaning up") != std::string::npos))
            break;
    }
    if (errors != nullptr)
        *errors = said;
    fs::remove(err);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

inline fs::path screenshot_path(const std::string& name) {
    return testing::process_temp_path("view_" + name + ".png");
}

}  // namespace pipelens::viewer
