// The message of the error a call throws, for tests that compare it with the exact text a user
// reads. Only `Error` (and what derives from it) is caught: any other exception still ends the
// test as uncaught. A call that throws nothing gives `when_nothing`, which each test picks to be
// no error message (so "no error" never passes for a message).
#pragma once

#include <string>

namespace pipelens::testing {

template <typename Error, typename Call>
std::string thrown_message(const Call& call, const std::string& when_nothing) {
    try {
        call();
    } catch (const Error& error) {
        return error.what();
    }
    return when_nothing;
}

}  // namespace pipelens::testing
