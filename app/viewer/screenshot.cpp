// glReadPixels gives rows bottom-up; PNG wants them top-down.
#include "app/viewer/screenshot.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include <GL/gl.h>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

namespace pipelens::viewer {

void write_screenshot(const std::filesystem::path& path, int width, int height) {
    std::vector<unsigned char> pixels(static_cast<std::size_t>(width) * height * 4);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadBuffer(GL_BACK);
    glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
    std::vector<unsigned char> flipped(pixels.size());
    const std::size_t row = static_cast<std::size_t>(width) * 4;
    for (int y = 0; y < height; ++y)
        std::copy_n(pixels.data() + (height - 1 - y) * row, row, flipped.data() + y * row);
    if (stbi_write_png(path.c_str(), width, height, 4, flipped.data(), static_cast<int>(row)) == 0)
        throw std::runtime_error("cannot write the screenshot " + path.string());
}

}  // namespace pipelens::viewer
