// Timing a stage's actions one by one (I, W and B in the same repetitions, and OVERLAP_F_B
// beside F and B). Each repetition first brings the stage into the state the action needs (a
// forward before I or B) outside the timed region, and gradients are allocated before the first
// timed backward, as in every microbatch of a step but the first. Microbatch 0 carries the
// timed work; 1 is OVERLAP_F_B's backward half; 2 the memory measurement, so no timed region
// ever frees a state left over from another repetition.
#include "engine/runtime/stage_profiler.hpp"

#include "engine/run_record/repeated_timing.hpp"
#include "engine/runtime/device_timing.hpp"
#include "engine/runtime/memory_account.hpp"
#include "engine/runtime/torch_meta.hpp"

namespace pipelens::runtime {
namespace {

using Clock = std::chrono::steady_clock;

std::int64_t time_ns(const std::function<void()>& work) {
    const auto start = Clock::now();
    work();
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

TensorList random_like(const TensorList& tensors) {
    TensorList random;
    for (const torch::Tensor& tensor : tensors)
        random.push_back(tensor.is_floating_point() ? torch::randn_like(tensor)
                                                    : torch::zeros_like(tensor));
    return random;
}

// Where `tensors` are: a stage made to time them must trace its layers there.
c10::Device device_of(const TensorList& tensors) {
    return tensors.empty() ? c10::Device(c10::kCPU) : tensors.front().device();
}

// Microbatch 0's inputs of `stage`: the model's on stage 0, random values shaped as shape
// inference fixed them elsewhere (the values do not change the work done).
TensorList inputs_of(const PipelineStage& stage, const StageProfileInput& input) {
    if (stage.index() == 0)
        return input.first_stage_inputs;
    TensorList inputs;
    for (const TensorMeta& meta : stage.meta().inputs) {
        torch::Tensor tensor = empty_like_meta(meta, input.device);
        inputs.push_back(tensor.is_floating_point() ? tensor.normal_() : tensor.zero_());
    }
    return inputs;
}

struct LayerStage {
    int layer = 0;
    std::unique_ptr<PipelineStage> stage;
    TensorList inputs;
};

// Each layer of `stage` as a stage of its own (never the last: no loss), with the inputs the
// layers before it produce from `inputs`.
std::vector<LayerStage> layers_as_stages(const PipelineStage& stage, const TensorList& inputs,
                                         int first_layer, int microbatch_count) {
    std::vector<LayerStage> result;
    TensorList values;
    for (std::size_t index = 0; index < inputs.size(); ++index)
        values.push_back(inputs[index].detach().requires_grad_(
            index < stage.meta().inputs.size() && stage.meta().inputs[index].requires_grad));
    for (std::size_t index = 0; index < stage.layers().size(); ++index) {
        const ModelLayer& layer = stage.layers()[index];
        TensorList outputs = layer.forward(values);
        StageMeta meta{metas_of(values), metas_of(outputs)};
        TensorList detached;
        for (const torch::Tensor& value : values)
            detached.push_back(value.detach());
        result.push_back(
            {first_layer + static_cast<int>(index),
             std::make_unique<PipelineStage>(0, 2, microbatch_count, std::vector<ModelLayer>{layer},
                                             meta, stage.backend_name(), false, device_of(values)),
             std::move(detached)});
        values = std::move(outputs);
    }
    return result;
}

// The last stage's loss alone: a last stage without layers, on what the stage's layers output.
// Timed by itself rather than fitted as "stage minus layers", a small difference of two large
// figures taken at different moments of a busy machine.
std::pair<std::unique_ptr<PipelineStage>, TensorList> loss_as_stage(const PipelineStage& stage,
                                                                    const TensorList& inputs) {
    TensorList outputs;
    {
        torch::NoGradGuard no_grad;
        outputs = run_layers(stage.layers(), inputs);
    }
    StageMeta meta{metas_of(outputs), metas_of(outputs)};
    for (TensorMeta& output : meta.inputs)
        output.requires_grad = output.dtype.starts_with("f") || output.dtype == "bf16";
    return {std::make_unique<PipelineStage>(1, 2, 1, std::vector<ModelLayer>{}, meta, "eager",
                                            false, device_of(outputs)),
            outputs};
}

// The budget is shared out by expected cost, so a whole stage's figures get as many samples as
// a layer's: one share per quantity (F, I, W, B) of a layer or the loss, a layer count's worth
// for each of the whole stage's, and OVERLAP_F_B's repetitions time three things.
inline constexpr int kBackwardShares = 3;  // I, W and B
inline constexpr int kOverlapShares = 3;

int layer_count(const PipelineStage& stage) {
    return std::max(static_cast<int>(stage.layers().size()), 1);
}

int budget_units(const PipelineStage& stage) {
    const int layers = layer_count(stage);
    const int per_item = 1 + kBackwardShares;           // F, then I, W and B
    return per_item * layers + kOverlapShares * layers  // the whole stage
           + per_item * layers                          // each layer on its own
           + (stage.is_last() ? per_item : 0);          // the loss
}

class Profiler {
  public:
    // `units`: the budget's shares, one per quantity timed on one layer (see budget_units).
    Profiler(const StageProfileInput& input, int units)
        : input_(input), unit_budget_(input.budget / std::max(units, 1)) {}

    // F, I, W, B (and for a whole stage OVERLAP_F_B) and memory of `stage` run on `inputs`;
    // `weight`: the budget's shares each of its quantities gets (its layer count).
    void profile(PipelineStage& stage, const TensorList& inputs, int stage_index, int layer,
                 const std::string& layer_name, int weight) {
        const torch::Tensor target = stage.is_last() ? input_.last_stage_target : torch::Tensor();
        const TensorList outputs = stage.forward(0, inputs, target);
        std::int64_t output_bytes = 0;
        for (const torch::Tensor& output : outputs)
            output_bytes += static_cast<std::int64_t>(output.nbytes());
        const TensorList gradients = random_like(outputs);
        stage.full_backward(0, gradients);  // weight gradients exist from here on
        const auto add = [&](const std::string& quantity, const run_record::Spread& spread) {
            figures_.push_back({input_.rank, stage_index, layer, layer_name, quantity, -1, 0,
                                spread.median, spread.low, spread.high, spread.samples});
        };
        add("F", repeat(weight, [&] {
                const std::int64_t took = time_ns([&] { stage.forward(0, inputs, target); });
                stage.drop(0);
                return took;
            }));
        profile_backwards(stage, inputs, target, gradients, add, weight);
        if (layer == kWholeStage)  // the loss is never an overlap's part on its own
            profile_overlap(stage, inputs, target, gradients, add, weight);
        add("output_bytes", run_record::Spread{output_bytes, output_bytes, output_bytes, 1});
        profile_memory(stage, inputs, target, gradients, add);
    }

    std::vector<run_record::ProfileFigure> take() { return std::move(figures_); }

  private:
    // Repeats `timed_run` on `shares` of the budget.
    run_record::Spread repeat(int shares, const std::function<std::int64_t()>& timed_run) const {
        run_record::RepeatRule rule;
        rule.budget = unit_budget_ * shares;
        return run_record::repeat_until_stable(timed_run, rule);
    }

    // I, W and B, back to back in every repetition. Calibration keeps only their ratios (the
    // step sets the level), and ratios taken at one moment do not move with the machine's
    // drift: timed in loops of their own, seconds apart, W once came out above B.
    template <typename Add>
    void profile_backwards(PipelineStage& stage, const TensorList& inputs,
                           const torch::Tensor& target, const TensorList& gradients, const Add& add,
                           int weight) {
        std::vector<std::int64_t> input_ns, weight_ns, full_ns;
        repeat(kBackwardShares * weight, [&] {
            stage.forward(0, inputs, target);
            input_ns.push_back(time_ns([&] { stage.backward_input(0, gradients); }));
            weight_ns.push_back(time_ns([&] { stage.backward_weight(0); }));
            stage.forward(0, inputs, target);
            full_ns.push_back(time_ns([&] { stage.full_backward(0, gradients); }));
            return input_ns.back() + weight_ns.back() + full_ns.back();
        });
        add("I", run_record::spread_of(after_warmup(std::move(input_ns))));
        add("W", run_record::spread_of(after_warmup(std::move(weight_ns))));
        add("B", run_record::spread_of(after_warmup(std::move(full_ns))));
    }

    // The samples a repeat() collected on the side, less its warm-up runs.
    static std::vector<std::int64_t> after_warmup(std::vector<std::int64_t> samples) {
        const auto warmup = static_cast<std::size_t>(run_record::RepeatRule{}.warmup);
        samples.erase(samples.begin(), samples.begin() + std::min(samples.size(), warmup));
        return samples;
    }

    // OVERLAP_F_B as the executor runs it (F of one microbatch, then B of another), and what it
    // saves against F and B alone. Each repetition times all three back to back, so the saving
    // is a difference of figures taken at one moment: the machine's drift, tens of percent
    // between seconds here, would otherwise swamp a saving of a few percent.
    template <typename Add>
    void profile_overlap(PipelineStage& stage, const TensorList& inputs,
                         const torch::Tensor& target, const TensorList& gradients, const Add& add,
                         int weight) {
        std::vector<std::int64_t> savings;
        const run_record::Spread overlapped = repeat(kOverlapShares * weight, [&] {
            const std::int64_t forward = time_ns([&] { stage.forward(0, inputs, target); });
            stage.drop(0);
            stage.forward(1, inputs, target);
            const std::int64_t backward = time_ns([&] { stage.full_backward(1, gradients); });
            stage.forward(1, inputs, target);
            const std::int64_t both = time_ns([&] {
                stage.forward(0, inputs, target);
                stage.full_backward(1, gradients);
            });
            stage.drop(0);
            savings.push_back(forward + backward - both);
            return both;
        });
        add("OVERLAP_F_B", overlapped);
        add("OVERLAP_F_B_saved", run_record::spread_of(after_warmup(std::move(savings))));
    }

    template <typename Add>
    void profile_memory(PipelineStage& stage, const TensorList& inputs, const torch::Tensor& target,
                        const TensorList& gradients, const Add& add) {
        MemoryAccountHandle account;
        const ScopedMemoryAccount charged(account.get());
        // On a GPU the allocator's figures (the CPU account sees no GPU tensor), counted from
        // what the device held before, as a run's steps are.
        const std::unique_ptr<DeviceMemory> device = make_device_memory(input_.device, *account);
        MemoryAboveBaseline memory(*device);
        stage.forward(2, inputs, target);
        const std::int64_t held = memory.sample().allocated_bytes;
        memory.mark();
        stage.full_backward(2, gradients);
        const std::int64_t backward_peak = memory.sample().peak_allocated_bytes - held;
        const std::int64_t kept = memory.sample().allocated_bytes;  // past the backward
        std::int64_t gradient_bytes = 0;
        for (const torch::Tensor& parameter : stage.parameters())
            gradient_bytes += static_cast<std::int64_t>(parameter.nbytes());
        const std::int64_t input_kept = input_kept_bytes(stage, inputs, target, gradients, memory);
        add("held_bytes", run_record::Spread{held, held, held, 1});
        add("backward_peak_bytes",
            run_record::Spread{backward_peak, backward_peak, backward_peak, 1});
        add("kept_bytes", run_record::Spread{kept, kept, kept, 1});
        add("input_kept_bytes", run_record::Spread{input_kept, input_kept, input_kept, 1});
        add("gradient_bytes",
            run_record::Spread{gradient_bytes, gradient_bytes, gradient_bytes, 1});
    }

    // What an I leaves held until its W, beyond what F held: the gradients W reads (its output
    // gradients, each weight's share). The output gradients are copied inside the account and
    // handed over, as the run's received ones were allocated in its step and moved into I.
    static std::int64_t input_kept_bytes(PipelineStage& stage, const TensorList& inputs,
                                         const torch::Tensor& target, const TensorList& gradients,
                                         MemoryAboveBaseline& memory) {
        stage.forward(2, inputs, target);
        const std::int64_t before = memory.sample().allocated_bytes;
        {
            TensorList owned;
            for (const torch::Tensor& gradient : gradients)
                owned.push_back(gradient.clone());
            stage.backward_input(2, owned);  // the input gradients it returns go to the sender
        }
        const std::int64_t kept = memory.sample().allocated_bytes - before;
        stage.backward_weight(2);
        return std::max<std::int64_t>(kept, 0);
    }

    const StageProfileInput& input_;
    std::chrono::nanoseconds unit_budget_;
    std::vector<run_record::ProfileFigure> figures_;
};

}  // namespace

std::vector<run_record::ProfileFigure> profile_stages(const StageProfileInput& input) {
    int units = 0;
    for (const auto& [index, stage] : *input.stages)
        units += budget_units(*stage);
    Profiler profiler(input, units);
    for (auto& [index, stage] : *input.stages) {
        stage->reset();
        const TensorList inputs = inputs_of(*stage, input);
        profiler.profile(*stage, inputs, index, -1, "", layer_count(*stage));
        const int first_layer = input.split->at(index).first;
        for (LayerStage& layer :
             layers_as_stages(*stage, inputs, first_layer, /*microbatch_count=*/3))
            profiler.profile(*layer.stage, layer.inputs, index, layer.layer,
                             input.model->layers.at(layer.layer).name, 1);
        if (stage->is_last()) {
            auto [loss, outputs] = loss_as_stage(*stage, inputs);
            profiler.profile(*loss, outputs, index, kLossLayer, "loss", 1);
        }
        stage->reset();
    }
    return profiler.take();
}

}  // namespace pipelens::runtime
