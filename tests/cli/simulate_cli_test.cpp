// `pipelens simulate`, `summary` and `export` as a user runs them: closed-form figures in the
// exact JSON shape, a latency worked out by hand, traces with several runs read back, a Chrome
// trace whose events and arrows match the schedule, every example experiment, and the errors
// for broken files and flags; memory figures that say what they count, in a unit that suits
// their size.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "tests/cli/run_pipelens.hpp"
#include "tests/cli/sqlite_edit.hpp"
#include "tests/fresh_trace.hpp"

namespace pipelens {
namespace {

using pipelens::testing::fresh_trace;

using testing::read_file;
using testing::run_pipelens;
using testing::temp_file;

TEST(SimulateCli, GPipeClosedFormInTheDocumentedJsonShape) {
    const auto result =
        run_pipelens("simulate --schedule GPipe --pp 4 --m 8 --f 1 --i 1 --w 1 --json");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto json = nlohmann::ordered_json::parse(result.out);
    std::vector<std::string> keys;
    for (const auto& item : json.items())
        keys.push_back(item.key());
    EXPECT_EQ(keys, (std::vector<std::string>{"step_time_ns", "bubble_ratio", "peak_memory_counts",
                                              "ranks", "run_id"}));
    EXPECT_EQ(json["peak_memory_counts"], "activations");
    EXPECT_EQ(json["step_time_ns"], (8 + 4 - 1) * 3000);
    EXPECT_DOUBLE_EQ(json["bubble_ratio"].get<double>(), 3.0 / 11.0);
    EXPECT_TRUE(json["run_id"].is_null());
    ASSERT_EQ(json["ranks"].size(), 4u);
    for (int rank = 0; rank < 4; ++rank) {
        const auto& row = json["ranks"][rank];
        EXPECT_EQ(row["rank"], rank);
        EXPECT_EQ(row["busy_ns"], 8 * 3000);
        EXPECT_EQ(row["bubble_ns"], 3 * 3000);
        EXPECT_DOUBLE_EQ(row["bubble_ratio"].get<double>(), 3.0 / 11.0);
        EXPECT_EQ(row["peak_memory_bytes"], 0);  // no activation bytes given
    }
}

// An action whose stage number is damaged (within the range a row may hold) would size the
// critical path's tables by it: refused, naming the file and the run as every damage is (its
// message named neither).
TEST(SimulateCli, ACriticalPathOfDamagedStageNumbersNamesTheTrace) {
    const auto trace = fresh_trace("critical_path_damaged_stage");
    ASSERT_EQ(run_pipelens("simulate --pp 2 --m 4 --out " + trace.string()).exit_code, 0);
    ASSERT_EQ(testing::edit_trace(trace,
                                  "UPDATE actions SET stage = 1000000 WHERE rank = 1 AND step = 0"),
              1);
    const auto result = run_pipelens("summary " + trace.string() + " --critical-path");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err, "pipelens: " + trace.string() +
                              ": trace is corrupt: run 1 names 1000001 stages x 4 microbatches but "
                              "holds only 32 actions: its stage or microbatch numbers are "
                              "damaged\n");
}

TEST(SimulateCli, LinkLatencyAndBandwidthWorkedByHand) {
    // Rank 0: F 0-1us, SEND_F 1-12us (10 us latency + 1000 B at 1 GB/s); rank 1: F 12-13, B
    // 13-15, SEND_B 15-26; rank 0: B 26-28.
    const auto result = run_pipelens(
        "simulate --schedule GPipe --pp 2 --m 1 --f 1 --i 1 --w 1 --activation-bytes 1000 "
        "--p2p-latency 10us --p2p-bandwidth 1GB/s --json");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto json = nlohmann::json::parse(result.out);
    EXPECT_EQ(json["step_time_ns"], 28'000);
    EXPECT_EQ(json["ranks"][0]["busy_ns"], 3000);
    EXPECT_EQ(json["ranks"][0]["waiting_on"]["1"], 25'000);
    EXPECT_EQ(json["ranks"][1]["warmup_ns"], 12'000);
    EXPECT_EQ(json["ranks"][1]["cooldown_ns"], 13'000);
    EXPECT_EQ(json["ranks"][0]["peak_memory_bytes"], 1000);
}

// --b alone: the zero-bubble schedules split it into I and W (halves) rather than running
// their backwards at the 1 us unit times (ZeroBubbleH2 showed 11.016 ms, a third of 1F1B's).
TEST(SimulateCli, ABackwardGivenAloneIsWhatTheZeroBubbleSchedulesRun) {
    const auto step = [](const std::string& flags) {
        const auto result = run_pipelens("simulate --pp 4 --m 8 --json " + flags);
        EXPECT_EQ(result.exit_code, 0) << result.err;
        return nlohmann::json::parse(result.out)["step_time_ns"].get<std::int64_t>();
    };
    EXPECT_EQ(step("--schedule 1F1B --f 1ms --b 2ms"), 33'000'000);  // (m + p - 1)(F + B)
    EXPECT_EQ(step("--schedule ZeroBubbleH2 --f 1ms --b 2ms"), 27'000'000);
    EXPECT_EQ(step("--schedule ZeroBubbleH2 --f 1ms --i 1ms --w 1ms"), 27'000'000);
    EXPECT_EQ(step("--schedule InterleavedZeroBubble --v 1 --f 1ms --b 3ms --i 1ms"),
              step("--schedule InterleavedZeroBubble --v 1 --f 1ms --i 1ms --w 2ms"));
}

TEST(SimulateCli, FsdpActionsAreChargedWhenTheyHaveACost) {
    // GPipe pp=1 m=2 lowers to 0UNSHARD 0F0 0F1 0B0 0B1 0REDUCE_GRAD 0RESHARD. UNSHARD 0-5 us
    // on the communication stream, F 5-6 and 6-7 wait for it, B 7-9 and 9-11, REDUCE_GRAD
    // 11-18 after the last backward, RESHARD 11-13 on the compute stream.
    const auto experiment =
        temp_file("fsdp.toml",
                  "[schedule]\nkind = \"GPipe\"\npp = 1\nm = 2\n[costs]\nf = 1\ni = 1\nw = 1\n"
                  "unshard = \"5us\"\nreshard = \"2us\"\nreduce_grad = \"7us\"\n");
    const auto result = run_pipelens("simulate --json " + experiment.string());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto json = nlohmann::json::parse(result.out);
    EXPECT_EQ(json["step_time_ns"], 18'000);
    EXPECT_EQ(json["ranks"][0]["busy_ns"], 8'000);
    EXPECT_EQ(json["ranks"][0]["warmup_ns"], 5'000);
    EXPECT_EQ(json["ranks"][0]["cooldown_ns"], 5'000);
    std::filesystem::remove(experiment);
}

TEST(SimulateCli, DefaultExampleTextNamesTheExperiment) {
    const auto result = run_pipelens("simulate");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out.rfind("1F1B pp=4 v=1 m=8 (1F1B pp=4 m=8, uneven stages)\nstep time ", 0),
              0u)
        << result.out;
    EXPECT_NE(result.out.find("waiting on"), std::string::npos);
}

TEST(SimulateCli, TraceHoldsRunsThatSummaryAndExportReadBack) {
    const auto trace = fresh_trace("runs");
    const auto first = run_pipelens(
        "simulate --schedule Interleaved1F1B --pp 2 --m 4 --json --out " + trace.string());
    ASSERT_EQ(first.exit_code, 0) << first.err;
    const auto second = run_pipelens("simulate --json --out " + trace.string());
    ASSERT_EQ(second.exit_code, 0) << second.err;
    EXPECT_EQ(nlohmann::json::parse(first.out)["run_id"], 1);
    EXPECT_EQ(nlohmann::json::parse(second.out)["run_id"], 2);

    const auto summary = run_pipelens("summary --json " + trace.string());
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    const auto runs = nlohmann::json::parse(summary.out)["runs"];
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[0]["schedule"], "Interleaved1F1B");
    EXPECT_EQ(runs[0]["status"], "finished");
    EXPECT_EQ(runs[0]["v"], 2);
    const auto simulated = nlohmann::json::parse(first.out);
    EXPECT_EQ(runs[0]["step_time_ns"], simulated["step_time_ns"]);
    EXPECT_EQ(runs[0]["ranks"], simulated["ranks"]);
    // Interleaved1F1B pp=2 v=2 m=4, lowered: 2 * 4 * 4 compute actions, and per microbatch
    // 3 forward and 3 backward boundaries, each a SEND and a RECV.
    EXPECT_EQ(runs[0]["actions"], 32 + 4 * 6 * 2);

    const auto chrome = std::filesystem::path(trace.string() + ".json");
    const auto exported =
        run_pipelens("export " + trace.string() + " --run 1 --chrome " + chrome.string());
    ASSERT_EQ(exported.exit_code, 0) << exported.err;
    const auto events = nlohmann::json::parse(read_file(chrome))["traceEvents"];
    int complete = 0;
    std::map<int, int> flow_starts, flow_ends;
    bool saw_first_forward = false;
    for (const auto& event : events) {
        if (event["ph"] == "X") {
            ++complete;
            saw_first_forward |= event["name"] == "0F0" && event["pid"] == 0 && event["tid"] == 0;
        }
        if (event["ph"] == "s")
            ++flow_starts[event["id"].get<int>()];
        if (event["ph"] == "f")
            ++flow_ends[event["id"].get<int>()];
    }
    EXPECT_EQ(complete, 80);
    EXPECT_TRUE(saw_first_forward);
    EXPECT_EQ(flow_starts.size(), 24u);
    EXPECT_EQ(flow_starts, flow_ends);  // every arrow has both ends
    std::filesystem::remove(chrome);
}

// `summary --critical-path`: 1F1B pp=4 m=8 with the last stage twice as slow. The path fills
// the pipe with microbatch 0's forwards, runs the last stage's F and B back to back, and drains
// with microbatch 7's backwards; its shares add up to the step.
TEST(SimulateCli, SummaryListsTheCriticalPath) {
    const auto trace = fresh_trace("critical");
    ASSERT_EQ(run_pipelens("simulate --schedule 1F1B --pp 4 --m 8 --f 1,1,1,2 --b 2,2,2,4 --out " +
                           trace.string())
                  .exit_code,
              0);
    const auto summary = run_pipelens("summary --critical-path --json " + trace.string());
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    const auto run = nlohmann::json::parse(summary.out)["runs"][0];
    const auto path = run["critical_path"];
    EXPECT_EQ(path["end_ns"], run["step_time_ns"]);
    EXPECT_EQ(path["start_ns"], 0);
    EXPECT_EQ(path["length_ns"], run["step_time_ns"]);
    std::int64_t total = 0;
    for (const auto& [name, ns] : path["shares"].items())
        total += ns.get<std::int64_t>();
    EXPECT_EQ(total, path["end_ns"].get<std::int64_t>());
    EXPECT_EQ(path["shares"]["F"], (3 * 1 + 8 * 2) * 1000);
    EXPECT_EQ(path["shares"]["B"], (8 * 4 + 3 * 2) * 1000);
    std::vector<std::string> computations;
    for (const auto& link : path["links"]) {
        const std::string action = link["action"];
        if (action.find("SEND") == std::string::npos && action.find("RECV") == std::string::npos)
            computations.push_back(action);
    }
    std::vector<std::string> expected = {"0F0", "1F0", "2F0"};
    for (int microbatch = 0; microbatch < 8; ++microbatch)
        for (const char* kind : {"F", "B"})
            expected.push_back(std::string("3").append(kind).append(std::to_string(microbatch)));
    expected.insert(expected.end(), {"2B7", "1B7", "0B7"});
    EXPECT_EQ(computations, expected);

    const auto text = run_pipelens("summary --critical-path " + trace.string());
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("critical path: "), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("3B7"), std::string::npos);
}

// A damaged run is refused with one line before anything is printed, not after the run list.
TEST(SimulateCli, SummaryRefusesADamagedRunBeforePrintingAnything) {
    const auto trace = fresh_trace("critical_damaged");
    ASSERT_EQ(run_pipelens("simulate --pp 2 --m 4 --out " + trace.string()).exit_code, 0);
    ASSERT_EQ(
        testing::edit_trace(trace, "UPDATE actions SET kind = 99 WHERE rank = 0 AND step = 0"), 1);
    for (const char* flag : {"--critical-path", "--stragglers"}) {
        SCOPED_TRACE(flag);
        const auto summary = run_pipelens(std::string("summary ") + flag + " " + trace.string());
        EXPECT_EQ(summary.exit_code, 2);
        EXPECT_EQ(summary.out, "");
        EXPECT_NE(summary.err.find("trace is corrupt"), std::string::npos) << summary.err;
    }
}

std::size_t count_of(const std::string& text, const std::string& fragment) {
    std::size_t count = 0;
    for (auto at = text.find(fragment); at != std::string::npos; at = text.find(fragment, at + 1))
        ++count;
    return count;
}

TEST(SimulateCli, SvgTimelineDrawsActionsBubblesAndArrows) {
    // GPipe pp=2 m=2, F = 1 us, B = 2 us: rank 0 runs F 0-2 and B 5-9, rank 1 F 1-3 and
    // B 3-7, so the idle stretches are rank 0's 2-5, rank 1's 0-1 and 7-9.
    const auto trace = fresh_trace("svg");
    ASSERT_EQ(
        run_pipelens("simulate --schedule GPipe --pp 2 --m 2 --out " + trace.string()).exit_code,
        0);
    const auto svg_path = std::filesystem::path(trace.string() + ".svg");
    const auto exported = run_pipelens("export " + trace.string() + " --svg " + svg_path.string());
    ASSERT_EQ(exported.exit_code, 0) << exported.err;
    const std::string svg = read_file(svg_path);
    EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
    // In the viewer's colours (traces/palette.hpp): F blue, B vermillion.
    EXPECT_EQ(count_of(svg, R"(fill="#0072b2"><title>0F0 rank 0 0.000-1.000 us</title>)"), 1u);
    EXPECT_EQ(count_of(svg, R"(fill="#d55e00"><title>1B1 rank 1 )"), 1u);
    EXPECT_EQ(count_of(svg, R"svg(fill="url(#bubble)")svg"), 3u);
    EXPECT_EQ(count_of(svg, "marker-end="), 4u);  // two forward and two backward transfers
    std::filesystem::remove(svg_path);
}

// Times near int64's end (a damaged or foreign trace) once made the ruler's next tick wrap
// round, so `export --svg` appended ticks until it ran out of memory; no writer records a time
// past 2^62 ns, so such a trace is now damage: one line naming it, exit 2, no SVG.
TEST(SimulateCli, SvgOfATraceWhoseTimesReachInt64sEndEnds) {
    const auto trace = fresh_trace("svg_far");
    ASSERT_EQ(
        run_pipelens("simulate --schedule GPipe --pp 2 --m 2 --out " + trace.string()).exit_code,
        0);
    ASSERT_EQ(testing::edit_trace(trace,
                                  "UPDATE actions SET start_ns = 9223372036854775000, end_ns = "
                                  "9223372036854775807 WHERE rank = 0 AND step = 0"),
              1);
    const auto svg_path = std::filesystem::path(trace.string() + ".svg");
    const auto exported = run_pipelens("export " + trace.string() + " --svg " + svg_path.string());
    EXPECT_EQ(exported.exit_code, 2) << exported.err;
    EXPECT_EQ(exported.err, "pipelens: " + trace.string() +
                                ": trace is corrupt: run 1 rank 0 step 0: it spans "
                                "9223372036854775000 to 9223372036854775807 ns, past 2^62 ns from "
                                "the run's start\n");
    EXPECT_FALSE(std::filesystem::exists(svg_path));
}

// A [transformer] simulation sizes activations only: its peak says so in the table, the JSON,
// `summary` and the SVG export alike.
TEST(SimulateCli, PeakMemorySaysItCountsActivationsOnly) {
    const std::string example =
        std::string(PIPELENS_SOURCE_DIR) + "/assets/examples/interleaved_transformer.toml";
    const auto text = run_pipelens("simulate " + example);
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("     cool-down  peak activation memory  waiting on\n"),
              std::string::npos)
        << text.out;
    const auto trace = fresh_trace("activations");
    const auto json = run_pipelens("simulate --json " + example + " --out " + trace.string());
    ASSERT_EQ(json.exit_code, 0) << json.err;
    EXPECT_EQ(nlohmann::json::parse(json.out)["peak_memory_counts"], "activations");
    const auto summary = run_pipelens("summary " + trace.string());
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    EXPECT_NE(summary.out.find("peak activation memory"), std::string::npos) << summary.out;
    const auto summary_json = run_pipelens("summary --json " + trace.string());
    ASSERT_EQ(summary_json.exit_code, 0) << summary_json.err;
    EXPECT_EQ(nlohmann::json::parse(summary_json.out)["runs"][0]["peak_memory_counts"],
              "activations");
}

// Per-layer costs that size weight gradients and a backward's temporaries: the peak counts them
// too, and says so; `summary` reads the same from the recorded stage costs.
TEST(SimulateCli, PeakMemoryCountingGradientsSaysSo) {
    const auto file = temp_file(
        "layers_memory.toml",
        "[schedule]\npp = 2\nm = 4\n[layers]\nnames = [\"layers.0\", \"layers.1\"]\n"
        "f = [\"1ms\", \"2ms\"]\ni = [1, 2]\nw = [1, 2]\nb = [2, 4]\nheld_bytes = [8, 8]\n"
        "output_bytes = [4, 4]\ngradient_bytes = [16, 16]\nbackward_peak_bytes = [2, 2]\n");
    const auto trace = fresh_trace("gradients");
    const auto json = run_pipelens("simulate --json " + file.string() + " --out " + trace.string());
    ASSERT_EQ(json.exit_code, 0) << json.err;
    EXPECT_EQ(nlohmann::json::parse(json.out)["peak_memory_counts"], "activations_and_gradients");
    const auto text = run_pipelens("simulate " + file.string());
    EXPECT_NE(text.out.find("  peak activation and gradient memory  waiting on\n"),
              std::string::npos)
        << text.out;
    const auto summary = run_pipelens("summary --json " + trace.string());
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    EXPECT_EQ(nlohmann::json::parse(summary.out)["runs"][0]["peak_memory_counts"],
              "activations_and_gradients");
}

// The issue's case: a run whose peak is 194 KiB said "peak 0.0 GiB" in the SVG. GPipe pp=2 m=2
// holds both microbatches' 97 KiB on each rank.
TEST(SimulateCli, SvgPeakIsInAUnitThatSuitsItsSizeAndSaysWhatItCounts) {
    const auto trace = fresh_trace("svg_peak");
    ASSERT_EQ(
        run_pipelens("simulate --schedule GPipe --pp 2 --m 2 --activation-bytes 97KiB --out " +
                     trace.string())
            .exit_code,
        0);
    const auto svg_path = std::filesystem::path(trace.string() + ".svg");
    const auto exported = run_pipelens("export " + trace.string() + " --svg " + svg_path.string());
    ASSERT_EQ(exported.exit_code, 0) << exported.err;
    const std::string svg = read_file(svg_path);
    EXPECT_EQ(count_of(svg, ", peak 194.0 KiB</text>"), 2u) << svg;
    EXPECT_EQ(count_of(svg, "(hatched: idle compute); peak: activation memory</text>"), 1u);
    std::filesystem::remove(svg_path);
}

TEST(SimulateCli, EveryExampleExperimentSimulates) {
    int examples = 0;
    for (const auto& entry : std::filesystem::directory_iterator(std::string(PIPELENS_SOURCE_DIR) +
                                                                 "/assets/examples")) {
        if (entry.path().extension() != ".toml")
            continue;
        ++examples;
        const auto result = run_pipelens("simulate --json " + entry.path().string());
        EXPECT_EQ(result.exit_code, 0) << entry.path() << ": " << result.err;
        if (result.exit_code == 0) {
            EXPECT_GT(nlohmann::json::parse(result.out)["step_time_ns"].get<long>(), 0);
        }
    }
    EXPECT_GE(examples, 4);
}

TEST(SimulateCli, BrokenInputGivesOneLineErrorsAndExitTwo) {
    const auto experiment = temp_file("typo.toml", "[schedule]\nkind = \"1F1B\"\npp = 4\nmm = 8\n");
    auto result = run_pipelens("simulate " + experiment.string());
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err, "pipelens: " + experiment.string() + ":4:1: schedule.mm: unknown key\n");

    result = run_pipelens("simulate --f 1.5xs");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err.rfind("pipelens: --f: '1.5xs' is not a duration: unknown unit 'xs'", 0),
              0u)
        << result.err;

    result = run_pipelens("simulate --pp 3 --m 6 --f 1,2");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err,
              "pipelens: command line: costs.f: has 2 values but the schedule has 3 stages (give "
              "one value for all stages or one per stage)\n");

    result = run_pipelens("simulate /nonexistent/exp.toml");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err, "pipelens: /nonexistent/exp.toml: cannot open experiment file\n");

    const auto not_a_trace = temp_file("notes.txt", "just some notes\n");
    result = run_pipelens("summary " + not_a_trace.string());
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find(not_a_trace.string()), std::string::npos) << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;

    std::filesystem::remove(experiment);
    std::filesystem::remove(not_a_trace);
}

// Counts and bandwidths that make no pipeline are refused with the flag's name and exit 2.
TEST(SimulateCli, InvalidCountsAndBandwidthsNameTheFlag) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"--pp 0", "pipelens: --pp must be at least 1, got 0\n"},
        {"--pp -1", "pipelens: --pp must be at least 1, got -1\n"},
        {"--m 0", "pipelens: --m must be at least 1, got 0\n"},
        {"--v 0", "pipelens: --v must be at least 1, got 0\n"},
        {"--m 99999999999", "pipelens: --m: 99999999999 is out of range (at most 1000000000)\n"},
        {"--pp 99999999999999999999",
         "pipelens: --pp: 99999999999999999999 is out of range (at most 1000000000)\n"},
        {"--m eight", "pipelens: --m: 'eight' is not an integer\n"},
        {"--ranks-per-host 0", "pipelens: --ranks-per-host must be at least 1, got 0\n"},
        {"--p2p-bandwidth 0",
         "pipelens: --p2p-bandwidth: bandwidth must be positive; omit --p2p-bandwidth for "
         "unlimited links\n"},
        {"--p2p-bandwidth 0GB/s",
         "pipelens: --p2p-bandwidth: bandwidth must be positive; omit --p2p-bandwidth for "
         "unlimited links\n"},
    };
    for (const auto& [flags, error] : cases) {
        const auto result = run_pipelens("simulate " + flags);
        EXPECT_EQ(result.exit_code, 2) << flags;
        EXPECT_EQ(result.err, error) << flags;
    }
    const auto help = run_pipelens("simulate --help");
    EXPECT_NE(help.out.find("omit it for unlimited links"), std::string::npos) << help.out;
}

// Costs past any machine's range once wrapped round int64: a bubble of -2.5% passed a bubble
// gate, a step came out as 0 ns. They are refused as too large (exit 3), naming why.
TEST(SimulateCli, StepsPastInt64sRangeAreRefusedNotWrapped) {
    const auto latency = run_pipelens("simulate --p2p-latency 1e18ns --max-bubble 10%");
    EXPECT_EQ(latency.exit_code, 3);
    EXPECT_EQ(latency.out, "");
    EXPECT_EQ(latency.err.rfind("pipelens: the step runs past 4611686018427387904 ns, about 146 "
                                "years (an action of 1000000000000000000 ns",
                                0),
              0u)
        << latency.err;
    const auto model = run_pipelens(
        "simulate --layers 10 --hidden 1000000000 --sequence 1000000000 --heads 1 "
        "--device-tflops 1");
    EXPECT_EQ(model.exit_code, 3);
    EXPECT_EQ(model.err.rfind("pipelens: a transformer of hidden 1000000000, sequence 1000000000 "
                              "and microbatch size 1 needs ",
                              0),
              0u)
        << model.err;
    // Four microbatches of 4e18 bytes held on rank 0 pass int64: the peaks once came out as
    // 8e18 on ranks holding 1.6e19 and 1.2e19 bytes.
    const auto memory =
        run_pipelens("simulate --schedule 1F1B --pp 4 --m 8 --held-activation-bytes 4000000TB");
    EXPECT_EQ(memory.exit_code, 3);
    EXPECT_EQ(memory.out, "");
    EXPECT_EQ(memory.err,
              "pipelens: rank 0's memory passes 2^63 bytes (8 EiB) at 2000 ns: an "
              "activation or gradient size is out of any machine's range\n");
}

// A schedule file has one row per rank: a pp that was given must match it, from a flag or a
// file; without one the file decides.
TEST(SimulateCli, AScheduleFileWhoseRowsDifferFromPpIsRefused) {
    const std::string csv =
        std::string(PIPELENS_SOURCE_DIR) + "/assets/examples/zb1p_pp4_v2_m8.csv";
    for (const int pp : {2, 8}) {
        const auto result =
            run_pipelens("simulate --schedule-file " + csv + " --pp " + std::to_string(pp));
        EXPECT_EQ(result.exit_code, 2);
        EXPECT_EQ(result.err, "pipelens: --pp is " + std::to_string(pp) +
                                  " but the schedule file " + csv +
                                  " has 4 rows (one per rank); pp must match the file, or leave "
                                  "it out to take the file's\n");
    }
    const auto experiment =
        temp_file("csv_pp.toml", "[schedule]\nfile = \"" + csv + "\"\npp = 2\n");
    auto result = run_pipelens("simulate " + experiment.string());
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err, "pipelens: " + experiment.string() +
                              ":3:6: schedule.pp is 2 but the schedule file " + csv +
                              " has 4 rows (one per rank); pp must match the file, or leave it "
                              "out to take the file's\n");
    std::filesystem::remove(experiment);

    // v and m are the file's too: a different one given is refused, not silently ignored.
    result = run_pipelens("simulate --schedule-file " + csv + " --m 2");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err, "pipelens: --m is 2 but the schedule file " + csv +
                              " has m = 8 (microbatches); m must match the file, or leave it out "
                              "to take the file's\n");
    const auto stages = temp_file("csv_v.toml", "[schedule]\nfile = \"" + csv + "\"\nv = 3\n");
    result = run_pipelens("simulate " + stages.string());
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err, "pipelens: " + stages.string() +
                              ":3:5: schedule.v is 3 but the "
                              "schedule file " +
                              csv +
                              " has v = 2 (stages per rank); v must match the file, or leave it "
                              "out to take the file's\n");
    std::filesystem::remove(stages);

    for (const std::string& flags :
         {std::string(""), std::string(" --pp 4"), std::string(" --pp 4 --v 2 --m 8")}) {
        result = run_pipelens("simulate --schedule-file " + csv + flags + " --json");
        ASSERT_EQ(result.exit_code, 0) << result.err;
        EXPECT_EQ(nlohmann::json::parse(result.out)["ranks"].size(), 4u);
    }
}

TEST(SimulateCli, HangingScheduleFileIsReportedNotSimulated) {
    const auto result =
        run_pipelens("simulate --schedule-file " + std::string(PIPELENS_SOURCE_DIR) +
                     "/assets/examples/swapped_recvs.csv");
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_NE(result.err.find("wait cycle"), std::string::npos) << result.err;

    // Recorded, the run began before the hang was found: it stays in the trace, failed, with
    // the same reason.
    const auto trace = fresh_trace("hanging");
    const auto recorded =
        run_pipelens("simulate --schedule-file " + std::string(PIPELENS_SOURCE_DIR) +
                     "/assets/examples/swapped_recvs.csv --out " + trace.string());
    EXPECT_EQ(recorded.exit_code, 1);
    EXPECT_NE(recorded.err.find("wait cycle"), std::string::npos) << recorded.err;
    const auto summary = run_pipelens("summary --json " + trace.string());
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    const auto runs = nlohmann::json::parse(summary.out)["runs"];
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0]["status"], "failed");
}

