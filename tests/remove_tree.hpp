// Removes a directory and everything under it, for the tests' temporary directories.
//
// Not std::filesystem::remove_all: a pip LibTorch (2.11's) exports its own copy of it, which the
// dynamic linker binds ahead of libstdc++'s, and that copy calls through a null pointer on some
// trees (seen tearing down the gloo transport tests on the GPU machine). nftw walks depth first
// without following links, so a link to elsewhere is unlinked, not entered. Best effort, as a
// tear-down should be: what cannot be removed (a read-only directory's entries) is left, silently.
#pragma once

#include <ftw.h>
#include <stdio.h>

#include <string>

namespace pipelens::testing {

inline void remove_tree(const std::string& path) {
    const auto remove_entry = [](const char* entry, const struct stat*, int, struct FTW*) {
        ::remove(entry);
        return 0;
    };
    ::nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

}  // namespace pipelens::testing
