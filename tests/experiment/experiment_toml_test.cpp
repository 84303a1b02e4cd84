// Experiment files: the embedded default, every section, strict errors that name
// file:line:column and the key, validation against the schedule, and an exact round trip
// through experiment_to_toml (what a trace stores to repeat a run).
#include <gtest/gtest.h>

#include "engine/experiment/experiment_toml.hpp"
#include "tests/thrown_message.hpp"

namespace pipelens {
namespace {

std::string error_of(std::string_view text) {
    return testing::thrown_message<ExperimentError>(
        [&] { validate_experiment(parse_experiment_toml(text, "exp.toml")); }, "no error");
}

TEST(ExperimentToml, DefaultExampleIsOneFOneBWithUnevenStages) {
    const Experiment experiment = default_experiment();
    validate_experiment(experiment);
    EXPECT_EQ(experiment.shape.kind, ScheduleKind::one_f_one_b);
    EXPECT_EQ(experiment.shape.rank_count, 4);
    EXPECT_EQ(experiment.shape.stages_per_rank, 1);
    EXPECT_EQ(experiment.shape.microbatch_count, 8);
    EXPECT_EQ(experiment.forward_ns,
              (std::vector<std::int64_t>{1'100'000, 1'000'000, 1'000'000, 1'300'000}));
    EXPECT_EQ(experiment.activation_bytes, (std::vector<std::int64_t>{16 << 20}));
    EXPECT_EQ(experiment.intra_host.latency_ns, 8'000);
    EXPECT_DOUBLE_EQ(experiment.inter_host.bytes_per_ns, 150.0);
}

TEST(ExperimentToml, EverySection) {
    const Experiment experiment = parse_experiment_toml(R"(
name = "all"
[schedule]
kind = "interleaved1f1b"
pp = 2
m = 4
[costs]
activation_bytes = 1024
held_activation_bytes = ["1KiB", "2KiB", "3KiB", "4KiB"]
overlap_efficiency = 0.5
unshard = 3
reshard = "2us"
reduce_grad = "1ms"
[transformer]
layers_per_stage = [2, 2, 2, 1]
hidden = 1024
sequence = 512
heads = 16
dtype = "fp32"
device_tflops = 100.5
[network]
latency = 5
bandwidth = "400Gbit/s"
inter_host_latency = "20us"
ranks_per_host = 1
)",
                                                        "exp.toml");
    validate_experiment(experiment);
    EXPECT_EQ(experiment.name, "all");
    EXPECT_EQ(experiment.shape.kind, ScheduleKind::interleaved_1f1b);
    EXPECT_EQ(experiment.shape.stages_per_rank, 2);  // the kind's default
    EXPECT_EQ(experiment.held_activation_bytes,
              (std::vector<std::int64_t>{1024, 2048, 3072, 4096}));
    EXPECT_EQ(experiment.unshard_ns, 3000);
    EXPECT_EQ(experiment.reduce_grad_ns, 1'000'000);
    ASSERT_TRUE(experiment.transformer);
    EXPECT_EQ(experiment.transformer->layers_per_stage, (std::vector<int>{2, 2, 2, 1}));
    EXPECT_EQ(experiment.transformer->dtype, "fp32");
    EXPECT_EQ(experiment.intra_host.latency_ns, 5000);
    EXPECT_EQ(experiment.inter_host.latency_ns, 20'000);
    EXPECT_DOUBLE_EQ(experiment.inter_host.bytes_per_ns, 50.0);
    EXPECT_EQ(experiment.ranks_per_host, 1);
}

TEST(ExperimentToml, ErrorsNameFileLineColumnAndKey) {
    EXPECT_EQ(error_of("[schedule]\nkind = \"1F1B\"\npp = 4\nmm = 8\n"),
              "exp.toml:4:1: schedule.mm: unknown key");
    EXPECT_EQ(error_of("[costs]\nf = \"1.5xs\"\n"),
              "exp.toml:2:5: costs.f: '1.5xs' is not a duration: unknown unit 'xs' (units: ns, "
              "us, ms, s; a bare number is microseconds)");
    EXPECT_EQ(error_of("[schedule]\npp = \"four\"\n"),
              "exp.toml:2:6: schedule.pp: expected an integer");
    // Past a double's range, and an integer past its exact 2^53: each named for what it is.
    EXPECT_EQ(error_of("[costs]\nf = \"1e400ms\"\n"),
              "exp.toml:2:5: costs.f: '1e400ms' is not a duration: its number is out of any "
              "range (units: ns, us, ms, s; a bare number is microseconds)");
    EXPECT_EQ(error_of("[costs]\nf = 9223372036854775807\n"),
              "exp.toml:2:5: costs.f: '9223372036854775807' is too large for a duration");
    EXPECT_EQ(error_of("[schedule]\nkind = \"2F2B\"\n").rfind("exp.toml:2:8: schedule.kind: ", 0),
              0u);
    EXPECT_EQ(error_of("[schedule\n").rfind("exp.toml:1:", 0), 0u);
    EXPECT_EQ(error_of("colour = 3\n"), "exp.toml:1:1: colour: unknown key");
    EXPECT_EQ(error_of("[schedule]\nkind = \"GPipe\"\nm = 8\n"),
              "exp.toml: schedule.pp: missing: give the number of pipeline ranks in [schedule] or "
              "with --pp");
}

// The values the command line refuses are refused in a file too, at their line and column.
TEST(ExperimentToml, CountsAndBandwidthsOutOfRange) {
    EXPECT_EQ(error_of("[schedule]\npp = 0\nm = 8\n"),
              "exp.toml:2:6: schedule.pp: 0 is out of range (1 to 1000000000)");
    EXPECT_EQ(error_of("[schedule]\npp = -1\nm = 8\n"),
              "exp.toml:2:6: schedule.pp: -1 is out of range (1 to 1000000000)");
    EXPECT_EQ(error_of("[schedule]\npp = 4\nm = 99999999999\n"),
              "exp.toml:3:5: schedule.m: 99999999999 is out of range (1 to 1000000000)");
    EXPECT_EQ(error_of("[schedule]\npp = 4\nm = 8\n[network]\nbandwidth = 0\n"),
              "exp.toml:5:13: network.bandwidth: bandwidth must be positive; leave the key out "
              "for unlimited links");
    EXPECT_EQ(error_of("[schedule]\npp = 4\nm = 8\n[network]\ninter_host_bandwidth = \"0GB/s\"\n"),
              "exp.toml:5:24: network.inter_host_bandwidth: bandwidth must be positive; leave the "
              "key out for unlimited links");
    // Where pp was given, for a schedule file whose row count must match it.
    EXPECT_EQ(parse_experiment_toml("[schedule]\nfile = \"s.csv\"\npp = 2\n", "exp.toml")
                  .rank_count_source,
              "exp.toml:3:6: schedule.pp");
    EXPECT_EQ(parse_experiment_toml("[schedule]\nfile = \"s.csv\"\n", "exp.toml").rank_count_source,
              "");
}

// Each dotted part of a key is one more nested table, which toml++ builds and tears down by
// recursion: 40,000 parts crashed every command that reads an experiment. A key deeper than any
// of pipelens's is refused first, naming where it starts; dots in strings and numbers are not
// key parts.
TEST(ExperimentToml, AKeyOfThousandsOfDottedPartsIsRefusedNotACrash) {
    std::string deep;
    for (int part = 0; part < 40'000; ++part)
        deep += part == 0 ? "a" : ".a";
    EXPECT_EQ(error_of(deep + " = 1\n"),
              "exp.toml:1:1: a key of more than 64 dotted parts; pipelens's keys have at most 3");
    EXPECT_EQ(error_of("[schedule]\npp = 2\nm = 4\n[" + deep + "]\n"),
              "exp.toml:4:2: a key of more than 64 dotted parts; pipelens's keys have at most 3");
    EXPECT_EQ(error_of("x = { " + deep + " = 1 }\n"),
              "exp.toml:1:7: a key of more than 64 dotted parts; pipelens's keys have at most 3");
    std::string dotted_text = "name = \"";
    for (int part = 0; part < 200; ++part)
        dotted_text += "v1.";
    EXPECT_EQ(error_of(dotted_text + "\"\n[schedule]\npp = 2\nm = 4\n"), "no error");
}

// Measured layer costs are one microbatch of the measured size: another m is m such microbatches,
// so the batch a run of the experiment would cut follows; without them the batch stays.
TEST(ExperimentToml, ChangingMKeepsAMeasuredMicrobatchSize) {
    const std::string measured =
        "[schedule]\npp = 2\nm = 4\n[model]\nbatch_size = 128\n[layers]\n"
        "names = [\"layers.0\", \"layers.1\"]\nf = [1, 2]\ni = [1, 2]\nw = [1, 2]\n"
        "b = [2, 4]\nheld_bytes = [8, 8]\noutput_bytes = [4, 4]\ngradient_bytes = [16, 16]\n"
        "backward_peak_bytes = [2, 2]\n";
    Experiment experiment = parse_experiment_toml(measured, "exp.toml");
    set_microbatch_count(experiment, 16);
    EXPECT_EQ(experiment.shape.microbatch_count, 16);
    EXPECT_EQ(experiment.model.batch_size, 512);  // 32 rows per microbatch, as measured
    set_microbatch_count(experiment, 2);
    EXPECT_EQ(experiment.model.batch_size, 64);

    Experiment flat = parse_experiment_toml(
        "[schedule]\npp = 2\nm = 4\n[costs]\nf = 1\n[model]\nbatch_size = 128\n", "exp.toml");
    set_microbatch_count(flat, 16);
    EXPECT_EQ(flat.shape.microbatch_count, 16);
    EXPECT_EQ(flat.model.batch_size, 128);

    // A sweep's or the viewer's `schedule.m` setting is the same change; a batch set beside it
    // is taken as given.
    const Experiment base = parse_experiment_toml(measured, "exp.toml");
    EXPECT_EQ(apply_experiment_settings(base, {{"schedule.m", "16"}}, "sweep").model.batch_size,
              512);
    EXPECT_EQ(
        apply_experiment_settings(base, {{"schedule.m", "16"}, {"model.batch_size", "64"}}, "sweep")
            .model.batch_size,
        64);

    Experiment uneven = parse_experiment_toml(measured, "exp.toml");
    uneven.model.batch_size = 130;  // not 4 whole microbatches: no size to keep
    set_microbatch_count(uneven, 8);
    EXPECT_EQ(uneven.model.batch_size, 130);
}

TEST(ExperimentToml, PerLayerCostsNeedOneValuePerLayerAndNoStageCosts) {
    const std::string layers =
        "[schedule]\npp = 2\nm = 4\n[layers]\nnames = [\"layers.0\", \"layers.1\"]\n"
        "f = [\"1ms\", \"2ms\"]\ni = [1, 2]\nw = [1, 2]\nb = [2, 4]\nheld_bytes = [8, 8]\n"
        "output_bytes = [4, 4]\ngradient_bytes = [16, 16]\nbackward_peak_bytes = [2, 2]\n"
        "loss_f = \"5us\"\nloss_kept_bytes = 4\n";
    EXPECT_EQ(error_of(layers), "no error");
    const Experiment experiment = parse_experiment_toml(layers, "exp.toml");
    ASSERT_TRUE(experiment.layers.has_value());
    EXPECT_EQ(experiment.layers->forward_ns, (std::vector<std::int64_t>{1'000'000, 2'000'000}));
    EXPECT_EQ(experiment.layers->loss.forward_ns, 5'000);
    EXPECT_EQ(experiment.layers->loss.kept_bytes, 4);
    EXPECT_EQ(error_of(layers + "[costs]\nf = 3\n"),
              "exp.toml: layers: give either [layers] or per-stage costs "
              "(costs.f/i/w/b/held_activation_bytes, [transformer]), not both: the layers derive "
              "every stage's costs");
    std::string short_list = layers;
    short_list.replace(short_list.find("held_bytes = [8, 8]"), 19, "held_bytes = [8]");
    EXPECT_EQ(error_of(short_list),
              "exp.toml: layers.held_bytes: has 1 values but layers.names has 2 layers: give one "
              "per layer");
    EXPECT_EQ(error_of(layers + "[model]\nlayers = 3\n"),
              "exp.toml: model.layers: is 3 but [layers] measured 2 layers");
    // A split point names a layer: two layers of one name made `partition` split at the first
    // and call an even split, 9 ms slower than the best, optimal.
    std::string twice = layers;
    twice.replace(twice.find("\"layers.1\""), 10, "\"layers.0\"");
    EXPECT_EQ(error_of(twice),
              "exp.toml: layers.names: \"layers.0\" names layers 0 and 1: give each layer its "
              "own name");
}

TEST(ExperimentToml, ValidationAgainstTheSchedule) {
    EXPECT_EQ(error_of("[schedule]\npp = 4\nm = 8\n[costs]\nf = [1, 2, 3]\n"),
              "exp.toml: costs.f: has 3 values but the schedule has 4 stages (give one value for "
              "all stages or one per stage)");
    EXPECT_EQ(
        error_of("[schedule]\nkind = \"1F1B\"\npp = 4\nm = 2\n").rfind("exp.toml: schedule: ", 0),
        0u);
    // A ratio is read as the command line reads one: a share up to 1, or a percentage.
    EXPECT_EQ(error_of("[schedule]\npp = 4\nm = 8\n[costs]\noverlap_efficiency = 1.5\n"),
              "exp.toml:5:22: costs.overlap_efficiency: 1.5 is above 1; did you mean 1.5%?");
    EXPECT_EQ(error_of("[schedule]\npp = 4\nm = 8\n[costs]\noverlap_efficiency = 60\n"),
              "exp.toml:5:22: costs.overlap_efficiency: 60 is above 1; did you mean 60%?");
    EXPECT_EQ(error_of("[schedule]\npp = 4\nm = 8\n[costs]\noverlap_efficiency = -0.5\n"),
              "exp.toml:5:22: costs.overlap_efficiency: '-0.5' is not a ratio; give 0.2 or 20%");
    EXPECT_EQ(error_of("[schedule]\npp = 4\nm = 8\n[transformer]\nlayers = 2\nhidden = 8\nsequence "
                       "= 8\nheads = 1\n"
                       "device_tflops = 1\n"),
              "exp.toml: transformer.layers: 2 layers cannot fill 4 stages");
    EXPECT_EQ(error_of("[schedule]\npp = 4\nm = 8\n[costs]\nf = 1\n[transformer]\nlayers = "
                       "8\nhidden = 8\nsequence = 8\n"
                       "heads = 1\ndevice_tflops = 1\n")
                  .rfind("exp.toml: transformer: give either", 0),
              0u);
    EXPECT_EQ(error_of("[schedule]\npp = 4\nm = 8\n[transformer]\nlayers = 17\n"
                       "layers_per_stage = [5, 4, 4, 3]\nhidden = 8\nsequence = 8\nheads = 1\n"
                       "device_tflops = 1\n"),
              "exp.toml: transformer.layers_per_stage: [5, 4, 4, 3] adds up to 16 layers but "
              "transformer.layers is 17");
    EXPECT_EQ(error_of("[schedule]\npp = 4\nm = 8\n[costs]\nrank_slowdown = [1, 2]\n"),
              "exp.toml: costs.rank_slowdown: has 2 values but the schedule has 4 ranks (give "
              "one factor per rank)");
    EXPECT_EQ(error_of("[schedule]\npp = 2\nm = 8\n[costs]\nrank_slowdown = [1, 0]\n"),
              "exp.toml: costs.rank_slowdown: 0 is not a slowdown factor (give a number above 0, "
              "1 for a rank at its stage costs, 2 for one taking twice as long)");
    EXPECT_EQ(error_of("[schedule]\npp = 2\nm = 8\n[costs]\nrank_slowdown = [1, \"x\"]\n"),
              "exp.toml:5:21: costs.rank_slowdown: expected numbers");
    EXPECT_EQ(error_of("[schedule]\npp = 4\nm = 8\ndefer_recv = 1\n"),
              "exp.toml:4:14: schedule.defer_recv: expected true or false");
}

TEST(ExperimentToml, ARatioTakesAPercentageAsTheCommandLineDoes) {
    EXPECT_EQ(parse_experiment_toml("[costs]\noverlap_efficiency = \"60%\"\n", "exp.toml")
                  .overlap_efficiency,
              0.6);
    EXPECT_EQ(parse_experiment_toml("[costs]\noverlap_efficiency = 0.25\n", "exp.toml")
                  .overlap_efficiency,
              0.25);
    EXPECT_EQ(
        parse_experiment_toml("[costs]\noverlap_efficiency = 1\n", "exp.toml").overlap_efficiency,
        1.0);
}

// What was once taken without a word and simulated as something else: a part of the backward
// larger than B (the other part clamped to 0), a stage with no layers (free), and a kind beside
// a schedule file (ignored).
TEST(ExperimentToml, InputsThatWereSilentlyBentAreRefused) {
    EXPECT_EQ(error_of("[schedule]\npp = 2\nm = 4\n[costs]\nb = \"1us\"\nw = \"5us\"\n"),
              "exp.toml: costs.w: 5000 ns is more than costs.b, 1000 ns: B is the whole backward, "
              "I + W, so I would be negative; give a B of at least W, or give costs.i too");
    EXPECT_EQ(error_of("[schedule]\npp = 2\nm = 4\n[costs]\nb = [\"3us\", \"1us\"]\n"
                       "i = \"2us\"\n"),
              "exp.toml: costs.i: 2000 ns is more than costs.b, 1000 ns: B is the whole backward, "
              "I + W, so W would be negative; give a B of at least I, or give costs.w too");
    EXPECT_EQ(error_of("[schedule]\npp = 2\nm = 4\n[costs]\nb = \"3us\"\ni = \"3us\"\n"),
              "no error");  // W = 0 is a backward without weights, as stated
    const std::string transformer = "hidden = 8\nsequence = 8\nheads = 1\ndevice_tflops = 1\n";
    EXPECT_EQ(error_of("[schedule]\npp = 4\nm = 8\n[transformer]\nlayers_per_stage = "
                       "[5, 0, 4, 3]\n" +
                       transformer),
              "exp.toml: transformer.layers_per_stage: [5, 0, 4, 3] gives stage 1 no layers, and "
              "a stage without layers computes nothing (only the last stage may have none, when "
              "transformer.vocabulary gives it the output layer)");
    EXPECT_EQ(error_of("[schedule]\npp = 2\nm = 8\n[transformer]\nlayers_per_stage = [4, 0]\n"
                       "vocabulary = 1000\n" +
                       transformer),
              "no error");  // the last stage keeps the output layer
    EXPECT_EQ(error_of("[schedule]\nkind = \"GPipe\"\nfile = \"s.csv\"\n"),
              "exp.toml:3:8: schedule.file: \"s.csv\" and kind = \"GPipe\" each give the schedule: "
              "keep one");
}

// Found by fuzzing: this one error did not say which file it was about.
TEST(ExperimentToml, CostScopeReadsWritesAndNamesItsPlace) {
    const Experiment experiment = parse_experiment_toml(
        "[schedule]\npp = 2\nm = 4\n[costs]\nper = \"model\"\nf = \"4ms\"\n", "exp.toml");
    EXPECT_EQ(experiment.cost_scope, CostScope::model);
    EXPECT_EQ(parse_experiment_toml(experiment_to_toml(experiment), "copy").cost_scope,
              CostScope::model);
    EXPECT_EQ(parse_experiment_toml(experiment_to_toml(plain_experiment()), "copy").cost_scope,
              CostScope::stage);
    EXPECT_EQ(error_of("[schedule]\npp = 2\nm = 4\n[costs]\nper = \"rank\"\n"),
              "exp.toml:5:7: costs.per: 'rank' is not a cost scope: give \"stage\" (each figure "
              "is one stage's), \"model\" (the whole model's, divided over the pp x v stages) or "
              "\"layer\" (one layer's, times the layers of each stage)");
    EXPECT_EQ(error_of("[schedule]\npp = 2\nm = 4\n[costs]\nper = 1\n"),
              "exp.toml:5:7: costs.per: expected a string: \"stage\", \"model\" or \"layer\"");
}

TEST(ExperimentToml, UnknownDtypeNamesTheFile) {
    EXPECT_EQ(error_of("[schedule]\npp = 2\nm = 2\n[transformer]\nlayers = 2\nhidden = 8\n"
                       "sequence = 8\nheads = 1\ndevice_tflops = 1\ndtype = \"bd16\"\n"),
              "exp.toml: transformer.dtype: unknown dtype 'bd16' (use fp32, bf16, fp16 or fp8)");
}

// pp*v of two values a file allows (up to 10^9 each) once overflowed int (found by fuzzing).
TEST(ExperimentToml, StageCountsBeyondIntAreRefusedNotWrapped) {
    EXPECT_EQ(
        error_of("[schedule]\nkind = \"LoopedBFS\"\npp = 1000000000\nv = 1000000000\nm = 1\n"),
        "exp.toml: schedule: pp*v = 1000000000*1000000000 stages is too large (the limit is "
        "536870911)");
    EXPECT_EQ(
        error_of("[schedule]\nkind = \"LoopedBFS\"\npp = 65536\nv = 65536\nm = 1\n"),
        "exp.toml: schedule: pp*v = 65536*65536 stages is too large (the limit is 536870911)");
}

TEST(ExperimentToml, WritingAndReadingBackIsExact) {
    Experiment original = default_experiment();
    original.backward_ns = {3'000'001};
    original.overlap_efficiency = 0.375;
    original.transformer.reset();
    const Experiment copy = parse_experiment_toml(experiment_to_toml(original), "copy");
    EXPECT_EQ(copy.name, original.name);
    EXPECT_EQ(copy.shape.kind, original.shape.kind);
    EXPECT_EQ(copy.shape.rank_count, original.shape.rank_count);
    EXPECT_EQ(copy.shape.stages_per_rank, original.shape.stages_per_rank);
    EXPECT_EQ(copy.shape.microbatch_count, original.shape.microbatch_count);
    EXPECT_EQ(copy.forward_ns, original.forward_ns);
    EXPECT_EQ(copy.input_ns, original.input_ns);
    EXPECT_EQ(copy.weight_ns, original.weight_ns);
    EXPECT_EQ(copy.backward_ns, original.backward_ns);
    EXPECT_EQ(copy.activation_bytes, original.activation_bytes);
    EXPECT_EQ(copy.held_activation_bytes, original.held_activation_bytes);
    EXPECT_EQ(copy.overlap_efficiency, original.overlap_efficiency);
    EXPECT_EQ(copy.intra_host.latency_ns, original.intra_host.latency_ns);
    EXPECT_EQ(copy.inter_host.bytes_per_ns, original.inter_host.bytes_per_ns);
    EXPECT_EQ(copy.ranks_per_host, original.ranks_per_host);
}

TEST(ExperimentToml, ZeroBubbleLimitDeferralAndRendezvousRoundTrip) {
    Experiment original = plain_experiment();
    original.shape.kind = ScheduleKind::zero_bubble_auto;
    original.defer_receives = true;
    original.rendezvous = true;
    for (const ActivationLimit limit :
         {ActivationLimit{2, true}, ActivationLimit{1, true}, ActivationLimit{12, false}}) {
        original.max_activations = limit;
        const Experiment copy = parse_experiment_toml(experiment_to_toml(original), "copy");
        EXPECT_EQ(copy.max_activations, limit) << limit.text();
        EXPECT_TRUE(copy.defer_receives);
        EXPECT_TRUE(copy.rendezvous);
        EXPECT_EQ(copy.shape.kind, ScheduleKind::zero_bubble_auto);
    }
    original.rank_slowdown = {1.0, 1.75, 1.0, 1.0};
    EXPECT_EQ(parse_experiment_toml(experiment_to_toml(original), "copy").rank_slowdown,
              original.rank_slowdown);
    EXPECT_EQ(experiment_to_toml(original).find("send_issue"), std::string::npos);  // 0: unsaid
    original.send_issue_ns = 55217;
    EXPECT_NE(experiment_to_toml(original).find("send_issue = '55217ns'"), std::string::npos);
    EXPECT_EQ(parse_experiment_toml(experiment_to_toml(original), "copy").send_issue_ns, 55217);
    EXPECT_EQ(experiment_to_toml(original).find("posted_receive_buffers"), std::string::npos);
    original.posted_receive_buffers = true;
    EXPECT_NE(experiment_to_toml(original).find("posted_receive_buffers = true"),
              std::string::npos);
    EXPECT_TRUE(parse_experiment_toml(experiment_to_toml(original), "copy").posted_receive_buffers);
    EXPECT_EQ(parse_activation_limit("p").resolve(8), 8);
    EXPECT_EQ(parse_activation_limit("2p").resolve(8), 16);
    EXPECT_EQ(parse_activation_limit("12").resolve(8), 12);
    for (const char* bad : {"0", "0p", "-1", "2q", "p2", "", "1.5p"})
        EXPECT_THROW(parse_activation_limit(bad), ExperimentError) << bad;
}

// An unlimited link is written without a bandwidth (0 is refused when read) and reads back as
// unlimited.
TEST(ExperimentToml, UnlimitedLinksRoundTrip) {
    Experiment original = plain_experiment();
    original.inter_host.bytes_per_ns = 25;
    const std::string text = experiment_to_toml(original);
    EXPECT_EQ(text.find("intra_host_bandwidth"), std::string::npos) << text;
    const Experiment copy = parse_experiment_toml(text, "copy");
    EXPECT_EQ(copy.intra_host.bytes_per_ns, 0);
    EXPECT_EQ(copy.inter_host.bytes_per_ns, 25);
}

}  // namespace
}  // namespace pipelens

namespace pipelens {
namespace {

// [jitter] reads back exactly (quantiles, draws, seed), is absent unless given, and refuses
// what no noise can be: one value, a time of 0 or less, quantiles that descend, draws out of
// range, a key it does not know.
TEST(ExperimentToml, JitterRoundTripsAndIsChecked) {
    Experiment original = plain_experiment();
    EXPECT_EQ(experiment_to_toml(original).find("[jitter]"), std::string::npos);
    original.jitter = JitterSpec{{0.41, 0.87, 1.0, 1.15, 2.68}, {}, JitterCentre::median, 250, 7};
    EXPECT_EQ(experiment_to_toml(original).find("step_quantiles"), std::string::npos);
    Experiment copy = parse_experiment_toml(experiment_to_toml(original), "copy");
    ASSERT_TRUE(copy.jitter);
    EXPECT_EQ(*copy.jitter, *original.jitter);
    original.jitter->step_quantiles = {0.97, 1.0, 1.06};
    copy = parse_experiment_toml(experiment_to_toml(original), "copy");
    ASSERT_TRUE(copy.jitter);
    EXPECT_EQ(*copy.jitter, *original.jitter);
    const char* shape = "[schedule]\npp = 2\nm = 4\n";
    EXPECT_EQ(error_of(std::string(shape) + "[jitter]\nquantiles = [1.0]\n"),
              "exp.toml: jitter.quantiles: has 1 value; give at least two (what a computation "
              "takes of its group's centre, from the fewest to the most)");
    EXPECT_EQ(error_of(std::string(shape) + "[jitter]\nquantiles = [0.001, 1.5]\n"),
              "exp.toml: jitter.quantiles: the most (1.5) is over 1000 times the fewest (0.001): "
              "no machine's noise is that wide");
    EXPECT_EQ(
        error_of(std::string(shape) + "[jitter]\nquantiles = [0.5, 1.5]\ncentre = \"mode\"\n"),
        "exp.toml:6:10: jitter.centre: 'mode' is not a centre: use \"mean\" or \"median\"");
    EXPECT_EQ(error_of(std::string(shape) + "[jitter]\nquantiles = [0.5, 1.5]\nseed = -1\n"),
              "exp.toml:6:8: jitter.seed: -1 is out of range (0 to 1000000000)");
    EXPECT_EQ(error_of(std::string(shape) + "[jitter]\nquantiles = [0, 1.5]\n"),
              "exp.toml: jitter.quantiles: value 1 is 0: each is a time over a typical one, above "
              "0 and at most 1000000");
    EXPECT_EQ(error_of(std::string(shape) + "[jitter]\nquantiles = [1e308, 1.5e308]\n"),
              "exp.toml: jitter.quantiles: value 1 is 1e+308: each is a time over a typical one, "
              "above 0 and at most 1000000");
    EXPECT_EQ(error_of(std::string(shape) + "[jitter]\nquantiles = [0.5, 1.5]\nstep_quantiles = "
                                            "[1.0]\n"),
              "exp.toml: jitter.step_quantiles: has 1 value; give at least two (what a step's "
              "computations took of the median step's, from the fewest to the most), or leave "
              "the key out");
    EXPECT_EQ(error_of(std::string(shape) + "[jitter]\nquantiles = [0.5, 1.5]\nstep_quantiles = "
                                            "[1.1, 0.9]\n"),
              "exp.toml: jitter.step_quantiles: value 2 (0.9) is below the one before it (1.1): "
              "quantiles ascend");
    EXPECT_EQ(error_of(std::string(shape) + "[jitter]\nquantiles = [0.5, 1.5, 1.2]\n"),
              "exp.toml: jitter.quantiles: value 3 (1.2) is below the one before it (1.5): "
              "quantiles ascend");
    EXPECT_EQ(error_of(std::string(shape) + "[jitter]\nquantiles = [0.5, 1.5]\ndraws = 100001\n"),
              "exp.toml:6:9: jitter.draws: 100001 is out of range (1 to 100000)");
    // Both ends name the range there is (the low end once named a top of 10^9).
    EXPECT_EQ(error_of(std::string(shape) + "[jitter]\nquantiles = [0.5, 1.5]\ndraws = 0\n"),
              "exp.toml:6:9: jitter.draws: 0 is out of range (1 to 100000)");
    EXPECT_EQ(error_of(std::string(shape) + "[jitter]\nspread = 2\n"),
              "exp.toml:5:1: jitter.spread: unknown key");
}

}  // namespace
}  // namespace pipelens
