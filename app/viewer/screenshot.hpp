// The current framebuffer as a PNG, so tests look at the viewer as a person would.
#pragma once

#include <filesystem>

namespace pipelens::viewer {

// Reads the back buffer after rendering; throws std::runtime_error naming the file when it
// cannot be written.
void write_screenshot(const std::filesystem::path& path, int width, int height);

}  // namespace pipelens::viewer
