// The dependency rules: what each action waits for, before and after lowering, and proof that
// the rules are the one definition — a changed rule set changes the dry run, the lowering and
// the simulator alike.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "engine/schedule/dependencies.hpp"
#include "engine/schedule/dry_run.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "sim/simulator.hpp"

namespace pipelens {
namespace {

std::vector<std::string> describe(const InputList& inputs) {
    std::vector<std::string> out;
    for (const Input& input : inputs)
        out.push_back(fmt::format("{} s{} mb{} holder{} origin{}{}", static_cast<int>(input.signal),
                                  input.stage, input.microbatch, input.holder, input.origin,
                                  input.program_order ? " earlier" : ""));
    return out;
}

const Schedule& one_f_one_b() {
    static const Schedule schedule = generate_schedule({ScheduleKind::one_f_one_b, 2, 1, 4});
    return schedule;
}

TEST(DependencyRules, ForwardWaitsForTheUpstreamForwardOrItsReceive) {
    const auto& rules = DependencyRules::pytorch();
    const Action forward = make_action(1, ActionKind::forward, 2);
    // Before lowering: the upstream F itself, held by rank 0.
    EXPECT_EQ(describe(rules.inputs_of(one_f_one_b(), 1, forward)),
              (std::vector<std::string>{"7 s1 mb-1 holder1 origin1 earlier",
                                        "0 s0 mb2 holder0 origin0"}));
    // After lowering: rank 1's own RECV_F (held by rank 1), carrying rank 0's work.
    const Schedule lowered = lower(one_f_one_b());
    EXPECT_EQ(describe(rules.inputs_of(lowered, 1, forward)),
              (std::vector<std::string>{"7 s1 mb-1 holder1 origin1 earlier",
                                        "5 s1 mb2 holder1 origin0"}));
    // Stage 0 has no upstream stage: only its parameters.
    EXPECT_EQ(rules.inputs_of(lowered, 0, make_action(0, ActionKind::forward, 0)).count, 1);
}

TEST(DependencyRules, BackwardsSendsAndReceives) {
    const auto& rules = DependencyRules::pytorch();
    const Schedule lowered = lower(one_f_one_b());
    // The last stage's B waits for its F only (plus parameters).
    EXPECT_EQ(describe(rules.inputs_of(lowered, 1, make_action(1, ActionKind::full_backward, 0))),
              (std::vector<std::string>{"7 s1 mb-1 holder1 origin1 earlier",
                                        "0 s1 mb0 holder1 origin1"}));
    // Stage 0's B: its F, then the gradient through its RECV_B from rank 1.
    EXPECT_EQ(describe(rules.inputs_of(lowered, 0, make_action(0, ActionKind::full_backward, 3))),
              (std::vector<std::string>{"7 s0 mb-1 holder0 origin0 earlier",
                                        "0 s0 mb3 holder0 origin0", "6 s0 mb3 holder0 origin1"}));
    EXPECT_EQ(describe(rules.inputs_of(lowered, 0, make_action(0, ActionKind::recv_backward, 1))),
              (std::vector<std::string>{"4 s1 mb1 holder1 origin1"}));
    EXPECT_EQ(describe(rules.inputs_of(lowered, 1, make_action(1, ActionKind::send_backward, 1))),
              (std::vector<std::string>{"1 s1 mb1 holder1 origin1"}));
    EXPECT_EQ(rules.inputs_of(lowered, 0, make_action(0, ActionKind::unshard)).count, 0);
}

TEST(DependencyRules, ProducersNameTheUsualBackwardFirst) {
    const auto& rules = DependencyRules::pytorch();
    EXPECT_EQ(producer_text(rules, Signal::input_gradient, 2, 5), "2B5");
    EXPECT_EQ(producer_text(rules, Signal::weight_ready, 2, 5), "2I5");
    EXPECT_EQ(producer_text(rules, Signal::sent_forward, 0, 1), "0SEND_F1");
    EXPECT_EQ(producer_text(rules, Signal::parameters, 3, -1), "3UNSHARD");
}

TEST(DependencyRules, VariantsAreCheckedWhenMade) {
    const auto& rules = DependencyRules::pytorch();
    EXPECT_THROW(rules.with_input(ActionKind::forward, {Signal::forward, Source::stage, 2, 0}),
                 std::invalid_argument);
    EXPECT_THROW(rules.with_input(ActionKind::overlap_forward_backward, {}), std::invalid_argument);
}

// F of a microbatch also waits for the backward of the previous one on its stage: at most one
// microbatch in flight per stage. GPipe (all forwards first) cannot run under that rule, and
// every analysis that takes the rules must say so.
TEST(DependencyRules, OneChangedRuleReachesDryRunLoweringAndSimulator) {
    const DependencyRules one_in_flight = DependencyRules::pytorch().with_input(
        ActionKind::forward, InputRule{Signal::input_gradient, Source::stage, 0, -1});
    const Schedule gpipe = generate_schedule({ScheduleKind::gpipe, 2, 1, 2});
    const Schedule lowered = lower(gpipe);
    sim::CostModel costs;
    costs.stages = {sim::StageCost{1, 1, 1, std::nullopt}};

    // The PyTorch rules run it.
    EXPECT_TRUE(dry_run(lowered).completed);
    EXPECT_EQ(sim::simulate(lowered, costs).step_time_ns, 9);  // (m + p - 1)(F + B)

    // The changed rule hangs the dry run, at rank 0's second forward, waiting on itself ...
    const DryRunResult run = dry_run(lowered, one_in_flight);
    ASSERT_FALSE(run.completed);
    ASSERT_FALSE(run.hang.cycle.empty());
    EXPECT_EQ(run.hang.cycle[0].rank, 0);
    EXPECT_EQ(run.hang.cycle[0].action, "0F1");
    EXPECT_EQ(run.hang.cycle[0].needed, "0B0");
    // ... the lowering refuses to place it ...
    LoweringOptions options;
    options.rules = &one_in_flight;
    EXPECT_THROW(lower(gpipe, options), ScheduleHangError);
    // ... and the simulator cannot time it.
    EXPECT_THROW(sim::simulate(lowered, costs, one_in_flight), ScheduleHangError);
}

// A rule that only delays: F waits until the next stage has taken the previous microbatch.
// The dry run still completes; the simulator's step grows by exactly the one-unit wait.
TEST(DependencyRules, OneChangedRuleChangesSimulatedTimes) {
    const DependencyRules flow_control = DependencyRules::pytorch().with_input(
        ActionKind::forward, InputRule{Signal::forward, Source::stage, 1, -1});
    const Schedule lowered = lower(generate_schedule({ScheduleKind::gpipe, 2, 1, 2}));
    sim::CostModel costs;
    costs.stages = {sim::StageCost{1, 1, 1, std::nullopt}};
    EXPECT_TRUE(dry_run(lowered, flow_control).completed);
    // PyTorch's rules: rank 0 waits 3 units for the first gradient (F = 1, B = 2).
    const sim::SimulationResult plain = sim::simulate(lowered, costs);
    EXPECT_EQ(plain.step_time_ns, 9);
    EXPECT_EQ(plain.ranks[0].bubbles.waiting_on_rank.at(1), 3);
    // Flow control: rank 0's second forward also waits one unit for rank 1's first.
    const sim::SimulationResult result = sim::simulate(lowered, costs, flow_control);
    EXPECT_EQ(result.step_time_ns, 10);
    EXPECT_EQ(result.ranks[0].bubbles.waiting_on_rank.at(1), 4);
}

}  // namespace
}  // namespace pipelens
