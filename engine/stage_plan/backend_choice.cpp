// `--backend` texts -> one backend name per stage, with errors that quote the text.
#include "engine/stage_plan/backend_choice.hpp"

#include <algorithm>
#include <charconv>
#include <optional>

#include <fmt/format.h>

namespace pipelens::runtime {
namespace {

constexpr std::string_view kNames[] = {"eager", "checked", "compile-error", "runtime-error",
                                       "accuracy-error"};

}  // namespace

std::span<const std::string_view> stage_backend_names() {
    return kNames;
}

bool is_stage_backend(std::string_view name) {
    return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

std::vector<std::string> choose_stage_backends(const std::vector<std::string>& texts,
                                               int stage_count) {
    std::string for_all = "eager";
    std::vector<std::optional<std::string>> per_stage(stage_count);
    for (const std::string& text : texts) {
        const std::size_t equals = text.find('=');
        const std::string name = equals == std::string::npos ? text : text.substr(equals + 1);
        if (!is_stage_backend(name))
            throw BackendChoiceError(fmt::format("--backend {}: unknown backend '{}' (use {})",
                                                 text, name, fmt::join(kNames, ", ")));
        if (equals == std::string::npos) {
            for_all = name;
            continue;
        }
        const std::string_view target(text.data(), equals);
        int stage = -1;
        const char* digits = target.data() + 5;
        const bool numbered = target.starts_with("stage") && target.size() > 5 &&
                              std::from_chars(digits, target.data() + target.size(), stage).ptr ==
                                  target.data() + target.size();
        if (!numbered)
            throw BackendChoiceError(fmt::format(
                "--backend {}: expected NAME or stageN=NAME (e.g. stage2=accuracy-error)", text));
        if (stage < 0 || stage >= stage_count)
            throw BackendChoiceError(fmt::format(
                "--backend {}: there is no stage {} (stages 0..{})", text, stage, stage_count - 1));
        per_stage[stage] = name;
    }
    std::vector<std::string> chosen;
    for (const auto& name : per_stage)
        chosen.push_back(name.value_or(for_all));
    return chosen;
}

}  // namespace pipelens::runtime
