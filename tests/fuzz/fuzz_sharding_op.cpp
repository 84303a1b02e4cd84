// Fuzz target: what `pipelens shard` parses. The first line is the mesh ('dp=2,tp=4'); the rest
// is an op call ('aten.mm(f32[8,4](S(0)), f32[4,2](R))'), or 'show ' and a tensor
// ('f32[8,8](S(0)S(1))'), or 'block ' and a block name, as the command's three modes take them.
// Invariants: malformed text is refused with std::invalid_argument (ShardingError is one), as
// the command turns those into exit 2 or 1; anything else escaping, or a crash, is a defect.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/sharding/op_text.hpp"
#include "engine/sharding/sharding_blocks.hpp"
#include "engine/sharding/sharding_propagation.hpp"
#include "engine/sharding/sharding_visualize.hpp"

namespace {

namespace sharding = pipelens::sharding;

// What the command prints, as text and as --json (whose writer refuses invalid UTF-8).
void print_decision(const sharding::ShardingDecision& decision, const sharding::DeviceMesh& mesh) {
    (void)sharding::format_decision(decision);
    const nlohmann::json json = {
        {"mesh", sharding::to_string(mesh)},
        {"op", sharding::to_string(decision.schema)},
        {"strategies", nlohmann::json::parse(sharding::strategies_json(decision))},
        {"chosen_strategy", sharding::to_string(decision.chosen_spec())},
        {"redistributions", nlohmann::json::parse(sharding::redistributions_json(decision))}};
    (void)json.dump();
}

void run(std::string_view mesh_text, std::string_view rest) {
    const sharding::DeviceMesh mesh = sharding::parse_device_mesh(mesh_text, "cuda", 8);
    if (rest.starts_with("show ")) {
        (void)sharding::visualize_sharding(sharding::parse_tensor_spec(rest.substr(5), mesh));
    } else if (rest.starts_with("block ")) {
        for (const auto& decision : sharding::propagate_block(std::string(rest.substr(6)), mesh))
            print_decision(decision, mesh);
    } else {
        print_decision(sharding::propagate(sharding::parse_op_call(rest, mesh)), mesh);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const std::size_t newline = text.find('\n');
    if (newline == std::string_view::npos)
        return 0;
    try {
        run(text.substr(0, newline), text.substr(newline + 1));
    } catch (const std::invalid_argument&) {
    }
    return 0;
}