TEST(SimulateCli, ZeroBubbleTwoPReachesZeroBubbleWithUnitTimes) {
    // ZB-2p with F = I = W: every rank busy from its first to its last computation.
    const auto result = run_pipelens(
        "simulate --schedule ZeroBubbleAuto --pp 4 --m 8 --f 1 --i 1 --w 1 "
        "--max-activations 2p --json");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto json = nlohmann::json::parse(result.out);
    for (const auto& row : json["ranks"])
        EXPECT_EQ(row["warmup_ns"].get<std::int64_t>() + row["cooldown_ns"].get<std::int64_t>(),
                  row["bubble_ns"].get<std::int64_t>());
    EXPECT_EQ(json["step_time_ns"], (3 * 8 + 3) * 1000);
}

TEST(SimulateCli, DeferRecvCostsLatencyOnlyWithRendezvous) {
    const std::string base =
        "simulate --schedule Interleaved1F1B --pp 4 --v 2 --m 8 --f 1ms --i 1ms --w 1ms "
        "--p2p-latency 300us --json";
    auto step = [](const std::string& flags) {
        const auto result = run_pipelens(flags);
        EXPECT_EQ(result.exit_code, 0) << result.err;
        return nlohmann::json::parse(result.out)["step_time_ns"].get<std::int64_t>();
    };
    EXPECT_EQ(step(base), 61'200'000);
    EXPECT_EQ(step(base + " --defer-recv"), 61'200'000);
    EXPECT_EQ(step(base + " --rendezvous"), 61'200'000);
    EXPECT_EQ(step(base + " --defer-recv --rendezvous"), 65'700'000);
}

