// Splits the call's arguments at top-level commas; a dtype followed by '[' is a tensor.
#include "engine/sharding/op_text.hpp"

#include <cctype>
#include <stdexcept>

#include <fmt/format.h>

#include "engine/sharding/op_strategies.hpp"
#include "engine/text/printable.hpp"
#include "engine/text/trim.hpp"

namespace pipelens::sharding {
namespace {

bool looks_like_tensor(std::string_view argument) {
    const std::size_t bracket = argument.find('[');
    return bracket != std::string_view::npos && bracket > 0 &&
           std::isalpha(static_cast<unsigned char>(argument.front()));
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
    const std::string_view body = text.substr(open + 1, text.size() - open - 2);
    std::vector<std::string_view> arguments;
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
            arguments.push_back(trim(body.substr(start, at - start)));
            start = at + 1;
        }
    }
    if (depth != 0)
        throw std::invalid_argument(fmt::format("op call '{}': unbalanced brackets", text));
    if (!trim(body.substr(start)).empty())
        arguments.push_back(trim(body.substr(start)));
    for (std::string_view argument : arguments) {
        if (looks_like_tensor(argument))
            schema.arguments.emplace_back(parse_tensor_spec(argument, mesh));
        else
            schema.arguments.emplace_back(OpValue{std::string(argument)});
    }
    schema.op = resolve_overload(std::string(trim(text.substr(0, open))), arguments.size());
    return schema;
}

}  // namespace pipelens::sharding
