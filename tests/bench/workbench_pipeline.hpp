// The pipeline both re-simulation benchmarks time (workbench_bench.cpp in a window,
// resimulate_bench.cpp without one): 32 ranks, 256 microbatches, 1 ms F, I and W on every stage,
// so that their figures describe the same change.
#pragma once

#include <string>

namespace pipelens::bench {

// An experiment file of `kind` at pp=32, m=256.
inline std::string workbench_pipeline(const std::string& kind) {
    return R"(
[schedule]
kind = ")" +
           kind + R"("
pp = 32
m = 256
[costs]
f = "1ms"
i = "1ms"
w = "1ms"
activation_bytes = "16MiB"
held_activation_bytes = "1GiB"
[network]
latency = "8us"
bandwidth = "150GB/s"
)";
}

}  // namespace pipelens::bench
