// first_appearance_ids: equal texts share an id, ids count from 1 in order of first appearance,
// also past the table's first growth (many texts) and with texts that differ in one character.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "app/viewer/label_ids.hpp"

namespace pipelens::viewer {
namespace {

std::vector<std::uint32_t> ids_of(const std::vector<std::string>& texts) {
    return first_appearance_ids(
        texts.size(), [&](std::size_t index) -> std::string_view { return texts[index]; });
}

TEST(FirstAppearanceIds, EqualTextsShareTheIdOfTheirFirstAppearance) {
    EXPECT_EQ(ids_of({"0F0", "1F0", "0F0", "0SEND_F0", "1F0", "0F1"}),
              (std::vector<std::uint32_t>{1, 2, 1, 3, 2, 4}));
}

TEST(FirstAppearanceIds, NoTextsNoIdsAndTheEmptyTextIsAText) {
    EXPECT_TRUE(ids_of({}).empty());
    EXPECT_EQ(ids_of({"", "a", ""}), (std::vector<std::uint32_t>{1, 2, 1}));
}

TEST(FirstAppearanceIds, ThousandsOfTextsEachTwiceGetIdsInOrder) {
    std::vector<std::string> texts;
    for (int round = 0; round < 2; ++round)
        for (int microbatch = 0; microbatch < 5000; ++microbatch)
            texts.push_back(fmt::format("3F{}", microbatch));
    const std::vector<std::uint32_t> ids = ids_of(texts);
    ASSERT_EQ(ids.size(), 10000u);
    for (std::size_t index = 0; index < 5000; ++index) {
        EXPECT_EQ(ids[index], index + 1);
        EXPECT_EQ(ids[index + 5000], index + 1);
    }
}

}  // namespace
}  // namespace pipelens::viewer
