// The viewer's input script (`pipelens-view --script FILE`): lines of what a person does, run
// one after another against the same state the widgets change, so a test drives a journey
// through the code paths a click takes. GUI-free: parsing, and the commands that act on the
// workbench (workbench.hpp), live here; the ones that need a window (screenshot, panel, example)
// are carried out by the viewer (script_player.hpp).
//
//   set pp 8            a field, by its short or dotted name (`--sweep`'s names): the Simulate
//   set kind ZBVZeroBubble   panel's edit (kind also takes the kind's own v)
//   simulate            the Simulate button
//   wait-idle           until every simulation asked for has arrived and is shown
//   pin | unpin         the Compare panel's pin
//   grid 1F1B,ZBVZeroBubble 4,8,16   the kinds x m grid
//   open-cell N         a click on grid cell N (row by row)
//   save FILE | record TRACE         save the experiment as TOML | record it into a trace
//   example NAME        a click on a bundled example on the start screen
//   panel NAME          bring a bottom panel to the front (simulate, compare, events, ...)
//   frames N            draw N frames
//   screenshot FILE     write the window as PNG
// Blank lines and lines starting with # are skipped.
//
// Invariant: a script that parses has only known verbs with the words each needs; the error
// names the line.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pipelens::viewer {

class Workbench;

class ScriptError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

struct ScriptCommand {
    int line = 0;  // 1-based, in the script
    std::string verb;
    std::vector<std::string> words;  // after the verb
    std::string rest;                // everything after the verb, trimmed (set's value)
};

// Throws ScriptError "SOURCE:LINE: ..." for an unknown verb or missing words.
std::vector<ScriptCommand> parse_script(std::string_view text, const std::string& source);
std::vector<ScriptCommand> read_script(const std::filesystem::path& path);

// Carries out a command that acts on the workbench alone (set, simulate, wait-idle, pin, unpin,
// grid, open-cell, save, record); false for one the viewer must carry out. A value the engine
// refuses, a simulation that fails (wait-idle, pin and open-cell wait for it), a failed save
// or record, a grid cell that is not there, throw ScriptError naming the line: a script that
// carried on would draw the last good run and exit 0 as if every line had done its part.
bool run_workbench_command(Workbench& workbench, const ScriptCommand& command);

}  // namespace pipelens::viewer
