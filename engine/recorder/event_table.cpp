// Events' fields as JSON: writing converts each field by its C++ type; reading checks the JSON
// type of each field before converting, so a trace edited by hand or written by another tool
// fails with the field's name instead of a library message. What each event does to the state
// is in event_apply.cpp.
#include "engine/recorder/event_table.hpp"

#include <algorithm>
#include <limits>
#include <type_traits>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/text/shortened.hpp"

namespace pipelens::recorder {
namespace {

nlohmann::json field_json(bool value) {
    return value;
}
nlohmann::json field_json(int value) {
    return value;
}
nlohmann::json field_json(std::int64_t value) {
    return value;
}
nlohmann::json field_json(double value) {
    return value;
}
nlohmann::json field_json(const std::string& value) {
    return value;
}
nlohmann::json field_json(const std::vector<std::string>& value) {
    return value;
}
nlohmann::json field_json(const std::vector<double>& value) {
    return value;
}
nlohmann::json field_json(const std::vector<TensorMeta>& value) {
    return to_json(value);
}
nlohmann::json field_json(ScheduleKind value) {
    return schedule_kind_name(value);
}
nlohmann::json field_json(BufferDirection value) {
    return buffer_direction_name(value);
}

// A field that is not what its event needs: the caller adds the field's name.
struct WrongType {
    std::string expected;
};

// A field of the right type whose value no run can record (a tensor of negative size).
struct ImpossibleValue {
    std::string why;
};

void read_field(const nlohmann::json& json, bool& value) {
    if (!json.is_boolean())
        throw WrongType{"true or false"};
    value = json.get<bool>();
}

void read_field(const nlohmann::json& json, std::int64_t& value) {
    if (!json.is_number_integer() ||
        (json.is_number_unsigned() &&
         json.get<std::uint64_t>() >
             static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())))
        throw WrongType{"an integer"};
    value = json.get<std::int64_t>();
}

void read_field(const nlohmann::json& json, int& value) {
    std::int64_t wide = 0;
    read_field(json, wide);
    if (wide < std::numeric_limits<int>::min() || wide > std::numeric_limits<int>::max())
        throw WrongType{"a 32-bit integer"};
    value = static_cast<int>(wide);
}

void read_field(const nlohmann::json& json, double& value) {
    if (!json.is_number())
        throw WrongType{"a number"};
    value = json.get<double>();
}

void read_field(const nlohmann::json& json, std::string& value) {
    if (!json.is_string())
        throw WrongType{"a string"};
    value = json.get<std::string>();
}

void read_field(const nlohmann::json& json, std::vector<std::string>& value) {
    if (!json.is_array())
        throw WrongType{"a list of strings"};
    value.clear();
    for (const nlohmann::json& item : json) {
        if (!item.is_string())
            throw WrongType{"a list of strings"};
        value.push_back(item.get<std::string>());
    }
}

void read_field(const nlohmann::json& json, std::vector<double>& value) {
    if (!json.is_array())
        throw WrongType{"a list of numbers"};
    value.clear();
    for (const nlohmann::json& item : json) {
        if (!item.is_number())
            throw WrongType{"a list of numbers"};
        value.push_back(item.get<double>());
    }
}

void read_field(const nlohmann::json& json, std::vector<TensorMeta>& value) {
    try {
        value = tensor_metas_from_json(json);
    } catch (const std::exception& error) {
        throw WrongType{fmt::format("a list of tensor metadata ({})", error.what())};
    }
    for (std::size_t index = 0; index < value.size(); ++index)
        if (const auto problem = impossible_tensor(value[index]))
            throw ImpossibleValue{
                fmt::format("tensor {} is {}: {}", index, to_string(value[index]), *problem)};
}

void read_field(const nlohmann::json& json, ScheduleKind& value) {
    std::string name;
    read_field(json, name);
    try {
        value = parse_schedule_kind(name);
    } catch (const std::exception& error) {
        throw WrongType{fmt::format("a schedule kind ({})", error.what())};
    }
}

void read_field(const nlohmann::json& json, BufferDirection& value) {
    std::string name;
    read_field(json, name);
    try {
        value = parse_buffer_direction(name);
    } catch (const std::exception& error) {
        throw WrongType{fmt::format("a buffer direction ({})", error.what())};
    }
}

// Fields events gained after traces had been written without them: absent, they keep their
// default (0, or empty text), so older recordings still replay.
bool added_later(std::string_view name) {
    return name == "gradient_bytes" || name == "backward_peak_bytes" || name == "kept_bytes" ||
           name == "input_kept_bytes" || name == "defer_recv" || name == "rendezvous" ||
           name == "send_issue_ns" || name == "posted_receive_buffers" ||
           name.starts_with("zero_bubble_") || name == "max_activations" ||
           name == "rank_slowdown" || name.ends_with("_arithmetic_ns") || name == "dtype";
}

template <class Kind>
nlohmann::json arguments_of(const Kind& event) {
    nlohmann::json arguments = nlohmann::json::object();
    Kind::fields(event, [&](const char* name, const auto& value) {
        // A later field at its default is left out: the event reads as it always did.
        if constexpr (std::is_integral_v<std::decay_t<decltype(value)>>)
            if (added_later(name) && value == 0)
                return;
        if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::vector<double>> ||
                      std::is_same_v<std::decay_t<decltype(value)>, std::string>)
            if (added_later(name) && value.empty())
                return;
        arguments[name] = field_json(value);
    });
    return arguments;
}

