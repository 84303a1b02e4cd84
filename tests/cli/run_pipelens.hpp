// Runs the real `pipelens` binary (path baked in at build time) with a shell command line and
// captures its exit code, standard output and standard error separately.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/wait.h>

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

inline CommandResult run_pipelens(const std::string& arguments) {
    const auto directory = std::filesystem::temp_directory_path();
    const auto stem =
        "pipelens_cli_" + std::to_string(::getpid()) + "_" + std::to_string(std::rand());
    const auto out_path = directory / (stem + ".out");
    const auto err_path = directory / (stem + ".err");
    const std::string command = std::string(PIPELENS_BINARY) + " " + arguments + " >" +
                                out_path.string() + " 2>" + err_path.string() + " </dev/null";
    const int status = std::system(command.c_str());
    CommandResult result;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = read_file(out_path);
    result.err = read_file(err_path);
    std::filesystem::remove(out_path);
    std::filesystem::remove(err_path);
    return result;
}

inline std::filesystem::path temp_file(const std::string& name, const std::string& content) {
    const auto path = std::filesystem::temp_directory_path() /
                      ("pipelens_" + std::to_string(::getpid()) + "_" + name);
    std::ofstream(path, std::ios::binary) << content;
    return path;
}

}  // namespace pipelens::testing