TEST(SimulateCli, ZeroBubbleInputsThatCannotWorkExitTwo) {
    // Per-stage times enter as their median (the authors' runtime does so): F = 1 here, and
    // the simulation charges each stage its own F.
    const auto measured = run_pipelens(
        "simulate --schedule ZeroBubbleAuto --pp 4 --m 8 --f 1,2,1,1 --i 1 --w 1 --json");
    EXPECT_EQ(measured.exit_code, 0) << measured.err;
    EXPECT_EQ(nlohmann::json::parse(measured.out)["ranks"][1]["busy_ns"], 8 * (2000 + 1000 + 1000));
    const auto limit = run_pipelens("simulate --schedule 1F1B --pp 4 --m 8 --max-activations 2p");
    EXPECT_EQ(limit.exit_code, 2);
    EXPECT_NE(limit.err.find("schedule.max_activations: only ZeroBubbleAuto takes a memory limit"),
              std::string::npos)
        << limit.err;
    const auto bad = run_pipelens(
        "simulate --schedule ZeroBubbleAuto --pp 4 --m 8 "
        "--max-activations 2q");
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("--max-activations: '2q' is not a memory limit"), std::string::npos)
        << bad.err;
}

// The zero-bubble paper's split (its table 3: first and last stage one layer fewer) and the
// interleaved equivalent, one count per virtual stage in stage order.
TEST(SimulateCli, UnevenSplitsPerStageAndPerVirtualStage) {
    const std::string transformer =
        "[transformer]\nlayers = 22\nlayers_per_stage = [2, 3, 3, 3, 3, 3, 3, 2]\n"
        "hidden = 2304\nsequence = 1024\nheads = 24\nmicrobatch_size = 6\n"
        "device_tflops = 100\n";
    const auto h2 = temp_file(
        "uneven_h2.toml", "[schedule]\nkind = \"ZeroBubbleH2\"\npp = 8\nm = 24\n" + transformer);
    const auto ok = run_pipelens("simulate " + h2.string() + " --json");
    ASSERT_EQ(ok.exit_code, 0) << ok.err;
    // Stage 0 holds 2 of the 3 layers a middle stage does: 2/3 of its busy time (to the ns
    // each of its 72 actions rounds to).
    const auto json = nlohmann::json::parse(ok.out);
    EXPECT_NEAR(json["ranks"][0]["busy_ns"].get<double>() * 3,
                json["ranks"][1]["busy_ns"].get<double>() * 2, 3 * 72);

    const auto automatic =
        temp_file("uneven_auto.toml",
                  "[schedule]\nkind = \"ZeroBubbleAuto\"\npp = 8\nm = 24\n" + transformer);
    const auto refused = run_pipelens("simulate " + automatic.string());
    EXPECT_EQ(refused.exit_code, 2);
    EXPECT_NE(refused.err.find("ZeroBubbleAuto searches one order for equal stages"),
              std::string::npos)
        << refused.err;
    // The same for costs given per layer: 6 layers over 4 stages was searched as if equal.
    const auto per_layer = run_pipelens(
        "simulate --schedule ZeroBubbleAuto --layers 6 --costs-per layer --f 1 --pp 4 --m 8");
    EXPECT_EQ(per_layer.exit_code, 2);
    EXPECT_NE(per_layer.err.find("but the model's layers (costs per layer) split unevenly over "
                                 "the 4 stages ([2, 2, 1, 1])"),
              std::string::npos)
        << per_layer.err;
    EXPECT_EQ(run_pipelens("simulate --schedule ZeroBubbleAuto --layers 8 --costs-per layer --f 1 "
                           "--pp 4 --m 8")
                  .exit_code,
              0);

    const auto interleaved =
        temp_file("uneven_interleaved.toml",
                  "[schedule]\nkind = \"Interleaved1F1B\"\npp = 2\nv = 2\nm = 4\n"
                  "[transformer]\nlayers_per_stage = [1, 2, 2, 1]\nhidden = 1024\nsequence = 512\n"
                  "heads = 16\ndevice_tflops = 100\n");
    EXPECT_EQ(run_pipelens("simulate " + interleaved.string()).exit_code, 0);
    const auto short_list =
        temp_file("uneven_short.toml",
                  "[schedule]\nkind = \"Interleaved1F1B\"\npp = 2\nv = 2\nm = 4\n"
                  "[transformer]\nlayers_per_stage = [3, 3]\nhidden = 1024\nsequence = 512\n"
                  "heads = 16\ndevice_tflops = 100\n");
    const auto short_result = run_pipelens("simulate " + short_list.string());
    EXPECT_EQ(short_result.exit_code, 2);
    EXPECT_NE(short_result.err.find("transformer.layers_per_stage: has 2 values but the schedule "
                                    "has 4 stages"),
              std::string::npos)
        << short_result.err;
    for (const auto& path : {h2, automatic, interleaved, short_list})
        std::filesystem::remove(path);
}

}  // namespace
}  // namespace pipelens

