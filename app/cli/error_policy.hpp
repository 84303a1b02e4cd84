// How an error the engine raises while a command runs is reported: the words before its
// message and the exit code. parse_and_run() prints "pipelens: <prefix><what()>" and returns
// the code, so every command and both binaries answer the same error the same way.
//
// Invariants: bad input (an experiment, a schedule file or configuration, a trace) is a usage
// error; a schedule too large for this machine has its own code; a schedule read but wrong
// (a check or a hang) and any error not listed fail the check, the unlisted ones marked "error: ";
// a recorded event that fails to replay is a finding when the engine refused it, bad input when
// it cannot be read, too large when it does not fit;
// no message is printed with a C++ backtrace.
#pragma once

#include <exception>
#include <string>
#include <string_view>

namespace pipelens::cli {

struct ErrorPolicy {
    std::string_view prefix;  // before what(): "" or "invalid schedule configuration: "
    int exit_code;
};

ErrorPolicy error_policy(const std::exception& error);

// The message a user reads: LibTorch's errors carry the C++ backtrace of where they were raised
// after their message ("\nException raised from ...", or "\nframe #0: ..."), which says nothing
// to someone running a pipeline; it is cut, with the line breaks before it.
std::string without_backtrace(std::string_view message);

}  // namespace pipelens::cli
