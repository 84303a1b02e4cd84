// CI gates: limits a headless run checks its figures against (`simulate`, `sweep` and `plan`
// take `--max-step-time`, `--max-bubble`, `--max-memory`), and the JUnit XML report CI
// systems show as tests (`--junit FILE`).
//
// Invariants: a limit is checked only when given; every gate checked is one JUnit test case,
// passed or failed, and a configuration that could not be checked a skipped one, so a report
// never silently drops a gate; a command that ends in an error (or never ends) leaves a report
// of that error, never an earlier run's; a failure's message names the figure, the limit and by
// how much it was exceeded, in the units the flag takes.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

namespace pipelens::cli {

// The flags as given (parsed by gate_limits, so a bad value names its flag).
struct GateOptions {
    std::optional<std::string> max_step_time;  // a duration: "12ms", "850us"
    std::optional<std::string> max_bubble;     // a ratio "0.2" or a percentage "20%"
    std::optional<std::string> max_memory;     // a size per rank: "70GiB"
    std::string junit;                         // JUnit XML report to write; "" = none
};

void add_gate_options(CLI::App& command, GateOptions& options);

struct GateLimits {
    std::optional<std::int64_t> max_step_time_ns;
    std::optional<double> max_bubble_ratio;
    std::optional<std::int64_t> max_memory_bytes;
    bool any() const { return max_step_time_ns || max_bubble_ratio || max_memory_bytes; }
};

// Throws CommandFailure (exit 2) naming the flag for a value that does not parse.
GateLimits gate_limits(const GateOptions& options);

// What the gates look at, for one run or configuration.
struct GateFigures {
    std::string subject;  // "Interleaved1F1B pp=4 v=2 m=8": names the JUnit test cases
    std::int64_t step_time_ns = 0;
    double bubble_ratio = 0;
    std::optional<std::int64_t> peak_memory_bytes;  // the highest rank's; nullopt: not known
    int peak_memory_rank = -1;
};

struct GateResult {
    std::string gate;  // "max-step-time", "max-bubble", "max-memory"; "simulated" when skipped
    bool passed = true;
    std::string message;  // "step time 12.40 ms exceeds --max-step-time 10 ms by 2.40 ms (24.0%)"
    // Not checked, `message` saying why (a sweep's configuration the engine refuses): a JUnit
    // skipped case, neither a pass nor a failure.
    bool skipped = false;
};

// One result per limit given, in flag order.
std::vector<GateResult> check_gates(const GateLimits& limits, const GateFigures& figures);

// Prints each failure on stderr, one line each, and writes the JUnit report (when options.junit
// is set); throws CommandFailure with exit 1 (and no further text) when a gate failed. `suite`
// names the test suite ("pipelens simulate").
void enforce_gates(const GateOptions& options, const std::string& suite,
                   const std::vector<std::pair<GateFigures, std::vector<GateResult>>>& checked);

// A command with gates runs its `work` through this. With --junit, the report's path is checked
// first (writable, none of the command's `inputs`, no file another of its options writes:
// `outputs`, option and path), then a report saying the command did not finish is written; an
// error `work` throws replaces it with that error before it propagates, and enforce_gates with
// the gates. A CI that kept an earlier run's report never reads its pass for a run that failed or
// was killed.
void run_with_junit_report(const GateOptions& options, const std::string& suite,
                           const std::vector<std::string>& inputs,
                           const std::vector<std::pair<std::string, std::string>>& outputs,
                           const std::function<void()>& work);

// A command that ended in an error before its report was written (a command line that did not
// parse, `simulate --pp 0 --junit r.xml`) replaces the report an earlier run left at its --junit
// file (the option as given, as far as parsing got) with that error, so a CI never reads the old
// pass. Only a report pipelens wrote is replaced, never another file, and none is created: when
// the command did not get that far, what else its line names is not known.
void replace_earlier_report(const CLI::App& command, const std::string& suite,
                            const std::string& message);

}  // namespace pipelens::cli
