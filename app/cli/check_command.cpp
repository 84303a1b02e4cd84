// `pipelens check FILE.csv`: static check and dependency dry run of a schedule file (compute
// only, or with communication). Exits 1 with the report when the schedule is wrong or can hang,
// 2 when the file cannot be read as a schedule. A file read in PyTorch's older action notation
// without --notation says so on stderr, whatever the outcome.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "app/cli/commands.hpp"
#include "app/cli/experiment_options.hpp"
#include "app/cli/input_files.hpp"
#include "engine/schedule/posting_order.hpp"
#include "engine/schedule/schedule_check.hpp"
#include "engine/schedule/schedule_csv.hpp"

namespace pipelens::cli {
namespace {

struct CheckOptions {
    std::string path;
    std::optional<int> pp;
    std::optional<int> m;
    std::string notation = "auto";
};

std::optional<ActionNotation> notation_flag(const std::string& text) {
    try {
        return parse_notation_choice(text);
    } catch (const ScheduleFileError& error) {
        throw CommandFailure(kExitUsage,
                             fmt::format("pipelens check: --notation: {}", error.what()));
    }
}

void run_check(const CheckOptions& options) {
    ScheduleCsvReading reading =
        read_schedule_csv_as(options.path, notation_flag(options.notation));
    if (const std::string note = reading.note(options.path); !note.empty())
        fmt::print(stderr, "pipelens: note: {}\n", note);
    Schedule& schedule = reading.schedule;
    if (options.pp && *options.pp != schedule.rank_count)
        throw CommandFailure(kExitCheckFailed,
                             fmt::format("{}: expected {} ranks (--pp) but the file has {} rows",
                                         options.path, *options.pp, schedule.rank_count));
    if (options.m)
        schedule.microbatch_count = *options.m;

    const ScheduleCheck check = check_schedule(schedule);
    if (!check.ok())
        throw CommandFailure(kExitCheckFailed, options.path + ": " + check.problem_text());
    fmt::print("{}: {}\n", options.path, ok_text(schedule, check, reading.notation));
    // Not a failure: gloo, and this checker, pair transfers by stage and microbatch.
    if (const std::optional<std::string> crossing = posting_order_crossing(schedule))
        fmt::print(stderr,
                   "pipelens: note: {}: {}; NCCL pairs a rank pair's transfers in the order each "
                   "side posts them, not by tag, so run over NCCL this schedule would hand those "
                   "receives other tensors than they expect\n",
                   options.path, *crossing);
}

}  // namespace

void add_check_command(CLI::App& app) {
    auto options = std::make_shared<CheckOptions>();
    CLI::App* command = app.add_subcommand(
        "check", "Check a schedule CSV (PyTorch format): structure, counts, pairing, hangs");
    command->add_option("file", options->path, "Schedule CSV, one row per rank")
        ->required()
        ->check(input_file("check", {traces::FileKind::schedule_csv}, "a schedule (PyTorch CSV)"));
    add_count_option(*command, "--pp", options->pp, "Expected number of ranks", 1);
    add_count_option(*command, "--m", options->m,
                     "Microbatches (default: highest microbatch in the file + 1)", 1);
    command
        ->add_option("--notation", options->notation,
                     "PyTorch's action notation in the file: current (F, I, W, B = full "
                     "backward), legacy (its older F, B = input backward, W, BW = full "
                     "backward) or auto (inferred from the cells, with a note when legacy)")
        ->default_str("auto");
    command->callback([options] { run_check(*options); });
}

}  // namespace pipelens::cli
