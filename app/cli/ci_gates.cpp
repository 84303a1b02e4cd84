// CI gates and their JUnit report (ci_gates.hpp). A gate that cannot be evaluated (a memory
// limit on a run without memory figures) fails: a CI check must never pass by not looking.
#include "app/cli/ci_gates.hpp"

#include <filesystem>
#include <fstream>
#include <string_view>

#include <fmt/format.h>

#include "app/cli/commands.hpp"
#include "app/cli/output_file.hpp"
#include "engine/experiment/units.hpp"
#include "traces/text/quantities.hpp"
#include "traces/text/xml_escape.hpp"

namespace pipelens::cli {
namespace {

// How every report begins: what tells a report pipelens wrote from any other file.
constexpr std::string_view kJunitStart = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
constexpr std::string_view kJunitSuites = "<testsuites tests=\"";

// "by 2.40 ms (24.0%)": how far over, in the figure's unit and relative to the limit.
std::string excess(const std::string& amount, double over, double limit) {
    return limit > 0 ? fmt::format("by {} ({:.1f}%)", amount, 100.0 * over / limit)
                     : fmt::format("by {}", amount);
}

// One JUnit test case: a gate checked (passed or failed), a configuration not checked (skipped),
// or the command's own error.
struct JunitCase {
    enum class Outcome { passed, failed, skipped, error };
    std::string classname;
    std::string name;
    Outcome outcome = Outcome::passed;
    std::string message;
};

void write_junit(const std::string& path, const std::string& suite,
                 const std::vector<JunitCase>& cases) {
    std::size_t counts[4] = {};
    std::string body;
    for (const JunitCase& test : cases) {
        ++counts[static_cast<int>(test.outcome)];
        body += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\">",
                            xml_escaped(test.classname), xml_escaped(test.name));
        const std::string message = xml_escaped(test.message);
        switch (test.outcome) {
            case JunitCase::Outcome::passed:
                break;
            case JunitCase::Outcome::failed:
                body +=
                    fmt::format("\n      <failure type=\"gate\" message=\"{}\">{}</failure>\n    ",
                                message, message);
                break;
            case JunitCase::Outcome::skipped:
                body += fmt::format("\n      <skipped message=\"{}\"/>\n    ", message);
                break;
            case JunitCase::Outcome::error:
                body += fmt::format("\n      <error type=\"error\" message=\"{}\">{}</error>\n    ",
                                    message, message);
                break;
        }
        body += "</testcase>\n";
    }
    const std::size_t failures = counts[1], skipped = counts[2], errors = counts[3];
    write_output_file(
        path,
        std::string(kJunitStart) + std::string(kJunitSuites) +
            fmt::format("{}\" failures=\"{}\" errors=\"{}\">\n", cases.size(), failures, errors) +
            fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" "
                        "errors=\"{}\" skipped=\"{}\" time=\"0\">\n",
                        xml_escaped(suite), cases.size(), failures, errors, skipped) +
            body + "  </testsuite>\n</testsuites>\n");
}

// The report of a command that ended in an error (or has not ended yet): one error case.
void write_junit_error(const std::string& path, const std::string& suite,
                       const std::string& message) {
    write_junit(path, suite, {{suite, "run", JunitCase::Outcome::error, message}});
}

// Whether `path` holds a report write_junit wrote (its first two lines).
bool is_our_report(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    std::string start(kJunitStart.size() + kJunitSuites.size(), '\0');
    file.read(start.data(), static_cast<std::streamsize>(start.size()));
    return file && start.substr(0, kJunitStart.size()) == kJunitStart &&
           start.substr(kJunitStart.size()) == kJunitSuites;
}

// Thrown by enforce_gates once the report holds the gates: nothing is to replace it.
class GatesFailed : public CommandFailure {
  public:
    GatesFailed() : CommandFailure(kExitCheckFailed, "") {}  // each failure has its line
};

