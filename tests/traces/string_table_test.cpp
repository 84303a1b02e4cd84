// StringTable: ids as SQLite assigns them index a vector, a hand-edited far id does not grow it,
// and a far id stays found after the vector grows past it.
#include <gtest/gtest.h>

#include "traces/string_table.hpp"

namespace pipelens::traces {
namespace {

TEST(StringTable, FindsEveryAddedIdAndNothingElse) {
    StringTable table;
    EXPECT_EQ(table.id_limit(), 0);
    EXPECT_EQ(table.find(0), std::nullopt);
    table.add(1, "0F0");
    table.add(2, "");
    table.add(5000, "far");  // beyond 2 * count + 1024: kept aside
    table.add(1'000'000'000'000, "hand-edited");
    for (int id = 3; id < 5000; ++id)  // the vector grows past 5000
        table.add(id, std::to_string(id));
    EXPECT_EQ(table.find(1), "0F0");
    EXPECT_EQ(table.find(2), "");
    EXPECT_EQ(table.find(4999), "4999");
    EXPECT_EQ(table.find(5000), "far");
    EXPECT_EQ(table.find(1'000'000'000'000), "hand-edited");
    EXPECT_EQ(table.find(0), std::nullopt);
    EXPECT_EQ(table.find(5001), std::nullopt);
    EXPECT_EQ(table.find(-1), std::nullopt);
    EXPECT_EQ(table.id_limit(), 1'000'000'000'001);
    // Views are C strings too.
    EXPECT_EQ(table.find(1)->data()[3], '\0');
    table.add(1, "1F0");  // a later text for the same id wins
    EXPECT_EQ(table.find(1), "1F0");
}

}  // namespace
}  // namespace pipelens::traces
