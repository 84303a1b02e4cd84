// Runs the real `pipelens` binary (path baked in at build time), or any command line, through the
// shell and captures its exit code, standard output and standard error separately.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>

#include "tests/fresh_trace.hpp"

// A build whose LibTorch ships no gloo headers (a pip wheel) has no gloo transport; the tests of
// `--transport gloo` then skip, saying so. CMake defines PIPELENS_GLOO_TRANSPORT for the tests.
#ifndef PIPELENS_GLOO_TRANSPORT
#define PIPELENS_GLOO_TRANSPORT 1
#endif
#define PIPELENS_SKIP_WITHOUT_GLOO()                                                     \
    do {                                                                                 \
        if (!PIPELENS_GLOO_TRANSPORT)                                                    \
            GTEST_SKIP() << "pipelens-runtime was built without the gloo transport (no " \
                            "gloo headers beside its LibTorch)";                         \
    } while (false)

namespace pipelens::testing {

struct CommandResult {
    int exit_code = -1;
    std::string out;
    std::string err;
};

inline std::string read_file(const std::filesystem::path& path) {
    std::ifstream file(path, std::ios::binary);
    std::ostringstream content;
    content << file.rdbuf();
    return content.str();
}

// Runs a shell command line (a program and its arguments, perhaps after VAR=value settings).
inline CommandResult run_command(const std::string& command_line) {
    const auto directory = std::filesystem::temp_directory_path();
    const auto stem =
        "pipelens_cli_" + std::to_string(::getpid()) + "_" + std::to_string(std::rand());
    const auto out_path = directory / (stem + ".out");
    const auto err_path = directory / (stem + ".err");
    const std::string command =
        command_line + " >" + out_path.string() + " 2>" + err_path.string() + " </dev/null";
    const int status = std::system(command.c_str());
    CommandResult result;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = read_file(out_path);
    result.err = read_file(err_path);
    std::filesystem::remove(out_path);
    std::filesystem::remove(err_path);
    return result;
}

inline CommandResult run_pipelens(const std::string& arguments) {
    return run_command(std::string(PIPELENS_BINARY) + " " + arguments);
}

// The file names of the shared libraries the loader maps for `binary` (all of them, not only its
// direct needs), as ldd lists them; empty when ldd fails.
inline std::vector<std::string> loaded_libraries(const std::string& binary) {
    const CommandResult result = run_command("ldd " + binary);
    std::vector<std::string> names;
    std::istringstream lines(result.exit_code == 0 ? result.out : "");
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::string first;
        if (words >> first)
            names.push_back(std::filesystem::path(first).filename().string());
    }
    return names;
}

inline bool is_libtorch(const std::string& library) {
    return library.rfind("libtorch", 0) == 0 || library.rfind("libc10", 0) == 0;
}

inline std::filesystem::path temp_file(const std::string& name, const std::string& content) {
    const auto path = process_temp_path(name);
    std::ofstream(path, std::ios::binary) << content;
    return path;
}

}  // namespace pipelens::testing
