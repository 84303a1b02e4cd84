// The workbench and the viewer's script without a window: each change re-simulates through the
// engine, and the figures are exactly what `pipelens simulate` prints for the same experiment
// (the expected values below were read from `pipelens simulate FILE --json`).
#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <future>
#include <limits>

#include "app/viewer/compare_layout.hpp"
#include "app/viewer/trace_session.hpp"
#include "app/viewer/viewer_script.hpp"
#include "app/viewer/workbench.hpp"
#include "app/viewer/workbench_fields.hpp"
#include "engine/experiment/experiment_toml.hpp"
#include "sim/experiment_simulation.hpp"
#include "traces/trace_reader.hpp"

namespace pipelens::viewer {
namespace {

// 1F1B pp=4 m=8 with the same F, I, W on every stage, so pp can change alone.
constexpr const char* kUniform = R"(
[schedule]
kind = "1F1B"
pp = 4
m = 8
[costs]
f = "1ms"
i = "1ms"
w = "1ms"
activation_bytes = "16MiB"
held_activation_bytes = "1GiB"
[network]
latency = "8us"
bandwidth = "150GB/s"
ranks_per_host = 8
)";

Experiment uniform() {
    return parse_experiment_toml(kUniform, "uniform.toml");
}

void load_and_wait(Workbench& workbench, Experiment experiment) {
    workbench.load(std::move(experiment));
    workbench.wait_idle();
}

TEST(Workbench, TheDefaultExperimentSimulatesToTheStepPipelensSimulatePrints) {
    Workbench workbench;
    load_and_wait(workbench, default_experiment());
    ASSERT_TRUE(workbench.current());
    EXPECT_EQ(workbench.current()->step_time_ns, 39019094);
    EXPECT_DOUBLE_EQ(workbench.current()->bubble_ratio, 0.3644137406163249);
    EXPECT_EQ(workbench.current()->peak_memory_bytes,
              (std::vector<std::int64_t>{7730941132, 5153960754, 3435973836, 2147483648}));
    EXPECT_EQ(workbench.current()->subject, "1F1B pp=4 v=1 m=8");
    EXPECT_EQ(workbench.current()->model->ranks().size(), 4u);
    EXPECT_EQ(workbench.current()->model->end_ns(), 39019094);
}

TEST(Workbench, ChangingPpFromFourToEightGivesEightRanks) {
    Workbench workbench;
    load_and_wait(workbench, uniform());
    EXPECT_EQ(workbench.current()->model->ranks().size(), 4u);
    EXPECT_EQ(workbench.current()->step_time_ns, 34917584);
    ASSERT_TRUE(workbench.set("pp", "8"));
    workbench.wait_idle();
    EXPECT_EQ(workbench.current()->model->ranks().size(), 8u);
    EXPECT_EQ(workbench.current()->step_time_ns, 48116074);
    EXPECT_DOUBLE_EQ(workbench.current()->bubble_ratio, 0.5012061873543548);
    EXPECT_EQ(workbench.current()->model->run().pp, 8);
    EXPECT_EQ(workbench.experiment().shape.rank_count, 8);
}

TEST(Workbench, TheStepIsTheLibrarysForTheSameExperiment) {
    Workbench workbench;
    load_and_wait(workbench, uniform());
    Experiment same = uniform();
    EXPECT_EQ(workbench.current()->step_time_ns,
              sim::simulate_experiment(same).result.step_time_ns);
}

TEST(Workbench, TheLastOfQuickChangesIsTheOneShown) {
    Workbench workbench;
    load_and_wait(workbench, uniform());
    workbench.set("pp", "8");
    workbench.set("pp", "6");
    workbench.set("m", "12");
    workbench.wait_idle();
    EXPECT_EQ(workbench.current()->model->ranks().size(), 6u);
    EXPECT_EQ(workbench.current()->model->run().m, 12);
    EXPECT_FALSE(workbench.busy());
}

TEST(Workbench, AValueTheFileWouldRefuseIsNotAppliedAndSaysWhy) {
    Workbench workbench;
    load_and_wait(workbench, uniform());
    EXPECT_FALSE(workbench.set("pp", "0"));
    EXPECT_EQ(workbench.field_error_key(), "schedule.pp");
    EXPECT_NE(workbench.field_error().find("schedule.pp"), std::string::npos)
        << workbench.field_error();
    EXPECT_EQ(workbench.experiment().shape.rank_count, 4);
    EXPECT_TRUE(workbench.set("pp", "5"));
    EXPECT_TRUE(workbench.field_error().empty());
}

TEST(Workbench, AnImpossibleCombinationShowsTheEnginesMessageAndKeepsTheLastTimeline) {
    Workbench workbench;
    load_and_wait(workbench, default_experiment());  // four per-stage costs
    ASSERT_TRUE(workbench.set("pp", "8"));
    workbench.wait_idle();
    EXPECT_EQ(
        workbench.error(),
        "default experiment: costs.f: has 4 values but the schedule has 8 stages (give one value "
        "for all stages or one per stage)");
    EXPECT_EQ(workbench.error_key(), "costs.f");
    EXPECT_EQ(workbench.current()->model->ranks().size(), 4u);  // what was shown stays
}

TEST(Workbench, ChoosingAKindTakesItsOwnV) {
    Workbench workbench;
    load_and_wait(workbench, uniform());
    ASSERT_TRUE(workbench.set_kind("ZBVZeroBubble"));
    workbench.wait_idle();
    EXPECT_EQ(workbench.experiment().shape.stages_per_rank, 2);
    EXPECT_EQ(workbench.current()->step_time_ns, 52558037);
    EXPECT_FALSE(workbench.set_kind("NoSuchKind"));
    EXPECT_EQ(workbench.field_error_key(), "schedule.kind");
}

// The timeline shows each action by its PyTorch text: derived from its integers, or for an
// OVERLAP_F_B the text the simulation gave it (its parts), as a recorded trace shows them.
TEST(Workbench, EveryActionOfASimulatedTimelineReadsAsPyTorchWritesIt) {
    Workbench workbench;
    Experiment experiment = uniform();
    experiment.shape.microbatch_count = 8;
    load_and_wait(workbench, experiment);
    ASSERT_TRUE(workbench.set_kind("DualPipeV"));
    workbench.wait_idle();
    ASSERT_TRUE(workbench.current()) << workbench.error();
    const TimelineModel& model = *workbench.current()->model;
    int overlaps = 0;
    for (const RankTimeline& rank : model.ranks())
        for (const Lane* lane : {&rank.compute, &rank.communication})
            for (const TimelineAction& action : lane->actions) {
                const std::string text(model.label(action).view());
                if (action.kind ==
                    static_cast<std::uint8_t>(ActionKind::overlap_forward_backward)) {
                    ++overlaps;
                    EXPECT_EQ(text.find(std::to_string(rank.rank) + "OVERLAP_F_B"),
                              std::string::npos)
                        << text;  // not derived: its parts are named
                    EXPECT_NE(text.find('F'), std::string::npos) << text;
                    EXPECT_NE(text.find('B'), std::string::npos) << text;
                } else {
                    EXPECT_EQ(text.rfind(std::to_string(action.stage), 0), 0u) << text;
                }
            }
    EXPECT_GT(overlaps, 0);
    const TimelineAction& first = model.ranks()[0].compute.actions.front();
    EXPECT_EQ(model.label(first).view(), "0F0");
}

TEST(Workbench, APinnedSimulationStaysWhileAnotherIsVaried) {
    Workbench workbench;
    load_and_wait(workbench, uniform());
    workbench.pin();
    workbench.set_kind("ZBVZeroBubble");
    workbench.wait_idle();
    ASSERT_TRUE(workbench.pinned());
    EXPECT_EQ(workbench.pinned()->step_time_ns, 34917584);
    EXPECT_EQ(workbench.current()->step_time_ns, 52558037);
    workbench.unpin();
    EXPECT_FALSE(workbench.pinned());
}

TEST(Workbench, TheGridHoldsEachKindAndMAsPipelensSimulateGivesThem) {
    Workbench workbench;
    workbench.load(uniform());
    workbench.request_grid({"1F1B", "ZBVZeroBubble"}, {4, 8});
    workbench.wait_idle();
    ASSERT_EQ(workbench.grid().size(), 4u);
    const std::vector<std::int64_t> steps = {22198490, 34917584, 31438188, 52558037};
    for (std::size_t cell = 0; cell < 4; ++cell) {
        EXPECT_EQ(workbench.grid()[cell].step_time_ns, steps[cell]) << cell;
        EXPECT_TRUE(workbench.grid()[cell].error.empty()) << workbench.grid()[cell].error;
    }
    EXPECT_EQ(workbench.grid()[2].kind, "ZBVZeroBubble");
    EXPECT_EQ(workbench.grid()[2].m, 4);
    ASSERT_TRUE(workbench.open_cell(2));
    workbench.wait_idle();
    EXPECT_EQ(workbench.current()->step_time_ns, 31438188);
    EXPECT_EQ(workbench.current()->subject, "ZBVZeroBubble pp=4 v=2 m=4");
}

// A cell shows the experiment the grid simulated; a change made since (pp here) must neither
// be opened under the cell's figures nor leave them looking current.
TEST(Workbench, AGridCellOpensTheExperimentTheGridSimulatedAndAChangeSinceMarksItStale) {
    Workbench workbench;
    workbench.load(uniform());
    workbench.request_grid({"1F1B", "ZBVZeroBubble"}, {4, 8});
    workbench.wait_idle();
    EXPECT_FALSE(workbench.grid_is_stale());
    ASSERT_TRUE(workbench.set("pp", "8"));
    workbench.wait_idle();
    EXPECT_TRUE(workbench.grid_is_stale());
    ASSERT_TRUE(workbench.open_cell(1));
    workbench.wait_idle();
    EXPECT_EQ(workbench.current()->subject, "1F1B pp=4 v=1 m=8");
    EXPECT_EQ(workbench.current()->step_time_ns, workbench.grid()[1].step_time_ns);
    // Opening a cell changes only the kind, v and m, which the grid varies.
    EXPECT_FALSE(workbench.grid_is_stale());
    ASSERT_TRUE(workbench.set_kind("ZBVZeroBubble"));
    ASSERT_TRUE(workbench.set("m", "16"));
    EXPECT_FALSE(workbench.grid_is_stale());
    ASSERT_TRUE(workbench.set("f", "2ms"));
    EXPECT_TRUE(workbench.grid_is_stale());
}

// Measured layer costs are one microbatch's: a cell of another m simulates a batch of that many
// such microbatches, and opening it is no change since the grid (its batch once followed m in
// the opened cell but not in the grid's, so the grid read as stale at once).
TEST(Workbench, ACellOfAnotherMOnMeasuredLayersKeepsTheMicrobatchAndTheGridCurrent) {
    Workbench workbench;
    workbench.load(parse_experiment_toml(
        "[schedule]\npp = 2\nm = 4\n[model]\nbatch_size = 128\n[layers]\n"
        "names = [\"layers.0\", \"layers.1\"]\nf = [\"1ms\", \"1ms\"]\ni = [\"1ms\", \"1ms\"]\n"
        "w = [\"1ms\", \"1ms\"]\nb = [\"2ms\", \"2ms\"]\nheld_bytes = [8, 8]\n"
        "output_bytes = [4, 4]\ngradient_bytes = [16, 16]\nbackward_peak_bytes = [2, 2]\n",
        "measured.toml"));
    workbench.request_grid({"1F1B"}, {4, 8});
    workbench.wait_idle();
    ASSERT_EQ(workbench.grid().size(), 2u);
    ASSERT_TRUE(workbench.open_cell(1));
    workbench.wait_idle();
    EXPECT_EQ(workbench.experiment().shape.microbatch_count, 8);
    EXPECT_EQ(workbench.experiment().model.batch_size, 256);  // 32 rows per microbatch, as measured
    EXPECT_FALSE(workbench.grid_is_stale());
}

TEST(Workbench, AGridCellOfAnImpossibleCombinationKeepsTheReason) {
    Workbench workbench;
    workbench.load(uniform());
    workbench.request_grid({"DualPipeV"}, {3});
    workbench.wait_idle();
    ASSERT_EQ(workbench.grid().size(), 1u);
    EXPECT_NE(workbench.grid()[0].error.find("DualPipeV needs at least as many microbatches as "
                                             "stages: m=3 < stages=8 (2*pp, pp=4)"),
              std::string::npos)
        << workbench.grid()[0].error;
    EXPECT_FALSE(workbench.open_cell(0));
}

// Under the grid, each reason once, with the cells it holds for: a kind whose every m is refused
// is named alone, one refused for some m names them.
TEST(Workbench, TheGridSaysOnceWhyEachCellWasNotSimulated) {
    const std::vector<GridCell> cells{
        {"1F1B", 4, 1000, 0.5, ""},
        {"1F1B", 8, 2000, 0.25, ""},
        {"Interleaved1F1B", 4, 0, 0, "costs.f: has 4 values but the schedule has 8 stages"},
        {"Interleaved1F1B", 8, 0, 0, "costs.f: has 4 values but the schedule has 8 stages"},
        {"ZBVZeroBubble", 4, 0, 0, "costs.f: has 4 values but the schedule has 8 stages"},
        {"ZBVZeroBubble", 8, 0, 0, "costs.f: has 4 values but the schedule has 8 stages"},
        {"DualPipeV", 4, 0, 0, "DualPipeV needs m >= 8"},
        {"DualPipeV", 8, 3000, 0.1, ""}};
    EXPECT_EQ(grid_refusals(cells),
              (std::vector<std::string>{
                  "Interleaved1F1B, ZBVZeroBubble: costs.f: has 4 values but the schedule has 8 "
                  "stages",
                  "DualPipeV m=4: DualPipeV needs m >= 8"}));
    EXPECT_TRUE(grid_refusals({cells[0], cells[1]}).empty());
}

TEST(Workbench, SavedTomlReadsBackAndRecordedRunHasTheSameStep) {
    Workbench workbench;
    load_and_wait(workbench, uniform());
    workbench.set("pp", "8");
    workbench.wait_idle();
    const auto directory = std::filesystem::temp_directory_path() /
                           ("pipelens_workbench_" + std::to_string(::getpid()));
    std::filesystem::create_directories(directory);
    workbench.save(directory / "saved.toml");
    EXPECT_EQ(read_experiment_file(directory / "saved.toml").shape.rank_count, 8);
    const std::int64_t run = workbench.record(directory / "trace.db");
    traces::TraceReader reader(directory / "trace.db");
    EXPECT_EQ(reader.runs().back().id, run);
    EXPECT_EQ(reader.runs().back().step_time_ns, 48116074);
    std::filesystem::remove_all(directory);
}

// The app's own timeline names each OVERLAP_F_B by its own parts, as the recorded trace does:
// the DualPipeV example once showed '(7UNSHARD;0F0)OVERLAP_F_B' (parts read at the wrong place
// in the pool), so its critical path was "trace is corrupt" and its one step read as two.
TEST(Workbench, AnOverlapIsNamedAsTheRecordedTraceNamesIt) {
    Experiment dual = uniform();
    dual.shape.kind = ScheduleKind::dual_pipe_v;
    dual.shape.stages_per_rank = 2;
    dual.shape.microbatch_count = 10;
    Workbench workbench;
    load_and_wait(workbench, dual);
    ASSERT_TRUE(workbench.current()) << workbench.error();
    TraceSession shown;
    show_simulation(shown, *workbench.current());
    finish_analysis(shown);
    EXPECT_EQ(shown.critical_path_line.rfind("critical path: F ", 0), 0u)
        << shown.critical_path_line;
    EXPECT_EQ(shown.summary.steps.size(), 1u);
    const auto directory =
        std::filesystem::temp_directory_path() / ("pipelens_overlap_" + std::to_string(::getpid()));
    std::filesystem::create_directories(directory);
    workbench.record(directory / "trace.db");
    TraceSession recorded;
    ASSERT_TRUE(open_trace(recorded, directory / "trace.db")) << recorded.error;
    const TimelineModel& app = *shown.model;
    const TimelineModel& file = *recorded.model;
    ASSERT_EQ(app.ranks().size(), file.ranks().size());
    std::size_t overlaps = 0;
    for (std::size_t rank = 0; rank < app.ranks().size(); ++rank) {
        const auto& ours = app.ranks()[rank].compute.actions;
        const auto& theirs = file.ranks()[rank].compute.actions;
        ASSERT_EQ(ours.size(), theirs.size()) << "rank " << rank;
        for (std::size_t at = 0; at < ours.size(); ++at) {
            EXPECT_EQ(app.label(ours[at]), file.label(theirs[at])) << "rank " << rank;
            overlaps += app.label(ours[at]).view().ends_with("OVERLAP_F_B");
        }
    }
    EXPECT_GT(overlaps, 4u);
    std::filesystem::remove_all(directory);
}

// An experiment that names a schedule file shows the file's pp, v and m, saves a file that reads
// back (no pp = 0 beside it), and a kind chosen in its grid replaces the file on the same
// pipeline (the grid once crashed on the bundled PyTorch CSV example).
TEST(Workbench, AScheduleFilesExperimentShowsSavesAndGridsItsShape) {
    Workbench workbench;
    load_and_wait(workbench,
                  read_experiment_file(PIPELENS_SOURCE_DIR "/assets/examples/pytorch_csv.toml"));
    ASSERT_TRUE(workbench.current()) << workbench.error();
    const Experiment& shown = workbench.experiment();
    EXPECT_EQ(field_text(shown, "schedule.kind"), "file zb1p_pp4_v2_m8.csv");
    EXPECT_EQ(field_text(shown, "schedule.pp"), "4");
    EXPECT_EQ(field_text(shown, "schedule.v"), "2");
    EXPECT_EQ(field_text(shown, "schedule.m"), "8");
    const auto directory = std::filesystem::temp_directory_path() /
                           ("pipelens_file_experiment_" + std::to_string(::getpid()));
    std::filesystem::create_directories(directory);
    workbench.save(directory / "saved.toml");
    Experiment saved = read_experiment_file(directory / "saved.toml");
    EXPECT_EQ(sim::simulate_experiment(saved).result.step_time_ns,
              workbench.current()->step_time_ns);
    std::filesystem::remove_all(directory);
    workbench.request_grid({"1F1B", "GPipe"}, {4});
    workbench.wait_idle();
    ASSERT_EQ(workbench.grid().size(), 2u);
    for (const GridCell& cell : workbench.grid())
        EXPECT_TRUE(cell.error.empty()) << cell.kind << ": " << cell.error;
    // The example's title describes it as loaded: a change drops it (a saved file once kept
    // "PyTorch CSV: InterleavedZeroBubble pp=4 v=2 m=8" for a 1F1B m=4 experiment).
    EXPECT_FALSE(workbench.experiment().name.empty());
    ASSERT_TRUE(workbench.set("m", "4"));
    EXPECT_TRUE(workbench.experiment().name.empty());
    EXPECT_FALSE(workbench.grid_is_stale());  // m is what the grid varies
    ASSERT_TRUE(workbench.open_cell(0));      // 1F1B in place of the file: still the grid's
    EXPECT_FALSE(workbench.grid_is_stale());
}

TEST(Workbench, AShownSimulationHasNoFileBehindIt) {
    Workbench workbench;
    load_and_wait(workbench, uniform());
    TraceSession session;
    show_simulation(session, *workbench.current());
    EXPECT_FALSE(session.reader);
    ASSERT_TRUE(session.model);
    EXPECT_EQ(session.model->ranks().size(), 4u);
    EXPECT_EQ(session.model->run().step_time_ns, 34917584);
    EXPECT_NE(session.summary_line.find("1F1B pp=4 v=1 m=8"), std::string::npos);
    // The timeline first, its critical path and bubble causes found after, on a thread.
    EXPECT_EQ(session.critical_path_line, "critical path: finding it...");
    finish_analysis(session);
    EXPECT_FALSE(session.model->critical_path().actions.empty());
    EXPECT_EQ(session.critical_path_line,
              critical_path_text(*session.model, session.summary.steps.size()));
    EXPECT_EQ(session.critical_path_line.rfind("critical path: F ", 0), 0u)
        << session.critical_path_line;
}

TEST(Workbench, TheModelCopyIsTheCurrentRunsTakenOnceAndShownAsIs) {
    Workbench workbench;
    load_and_wait(workbench, uniform());
    const SimulatedRun first = *workbench.current();
    EXPECT_TRUE(first.model->critical_path().actions.empty());  // found once it is shown
    EXPECT_EQ(first.summary.step_ns, 34917584);
    EXPECT_EQ(first.summary.ranks.size(), 4u);
    ASSERT_TRUE(workbench.set("m", "12"));
    workbench.wait_idle();
    EXPECT_FALSE(workbench.take_model_copy(first));  // not the current run any more
    std::optional<TimelineModel> copy = workbench.take_model_copy(*workbench.current());
    ASSERT_TRUE(copy);
    EXPECT_NE(&*copy, workbench.current()->model.get());
    EXPECT_EQ(copy->action_count(), workbench.current()->model->action_count());
    EXPECT_EQ(copy->end_ns(), workbench.current()->model->end_ns());
    EXPECT_FALSE(workbench.take_model_copy(*workbench.current()));  // once
    TraceSession session;
    show_simulation(session, *workbench.current(), std::move(copy));
    ASSERT_TRUE(session.model);
    EXPECT_EQ(session.model->action_count(), workbench.current()->model->action_count());
    finish_analysis(session);
    EXPECT_EQ(session.critical_path_line,
              critical_path_text(*session.model, session.summary.steps.size()));
    EXPECT_EQ(session.summary.steps.size(), workbench.current()->summary.steps.size());
}

// A simulation shown in place of a damaged file: the file's damage is no longer said, and its
// integrity check, still running, is retired rather than waited for (a check's thread holds a
// future's destructor up for the rest of a large file's check).
TEST(Workbench, ASimulationShownInPlaceOfAFileForgetsTheFilesCheck) {
    Workbench workbench;
    load_and_wait(workbench, uniform());
    TraceSession session;
    std::promise<std::string> unfinished;
    session.integrity = unfinished.get_future();
    session.damage = "run.db: trace is corrupt: ...";
    show_simulation(session, *workbench.current());
    EXPECT_EQ(session.damage, "");
    EXPECT_FALSE(session.integrity.valid());
    ASSERT_EQ(session.retired_checks.size(), 1u);
    unfinished.set_value("run.db: trace is corrupt: ...");  // ends after the file went
    poll_analysis(session);
    EXPECT_TRUE(session.retired_checks.empty());
    EXPECT_EQ(session.damage, "");
}

// A person dragging a value: each new simulation replaces the shown one while that one's
// critical path is still being found. The window must not wait for it (a frame would stall for
// the whole analysis); it is retired with its model, and the new model's analysis starts once no
// retired one is left, so that one analysis at a time takes a core.
TEST(Workbench, ANewSimulationReplacesTheShownOneWithoutWaitingForItsAnalysis) {
    Workbench workbench;
    load_and_wait(workbench, uniform());
    const SimulatedRun first = *workbench.current();
    ASSERT_TRUE(workbench.set("m", "12"));
    workbench.wait_idle();
    const SimulatedRun second = *workbench.current();
    TraceSession session;
    show_simulation(session, first);
    finish_analysis(session);
    // An analysis of the shown model that has not finished: it finishes when the test says so.
    std::promise<HoldAnalysis> unfinished;
    session.pending_analysis = unfinished.get_future();
    const TimelineModel* replaced = session.model.get();

    show_simulation(session, second);  // returns although the analysis has not finished
    ASSERT_EQ(session.retired_analyses.size(), 1u);
    EXPECT_EQ(session.retired_analyses.front().model.get(), replaced);  // still where it read
    EXPECT_EQ(session.model->action_count(), second.model->action_count());
    EXPECT_FALSE(session.pending_analysis.valid());  // waiting for the retired one
    EXPECT_TRUE(analysis_pending(session));
    EXPECT_EQ(session.critical_path_line, "critical path: finding it...");
    EXPECT_FALSE(poll_analysis(session));
    EXPECT_EQ(session.retired_analyses.size(), 1u);

    unfinished.set_value(HoldAnalysis{});
    poll_analysis(session);  // lets the retired one go and starts the new model's
    EXPECT_TRUE(session.retired_analyses.empty());
    EXPECT_TRUE(session.pending_analysis.valid());
    finish_analysis(session);
    EXPECT_FALSE(analysis_pending(session));
    EXPECT_FALSE(session.model->critical_path().actions.empty());
    EXPECT_EQ(session.critical_path_line,
              critical_path_text(*session.model, session.summary.steps.size()));
}

TEST(Workbench, FieldNamesAreTheSweepsNames) {
    EXPECT_EQ(field_setting("pp", "8").key, "schedule.pp");
    EXPECT_EQ(field_setting("f", "[1ms, 2ms]").value, "[\"1ms\", \"2ms\"]");
    EXPECT_EQ(field_setting("rendezvous", "true").key, "network.rendezvous");
    EXPECT_EQ(key_named_in("x.toml: costs.f: has 4 values"), "costs.f");
    EXPECT_EQ(key_named_in("schedule.max_activations: bad"), "schedule.max_activations");
    EXPECT_EQ(key_named_in("nothing named"), "");
}

TEST(ViewerScript, ParsesVerbsAndNamesTheLineOfAnUnknownOne) {
    const auto commands = parse_script("# a journey\nset pp 8\n\nclick simulate\nwait-idle\n", "s");
    ASSERT_EQ(commands.size(), 3u);
    EXPECT_EQ(commands[0].line, 2);
    EXPECT_EQ(commands[0].words, (std::vector<std::string>{"pp", "8"}));
    EXPECT_EQ(commands[1].verb, "simulate");
    EXPECT_EQ(commands[2].line, 5);
    try {
        parse_script("set pp 8\nfly away\n", "s");
        FAIL();
    } catch (const ScriptError& error) {
        EXPECT_STREQ(error.what(), "s:2: unknown command 'fly'");
    }
    EXPECT_THROW(parse_script("set pp\n", "s"), ScriptError);
}

TEST(ViewerScript, DrivesTheWorkbenchThroughItsOwnFunctions) {
    Workbench workbench;
    workbench.load(uniform());
    for (const ScriptCommand& command : parse_script(
             "set pp 8\nwait-idle\npin\nset kind ZBVZeroBubble\nset pp 4\nwait-idle\n", "s"))
        EXPECT_TRUE(run_workbench_command(workbench, command));
    EXPECT_EQ(workbench.pinned()->model->ranks().size(), 8u);
    EXPECT_EQ(workbench.current()->step_time_ns, 52558037);
    EXPECT_FALSE(run_workbench_command(workbench, parse_script("screenshot x.png", "s")[0]));
    EXPECT_THROW(run_workbench_command(workbench, parse_script("open-cell 3", "s")[0]),
                 ScriptError);
}

std::string script_error(Workbench& workbench, const std::string& text) {
    try {
        for (const ScriptCommand& command : parse_script(text, "s"))
            run_workbench_command(workbench, command);
    } catch (const ScriptError& error) {
        return error.what();
    }
    return "(no error)";
}

// A line the workbench refuses, or whose simulation fails, stops the script naming the line:
// such scripts once ran on and exited 0, drawing the last good run.
TEST(ViewerScript, ALineTheWorkbenchRefusesOrASimulationThatFailsStopsTheScript) {
    Workbench workbench;
    workbench.load(uniform());
    EXPECT_EQ(script_error(workbench, "set pp 8\nset nosuch 3\n"),
              "line 2: set: workbench: costs.nosuch: unknown key");
    EXPECT_EQ(script_error(workbench, "set pp abc\n"),
              "line 1: set: workbench: schedule.pp: expected an integer");
    EXPECT_EQ(script_error(workbench, "grid Foo 4\n")
                  .rfind("line 1: grid: unknown schedule kind "
                         "'Foo'",
                         0),
              0u);
    EXPECT_EQ(script_error(workbench,
                           "set f [1ms,2ms,3ms,4ms]\nset kind ZBVZeroBubble\n"
                           "wait-idle\n")
                  .rfind("line 3: wait-idle: the simulation failed: ", 0),
              0u);
    EXPECT_EQ(script_error(workbench, "click pin\n"),
              "s:1: click pin: the button a script can click is simulate");
    EXPECT_EQ(script_error(workbench, "frames abc\n"), "s:1: frames: 'abc' is not a count");
}

TEST(Examples, TheDefaultComesFirstAndEveryBundledFileReads) {
    const std::vector<Example> examples = bundled_examples(examples_directory());
    ASSERT_GE(examples.size(), 2u);
    EXPECT_EQ(examples[0].name, "default");
    EXPECT_EQ(examples[0].title, "1F1B pp=4 m=8, uneven stages");
    for (const Example& example : examples)
        EXPECT_NO_THROW(example_experiment(example)) << example.name;
}

}  // namespace
}  // namespace pipelens::viewer

