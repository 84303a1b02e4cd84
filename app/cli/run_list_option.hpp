// An option naming runs by id, repeated or listed with commas ("--run 1,2 --run 5"). Every
// entry must be a whole number: a stray comma ("1,", "1,,2") is refused with the list shown,
// where CLI11's own splitting would drop the empty entry and run on what was left, and an
// empty value is refused rather than read as run 0.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace pipelens::cli {

// Adds `name` to `command`; `runs` receives the ids in the order given.
CLI::Option* add_run_list_option(CLI::App& command, const std::string& name,
                                 std::vector<std::int64_t>& runs, const std::string& description);

}  // namespace pipelens::cli
