// A temporary directory for the rank processes' reports, removed with everything in it when the
// launcher is done. A launcher killed outright cannot remove its own; its name carries the
// launcher's process id, so the next launcher removes the directories of launchers that no
// longer exist.
#pragma once

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace pipelens::cli {

class ReportDirectory {
  public:
    ReportDirectory() {
        const std::string temporary = std::filesystem::temp_directory_path().string();
        remove_abandoned(temporary);
        std::string pattern = temporary + "/" + kPrefix + std::to_string(::getpid()) + "-XXXXXX";
        if (::mkdtemp(pattern.data()) == nullptr)
            throw std::runtime_error("cannot create a directory for the ranks' reports");
        path_ = pattern;
    }
    ~ReportDirectory() { remove_directory_of_files(path_); }
    ReportDirectory(const ReportDirectory&) = delete;
    ReportDirectory& operator=(const ReportDirectory&) = delete;
    const std::string& path() const { return path_; }

  private:
    static constexpr const char* kPrefix = "pipelens-ranks-";

    // Not std::filesystem::remove_all: a pip LibTorch (2.11's, seen on the GPU machine) exports
    // its own copy of it, which the dynamic linker binds ahead of libstdc++'s, and that copy
    // crashed the launcher (a call through a null pointer) after every rank had finished. The
    // directory holds only the ranks' report files, so unlinking each and then it is enough.
    static void remove_directory_of_files(const std::string& path) {
        if (DIR* directory = ::opendir(path.c_str())) {
            while (const dirent* entry = ::readdir(directory)) {
                const std::string name = entry->d_name;
                if (name != "." && name != "..")
                    ::unlink((path + "/" + name).c_str());
            }
            ::closedir(directory);
        }
        ::rmdir(path.c_str());
    }

    // The report directories whose launcher process is gone (kill(pid, 0) says no such process;
    // one owned by another user, or a pid since reused, is left alone).
    static void remove_abandoned(const std::string& temporary) {
        DIR* directory = ::opendir(temporary.c_str());
        if (directory == nullptr)
            return;
        const std::string prefix = kPrefix;
        while (const dirent* entry = ::readdir(directory)) {
            const std::string name = entry->d_name;
            if (name.rfind(prefix, 0) != 0)
                continue;
            const std::size_t dash = name.find('-', prefix.size());
            const std::string digits = name.substr(prefix.size(), dash - prefix.size());
            if (dash == std::string::npos || digits.empty() || digits.size() > 9 ||
                digits.find_first_not_of("0123456789") != std::string::npos)
                continue;
            if (::kill(static_cast<pid_t>(std::stol(digits)), 0) != 0 && errno == ESRCH)
                remove_directory_of_files(temporary + "/" + name);
        }
        ::closedir(directory);
    }

    std::string path_;
};

}  // namespace pipelens::cli
