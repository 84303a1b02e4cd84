// The message of the error a call throws, for tests that compare it with the exact text a user
// reads. Only `Error` (and what derives from it) is caught: any other exception still ends the
// test as uncaught. A call that throws nothing gives `when_nothing`, which each test picks to be
// no error message (so "no error" never passes for a message), or, where the call must throw,
// fails the test.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace pipelens::testing {

template <typename Error, typename Call>
std::optional<std::string> caught_message(const Call& call) {
    try {
        call();
    } catch (const Error& error) {
        return error.what();
    }
    return std::nullopt;
}

template <typename Error, typename Call>
std::string thrown_message(const Call& call, const std::string& when_nothing) {
    return caught_message<Error>(call).value_or(when_nothing);
}

// For a call that must throw: one that does not fails the test and gives "".
template <typename Error, typename Call>
std::string required_message(const Call& call) {
    const std::optional<std::string> message = caught_message<Error>(call);
    if (!message)
        ADD_FAILURE() << "nothing was thrown";
    return message.value_or("");
}

}  // namespace pipelens::testing
