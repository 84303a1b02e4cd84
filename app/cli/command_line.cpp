// The one error policy of `pipelens` and `pipelens-runtime`: every failure a command can raise
// becomes one line on stderr and an exit code (kExitUsage for bad input, kExitCheckFailed for
// input that was read but is wrong), the same whichever binary ran the command.
#include <cstdio>
#include <exception>

#include <fmt/format.h>

#include "app/cli/commands.hpp"
#include "engine/experiment/experiment.hpp"
#include "engine/schedule/action.hpp"
#include "engine/schedule/dry_run.hpp"
#include "engine/schedule/schedule_csv.hpp"
#include "engine/schedule/schedule_kind.hpp"
#include "engine/schedule/schedule_size.hpp"
#include "engine/schedule/static_check.hpp"
#include "traces/trace_error.hpp"

namespace pipelens::cli {

int parse_and_run(CLI::App& app, int argc, char** argv) {
    try {
        app.parse(argc, argv);
        return kExitOk;
    } catch (const CLI::ParseError& error) {
        return app.exit(error);
    } catch (const CommandFailure& failure) {
        if (*failure.what() != '\0') {
            std::fputs(failure.what(), stderr);
            std::fputc('\n', stderr);
        }
        return failure.code();
    } catch (const ScheduleConfigError& error) {
        fmt::print(stderr, "pipelens: invalid schedule configuration: {}\n", error.what());
        return kExitUsage;
    } catch (const ExperimentError& error) {
        fmt::print(stderr, "pipelens: {}\n", error.what());
        return kExitUsage;
    } catch (const traces::TraceError& error) {
        fmt::print(stderr, "pipelens: {}\n", error.what());
        return kExitUsage;
    } catch (const ScheduleFileError& error) {
        fmt::print(stderr, "pipelens: {}\n", error.what());
        return kExitUsage;
    } catch (const ScheduleTooLargeError& error) {
        fmt::print(stderr, "pipelens: {}\n", error.what());
        return kExitTooLarge;
    } catch (const ScheduleCheckError& error) {
        fmt::print(stderr, "pipelens: {}\n", error.what());
        return kExitCheckFailed;
    } catch (const ScheduleHangError& error) {
        fmt::print(stderr, "pipelens: {}\n", error.what());
        return kExitCheckFailed;
    } catch (const std::exception& error) {
        fmt::print(stderr, "pipelens: error: {}\n", error.what());
        return kExitCheckFailed;
    }
}

}  // namespace pipelens::cli