namespace pipelens {
namespace {

using testing::run_pipelens;
using testing::temp_file;

// [jitter]: the draws' median is the predicted step (equal quantiles draw the noise-free step
// every time), stated beside the step of the costs in the text and the JSON; a noisy machine's
// median is longer than the noise-free step; too many draws are refused naming the file and
// the key, and nothing is drawn without [jitter].
TEST(SimulateCli, JitterPredictsTheMedianStepOfANoisyMachine) {
    const std::string shape =
        "[schedule]\nkind = \"1F1B\"\npp = 4\nm = 8\n[costs]\nf = 1\ni = 1\n"
        "w = 1\n";
    const auto quiet = temp_file("quiet.toml", shape + "[jitter]\nquantiles = [1.2, 1.2]\n");
    auto result = run_pipelens("simulate " + quiet.string() + " --json");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    auto json = nlohmann::json::parse(result.out);
    EXPECT_EQ(json["step_time_ns"], (8 + 4 - 1) * 3000);
    EXPECT_EQ(json["predicted_step_time_ns"], (8 + 4 - 1) * 3000);
    EXPECT_EQ(json["jitter"]["draws"], 1000);
    EXPECT_EQ(json["jitter"]["min_step_time_ns"], (8 + 4 - 1) * 3000);
    EXPECT_EQ(json["jitter"]["max_step_time_ns"], (8 + 4 - 1) * 3000);

    const auto noisy = temp_file("noisy.toml", shape +
                                                   "[jitter]\nquantiles = [0.5, 1.5]\n"
                                                   "draws = 301\n");
    result = run_pipelens("simulate " + noisy.string() + " --json");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    json = nlohmann::json::parse(result.out);
    EXPECT_EQ(json["jitter"]["draws"], 301);
    EXPECT_GT(json["predicted_step_time_ns"].get<std::int64_t>(), (8 + 4 - 1) * 3000);
    EXPECT_EQ(json["predicted_step_time_ns"], json["jitter"]["median_step_time_ns"]);
    result = run_pipelens("simulate " + noisy.string());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("with [jitter] (301 draws of each computation's time about its "
                              "cost): median step "),
              std::string::npos)
        << result.out;
    EXPECT_NE(result.out.find("the step above, 33.000 us, is the costs' own, without noise"),
              std::string::npos)
        << result.out;

    result = run_pipelens("simulate --schedule 1F1B --pp 4 --m 8 --json");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_FALSE(nlohmann::json::parse(result.out).contains("jitter"));

    const auto many = temp_file("many.toml", shape +
                                                 "[jitter]\nquantiles = [0.5, 1.5]\n"
                                                 "draws = 100000\n");
    result = run_pipelens("simulate " + many.string() + " --pp 8 --m 256");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(
        result.err.rfind("pipelens: " + many.string() + ": jitter.draws: 100000 draws of ", 0), 0u)
        << result.err;
}

}  // namespace
}  // namespace pipelens
