// The workbench: an experiment edited in the viewer and simulated as it changes, off the UI
// thread, by the same library call `pipelens simulate` makes (sim::simulate_experiment); a
// pinned simulation to compare with; and a grid of schedule kinds x m simulated as `pipelens
// sweep` simulates its configurations (sim::simulate_sweep_configuration). GUI-free: the
// Simulate and Compare panels and the viewer's script (viewer_script.hpp) drive it through the
// same functions, and tests drive it without a window.
//
// Invariants: `current()` is the simulation of the experiment as it was when that simulation
// started (never a half-applied edit); a change made while a simulation runs starts another
// once it ends, so the last change is always the one shown in the end; a value the experiment
// file would refuse is never applied: the edit reports the engine's message and keeps the old
// value. Every simulation of the workbench is a fresh engine call: nothing is cached.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/viewer/run_summary.hpp"
#include "app/viewer/timeline_model.hpp"
#include "engine/experiment/experiment.hpp"

namespace pipelens::viewer {

struct TraceSession;

// One simulation as the viewer shows it: the timeline (built from the rows the simulation would
// record) and its figures, with what the header shows of it found on the worker too, so the
// frame that takes the run in does not walk its actions. The timeline comes without its hold
// analysis (TimelineModel::from_records without `analyse`).
struct SimulatedRun {
    Experiment experiment;  // as simulated
    std::string subject;    // "1F1B pp=4 v=1 m=8", as `pipelens simulate` titles it
    std::shared_ptr<const TimelineModel> model;
    std::int64_t step_time_ns = 0;
    double bubble_ratio = 0;
    std::vector<std::int64_t> peak_memory_bytes;  // by rank
    std::vector<double> rank_bubble_ratio;        // by rank
    RunSummary summary;                           // summarize(*model) of a finished run
    // The simulation and the timeline, on the worker; the timeline's critical path and bubble
    // causes come after, on the session's thread (show_simulation).
    std::int64_t took_ns = 0;
};

// One cell of the kinds x m grid: configuration `index` of the sweep over those two axes.
struct GridCell {
    std::string kind;
    int m = 0;
    std::int64_t step_time_ns = 0;
    double bubble_ratio = 0;
    std::string error;  // the engine's reason when the combination is impossible
};

// Why the grid's n/a cells were not simulated, said once per reason with the cells it holds
// for, in the grid's order: "Interleaved1F1B, ZBVZeroBubble: costs.f: has 4 values but the
// schedule has 8 stages ...", "DualPipeV m=4: ...". A kind's cells are named by m only where the
// reason holds for some of them.
std::vector<std::string> grid_refusals(const std::vector<GridCell>& cells);

// Simulates `experiment` (validated first, as `pipelens simulate` does) into a SimulatedRun;
// throws what the engine throws (ExperimentError, ScheduleConfigError, ScheduleHangError...).
SimulatedRun simulate_run(Experiment experiment);

// The experiment key a short name stands for, as `--sweep` reads it ("pp" -> "schedule.pp",
// "f" -> "costs.f"), and the value as TOML text ("8", "\"ZBVZeroBubble\"").
struct FieldSetting {
    std::string key;
    std::string value;
};
FieldSetting field_setting(std::string_view name, std::string_view value);

// The longest a frame waits for a due simulation (Workbench::hold_for_due_result): input is
// drawn at least this often while one runs.
inline constexpr std::chrono::milliseconds kMostFrameHold{50};

class Workbench {
  public:
    Workbench();  // the default experiment (assets/examples/default.toml)
    ~Workbench();
    Workbench(const Workbench&) = delete;
    Workbench& operator=(const Workbench&) = delete;

    const Experiment& experiment() const { return experiment_; }
    // Replaces the experiment (an example, a file) and simulates it.
    void load(Experiment experiment);
    // Sets one field by its short or dotted name, as an experiment file would; false, with
    // field_error() set to the engine's message, when the value is refused (the field keeps its
    // value). A change starts a simulation.
    bool set(std::string_view name, std::string_view value);
    // The schedule kind, with v the kind's own (as a file naming only the kind); false, with
    // field_error() set, for an unknown kind.
    bool set_kind(std::string_view kind);
    void simulate();  // again, unchanged (the Simulate button)

    // Takes a finished simulation or grid (true when one arrived) and starts the next one a
    // change asked for. Call it every frame.
    bool poll();
    bool busy() const;
    void wait_idle();  // until every asked simulation and grid has arrived (scripts, tests)
    // Holds the caller (the UI thread, before it draws a frame) until the running simulation
    // arrives, when it is expected within `most`: as long as the last one took, from its change.
    // A frame drawn meanwhile could not show it, and one being drawn when it lands delays it by
    // up to a frame; held, the next frame starts as it lands. The hold ends at `most`, or when
    // the simulation has taken twice the last one's time; one expected later (a long one) holds
    // nothing: the window keeps drawing.
    void hold_for_due_result(std::chrono::nanoseconds most) const;

