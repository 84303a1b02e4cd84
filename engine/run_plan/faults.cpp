// Fault parsing: `target=effect`, strict, with the accepted forms in every error message.
#include "engine/run_plan/faults.hpp"

#include <fmt/format.h>

#include "engine/experiment/units.hpp"

namespace pipelens::runtime {
namespace {

constexpr const char* kForms =
    "input=batch+1, input=int32, stageN=dtype:bf16, stageN=flatten, stageN=nan, stageN=sleep:30s, "
    "stageN=die";

[[noreturn]] void fail(const std::string& text, const std::string& why) {
    throw FaultParseError(fmt::format("--fault {}: {} (forms: {})", text, why, kForms));
}

}  // namespace

Fault parse_fault(const std::string& text) {
    const auto equals = text.find('=');
    if (equals == std::string::npos)
        fail(text, "expected TARGET=EFFECT");
    const std::string target = text.substr(0, equals);
    const std::string effect = text.substr(equals + 1);
    Fault fault;
    fault.text = text;
    if (target == "input") {
        fault.stage = 0;
        if (effect == "batch+1") {
            fault.kind = Fault::Kind::extra_input_sample;
        } else if (effect == "int32" || effect == "bf16" || effect == "f16" || effect == "f64") {
            fault.kind = Fault::Kind::input_dtype;
            fault.dtype = effect == "int32" ? "i32" : effect;
        } else {
            fail(text, fmt::format("unknown input effect '{}'", effect));
        }
        return fault;
    }
    if (target.rfind("stage", 0) != 0 || target.size() == 5 ||
        target.find_first_not_of("0123456789", 5) != std::string::npos)
        fail(text, fmt::format("unknown target '{}'", target));
    fault.stage = std::stoi(target.substr(5));
    if (effect == "flatten") {
        fault.kind = Fault::Kind::flatten_output;
    } else if (effect == "nan") {
        fault.kind = Fault::Kind::nan_output;
    } else if (effect == "die") {
        fault.kind = Fault::Kind::die;
    } else if (effect.rfind("dtype:", 0) == 0) {
        fault.kind = Fault::Kind::output_dtype;
        fault.dtype = effect.substr(6);
        if (fault.dtype.empty())
            fail(text, "dtype: needs a dtype name");
    } else if (effect.rfind("sleep:", 0) == 0) {
        fault.kind = Fault::Kind::sleep;
        try {
            fault.sleep_ns = parse_duration_ns(effect.substr(6));
        } catch (const UnitParseError& error) {
            fail(text, error.what());
        }
    } else {
        fail(text, fmt::format("unknown stage effect '{}'", effect));
    }
    return fault;
}

}  // namespace pipelens::runtime
