// The recorder on its own (no LibTorch): events are numbered and nested as calls are made, a
// failed call leaves neither its event nor a change behind, replay rebuilds the state exactly,
// the equality report names the differing field in the upstream format, and bisection finds a
// planted divergence within its replay bound.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/recorder/pipeline_state.hpp"
#include "engine/recorder/recorded_trace.hpp"
#include "engine/recorder/state_bisect.hpp"
#include "engine/recorder/state_equality.hpp"
#include "engine/recorder/state_replay.hpp"

namespace pipelens::recorder {
namespace {

TensorMeta meta(std::vector<std::int64_t> shape, std::string dtype = "f32") {
    TensorMeta result;
    result.stride = contiguous_stride(shape);
    result.shape = std::move(shape);
    result.dtype = std::move(dtype);
    result.requires_grad = true;
    return result;
}

// A real rank's stream: 1F1B pp=4 m=8 on rank `rank`, 8 layers, metadata for every stage
// (stage `odd_stage`'s outputs in `odd_dtype`), buffers, backends.
StateRecorder rank_stream(int rank, int odd_stage = -1, std::string odd_dtype = "f32") {
    StateRecorder recorder(rank, "real");
    recorder.configure_transport({"local", 4, 10'000'000'000, "cpu"});
    recorder.choose_schedule({ScheduleKind::one_f_one_b, 4, 1, 8});
    recorder.lower_schedule(false);
    recorder.split_model("mlp",
                         {"layers.0", "layers.1", "layers.2", "layers.3", "layers.4", "layers.5",
                          "layers.6", "layers.7"},
                         {});
    for (int stage = 0; stage < 4; ++stage) {
        const std::string out_dtype = stage == odd_stage ? odd_dtype : "f32";
        const std::string in_dtype = stage == odd_stage + 1 && odd_stage >= 0 ? odd_dtype : "f32";
        recorder.set_stage_meta(stage, {meta({8, 64}, in_dtype)},
                                stage == 3 ? std::vector<TensorMeta>{}
                                           : std::vector<TensorMeta>{meta({8, 64}, out_dtype)});
    }
    recorder.plan_buffers();
    for (int stage = 0; stage < 4; ++stage)
        recorder.set_stage_backend(stage, stage == 2 ? "checked" : "eager");
    return recorder;
}

TEST(StateRecorder, EventsAreNumberedFromTheConstructorAndNestUnderTheirCall) {
    const StateRecorder recorder = rank_stream(1);
    const auto& events = recorder.events();
    ASSERT_GE(events.size(), 10u);
    EXPECT_EQ(events[0].name, "PipelineState");
    EXPECT_EQ(events[0].arguments.dump(), R"({"rank":1,"run_kind":"real"})");
    for (std::size_t index = 0; index < events.size(); ++index) {
        EXPECT_EQ(events[index].sequence, static_cast<std::int64_t>(index));
        EXPECT_EQ(events[index].rank, 1);
    }
    // split_model (event 4) made one assign_layers per stage.
    EXPECT_EQ(events[4].name, "split_model");
    for (int stage = 0; stage < 4; ++stage) {
        EXPECT_EQ(events[5 + stage].name, "assign_layers");
        EXPECT_EQ(events[5 + stage].parent, 4);
    }
    EXPECT_EQ(to_string(events[6]), R"(event 6: assign_layers {"layers":["layers.2","layers.3"],)"
                                    R"("split":"even split: 8 layers over 4 stages","stage":1})");
    // Rank 1 holds stage 1 only: it receives and sends in both directions.
    const PipelineState& state = recorder.state();
    ASSERT_EQ(state.buffers.size(), 4u);
    for (const BufferPlan& plan : state.buffers) {
        EXPECT_EQ(plan.stage, 1);
        EXPECT_EQ(plan.bytes, 8 * 64 * 4);
    }
}

TEST(StateRecorder, AFailedCallLeavesNoEventAndNoChange) {
    StateRecorder recorder = rank_stream(0);
    const auto before = state_fields(recorder.state());
    const std::size_t events = recorder.events().size();
    EXPECT_THROW(recorder.set_stage_backend(1, "turbo"), std::invalid_argument);
    EXPECT_THROW(recorder.set_stage_meta(7, {}, {}), std::invalid_argument);
    EXPECT_EQ(recorder.events().size(), events);
    EXPECT_EQ(state_fields(recorder.state()), before);
    ASSERT_EQ(recorder.failures().size(), 2u);
    EXPECT_EQ(recorder.failures()[0].event.name, "set_stage_backend");
    EXPECT_EQ(recorder.failures()[0].message,
              "set_stage_backend: unknown backend 'turbo' (use eager, checked, compile-error, "
              "runtime-error, accuracy-error)");
    EXPECT_EQ(recorder.failures()[1].message,
              "set_stage_meta: there is no stage 7 (the schedule has 4 stages)");
    // The next call takes the number the failed one would have had.
    recorder.set_stage_backend(1, "checked");
    EXPECT_EQ(recorder.events().back().sequence, static_cast<std::int64_t>(events));
}

// A recorder given a clock stamps each call with it as the call begins (nested calls after
// their parent), failures keep their moment, and a recording sent to rank 0 carries times on
// the run's clock; a replay's events have none and still compare equal.
TEST(StateRecorder, ACallIsStampedWithTheClockWhenItBegins) {
    std::int64_t now = 1000;
    StateRecorder recorder(0, "real", [&] { return now += 10; });
    recorder.configure_transport({"local", 2, 10'000'000'000, "cpu"});
    recorder.choose_schedule({ScheduleKind::one_f_one_b, 2, 1, 4});
    recorder.split_model("mlp", {"layers.0", "layers.1"}, {});
    EXPECT_THROW(recorder.set_stage_backend(0, "turbo"), std::invalid_argument);
    std::vector<std::optional<std::int64_t>> times;
    for (const Event& event : recorder.events())
        times.push_back(event.time_ns);
    // PipelineState, configure_transport, choose_schedule, split_model and its two nested
    // assign_layers; the failed call took the next tick.
    EXPECT_EQ(times,
              (std::vector<std::optional<std::int64_t>>{1010, 1020, 1030, 1040, 1050, 1060}));
    ASSERT_EQ(recorder.failures().size(), 1u);
    EXPECT_EQ(recorder.failures()[0].event.time_ns, std::optional<std::int64_t>(1070));

    const RecordingParts sent = recording_from_json(recording_to_json(recorder, 1040));
    ASSERT_EQ(sent.events.size(), 6u);
    EXPECT_EQ(sent.events.front().time_ns, std::optional<std::int64_t>(-30));
    EXPECT_EQ(sent.events.back().time_ns, std::optional<std::int64_t>(20));
    EXPECT_EQ(sent.failures.at(0).event.time_ns, std::optional<std::int64_t>(30));

    const StateRecorder replayed = replay_events(sent.events);
    EXPECT_EQ(replayed.events().back().time_ns, std::nullopt);
    EXPECT_FALSE(compare_event_streams(sent.events, replayed.events()));
    EXPECT_EQ(rank_stream(0).events().back().time_ns, std::nullopt);  // no clock, no time
}

TEST(StateReplay, ReplayRebuildsTheStateAndTheEventStream) {
    const StateRecorder recorded = rank_stream(2);
    const StateRecorder replayed = replay_events(recorded.events());
    EXPECT_EQ(state_fields(replayed.state()), state_fields(recorded.state()));
    EXPECT_FALSE(compare_event_streams(recorded.events(), replayed.events()));
    EXPECT_FALSE(compare_states(state_fields(replayed.state()), state_fields(recorded.state())));
}

TEST(StateReplay, UptoStopsAfterTheNamedEvent) {
    const StateRecorder recorded = rank_stream(0);
    // Event 3 is lower_schedule: the split (event 4) has not happened yet.
    const StateRecorder early = replay_events(recorded.events(), 3);
    EXPECT_TRUE(early.state().schedule.lowered);
    EXPECT_TRUE(early.state().stages[0].layers.empty());
    EXPECT_EQ(early.events().size(), 4u);
}

TEST(StateReplay, AMalformedOrUnknownEventIsNamed) {
    std::vector<Event> events = rank_stream(0).events();
    events[2].arguments["pp"] = "four";
    try {
        replay_events(events);
        FAIL() << "no error";
    } catch (const ReplayError& error) {
        EXPECT_EQ(error.event.sequence, 2);
        EXPECT_NE(std::string(error.what()).find("failed when replaying event 2: choose_schedule "),
                  std::string::npos)
            << error.what();
        EXPECT_NE(std::string(error.what()).find("malformed arguments"), std::string::npos);
    }
    events = rank_stream(0).events();
    events[1].name = "configure_transprt";
    try {
        replay_events(events);
        FAIL() << "no error";
    } catch (const ReplayError& error) {
        EXPECT_EQ(std::string(error.what()),
                  "failed when replaying event 1: configure_transprt "
                  R"({"device":"cpu","kind":"local","timeout_ns":10000000000,"world_size":4}: )"
                  "no recorded call has this name");
    }
}

// A buffer planned before its stage knew its tensors (no metadata, 0 bytes) does not hold
// them: validation names it as it names one planned for other tensors. A simulation's buffers,
// sizes only, on stages without metadata, validate.
TEST(StateValidation, ABufferPlannedWithoutTheStagesTensorsIsAProblem) {
    PipelineState state;
    state.schedule.stage_count = 1;
    StageState stage;
    stage.outputs = std::vector<TensorMeta>{{{2, 16}, {16, 1}, "f32", true}};
    state.stages.push_back(stage);
    BufferPlan send;
    send.direction = BufferDirection::send_forward;
    state.buffers.push_back(send);
    EXPECT_EQ(validate_state(state),
              std::vector<std::string>{
                  "stage[0].send_forward was planned for () but the stage needs (f32[2, 16])"});
    state.stages[0].outputs.reset();
    state.buffers[0].bytes = 128;
    EXPECT_EQ(validate_state(state), std::vector<std::string>{});
}

// Two events that differ only past where their texts are cut short would print alike: the
// report names the first argument they differ in, with each side's value.
TEST(StateReplay, EventsThatDifferPastTheirShortenedTextSayWhere) {
    Event recorded;
    recorded.name = "plan_buffers";
    recorded.arguments = {{"a_padding", std::string(400, 'x')}, {"z_last", 1}};
    Event replayed = recorded;
    replayed.arguments["z_last"] = 2;
    const std::optional<std::string> report = compare_event_streams({recorded}, {replayed});
    ASSERT_TRUE(report);
    EXPECT_NE(report->find("('z_last': 2)\nbut the trace recorded"), std::string::npos) << *report;
    EXPECT_NE(report->find("('z_last': 1)"), std::string::npos) << *report;
}

TEST(StateEquality, ReportNamesTheFieldInTheUpstreamFormat) {
    const auto left = state_fields(rank_stream(0).state());
    const auto right = state_fields(rank_stream(0, 1, "bf16").state());
    const auto difference = compare_states(left, right);
    ASSERT_TRUE(difference);
    EXPECT_EQ(format_state_difference(*difference),
              "state not equal: field values don't match:\n\n"
              "==> stage[1].outputs_meta: values don't match.\n"
              "  >  Left: (f32[8, 64])\n"
              "  > Right: (bf16[8, 64])\n"
              "==> stage[2].inputs_meta: values don't match.\n"
              "  >  Left: (f32[8, 64])\n"
              "  > Right: (bf16[8, 64])");
}

TEST(StateEquality, FieldSetMismatchListsTheUniqueFields) {
    const auto difference = compare_states({{"a", "1"}, {"b", "2"}}, {{"a", "1"}, {"c", "2"}});
    ASSERT_TRUE(difference);
    EXPECT_EQ(format_state_difference(*difference),
              "state not equal: field set mismatch:\n\n"
              "==> found unique fields:\n"
              "  >  Left: ['b']\n"
              "  > Right: ['c']");
    EXPECT_EQ(difference->left_only, std::vector<std::string>{"b"});
    EXPECT_EQ(difference->right_only, std::vector<std::string>{"c"});
    // The values of the fields both sides have follow: among them is what made the others.
    const auto shape =
        compare_states({{"pp", "4"}, {"rank[3]", "x"}, {"v", "1"}}, {{"pp", "2"}, {"v", "1"}});
    ASSERT_TRUE(shape);
    EXPECT_EQ(format_state_difference(*shape),
              "state not equal: field set mismatch:\n\n"
              "==> found unique fields:\n"
              "  >  Left: ['rank[3]']\n"
              "  > Right: []\n"
              "==> pp: values don't match.\n"
              "  >  Left: 4\n"
              "  > Right: 2");
    const auto values = compare_states({{"a", "1"}}, {{"a", "2"}});
    ASSERT_TRUE(values);
    EXPECT_EQ(values->mismatches.front().field, "a");  // the name alone, for JSON
    EXPECT_TRUE(values->left_only.empty());
}

TEST(StateEquality, NonContiguousStridesAndSnapshotsRoundTrip) {
    StateRecorder recorder = rank_stream(0);
    TensorMeta transposed = meta({8, 64});
    transposed.stride = {1, 8};
    recorder.set_stage_meta(0, {transposed}, {meta({8, 64})});
    const auto fields = state_fields(recorder.state());
    const auto found = std::find_if(fields.begin(), fields.end(), [](const StateField& field) {
        return field.name == "stage[0].inputs_meta";
    });
    ASSERT_NE(found, fields.end());
    EXPECT_EQ(found->value, "(f32[8, 64] stride=(1, 8))");
    EXPECT_EQ(fields_from_json(fields_to_json(fields)), fields);
}

// Two streams that differ in one tensor dtype from the k-th set_stage_meta on: bisection names
// exactly that event within 2 + ceil(log2 n) replays, for every position of the plant.
TEST(StateBisect, FindsAPlantedDtypeDivergenceWithinTheReplayBound) {
    for (int stage = 0; stage < 3; ++stage) {
        const StateRecorder left = rank_stream(0);
        const StateRecorder right = rank_stream(0, stage, "bf16");
        const DivergenceBisection result = bisect_divergence(left.events(), right.events());
        ASSERT_TRUE(result.found) << stage;
        // set_stage_meta of `stage` is the first to differ.
        EXPECT_EQ(result.left_event->name, "set_stage_meta");
        EXPECT_EQ(result.left_event->arguments["stage"], stage);
        EXPECT_EQ(result.right_event->arguments["outputs"][0]["dtype"], "bf16");
        const std::size_t n = top_level_events(left.events()).size();
        EXPECT_EQ(result.event_count, n);
        EXPECT_LE(result.replays, static_cast<int>(std::ceil(std::log2(n))) + 2);
        ASSERT_TRUE(result.difference);
        EXPECT_EQ(result.difference->mismatches.front().what,
                  "stage[" + std::to_string(stage) + "].outputs_meta: values don't match.");
    }
}

TEST(StateBisect, EqualStreamsHaveNoDivergence) {
    const DivergenceBisection result =
        bisect_divergence(rank_stream(0).events(), rank_stream(0).events());
    EXPECT_FALSE(result.found);
    EXPECT_EQ(result.replays, 1);  // the whole streams: their events are the same
}

TEST(StateBisect, RanksDivergeWhenTheyPlanTheirOwnBuffers) {
    const DivergenceBisection result =
        bisect_divergence(rank_stream(0).events(), rank_stream(1).events());
    ASSERT_TRUE(result.found);
    EXPECT_EQ(result.left_event->name, "plan_buffers");
}

// A run given --backend records set_stage_backend events that one without has not: the common
// events agree and the further ones part the states. The first further event that does is the
// divergence (the other stream has none there); further events that change nothing are none.
TEST(StateBisect, FurtherEventsOfOneStreamThatChangeItsStateAreTheDivergence) {
    StateRecorder longer = rank_stream(0);
    longer.set_stage_backend(0, "eager");  // what the shorter stream's state already says
    longer.set_stage_backend(1, "checked");
    const std::int64_t parting = longer.events().back().sequence;
    longer.set_stage_backend(2, "checked");
    for (const bool longer_on_left : {true, false}) {
        SCOPED_TRACE(longer_on_left);
        const DivergenceBisection result =
            longer_on_left ? bisect_divergence(longer.events(), rank_stream(0).events())
                           : bisect_divergence(rank_stream(0).events(), longer.events());
        ASSERT_TRUE(result.found);
        const std::optional<Event>& event = longer_on_left ? result.left_event : result.right_event;
        ASSERT_TRUE(event);
        EXPECT_EQ(event->sequence, parting);
        EXPECT_FALSE(longer_on_left ? result.right_event : result.left_event);
        ASSERT_TRUE(result.difference);
        EXPECT_EQ(result.difference->mismatches.front().what,
                  "stage[1].backend: values don't match.");
    }
    StateRecorder harmless = rank_stream(0);
    harmless.set_stage_backend(0, "eager");
    const DivergenceBisection same = bisect_divergence(harmless.events(), rank_stream(0).events());
    EXPECT_FALSE(same.found);
    EXPECT_EQ(same.note, "the states agree after the " + std::to_string(same.event_count) +
                             " events both streams have; the left stream goes on with 1 more");
}

// A difference a later event undoes (stage 1 checked on one side, then eager again on both):
// the final states agree, yet the states differ after the first event that differs, and that is
// the divergence, in the common events and in the further events of a longer stream alike.
TEST(StateBisect, ADifferenceALaterEventUndoesIsFoundWhereItWasMade) {
    StateRecorder left = rank_stream(0);
    StateRecorder right = rank_stream(0);
    left.set_stage_backend(1, "eager");
    right.set_stage_backend(1, "eager");
    left.set_stage_backend(1, "compile-error");
    const std::int64_t made = left.events().back().sequence;
    right.set_stage_backend(1, "checked");
    left.set_stage_backend(1, "checked");
    right.set_stage_backend(1, "checked");
    const DivergenceBisection common = bisect_divergence(left.events(), right.events());
    ASSERT_TRUE(common.found);
    EXPECT_EQ(common.left_event->sequence, made);
    EXPECT_EQ(common.right_event->arguments["backend"], "checked");
    EXPECT_LE(common.replays, 2);  // the whole streams, then their first differing event

    StateRecorder longer = rank_stream(0);
    longer.set_stage_backend(1, "compile-error");
    const std::int64_t further = longer.events().back().sequence;
    longer.set_stage_backend(1, "checked");
    const DivergenceBisection extra = bisect_divergence(rank_stream(0).events(), longer.events());
    ASSERT_TRUE(extra.found);
    EXPECT_EQ(extra.right_event->sequence, further);
    EXPECT_FALSE(extra.left_event);
}

TEST(StateBisect, UntilErrorFindsTheEventThatMadeTheStateInconsistent) {
    // Stage 1 says it sends bf16 while stage 2 still expects f32.
    StateRecorder recorder = rank_stream(0);
    recorder.set_stage_meta(1, {meta({8, 64})}, {meta({8, 64}, "bf16")});
    const std::int64_t planted = recorder.events().back().sequence;
    recorder.set_stage_backend(0, "checked");
    const ErrorBisection result = bisect_until_error(recorder.events());
    ASSERT_TRUE(result.found);
    EXPECT_EQ(result.event->sequence, planted);
    ASSERT_EQ(result.problems.size(), 1u);
    EXPECT_EQ(result.problems[0],
              "stage[1].outputs_meta (bf16[8, 64]) does not match stage[2].inputs_meta "
              "(f32[8, 64]): stage[2].inputs_meta[0] has a dtype mismatch: expected torch.float32 "
              "actual torch.bfloat16");
    EXPECT_FALSE(bisect_until_error(rank_stream(0).events()).found);
}

}  // namespace
}  // namespace pipelens::recorder
