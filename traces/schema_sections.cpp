// Cuts traces/schema.sql at its `-- @since N` lines, so a writer can bring an older file up to
// the current version with the very statements that create a new one.
#include <charconv>
#include <string>

#include "traces/schema.hpp"

namespace pipelens::traces {

std::string schema_sql_since(int version) {
    constexpr std::string_view marker = "\n-- @since ";
    const std::string_view schema = schema_sql();
    std::string statements;
    std::size_t at = schema.find(marker);
    while (at != std::string_view::npos) {
        const std::size_t number_begin = at + marker.size();
        int since = 0;
        std::from_chars(schema.data() + number_begin, schema.data() + schema.size(), since);
        const std::size_t next = schema.find(marker, number_begin);
        if (since > version)
            statements += schema.substr(
                at, next == std::string_view::npos ? std::string_view::npos : next - at);
        at = next;
    }
    return statements;
}

}  // namespace pipelens::traces
