// The text the trace store derives and prints (traces/text/): durations and sizes for people,
// PyTorch's action labels from integers alone (a damaged kind still prints), and XML escaping.
#include <gtest/gtest.h>

#include <string>

#include "traces/text/action_label.hpp"
#include "traces/text/quantities.hpp"
#include "traces/text/xml_escape.hpp"

namespace pipelens {
namespace {

TEST(Quantities, ReadablePrinting) {
    EXPECT_EQ(format_duration(850), "850 ns");
    EXPECT_EQ(format_duration(1'500'000), "1.500 ms");
    EXPECT_EQ(format_duration(20'000), "20.000 us");
    EXPECT_EQ(format_duration(12'500'000'000), "12.500 s");
    EXPECT_EQ(format_bytes(512), "512 B");
    EXPECT_EQ(format_bytes(16 * 1024 * 1024), "16.0 MiB");
}

// A ruler's labels share the unit and decimals of its step: a zero tick reads "0 ms" beside
// "5 ms", a 2.5 ms step keeps one decimal on every label, a 1 s step counts seconds.
TEST(Quantities, TickLabelsShareTheStepsUnit) {
    EXPECT_EQ(format_tick(0, 5'000'000), "0 ms");
    EXPECT_EQ(format_tick(35'000'000, 5'000'000), "35 ms");
    EXPECT_EQ(format_tick(5'000'000, 2'500'000), "5.0 ms");
    EXPECT_EQ(format_tick(7'500'000, 2'500'000), "7.5 ms");
    EXPECT_EQ(format_tick(250, 250), "250 ns");
    EXPECT_EQ(format_tick(1'500, 500), "1500 ns");
    EXPECT_EQ(format_tick(2'000, 1'000), "2 us");
    EXPECT_EQ(format_tick(120'000'000'000, 20'000'000'000), "120 s");
    EXPECT_EQ(format_tick(1'250'000'000, 250'000'000), "1250 ms");
}

// One unit for a size and for a scale of sizes: 194 KiB is not "0.0 GiB".
TEST(Quantities, ByteUnitIsTheOneFormatBytesPrintsIn) {
    EXPECT_EQ(byte_unit(194 * 1024).name, "KiB");
    EXPECT_EQ(byte_unit(194 * 1024).bytes, 1024.0);
    EXPECT_EQ(format_bytes(194 * 1024), "194.0 KiB");
    EXPECT_EQ(byte_unit(1023).name, "B");
    EXPECT_EQ(byte_unit(97LL << 30).name, "GiB");
    EXPECT_EQ(format_bytes(-(3 << 20)), "-3.0 MiB");
}

TEST(ActionLabel, KindsAreSpelledAsPyTorchDoesAndAnUnknownOneAsAQuestionMark) {
    EXPECT_EQ(text::action_kind_name(0), "F");
    EXPECT_EQ(text::action_kind_name(5), "RECV_F");
    EXPECT_EQ(text::action_kind_name(text::kOverlapKind), "OVERLAP_F_B");
    EXPECT_EQ(text::action_kind_name(11), "REDUCE_GRAD");
    EXPECT_EQ(text::action_kind_name(text::kActionKindNames), "?");
    EXPECT_EQ(text::action_kind_name(-1), "?");
}

TEST(ActionLabel, PlainActionsAppendStageKindAndMicrobatch) {
    std::string label = "x:";
    text::append_plain_action(label, 1, 5, 3);
    EXPECT_EQ(label, "x:1RECV_F3");
    label.clear();
    text::append_plain_action(label, 0, 9, -1);  // FSDP actions have no microbatch
    EXPECT_EQ(label, "0UNSHARD");
    label.clear();
    text::append_plain_action(label, 12, 42, 7);
    EXPECT_EQ(label, "12?7");
}

TEST(ActionLabel, AnOverlapIsItsPartsInBrackets) {
    const text::ActionPart parts[] = {{0, 0, 7}, {3, 7, 3}};
    std::string label;
    text::append_overlap_action(label, 2, [&](int index) { return parts[index]; });
    EXPECT_EQ(label, "(0F7;7B3)OVERLAP_F_B");
}

TEST(XmlEscape, AmpersandAnglesAndQuotesAreEscapedAndWhatXmlCannotHoldIsReplaced) {
    EXPECT_EQ(xml_escaped(R"(a<b & "c">'d')"), "a&lt;b &amp; &quot;c&quot;&gt;'d'");
    EXPECT_EQ(xml_escaped("1F1B pp=4 v=2"), "1F1B pp=4 v=2");
    // XML 1.0 holds no control character but tab and line ends, even escaped, and a document
    // is UTF-8: a file name with either would make the report unreadable.
    EXPECT_EQ(xml_escaped("ctl\x01x.csv"), "ctl\uFFFDx.csv");
    EXPECT_EQ(xml_escaped("bad\xffname \xc3(.csv"), "bad\uFFFDname \uFFFD(.csv");
    EXPECT_EQ(xml_escaped("a\tb\nc \u00e9 \u20ac \U0001F600"), "a\tb\nc \u00e9 \u20ac \U0001F600");
    EXPECT_EQ(xml_escaped("\xed\xa0\x80 \xc0\xaf"), "\uFFFD\uFFFD\uFFFD \uFFFD\uFFFD");
    EXPECT_EQ(xml_escaped("\xf5\x80\x80 \xff\xbf\xbf"), "\uFFFD\uFFFD\uFFFD \uFFFD\uFFFD\uFFFD");
    EXPECT_EQ(xml_escaped("\xef\xbf\xbf\xef\xbf\xbe \xef\xbf\xbd"),
              "\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD \uFFFD");
    EXPECT_EQ(xml_escaped(""), "");
}

}  // namespace
}  // namespace pipelens
