// The check every command runs on the files it is given before its own parser sees them: a file
// of another kind (a trace given to `simulate`, a schedule CSV given where an experiment goes,
// a profiler trace given to `check`) is one line saying what the file is and which command
// takes it, exit 2, instead of the wrong parser's complaint.
//
// Invariants: the kind is told from the content (traces/file_kind.hpp), never the name; a file
// whose kind is not recognised (missing, empty, malformed) passes, so the command's own reader
// reports it with its file, line and column.
#pragma once

#include <initializer_list>
#include <string>

#include <CLI/CLI.hpp>

#include "traces/file_kind.hpp"

namespace pipelens::cli {

// A CLI11 check for an option naming an input file of `command` ("simulate") that accepts files
// of the kinds `accepted`; `expected` names them ("an experiment (TOML)"). Throws CommandFailure
// (exit 2) for a file recognised as another kind.
CLI::Validator input_file(const std::string& command,
                          std::initializer_list<traces::FileKind> accepted,
                          const std::string& expected);

// input_file for a pipelens trace (SQLite).
CLI::Validator trace_file(const std::string& command);

// The required first argument of `command` naming the trace it reads, "trace" in its --help,
// checked with trace_file under the command's own name.
CLI::Option* add_trace_argument(CLI::App& command, std::string& path,
                                const std::string& description);

// The message for `path` of kind `actual` given to `command` where `expected` goes:
// "pipelens simulate: local.db is a pipelens trace (SQLite), not an experiment (TOML); open it
// with `pipelens summary local.db` or `pipelens view local.db`".
std::string wrong_file_message(const std::string& command, const std::string& path,
                               traces::FileKind actual, const std::string& expected);

}  // namespace pipelens::cli
