// Fuzz target: an experiment TOML file (parse_experiment_toml, then validate_experiment).
// Invariants: a bad file is refused with ExperimentError naming the file, never another
// exception or a crash; an experiment that validates writes back (experiment_to_toml) to a text
// that reads as the same experiment, i.e. writing it again gives the same text.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/experiment/experiment_toml.hpp"
#include "tests/fuzz/fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    pipelens::Experiment experiment;
    try {
        experiment = pipelens::parse_experiment_toml(text, "fuzz.toml");
        pipelens::validate_experiment(experiment);
    } catch (const pipelens::ExperimentError& error) {
        PIPELENS_FUZZ_REQUIRE(std::string_view(error.what()).starts_with("fuzz.toml"),
                              "an experiment error that does not name the file");
        return 0;
    }
    const std::string written = pipelens::experiment_to_toml(experiment);
    pipelens::Experiment reread;
    try {
        reread = pipelens::parse_experiment_toml(written, "fuzz.toml");
    } catch (const pipelens::ExperimentError& error) {
        std::fprintf(stderr, "%s\n--- written:\n%s\n", error.what(), written.c_str());
        PIPELENS_FUZZ_REQUIRE(false, "the written experiment does not read back");
    }
    PIPELENS_FUZZ_REQUIRE(pipelens::experiment_to_toml(reread) == written,
                          "experiment -> TOML -> experiment changes the experiment");
    return 0;
}