namespace pipelens::viewer {
namespace {

TEST(WorkbenchFields, TextReadsBackToTheSameExperiment) {
    const Experiment original = default_experiment();
    EXPECT_EQ(field_text(original, "costs.f"), "[1100us, 1000us, 1000us, 1300us]");
    EXPECT_EQ(field_text(original, "schedule.kind"), "1F1B");
    EXPECT_EQ(field_text(original, "costs.activation_bytes"), "16MiB");
    Experiment odd = original;
    // As few digits as read back to the same count: the default example's "1.8GiB" shows as
    // written, one byte more needs ten digits, under a KiB stays in bytes.
    odd.held_activation_bytes = {1932735283, 1932735284, 3 * 1024, 1000, 0};
    EXPECT_EQ(field_text(odd, "costs.held_activation_bytes"),
              "[1.8GiB, 1.800000001GiB, 3KiB, 1000B, 0B]");
    odd.forward_ns = {1234567, 1500};
    EXPECT_EQ(field_text(odd, "costs.f"), "[1234.567us, 1.5us]");
    // Beyond what a double holds exactly, or what the parser takes, the exact count in the base
    // unit: showing a field never throws.
    Experiment extreme = original;
    extreme.forward_ns = {9007199254740993, std::numeric_limits<std::int64_t>::max()};
    EXPECT_EQ(field_text(extreme, "costs.f"), "[9007199254740993ns, 9223372036854775807ns]");
    extreme.held_activation_bytes = {std::numeric_limits<std::int64_t>::max(), -5000};
    EXPECT_EQ(field_text(extreme, "costs.held_activation_bytes"), "[9223372036854775807B, -5000B]");
    EXPECT_EQ(field_text(original, "network.latency"), "8us");
    EXPECT_EQ(field_text(original, "transformer.layers"), "");
    for (const WorkbenchField& field : workbench_fields()) {
        const std::string text = field_text(original, field.key);
        if (text.empty() || field.type == FieldType::kind)
            continue;
        const FieldSetting setting = field_setting(field.key, text);
        const Experiment copy =
            apply_experiment_settings(original, {{setting.key, setting.value}}, "copy");
        EXPECT_EQ(experiment_to_toml(copy), experiment_to_toml(original)) << field.key;
    }
    for (const char* key : {"costs.held_activation_bytes", "costs.f"}) {
        const FieldSetting setting = field_setting(key, field_text(odd, key));
        const Experiment copy =
            apply_experiment_settings(odd, {{setting.key, setting.value}}, "odd");
        EXPECT_EQ(experiment_to_toml(copy), experiment_to_toml(odd)) << key;
    }
}

}  // namespace
}  // namespace pipelens::viewer

namespace pipelens::viewer {
namespace {

TEST(CompareLayout, BothHalvesShareOneTimeAxisToTheLongerStep) {
    const int ranks[2] = {4, 40};
    const std::int64_t ends[2] = {30, 60};
    const CompareGeometry geometry = compare_geometry(1600, 560, ranks, ends);
    EXPECT_EQ(geometry.span_ns, 60);
    EXPECT_FLOAT_EQ(geometry.left, kSidebarWidth + kGutterWidth);
    EXPECT_FLOAT_EQ(geometry.x(30), (geometry.left + geometry.right) / 2);
    EXPECT_FLOAT_EQ(geometry.top[0], 66);  // 48 + 18
    EXPECT_FLOAT_EQ(geometry.row_height[0], 16);
    // (560 - 48) / 2 - 18 = 238 px for 40 ranks
    EXPECT_FLOAT_EQ(geometry.row_height[1], 238.f / 40);
    EXPECT_FLOAT_EQ(geometry.top[1], 66 + 238 + 18);
    EXPECT_LE(geometry.row_top(1, 39) + geometry.row_height[1], 560);
}

}  // namespace
}  // namespace pipelens::viewer
