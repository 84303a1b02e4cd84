// The guard before toml++ (toml_document.hpp): a scan of the text for chains of dotted key
// parts, skipping strings and comments, so a value such as "1.5ms" or a dotted string never
// counts; then the parse, its errors given the file's name and position.
#include "engine/experiment/toml_document.hpp"

#include <fmt/format.h>

#include "engine/experiment/experiment.hpp"

namespace pipelens {
namespace {

struct Cursor {
    std::string_view text;
    std::size_t at = 0;
    int line = 1;
    int column = 1;

    bool done() const { return at >= text.size(); }
    bool starts(std::string_view prefix) const { return text.substr(at).starts_with(prefix); }
    void step() {
        if (text[at] == '\n') {
            ++line;
            column = 0;
        }
        ++at;
        ++column;
    }
    void skip(std::size_t count) {
        for (std::size_t taken = 0; taken < count && !done(); ++taken)
            step();
    }
};

// Past a string that starts at the cursor: basic or literal, one line or multi-line.
void skip_string(Cursor& cursor) {
    const char quote = cursor.text[cursor.at];
    const std::string_view triple = quote == '"' ? "\"\"\"" : "'''";
    const bool multi_line = cursor.starts(triple);
    cursor.skip(multi_line ? 3 : 1);
    while (!cursor.done()) {
        if (quote == '"' && cursor.text[cursor.at] == '\\') {
            cursor.skip(2);
            continue;
        }
        if (multi_line ? cursor.starts(triple) : cursor.text[cursor.at] == quote) {
            cursor.skip(multi_line ? 3 : 1);
            return;
        }
        if (!multi_line && cursor.text[cursor.at] == '\n')
            return;  // an unterminated string: the parser says so
        cursor.step();
    }
}

bool is_bare_key_character(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

// Throws at the first chain of more than kDeepestTomlKey dot-joined parts.
void refuse_deep_keys(std::string_view text, const std::string& source) {
    Cursor cursor{text};
    int parts = 0;           // in the chain being read
    bool after_dot = false;  // the chain's last part was followed by a dot
    int chain_line = 1;
    int chain_column = 1;
    while (!cursor.done()) {
        const char c = cursor.text[cursor.at];
        if (c == ' ' || c == '\t') {
            cursor.step();
            continue;
        }
        const bool quoted = c == '"' || c == '\'';
        if (c == '.' && parts > 0 && !after_dot) {
            after_dot = true;
            cursor.step();
            continue;
        }
        if (!quoted && !is_bare_key_character(c)) {  // '=', brackets, a newline, a comment
            parts = 0;
            after_dot = false;
            if (c == '#')
                while (!cursor.done() && cursor.text[cursor.at] != '\n')
                    cursor.step();
            else
                cursor.step();
            continue;
        }
        if (!after_dot) {
            parts = 0;
            chain_line = cursor.line;
            chain_column = cursor.column;
        }
        after_dot = false;
        if (quoted)
            skip_string(cursor);
        else
            while (!cursor.done() && is_bare_key_character(cursor.text[cursor.at]))
                cursor.step();
        if (++parts > kDeepestTomlKey)
            throw ExperimentError(fmt::format(
                "{}:{}:{}: a key of more than {} dotted parts; pipelens's keys have at most 3",
                source, chain_line, chain_column, kDeepestTomlKey));
    }
}

}  // namespace

std::string toml_position(const toml::source_region& region) {
    return fmt::format("{}:{}", region.begin.line, region.begin.column);
}

toml::table parse_toml_document(std::string_view text, const std::string& source) {
    refuse_deep_keys(text, source);
    try {
        return toml::parse(text, source);
    } catch (const toml::parse_error& error) {
        throw ExperimentError(
            fmt::format("{}:{}: {}", source, toml_position(error.source()), error.description()));
    }
}

}  // namespace pipelens
