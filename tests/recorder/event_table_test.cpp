// The table of recorded events: every kind's arguments are written exactly as traces already
// hold them (golden JSON), read back to the same JSON, and applied to the same state as the
// recorded call; a trace with an unknown event or a missing or mistyped field fails with one
// error naming the event and the field.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "engine/recorder/event_table.hpp"
#include "engine/recorder/recorded_trace.hpp"
#include "engine/recorder/state_replay.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/schedule_csv.hpp"
#include "tests/fresh_trace.hpp"
#include "tests/raw_database.hpp"
#include "tests/thrown_message.hpp"
#include "traces/trace_reader.hpp"
#include "traces/trace_writer.hpp"

namespace pipelens::recorder {
namespace {

TensorMeta meta(std::vector<std::int64_t> shape, bool requires_grad = true) {
    TensorMeta result;
    result.stride = contiguous_stride(shape);
    result.shape = std::move(shape);
    result.dtype = "f32";
    result.requires_grad = requires_grad;
    return result;
}

using Call = std::function<void(StateRecorder&)>;

// Calls that together make every kind of event: a real rank's set-up (rank 1 of 2) and a
// simulation's (a CSV schedule, costs, sharding).
std::vector<Call> rank_calls() {
    return {
        [](StateRecorder& r) {
            r.configure_transport({"gloo", 2, 30'000'000'000, "cpu"});
        },
        [](StateRecorder& r) {
            r.choose_schedule({ScheduleKind::interleaved_1f1b, 2, 2, 4});
        },
        [](StateRecorder& r) { r.lower_schedule(false); },
        [](StateRecorder& r) {
            r.split_model("mlp", {"l0", "l1", "l2", "l3", "l4", "l5"}, {"l2", "l3:end", "l5"});
        },
        [](StateRecorder& r) {
            r.set_stage_meta(1, {meta({4, 16})}, {meta({4, 16}, false)});
        },
        [](StateRecorder& r) {
            r.set_stage_meta(2, {meta({4, 16}, false)}, {meta({4, 8})});
        },
        [](StateRecorder& r) { r.plan_buffers(); },
        [](StateRecorder& r) { r.set_stage_backend(3, "checked"); },
    };
}

std::vector<Call> simulation_calls() {
    const std::string csv =
        format_schedule_csv(generate_schedule({ScheduleKind::one_f_one_b, 2, 1, 2}));
    return {
        [csv](StateRecorder& r) { r.load_schedule_csv("plan.csv", csv); },
        [](StateRecorder& r) { r.lower_schedule(true); },
        [](StateRecorder& r) {
            r.set_cost_model({true, 1500, 0, 5000, 12.5, 8, 0.75, 10, 20, 30, false, {}});
        },
        [](StateRecorder& r) {
            r.set_stage_costs(0, {100, 60, 40, 100, 4096, 8192});
        },
        [](StateRecorder& r) {
            r.set_stage_costs(1, {110, 70, 40, 110, 0, 2048});
        },
        [](StateRecorder& r) { r.plan_buffers(); },
        [](StateRecorder& r) { r.decide_sharding("aten.mm(f32[8, 4], f32[4, 2])", "S(0)R", 1.5); },
    };
}

// Runs `calls` on a fresh recorder, keeping the state's fields after each top-level call.
struct Recording {
    std::vector<Event> events;
    std::vector<std::vector<StateField>> states;  // after event 0, then after each call
};
Recording record(int rank, const std::string& run_kind, const std::vector<Call>& calls) {
    StateRecorder recorder(rank, run_kind);
    Recording recording;
    recording.states.push_back(state_fields(recorder.state()));
    for (const Call& call : calls) {
        call(recorder);
        recording.states.push_back(state_fields(recorder.state()));
    }
    recording.events = recorder.events();
    return recording;
}

// One line per event as a trace holds it: nested events indented, arguments as stored.
std::string stream_text(const std::vector<Event>& events) {
    std::string text;
    for (const Event& event : events)
        text += (event.parent ? "   " : " ") + event.name + " " + event.arguments.dump() + "\n";
    return text;
}

// What this engine wrote before events were defined in one table, byte for byte: traces
// written then must still replay, and new traces must read the same in older tools.
constexpr const char* kGoldenStreams = R"golden( PipelineState {"rank":1,"run_kind":"real"}
 configure_transport {"device":"cpu","kind":"gloo","timeout_ns":30000000000,"world_size":2}
 choose_schedule {"kind":"Interleaved1F1B","m":4,"pp":2,"v":2}
 lower_schedule {"keep_fsdp_actions":false}
 split_model {"layers":["l0","l1","l2","l3","l4","l5"],"model":"mlp","split_points":["l2","l3:end","l5"]}
   assign_layers {"layers":["l0","l1"],"split":"model start","stage":0}
   assign_layers {"layers":["l2","l3"],"split":"starts at l2","stage":1}
   assign_layers {"layers":["l4"],"split":"starts at l4","stage":2}
   assign_layers {"layers":["l5"],"split":"starts at l5","stage":3}
 set_stage_meta {"inputs":[{"dtype":"f32","requires_grad":true,"shape":[4,16],"stride":[16,1]}],"outputs":[{"dtype":"f32","requires_grad":false,"shape":[4,16],"stride":[16,1]}],"stage":1}
 set_stage_meta {"inputs":[{"dtype":"f32","requires_grad":false,"shape":[4,16],"stride":[16,1]}],"outputs":[{"dtype":"f32","requires_grad":true,"shape":[4,8],"stride":[8,1]}],"stage":2}
 plan_buffers {}
   plan_buffer {"bytes":256,"direction":"recv_forward","metas":[{"dtype":"f32","requires_grad":true,"shape":[4,16],"stride":[16,1]}],"peer_rank":0,"peer_stage":0,"stage":1}
   plan_buffer {"bytes":256,"direction":"send_forward","metas":[{"dtype":"f32","requires_grad":false,"shape":[4,16],"stride":[16,1]}],"peer_rank":0,"peer_stage":2,"stage":1}
   plan_buffer {"bytes":0,"direction":"recv_backward","metas":[],"peer_rank":0,"peer_stage":2,"stage":1}
   plan_buffer {"bytes":256,"direction":"send_backward","metas":[{"dtype":"f32","requires_grad":true,"shape":[4,16],"stride":[16,1]}],"peer_rank":0,"peer_stage":0,"stage":1}
   plan_buffer {"bytes":0,"direction":"recv_forward","metas":[],"peer_rank":0,"peer_stage":2,"stage":3}
   plan_buffer {"bytes":0,"direction":"send_backward","metas":[],"peer_rank":0,"peer_stage":2,"stage":3}
 set_stage_backend {"backend":"checked","stage":3}
 PipelineState {"rank":-1,"run_kind":"sim"}
 load_schedule_csv {"csv":"0F0,0F1,0B0,0B1\r\n1F0,1B0,1F1,1B1\r\n","source":"plan.csv"}
 lower_schedule {"keep_fsdp_actions":true}
 set_cost_model {"inter_host_gb_per_s":12.5,"inter_host_latency_ns":5000,"intra_host_gb_per_s":0.0,"intra_host_latency_ns":1500,"overlap_efficiency":0.75,"ranks_per_host":8,"reduce_grad_ns":30,"reshard_ns":20,"unshard_ns":10}
 set_stage_costs {"activation_bytes":4096,"backward_ns":100,"forward_ns":100,"held_bytes":8192,"input_ns":60,"stage":0,"weight_ns":40}
 set_stage_costs {"activation_bytes":0,"backward_ns":110,"forward_ns":110,"held_bytes":2048,"input_ns":70,"stage":1,"weight_ns":40}
 plan_buffers {}
   plan_buffer {"bytes":4096,"direction":"send_forward","metas":[],"peer_rank":1,"peer_stage":1,"stage":0}
   plan_buffer {"bytes":4096,"direction":"recv_backward","metas":[],"peer_rank":1,"peer_stage":1,"stage":0}
   plan_buffer {"bytes":4096,"direction":"recv_forward","metas":[],"peer_rank":0,"peer_stage":0,"stage":1}
   plan_buffer {"bytes":4096,"direction":"send_backward","metas":[],"peer_rank":0,"peer_stage":0,"stage":1}
 decide_sharding {"cost_us":1.5,"op":"aten.mm(f32[8, 4], f32[4, 2])","strategy":"S(0)R"}
)golden";

TEST(EventTable, EveryKindWritesTheJsonTracesAlreadyHold) {
    EXPECT_EQ(stream_text(record(1, "real", rank_calls()).events) +
                  stream_text(record(-1, "sim", simulation_calls()).events),
              kGoldenStreams);
}

TEST(EventTable, EveryKindRoundTripsAndReplaysToTheRecordedState) {
    std::set<std::string_view> kinds_seen;
    for (const auto& [rank, run_kind, calls] :
         {std::tuple{1, "real", rank_calls()}, std::tuple{-1, "sim", simulation_calls()}}) {
        const Recording recording = record(rank, run_kind, calls);
        for (const Event& event : recording.events) {
            const AnyEvent parsed = parse_event(event);
            EXPECT_EQ(event_name(parsed), event.name);
            EXPECT_EQ(event_arguments(parsed).dump(), event.arguments.dump()) << to_string(event);
            kinds_seen.insert(event_name(parsed));
        }
        // Replaying the first k top-level events gives the state recorded after the k-th call.
        const std::vector<Event> top = top_level_events(recording.events);
        ASSERT_EQ(top.size(), recording.states.size());
        for (std::size_t count = 1; count <= top.size(); ++count) {
            const StateRecorder replayed = replay_prefix(top, count);
            EXPECT_EQ(state_fields(replayed.state()), recording.states[count - 1])
                << "after " << to_string(top[count - 1]);
            if (count == top.size()) {
                EXPECT_FALSE(compare_event_streams(recording.events, replayed.events()));
            }
        }
    }
    const std::vector<std::string_view> names = event_names();
    EXPECT_EQ(kinds_seen, std::set<std::string_view>(names.begin(), names.end()));
    EXPECT_EQ(names.size(), 14u);
}

// Fields added for the zero-bubble search, deferred receives and rendezvous transfers are
// written when set, read back, and replayed to the same state.
TEST(EventTable, ZeroBubbleDeferralAndRendezvousFieldsRoundTrip) {
    ScheduleShape shape{ScheduleKind::zero_bubble_auto, 4, 1, 8};
    shape.zero_bubble = {5, 6, 4, 1, 8};
    recorder::CostModelState costs{true, 300, 0, 300, 0, 8, 1.0, 0, 0, 0, false, {}};
    costs.rendezvous = true;
    costs.send_issue_ns = 55000;
    costs.posted_receive_buffers = true;
    const std::vector<Call> calls = {
        [shape](StateRecorder& r) { r.choose_schedule(shape); },
        [](StateRecorder& r) { r.lower_schedule(false, true); },
        [costs](StateRecorder& r) { r.set_cost_model(costs); },
    };
    const Recording recording = record(-1, "sim", calls);
    EXPECT_EQ(stream_text(recording.events),
              R"( PipelineState {"rank":-1,"run_kind":"sim"}
 choose_schedule {"kind":"ZeroBubbleAuto","m":8,"max_activations":8,"pp":4,"v":1,"zero_bubble_comm_ns":1,"zero_bubble_f_ns":5,"zero_bubble_i_ns":6,"zero_bubble_w_ns":4}
 lower_schedule {"defer_recv":true,"keep_fsdp_actions":false}
 set_cost_model {"inter_host_gb_per_s":0.0,"inter_host_latency_ns":300,"intra_host_gb_per_s":0.0,"intra_host_latency_ns":300,"overlap_efficiency":1.0,"posted_receive_buffers":true,"ranks_per_host":8,"reduce_grad_ns":0,"rendezvous":true,"reshard_ns":0,"send_issue_ns":55000,"unshard_ns":0}
)");
    const std::vector<Event> top = top_level_events(recording.events);
    const StateRecorder replayed = replay_prefix(top, top.size());
    EXPECT_EQ(state_fields(replayed.state()), recording.states.back());
    EXPECT_EQ(replayed.state().schedule.zero_bubble_inputs,
              "f=5ns i=6ns w=4ns comm=1ns max_activations=8");
    EXPECT_TRUE(replayed.state().schedule.receives_deferred);
    EXPECT_TRUE(replayed.state().costs.rendezvous);
    EXPECT_EQ(replayed.state().costs.send_issue_ns, 55000);
    EXPECT_TRUE(replayed.state().costs.posted_receive_buffers);
}

// What an I leaves for its W is written only when set, so a stage's costs without it read as
// they always did, and is replayed to the same state.
TEST(EventTable, WhatAnInputBackwardLeavesRoundTripsAndIsLeftOutAtZero) {
    const ScheduleShape shape{ScheduleKind::interleaved_zero_bubble, 2, 1, 4};
    recorder::StageCostState with{1000, 600, 400, 1000, 256, 512};
    with.input_kept_bytes = 4096;
    recorder::StageCostState without = with;
    without.input_kept_bytes = 0;
    const std::vector<Call> calls = {
        [shape](StateRecorder& r) { r.choose_schedule(shape); },
        [with](StateRecorder& r) { r.set_stage_costs(0, with); },
        [without](StateRecorder& r) { r.set_stage_costs(1, without); },
    };
    const Recording recording = record(-1, "sim", calls);
    const std::string text = stream_text(recording.events);
    EXPECT_NE(text.find("set_stage_costs {\"activation_bytes\":256,\"backward_ns\":1000,"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("\"input_kept_bytes\":4096"), std::string::npos) << text;
    EXPECT_EQ(text.find("\"input_kept_bytes\":0"), std::string::npos) << text;
    const std::vector<Event> top = top_level_events(recording.events);
    const StateRecorder replayed = replay_prefix(top, top.size());
    EXPECT_EQ(state_fields(replayed.state()), recording.states.back());
    ASSERT_TRUE(replayed.state().stages.at(0).costs.has_value());
    EXPECT_EQ(replayed.state().stages.at(0).costs->input_kept_bytes, 4096);
    EXPECT_EQ(replayed.state().stages.at(1).costs->input_kept_bytes, 0);
}

// A simulation's stream written to a real trace file, one event's arguments then edited with
// SQL as a user (or another tool) could, and read back from the file: every event is read
// before anything replays, so what cannot be read is a damaged trace. The message after the
// trace's path and stream.
std::string read_error_after_edit(const std::string& name, const std::string& sql) {
    const std::filesystem::path path = testing::fresh_trace("event_table_" + name);
    {
        traces::TraceWriter writer(path);
        const std::int64_t run = writer.begin_run(traces::RunRecord{});
        StateRecorder recorder(-1, "sim");
        for (const Call& call : simulation_calls())
            call(recorder);
        write_recording(writer, run, recorder);
        writer.finish_run(run, 0, 0);
    }
    testing::RawDatabase(path).execute(sql);
    const traces::TraceReader reader(path);
    const RecordedEvents recorded(reader, reader.latest_run_id());
    const std::string message =
        testing::thrown_message<std::invalid_argument>([&] { recorded.stream(-1); }, "no error");
    const std::string stream = ": trace is corrupt: run 1 whole pipeline: ";
    const std::size_t at = message.find(stream);
    return at == std::string::npos ? message : message.substr(at + stream.size());
}

TEST(EventTable, AMissingOrMistypedFieldInATraceNamesTheEventAndTheField) {
    EXPECT_EQ(read_error_after_edit(
                  "missing",
                  "UPDATE events SET arguments = json_remove(arguments, '$.held_bytes') "
                  "WHERE sequence = 4"),
              "event 4 (set_stage_costs): malformed arguments: field 'held_bytes' is missing");
    EXPECT_EQ(read_error_after_edit("mistyped",
                                    "UPDATE events SET arguments = json_set(arguments, "
                                    "'$.keep_fsdp_actions', 'yes') WHERE sequence = 2"),
              R"(event 2 (lower_schedule): malformed arguments: field 'keep_fsdp_actions' )"
              R"(must be true or false, got "yes")");
    EXPECT_EQ(read_error_after_edit("fraction",
                                    "UPDATE events SET arguments = json_set(arguments, "
                                    "'$.stage', 0.5) WHERE sequence = 4"),
              "event 4 (set_stage_costs): malformed arguments: field 'stage' must be an "
              "integer, got 0.5");
}

// Metadata of the right types that no tensor can have (only a damaged or hand-made trace holds
// it) is unreadable, naming the field, the tensor and what is impossible, instead of being
// replayed into a negative buffer.
TEST(EventTable, TensorMetadataNoRunCanRecordIsRefusedNamingTheTensor) {
    const auto stage_meta_error = [](const char* output) {
        const nlohmann::json arguments = nlohmann::json::parse(
            std::string(R"({"stage":0,"inputs":[{"dtype":"f32","shape":[8,64],"stride":[64,1]}],)"
                        R"("outputs":[)") +
            output + "]}");
        return testing::thrown_message<EventFormatError>(
            [&] { parse_event("set_stage_meta", arguments); }, "no error");
    };
    EXPECT_EQ(stage_meta_error(R"({"dtype":"f32","shape":[8,64],"stride":[64,1]})"), "no error");
    EXPECT_EQ(stage_meta_error(R"({"dtype":"f32","shape":[-8,64],"stride":[64,1]})"),
              "malformed arguments: field 'outputs': tensor 0 is f32[-8, 64]: shape[0] is -8; "
              "sizes cannot be negative");
    EXPECT_EQ(stage_meta_error(R"({"dtype":"f32","shape":[8,64]},)"
                               R"({"dtype":"bf16","shape":[8,64],"stride":[1]})"),
              "malformed arguments: field 'outputs': tensor 1 is bf16[8, 64]: stride has 1 "
              "entries for a shape of 2 dimensions");
    // A size past int64 was read wrapped round, as -1: reported as a size the trace does not
    // hold.
    const std::string past = stage_meta_error(R"({"dtype":"f32","shape":[18446744073709551615]})");
    EXPECT_NE(past.find("tensor metadata's 'shape' holds 18446744073709551615, past the largest "
                        "size a tensor can have"),
              std::string::npos)
        << past;
    EXPECT_NE(stage_meta_error(R"({"dtype":"f32","shape":[true,16]})")
                  .find("tensor metadata's 'shape' holds true, not an integer"),
              std::string::npos);
    EXPECT_EQ(stage_meta_error(R"({"dtype":"f32","shape":[4294967296,4294967296]})"),
              "malformed arguments: field 'outputs': tensor 0 is f32[4294967296, 4294967296]: "
              "shape [4294967296, 4294967296] holds more bytes than int64 counts");
    EXPECT_EQ(stage_meta_error(R"({"dtype":"complex999","shape":[8]})")
                  .rfind("malformed arguments: field 'outputs': tensor 0 is complex999[8]: dtype "
                         "'complex999' is not one PyTorch names (known: bf16, ",
                         0),
              0u);
}

TEST(EventTable, AnUnknownOrRenamedEventInATraceIsNamed) {
    EXPECT_EQ(read_error_after_edit("unknown",
                                    "UPDATE events SET name_id = (SELECT id FROM strings WHERE "
                                    "text = 'lower_schedule') WHERE sequence = 1"),
              "event 1 (lower_schedule): malformed arguments: field 'keep_fsdp_actions' is "
              "missing");
    EXPECT_EQ(read_error_after_edit("unknown",
                                    "INSERT INTO strings (text) VALUES ('load_schedule_tsv'); "
                                    "UPDATE events SET name_id = last_insert_rowid() "
                                    "WHERE sequence = 1"),
              "event 1 (load_schedule_tsv): no recorded call has this name");
}

TEST(EventTable, ANestedKindOrASecondConstructorAtTopLevelIsRefused) {
    std::vector<Event> events = record(-1, "sim", simulation_calls()).events;
    Event nested_kind = events.back();
    nested_kind.name = "plan_buffer";
    nested_kind.arguments = event_arguments(PlanBuffer{});
    try {
        StateRecorder recorder(-1, "sim");
        recorder.replay(nested_kind);
        FAIL() << "no error";
    } catch (const std::invalid_argument& error) {
        EXPECT_STREQ(error.what(), "only plan_buffers makes plan_buffer, nested under it");
    }
    try {
        StateRecorder recorder(-1, "sim");
        recorder.replay(events.front());
        FAIL() << "no error";
    } catch (const std::invalid_argument& error) {
        EXPECT_STREQ(error.what(), "PipelineState constructs the state: only event 0 is one");
    }
}

}  // namespace
}  // namespace pipelens::recorder
