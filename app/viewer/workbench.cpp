// The workbench (workbench.hpp): edits applied as an experiment file's, simulations and the grid
// run on worker threads through the engine's own entry points.
#include "app/viewer/workbench.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <map>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app/viewer/trace_session.hpp"
#include "engine/experiment/experiment_toml.hpp"
#include "engine/experiment/sweep_grid.hpp"
#include "engine/run_record/experiment_schedule.hpp"
#include "sim/experiment_simulation.hpp"
#include "sim/simulation_trace.hpp"
#include "sim/sweep.hpp"

namespace pipelens::viewer {
namespace {

using Clock = std::chrono::steady_clock;

std::int64_t nanoseconds_since(Clock::time_point start) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

bool ready(const auto& future) {
    return future.valid() && future.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

// Without the hold analysis: show_simulation starts it on a thread, as a trace's load does, so
// that the timeline is on screen before its critical path is found.
TimelineModel timeline_of(const sim::ExperimentSimulation& simulation, traces::RunRecord run) {
    sim::SimulationRows rows =
        sim::simulation_rows(*simulation.lowered, simulation.costs, simulation.result);
    return TimelineModel::from_records(std::move(run), std::move(rows.actions),
                                       std::move(rows.pairs), std::move(rows.ranks), rows.memory,
                                       /*analyse=*/false);
}

}  // namespace

SimulatedRun simulate_run(Experiment experiment) {
    const Clock::time_point start = Clock::now();
    SimulatedRun run;
    const sim::ExperimentSimulation simulation = sim::simulate_experiment(experiment);
    const Schedule& lowered = *simulation.lowered;
    const sim::SimulationResult& result = simulation.result;
    run.subject = fmt::format("{} pp={} v={} m={}", lowered.name, experiment.shape.rank_count,
                              experiment.shape.stages_per_rank, experiment.shape.microbatch_count);
    traces::RunRecord record;
    record.kind = traces::RunKind::simulated;
    record.schedule = lowered.name;
    record.pp = lowered.rank_count;
    record.v = lowered.stages_per_rank;
    record.m = lowered.microbatch_count;
    record.status = traces::RunStatus::finished;
    record.step_time_ns = result.step_time_ns;
    record.bubble_ratio = result.bubble_ratio;
    run.model = std::make_shared<const TimelineModel>(timeline_of(simulation, std::move(record)));
    run.summary = summarize(*run.model, traces::run_outcome(run.model->run(), {}));
    run.step_time_ns = result.step_time_ns;
    run.bubble_ratio = result.bubble_ratio;
    for (const sim::RankResult& rank : result.ranks) {
        run.peak_memory_bytes.push_back(rank.peak_memory_bytes);
        run.rank_bubble_ratio.push_back(rank.bubble_ratio);
    }
    run.experiment = std::move(experiment);
    run.took_ns = nanoseconds_since(start);
    return run;
}

FieldSetting field_setting(std::string_view name, std::string_view value) {
    const SweepAxis axis = parse_sweep_flag(fmt::format("{}={}", name, value));
    if (axis.values.size() != 1)
        throw ExperimentError(fmt::format(
            "{}: one value, or a list in brackets with one per stage: [1ms, 2ms]", name));
    return {axis.key, axis.values.front()};
}

std::string key_named_in(std::string_view message) {
    // The longest key first: "schedule.max_activations" before "schedule.m".
    static constexpr std::array kKeys = {"schedule.max_activations",
                                         "schedule.defer_recv",
                                         "schedule.kind",
                                         "schedule.pp",
                                         "schedule.v",
                                         "schedule.m",
                                         "costs.f",
                                         "costs.i",
                                         "costs.w",
                                         "costs.b",
                                         "network",
                                         "transformer",
                                         "schedule"};
    for (const char* key : kKeys) {
        const std::size_t at = message.find(key);
        if (at == std::string_view::npos)
            continue;
        const std::size_t after = at + std::string_view(key).size();
        if (after == message.size() || !std::isalnum(static_cast<unsigned char>(message[after])))
            return key;
    }
    if (message.find("--pp") != std::string_view::npos)
        return "schedule.pp";
    return {};
}

Workbench::Workbench() : experiment_(default_experiment()) {}

Workbench::~Workbench() {
    if (pending_.valid())
        pending_.wait();
    if (pending_grid_.valid())
        pending_grid_.wait();
}

void Workbench::load(Experiment experiment) {
    try {  // the fields show a schedule file's pp, v and m; a file that cannot be read says so
        settle_schedule_file_shape(experiment);  // when simulated
    } catch (const std::exception&) {
    }
    experiment_ = std::move(experiment);
    field_error_.clear();
    field_error_key_.clear();
    note_change();
}

bool Workbench::set(std::string_view name, std::string_view value) {
    std::string key(name);
    try {
        const FieldSetting setting = field_setting(name, value);
        key = setting.key;
        experiment_ =
            apply_experiment_settings(experiment_, {{setting.key, setting.value}}, "workbench");
    } catch (const std::exception& error) {
        field_error_ = error.what();
        field_error_key_ = key;
        return false;
    }
    accept_change();
    return true;
}

void Workbench::accept_change() {
    field_error_.clear();
    field_error_key_.clear();
    experiment_.name.clear();
    note_change();
}

void Workbench::simulate() {
    note_change();
}

void Workbench::note_change() {
    changed_at_ = Clock::now();
    if (pending_.valid())
        dirty_ = true;
    else
        start();
}

void Workbench::start() {
    dirty_ = false;
    started_change_at_ = changed_at_;
    pending_ = std::async(std::launch::async, [experiment = experiment_]() -> Outcome {
        try {
            SimulatedRun run = simulate_run(experiment);
            std::optional<TimelineModel> copy(*run.model);
            return {std::move(run), {}, std::move(copy)};
        } catch (const std::exception& error) {
            return {std::nullopt, error.what(), std::nullopt};
        }
    });
}

bool Workbench::poll() {
    bool arrived = false;
    if (ready(pending_)) {
        Outcome outcome = pending_.get();
        latency_ns_ = nanoseconds_since(started_change_at_);
        if (outcome.run) {
            last_took_ns_ = outcome.run->took_ns;
            current_ = std::move(outcome.run);
            model_copy_ = std::move(outcome.model_copy);
        }
        error_ = std::move(outcome.error);
        error_key_ = key_named_in(error_);
        ++generation_;
        arrived = true;
    }
    if (!pending_.valid() && dirty_)
        start();
    if (ready(pending_grid_)) {
        grid_ = pending_grid_.get();
        arrived = true;
    }
    return arrived;
}

bool Workbench::busy() const {
    return pending_.valid() || dirty_ || pending_grid_.valid();
}

void Workbench::hold_for_due_result(std::chrono::nanoseconds most) const {
    if (!pending_.valid() || last_took_ns_ <= 0)
        return;
    const std::chrono::nanoseconds last(last_took_ns_);
    const Clock::time_point now = Clock::now();
    const Clock::time_point expected = started_change_at_ + last;
    // A busy machine can stretch the same simulation; up to twice its last time is still
    // waited for, longer is a simulation unlike the last and holds nothing more.
    const Clock::time_point given_up = started_change_at_ + 2 * last;
    if (expected > now + most || given_up <= now)
        return;
    pending_.wait_until(std::min(given_up, now + most));
}

void Workbench::wait_idle() {
    while (busy()) {
        if (pending_.valid())
            pending_.wait();
        if (pending_grid_.valid())
            pending_grid_.wait();
        poll();
    }
}

std::optional<TimelineModel> Workbench::take_model_copy(const SimulatedRun& run) {
    if (!current_ || current_->model != run.model)
        return std::nullopt;
    return std::exchange(model_copy_, std::nullopt);
}

void Workbench::pin() {
    pinned_ = current_;
}
void Workbench::unpin() {
    pinned_.reset();
}

namespace {

// The experiment with `kind` and its own v, as a file naming only the kind would have it.
Experiment with_kind(const Experiment& base, const std::string& kind) {
    Experiment experiment =
        apply_experiment_settings(base, {{"schedule.kind", fmt::format("\"{}\"", kind)}}, "kind");
    experiment.shape.stages_per_rank = is_multi_stage(experiment.shape.kind) ? 2 : 1;
    return experiment;
}

// One kind's row of the grid: a sweep over m, each configuration simulated as `pipelens sweep`
// simulates it.
void simulate_grid_row(const Experiment& base, const std::string& kind, const std::vector<int>& ms,
                       std::vector<GridCell>& cells) {
    try {
        SweepAxis axis{"schedule.m", {}, {}, "the grid"};
        for (int m : ms)
            axis.values.push_back(std::to_string(m));
        const SweepGrid grid(with_kind(base, kind), {axis});
        for (std::size_t index = 0; index < grid.size(); ++index) {
            const sim::SweepPoint point = sim::simulate_sweep_configuration(grid, index);
            cells.push_back({kind, ms[index], point.step_time_ns, point.bubble_ratio, point.error});
        }
    } catch (const std::exception& error) {
        for (int m : ms)
            cells.push_back({kind, m, 0, 0, error.what()});
    }
}

}  // namespace

std::vector<std::string> grid_refusals(const std::vector<GridCell>& cells) {
    // Reasons in the order first met; under each, the kinds it holds for and their m.
    std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::vector<int>>>>>
        reasons;
    std::map<std::string, std::size_t> cells_of_kind;
    for (const GridCell& cell : cells) {
        ++cells_of_kind[cell.kind];
        if (cell.error.empty())
            continue;
        auto reason = std::find_if(reasons.begin(), reasons.end(),
                                   [&](const auto& known) { return known.first == cell.error; });
        if (reason == reasons.end())
            reason = reasons.insert(reasons.end(), {cell.error, {}});
        auto& kinds = reason->second;
        if (kinds.empty() || kinds.back().first != cell.kind)
            kinds.push_back({cell.kind, {}});
        kinds.back().second.push_back(cell.m);
    }
    std::vector<std::string> lines;
    for (const auto& [error, kinds] : reasons) {
        std::vector<std::string> where;
        for (const auto& [kind, ms] : kinds)
            where.push_back(ms.size() == cells_of_kind[kind]
                                ? kind
                                : fmt::format("{} m={}", kind, fmt::join(ms, ",")));
        lines.push_back(fmt::format("{}: {}", fmt::join(where, ", "), error));
    }
    return lines;
}

bool Workbench::set_kind(std::string_view kind) {
    try {
        experiment_ = with_kind(experiment_, std::string(kind));
    } catch (const std::exception& error) {
        field_error_ = error.what();
        field_error_key_ = "schedule.kind";
        return false;
    }
    accept_change();
    return true;
}

void Workbench::request_grid(std::vector<std::string> kinds, std::vector<int> ms) {
    if (pending_grid_.valid())
        pending_grid_.wait();
    grid_kinds_ = kinds;
    grid_ms_ = ms;
    grid_.clear();
    grid_base_ = experiment_;
    pending_grid_ = std::async(std::launch::async, [base = experiment_, kinds, ms]() {
        std::vector<GridCell> cells;
        for (const std::string& kind : kinds)
            simulate_grid_row(base, kind, ms, cells);
        return cells;
    });
}

bool Workbench::open_cell(std::size_t index) {
    if (index >= grid_.size() || !grid_[index].error.empty())
        return false;
    const GridCell& cell = grid_[index];
    Experiment chosen = with_kind(*grid_base_, cell.kind);
    set_microbatch_count(chosen, cell.m);
    load(std::move(chosen));
    return true;
}

bool Workbench::grid_is_stale() const {
    if (!grid_base_)
        return false;
    // Compared as files, with the axes the grid varies set alike on both sides.
    Experiment now = experiment_;
    now.shape.kind = grid_base_->shape.kind;
    now.shape.stages_per_rank = grid_base_->shape.stages_per_rank;
    set_microbatch_count(now, grid_base_->shape.microbatch_count);  // the batch follows m back
    now.schedule_file = grid_base_->schedule_file;  // a kind the grid sets replaces a file
    now.schedule_notation = grid_base_->schedule_notation;
    now.stages_per_rank_source = grid_base_->stages_per_rank_source;
    now.microbatch_count_source = grid_base_->microbatch_count_source;
    now.name = grid_base_->name;  // a title, dropped by any change: no part of what is simulated
    return experiment_to_toml(now) != experiment_to_toml(*grid_base_);
}

std::string Workbench::toml() const {
    return experiment_to_toml(experiment_);
}

void Workbench::save(const std::filesystem::path& path) const {
    std::ofstream file(path);
    file << toml();
    if (!file)
        throw std::runtime_error(fmt::format("cannot write {}", path.string()));
}

std::int64_t Workbench::record(const std::filesystem::path& trace) const {
    Experiment experiment = experiment_;
    const sim::ExperimentSimulation simulation = sim::simulate_experiment(experiment, trace);
    return simulation.run_id.value_or(0);
}

std::vector<Example> bundled_examples(const std::filesystem::path& directory) {
    std::vector<Example> examples{{"default", default_experiment().name, {}}};
    std::error_code error;
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(directory, error))
        if (entry.path().extension() == ".toml" && entry.path().stem() != "default")
            files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const std::filesystem::path& file : files) {
        try {
            examples.push_back({file.stem().string(), read_experiment_file(file).name, file});
        } catch (const std::exception&) {
            // not an experiment this build reads: not offered
        }
    }
    return examples;
}

