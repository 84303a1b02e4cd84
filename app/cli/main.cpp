// `pipelens`: the headless entry point. Parses the subcommand, runs it, and maps every error to
// a one-line message on stderr with a non-zero exit code.
#include <cstdio>
#include <exception>

#include <fmt/format.h>

#include "app/cli/commands.hpp"
#include "engine/experiment/experiment.hpp"
#include "engine/schedule/action.hpp"
#include "engine/schedule/dry_run.hpp"
#include "engine/schedule/schedule_csv.hpp"
#include "engine/schedule/schedule_kind.hpp"
#include "engine/schedule/static_check.hpp"
#include "traces/trace_error.hpp"

int main(int argc, char** argv) {
    using namespace pipelens;
    CLI::App app{"pipelens: simulate, run, replay and check pipeline-parallel schedules"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "pipelens 0.1.0");
    cli::add_schedule_command(app);
    cli::add_check_command(app);
    cli::add_simulate_command(app);
    cli::add_summary_command(app);
    cli::add_export_command(app);
    cli::add_calibrate_command(app);
    cli::add_replay_command(app);
    cli::add_bisect_command(app);
    cli::add_shard_command(app);
    cli::add_view_command(app);
#ifdef PIPELENS_WITH_TORCH
    cli::add_run_command(app, std::vector<std::string>(argv + 1, argv + argc));
    cli::add_explain_command(app);
#endif
    try {
        app.parse(argc, argv);
        return cli::kExitOk;
    } catch (const CLI::ParseError& error) {
        return app.exit(error);
    } catch (const cli::CommandFailure& failure) {
        if (*failure.what() != '\0') {
            std::fputs(failure.what(), stderr);
            std::fputc('\n', stderr);
        }
        return failure.code();
    } catch (const ScheduleConfigError& error) {
        fmt::print(stderr, "pipelens: invalid schedule configuration: {}\n", error.what());
        return cli::kExitUsage;
    } catch (const ExperimentError& error) {
        fmt::print(stderr, "pipelens: {}\n", error.what());
        return cli::kExitUsage;
    } catch (const traces::TraceError& error) {
        fmt::print(stderr, "pipelens: {}\n", error.what());
        return cli::kExitUsage;
    } catch (const ScheduleFileError& error) {
        fmt::print(stderr, "pipelens: {}\n", error.what());
        return cli::kExitUsage;
    } catch (const ScheduleCheckError& error) {
        fmt::print(stderr, "pipelens: {}\n", error.what());
        return cli::kExitCheckFailed;
    } catch (const ScheduleHangError& error) {
        fmt::print(stderr, "pipelens: {}\n", error.what());
        return cli::kExitCheckFailed;
    } catch (const std::exception& error) {
        fmt::print(stderr, "pipelens: error: {}\n", error.what());
        return cli::kExitCheckFailed;
    }
}
