// Comparing recorded configurations setting by setting (config_difference.hpp).
#include "engine/experiment/config_difference.hpp"

#include <sstream>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "engine/experiment/toml_document.hpp"

namespace pipelens {
namespace {

using Settings = std::vector<std::pair<std::string, std::string>>;  // (setting, value) in order

// Every value of `table` (arrays are values), named by its table and key.
void flatten(const toml::table& table, const std::string& prefix, Settings& settings) {
    for (const auto& [key, node] : table) {
        const std::string name(key.str());
        if (const toml::table* inner = node.as_table()) {
            flatten(*inner, prefix.empty() ? name : prefix + "." + name, settings);
            continue;
        }
        std::ostringstream value;
        node.visit([&value](const auto& leaf) { value << leaf; });
        settings.emplace_back(prefix.empty() ? name : "[" + prefix + "] " + name, value.str());
    }
}

std::optional<Settings> settings_of(std::string_view config) {
    try {
        Settings settings;
        flatten(parse_toml_document(config, "configuration"), "", settings);
        return settings;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

const std::string* value_of(const Settings& settings, const std::string& setting) {
    for (const auto& [name, value] : settings)
        if (name == setting)
            return &value;
    return nullptr;
}

std::optional<std::string> optional_of(const std::string* value) {
    return value != nullptr ? std::optional<std::string>(*value) : std::nullopt;
}

}  // namespace

std::optional<ConfigDifference> config_difference(std::string_view config, std::string_view other) {
    const std::optional<Settings> settings = settings_of(config);
    const std::optional<Settings> other_settings = settings_of(other);
    if (!settings || !other_settings) {
        if (config == other)
            return std::nullopt;
        return ConfigDifference{"", std::nullopt, std::nullopt};
    }
    for (const auto& [setting, value] : *settings)
        if (const std::string* theirs = value_of(*other_settings, setting);
            theirs == nullptr || *theirs != value)
            return ConfigDifference{setting, value, optional_of(theirs)};
    for (const auto& [setting, value] : *other_settings)
        if (value_of(*settings, setting) == nullptr)
            return ConfigDifference{setting, std::nullopt, value};
    return std::nullopt;
}

std::string describe_difference(const ConfigDifference& difference, std::string_view other_name) {
    if (difference.setting.empty())
        return fmt::format("its recorded configuration is not {}'s", other_name);
    if (!difference.value)
        return fmt::format("{} is not set where {} has {}", difference.setting, other_name,
                           *difference.other_value);
    if (!difference.other_value)
        return fmt::format("{} is {} where {} does not set it", difference.setting,
                           *difference.value, other_name);
    return fmt::format("{} is {} where {} has {}", difference.setting, *difference.value,
                       other_name, *difference.other_value);
}

}  // namespace pipelens
