// Runs in another dtype (`--dtype bfloat16`) on real LibTorch tensors: the model and the batch are
// cast where they are placed (float32 tensors only), a bfloat16 mlp run matches its bfloat16
// single-rank reference within bfloat16's tolerance yet an injected error still fails it, the
// stage boundaries carry bf16, and each rank records the dtype in its configure_transport event
// where a float32 run records what it always did.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "engine/recorder/state_replay.hpp"
#include "engine/run_record/faults.hpp"
#include "engine/runtime/device_placement.hpp"
#include "engine/runtime/pipeline_run.hpp"
#include "engine/runtime/torch_meta.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "engine/tensor/dtype_names.hpp"

namespace pipelens::runtime {
namespace {

Schedule one_f_one_b() {
    return lower(generate_schedule({ScheduleKind::one_f_one_b, 2, 1, 4}));
}

run_record::PipelineRunOptions mlp_in(const std::string& dtype) {
    run_record::PipelineRunOptions options;
    options.model = "mlp";
    options.batch_size = 16;
    options.timeout_ms = 5'000;
    options.dtype = dtype;
    return options;
}

const recorder::Event& configure_transport(const run_record::RankRecording& recording) {
    const auto& events = recording.parts.events;
    const auto found = std::find_if(events.begin(), events.end(), [](const recorder::Event& event) {
        return event.name == "configure_transport";
    });
    if (found == events.end())
        throw std::logic_error("no configure_transport event");
    return *found;
}

TEST(RunDtype, PlacingCastsFloat32TensorsAndLeavesTheRest) {
    ModelSpec spec;
    spec.name = "example";
    spec.layers = 2;
    spec.hidden = 8;
    PipelineModel model = build_model(spec, 2);
    Batch batch;
    std::tie(batch.whole_inputs, batch.whole_target) = model.make_batch(4, 0);
    batch.whole_inputs.push_back(torch::arange(4, torch::kInt64));
    const torch::Tensor held = model.layers[0].parameters[0];  // as a layer's closure holds it
    place_model(model, c10::Device(c10::kCPU), c10::kBFloat16);
    place_batch(batch, c10::Device(c10::kCPU), c10::kBFloat16);
    EXPECT_EQ(held.scalar_type(), c10::kBFloat16);  // moved in place: the holder sees it
    EXPECT_TRUE(held.requires_grad());
    EXPECT_TRUE(held.is_leaf());
    for (const torch::Tensor& buffer : model.buffers)
        EXPECT_EQ(buffer.scalar_type(), c10::kBFloat16);
    EXPECT_EQ(batch.whole_inputs[0].scalar_type(), c10::kBFloat16);
    EXPECT_EQ(batch.whole_inputs[1].scalar_type(), c10::kLong);
    EXPECT_EQ(batch.whole_target.scalar_type(), c10::kBFloat16);
}

TEST(RunDtype, NamesMapToLibTorchTypesAndOthersAreRefused) {
    EXPECT_EQ(run_scalar_type("float32"), c10::kFloat);
    EXPECT_EQ(run_scalar_type("bfloat16"), c10::kBFloat16);
    try {
        run_scalar_type("bf16");
        FAIL() << "bf16 is PyTorch's short name, not a --dtype";
    } catch (const std::invalid_argument& error) {
        EXPECT_STREQ(error.what(),
                     "--dtype: 'bf16' is not a dtype pipelens run computes in (float32 or "
                     "bfloat16)");
    }
}

// A stage boundary records its tensors' dtype by PyTorch's short name, which a replay reads back
// and sizes: every type this LibTorch has but the quantized ones must get a name the dtype
// table knows, with the size LibTorch gives it, or a real run's trace would not replay.
TEST(RunDtype, EveryLibTorchTypeButTheQuantizedIsRecordedByASizedShortName) {
    int named = 0;
    for (int index = 0; index < static_cast<int>(c10::ScalarType::NumOptions); ++index) {
        const auto type = static_cast<c10::ScalarType>(index);
        if (c10::isQIntType(type) || type == c10::ScalarType::Undefined)
            continue;
        const std::string name = short_dtype_name(type);
        const auto bytes = dtype_item_bytes(name);
        if (!bytes) {  // a type newer than the table (bits2x4, int1..7) is named, not sized
            EXPECT_FALSE(std::string(c10::toString(type)).starts_with("Float"))
                << c10::toString(type) << " has no short name";
            continue;
        }
        EXPECT_EQ(*bytes, static_cast<std::int64_t>(c10::elementSize(type)))
            << c10::toString(type) << " as " << name;
        ++named;
    }
    EXPECT_GE(named, 13);  // LibTorch 1.13 has 13 such types; newer ones more
    EXPECT_EQ(short_dtype_name(c10::kComplexDouble), "c128");
    EXPECT_EQ(short_dtype_name(c10::kComplexHalf), "c32");
}

// Every dtype the fault parser accepts for `stageN=dtype:` is one the runtime makes tensors of,
// so an accepted fault never fails the run's first forward instead of its check.
TEST(RunDtype, EveryFaultDtypeIsOneTheRuntimeMakes) {
    for (const std::string_view name : run_record::kFaultDtypes) {
        const torch::ScalarType type = scalar_type_of(std::string(name));
        EXPECT_EQ(short_dtype_name(type), name);
        EXPECT_EQ(torch::ones({2}).to(type).scalar_type(), type) << name;
    }
    EXPECT_THROW(scalar_type_of("u32"), std::invalid_argument);
}

TEST(RunDtype, Bfloat16MlpMatchesItsBfloat16Reference) {
    const auto result = run_pipeline(mlp_in("bfloat16"), one_f_one_b());
    ASSERT_TRUE(result.completed);
    for (const run_record::RankRun& rank : result.ranks)
        EXPECT_FALSE(rank.failure) << rank.failure->message;
    EXPECT_TRUE(result.reference.outputs_match) << result.reference.output_max_error;
    EXPECT_TRUE(result.reference.gradients_match) << result.reference.gradient_max_error;
    // The boundaries carry bf16, so the stages' shape checks expect what they are sent.
    ASSERT_EQ(result.stage_inputs.size(), 2u);
    EXPECT_EQ(result.stage_inputs[0].at(0).dtype, "bf16");
    EXPECT_EQ(result.stage_inputs[1].at(0).dtype, "bf16");
    // Not float32's figures: a bfloat16 reference differs from the float32 one.
    const auto float32 = run_pipeline(mlp_in("float32"), one_f_one_b());
    EXPECT_NE(result.reference.reference_loss, float32.reference.reference_loss);
    EXPECT_EQ(float32.stage_inputs[1].at(0).dtype, "f32");
}

TEST(RunDtype, AnInjectedErrorStillFailsTheBfloat16Check) {
    run_record::PipelineRunOptions options = mlp_in("bfloat16");
    options.backends = {"stage1=accuracy-error"};
    options.check_accuracy = true;
    const auto result = run_pipeline(options, one_f_one_b());
    ASSERT_TRUE(result.completed);
    EXPECT_FALSE(result.reference.outputs_match);
    ASSERT_TRUE(result.accuracy.first_divergence);
    EXPECT_EQ(result.accuracy.first_divergence->stage, 1);
    EXPECT_EQ(result.accuracy.tolerance, run_record::reference_tolerance("bfloat16"));
}

TEST(RunDtype, EachRankRecordsTheDtypeWhereItIsNotFloat32) {
    const auto bfloat16 = run_pipeline(mlp_in("bfloat16"), one_f_one_b());
    ASSERT_EQ(bfloat16.recordings.size(), 2u);
    for (const run_record::RankRecording& recording : bfloat16.recordings) {
        EXPECT_EQ(configure_transport(recording).arguments.at("dtype"), "bfloat16");
        const auto& state = recording.parts.state;
        EXPECT_NE(std::find(state.begin(), state.end(),
                            recorder::StateField{"transport.dtype", "bfloat16"}),
                  state.end());
        // It replays to the state it was recorded with.
        const recorder::StateRecorder replayed = recorder::replay_events(recording.parts.events);
        EXPECT_EQ(recorder::state_fields(replayed.state()), state);
    }
    const auto float32 = run_pipeline(mlp_in("float32"), one_f_one_b());
    for (const run_record::RankRecording& recording : float32.recordings) {
        EXPECT_FALSE(configure_transport(recording).arguments.contains("dtype"));
        for (const recorder::StateField& field : recording.parts.state)
            EXPECT_NE(field.name, "transport.dtype");
    }
}

}  // namespace
}  // namespace pipelens::runtime
