// Companion programs: looked up through /proc/self/exe, then PATH (execvp), and exec'd.
#include "app/cli/program_exec.hpp"

#include <unistd.h>

#include <cerrno>

namespace pipelens::cli {

std::string companion_program(const std::string& name,
                              const std::vector<std::filesystem::path>& directories) {
    std::error_code error;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
    if (!error)
        for (const std::filesystem::path& directory : directories) {
            const std::filesystem::path candidate = self.parent_path() / directory / name;
            if (std::filesystem::exists(candidate, error))
                return candidate.lexically_normal().string();
        }
    return name;
}

int exec_program(const std::string& program, const std::string& argv0,
                 std::vector<std::string> arguments) {
    std::string first = argv0;
    std::vector<char*> argv{first.data()};
    for (std::string& argument : arguments)
        argv.push_back(argument.data());
    argv.push_back(nullptr);
    execvp(program.c_str(), argv.data());
    return errno;
}

}  // namespace pipelens::cli
