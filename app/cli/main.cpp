// `pipelens`: the headless entry point, free of LibTorch so that every command starts in
// milliseconds. `run` and `explain` are listed here but executed by `pipelens-runtime`
// (runtime_handoff.cpp); `view` by `pipelens-view`.
#include <algorithm>

#include "app/cli/commands.hpp"

int main(int argc, char** argv) {
    using namespace pipelens;
    CLI::App app{"pipelens: simulate, run, replay and check pipeline-parallel schedules"};
    app.require_subcommand(1);
    app.set_version_flag("--version", cli::kVersion);
    cli::add_schedule_command(app);
    cli::add_check_command(app);
    cli::add_simulate_command(app);
    cli::add_summary_command(app);
    cli::add_diff_command(app);
    cli::add_export_command(app);
    cli::add_calibrate_command(app);
    cli::add_replay_command(app);
    cli::add_bisect_command(app);
    cli::add_shard_command(app);
    const std::vector<std::string> arguments(argv + std::min(argc, 1), argv + argc);
    cli::add_view_command(app, arguments);
    cli::add_import_command(app);
    cli::add_plan_command(app);
    cli::add_sweep_command(app);
    cli::add_partition_command(app);
    cli::add_merge_command(app);
    cli::add_runtime_commands(app, argc > 0 ? argv[0] : "pipelens", arguments);
    return cli::parse_and_run(app, argc, argv);
}
