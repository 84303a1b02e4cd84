// GLFW, OpenGL 3 and Dear ImGui set up and torn down, and a frame drawn (viewer_window.hpp).
#include "app/viewer/viewer_window.hpp"

#include <time.h>

#include <algorithm>

#include <GLFW/glfw3.h>
#include <fmt/format.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include "app/viewer/viewer_app.hpp"
#include "app/viewer/viewer_layout.hpp"

namespace pipelens::viewer {
namespace {

// CPU time of this thread: what the frame's own work costs, whatever else the machine runs
// (on a software-rendered X server the rasteriser's threads share the cores).
std::int64_t thread_cpu_ns() {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

void clear(Rgb colour) {
    glClearColor(colour.r / 255.f, colour.g / 255.f, colour.b / 255.f, 1);
    glClear(GL_COLOR_BUFFER_BIT);
}

}  // namespace

GLFWwindow* open_window(int width, int height, bool offscreen) {
    glfwSetErrorCallback([](int code, const char* text) {
        fmt::print(stderr, "pipelens-view: GLFW error {}: {}\n", code, text);
    });
    if (!glfwInit()) {
        fmt::print(stderr,
                   "pipelens-view: cannot open a window (no display? run under xvfb-run "
                   "or set DISPLAY)\n");
        return nullptr;
    }
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
    glfwWindowHint(GLFW_RESIZABLE, GLFW_TRUE);
    if (offscreen)
        glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
    GLFWwindow* window = glfwCreateWindow(width, height, "pipelens-view", nullptr, nullptr);
    if (window == nullptr) {
        fmt::print(stderr, "pipelens-view: cannot create an OpenGL 3 window\n");
        glfwTerminate();
        return nullptr;
    }
    glfwMakeContextCurrent(window);
    glfwSwapInterval(offscreen ? 0 : 1);
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGui::GetIO().IniFilename = nullptr;
    ImGui::StyleColorsDark();
    // Opaque, so that the areas cleared to it (plain_areas) look as windows filled with it do.
    ImGui::GetStyle().Colors[ImGuiCol_WindowBg] = {
        kAreaBackground.r / 255.f, kAreaBackground.g / 255.f, kAreaBackground.b / 255.f, 1};
    ImGui_ImplGlfw_InitForOpenGL(window, true);
    ImGui_ImplOpenGL3_Init("#version 130");
    return window;
}

void close_window(GLFWwindow* window) {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    glfwDestroyWindow(window);
    glfwTerminate();
}

std::int64_t render_frame(GLFWwindow* window, ViewerState& state) {
    const std::int64_t start = thread_cpu_ns();
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    int width = 0, height = 0;
    glfwGetFramebufferSize(window, &width, &height);
    draw_frame(state, static_cast<float>(width), static_cast<float>(height));
    ImGui::Render();
    const std::int64_t cpu = thread_cpu_ns() - start;
    glViewport(0, 0, width, height);
    clear(kBackground);
    glEnable(GL_SCISSOR_TEST);
    for (const PlainArea& area :
         plain_areas(state, static_cast<float>(width), static_cast<float>(height))) {
        // OpenGL counts rows from the bottom; a window smaller than the layout leaves an area
        // empty (a negative size would be refused, and the last box cleared again).
        const int area_width = std::max(0, static_cast<int>(area.width));
        const int area_height = std::max(0, static_cast<int>(area.height));
        glScissor(static_cast<int>(area.left), height - static_cast<int>(area.top) - area_height,
                  area_width, area_height);
        clear(area.colour);
    }
    glDisable(GL_SCISSOR_TEST);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    return cpu;
}

}  // namespace pipelens::viewer
