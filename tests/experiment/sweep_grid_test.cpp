// Sweep grids: axes from flags and [sweep] tables, how configurations are numbered and dealt to
// shards, what a configuration applies, and the errors a typo gets before anything runs.
#include <gtest/gtest.h>

#include "engine/experiment/experiment_toml.hpp"
#include "engine/experiment/sweep_grid.hpp"
#include "tests/thrown_message.hpp"

namespace pipelens {
namespace {

std::string error_of(const std::function<void()>& action) {
    return testing::thrown_message<ExperimentError>([&] { action(); }, "(no error)");
}

TEST(SweepGrid, FlagKeysWithoutATableAreScheduleShapeOrCosts) {
    EXPECT_EQ(parse_sweep_flag("kind=GPipe").key, "schedule.kind");
    EXPECT_EQ(parse_sweep_flag("schedule=GPipe").key, "schedule.kind");
    EXPECT_EQ(parse_sweep_flag("pp=2").key, "schedule.pp");
    EXPECT_EQ(parse_sweep_flag("m=2").key, "schedule.m");
    EXPECT_EQ(parse_sweep_flag("f=1ms").key, "costs.f");
    EXPECT_EQ(parse_sweep_flag("max_activations=p,2p").key, "schedule.max_activations");
    EXPECT_EQ(parse_sweep_flag("max_activations=p,2p").values,
              (std::vector<std::string>{"\"p\"", "\"2p\""}));
    EXPECT_EQ(parse_sweep_flag("defer_recv=false,true").key, "schedule.defer_recv");
    EXPECT_EQ(parse_sweep_flag("rendezvous=true").key, "network.rendezvous");
    EXPECT_EQ(parse_sweep_flag("network.bandwidth=25").key, "network.bandwidth");
}

TEST(SweepGrid, FlagValuesBecomeTomlValuesAndBracketsAList) {
    const SweepAxis axis = parse_sweep_flag("f= 1ms, 2.5 ,[1ms,2ms, 3ms],true,\"x y\"");
    EXPECT_EQ(axis.values,
              (std::vector<std::string>{"\"1ms\"", "2.5", "[\"1ms\", \"2ms\", \"3ms\"]", "true",
                                        "\"x y\""}));
    EXPECT_EQ(axis.labels,
              (std::vector<std::string>{"1ms", "2.5", "[1ms, 2ms, 3ms]", "true", "x y"}));
    EXPECT_EQ(error_of([] { parse_sweep_flag("pp"); }),
              "--sweep pp: expected KEY=VALUE,VALUE,... such as pp=2,4,8");
    EXPECT_EQ(error_of([] { parse_sweep_flag("f=[1ms,2ms"); }),
              "--sweep f=[1ms,2ms: a '[' without its ']'");
    EXPECT_EQ(error_of([] { parse_sweep_flag("pp=2,,4"); }), "--sweep pp=2,,4: an empty value");
}

TEST(SweepGrid, ConfigurationsCountInMixedRadixWithTheLastAxisFastest) {
    const SweepGrid grid(plain_experiment(),
                         {parse_sweep_flag("kind=GPipe,1F1B,Interleaved1F1B"),
                          parse_sweep_flag("pp=2,4"), parse_sweep_flag("m=4,8,16,32")});
    ASSERT_EQ(grid.size(), 24u);
    EXPECT_EQ(grid.value_indices(0), (std::vector<std::size_t>{0, 0, 0}));
    EXPECT_EQ(grid.value_indices(1), (std::vector<std::size_t>{0, 0, 1}));
    EXPECT_EQ(grid.value_indices(4), (std::vector<std::size_t>{0, 1, 0}));
    EXPECT_EQ(grid.value_indices(23), (std::vector<std::size_t>{2, 1, 3}));
    const Experiment last = grid.configuration(23);
    EXPECT_EQ(last.shape.kind, ScheduleKind::interleaved_1f1b);
    EXPECT_EQ(last.shape.rank_count, 4);
    EXPECT_EQ(last.shape.microbatch_count, 32);
    EXPECT_EQ(last.shape.stages_per_rank, 2);  // the kind's own v, as --schedule sets it
    EXPECT_EQ(last.forward_ns, plain_experiment().forward_ns);  // the rest as the base has it
}

TEST(SweepGrid, AVAxisIsAppliedAfterTheKindWhateverTheAxisOrder) {
    const SweepGrid grid(plain_experiment(),
                         {parse_sweep_flag("v=3"), parse_sweep_flag("kind=Interleaved1F1B")});
    EXPECT_EQ(grid.configuration(0).shape.stages_per_rank, 3);
}

TEST(SweepGrid, ShardsDealConfigurationsRoundRobinAndCoverTheGridOnce) {
    EXPECT_EQ(parse_sweep_shard("2/3").index, 2u);
    for (const char* bad : {"0/3", "4/3", "3", "a/b", "1/0", "1/3x"})
        EXPECT_NE(error_of([&] { parse_sweep_shard(bad); }).find("--shard: expected I/N"),
                  std::string::npos)
            << bad;
    std::vector<int> owners(10, 0);
    for (std::size_t index = 1; index <= 3; ++index) {
        const SweepShard shard{index, 3};
        std::size_t held = 0;
        for (std::size_t configuration = 0; configuration < 10; ++configuration)
            if (shard.holds(configuration)) {
                ++owners[configuration];
                ++held;
            }
        EXPECT_EQ(shard.size_of(10), held);
    }
    EXPECT_EQ(owners, std::vector<int>(10, 1));
    EXPECT_TRUE((SweepShard{1, 3}).holds(0) && (SweepShard{2, 3}).holds(4));
}

TEST(SweepGrid, ATypoOrAWrongValueStopsBeforeAnythingRuns) {
    EXPECT_EQ(error_of([] { SweepGrid(plain_experiment(), {parse_sweep_flag("costs.ff=1ms")}); }),
              "--sweep costs.ff=1ms: costs.ff: unknown key");
    EXPECT_EQ(error_of([] { SweepGrid(plain_experiment(), {parse_sweep_flag("pp=2,x")}); }),
              "--sweep pp=2,x: schedule.pp: expected an integer");
    EXPECT_EQ(error_of([] { SweepGrid(plain_experiment(), {parse_sweep_flag("f=1parsec")}); }),
              error_of([] {
                  apply_experiment_settings(plain_experiment(), {{"costs.f", "\"1parsec\""}},
                                            "--sweep f=1parsec");
              }));
    EXPECT_EQ(
        error_of([] {
            SweepGrid(plain_experiment(), {parse_sweep_flag("pp=2"), parse_sweep_flag("pp=4")});
        }),
        "--sweep pp=4: schedule.pp is swept twice");
    // A ratio above the whole is no configuration to try: refused before the grid runs, and a
    // percentage is taken as the flag takes it.
    EXPECT_EQ(error_of([] {
                  SweepGrid(plain_experiment(), {parse_sweep_flag("overlap_efficiency=50,0.2")});
              }),
              "--sweep overlap_efficiency=50,0.2: costs.overlap_efficiency: 50 is above 1; did "
              "you mean 50%?");
    const SweepGrid percentages(plain_experiment(),
                                {parse_sweep_flag("overlap_efficiency=50%,20%")});
    EXPECT_EQ(percentages.configuration(0).overlap_efficiency, 0.5);
    EXPECT_EQ(percentages.configuration(1).overlap_efficiency, 0.2);
}

// Two values that make the same experiment would be simulated and ranked as two configurations.
TEST(SweepGrid, ValuesThatSetTheExperimentAlikeAreRefused) {
    EXPECT_EQ(error_of([] { SweepGrid(plain_experiment(), {parse_sweep_flag("pp=4,2,4")}); }),
              "--sweep pp=4,2,4: 4 and 4 set schedule.pp alike: give each value once");
    EXPECT_EQ(error_of([] {
                  SweepGrid(plain_experiment(), {parse_sweep_flag("kind=GPipe,1f1b,Schedule1F1B")});
              }),
              "--sweep kind=GPipe,1f1b,Schedule1F1B: 1f1b and Schedule1F1B set schedule.kind "
              "alike: give each value once");
    EXPECT_EQ(error_of([] { SweepGrid(plain_experiment(), {parse_sweep_flag("f=1ms,1000us")}); }),
              "--sweep f=1ms,1000us: 1ms and 1000us set costs.f alike: give each value once");
    EXPECT_EQ(error_of([] { SweepGrid(plain_experiment(), {parse_sweep_flag("f=1ms,1001us")}); }),
              "(no error)");
}

TEST(SweepGrid, AFilesSweepTableGivesAxesInTheFilesOrder) {
    const ExperimentSweep sweep = parse_experiment_sweep_toml(
        "[schedule]\npp = 4\nm = 8\n[costs]\nf = \"1ms\"\n"
        "[sweep]\nschedule.m = [8, 16]\ncosts.f = [\"1ms\", [\"1ms\", \"2ms\", \"1ms\", \"2ms\"]]\n"
        "[sweep.network]\nbandwidth = [\"25GB/s\", \"50GB/s\"]\n",
        "exp.toml");
    ASSERT_EQ(sweep.axes.size(), 3u);
    EXPECT_EQ(sweep.axes[0].key, "schedule.m");
    EXPECT_EQ(sweep.axes[1].key, "costs.f");
    EXPECT_EQ(sweep.axes[2].key, "network.bandwidth");
    EXPECT_EQ(sweep.axes[0].where, "exp.toml:7:14: sweep.schedule.m");
    const SweepAxis f = sweep_axis_from_file(sweep.axes[1]);
    EXPECT_EQ(f.labels, (std::vector<std::string>{"1ms", "[1ms, 2ms, 1ms, 2ms]"}));
    const SweepGrid grid(sweep.experiment, {sweep_axis_from_file(sweep.axes[0]), f,
                                            sweep_axis_from_file(sweep.axes[2])});
    EXPECT_EQ(grid.configuration(2).forward_ns,
              (std::vector<std::int64_t>{1'000'000, 2'000'000, 1'000'000, 2'000'000}));
    EXPECT_EQ(sweep.experiment.shape.microbatch_count, 8);  // the table is not the experiment's
    EXPECT_EQ(error_of([] { parse_experiment_sweep_toml("[sweep]\npp = 4\n", "e.toml"); }),
              "e.toml:2:6: sweep.pp: expected a non-empty list of the values to try");
    EXPECT_NE(
        error_of([] { parse_experiment_toml("[sweep]\npp = [4]\n", "e.toml"); }).find("sweep"),
        std::string::npos);  // a plain experiment file still refuses it
}

// A bare key in the table is in the table --sweep reads it in: `kind` was "unknown key" in a
// file while `--sweep kind=...` worked.
TEST(SweepGrid, AFilesBareKeysNameWhatTheFlagsBareKeysName) {
    const ExperimentSweep sweep = parse_experiment_sweep_toml(
        "[schedule]\npp = 4\nm = 8\n[sweep]\nkind = [\"1F1B\", \"GPipe\"]\nf = [\"1ms\"]\n",
        "exp.toml");
    ASSERT_EQ(sweep.axes.size(), 2u);
    EXPECT_EQ(sweep_axis_from_file(sweep.axes[0]).key, "schedule.kind");
    EXPECT_EQ(sweep_axis_from_file(sweep.axes[1]).key, "costs.f");
    const SweepGrid grid(sweep.experiment, {sweep_axis_from_file(sweep.axes[0]),
                                            sweep_axis_from_file(sweep.axes[1])});
    EXPECT_EQ(grid.configuration(1).shape.kind, ScheduleKind::gpipe);
}

// More configurations than int64 counts is too large for any memory (exit 3, as a grid too large
// for this machine's is), not a usage error.
TEST(SweepGrid, AGridPastTwoToTheSixtyTwoIsTooLarge) {
    std::string thousand = "1";
    for (int value = 2; value <= 1000; ++value)
        thousand += "," + std::to_string(value);
    std::vector<SweepAxis> axes;
    for (const char* key : {"m", "f", "i", "w", "activation_bytes", "held_activation_bytes", "v"})
        axes.push_back(parse_sweep_flag(std::string(key) + "=" + thousand));
    EXPECT_THROW(SweepGrid(plain_experiment(), axes), std::overflow_error);
}

}  // namespace
}  // namespace pipelens
