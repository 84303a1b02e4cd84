// Label ids for records that carry their text: equal texts share an id, ids count 1.. in the
// order each text first appears (as a trace writer interns them). A flat table of positions,
// not a map of strings: a re-simulated timeline interns about 100,000 labels each time, and a
// node-based map spent most of the model's build on allocating, hashing and freeing them.
//
// Invariant: ids()[i] is the id of texts i; an id first seen at i is larger than every id
// before i.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace pipelens::viewer {

// The id of each of `count` texts, text(i) giving the i-th.
template <typename Text>
std::vector<std::uint32_t> first_appearance_ids(std::size_t count, Text text) {
    std::vector<std::uint32_t> ids(count);
    // Open addressing, at most half full: each slot holds 1 + the position of a text's first
    // appearance, 0 when free.
    const std::size_t capacity = std::bit_ceil(std::max<std::size_t>(2 * count, 16));
    std::vector<std::uint32_t> slots(capacity, 0);
    const std::hash<std::string_view> hash;
    std::uint32_t next = 1;
    for (std::size_t index = 0; index < count; ++index) {
        const std::string_view wanted = text(index);
        std::size_t slot = hash(wanted) & (capacity - 1);
        while (slots[slot] != 0 && text(slots[slot] - 1) != wanted)
            slot = (slot + 1) & (capacity - 1);
        if (slots[slot] == 0) {
            slots[slot] = static_cast<std::uint32_t>(index + 1);
            ids[index] = next++;
        } else {
            ids[index] = ids[slots[slot] - 1];
        }
    }
    return ids;
}

}  // namespace pipelens::viewer