// --junit takes a file a CI reads: standard output carries the command's own output, and an
// empty name (an unset variable) would silently write nothing.
std::string junit_path_error(const std::string& path) {
    if (path.empty())
        return "give the file to write the report to (the value is empty)";
    if (path == "-")
        return "give a file: the report does not go to standard output, which carries the "
               "command's own output";
    return "";
}

}  // namespace

void add_gate_options(CLI::App& command, GateOptions& options) {
    command.add_option("--max-step-time", options.max_step_time,
                       "CI gate: exit 1 when the step time exceeds this (e.g. 12ms)");
    command.add_option("--max-bubble", options.max_bubble,
                       "CI gate: exit 1 when the bubble ratio exceeds this (0.2 or 20%)");
    command.add_option("--max-memory", options.max_memory,
                       "CI gate: exit 1 when a rank's peak memory exceeds this (e.g. 70GiB)");
    command
        .add_option("--junit", options.junit,
                    "Write the gates as a JUnit XML report (one test case per gate)")
        ->check(CLI::Validator(junit_path_error, "FILE", "a file"));
}

GateLimits gate_limits(const GateOptions& options) {
    GateLimits limits;
    if (options.max_step_time)
        limits.max_step_time_ns =
            parse_flag_text("pipelens", "max-step-time", *options.max_step_time,
                            [](const std::string& text) { return parse_duration_limit_ns(text); });
    if (options.max_bubble)
        limits.max_bubble_ratio =
            parse_flag_text("pipelens", "max-bubble", *options.max_bubble,
                            [](const std::string& text) { return parse_ratio(text); });
    if (options.max_memory)
        limits.max_memory_bytes =
            parse_flag_text("pipelens", "max-memory", *options.max_memory,
                            [](const std::string& text) { return parse_byte_limit(text); });
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
    std::size_t failed = 0;
    std::vector<JunitCase> cases;
    for (const auto& [figures, results] : checked)
        for (const GateResult& result : results) {
            const auto outcome = result.skipped  ? JunitCase::Outcome::skipped
                                 : result.passed ? JunitCase::Outcome::passed
                                                 : JunitCase::Outcome::failed;
            cases.push_back({suite + "." + figures.subject, result.gate, outcome, result.message});
            if (outcome == JunitCase::Outcome::failed) {
                ++failed;
                fmt::print(stderr, "pipelens: {}: gate failed: {}\n", figures.subject,
                           result.message);
            }
        }
    // After the failures are said: a report that cannot be written loses none of them.
    if (!options.junit.empty())
        write_junit(options.junit, suite, cases);
    if (failed > 0)
        throw GatesFailed();
}

void run_with_junit_report(const GateOptions& options, const std::string& suite,
                           const std::vector<std::string>& inputs,
                           const std::vector<std::pair<std::string, std::string>>& outputs,
                           const std::function<void()>& work) {
    if (options.junit.empty()) {
        work();
        return;
    }
    refuse_outputs({{"--junit", options.junit}}, inputs, outputs);
    write_junit_error(options.junit, suite,
                      suite + " did not finish: it was stopped before it wrote its report");
    try {
        work();
    } catch (const GatesFailed&) {
        throw;
    } catch (const std::exception& error) {
        const std::string_view what = error.what();
        try {
            write_junit_error(options.junit, suite,
                              what.empty() ? suite + " failed" : std::string(what));
        } catch (const std::exception&) {
            // The command's own error is the one to say; the report keeps "did not finish".
        }
        throw;
    }
}

void replace_earlier_report(const CLI::App& command, const std::string& suite,
                            const std::string& message) {
    const CLI::Option* junit = command.get_option_no_throw("--junit");
    if (junit == nullptr || junit->results().empty())
        return;
    const std::string& path = junit->results().back();
    std::error_code error;
    if (!junit_path_error(path).empty() || !std::filesystem::is_regular_file(path, error) ||
        !is_our_report(path))
        return;
    try {
        write_junit_error(path, suite, message);
    } catch (const std::exception&) {
        // The usage error is the one to say.
    }
}

}  // namespace pipelens::cli
