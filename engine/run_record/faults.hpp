// Faults injected on purpose, to provoke the failures pipelens must diagnose:
//   input=batch+1      stage 0 gets one extra sample per microbatch (shape mismatch)
//   input=int32        stage 0 gets its inputs as int32 (dtype mismatch)
//   stageN=dtype:bf16  stage N's outputs change dtype (f32, bf16, f16, f64, i64 ... c64)
//   stageN=flatten     stage N's outputs are flattened (shape mismatch)
//   stageN=nan         stage N's outputs become NaN (metadata checks pass; the `checked`
//                      backend notices at the next stage, else the run fails on the model's
//                      NaN outputs after the step)
//   stageN=sleep:30s   stage N sleeps in each forward (a stuck rank; others time out)
//   stageN=die         the process holding stage N kills itself with SIGKILL in its first
//                      forward, as the OOM killer would (one process per rank only)
//   rankN=clock:+5ms   rank N's clock reads 5 ms ahead (or behind, with -): a test of the
//                      clock offset estimate that puts every rank on one clock
// Torch-free: parsed from the command line and applied by the executor.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pipelens::run_record {

struct Fault {
    enum class Kind {
        extra_input_sample,
        input_dtype,
        output_dtype,
        flatten_output,
        nan_output,
        sleep,
        die,
        clock_skew
    };
    Kind kind = Kind::sleep;
    int stage = 0;      // the stage it applies to (0 for input faults)
    std::string dtype;  // input_dtype, output_dtype: PyTorch short name
    std::int64_t sleep_ns = 0;
    int rank = -1;                   // clock_skew: the rank whose clock is off
    std::int64_t clock_skew_ns = 0;  // clock_skew: how far ahead (negative: behind)
    std::string text;                // as given, for messages
};

class FaultParseError : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

Fault parse_fault(const std::string& text);

// Each of `texts` parsed and checked against the run: a rank or stage it does not have, or `die`
// on ranks that are threads. Throws FaultParseError naming the fault. Torch-free,
// so a launcher checks once what every rank would refuse.
void check_faults(const std::vector<std::string>& texts, const std::string& transport,
                  int rank_count, int stage_count);

// Every form parse_fault accepts, for help texts and messages: "input=batch+1, ...".
const char* fault_forms();

// The dtypes a `stageN=dtype:` fault can cast a stage's outputs to: those LibTorch makes tensors
// of in every version the runtime builds against (engine/runtime/torch_meta.cpp's table, which a
// runtime test holds to this list). PyTorch prints more names (u32, f8e4m3fn, ...), but a fault
// naming one of those would pass the flag check and fail every rank's first forward.
inline constexpr std::array<std::string_view, 11> kFaultDtypes{
    "f32", "bf16", "f16", "f64", "i64", "i32", "i16", "i8", "u8", "b8", "c64"};

}  // namespace pipelens::run_record
