// Writing a command's output file whole or not at all.
//
// Invariants: a regular file (or a new one) is written beside itself as PATH.partial, flushed
// and closed with every error checked, then renamed over PATH, so a full disk or a killed
// process never leaves a truncated file under the name a user asked for, and a failure removes
// the partial file. Anything else that already exists at PATH (/dev/stdout, a FIFO, a device)
// is written in place: renaming over it would replace the device node itself.
#pragma once

#include <string>
#include <string_view>

namespace pipelens::cli {

// Writes `content` to `path` ("-": standard output). Throws CommandFailure (exit 2) naming the
// path and the system's reason when it cannot.
void write_output_file(const std::string& path, std::string_view content);

}  // namespace pipelens::cli
