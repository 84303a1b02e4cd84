// The one error policy of `pipelens` and `pipelens-runtime`: every failure a command can raise
// becomes one line on stderr and an exit code (kExitUsage for bad input, kExitCheckFailed for
// input that was read but is wrong), the same whichever binary ran the command. Usage errors the
// command-line library finds (an unknown command or option, a missing or malformed value) are
// usage errors like any other: exit 2, not the library's own codes; a mistyped name is answered
// with the nearest known ones. --help and --version print as the library does and exit 0.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app/cli/ci_gates.hpp"
#include "app/cli/commands.hpp"
#include "app/cli/error_policy.hpp"
#include "app/viewer/decimal_integers.hpp"
#include "engine/text/nearest_names.hpp"

namespace pipelens::cli {
namespace {

std::vector<std::string> command_names(const CLI::App& app) {
    std::vector<std::string> names;
    for (const CLI::App* command : app.get_subcommands({}))
        names.push_back(command->get_name());
    return names;
}

std::string joined(const std::vector<std::string>& names) {
    return fmt::format("{}", fmt::join(names, ", "));
}

// The command's first word when it names no command: "unknown command 'simlate'; did you mean
// 'simulate'?" and the list. Checked before parsing, as the library would only say that a
// command is required.
std::optional<std::string> unknown_command(const CLI::App& app, int argc, char** argv) {
    if (argc < 2 || app.get_subcommands({}).empty() || argv[1][0] == '-')
        return std::nullopt;
    const std::string typed = argv[1];
    const std::vector<std::string> names = command_names(app);
    if (std::find(names.begin(), names.end(), typed) != names.end())
        return std::nullopt;
    const std::vector<std::string> nearest = nearest_names(typed, names);
    return fmt::format("pipelens: unknown command '{}'{}\ncommands: {}", typed,
                       nearest.empty()
                           ? std::string()
                           : fmt::format("; did you mean {}?", quoted_alternatives(nearest, "'")),
                       joined(names));
}

// The innermost command the command line chose ("pipelens simulate"), the app itself if none.
const CLI::App& chosen_command(const CLI::App& app) {
    const CLI::App* command = &app;
    while (!command->get_subcommands().empty())
        command = command->get_subcommands().back();
    return *command;
}

std::string command_path(const CLI::App& app, const CLI::App& command) {
    return &command == &app ? "pipelens" : "pipelens " + command.get_name();
}

// The files `command` was given as its positional arguments, joined ("a.db, b.db"); empty when
// none.
std::string positional_inputs(const CLI::App& command) {
    std::string inputs;
    for (const CLI::Option* option : command.get_options())
        if (option->get_positional())
            for (const std::string& value : option->results())
                inputs += (inputs.empty() ? "" : ", ") + value;
    return inputs;
}

// "--schedule-file" and the like: every long and short option name of `command`.
std::vector<std::string> option_names(const CLI::App& command) {
    std::vector<std::string> names;
    for (const CLI::Option* option : command.get_options()) {
        for (const std::string& name : option->get_lnames())
            names.push_back("--" + name);
        for (const std::string& name : option->get_snames())
            names.push_back("-" + name);
    }
    return names;
}

// Arguments the chosen command did not expect: the first unknown option, with the nearest
// option names, else the arguments themselves.
std::string unexpected_arguments(const CLI::App& command, const std::string& prefix,
                                 const CLI::ParseError& error) {
    const std::vector<std::string> extras = command.remaining(false);
    for (const std::string& extra : extras) {
        if (extra.size() < 2 || extra[0] != '-' ||
            std::isdigit(static_cast<unsigned char>(extra[1])))
            continue;
        const std::string name = extra.substr(0, extra.find('='));
        const std::vector<std::string> nearest = nearest_names(name, option_names(command));
        return fmt::format(
            "{}: unknown option {}{}; see {} --help", prefix, name,
            nearest.empty() ? std::string()
                            : fmt::format(" (did you mean {}?)", quoted_alternatives(nearest, "")),
            prefix);
    }
    if (extras.empty())
        return fmt::format("{}: {}; see {} --help", prefix, error.what(), prefix);
    return fmt::format("{}: unexpected argument{} {}; see {} --help", prefix,
                       extras.size() > 1 ? "s" : "", joined(extras), prefix);
}

// A value the library could not read as its option's type ("Could not convert: --batch = huge"),
// said as what the option takes: "--batch: 'huge' is not an integer". None when the library's
// text is not of that form.
std::optional<std::string> unconvertible_value(const CLI::App& command, const std::string& prefix,
                                               const CLI::ParseError& error) {
    const std::string text = error.what();
    const std::string lead = "Could not convert: ";
    const std::size_t equals = text.find(" = ");
    if (text.rfind(lead, 0) != 0 || equals == std::string::npos)
        return std::nullopt;
    const std::string name = text.substr(lead.size(), equals - lead.size());
    const std::string value = text.substr(equals + 3);
    const CLI::Option* option = command.get_option_no_throw(name);
    const std::string type = option != nullptr ? option->get_type_name() : std::string();
    std::string problem;
    if (type.rfind("INT", 0) == 0 || type.rfind("UINT", 0) == 0) {
        long long whole = 0;
        const char* end = value.data() + value.size();
        const auto [stop, code] = std::from_chars(value.data(), end, whole);
        const bool whole_number =
            (stop == end && code == std::errc()) || code == std::errc::result_out_of_range;
        problem = whole_number ? "is out of range" : "is not an integer";
    } else if (type.rfind("FLOAT", 0) == 0) {
        problem = "is not a number";
    } else {
        return std::nullopt;
    }
    return fmt::format("{}: {}: '{}' {}; see {} --help", prefix, name, value, problem, prefix);
}

// An option given more often than it takes ("--pp: At Most 1 required but received 2"), said as
// what to do: "--pp is given 2 times; give it once".
std::optional<std::string> repeated_option(const std::string& prefix,
                                           const CLI::ParseError& error) {
    const std::string text = error.what();
    const std::string marker = ": At Most 1 required but received ";
    const std::size_t at = text.find(marker);
    if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) == nullptr || at == std::string::npos)
        return std::nullopt;
    return fmt::format("{}: {} is given {} times; give it once; see {} --help", prefix,
                       text.substr(0, at), text.substr(at + marker.size()), prefix);
}

