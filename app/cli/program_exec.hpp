// Starting the programs `pipelens` hands work to (`pipelens-view`, `pipelens-runtime`): where to
// find them and how to become them. A companion is looked for beside this binary first (an
// installed set, or the build tree), so a build never runs an older copy from PATH; only then
// on PATH. exec keeps this process, so the companion's exit status, output and signals reach
// the caller unchanged.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace pipelens::cli {

// The path of `name` in the first of `directories` (relative to the directory holding this
// binary) that has it, else `name` itself, which exec_program looks up on PATH.
std::string companion_program(const std::string& name,
                              const std::vector<std::filesystem::path>& directories);

// Replaces this process with `program`, started as `argv0 arguments...`. Returns only when
// that failed, with the errno value (ENOENT: no such program).
int exec_program(const std::string& program, const std::string& argv0,
                 std::vector<std::string> arguments);

}  // namespace pipelens::cli
