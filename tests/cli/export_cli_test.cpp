// `pipelens export` on real trace files: an SVG of a long run stays small because sub-pixel
// actions merge into one block per lane, and a Chrome trace draws an arrow only where both of its
// ends were recorded (a failed run's SEND that never ran leaves its RECV without one).
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>
#include <string>

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

}  // namespace
}  // namespace pipelens
