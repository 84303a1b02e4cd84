// `pipelens export` on real trace files: an SVG of a long run stays small because sub-pixel
// actions merge into one block per lane, and a Chrome trace draws an arrow only where both of its
// ends were recorded (a failed run's SEND that never ran leaves its RECV without one).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli/run_pipelens.hpp"
#include "tests/cli/sqlite_edit.hpp"
#include "tests/fresh_trace.hpp"

namespace pipelens {
namespace {

using testing::fresh_trace;
using testing::run_pipelens;

// 1F1B pp=2 m=5000: 40,000 actions, each far below a pixel of a 1600-pixel picture. A rank's
// actions alternate between its compute and communication lanes, so each of the four lanes is
// one merged block holding every action of it (one block for all lanes, cut at every change of
// lane, once drew 20,000 blocks of two actions each).
TEST(ExportCli, ALongRunsSvgMergesEachLanesSubPixelActionsIntoOneBlock) {
    const auto trace = fresh_trace("export_svg_long");
    const auto svg = trace.parent_path() / "export_svg_long.svg";
    ASSERT_EQ(
        run_pipelens("simulate --schedule 1F1B --pp 2 --m 5000 --out " + trace.string()).exit_code,
        0);
    const auto result = run_pipelens("export " + trace.string() + " --svg " + svg.string());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::string text = testing::read_file(svg);
    const std::regex merged("<title>([0-9]+) merged actions</title>");
    int blocks = 0;
    long long actions = 0;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), merged);
         it != std::sregex_iterator(); ++it, ++blocks)
        actions += std::stoll((*it)[1].str());
    EXPECT_EQ(blocks, 4);
    EXPECT_EQ(actions, 40'000);
    EXPECT_LT(text.size(), 20'000u);
    std::filesystem::remove(svg);
}

// A SEND whose row is missing (as in a run that failed before it ran): its pair draws no arrow,
// and every flow start left has exactly one end with its id, and the other way round.
TEST(ExportCli, AChromeArrowIsDrawnOnlyBetweenTwoRecordedEnds) {
    const auto trace = fresh_trace("export_chrome_unpaired");
    const auto chrome = trace.parent_path() / "export_chrome_unpaired.json";
    ASSERT_EQ(
        run_pipelens("simulate --schedule 1F1B --pp 2 --m 2 --out " + trace.string()).exit_code, 0);
    ASSERT_EQ(testing::edit_trace(trace,
                                  "DELETE FROM actions WHERE rank = 0 AND kind = 4 AND pair_id = "
                                  "(SELECT min(pair_id) FROM actions WHERE rank = 0 AND kind = 4)"),
              1);
    const auto result = run_pipelens("export " + trace.string() + " --chrome " + chrome.string());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find(", 3 send/recv arrows,"), std::string::npos) << result.out;
    std::multiset<int> starts;
    std::multiset<int> ends;
    const nlohmann::json exported = nlohmann::json::parse(testing::read_file(chrome));
    for (const auto& event : exported["traceEvents"]) {
        if (event.value("ph", "") == "s")
            starts.insert(event["id"].get<int>());
        if (event.value("ph", "") == "f")
            ends.insert(event["id"].get<int>());
    }
    EXPECT_EQ(starts.size(), 3u);
    EXPECT_EQ(starts, ends);
    std::filesystem::remove(chrome);
}

// Slices of one thread must nest: a receive is drawn as its transfer and may overlap the sends
// and receives around it (16 pairs did, on one thread, in this interleaved run). Each lane is
// packed into threads that keep them apart, and every arrow end sits on its slice's thread.
TEST(ExportCli, NoTwoChromeSlicesOfOneThreadPartlyOverlap) {
    const auto trace = fresh_trace("export_chrome_threads");
    const auto chrome = trace.parent_path() / "export_chrome_threads.json";
    ASSERT_EQ(run_pipelens("simulate --schedule Interleaved1F1B --pp 4 --v 2 --m 8 --f 1ms --i 1ms "
                           "--w 0.5ms --p2p-latency 300us --activation-bytes 1MiB --out " +
                           trace.string())
                  .exit_code,
              0);
    ASSERT_EQ(run_pipelens("export " + trace.string() + " --chrome " + chrome.string()).exit_code,
              0);
    const nlohmann::json exported = nlohmann::json::parse(testing::read_file(chrome));
    std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> slices;
    std::set<std::pair<int, int>> named;
    for (const auto& event : exported["traceEvents"]) {
        if (event.value("ph", "") == "X") {
            const double start = std::stod(event["ts"].dump());
            slices[{event["pid"].get<int>(), event["tid"].get<int>()}].push_back(
                {start, start + std::stod(event["dur"].dump())});
        }
        if (event.value("name", "") == "thread_name")
            named.insert({event["pid"].get<int>(), event["tid"].get<int>()});
    }
    int actions = 0;
    for (auto& [thread, spans] : slices) {
        EXPECT_TRUE(named.count(thread)) << thread.first << "/" << thread.second << " unnamed";
        std::sort(spans.begin(), spans.end());
        for (std::size_t index = 1; index < spans.size(); ++index) {
            const auto& [start, end] = spans[index];
            const double before_end = spans[index - 1].second;
            EXPECT_TRUE(start >= before_end || end <= before_end)  // after it, or inside it
                << "rank " << thread.first << " thread " << thread.second << ": [" << start << ", "
                << end << ") over one ending at " << before_end;
        }
        actions += static_cast<int>(spans.size());
    }
    EXPECT_EQ(actions, 352);
    EXPECT_GT(slices.size(), 8u);  // a second communication thread on some rank
    int flows = 0;
    for (const auto& event : exported["traceEvents"]) {
        const std::string phase = event.value("ph", "");
        if (phase != "s" && phase != "f")
            continue;
        const double at = std::stod(event["ts"].dump());
        const auto& spans = slices[{event["pid"].get<int>(), event["tid"].get<int>()}];
        EXPECT_TRUE(
            std::any_of(spans.begin(), spans.end(),
                        [&](const auto& span) { return span.first <= at && at <= span.second; }))
            << "an arrow end off its slice's thread at " << at;
        ++flows;
    }
    EXPECT_EQ(flows, 224);
    std::filesystem::remove(chrome);
}

}  // namespace
}  // namespace pipelens
