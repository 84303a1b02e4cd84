// What a fuzz target does when an invariant breaks: print what broke and abort, which libFuzzer
// reports as a crash and saves the input for. Used instead of assert() so Release builds keep it.
#pragma once

#include <cstdio>
#include <cstdlib>

#define PIPELENS_FUZZ_REQUIRE(condition, what)                                          \
    do {                                                                                \
        if (!(condition)) {                                                             \
            std::fprintf(stderr, "fuzz invariant broken: %s (%s)\n", what, #condition); \
            std::abort();                                                               \
        }                                                                               \
    } while (false)
