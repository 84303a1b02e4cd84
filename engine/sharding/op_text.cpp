// Splits the call's arguments at top-level commas; a dtype followed by '[' is a tensor, NAME=VALUE
// a keyword argument (kept apart, as upstream's kwargs_schema, and checked against the op's
// keyword-only ones). Values
// are kept as upstream's OpSchema prints them, Python's str of the argument: a list "[2, 8]"
// however it was typed, an argument the op's ATen schema makes a bool "True" or "False".
#include "engine/sharding/op_text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/sharding/op_strategies.hpp"
#include "engine/tensor/dtype_names.hpp"
#include "engine/text/printable.hpp"
#include "engine/text/shortened.hpp"
#include "engine/text/trim.hpp"

namespace pipelens::sharding {
namespace {

bool looks_like_tensor(std::string_view argument) {
    const std::size_t bracket = argument.find('[');
    return bracket != std::string_view::npos && bracket > 0 &&
           std::isalpha(static_cast<unsigned char>(argument.front()));
}

// `body` cut at the commas outside brackets, each piece trimmed; an empty last piece dropped.
std::vector<std::string_view> split_top_level(std::string_view body, std::string_view text) {
    std::vector<std::string_view> pieces;
    int depth = 0;
    std::size_t start = 0;
    for (std::size_t at = 0; at < body.size(); ++at) {
        const char c = body[at];
        if (c == '(' || c == '[')
            ++depth;
        else if (c == ')' || c == ']')
            --depth;
        if (depth < 0)
            throw std::invalid_argument(fmt::format("op call '{}': unbalanced brackets", text));
        if (c == ',' && depth == 0) {
            pieces.push_back(trim(body.substr(start, at - start)));
            start = at + 1;
        }
    }
    if (depth != 0)
        throw std::invalid_argument(fmt::format("op call '{}': unbalanced brackets", text));
    if (!trim(body.substr(start)).empty())
        pieces.push_back(trim(body.substr(start)));
    return pieces;
}

// Python's str of a list: "[2,8]" -> "[2, 8]", nested lists alike (a few levels: the text is
// typed, and each level is a call); anything else as typed.
std::string python_list(std::string_view value, std::string_view text, int depth = 0) {
    if (value.size() < 2 || value.front() != '[' || value.back() != ']')
        return std::string(value);
    constexpr int kDeepestList = 8;
    if (depth == kDeepestList)
        throw std::invalid_argument(
            fmt::format("op call '{}': lists nested more than {} deep", text, kDeepestList));
    std::vector<std::string> items;
    for (std::string_view item : split_top_level(value.substr(1, value.size() - 2), text))
        items.push_back(python_list(item, text, depth + 1));
    return fmt::format("[{}]", fmt::join(items, ", "));
}

// Positions (tensors counted) of the arguments the op's ATen schema types as bool.
std::vector<std::size_t> bool_positions(std::string_view op) {
    if (op == "aten.sum.dim_IntList" || op == "aten.mean.dim")
        return {2};  // keepdim
    if (op == "aten._scaled_dot_product_flash_attention.default")
        return {4, 5};  // is_causal, return_debug_mask
    return {};
}

std::string python_bool(std::string_view value, std::size_t position, const OpSchema& schema) {
    if (value == "True" || value == "true" || value == "1")
        return "True";
    if (value == "False" || value == "false" || value == "0")
        return "False";
    throw std::invalid_argument(fmt::format("{}: argument {} is a bool (True or False), not '{}'",
                                            schema.op, position, shown_text(value, 40)));
}

// The values as upstream prints them (see the top of this file).
void normalise_values(OpSchema& schema, std::string_view text) {
    const std::vector<std::size_t> bools = bool_positions(schema.op);
    for (std::size_t position = 0; position < schema.arguments.size(); ++position) {
        auto* value = std::get_if<OpValue>(&schema.arguments[position]);
        if (value == nullptr)
            continue;
        if (std::find(bools.begin(), bools.end(), position) != bools.end())
            value->text = python_bool(value->text, position, schema);
        else
            value->text = python_list(value->text, text);
    }
}

// `alpha=2` -> {"alpha", "2"}; nothing for a positional argument (`==` is no keyword).
std::optional<OpKeyword> keyword_of(std::string_view argument) {
    const std::size_t equals = argument.find('=');
    if (equals == std::string_view::npos || equals == 0 ||
        (equals + 1 < argument.size() && argument[equals + 1] == '='))
        return std::nullopt;
    const std::string_view name = trim(argument.substr(0, equals));
    const bool identifier =
        !name.empty() && !std::isdigit(static_cast<unsigned char>(name.front())) &&
        std::all_of(name.begin(), name.end(),
                    [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
    if (!identifier)
        return std::nullopt;
    return OpKeyword{std::string(name), std::string(trim(argument.substr(equals + 1)))};
}

bool is_number(std::string_view text) {
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    return !text.empty() && error == std::errc() && end == text.data() + text.size();
}

std::string_view unquoted(std::string_view text) {
    if (text.size() >= 2 && (text.front() == '"' || text.front() == '\'') &&
        text.back() == text.front())
        return text.substr(1, text.size() - 2);
    return text;
}

// "torch.float" -> "torch.float32": Python's aliases of a dtype, as torch_dtype_name names it.
std::string canonical_torch_dtype(std::string_view text) {
    static constexpr std::pair<std::string_view, std::string_view> kAliases[] = {
        {"torch.float", "torch.float32"},    {"torch.double", "torch.float64"},
        {"torch.half", "torch.float16"},     {"torch.long", "torch.int64"},
        {"torch.int", "torch.int32"},        {"torch.short", "torch.int16"},
        {"torch.cfloat", "torch.complex64"}, {"torch.cdouble", "torch.complex128"}};
    for (const auto& [alias, name] : kAliases)
        if (text == alias)
            return std::string(name);
    return std::string(text);
}

// What a keyword's value must be, when it is not that. A value that would change what the op
// computes in a way the strategies do not model (another output dtype) is refused, not ignored.
std::optional<std::string> bad_keyword_value(const OpSchema& schema, const OpKeyword& keyword) {
    const std::string_view value = keyword.value;
    if (keyword.name == "alpha" || keyword.name == "beta")
        return is_number(value) ? std::nullopt : std::optional<std::string>("a number");
    if (keyword.name == "scale")
        return value == "None" || is_number(value) ? std::nullopt
                                                   : std::optional<std::string>("a number or None");
    if (keyword.name == "approximate")
        return unquoted(value) == "none" || unquoted(value) == "tanh"
                   ? std::nullopt
                   : std::optional<std::string>("'none' or 'tanh'");
    if (keyword.name == "dtype") {
        const std::vector<DTensorSpec> tensors = schema.tensor_arguments();
        if (value == "None" || tensors.empty() ||
            canonical_torch_dtype(value) == torch_dtype_name(tensors.front().tensor.dtype))
            return std::nullopt;
        return fmt::format(
            "None or the input's own dtype, {}: another would change the output's dtype, which "
            "pipelens does not model (cast the input first)",
            torch_dtype_name(tensors.front().tensor.dtype));
    }
    return std::nullopt;
}

// Keywords the op's ATen schema takes after its `*`, each once: torch refuses any other.
void check_keywords(const OpSchema& schema) {
    if (!op_arity(schema.op))
        return;  // an op without a strategy is refused as such
    const std::vector<std::string> allowed = keyword_only_arguments(schema.op);
    for (std::size_t index = 0; index < schema.keywords.size(); ++index) {
        const std::string& name = schema.keywords[index].name;
        if (std::find(allowed.begin(), allowed.end(), name) == allowed.end())
            throw std::invalid_argument(fmt::format(
                "{}: '{}' is not one of its keyword-only arguments ({}); pipelens takes the "
                "others by position",
                schema.op, shown_text(name, 40),
                allowed.empty() ? std::string("it has none")
                                : fmt::format("{}", fmt::join(allowed, ", "))));
        if (const auto must_be = bad_keyword_value(schema, schema.keywords[index]))
            throw std::invalid_argument(fmt::format("{}: {}={}: {} must be {}", schema.op, name,
                                                    shown_text(schema.keywords[index].value, 40),
                                                    name, *must_be));
        for (std::size_t earlier = 0; earlier < index; ++earlier)
            if (schema.keywords[earlier].name == name)
                throw std::invalid_argument(
                    fmt::format("{}: keyword argument '{}' is given twice", schema.op, name));
    }
}

}  // namespace

OpSchema parse_op_call(std::string_view text, const DeviceMesh& mesh) {
    if (const std::size_t bad = first_unprintable(text); bad != std::string_view::npos)
        throw std::invalid_argument(
            fmt::format("op call: character {} (byte 0x{:02x}) is not printable ASCII", bad + 1,
                        static_cast<unsigned char>(text[bad])));
    text = trim(text);
    const std::size_t open = text.find('(');
    if (open == std::string_view::npos || text.back() != ')')
        throw std::invalid_argument(
            fmt::format("op call '{}': expected OP(ARG, ...), e.g. 'aten.mm(f32[1024,512](S(1)), "
                        "f32[512,256](S(0)))'",
                        text));
    OpSchema schema;
    const std::vector<std::string_view> arguments =
        split_top_level(text.substr(open + 1, text.size() - open - 2), text);
    for (std::string_view argument : arguments) {
        if (std::optional<OpKeyword> keyword = keyword_of(argument)) {
            schema.keywords.push_back(std::move(*keyword));
            continue;
        }
        if (!schema.keywords.empty())
            throw std::invalid_argument(
                fmt::format("op call '{}': positional argument '{}' follows keyword argument '{}'",
                            text, shown_text(argument, 40), schema.keywords.back().name));
        if (looks_like_tensor(argument))
            schema.arguments.emplace_back(parse_tensor_spec(argument, mesh));
        else
            schema.arguments.emplace_back(OpValue{std::string(argument)});
    }
    schema.op = resolve_overload(std::string(trim(text.substr(0, open))), schema.arguments.size());
    check_keywords(schema);
    normalise_values(schema, text);
    return schema;
}

}  // namespace pipelens::sharding
