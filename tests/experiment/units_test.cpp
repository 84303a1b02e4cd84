// Quantities as users write them: exact conversions, the default unit of a bare number, and
// errors that quote the text and list the accepted units.
#include <gtest/gtest.h>

#include "engine/experiment/units.hpp"
#include "engine/text/quantities.hpp"

namespace pipelens {
namespace {

TEST(Units, DurationsInEveryUnitAndBareMicroseconds) {
    EXPECT_EQ(parse_duration_ns("1.5ms"), 1'500'000);
    EXPECT_EQ(parse_duration_ns("20us"), 20'000);
    EXPECT_EQ(parse_duration_ns("300ns"), 300);
    EXPECT_EQ(parse_duration_ns("2s"), 2'000'000'000);
    EXPECT_EQ(parse_duration_ns("7"), 7'000);
    EXPECT_EQ(parse_duration_ns("0.25"), 250);
    EXPECT_EQ(parse_duration_ns(" 4 ms "), 4'000'000);
    EXPECT_EQ(parse_duration_ns("0"), 0);
}

TEST(Units, BandwidthInBytesPerNanosecond) {
    EXPECT_DOUBLE_EQ(parse_bandwidth_bytes_per_ns("25GB/s"), 25.0);
    EXPECT_DOUBLE_EQ(parse_bandwidth_bytes_per_ns("25"), 25.0);
    EXPECT_DOUBLE_EQ(parse_bandwidth_bytes_per_ns("400Gbit/s"), 50.0);
    EXPECT_DOUBLE_EQ(parse_bandwidth_bytes_per_ns("500MB/s"), 0.5);
    EXPECT_DOUBLE_EQ(parse_bandwidth_bytes_per_ns("1GiB/s"), 1.073741824);
}

TEST(Units, ByteCountsDecimalAndBinary) {
    EXPECT_EQ(parse_byte_count("16MiB"), 16 * 1024 * 1024);
    EXPECT_EQ(parse_byte_count("4GB"), 4'000'000'000);
    EXPECT_EQ(parse_byte_count("1.5KiB"), 1536);
    EXPECT_EQ(parse_byte_count("512"), 512);
}

TEST(Units, ErrorsQuoteTheTextAndListTheUnits) {
    try {
        parse_duration_ns("1.5xs");
        FAIL() << "no error";
    } catch (const UnitParseError& error) {
        EXPECT_STREQ(error.what(),
                     "'1.5xs' is not a duration: unknown unit 'xs' (units: ns, us, ms, s; a bare "
                     "number is microseconds)");
    }
    EXPECT_THROW(parse_duration_ns("-1ms"), UnitParseError);
    EXPECT_THROW(parse_duration_ns(""), UnitParseError);
    EXPECT_THROW(parse_duration_ns("ms"), UnitParseError);
    EXPECT_THROW(parse_duration_ns("inf"), UnitParseError);
    EXPECT_THROW(parse_bandwidth_bytes_per_ns("25GB"), UnitParseError);
    EXPECT_THROW(parse_byte_count("3 apples"), UnitParseError);
}

TEST(Units, ReadablePrinting) {
    EXPECT_EQ(format_duration(850), "850 ns");
    EXPECT_EQ(format_duration(1'500'000), "1.500 ms");
    EXPECT_EQ(format_duration(20'000), "20.000 us");
    EXPECT_EQ(format_duration(12'500'000'000), "12.500 s");
    EXPECT_EQ(format_bytes(512), "512 B");
    EXPECT_EQ(format_bytes(16 * 1024 * 1024), "16.0 MiB");
}

}  // namespace
}  // namespace pipelens
