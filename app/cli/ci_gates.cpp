// CI gates and their JUnit report (ci_gates.hpp). A gate that cannot be evaluated (a memory
// limit on a run without memory figures) fails: a CI check must never pass by not looking.
#include "app/cli/ci_gates.hpp"

#include <fstream>

#include <fmt/format.h>

#include "app/cli/commands.hpp"
#include "app/cli/output_file.hpp"
#include "engine/experiment/units.hpp"
#include "traces/text/quantities.hpp"
#include "traces/text/xml_escape.hpp"

namespace pipelens::cli {
namespace {

// "by 2.40 ms (24.0%)": how far over, in the figure's unit and relative to the limit.
std::string excess(const std::string& amount, double over, double limit) {
    return limit > 0 ? fmt::format("by {} ({:.1f}%)", amount, 100.0 * over / limit)
                     : fmt::format("by {}", amount);
}

void write_junit(const std::string& path, const std::string& suite,
                 const std::vector<std::pair<GateFigures, std::vector<GateResult>>>& checked) {
    std::size_t tests = 0, failures = 0;
    std::string cases;
    for (const auto& [figures, results] : checked)
        for (const GateResult& result : results) {
            ++tests;
            cases +=
                fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\">",
                            xml_escaped(suite + "." + figures.subject), xml_escaped(result.gate));
            if (!result.passed) {
                ++failures;
                cases +=
                    fmt::format("\n      <failure type=\"gate\" message=\"{}\">{}</failure>\n    ",
                                xml_escaped(result.message), xml_escaped(result.message));
            }
            cases += "</testcase>\n";
        }
    write_output_file(
        path, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" +
                  fmt::format("<testsuites tests=\"{}\" failures=\"{}\">\n", tests, failures) +
                  fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" "
                              "skipped=\"0\" time=\"0\">\n",
                              xml_escaped(suite), tests, failures) +
                  cases + "  </testsuite>\n</testsuites>\n");
}

}  // namespace

void add_gate_options(CLI::App& command, GateOptions& options) {
    command.add_option("--max-step-time", options.max_step_time,
                       "CI gate: exit 1 when the step time exceeds this (e.g. 12ms)");
    command.add_option("--max-bubble", options.max_bubble,
                       "CI gate: exit 1 when the bubble ratio exceeds this (0.2 or 20%)");
    command.add_option("--max-memory", options.max_memory,
                       "CI gate: exit 1 when a rank's peak memory exceeds this (e.g. 70GiB)");
    command.add_option("--junit", options.junit,
                       "Write the gates as a JUnit XML report (one test case per gate)");
}

GateLimits gate_limits(const GateOptions& options) {
    GateLimits limits;
    if (options.max_step_time)
        limits.max_step_time_ns =
            parse_flag_text("pipelens", "max-step-time", *options.max_step_time,
                            [](const std::string& text) { return parse_duration_ns(text); });
    if (options.max_bubble)
        limits.max_bubble_ratio =
            parse_flag_text("pipelens", "max-bubble", *options.max_bubble,
                            [](const std::string& text) { return parse_ratio(text); });
    if (options.max_memory)
        limits.max_memory_bytes =
            parse_flag_text("pipelens", "max-memory", *options.max_memory,
                            [](const std::string& text) { return parse_byte_count(text); });
    return limits;
}

std::vector<GateResult> check_gates(const GateLimits& limits, const GateFigures& figures) {
    std::vector<GateResult> results;
    if (const auto limit = limits.max_step_time_ns) {
        const std::int64_t over = figures.step_time_ns - *limit;
        results.push_back(
            {"max-step-time", over <= 0,
             over <= 0 ? fmt::format("step time {} is within --max-step-time {}",
                                     format_duration(figures.step_time_ns), format_duration(*limit))
                       : fmt::format("step time {} exceeds --max-step-time {} {}",
                                     format_duration(figures.step_time_ns), format_duration(*limit),
                                     excess(format_duration(over), static_cast<double>(over),
                                            static_cast<double>(*limit)))});
    }
    if (const auto limit = limits.max_bubble_ratio) {
        const double over = figures.bubble_ratio - *limit;
        const auto percent = [](double ratio) { return fmt::format("{:.2f}%", 100 * ratio); };
        results.push_back({"max-bubble", over <= 0,
                           over <= 0
                               ? fmt::format("bubble ratio {} is within --max-bubble {}",
                                             percent(figures.bubble_ratio), percent(*limit))
                               : fmt::format("bubble ratio {} exceeds --max-bubble {} by {} points",
                                             percent(figures.bubble_ratio), percent(*limit),
                                             fmt::format("{:.2f}", 100 * over))});
    }
    if (const auto limit = limits.max_memory_bytes) {
        if (!figures.peak_memory_bytes) {
            results.push_back({"max-memory", false,
                               fmt::format("--max-memory {} cannot be checked: the run has no "
                                           "memory figures (give activation sizes)",
                                           format_bytes(*limit))});
        } else {
            const std::int64_t peak = *figures.peak_memory_bytes;
            const std::int64_t over = peak - *limit;
            const std::string where = figures.peak_memory_rank >= 0
                                          ? fmt::format(" (rank {})", figures.peak_memory_rank)
                                          : "";
            results.push_back(
                {"max-memory", over <= 0,
                 over <= 0 ? fmt::format("peak memory {}{} is within --max-memory {}",
                                         format_bytes(peak), where, format_bytes(*limit))
                           : fmt::format("peak memory {}{} exceeds --max-memory {} {}",
                                         format_bytes(peak), where, format_bytes(*limit),
                                         excess(format_bytes(over), static_cast<double>(over),
                                                static_cast<double>(*limit)))});
        }
    }
    return results;
}

void enforce_gates(const GateOptions& options, const std::string& suite,
                   const std::vector<std::pair<GateFigures, std::vector<GateResult>>>& checked) {
    if (!options.junit.empty())
        write_junit(options.junit, suite, checked);
    std::size_t failed = 0;
    for (const auto& [figures, results] : checked)
        for (const GateResult& result : results)
            if (!result.passed) {
                ++failed;
                fmt::print(stderr, "pipelens: {}: gate failed: {}\n", figures.subject,
                           result.message);
            }
    if (failed > 0)
        throw CommandFailure(kExitCheckFailed, "");  // each failure has its line above
}

}  // namespace pipelens::cli
