// `pipelens diff REAL SIM [--real-run N[,N...]] [--sim-run N] [--top N] [--json]`: where a real
// run went apart from its simulation (engine/analysis/run_divergence.hpp holds every definition;
// this file picks the runs, refuses pairs that cannot be compared, and prints).
//
// REAL and SIM may be one file holding both runs. By default REAL's latest real run meets SIM's
// latest simulated run; several real runs (repeats of one configuration) are compared together,
// their steps pooled. Runs of different schedules, pp, v or m, a run named twice, and a trace
// without a run of the kind needed, are refused with exit 2 and one line naming the file and what
// differs.
#include <algorithm>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/commands.hpp"
#include "app/cli/experiment_options.hpp"
#include "app/cli/input_files.hpp"
#include "app/cli/json_text.hpp"
#include "app/cli/run_list_option.hpp"
#include "app/cli/validators.hpp"
#include "engine/analysis/run_divergence.hpp"
#include "engine/analysis/training_steps.hpp"
#include "engine/experiment/config_difference.hpp"
#include "engine/text/shortened.hpp"
#include "traces/run_outcome.hpp"
#include "traces/text/quantities.hpp"
#include "traces/trace_reader.hpp"

namespace pipelens::cli {
namespace {

struct DiffOptions {
    std::string real;
    std::string sim;
    std::vector<std::int64_t> real_runs;  // empty: the latest
    std::optional<std::int64_t> sim_run;
    std::optional<int> top;  // 10 when not given
    bool json = false;
};

[[noreturn]] void refuse(const std::string& message) {
    throw CommandFailure(kExitUsage, "pipelens diff: " + message);
}

std::string_view kind_name(traces::RunKind kind) {
    return kind == traces::RunKind::simulated ? "sim" : "real";
}

// A run of the side's kind, finished: a simulation given as the real side, or a failed run's
// partial step, once went into the split as if measured.
// A failed run is described as `summary` describes it (its first error where one is recorded).
traces::RunRecord checked_run(const traces::TraceReader& reader, const traces::RunRecord& run,
                              const std::string& path, traces::RunKind kind) {
    const auto described = [](traces::RunKind of) {
        return of == traces::RunKind::real ? "a real (measured)" : "a simulated";
    };
    if (run.kind != kind)
        refuse(fmt::format("{}: run {} is {} run, but --{}-run takes {} run", path, run.id,
                           described(run.kind), kind_name(kind), described(kind)));
    if (run.status == traces::RunStatus::failed)
        refuse(fmt::format(
            "{}: run {} {}; diff compares finished steps", path, run.id,
            shortened(traces::outcome_text(traces::read_run_outcome(reader, run)), 200)));
    if (run.status != traces::RunStatus::finished)
        refuse(
            fmt::format("{}: run {} never finished (it is still marked running): diff compares "
                        "finished steps",
                        path, run.id));
    return run;
}

// The run asked for, or the trace's latest run of `kind`.
traces::RunRecord pick_run(const traces::TraceReader& reader, const std::string& path,
                           std::optional<std::int64_t> asked, traces::RunKind kind) {
    if (asked)
        return checked_run(reader, reader.run(*asked), path, kind);
    const std::vector<traces::RunRecord> runs = reader.runs();
    for (auto run = runs.rbegin(); run != runs.rend(); ++run)
        if (run->kind == kind)
            return checked_run(reader, *run, path, kind);
    if (runs.empty())
        refuse(fmt::format("{}: the trace holds no run", path));
    refuse(fmt::format("{}: the trace holds no {} run ({} run{}, pick one with --{}-run)", path,
                       kind_name(kind), runs.size(), runs.size() == 1 ? "" : "s", kind_name(kind)));
}

// The real runs asked for (each once), or REAL's latest.
std::vector<traces::RunRecord> pick_real_runs(const traces::TraceReader& reader,
                                              const DiffOptions& options) {
    if (options.real_runs.empty())
        return {pick_run(reader, options.real, std::nullopt, traces::RunKind::real)};
    std::vector<traces::RunRecord> runs;
    for (std::size_t index = 0; index < options.real_runs.size(); ++index) {
        const std::int64_t id = options.real_runs[index];
        if (std::find(options.real_runs.begin(), options.real_runs.begin() + index, id) !=
            options.real_runs.begin() + index)
            refuse(fmt::format("--real-run names run {} twice: each run's steps count once", id));
        traces::RunRecord run = pick_run(reader, options.real, id, traces::RunKind::real);
        // Steps of another model, batch or transport would be pooled as if they were repeats
        // (another shape is refused against SIM, for every run, by check_comparable).
        if (!runs.empty() && traces::same_shape(run, runs.front()))
            if (const auto setting = config_difference(run.config, runs.front().config)) {
                const std::string first = fmt::format("run {}", runs.front().id);
                refuse(
                    fmt::format("{} run {} is not configured as {}: runs compared together "
                                "are repeats of one configuration ({})",
                                options.real, id, first, describe_difference(*setting, first)));
            }
        runs.push_back(std::move(run));
    }
    return runs;
}

void check_comparable(const DiffOptions& options, const traces::RunRecord& real,
                      const traces::RunRecord& sim) {
    const auto differ = [&](std::string_view what, const auto& real_value, const auto& sim_value) {
        if (real_value != sim_value)
            refuse(fmt::format(
                "{} run {} has {} {} but {} run {} has {} {}: not the same "
                "configuration",
                options.real, real.id, what, real_value, options.sim, sim.id, what, sim_value));
    };
    differ("schedule", real.schedule, sim.schedule);
    differ("pp", real.pp, sim.pp);
    differ("v", real.v, sim.v);
    differ("m", real.m, sim.m);
}

// A finished run without one action row (a damaged trace, or a writer that kept none) has no
// step to compare: its figures would all read 0, and a rank's speed 1.000x.
analysis::TimedSchedule with_actions(analysis::TimedSchedule timed, const std::string& path,
                                     const traces::RunRecord& run) {
    const bool any = std::any_of(timed.schedule.ranks.begin(), timed.schedule.ranks.end(),
                                 [](const auto& actions) { return !actions.empty(); });
    if (!any)
        refuse(
            fmt::format("{}: run {} is marked finished but holds no actions: there is no step "
                        "to compare",
                        path, run.id));
    return timed;
}

std::string run_title(const std::string& path, const traces::RunRecord& run) {
    return fmt::format("{} run {} ({}, {} pp={} v={} m={})", path, run.id, kind_name(run.kind),
                       run.schedule, run.pp, run.v, run.m);
}

nlohmann::ordered_json measured_json(const analysis::Measured& figure) {
    return {{"measured_ns", figure.measured},
            {"simulated_ns", figure.simulated},
            {"difference_ns", figure.difference()}};
}

nlohmann::ordered_json split_json(const analysis::DivergenceSplit& split) {
    return {{"speed_ns", split.speed_ns},
            {"kinds_ns", split.kinds_ns},
            {"communication_ns", split.communication_ns},
            {"ordering_ns", split.ordering_ns}};
}

nlohmann::ordered_json step_json(const analysis::StepDivergence& step,
                                 const std::vector<traces::RunRecord>& reals) {
    nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
    for (const analysis::RankDivergence& rank : step.ranks)
        ranks.push_back({{"rank", rank.rank},
                         {"speed", rank.speed},
                         {"busy", measured_json(rank.busy)},
                         {"waiting", measured_json(rank.waiting)},
                         {"bubble", measured_json(rank.bubble)}});
    nlohmann::ordered_json waits = nlohmann::ordered_json::array();
    for (const analysis::WaitChange& change : step.waits)
        waits.push_back({{"rank", change.rank},
                         {"action", change.label},
                         {"measured_waited_for", change.measured_wait},
                         {"simulated_waited_for", change.simulated_wait}});
    return {{"real_run", reals[static_cast<std::size_t>(step.real_run)].id},
            {"real_step", step.real_step},
            {"sim_step", step.sim_step},
            {"step_time", measured_json(step.step_time)},
            {"at_rank_speed_ns", step.step_time.simulated + step.split.speed_ns},
            {"split", split_json(step.split)},
            {"ranks", std::move(ranks)},
            {"waits", std::move(waits)}};
}

nlohmann::ordered_json divergence_json(const DiffOptions& options,
                                       const std::vector<traces::RunRecord>& reals,
                                       const traces::RunRecord& sim,
                                       const analysis::RunDivergence& diff) {
    const auto run_id = [&](int position) { return reals[static_cast<std::size_t>(position)].id; };
    const traces::RunRecord& real = reals.front();
    std::vector<std::int64_t> real_ids;
    for (const traces::RunRecord& run : reals)
        real_ids.push_back(run.id);
    nlohmann::ordered_json steps = nlohmann::ordered_json::array(),
                           kinds = nlohmann::ordered_json::array(),
                           top = nlohmann::ordered_json::array(),
                           unmatched = nlohmann::ordered_json::array();
    for (const analysis::StepDivergence& step : diff.steps)
        steps.push_back(step_json(step, reals));
    for (const analysis::KindDivergence& kind : diff.kinds)
        kinds.push_back(
            {{"kind", kind.kind}, {"median_ratio", kind.median_ratio}, {"actions", kind.actions}});
    for (const analysis::ActionDivergence& action : diff.top)
        top.push_back({{"real_run", run_id(action.real_run)},
                       {"rank", action.rank},
                       {"step", action.step},
                       {"action", action.label},
                       {"measured_ns", action.measured_ns},
                       {"simulated_ns", action.simulated_ns},
                       // Measured over nothing simulated has no ratio (0 read as "took no time").
                       {"ratio", action.simulated_ns > 0 ? nlohmann::json(action.ratio)
                                                         : nlohmann::json(nullptr)}});
    for (const analysis::UnmatchedAction& action : diff.unmatched)
        unmatched.push_back({{"real_run", run_id(action.real_run)},
                             {"side", action.real ? "real" : "sim"},
                             {"rank", action.rank},
                             {"step", action.step},
                             {"action", action.label}});
    return {{"real", {{"trace", options.real}, {"run", real.id}, {"runs", real_ids}}},
            {"sim", {{"trace", options.sim}, {"run", sim.id}}},
            {"schedule", real.schedule},
            {"pp", real.pp},
            {"v", real.v},
            {"m", real.m},
            {"over_steps",
             {{"steps", diff.steps.size()},
              {"median_step_time", measured_json(diff.median_step_time)},
              {"mean_split", split_json(diff.mean_split)}}},
            {"steps", std::move(steps)},
            {"kinds", std::move(kinds)},
            {"top", std::move(top)},
            {"unmatched", std::move(unmatched)}};
}

std::string signed_duration(std::int64_t ns) {
    return (ns > 0 ? "+" : ns < 0 ? "-" : "") + format_duration(ns < 0 ? -ns : ns);
}

std::string measured_text(const analysis::Measured& figure) {
    return fmt::format("{} / {} ({})", format_duration(figure.measured),
                       format_duration(figure.simulated), signed_duration(figure.difference()));
}

// How the text names a real step: its number, or "run:step" when several runs were compared.
class StepNames {
  public:
    explicit StepNames(const std::vector<traces::RunRecord>& reals) : reals_(reals) {}
    bool several_runs() const { return reals_.size() > 1; }
    std::size_t runs() const { return reals_.size(); }
    std::string column() const { return several_runs() ? "run:step" : "step"; }
    int width() const { return several_runs() ? 8 : 4; }
    std::string operator()(int real_run, int step) const {
        if (!several_runs())
            return std::to_string(step);
        return fmt::format("{}:{}", reals_[static_cast<std::size_t>(real_run)].id, step);
    }
    std::string sentence(int real_run, int step) const {  // "step 3", "run 5 step 3"
        if (!several_runs())
            return fmt::format("step {}", step);
        return fmt::format("run {} step {}", reals_[static_cast<std::size_t>(real_run)].id, step);
    }