// A usage error the command-line library found, as one line (two for a missing command: the
// list), exit 2.
int usage_error(const CLI::App& app, const CLI::ParseError& error) {
    const CLI::App& command = chosen_command(app);
    const std::string prefix = command_path(app, command);
    std::string message;
    if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr)
        message = unexpected_arguments(command, prefix, error);
    else if (&command == &app && app.get_require_subcommand_min() > 0 &&
             app.get_subcommands().empty())
        message = fmt::format("pipelens: a command is required\ncommands: {}",
                              joined(command_names(app)));
    else if (auto unconvertible = unconvertible_value(command, prefix, error))
        message = std::move(*unconvertible);
    else if (auto repeated = repeated_option(prefix, error))
        message = std::move(*repeated);
    else
        message = fmt::format("{}: {}; see {} --help", prefix, error.what(), prefix);
    fmt::print(stderr, "{}\n", message);
    replace_earlier_report(command, prefix, message);
    return kExitUsage;
}

// A report that did not reach standard output (a full disk, a device that refuses it) is a
// failure, not exit 0 with nothing written.
int output_written() {
    errno = 0;
    if (std::fflush(stdout) == 0 && !std::ferror(stdout))
        return kExitOk;
    fmt::print(stderr, "pipelens: error: cannot write to standard output: {}\n",
               std::strerror(errno != 0 ? errno : EIO));
    return kExitCheckFailed;
}

}  // namespace

int parse_and_run(CLI::App& app, int argc, char** argv) {
    if (const auto message = unknown_command(app, argc, argv)) {
        fmt::print(stderr, "{}\n", *message);
        return kExitUsage;
    }
    viewer::read_integers_as_decimal(app);
    try {
        app.parse(argc, argv);
        return output_written();
    } catch (const CLI::ParseError& error) {
        if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
            return app.exit(error);  // --help, --version: printed as asked, exit 0
        return usage_error(app, error);
    } catch (const CommandFailure& failure) {
        if (*failure.what() != '\0') {  // else each failure has had its line, and its report
            std::fputs(failure.what(), stderr);
            std::fputc('\n', stderr);
            replace_earlier_report(chosen_command(app), command_path(app, chosen_command(app)),
                                   failure.what());
        }
        return failure.code();
    } catch (const std::bad_alloc&) {
        // Said with the command and what it was given: "std::bad_alloc" alone named neither.
        const CLI::App& command = chosen_command(app);
        const std::string inputs = positional_inputs(command);
        const std::string message = fmt::format(
            "{}: not enough memory for {}: the machine could not give what it needs "
            "(std::bad_alloc); give a smaller input, or run it where there is more memory",
            command_path(app, command), inputs.empty() ? "this input" : inputs);
        fmt::print(stderr, "{}\n", message);
        replace_earlier_report(command, command_path(app, command), message);
        return kExitTooLarge;
    } catch (const std::exception& error) {
        const ErrorPolicy policy = error_policy(error);
        const std::string message =
            fmt::format("pipelens: {}{}", policy.prefix, without_backtrace(error.what()));
        fmt::print(stderr, "{}\n", message);
        replace_earlier_report(chosen_command(app), command_path(app, chosen_command(app)),
                               message);
        return policy.exit_code;
    }
}

}  // namespace pipelens::cli