    const std::optional<SimulatedRun>& current() const { return current_; }
    // Why the last simulation failed (the engine's message), and the field it names ("schedule.pp"
    // ...; empty when it names none); empty when it succeeded.
    const std::string& error() const { return error_; }
    const std::string& error_key() const { return error_key_; }
    // The last refused edit: its key and the message; empty after an accepted one.
    const std::string& field_error() const { return field_error_; }
    const std::string& field_error_key() const { return field_error_key_; }
    // Change to result ready, of the last simulation that arrived (what a person waits for,
    // less the frame that draws it).
    std::int64_t latency_ns() const { return latency_ns_; }
    std::uint64_t generation() const { return generation_; }  // counts arrived simulations
    // A copy of `run`'s model for a view to own and change (a step's analysis redraws it), made
    // on the worker; once per simulation, and only while `run` is the current one (else empty).
    std::optional<TimelineModel> take_model_copy(const SimulatedRun& run);

    void pin();  // the current simulation becomes the one compared with
    void unpin();
    const std::optional<SimulatedRun>& pinned() const { return pinned_; }

    // Simulates every kind in `kinds` x every m in `ms` with the rest of the experiment as it
    // is, on the worker; grid() holds the cells once poll() has taken them (kinds fastest last:
    // cell k * ms.size() + j is kinds[k], ms[j]).
    void request_grid(std::vector<std::string> kinds, std::vector<int> ms);
    const std::vector<GridCell>& grid() const { return grid_; }
    const std::vector<std::string>& grid_kinds() const { return grid_kinds_; }
    const std::vector<int>& grid_ms() const { return grid_ms_; }
    // Makes a grid cell the experiment (a click on it) and simulates it: the experiment the grid
    // was simulated from with the cell's kind and m, so what opens is what the cell showed.
    bool open_cell(std::size_t index);
    // The experiment has changed, other than in kind, v and m (which the grid varies), since
    // the grid was simulated: its cells show another experiment's figures.
    bool grid_is_stale() const;

    std::string toml() const;  // the experiment as a file (experiment_to_toml)
    void save(const std::filesystem::path& path) const;  // throws std::runtime_error
    // Simulates the experiment again and records it in `trace` (created when missing), as
    // `pipelens simulate --out` does; the new run's id. Throws what the engine throws.
    std::int64_t record(const std::filesystem::path& trace) const;

  private:
    struct Outcome {
        std::optional<SimulatedRun> run;
        std::string error;
        std::optional<TimelineModel> model_copy;  // of run's model
    };
    void start();
    void note_change();
    // A field changed by a person: no field error, no name (an example's title, "1F1B pp=4 m=8,
    // uneven stages", would contradict the experiment it is saved with), simulated again.
    void accept_change();

    Experiment experiment_;
    std::optional<SimulatedRun> current_, pinned_;
    std::optional<TimelineModel> model_copy_;  // of current_'s model, until taken
    std::string error_, error_key_, field_error_, field_error_key_;
    std::future<Outcome> pending_;
    bool dirty_ = false;  // a change since the running simulation started
    std::chrono::steady_clock::time_point changed_at_{};
    std::chrono::steady_clock::time_point started_change_at_{};
    std::int64_t latency_ns_ = 0;
    std::int64_t last_took_ns_ = 0;  // of the last simulation that arrived
    std::uint64_t generation_ = 0;
    std::future<std::vector<GridCell>> pending_grid_;
    std::vector<GridCell> grid_;
    std::vector<std::string> grid_kinds_;
    std::vector<int> grid_ms_;
    std::optional<Experiment> grid_base_;  // the experiment the grid was simulated from
};

// An example the start screen offers: the embedded default experiment first, then each TOML
// file of the bundled examples' folder (assets/examples), by name.
struct Example {
    std::string name;            // "default", "dual_pipe_v"
    std::string title;           // the experiment's own name
    std::filesystem::path file;  // empty: the embedded default
};
std::vector<Example> bundled_examples(const std::filesystem::path& directory);
Experiment example_experiment(const Example& example);  // throws ExperimentError
// The bundled examples' folder: $PIPELENS_EXAMPLES_DIR, else the one this build was made from.
std::filesystem::path examples_directory();

// Shows `run` in `session` as a finished simulated run with no file behind it (the reader is
// closed: its runs, events and errors would not be this run's). `model_copy`, when given, is a
// copy of run's model (Workbench::take_model_copy) taken instead of copying it here. Its
// critical path and bubble causes are found on a thread, as a loaded trace's are
// (poll_analysis applies them).
void show_simulation(TraceSession& session, const SimulatedRun& run,
                     std::optional<TimelineModel> model_copy = std::nullopt);

// The experiment key an engine message names ("schedule.pp"), or empty: the field the Simulate
// panel puts the message beside.
std::string key_named_in(std::string_view message);

}  // namespace pipelens::viewer
