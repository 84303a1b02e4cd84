// Faults injected on purpose, to provoke the failures pipelens must diagnose:
//   input=batch+1      stage 0 gets one extra sample per microbatch (shape mismatch)
//   input=int32        stage 0 gets its inputs as int32 (dtype mismatch)
//   stageN=dtype:bf16  stage N's outputs change dtype (any dtype name: bf16, f16, f64, ...)
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

#include <cstdint>
#include <stdexcept>
#include <string>
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

}  // namespace pipelens::run_record
