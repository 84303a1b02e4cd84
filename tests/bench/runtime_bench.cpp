// Benchmarks of the real runtime (local transport, ranks as threads):
//   runtime_overhead   a step of 1F1B on the `empty` model (stages that only scale by a scalar
//                      parameter), reporting the runtime's own cost per executed action;
//   libtorch_floor     LibTorch alone doing those stages' forward and backward, the part of
//                      runtime_overhead that is not pipelens;
//   simulated_vs_real  a real step of an MLP, calibrated from its own trace, simulated, and the
//                      simulated step compared with the measured one (relative error);
//   stage_backward     one multi-layer stage's backward: B, then I and W, each after an untimed
//                      F, in every iteration, so the ratios (I + W) / B and W / B are taken at one
//                      moment of a shared machine; single-threaded, in this thread's CPU time;
//   stage_backward_cuda  the same on the GPU (registered only where CUDA is usable), in wall
//                      time with the device synchronised around each timed part;
//   action_instruments what the executor adds to each action to time it and sample its memory
//                      (two clock reads, the timer's begin and end, the memory's mark and two
//                      samples), in steps of 64 actions with a timer made and read per step as
//                      the executor does: on the CPU, and on the GPU (CUDA events, the caching
//                      allocator's statistics) where one is usable; `per_action_s`.
//
//   make bench            # or: build/tests/pipelens_bench_runtime
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <time.h>

#include <chrono>
#include <cmath>
#include <filesystem>

#include <torch/torch.h>

#include "engine/run_record/experiment_schedule.hpp"
#include "engine/run_record/run_trace.hpp"
#include "engine/runtime/device_placement.hpp"
#include "engine/runtime/device_timing.hpp"
#include "engine/runtime/pipeline_run.hpp"
#include "engine/runtime/pipeline_stage.hpp"
#include "engine/runtime/torch_meta.hpp"
#include "engine/schedule/generate.hpp"
#include "engine/schedule/lower.hpp"
#include "sim/calibration.hpp"
#include "sim/experiment_costs.hpp"
#include "sim/simulator.hpp"

