// Fault parsing: `target=effect`, strict, with the accepted forms in every error message.
#include "engine/run_record/faults.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "engine/experiment/units.hpp"
#include "engine/tensor/dtype_names.hpp"

namespace pipelens::run_record {
namespace {

constexpr const char* kForms =
    "input=batch+1, input=int32, stageN=dtype:bf16, stageN=flatten, stageN=nan, stageN=sleep:30s, "
    "stageN=die, rankN=clock:+5ms";

std::string fault_dtype_names() {
    std::string names;
    for (const std::string_view name : kFaultDtypes)
        names += (names.empty() ? "" : ", ") + std::string(name);
    return names;
}

[[noreturn]] void fail(const std::string& text, const std::string& why) {
    throw FaultParseError(fmt::format("--fault {}: {} (forms: {})", text, why, kForms));
}

// N of "stageN"/"rankN": digits only, and small enough to be a stage or rank.
int target_index(const std::string& text, const std::string& target, std::size_t prefix) {
    const std::string digits = target.substr(prefix);
    if (digits.empty() || digits.size() > 9 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
        fail(text, fmt::format("unknown target '{}'", target));
    return std::stoi(digits);
}

Fault parse_rank_fault(const std::string& text, const std::string& target,
                       const std::string& effect) {
    Fault fault;
    fault.text = text;
    fault.stage = -1;
    fault.rank = target_index(text, target, 4);
    if (effect.rfind("clock:", 0) != 0)
        fail(text, fmt::format("unknown rank effect '{}'", effect));
    const std::string skew = effect.substr(6);
    if (skew.empty() || (skew[0] != '+' && skew[0] != '-'))
        fail(text, "clock: needs a signed duration, e.g. +5ms or -250us");
    fault.kind = Fault::Kind::clock_skew;
    try {
        fault.clock_skew_ns = parse_duration_ns(skew.substr(1));
    } catch (const UnitParseError& error) {
        fail(text, error.what());
    }
    if (skew[0] == '-')
        fault.clock_skew_ns = -fault.clock_skew_ns;
    return fault;
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
    if (target.rfind("rank", 0) == 0)
        return parse_rank_fault(text, target, effect);
    if (target.rfind("stage", 0) != 0)
        fail(text, fmt::format("unknown target '{}'", target));
    fault.stage = target_index(text, target, 5);
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
        // Refused here, before any rank starts: it once failed every rank's first forward.
        if (std::find(kFaultDtypes.begin(), kFaultDtypes.end(), fault.dtype) == kFaultDtypes.end())
            fail(text,
                 fmt::format("{} '{}': a fault casts to one of {}",
                             dtype_item_bytes(fault.dtype) ? "a run cannot make tensors of dtype"
                                                           : "unknown dtype",
                             fault.dtype, fault_dtype_names()));
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

const char* fault_forms() {
    return kForms;
}

void check_faults(const std::vector<std::string>& texts, const std::string& transport,
                  int rank_count, int stage_count) {
    for (const std::string& text : texts) {
        const Fault fault = parse_fault(text);
        if (fault.kind == Fault::Kind::die && transport == "local")
            throw FaultParseError(fmt::format(
                "--fault {}: a rank can only die on its own with one process per rank (--transport "
                "gloo --nproc N)",
                text));
        if (fault.rank >= rank_count)
            throw FaultParseError(fmt::format("--fault {}: there is no rank {} (ranks 0..{})", text,
                                              fault.rank, rank_count - 1));
        if (fault.stage >= stage_count)
            throw FaultParseError(fmt::format("--fault {}: there is no stage {} (stages 0..{})",
                                              text, fault.stage, stage_count - 1));
    }
}

}  // namespace pipelens::run_record