// Times and sizes (every field named *_ns, *_bytes or bytes): a negative one is refused when it
// is given to a command, so no run records one.
bool is_time_or_size(std::string_view name) {
    return name.ends_with("_ns") || name.ends_with("_bytes") || name == "bytes";
}

template <class Kind>
Kind read_kind(const nlohmann::json& arguments) {
    if (!arguments.is_object())
        throw EventFormatError(fmt::format("malformed arguments: expected a JSON object, got {}",
                                           shortened(arguments.dump(), 120)));
    Kind event;
    std::vector<std::string_view> known;
    Kind::fields(event, [&](const char* name, auto& value) {
        known.emplace_back(name);
        const auto found = arguments.find(name);
        if (found == arguments.end()) {
            if (added_later(name))
                return;
            throw EventFormatError(fmt::format("malformed arguments: field '{}' is missing", name));
        }
        try {
            read_field(*found, value);
            using Value = std::decay_t<decltype(value)>;
            if constexpr (std::is_arithmetic_v<Value> && !std::is_same_v<Value, bool>)
                if (is_time_or_size(name) && value < 0)
                    throw ImpossibleValue{fmt::format(
                        "{} is negative; a time or size is zero or more", found->dump())};
        } catch (const WrongType& wrong) {
            throw EventFormatError(fmt::format("malformed arguments: field '{}' must be {}, got {}",
                                               name, wrong.expected,
                                               shortened(found->dump(), 120)));
        } catch (const ImpossibleValue& impossible) {
            throw EventFormatError(
                fmt::format("malformed arguments: field '{}': {}", name, impossible.why));
        }
    });
    // A replay calls the event with its fields; one it does not take is a call no engine made
    // (as a Python replay raises on an unexpected keyword), not a detail to pass over.
    for (const auto& [key, value] : arguments.items())
        if (std::find(known.begin(), known.end(), key) == known.end())
            throw EventFormatError(
                fmt::format("malformed arguments: field '{}' is not one of {}'s fields ({})",
                            shortened(key, 80), Kind::kName, fmt::join(known, ", ")));
    return event;
}

template <std::size_t... Index>
AnyEvent parse_by_name(std::string_view name, const nlohmann::json& arguments,
                       std::index_sequence<Index...>) {
    AnyEvent event;
    const bool found =
        ((std::variant_alternative_t<Index, AnyEvent>::kName == name &&
          (event = read_kind<std::variant_alternative_t<Index, AnyEvent>>(arguments), true)) ||
         ...);
    if (!found)
        throw EventFormatError("no recorded call has this name");
    return event;
}

template <std::size_t... Index>
std::vector<std::string_view> names(std::index_sequence<Index...>) {
    return {std::variant_alternative_t<Index, AnyEvent>::kName...};
}

}  // namespace

std::string_view event_name(const AnyEvent& event) {
    return std::visit([](const auto& kind) { return kind.kName; }, event);
}

std::string_view made_by(const AnyEvent& event) {
    return std::visit(
        [](const auto& kind) -> std::string_view {
            if constexpr (requires { std::decay_t<decltype(kind)>::kMadeBy; })
                return std::decay_t<decltype(kind)>::kMadeBy;
            else
                return {};
        },
        event);
}

std::vector<std::string_view> event_names() {
    return names(std::make_index_sequence<std::variant_size_v<AnyEvent>>());
}

nlohmann::json event_arguments(const AnyEvent& event) {
    return std::visit([](const auto& kind) { return arguments_of(kind); }, event);
}

AnyEvent parse_event(std::string_view name, const nlohmann::json& arguments) {
    return parse_by_name(name, arguments,
                         std::make_index_sequence<std::variant_size_v<AnyEvent>>());
}

AnyEvent parse_event(const Event& event) {
    return parse_event(event.name, event.arguments);
}

std::optional<int> event_stage(const Event& event) {
    std::optional<int> stage;
    try {
        std::visit(
            [&](const auto& kind) {
                std::decay_t<decltype(kind)>::fields(
                    kind, [&](const char* name, const auto& value) {
                        if constexpr (std::is_same_v<std::decay_t<decltype(value)>, int>)
                            if (std::string_view(name) == "stage")
                                stage = value;
                    });
            },
            parse_event(event));
    } catch (const EventFormatError&) {
        return std::nullopt;  // an event this engine cannot read names no stage
    }
    return stage;
}

}  // namespace pipelens::recorder
