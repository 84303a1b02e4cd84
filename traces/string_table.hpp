// StringTable: a trace's interned text (`strings`) by id, as one query saw it.
//
// Invariants: ids are never reused or changed in a file, so a table is right for every id it
// holds and an id it lacks was committed after it was read (or the file is corrupt). SQLite
// assigns ids densely (max(id) + 1, nothing is deleted), so they index a vector; an id far
// beyond the number of texts, which only a hand-edited file has, goes to a map instead of
// growing the vector without bound. The texts share one buffer, each followed by a NUL, so a
// million labels cost two allocations, not a million, and every view is also a C string.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace pipelens::traces {

class StringTable {
  public:
    // Adds the text of `id`; a second text for the same id replaces the first.
    void add(std::int64_t id, std::string_view text);

    // The text of `id` (its data() is NUL-terminated), or nothing when this table lacks it.
    std::optional<std::string_view> find(std::int64_t id) const;

    // One more than the largest id held (0 when empty): a bound for tables indexed by id.
    std::int64_t id_limit() const { return id_limit_; }

  private:
    struct Span {
        std::uint64_t offset = 0;
        std::uint32_t length = kAbsent;
    };
    static constexpr std::uint32_t kAbsent = 0xffffffff;

    std::string characters_;
    std::vector<Span> dense_;                        // by id
    std::unordered_map<std::int64_t, Span> sparse_;  // ids far beyond the count
    std::int64_t count_ = 0;
    std::int64_t id_limit_ = 0;
};

}  // namespace pipelens::traces
