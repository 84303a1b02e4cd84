// Playing a viewer script in the window (script_player.hpp).
#include "app/viewer/script_player.hpp"

#include <algorithm>
#include <optional>

#include <GLFW/glfw3.h>
#include <fmt/format.h>

#include "app/viewer/screenshot.hpp"
#include "app/viewer/viewer_script.hpp"
#include "app/viewer/viewer_window.hpp"

namespace pipelens::viewer {
namespace {

// `count` frames; the last is left in the back buffer (a screenshot reads it) unless `swap_last`.
void draw_frames(GLFWwindow* window, ViewerState& state, int count, bool swap_last = true) {
    for (int frame = 0; frame < count; ++frame) {
        glfwPollEvents();
        render_frame(window, state);
        if (swap_last || frame + 1 < count)
            glfwSwapBuffers(window);
    }
}

std::optional<Panel> panel_named(const std::string& name) {
    const std::pair<const char*, Panel> panels[] = {
        {"events", Panel::events},     {"errors", Panel::errors},     {"ranks", Panel::ranks},
        {"sharding", Panel::sharding}, {"simulate", Panel::simulate}, {"compare", Panel::compare}};
    for (const auto& [text, panel] : panels)
        if (name == text)
            return panel;
    return std::nullopt;
}

// The commands only the window can carry out; throws ScriptError naming the line.
void run_window_command(const ScriptCommand& command, GLFWwindow* window, ViewerState& state) {
    const std::string& word = command.words.front();
    const auto fail = [&](const std::string& why) {
        throw ScriptError(fmt::format("line {}: {}: {}", command.line, command.verb, why));
    };
    if (command.verb == "example") {
        const std::vector<Example> examples = bundled_examples(examples_directory());
        const auto found =
            std::find_if(examples.begin(), examples.end(),
                         [&](const Example& example) { return example.name == word; });
        if (found == examples.end())
            fail(fmt::format("no bundled example '{}'", word));
        open_example(state, *found);
    } else if (command.verb == "panel") {
        const std::optional<Panel> panel = panel_named(word);
        if (!panel)
            fail("use events, errors, ranks, sharding, simulate or compare");
        state.panel_request = panel;
    } else if (command.verb == "frames") {
        draw_frames(window, state, std::max(1, std::stoi(word)));  // a count (parse_script)
    } else if (command.verb == "screenshot") {
        finish_analysis(state.trace);
        draw_frames(window, state, 3, false);
        int width = 0, height = 0;
        glfwGetFramebufferSize(window, &width, &height);
        write_screenshot(word, width, height);
        glfwSwapBuffers(window);
    }
}

}  // namespace

int play_script(const std::filesystem::path& script, GLFWwindow* window, ViewerState& state) {
    std::vector<ScriptCommand> commands;
    try {
        commands = read_script(script);
    } catch (const ScriptError& error) {
        fmt::print(stderr, "pipelens-view: {}\n", error.what());
        return 2;
    }
    draw_frames(window, state, 1);
    for (const ScriptCommand& command : commands) {
        try {
            if (!run_workbench_command(state.workbench, command))
                run_window_command(command, window, state);
        } catch (const ScriptError& error) {
            fmt::print(stderr, "pipelens-view: {}: {}\n", script.string(), error.what());
            return 2;
        } catch (const std::exception& error) {  // a screenshot that cannot be written
            fmt::print(stderr, "pipelens-view: {}\n", error.what());
            return 1;
        }
        draw_frames(window, state, 1);
    }
    if (!state.trace.error.empty())
        fmt::print(stderr, "pipelens-view: {}\n", state.trace.error);
    return 0;
}

}  // namespace pipelens::viewer
