// The run dtypes and their reference tolerances: the names `--dtype` takes, float32's tolerance
// unchanged from before a run had a choice, bfloat16's exact values, and a name outside the list
// refused with the message the CLI prints.
#include <gtest/gtest.h>

#include <stdexcept>

#include "engine/run_record/run_dtype.hpp"

namespace pipelens::run_record {
namespace {

TEST(RunDtype, TheNamesRunTakes) {
    EXPECT_EQ(run_dtype_names(), (std::vector<std::string>{"float32", "bfloat16"}));
    EXPECT_EQ(kDefaultRunDtype, "float32");
    EXPECT_TRUE(is_run_dtype("bfloat16"));
    EXPECT_FALSE(is_run_dtype("bf16"));
    EXPECT_FALSE(is_run_dtype(""));
}

TEST(RunDtype, EachDtypeHasItsTolerance) {
    EXPECT_EQ(reference_tolerance("float32"), (ReferenceTolerance{1e-4, 1e-5}));
    EXPECT_EQ(reference_tolerance("float32"),
              (ReferenceTolerance{kRelativeTolerance, kAbsoluteTolerance}));
    EXPECT_EQ(reference_tolerance("bfloat16"), (ReferenceTolerance{1.6e-2, 1e-3}));
}

TEST(RunDtype, ANameItDoesNotTakeIsRefusedNamingTheFlag) {
    const std::string message =
        "--dtype: 'half' is not a dtype pipelens run computes in (float32 or bfloat16)";
    EXPECT_EQ(run_dtype_problem("half"), message);
    EXPECT_EQ(run_dtype_problem("float32"), "");
    try {
        reference_tolerance("half");
        FAIL() << "half has no tolerance";
    } catch (const std::invalid_argument& error) {
        EXPECT_EQ(error.what(), message);
    }
}

}  // namespace
}  // namespace pipelens::run_record
