// Field-by-field comparison and its upstream-style report.
#include "engine/recorder/state_equality.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace pipelens::recorder {

std::optional<StateDifference> compare_states(const std::vector<StateField>& left,
                                              const std::vector<StateField>& right) {
    std::map<std::string, const std::string*> right_values;
    for (const StateField& field : right)
        right_values[field.name] = &field.value;
    std::set<std::string> left_only;
    std::set<std::string> right_only;
    for (const StateField& field : left)
        if (!right_values.contains(field.name))
            left_only.insert(field.name);
    std::set<std::string> left_names;
    for (const StateField& field : left)
        left_names.insert(field.name);
    for (const StateField& field : right)
        if (!left_names.contains(field.name))
            right_only.insert(field.name);
    const auto list = [](const std::set<std::string>& names) {
        std::vector<std::string> quoted;
        for (const std::string& name : names)
            quoted.push_back("'" + name + "'");
        return fmt::format("[{}]", fmt::join(quoted, ", "));
    };

    // Named in the order of their names, as upstream sorts its keys. Upstream stops at a field
    // set mismatch; the values of the fields both sides have follow it here, because the field
    // that explains the extra ones (a schedule of another pp) is usually among them.
    std::vector<const StateField*> by_name;
    for (const StateField& field : left)
        if (right_values.contains(field.name))
            by_name.push_back(&field);
    std::stable_sort(by_name.begin(), by_name.end(),
                     [](const StateField* a, const StateField* b) { return a->name < b->name; });
    std::vector<FieldMismatch> differing_values;
    for (const StateField* field : by_name) {
        const std::string& other = *right_values.at(field->name);
        if (field->value != other)
            differing_values.push_back(
                {field->name + ": values don't match.", field->value, other, field->name});
    }
    if (!left_only.empty() || !right_only.empty()) {
        StateDifference difference{
            "field set mismatch:",
            {{"found unique fields:", list(left_only), list(right_only), ""}},
            {left_only.begin(), left_only.end()},
            {right_only.begin(), right_only.end()}};
        difference.mismatches.insert(difference.mismatches.end(), differing_values.begin(),
                                     differing_values.end());
        return difference;
    }
    if (differing_values.empty())
        return std::nullopt;
    return StateDifference{"field values don't match:", std::move(differing_values), {}, {}};
}

std::string format_state_difference(const StateDifference& difference) {
    std::string text = "state not equal: " + difference.kind + "\n";  // a blank line, as upstream
    for (const FieldMismatch& mismatch : difference.mismatches)
        text += fmt::format("\n==> {}\n  >  Left: {}\n  > Right: {}", mismatch.what, mismatch.left,
                            mismatch.right);
    return text;
}

std::string fields_to_json(const std::vector<StateField>& fields) {
    nlohmann::json pairs = nlohmann::json::array();
    for (const StateField& field : fields)
        pairs.push_back({field.name, field.value});
    return pairs.dump();
}

std::vector<StateField> fields_from_json(const std::string& text) {
    std::vector<StateField> fields;
    try {
        const nlohmann::json pairs = nlohmann::json::parse(text);
        if (!pairs.is_array())
            throw std::invalid_argument(fmt::format(
                "the state snapshot is not a list of [field, value] pairs: it is a JSON {}",
                pairs.type_name()));
        for (const nlohmann::json& pair : pairs)
            fields.push_back({pair.at(0).get<std::string>(), pair.at(1).get<std::string>()});
    } catch (const nlohmann::json::exception& error) {
        throw std::invalid_argument(fmt::format(
            "the state snapshot is not a list of [field, value] pairs: {}", error.what()));
    }
    return fields;
}

}  // namespace pipelens::recorder
