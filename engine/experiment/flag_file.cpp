// Flag files (flag_file.hpp): TOML tables of command-line flags' values, each key read as the
// TOML type its kind takes and handed on as the text the flag would have been given.
#include "engine/experiment/flag_file.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "engine/experiment/experiment.hpp"
#include "engine/experiment/toml_document.hpp"
#include "engine/text/text_file.hpp"

namespace pipelens {
namespace {

// The value as the text its flag would be given, once its TOML type is the key's kind.
std::string flag_text(const toml::node& node, FlagKind kind, const std::string& where) {
    const auto text = node.value_exact<std::string>();
    const auto integer = node.value_exact<std::int64_t>();
    const auto number = node.value_exact<double>();
    const auto flag = node.value_exact<bool>();
    switch (kind) {
        case FlagKind::integer:
            if (integer)
                return fmt::format("{}", *integer);
            throw ExperimentError(fmt::format("{}: expected an integer", where));
        case FlagKind::number:
            if (integer)
                return fmt::format("{}", *integer);
            if (number)
                return fmt::format("{}", *number);
            throw ExperimentError(fmt::format("{}: expected a number", where));
        case FlagKind::quantity:
            if (text)
                return *text;
            if (integer)
                return fmt::format("{}", *integer);
            if (number)
                return fmt::format("{}", *number);
            throw ExperimentError(
                fmt::format("{}: expected a number or a string with its unit", where));
        case FlagKind::text:
            if (text)
                return *text;
            throw ExperimentError(fmt::format("{}: expected a string", where));
        case FlagKind::boolean:
            if (flag)
                return *flag ? "true" : "false";
            throw ExperimentError(fmt::format("{}: expected true or false", where));
    }
    throw ExperimentError(fmt::format("{}: unknown kind of value", where));
}

}  // namespace

std::vector<FlagValue> read_flag_file(const std::filesystem::path& path,
                                      const FlagFileKeys& allowed) {
    std::string text;
    try {
        text = read_text_file(path);
    } catch (const TextFileError& error) {
        if (error.problem() == TextFileError::Problem::cannot_open)
            throw ExperimentError(fmt::format("{}: cannot open", path.string()));
        throw;
    }
    return parse_flag_file(text, path.string(), allowed);
}

std::vector<FlagValue> parse_flag_file(std::string_view text, const std::string& source,
                                       const FlagFileKeys& allowed) {
    const toml::table document = parse_toml_document(text, source);
    std::vector<FlagValue> values;
    for (const auto& [table_key, node] : document) {
        const std::string table(table_key.str());
        const auto keys = allowed.find(table);
        if (keys == allowed.end() || !node.is_table()) {
            std::vector<std::string> names;
            for (const auto& entry : allowed)
                names.push_back("[" + entry.first + "]");
            throw ExperimentError(fmt::format("{}:{}: {}: unknown table (use {})", source,
                                              toml_position(table_key.source()), table,
                                              fmt::join(names, ", ")));
        }
        for (const auto& [key, value] : *node.as_table()) {
            const std::string name(key.str());
            const auto kind = keys->second.find(name);
            if (kind == keys->second.end())
                throw ExperimentError(fmt::format("{}:{}: {}.{}: unknown key", source,
                                                  toml_position(key.source()), table, name));
            std::string flag = name;
            std::replace(flag.begin(), flag.end(), '_', '-');
            const std::string where =
                fmt::format("{}:{}: {}.{}", source, toml_position(value.source()), table, name);
            values.push_back({flag, flag_text(value, kind->second, where), where});
        }
    }
    return values;
}

}  // namespace pipelens
