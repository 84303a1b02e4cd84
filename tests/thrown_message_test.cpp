// thrown_message: the caught error's text, the caller's text when nothing is thrown, and other
// exceptions let through; required_message: a failed test when nothing is thrown.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "tests/thrown_message.hpp"

namespace pipelens {
namespace {

using testing::required_message;
using testing::thrown_message;

TEST(ThrownMessage, TheCaughtErrorsText) {
    EXPECT_EQ(thrown_message<std::invalid_argument>(
                  [] { throw std::invalid_argument("bad shape"); }, "accepted"),
              "bad shape");
    // An error derived from the one named is caught too.
    EXPECT_EQ(thrown_message<std::exception>([] { throw std::out_of_range("past the end"); }, ""),
              "past the end");
}

TEST(ThrownMessage, TheCallersTextWhenNothingIsThrown) {
    EXPECT_EQ(thrown_message<std::exception>([] {}, "no error"), "no error");
    EXPECT_EQ(thrown_message<std::exception>([] {}, ""), "");
}

TEST(ThrownMessage, OtherErrorsAreLetThrough) {
    EXPECT_THROW(thrown_message<std::invalid_argument>(
                     [] { throw std::runtime_error("not a parse error"); }, "accepted"),
                 std::runtime_error);
}

TEST(RequiredMessage, TheCaughtErrorsText) {
    EXPECT_EQ(
        required_message<std::invalid_argument>([] { throw std::invalid_argument("bad shape"); }),
        "bad shape");
}

TEST(RequiredMessage, NothingThrownFailsTheTestAndGivesNoText) {
    std::string message = "unset";
    EXPECT_NONFATAL_FAILURE(message = required_message<std::exception>([] {}),
                            "nothing was thrown");
    EXPECT_EQ(message, "");
}

}  // namespace
}  // namespace pipelens
