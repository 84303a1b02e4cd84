// Fuzz target: Megatron-LM layout strings (parse_megatron_layout, `plan --layout`, a plan
// file's layout). Invariants: a bad text is refused with LayoutError "column C: why", C within
// the text or just past it, never another exception, a crash, or a hang or memory blow-up from
// nested repetitions; what is read has at least one stage of at least one layer each, and its
// written form (megatron_layout) reads back to the same stages.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/stage_plan/megatron_layout.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace {

// The column a refusal names: "column 12: ..." -> 12; 0 when there is none.
std::size_t refused_column(std::string_view message) {
    constexpr std::string_view kPrefix = "column ";
    if (!message.starts_with(kPrefix))
        return 0;
    std::size_t column = 0;
    std::size_t at = kPrefix.size();
    while (at < message.size() && message[at] >= '0' && message[at] <= '9' &&
           column < 1'000'000'000)
        column = column * 10 + static_cast<std::size_t>(message[at++] - '0');
    return at < message.size() && message[at] == ':' ? column : 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace pipelens::runtime;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    std::vector<int> layers;
    try {
        layers = parse_megatron_layout(text);
    } catch (const LayoutError& error) {
        const std::size_t column = refused_column(error.what());
        PIPELENS_FUZZ_REQUIRE(column >= 1 && column <= text.size() + 1,
                              "a refusal without a column inside the text");
        return 0;
    }
    PIPELENS_FUZZ_REQUIRE(!layers.empty(), "a layout read with no stage");
    for (int count : layers)
        PIPELENS_FUZZ_REQUIRE(count >= 1, "a stage read with no layer");
    PIPELENS_FUZZ_REQUIRE(parse_megatron_layout(megatron_layout(layers)) == layers,
                          "a layout's written form reads back to other stages");
    return 0;
}
