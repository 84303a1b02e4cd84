// ZeroBubbleAuto's inputs: per-stage times enter as the median over the stages, of an even stage
// count the upper middle (a stage's own time, as the authors' runtime takes it), never the
// average of the two middles.
#include <gtest/gtest.h>

#include "sim/zero_bubble_inputs.hpp"

namespace pipelens::sim {
namespace {

TEST(ZeroBubbleInputs, EachKindsTimeIsTheUpperMiddleOfTheStagesTimes) {
    Experiment experiment = plain_experiment();
    experiment.shape = {ScheduleKind::zero_bubble_auto, 4, 1, 8};
    experiment.forward_ns = {1000, 5000, 2000, 3000};
    experiment.input_ns = {700, 100, 300, 500};
    experiment.weight_ns = {40};
    resolve_zero_bubble_inputs(experiment);
    const ZeroBubbleInputs& inputs = experiment.shape.zero_bubble;
    EXPECT_EQ(inputs.forward_ns, 3000);  // of 1000 2000 3000 5000; not 2500
    EXPECT_EQ(inputs.input_ns, 500);     // of 100 300 500 700; not 400
    EXPECT_EQ(inputs.weight_ns, 40);
    EXPECT_EQ(inputs.max_activations, 4);  // p by default
}

TEST(ZeroBubbleInputs, AnOddStageCountTakesItsMiddle) {
    Experiment experiment = plain_experiment();
    experiment.shape = {ScheduleKind::zero_bubble_auto, 3, 1, 6};
    experiment.forward_ns = {900, 100, 500};
    resolve_zero_bubble_inputs(experiment);
    EXPECT_EQ(experiment.shape.zero_bubble.forward_ns, 500);
}

}  // namespace
}  // namespace pipelens::sim
