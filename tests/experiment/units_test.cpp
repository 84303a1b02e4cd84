// Quantities as users write them: exact conversions, the default unit of a bare number, and
// errors that quote the text and list the accepted units.
#include <gtest/gtest.h>

#include "engine/experiment/units.hpp"

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

// A limit is the whole unit at or below it, whatever binary error its decimal carries.
TEST(Units, LimitsRoundDownToTheWholeUnit) {
    EXPECT_EQ(parse_duration_limit_ns("32999.5ns"), 32'999);
    EXPECT_EQ(parse_duration_limit_ns("32.9999us"), 32'999);
    EXPECT_EQ(parse_duration_limit_ns("33us"), 33'000);
    EXPECT_EQ(parse_duration_limit_ns("0.29us"), 290);  // 289.99999999999997 in binary
    EXPECT_EQ(parse_duration_limit_ns("1.1ms"), 1'100'000);
    EXPECT_EQ(parse_byte_limit("4194303.9"), 4'194'303);
    EXPECT_EQ(parse_byte_limit("4MiB"), 4'194'304);
    EXPECT_EQ(parse_byte_limit("0.1KB"), 100);
    // Large limits stay what they say (a relative allowance raised 1.5TB by a byte).
    EXPECT_EQ(parse_byte_limit("1.5TB"), 1'500'000'000'000);
    EXPECT_EQ(parse_duration_limit_ns("2000s"), 2'000'000'000'000);
    EXPECT_EQ(parse_byte_limit("1099511627775.5"), 1'099'511'627'775);
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

// A bare 20 once passed a --max-bubble gate as 2,000 %: a ratio above the whole is a typo.
TEST(Units, RatiosAreAShareOrAPercentageAndNeverAboveTheWhole) {
    EXPECT_DOUBLE_EQ(parse_ratio("0.2"), 0.2);
    EXPECT_DOUBLE_EQ(parse_ratio("20%"), 0.2);
    EXPECT_DOUBLE_EQ(parse_ratio("1"), 1.0);
    EXPECT_DOUBLE_EQ(parse_ratio("100%"), 1.0);
    EXPECT_DOUBLE_EQ(parse_ratio("0"), 0.0);
    const auto message = [](std::string_view text) {
        try {
            parse_ratio(text);
        } catch (const UnitParseError& error) {
            return std::string(error.what());
        }
        return std::string("(accepted)");
    };
    EXPECT_EQ(message("20"), "20 is above 1; did you mean 20%?");
    EXPECT_EQ(message("1.5"), "1.5 is above 1; did you mean 1.5%?");
    EXPECT_EQ(message("150%"), "150% is above 100%");
    EXPECT_EQ(message("lots"), "'lots' is not a ratio; give 0.2 or 20%");
    EXPECT_EQ(message("-0.1"), "'-0.1' is not a ratio; give 0.2 or 20%");
    EXPECT_EQ(message("%"), "'%' is not a ratio; give 0.2 or 20%");
}

}  // namespace
}  // namespace pipelens
