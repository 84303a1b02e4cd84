// A temporary directory for the rank processes' reports, removed with everything in it when the
// launcher is done (a launcher killed outright cannot remove it).
#pragma once

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace pipelens::cli {

class ReportDirectory {
  public:
    ReportDirectory() {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "pipelens-ranks-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr)
            throw std::runtime_error("cannot create a directory for the ranks' reports");
        path_ = pattern;
    }
    // Not std::filesystem::remove_all: a pip LibTorch (2.11's, seen on the GPU machine) exports
    // its own copy of it, which the dynamic linker binds ahead of libstdc++'s, and that copy
    // crashed the launcher (a call through a null pointer) after every rank had finished. The
    // directory holds only the ranks' report files, so unlinking each and then it is enough.
    ~ReportDirectory() {
        if (DIR* directory = ::opendir(path_.c_str())) {
            while (const dirent* entry = ::readdir(directory)) {
                const std::string name = entry->d_name;
                if (name != "." && name != "..")
                    ::unlink((path_ + "/" + name).c_str());
            }
            ::closedir(directory);
        }
        ::rmdir(path_.c_str());
    }
    ReportDirectory(const ReportDirectory&) = delete;
    ReportDirectory& operator=(const ReportDirectory&) = delete;
    const std::string& path() const { return path_; }

  private:
    std::string path_;
};

}  // namespace pipelens::cli
