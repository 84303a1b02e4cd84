// steps_of: one rank's imported actions as (text, start, end) rows in step order.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "engine/schedule/schedule_csv.hpp"
#include "tests/import/imported_steps.hpp"

namespace pipelens::import {
namespace {

using testing::Step;
using testing::steps_of;

TEST(ImportedSteps, OneRowPerStepOfTheRankInStepOrder) {
    ImportedRun run;
    run.schedule = parse_schedule_csv("0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n", "steps.csv");
    run.timings = {{{0, 10}, {10, 25}, {40, 70}, {70, 90}},
                   {{12, 20}, {20, 38}, {27, 35}, {38, 60}}};
    EXPECT_EQ(
        steps_of(run, 0),
        (std::vector<Step>{{"0F0", 0, 10}, {"0F1", 10, 25}, {"0B0", 40, 70}, {"0B1", 70, 90}}));
    EXPECT_EQ(
        steps_of(run, 1),
        (std::vector<Step>{{"1F0", 12, 20}, {"1B0", 20, 38}, {"1F1", 27, 35}, {"1B1", 38, 60}}));
    EXPECT_THROW(steps_of(run, 2), std::out_of_range);
}

}  // namespace
}  // namespace pipelens::import
