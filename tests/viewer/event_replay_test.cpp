// The Events panel's model without a window (event_replay.hpp), on recorded traces: a simulated
// run recorded as `pipelens simulate --pp 2 --m 4 --out` records it (its set-up events, and
// plan_buffers with the four plan_buffer events it made), and a rank's own recording with event
// times, a call that changed nothing, and a rank that recorded nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "app/viewer/event_replay.hpp"
#include "engine/experiment/experiment.hpp"
#include "engine/recorder/recorded_trace.hpp"
#include "sim/experiment_simulation.hpp"
#include "tests/fresh_trace.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::viewer {
namespace {

namespace fs = std::filesystem;

}  // namespace

// How a failing expectation shows a line: "* text" when marked changed.
void PrintTo(const ReplayedLine& line, std::ostream* out) {
    *out << (line.changed ? "* " : "  ") << line.text;
}

namespace {

// 1F1B pp=2 m=4, F = I = W = 1 us, recorded with its events (rank -1, the whole pipeline):
// #0 PipelineState, #1 choose_schedule, #2 lower_schedule, #3 configure_transport,
// #4 set_cost_model, #5-#6 set_stage_costs, #7 plan_buffers making #8-#11 plan_buffer.
TraceSession simulated_session(const fs::path& path) {
    Experiment experiment = plain_experiment();
    experiment.shape = {ScheduleKind::one_f_one_b, 2, 1, 4};
    sim::simulate_experiment(experiment, path);
    TraceSession session;
    EXPECT_TRUE(open_trace(session, path)) << session.error;
    return session;
}

// Rank 0's recording, its clock at 1 us, 2.5 us, 4 us: #0 PipelineState, #1 and #2 the same
// configure_transport twice (so the second changes nothing).
// The run the recordings below belong to: a real 1F1B pp=2 m=4.
traces::RunRecord real_1f1b_run() {
    traces::RunRecord run;
    run.kind = traces::RunKind::real;
    run.schedule = "1F1B";
    run.pp = 2;
    run.m = 4;
    return run;
}

TraceSession rank_session(const fs::path& path) {
    std::int64_t now = -500;
    recorder::StateRecorder recording(0, "local", [&now] { return now += 1500; });
    recording.configure_transport({"gloo", 2, 0, "cpu"});
    recording.configure_transport({"gloo", 2, 0, "cpu"});
    {
        traces::TraceWriter writer(path);
        const std::int64_t run_id = writer.begin_run(real_1f1b_run());
        recorder::write_recording(writer, run_id, recording);
        writer.finish_run(run_id, 0, 0);
    }
    TraceSession session;
    EXPECT_TRUE(open_trace(session, path)) << session.error;
    return session;
}

std::vector<std::string> texts(const std::vector<ReplayedLine>& lines) {
    std::vector<std::string> result;
    for (const ReplayedLine& line : lines)
        result.push_back(line.text);
    return result;
}

TEST(EventReplay, ListsEachEventWithItsRankSequenceNameAndArguments) {
    const fs::path path = testing::fresh_trace("event_replay_list");
    const TraceSession session = simulated_session(path);
    ASSERT_EQ(session.events.size(), 12u);
    EXPECT_EQ(event_list_line(session.events[1]),
              R"(r-1 #1 choose_schedule {"kind":"1F1B","m":4,"pp":2,"v":1})");
    // Nested: indented under the call that made it.
    EXPECT_EQ(event_list_line(session.events[8]),
              R"(    r-1 #8 plan_buffer {"bytes":0,"direction":"send_forward","metas":[],)"
              R"("peer_rank":1,"peer_stage":1,"stage":0})");
    // Arguments past 120 characters are cut.
    ASSERT_GT(session.events[4].arguments.size(), 120u);
    EXPECT_EQ(event_list_line(session.events[4]),
              "r-1 #4 set_cost_model " + session.events[4].arguments.substr(0, 120));
    fs::remove(path);
}

TEST(EventReplay, AnEventWithATimeIsListedWithIt) {
    const fs::path path = testing::fresh_trace("event_replay_times");
    const TraceSession session = rank_session(path);
    ASSERT_EQ(session.events.size(), 3u);
    ASSERT_TRUE(session.events[1].time_ns);
    EXPECT_EQ(event_list_line(session.events[1]),
              R"(r0 #1 2.500 us configure_transport {"device":"cpu","kind":"gloo",)"
              R"("timeout_ns":0,"world_size":2})");
    fs::remove(path);
}

TEST(EventReplay, FiltersKeepARankAndNamesContainingTheText) {
    const fs::path path = testing::fresh_trace("event_replay_filters");
    const TraceSession session = simulated_session(path);
    const auto kept = [&](int rank, std::string_view name) {
        std::vector<std::int64_t> sequences;
        for (const traces::EventRecord& event : session.events)
            if (event_passes_filters(event, rank, name))
                sequences.push_back(event.sequence);
        return sequences;
    };
    EXPECT_EQ(kept(kAllRanks, "").size(), 12u);
    EXPECT_EQ(kept(-1, "").size(), 12u);
    EXPECT_TRUE(kept(0, "").empty());  // every event is the pipeline's (rank -1)
    EXPECT_EQ(kept(kAllRanks, "plan_buffer"), (std::vector<std::int64_t>{7, 8, 9, 10, 11}));
    EXPECT_EQ(kept(-1, "set_"), (std::vector<std::int64_t>{4, 5, 6}));
    EXPECT_TRUE(kept(kAllRanks, "Plan").empty());  // names match as written
    // The filter offers the ranks there are, by name, not a number with sentinels to type.
    EXPECT_EQ(event_ranks(session.events), std::vector<int>{-1});
    EXPECT_EQ(rank_filter_label(kAllRanks), "all ranks");
    EXPECT_EQ(rank_filter_label(-1), "r-1 (pipeline)");
    EXPECT_EQ(rank_filter_label(3), "rank 3");
    fs::remove(path);
}

TEST(EventReplay, ANestedEventBelongsToTheCallThatMadeIt) {
    const fs::path path = testing::fresh_trace("event_replay_top_level");
    const TraceSession session = simulated_session(path);
    EXPECT_EQ(&top_level_of(session.events, session.events[9]), &session.events[7]);
    EXPECT_EQ(&top_level_of(session.events, session.events[3]), &session.events[3]);
    traces::EventRecord orphan = session.events[9];
    orphan.parent = 99;  // its parent is not in the run: it stands for itself
    EXPECT_EQ(&top_level_of(session.events, orphan), &orphan);
    fs::remove(path);
}

// Two ranks' recordings: the list holds rank 0's three events, then rank 1's. The fourth event
// of the list is rank 1's #0, and the scrubber names it so, as the replayed state's heading does.
TEST(EventReplay, TheScrubberNumbersAnEventAsTheListAndTheReplayDo) {
    const fs::path path = testing::fresh_trace("event_replay_scrub");
    {
        traces::TraceWriter writer(path);
        const std::int64_t run_id = writer.begin_run(real_1f1b_run());
        for (int rank : {0, 1}) {
            std::int64_t now = -500;
            recorder::StateRecorder recording(rank, "local", [&now] { return now += 1500; });
            recording.configure_transport({"gloo", 2, rank, "cpu"});
            recording.configure_transport({"gloo", 2, rank, "cpu"});
            recorder::write_recording(writer, run_id, recording);
        }
        writer.finish_run(run_id, 0, 0);
    }
    TraceSession session;
    ASSERT_TRUE(open_trace(session, path)) << session.error;
    ASSERT_EQ(session.events.size(), 6u);
    const traces::EventRecord& fourth = session.events[3];
    ASSERT_EQ(fourth.rank, 1);
    EXPECT_EQ(scrub_text(fourth), "replayed up to r1 #0 PipelineState");
    EXPECT_EQ(replayed_state_lines(session, fourth).front().text, "changed by #0 PipelineState:");
    EXPECT_EQ(event_list_line(fourth).rfind("r1 #0 ", 0), 0u) << event_list_line(fourth);
    fs::remove(path);
}

TEST(EventReplay, TheFieldsAnEventChangedComeFirstThenTheRest) {
    const fs::path path = testing::fresh_trace("event_replay_changed");
    const TraceSession session = simulated_session(path);
    const std::vector<ReplayedLine> lines = replayed_state_lines(session, session.events[3]);
    const std::vector<ReplayedLine> first = {{"changed by #3 configure_transport:", true},
                                             {"transport.kind: simulated", true},
                                             {"transport.world_size: 2", true},
                                             {"transport.device: none", true},
                                             {"unchanged:", false},
                                             {"transport.timeout_ns: 0", false},
                                             {"schedule.source: generated", false},
                                             {"schedule.kind: 1F1B", false}};
    ASSERT_GT(lines.size(), first.size());
    EXPECT_EQ(std::vector<ReplayedLine>(lines.begin(), lines.begin() + first.size()), first);
    // Every field once: 4 transport, 7 schedule, 3 costs, 2 model, 13 per stage.
    EXPECT_EQ(lines.size(), 2u + 4 + 7 + 3 + 2 + 2 * 13);
    EXPECT_TRUE(std::none_of(lines.begin() + 4, lines.end(),
                             [](const ReplayedLine& line) { return line.changed; }));
    fs::remove(path);
}

TEST(EventReplay, ANestedEventShowsWhatItsCallChanged) {
    const fs::path path = testing::fresh_trace("event_replay_nested");
    const TraceSession session = simulated_session(path);
    const std::vector<ReplayedLine> made = replayed_state_lines(session, session.events[9]);
    const std::vector<std::string> changed = {
        "changed by #7 plan_buffers (which made #9 plan_buffer):",
        "stage[0].send_forward: to stage 1 on rank 1: 0B",
        "stage[0].recv_backward: from stage 1 on rank 1: 0B",
        "stage[1].recv_forward: from stage 0 on rank 0: 0B",
        "stage[1].send_backward: to stage 0 on rank 0: 0B",
        "unchanged:"};
    const std::vector<std::string> made_texts = texts(made);
    ASSERT_GT(made_texts.size(), changed.size());
    EXPECT_EQ(std::vector<std::string>(made_texts.begin(), made_texts.begin() + 6), changed);
    // The call itself: the same fields, named as its own.
    const std::vector<ReplayedLine> call = replayed_state_lines(session, session.events[7]);
    EXPECT_EQ(call.front().text, "changed by #7 plan_buffers:");
    EXPECT_EQ(std::vector<ReplayedLine>(call.begin() + 1, call.end()),
              std::vector<ReplayedLine>(made.begin() + 1, made.end()));
    fs::remove(path);
}

TEST(EventReplay, TheFirstEventChangedEveryField) {
    const fs::path path = testing::fresh_trace("event_replay_first");
    const TraceSession session = simulated_session(path);
    const std::vector<ReplayedLine> lines = replayed_state_lines(session, session.events[0]);
    EXPECT_EQ(lines.front(), (ReplayedLine{"changed by #0 PipelineState:", true}));
    EXPECT_EQ(lines[1], (ReplayedLine{"transport.kind: none", true}));
    EXPECT_EQ(lines.back(), (ReplayedLine{"unchanged:", false}));
    // No stages before a schedule: 4 transport, 5 schedule, 3 costs, 2 model fields.
    EXPECT_EQ(lines.size(), 2u + 4 + 5 + 3 + 2);
    fs::remove(path);
}

TEST(EventReplay, ACallThatChangedNothingSaysSo) {
    const fs::path path = testing::fresh_trace("event_replay_nothing");
    const TraceSession session = rank_session(path);
    const std::vector<ReplayedLine> lines = replayed_state_lines(session, session.events[2]);
    const std::vector<ReplayedLine> first = {
        {"#2 configure_transport changed no field", true},
        {"unchanged:", false},
        {"transport.kind: gloo", false},
        {"transport.world_size: 2", false},
    };
    ASSERT_GT(lines.size(), first.size());
    EXPECT_EQ(std::vector<ReplayedLine>(lines.begin(), lines.begin() + first.size()), first);
    fs::remove(path);
}

TEST(EventReplay, ARankWithoutEventsIsOneLineSayingWhy) {
    const fs::path path = testing::fresh_trace("event_replay_failed");
    const TraceSession session = rank_session(path);
    traces::EventRecord elsewhere = session.events[1];
    elsewhere.rank = 3;
    EXPECT_EQ(replayed_state_lines(session, elsewhere),
              (std::vector<ReplayedLine>{{"replay failed: " + path.string() +
                                              ": run 1 has no events for rank 3 (ranks with "
                                              "events: 0)",
                                          false}}));
    fs::remove(path);
}

}  // namespace
}  // namespace pipelens::viewer
