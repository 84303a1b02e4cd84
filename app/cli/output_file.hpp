// Writing a command's output file whole or not at all.
//
// Invariants: a regular file (or a new one) is written beside itself as PATH.partial, flushed
// and closed with every error checked, then renamed over PATH, so a full disk or a killed
// process never leaves a truncated file under the name a user asked for, and a failure removes
// the partial file. Anything else that already exists at PATH (/dev/stdout, a FIFO, a device,
// a symbolic link) is written in place: renaming over it would replace the node itself.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace pipelens::cli {

// Writes an output whose content is produced as it is written (a Chrome trace streamed from its
// run): `fill` writes into the stream and returns 0, or the errno of a write that failed; the
// file is then finished as write_output_file's is, whole or not at all. What `fill` throws
// propagates, the partial file removed.
using OutputFill = std::function<int(std::FILE*)>;
void write_output_with(const std::string& path, const OutputFill& fill);

// Writes `content` to `path` ("-": standard output). Throws CommandFailure (exit 2) naming the
// path and the system's reason when it cannot, or when `path` holds a pipelens trace (see
// refuse_output_over).
void write_output_file(const std::string& path, std::string_view content);

// Refuses (CommandFailure, exit 2, naming `option`) an output path that would replace what the
// user keeps: an existing pipelens trace (SQLite: its runs are no output's to overwrite) or one
// of the command's own `inputs`; and one that cannot be written (a missing or read-only
// directory, a directory named as the file), in the words a failed write would use. Called
// before the command's work, so nothing is half done or computed for nothing.
void refuse_output_over(const std::string& path, std::string_view option,
                        const std::vector<std::string>& inputs = {});

// One command's outputs, each (option, path; empty when not given): each checked as
// refuse_output_over does, and two options naming one file refused (the second would silently
// replace the first); so is one of them naming a file in `also_written`, what the command writes
// that is checked otherwise (a trace it appends to). Standard output ("-") is left to the command.
void refuse_outputs(const std::vector<std::pair<std::string, std::string>>& outputs,
                    const std::vector<std::string>& inputs = {},
                    const std::vector<std::pair<std::string, std::string>>& also_written = {});

}  // namespace pipelens::cli