  private:
    const std::vector<traces::RunRecord>& reals_;
};

void print_steps(const analysis::RunDivergence& diff, const StepNames& names) {
    fmt::print("{:>{}}  {:>12}  {:>12}  {:>12}  {:>12}  {:>12}  {:>13}  {:>12}\n", names.column(),
               names.width(), "measured", "simulated", "difference", "speed", "kinds",
               "communication", "ordering");
    const auto row = [&](const std::string& step, const analysis::Measured& time,
                         const analysis::DivergenceSplit& split) {
        fmt::print("{:>{}}  {:>12}  {:>12}  {:>12}  {:>12}  {:>12}  {:>13}  {:>12}\n", step,
                   names.width(), format_duration(time.measured), format_duration(time.simulated),
                   signed_duration(time.difference()), signed_duration(split.speed_ns),
                   signed_duration(split.kinds_ns), signed_duration(split.communication_ns),
                   signed_duration(split.ordering_ns));
    };
    for (const analysis::StepDivergence& step : diff.steps)
        row(names(step.real_run, step.real_step), step.step_time, step.split);
    if (diff.steps.size() > 1)
        fmt::print(
            "over {} steps{}: median measured {}, median simulated {}; mean split speed {}, "
            "kinds {}, communication {}, ordering {}\n",
            diff.steps.size(),
            names.several_runs() ? fmt::format(" of {} runs", names.runs()) : std::string(),
            format_duration(diff.median_step_time.measured),
            format_duration(diff.median_step_time.simulated),
            signed_duration(diff.mean_split.speed_ns), signed_duration(diff.mean_split.kinds_ns),
            signed_duration(diff.mean_split.communication_ns),
            signed_duration(diff.mean_split.ordering_ns));
}

// Each rank's figures in the median step (one step: that step), whole, as run and summary show
// a run of several steps.
void print_ranks(const analysis::RunDivergence& diff, const StepNames& names) {
    if (diff.steps.empty())
        return;
    std::vector<std::int64_t> step_times;
    for (const analysis::StepDivergence& step : diff.steps)
        step_times.push_back(step.step_time.measured);
    const analysis::StepDivergence& step =
        diff.steps[analysis::median_step(step_times, diff.median_step_time.measured).value_or(0)];
    fmt::print("\nper rank{} (measured / simulated):\n{:>4}  {:>6}  {:<34}  {:<34}  {}\n",
               diff.steps.size() > 1 ? fmt::format(", {}, the median one",
                                                   names.sentence(step.real_run, step.real_step))
                                     : std::string(),
               "rank", "speed", "busy", "waiting", "bubble");
    for (const analysis::RankDivergence& rank : step.ranks)
        fmt::print("{:>4}  {:>5.3f}x  {:<34}  {:<34}  {}\n", rank.rank, rank.speed,
                   measured_text(rank.busy), measured_text(rank.waiting),
                   measured_text(rank.bubble));
}

// Computations that waited last for something else than simulated, at most `limit` per step.
void print_waits(const analysis::RunDivergence& diff, const StepNames& names, int limit) {
    for (const analysis::StepDivergence& step : diff.steps) {
        if (step.waits.empty())
            continue;
        fmt::print("\n{}: {} computation{} waited last for something else than simulated:\n",
                   names.sentence(step.real_run, step.real_step), step.waits.size(),
                   step.waits.size() == 1 ? "" : "s");
        const std::size_t shown = std::min(step.waits.size(), static_cast<std::size_t>(limit));
        for (std::size_t index = 0; index < shown; ++index) {
            const analysis::WaitChange& change = step.waits[index];
            fmt::print("  rank {} {}: waited for {} (simulated: {})\n", change.rank, change.label,
                       change.measured_wait.empty() ? "nothing" : change.measured_wait,
                       change.simulated_wait.empty() ? "nothing" : change.simulated_wait);
        }
        if (shown < step.waits.size())
            fmt::print("  ... and {} more (--json lists all)\n", step.waits.size() - shown);
    }
}

// `listed`: how many of the actions on one side only the text names (--top): a run recorded
// without its transfers left millions, printed one line each.
void print_actions(const analysis::RunDivergence& diff, const StepNames& names,
                   std::size_t listed) {
    fmt::print("\nmedian measured / simulated time by kind:");
    for (const analysis::KindDivergence& kind : diff.kinds)
        fmt::print("  {} {:.3f}x ({})", kind.kind, kind.median_ratio, kind.actions);
    fmt::print("\n");
    if (!diff.top.empty())
        fmt::print("\nthe {} actions furthest off:\n{:>4}  {:>{}}  {:<16}  {:>12}  {:>12}  {:>7}\n",
                   diff.top.size(), "rank", names.column(), names.width(), "action", "measured",
                   "simulated", "ratio");
    for (const analysis::ActionDivergence& action : diff.top)
        fmt::print("{:>4}  {:>{}}  {:<16}  {:>12}  {:>12}  {:>7}\n", action.rank,
                   names(action.real_run, action.step), names.width(), action.label,
                   format_duration(action.measured_ns), format_duration(action.simulated_ns),
                   action.simulated_ns > 0 ? fmt::format("{:.3f}x", action.ratio) : "-");
    if (!diff.unmatched.empty())
        fmt::print("\n{} action{} on one side only:\n", diff.unmatched.size(),
                   diff.unmatched.size() == 1 ? "" : "s");
    const std::size_t shown = std::min(listed, diff.unmatched.size());
    for (std::size_t index = 0; index < shown; ++index) {
        const analysis::UnmatchedAction& action = diff.unmatched[index];
        fmt::print("  {} only: rank {} {} {}\n", action.real ? "real" : "sim", action.rank,
                   names.sentence(action.real_run, action.step), action.label);
    }
    if (shown < diff.unmatched.size())
        fmt::print("  ... and {} more (--json lists all)\n", diff.unmatched.size() - shown);
}

void run_diff(const DiffOptions& options) {
    const traces::TraceReader real_reader(options.real);
    const auto sim_reader = options.sim == options.real
                                ? nullptr
                                : std::make_unique<const traces::TraceReader>(options.sim);
    const traces::TraceReader& sim_source = sim_reader ? *sim_reader : real_reader;
    const std::vector<traces::RunRecord> reals = pick_real_runs(real_reader, options);
    const traces::RunRecord sim =
        pick_run(sim_source, options.sim, options.sim_run, traces::RunKind::simulated);
    for (const traces::RunRecord& real : reals)
        check_comparable(options, real, sim);
    // One real run held at a time: repeats of a long run add their steps, not their size.
    std::optional<analysis::TimedSchedule> current;
    const analysis::RunDivergence diff = analysis::run_divergence(
        reals.size(),
        [&](std::size_t index) -> const analysis::TimedSchedule& {
            current.reset();
            current = with_actions(analysis::read_timed_schedule(real_reader, reals[index].id),
                                   options.real, reals[index]);
            return *current;
        },
        with_actions(analysis::read_timed_schedule(sim_source, sim.id), options.sim, sim),
        options.top.value_or(10));
    if (options.json) {
        fmt::print("{}\n", json_text(divergence_json(options, reals, sim, diff)));
        return;
    }
    const StepNames names(reals);
    for (const traces::RunRecord& real : reals)
        fmt::print("real: {}\n", run_title(options.real, real));
    fmt::print("sim:  {}\n\n", run_title(options.sim, sim));
    print_steps(diff, names);
    print_ranks(diff, names);
    print_waits(diff, names, options.top.value_or(10));
    print_actions(diff, names, static_cast<std::size_t>(options.top.value_or(10)));
}

}  // namespace

void add_diff_command(CLI::App& app) {
    auto options = std::make_shared<DiffOptions>();
    CLI::App* command = app.add_subcommand(
        "diff",
        "Where a real run went apart from its simulation: step time, ranks, kinds, the "
        "actions furthest off, and the difference split into speed, kinds, "
        "communication and ordering");
    add_trace_argument(*command, options->real, "Trace holding the real run");
    command->add_option("sim", options->sim, "Trace holding the simulation (may be REAL itself)")
        ->required()
        ->check(trace_file("diff"));
    add_run_list_option(*command, "--real-run", options->real_runs,
                        "Real run to compare (default: REAL's latest real run); repeat it, or "
                        "list runs with commas, to compare repeats of one configuration "
                        "together, their steps pooled");
    command
        ->add_option("--sim-run", options->sim_run,
                     "Simulated run to compare (default: SIM's latest simulated run)")
        ->check(int64_number());
    add_count_option(*command, "--top", options->top,
                     "How many of the actions furthest off, waits and actions on one side only "
                     "to list (default 10)",
                     0);
    command->add_flag("--json", options->json, "Print JSON instead of tables");
    command->callback([options] { run_diff(*options); });
}

}  // namespace pipelens::cli
