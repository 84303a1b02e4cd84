// Filling and reading a StringTable (see string_table.hpp for the layout's reasons).
#include "traces/string_table.hpp"

#include <algorithm>
#include <stdexcept>

namespace pipelens::traces {

void StringTable::add(std::int64_t id, std::string_view text) {
    if (text.size() >= kAbsent)
        throw std::length_error("a trace string of 4 GiB or more");
    const Span span{characters_.size(), static_cast<std::uint32_t>(text.size())};
    characters_.append(text);
    characters_.push_back('\0');
    ++count_;
    id_limit_ = std::max(id_limit_, id + 1);
    if (id >= 0 && id < 2 * count_ + 1024) {
        if (static_cast<std::size_t>(id) >= dense_.size())
            dense_.resize(std::max(static_cast<std::size_t>(id) + 1, 2 * dense_.size()));
        dense_[static_cast<std::size_t>(id)] = span;
    } else {
        sparse_[id] = span;
    }
}

std::optional<std::string_view> StringTable::find(std::int64_t id) const {
    Span span;
    if (id >= 0 && static_cast<std::size_t>(id) < dense_.size())
        span = dense_[static_cast<std::size_t>(id)];
    if (span.length == kAbsent) {  // an id added before the vector reached it is in the map
        const auto found = sparse_.find(id);
        if (found == sparse_.end())
            return std::nullopt;
        span = found->second;
    }
    return std::string_view(characters_.data() + span.offset, span.length);
}

}  // namespace pipelens::traces