Experiment example_experiment(const Example& example) {
    return example.file.empty() ? default_experiment() : read_experiment_file(example.file);
}

std::filesystem::path examples_directory() {
    if (const char* directory = std::getenv("PIPELENS_EXAMPLES_DIR"); directory && *directory)
        return directory;
#ifdef PIPELENS_INSTALLED_EXAMPLES_DIRECTORY
    // Installed, the examples sit at a fixed place relative to the viewer's bin/; in the build
    // tree that place does not exist and the source folder's are listed.
    std::error_code error;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
    if (!error) {
        const std::filesystem::path installed =
            self.parent_path() / PIPELENS_INSTALLED_EXAMPLES_DIRECTORY;
        if (std::filesystem::is_directory(installed, error))
            return installed.lexically_normal();
    }
#endif
    return PIPELENS_EXAMPLES_DIR;
}

void show_simulation(TraceSession& session, const SimulatedRun& run,
                     std::optional<TimelineModel> model_copy) {
    drop_reload(session);  // of the trace shown before
    forget_file_check(session);
    session.reader.reset();
    session.runs.clear();
    session.compared.reset();
    session.compared_run_id = 0;
    session.match = {};
    session.split = {};
    session.wanted_step.reset();
    replace_model(session, model_copy ? std::make_unique<TimelineModel>(std::move(*model_copy))
                                      : std::make_unique<TimelineModel>(*run.model));
    session.run_id = 0;
    session.live = false;
    session.summary = run.summary;
    session.summary_line = run.subject + "  |  " + summary_text(session.summary);
    session.subject = run.subject;
    start_analysis(session, "simulation", {});
    session.events.clear();
    session.errors.clear();
    session.sharding.clear();
    session.sharding_strategies.clear();
    session.error.clear();
}

}  // namespace pipelens::viewer
