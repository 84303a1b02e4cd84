// Parsing the viewer's input script and running its workbench commands (viewer_script.hpp).
#include "app/viewer/viewer_script.hpp"

#include <charconv>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "app/viewer/workbench.hpp"
#include "engine/schedule/schedule_kind.hpp"

namespace pipelens::viewer {
namespace {

// Each verb and the fewest words it takes.
const std::map<std::string, std::size_t, std::less<>>& verbs() {
    static const std::map<std::string, std::size_t, std::less<>> table = {
        {"set", 2},   {"simulate", 0},  {"wait-idle", 0},  {"pin", 0},    {"unpin", 0},
        {"grid", 2},  {"open-cell", 1}, {"save", 1},       {"record", 1}, {"example", 1},
        {"panel", 1}, {"frames", 1},    {"screenshot", 1}, {"click", 1}};
    return table;
}

std::string_view trimmed(std::string_view text) {
    const std::size_t first = text.find_first_not_of(" \t\r");
    if (first == std::string_view::npos)
        return {};
    return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

std::vector<std::string> split(std::string_view text, char separator) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = std::min(text.find(separator, start), text.size());
        if (const std::string_view part = trimmed(text.substr(start, end - start)); !part.empty())
            parts.emplace_back(part);
        start = end + 1;
    }
    return parts;
}

int number(const ScriptCommand& command, const std::string& word) {
    int value = 0;
    const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
    if (error != std::errc() || end != word.data() + word.size() || value < 0)
        throw ScriptError(
            fmt::format("line {}: {}: '{}' is not a count", command.line, command.verb, word));
    return value;
}

[[noreturn]] void fail(const ScriptCommand& command, const std::string& why) {
    throw ScriptError(fmt::format("line {}: {}: {}", command.line, command.verb, why));
}

// A field the engine refuses, or a simulation that fails, stops the script naming the line: a
// script that carried on drew the last good run and exited 0 as if every line had done its part.
void require_accepted(const ScriptCommand& command, bool accepted, const Workbench& workbench) {
    if (!accepted)
        fail(command, workbench.field_error());
}

void wait_for_simulation(const ScriptCommand& command, Workbench& workbench) {
    workbench.wait_idle();
    if (!workbench.error().empty())
        fail(command, "the simulation failed: " + workbench.error());
}

}  // namespace

std::vector<ScriptCommand> parse_script(std::string_view text, const std::string& source) {
    std::vector<ScriptCommand> commands;
    int line_number = 0;
    std::istringstream lines{std::string(text)};
    for (std::string line; std::getline(lines, line);) {
        ++line_number;
        const std::string_view content = trimmed(line);
        if (content.empty() || content.front() == '#')
            continue;
        ScriptCommand command;
        command.line = line_number;
        command.words = split(content, ' ');
        command.verb = command.words.front();
        command.words.erase(command.words.begin());
        command.rest = std::string(trimmed(content.substr(command.verb.size())));
        const auto found = verbs().find(command.verb);
        if (found == verbs().end())
            throw ScriptError(
                fmt::format("{}:{}: unknown command '{}'", source, line_number, command.verb));
        if (command.words.size() < found->second)
            throw ScriptError(fmt::format("{}:{}: {} takes {} word(s)", source, line_number,
                                          command.verb, found->second));
        if (command.verb == "click") {
            if (command.words.front() != "simulate")
                throw ScriptError(
                    fmt::format("{}:{}: click {}: the button a script can click is "
                                "simulate",
                                source, line_number, command.words.front()));
            command.verb = "simulate";  // the button's name, as a person would say it
            command.words.clear();
        }
        if (command.verb == "frames")  // a count, refused now, not read as 0
            try {
                number(command, command.words.front());
            } catch (const ScriptError&) {
                throw ScriptError(fmt::format("{}:{}: frames: '{}' is not a count", source,
                                              line_number, command.words.front()));
            }
        commands.push_back(std::move(command));
    }
    return commands;
}

std::vector<ScriptCommand> read_script(const std::filesystem::path& path) {
    std::ifstream file(path);
    if (!file)
        throw ScriptError(fmt::format("cannot read the script {}", path.string()));
    std::ostringstream text;
    text << file.rdbuf();
    return parse_script(text.str(), path.string());
}

bool run_workbench_command(Workbench& workbench, const ScriptCommand& command) {
    const std::string& verb = command.verb;
    if (verb == "set") {
        const std::string& name = command.words.front();
        const std::string value(trimmed(command.rest.substr(name.size())));
        if (name == "kind" || name == "schedule" || name == "schedule.kind")
            require_accepted(command, workbench.set_kind(value), workbench);
        else
            require_accepted(command, workbench.set(name, value), workbench);
    } else if (verb == "simulate") {
        workbench.simulate();
    } else if (verb == "wait-idle") {
        wait_for_simulation(command, workbench);
    } else if (verb == "pin") {
        // Pins what the last change gives, as a person would see it.
        wait_for_simulation(command, workbench);
        workbench.pin();
    } else if (verb == "unpin") {
        workbench.unpin();
    } else if (verb == "grid") {
        for (const std::string& kind : split(command.words[0], ','))
            try {
                parse_schedule_kind(kind);
            } catch (const std::exception& error) {
                fail(command, error.what());
            }
        std::vector<int> ms;
        for (const std::string& m : split(command.words[1], ','))
            ms.push_back(number(command, m));
        workbench.request_grid(split(command.words[0], ','), ms);
    } else if (verb == "open-cell") {
        wait_for_simulation(command, workbench);
        if (!workbench.open_cell(static_cast<std::size_t>(number(command, command.words[0]))))
            fail(command, fmt::format("no simulated cell {} in a grid of {}", command.words[0],
                                      workbench.grid().size()));
    } else if (verb == "save" || verb == "record") {
        try {
            if (verb == "save")
                workbench.save(command.words[0]);
            else
                workbench.record(command.words[0]);
        } catch (const std::exception& error) {
            fail(command, error.what());
        }
    } else {
        return false;
    }
    return true;
}

}  // namespace pipelens::viewer
