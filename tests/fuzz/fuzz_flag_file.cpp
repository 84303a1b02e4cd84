// Fuzz target: a flag file (parse_flag_file, `pipelens plan`'s [model], [cluster], [plan]).
// Invariants: a bad file is refused with ExperimentError naming the file, never another
// exception or a crash; every value accepted names an allowed key, as its flag ('_' -> '-').
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/experiment/experiment.hpp"
#include "engine/experiment/flag_file.hpp"
#include "tests/fuzz/fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    using pipelens::FlagKind;
    const pipelens::FlagFileKeys allowed{
        {"model", {{"layers", FlagKind::integer}, {"global_batch", FlagKind::integer}}},
        {"plan", {{"zero1", FlagKind::boolean}, {"tp", FlagKind::integer}}}};
    try {
        for (const pipelens::FlagValue& value :
             pipelens::parse_flag_file(text, "fuzz.toml", allowed))
            PIPELENS_FUZZ_REQUIRE(value.flag == "layers" || value.flag == "global-batch" ||
                                      value.flag == "zero1" || value.flag == "tp",
                                  "a value for a key that is not allowed");
    } catch (const pipelens::ExperimentError& error) {
        PIPELENS_FUZZ_REQUIRE(std::string_view(error.what()).starts_with("fuzz.toml"),
                              "a flag-file error that does not name the file");
    }
    return 0;
}