namespace {

using namespace pipelens;

void runtime_overhead(benchmark::State& state) {
    const int pp = static_cast<int>(state.range(0));
    const int m = static_cast<int>(state.range(1));
    const Schedule lowered = lower(generate_schedule({ScheduleKind::one_f_one_b, pp, 1, m}));
    run_record::PipelineRunOptions options;
    options.model = "empty";
    options.hidden = 8;
    options.batch_size = m;
    options.check_reference = false;
    options.warmup_steps = 3;
    double per_action_ns = 0;
    double step_ns = 0;
    std::size_t actions = 0;
    for (auto _ : state) {
        const run_record::PipelineRunResult result = runtime::run_pipeline(options, lowered);
        if (!result.completed) {
            state.SkipWithError("the run did not complete");
            return;
        }
        std::int64_t busy = 0;
        std::int64_t working = 0;  // F, B and SEND: what a rank does, not what it waits for
        std::size_t working_actions = 0;
        actions = 0;
        for (const run_record::RankRun& rank : result.ranks)
            for (const run_record::ActionTiming& timing : rank.timeline) {
                busy += timing.end_ns - timing.start_ns;
                ++actions;
                const ActionKind kind = lowered.ranks[rank.rank][timing.step].kind;
                if (kind != ActionKind::recv_forward && kind != ActionKind::recv_backward) {
                    working += timing.end_ns - timing.start_ns;
                    ++working_actions;
                }
            }
        per_action_ns = static_cast<double>(busy) / static_cast<double>(actions);
        state.counters["ns_per_working_action"] =
            static_cast<double>(working) / static_cast<double>(working_actions);
        step_ns = static_cast<double>(result.step_time_ns);
    }
    state.counters["actions"] = static_cast<double>(actions);
    state.counters["ns_per_action"] = per_action_ns;
    state.counters["step_ns_per_rank_action"] =
        step_ns / (static_cast<double>(actions) / static_cast<double>(pp));
}

// The floor under runtime_overhead: what LibTorch itself takes for one empty stage's forward
// (cut the input into a leaf, scale it) and its backward (autograd on that one-op graph), on the
// same tensor, with no pipelens code around it. Per action: (F + B) / 2.
void libtorch_floor(benchmark::State& state) {
    torch::set_num_threads(1);
    const torch::Tensor scale = torch::ones({1}).requires_grad_();
    const torch::Tensor input = torch::randn({1, 8});
    for (auto _ : state) {
        const torch::Tensor leaf = input.detach().requires_grad_(true);
        const torch::Tensor output = leaf * scale;
        torch::autograd::backward({output}, {torch::ones_like(output)});
        benchmark::DoNotOptimize(leaf.grad().data_ptr());
    }
    state.counters["ns_per_action"] =
        benchmark::Counter(static_cast<double>(state.iterations()) * 2,
                           benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

BENCHMARK(libtorch_floor);

BENCHMARK(runtime_overhead)
    ->Args({2, 8})
    ->Args({2, 64})
    ->Iterations(5)
    ->Unit(benchmark::kMillisecond);

void simulated_vs_real(benchmark::State& state) {
    const auto kind = static_cast<ScheduleKind>(state.range(0));
    Experiment experiment = plain_experiment();
    experiment.shape = {kind, 2, is_multi_stage(kind) ? 2 : 1, 8};
    const Schedule lowered = lowered_schedule_for(experiment);
    run_record::PipelineRunOptions options;
    options.model = "mlp";
    options.hidden = 256;
    options.layers = 8;
    options.batch_size = 256;
    options.check_reference = false;
    const auto trace = std::filesystem::temp_directory_path() /
                       ("pipelens_bench_calibration_" + std::to_string(::getpid()) + ".db");
    double error = 0;
    for (auto _ : state) {
        std::filesystem::remove(trace);
        const run_record::PipelineRunResult result = runtime::run_pipeline(options, lowered);
        if (!result.completed) {
            state.SkipWithError("the run did not complete");
            return;
        }
        {
            traces::TraceWriter writer(trace);
            run_record::record_real_run(writer, lowered, result, experiment);
        }
        const traces::TraceReader reader(trace);
        sim::Calibration calibration = sim::calibrate_from_trace(reader, reader.latest_run_id());
        const Schedule again = lowered_schedule_for(calibration.experiment);
        const sim::SimulationResult simulated =
            sim::simulate(again, sim::cost_model_for(calibration.experiment, again.stage_count));
        error = (static_cast<double>(simulated.step_time_ns) -
                 static_cast<double>(calibration.measured_step_ns)) /
                static_cast<double>(calibration.measured_step_ns);
        state.counters["measured_ms"] = calibration.measured_step_ns / 1e6;
        state.counters["simulated_ms"] = simulated.step_time_ns / 1e6;
    }
    std::filesystem::remove(trace);
    state.counters["error_percent"] = error * 100;
    state.SetLabel(std::string(schedule_kind_name(kind)));
}

BENCHMARK(simulated_vs_real)
    ->Arg(static_cast<int>(ScheduleKind::one_f_one_b))
    ->Arg(static_cast<int>(ScheduleKind::interleaved_1f1b))
    ->Arg(static_cast<int>(ScheduleKind::zbv_zero_bubble))
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);

// A middle stage (its inputs need gradients, its outputs get them from the next stage) of
// `model_name`'s layers, on one microbatch.
struct StageUnderTest {
    runtime::PipelineModel model;
    std::unique_ptr<runtime::PipelineStage> stage;
    runtime::TensorList inputs;
    runtime::TensorList output_gradients;
};

StageUnderTest middle_stage(const runtime::ModelSpec& spec, int batch,
                            const c10::Device& device = c10::Device(c10::kCPU)) {
    StageUnderTest result;
    result.model = runtime::build_model(spec, 1);
    runtime::place_model(result.model, device);
    runtime::TensorList inputs = result.model.make_batch(batch, 3).first;
    for (torch::Tensor& input : inputs)
        input = input.to(device).requires_grad_(true);
    runtime::TensorList outputs = runtime::run_layers(result.model.layers, inputs);
    const runtime::StageMeta meta{runtime::metas_of(inputs), runtime::metas_of(outputs)};
    result.stage = std::make_unique<runtime::PipelineStage>(1, 3, 1, result.model.layers, meta);
    for (const torch::Tensor& input : inputs)
        result.inputs.push_back(input.detach());
    for (const torch::Tensor& output : outputs)
        result.output_gradients.push_back(torch::randn_like(output));
    return result;
}

runtime::ModelSpec stage_spec(int model) {
    runtime::ModelSpec spec;
    if (model != 1) {
        spec.name = "mlp";
        spec.layers = 4;
        spec.hidden = model == 0 ? 128 : model == 2 ? 8 : 512;
    } else {
        spec.name = "transformer";
        spec.layers = 2;
        spec.hidden = 64;
        spec.sequence = 16;
        spec.heads = 4;
    }
    return spec;
}

// B, then I and W, each after an untimed F, every iteration, timed by `now` (seconds); the
// counters are the means, the manual time B + I + W.
template <typename Clock>
void time_split_backward(benchmark::State& state, StageUnderTest& under_test, Clock now) {
    runtime::PipelineStage& stage = *under_test.stage;
    stage.forward(0, under_test.inputs, {});
    stage.full_backward(0, under_test.output_gradients);  // gradients allocated from here on
    double full_s = 0;
    double input_s = 0;
    double weight_s = 0;
    for (auto _ : state) {
        stage.forward(0, under_test.inputs, {});
        const double start = now();
        stage.full_backward(0, under_test.output_gradients);
        const double full_end = now();
        stage.forward(0, under_test.inputs, {});
        const double input_start = now();
        stage.backward_input(0, under_test.output_gradients);
        const double middle = now();
        stage.backward_weight(0);
        const double end = now();
        full_s += full_end - start;
        input_s += middle - input_start;
        weight_s += end - middle;
        state.SetIterationTime(full_end - start + end - input_start);
    }
    const auto iterations = static_cast<double>(state.iterations());
    state.counters["B_ms"] = full_s / iterations * 1e3;
    state.counters["I_ms"] = input_s / iterations * 1e3;
    state.counters["W_ms"] = weight_s / iterations * 1e3;
    state.counters["IW_over_B"] = (input_s + weight_s) / full_s;
    state.counters["W_over_B"] = weight_s / full_s;
}

// Model 2 is host-bound: 8 wide on 4 rows, its arithmetic is nothing beside the autograd
// engine's per-node and per-call work, as the small stages were on an H100. With an optimised
// BLAS models 0 and 1 are mostly host work too; model 3 (512 wide on 256 rows, about 1.6 GFLOP
// a B) is bound by its arithmetic, the regime the split is meant for.
int model_batch(int model) {
    return model == 0 ? 32 : model == 2 ? 4 : model == 3 ? 256 : 8;
}

void stage_backward(benchmark::State& state) {
    torch::set_num_threads(1);
    const runtime::ModelSpec spec = stage_spec(static_cast<int>(state.range(0)));
    const int batch = model_batch(static_cast<int>(state.range(0)));
    StageUnderTest under_test = middle_stage(spec, batch);
    time_split_backward(state, under_test, [] {
        timespec time{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time);
        return static_cast<double>(time.tv_sec) + static_cast<double>(time.tv_nsec) * 1e-9;
    });
    state.SetLabel(spec.name + " x" + std::to_string(spec.layers));
}

BENCHMARK(stage_backward)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Arg(3)
    ->ArgName("model")
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// The same split on the GPU. Host CPU time would miss the kernels, so each timed part runs
// between two device synchronisations, in wall time; the stages are larger (a GPU step of the
// CPU sizes is all launch latency). Models 0 and 1 are still host-bound on an H100 (a 4-layer
// hidden-1024 B took 1.5 ms, mostly the autograd engine's per-node and per-call host work, where
// W's one engine call per weight node shows); model 2 (4 layers, hidden 4096, 4096 rows: about
// 1.1 TFLOP per B) is bound by the GPU's arithmetic, the regime the split is meant for.
void stage_backward_cuda(benchmark::State& state) {
    const int model = static_cast<int>(state.range(0));
    runtime::ModelSpec spec = stage_spec(model == 2 ? 0 : model);  // its own model 2 is large
    spec.hidden *= model == 2 ? 32 : 8;
    const int batch = model == 2 ? 4096 : spec.name == "mlp" ? 256 : 32;
    StageUnderTest under_test = middle_stage(spec, batch, c10::Device(c10::kCUDA, 0));
    time_split_backward(state, under_test, [] {
        torch::cuda::synchronize();
        return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
    });
    state.SetLabel(spec.name + " x" + std::to_string(spec.layers) + " hidden " +
                   std::to_string(spec.hidden) + " on cuda:0");
}

// One step's instruments as the executor uses them, per action (rank_executor.cpp): the host's
// clock read at each end, the timer's begin and end, and the memory's mark and samples.
void action_instruments(benchmark::State& state, const c10::Device& device) {
    constexpr int kActionsPerStep = 64;
    // A device's allocator is set up by its first tensor; the executor samples one only after
    // its stages have placed theirs.
    const torch::Tensor placed = torch::zeros({1}, torch::TensorOptions().device(device));
    runtime::MemoryAccountHandle account;
    const std::unique_ptr<runtime::DeviceMemory> memory =
        runtime::make_device_memory(device, *account);
    const auto now_ns = [epoch = std::chrono::steady_clock::now()] {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now() - epoch)
            .count();
    };
    std::int64_t sampled = 0;
    for (auto _ : state) {
        const std::unique_ptr<runtime::ActionTimer> timer =
            runtime::make_action_timer(device, std::chrono::steady_clock::now());
        for (int action = 0; action < kActionsPerStep; ++action) {
            const std::size_t span = timer->begin(now_ns());
            memory->mark();
            sampled += memory->sample().allocated_bytes;
            timer->end(span, now_ns());
            sampled += memory->sample().peak_allocated_bytes;
        }
        benchmark::DoNotOptimize(timer->spans());
    }
    benchmark::DoNotOptimize(sampled);
    // Seconds per action: the step's time over its actions, as the reporter divides it.
    state.counters["per_action_s"] =
        benchmark::Counter(kActionsPerStep, benchmark::Counter::kIsIterationInvariantRate |
                                                benchmark::Counter::kInvert);
    state.SetLabel(device.str());
}

const bool action_instruments_registered = [] {
    benchmark::RegisterBenchmark("action_instruments/cpu", [](benchmark::State& state) {
        action_instruments(state, c10::Device(c10::kCPU));
    })->UseRealTime();
    if (torch::cuda::is_available())
        benchmark::RegisterBenchmark("action_instruments/cuda", [](benchmark::State& state) {
            action_instruments(state, c10::Device(c10::kCUDA, 0));
        })->UseRealTime();
    return true;
}();

// Registered before main runs only where a GPU is usable, so a CPU machine lists nothing for it.
const bool stage_backward_cuda_registered = [] {
    if (!torch::cuda::is_available())
        return false;
    benchmark::RegisterBenchmark("stage_backward_cuda", stage_backward_cuda)
        ->Arg(0)
        ->Arg(1)
        ->Arg(2)
        ->ArgName("model")
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
    return true;
}();

}  // namespace

BENCHMARK_MAIN();
