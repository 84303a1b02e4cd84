// Pipeline runs, launched: the checks of the options, set-up once up front (model, split, batch,
// shape inference) so that a bad one is one error, then every rank as a thread (`local`) or this
// process's rank (`gloo`, `nccl`), and rank 0 gathering every rank's report. Reports travel as
// JSON through the transport, the same way for threads and processes, so `local` exercises the
// exact path `gloo` and `nccl` take. One rank's work is in rank_step.cpp, the reports and their
// merge in rank_report.cpp, the reference checks in reference_check.cpp.
#include "engine/runtime/pipeline_run.hpp"

#include <exception>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/experiment/experiment.hpp"
#include "engine/run_record/rank_files.hpp"
#include "engine/run_record/run_identity.hpp"
#include "engine/runtime/device_placement.hpp"
#include "engine/runtime/gloo_transport.hpp"
#include "engine/runtime/local_transport.hpp"
#include "engine/runtime/nccl_transport.hpp"
#include "engine/runtime/out_of_memory.hpp"
#include "engine/runtime/pipeline_setup.hpp"
#include "engine/runtime/rank_report.hpp"
#include "engine/runtime/rank_step.hpp"
#include "engine/runtime/rank_streams.hpp"
#include "engine/runtime/torch_meta.hpp"
#include "engine/schedule/schedule_size.hpp"
#include "engine/stage_plan/backend_choice.hpp"
#include "engine/stage_plan/stage_split.hpp"

namespace pipelens::runtime {
namespace {

std::vector<std::vector<TensorMeta>> boundary_inputs(const run_record::PipelineRunOptions& options,
                                                     const Schedule& lowered) {
    PipelineModel model = build_model(model_spec(options), lowered.stage_count);
    const auto stages = plan_stages(model, options, lowered.stage_count);
    Batch batch = make_batch(model, options, lowered.microbatch_count);
    // In the run's dtype, on the CPU: the boundaries' dtypes are the ranks', the device is not.
    const c10::ScalarType dtype = run_scalar_type(options.dtype);
    place_model(model, c10::Device(c10::kCPU), dtype);
    place_batch(batch, c10::Device(c10::kCPU), dtype);
    const std::vector<StageMeta> metas = infer_shapes(model, stages, batch);
    // A backend that cannot act on its stage is a usage error, found here once; the failure a
    // fault-injecting backend is meant to raise is left to the rank, which records it.
    const std::vector<std::string> backends =
        choose_stage_backends(options.backends, lowered.stage_count);
    for (int index = 0; index < lowered.stage_count; ++index) {
        TensorList example;
        for (const TensorMeta& input : metas[index].inputs)
            example.push_back(empty_like_meta(input).zero_());
        try {
            StageBackend(backends[index], index, layers_of(model, stages[index]), example);
        } catch (const BackendError&) {
        }
    }
    std::vector<std::vector<TensorMeta>> inputs;
    for (const StageMeta& meta : metas)
        inputs.push_back(meta.inputs);
    return inputs;
}

// For each rank that sent no report, how the launcher saw it end ("" when it did not).
std::vector<std::string> ends_of_silent_ranks(const std::vector<std::string>& payloads,
                                              const std::string& directory) {
    std::vector<std::string> ends(payloads.size());
    if (directory.empty())
        return ends;
    for (std::size_t rank = 0; rank < payloads.size(); ++rank)
        if (payloads[rank].empty())
            ends[rank] = run_record::rank_ended(directory, static_cast<int>(rank)).value_or("");
    return ends;
}

void write_report_file(const std::string& path, const std::string& payload) {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file << payload;
    if (!file.flush())
        throw std::runtime_error(fmt::format("{}: cannot write this rank's report", path));
}

// The GPU nccl uses: the one the rank computes on, or with CPU tensors (staged through it) the
// rank's LOCAL_RANK, else its rank.
int nccl_gpu(const run_record::PipelineRunOptions& options) {
    const c10::Device device = torch_device(options.device);
    if (device.is_cuda() && device.has_index())
        return device.index();
    return options.local_rank >= 0 ? options.local_rank : options.rank;
}

// A rank's error as it is said, naming the rank, and whether it was running out of memory
// (too large an input, not a failed check).
struct RankError {
    bool out_of_memory = false;
    std::string text;
};

RankError rank_error_of(int rank, const std::exception_ptr& error) {
    const std::string who = fmt::format("rank {}", rank);
    if (std::optional<std::string> detail = out_of_memory_detail(error))
        return {true, out_of_memory_message(who, std::move(*detail))};
    try {
        std::rethrow_exception(error);
    } catch (const std::exception& other) {
        return {false, fmt::format("{}: {}", who, error_text(other))};
    } catch (...) {
        return {false, fmt::format("{}: an unknown error", who)};
    }
}

// A rank thread's error, naming the rank.
[[noreturn]] void rethrow_rank_error(int rank, const std::exception_ptr& error) {
    RankError said = rank_error_of(rank, error);
    if (said.out_of_memory)
        throw ScheduleTooLargeError(std::move(said.text));
    throw std::runtime_error(std::move(said.text));
}

run_record::PipelineRunResult run_local(const run_record::PipelineRunOptions& options,
                                        const Schedule& lowered) {
    const int world_size = lowered.rank_count;
    auto fabric = std::make_shared<LocalFabric>(world_size);
    std::vector<std::exception_ptr> thread_errors(world_size);
    {
        std::vector<std::jthread> threads;
        for (int rank = 0; rank < world_size; ++rank)
            threads.emplace_back([&, rank] {
                // Set again in each rank thread: whether LibTorch's count belongs to the process
                // or to the calling thread depends on its parallel backend (with OpenMP, a count
                // set in one thread was not seen by another in our checks).
                torch::set_num_threads(options.intra_op_threads);
                const ScopedDevice on_device(options.device);
                // Before anything is allocated: the rank's tensors belong to its stream.
                const RankComputeStream compute_stream(torch_device(options.device));
                LocalTransport transport(fabric, rank);
                try {
                    const std::unique_ptr<PreparedRank> prepared =
                        prepare_rank(options, lowered, rank);
                    const RankReport report =
                        run_prepared_rank(options, lowered, *prepared, transport);
                    transport.gather_to_rank_zero(rank_report_to_json(report).dump(),
                                                  std::chrono::milliseconds(options.timeout_ms));
                } catch (const std::exception&) {
                    // Nothing here may throw again (out of memory, most likely): an exception
                    // leaving a rank thread ends the process.
                    thread_errors[rank] = std::current_exception();
                    try {
                        transport.abort(rank_error_of(rank, thread_errors[rank]).text);
                    } catch (...) {
                    }
                }
            });
    }
    // A rank that ran out of memory is the cause: the others' errors are the abort it sent.
    for (int rank = 0; rank < world_size; ++rank)
        if (thread_errors[rank] && rank_error_of(rank, thread_errors[rank]).out_of_memory)
            rethrow_rank_error(rank, thread_errors[rank]);
    for (int rank = 0; rank < world_size; ++rank)
        if (thread_errors[rank])
            rethrow_rank_error(rank, thread_errors[rank]);
    // Every thread has ended: a rank that reported after rank 0's wait ran out (it was inside a
    // computation when another rank's timeout stopped the run) is read too, not lost.
    return merge_reports(reports_from_payloads(fabric->reports(), options), options);
}

// Rank 0 compares every rank's identity (run_identity.hpp) with its own before anything
// computes; on a difference it aborts the run, which the other ranks see at their first barrier.
// A rank still building its model then read only that rank 0 was gone: rank 0 stays for them.
void check_ranks_agree(Transport& transport, const run_record::PipelineRunOptions& options,
                       const Schedule& lowered) {
    const nlohmann::ordered_json mine = run_record::run_identity(options, lowered);
    const std::vector<std::string> all =
        transport.gather_to_rank_zero(mine.dump(), std::chrono::milliseconds(options.timeout_ms));
    for (std::size_t rank = 1; rank < all.size(); ++rank) {
        if (all[rank].empty())
            continue;  // silent: the first wait on it says so
        const auto difference =
            run_record::identity_difference(mine, nlohmann::ordered_json::parse(all[rank]));
        if (!difference)
            continue;
        const std::string message = fmt::format(
            "rank {} was started with {}, rank 0 with {}: start every rank of a run with the same "
            "model, sizes, split, schedule, steps and dtype",
            rank, difference->theirs, difference->mine);
        transport.abort(message);
        transport.stay_until_abort_read(kStayForAbortReaders);
        throw ExperimentError(message);
    }
}

// The report of a rank that ended in `error` outside its steps: its failure alone, recorded as
// rank 0 records any other (kind out_of_memory or error, at no action).
std::string last_report(const run_record::PipelineRunOptions& options, const RankError& error) {
    RankReport report;
    report.run.rank = options.rank;
    report.run.device = torch_device(options.device).str();
    run_record::RunFailure failure;
    failure.rank = options.rank;
    failure.kind = error.out_of_memory ? std::string(run_record::kOutOfMemoryKind) : "error";
    failure.message = error.text;
    report.run.failure = std::move(failure);
    return rank_report_to_json(report).dump();
}

// Prepares, runs and reports this rank once the ranks agreed. An exception (out of memory
// building the model, its reference or its report, an unwritable report file) would leave the
// others reading only that this rank was gone: it is told them first. Rank 0, whose store they
// meet at, stays until they have read it. While it builds its stages, so do they, and they read
// it at their first barrier, after that building: rank 0 stays up to the rendezvous timeout, and
// says so. Later, they read it at their next wait on rank 0 or not at all (after their reports
// they wait for nothing): it stays only as long as after a refusal. A failure inside the steps
// is recorded and aborted by the executor, not thrown.
run_record::PipelineRunResult run_agreed_rank(Transport& transport,
                                              const run_record::PipelineRunOptions& options,
                                              const Schedule& lowered) {
    bool preparing = true;
    try {
        const std::unique_ptr<PreparedRank> prepared = prepare_rank(options, lowered, options.rank);
        preparing = false;
        RankReport report = run_prepared_rank(options, lowered, *prepared, transport);
        const std::string payload = rank_report_to_json(report).dump();
        const std::string& directory = options.report_directory;
        if (!directory.empty())
            write_report_file(run_record::rank_report_file(directory, options.rank), payload);
        const auto payloads =
            transport.gather_to_rank_zero(payload, std::chrono::milliseconds(options.timeout_ms));
        if (options.rank != 0)
            return merge_reports({report}, options);
        return merge_reports(
            reports_from_payloads(payloads, options, ends_of_silent_ranks(payloads, directory)),
            options);
    } catch (const std::exception&) {
        try {  // nothing here may hide the error itself
            const RankError error = rank_error_of(options.rank, std::current_exception());
            transport.abort(error.text);
            if (options.rank != 0)
                transport.leave_last_report(last_report(options, error));
            const auto longest = preparing
                                     ? std::chrono::milliseconds(options.rendezvous_timeout_ms)
                                     : kStayForAbortReaders;
            if (options.rank == 0 && options.world_size > 1 && preparing)
                fmt::print(stderr,
                           "pipelens: rank 0 failed building its stages; it stays up to {} s, "
                           "until the other ranks have read why\n",
                           longest.count() / 1000.0);
            transport.stay_until_abort_read(longest);
        } catch (...) {
        }
        throw;
    }
}

run_record::PipelineRunResult run_distributed(const run_record::PipelineRunOptions& options,
                                              const Schedule& lowered) {
    Rendezvous rendezvous;
    rendezvous.master_address = options.master_address;
    rendezvous.master_port = options.master_port;
    rendezvous.rank = options.rank;
    rendezvous.world_size = options.world_size;
    rendezvous.timeout = std::chrono::milliseconds(options.rendezvous_timeout_ms);
    const std::string& directory = options.report_directory;
    if (!directory.empty())
        rendezvous.ended = [directory](int rank) {
            return run_record::rank_ended(directory, rank);
        };
    if (options.world_size != lowered.rank_count)
        throw std::invalid_argument(
            fmt::format("the schedule has {} ranks but the world size is {}", lowered.rank_count,
                        options.world_size));
    const ScopedDevice on_device(options.device);
    std::unique_ptr<Transport> transport = options.transport == "gloo"
                                               ? make_gloo_transport(rendezvous)
                                               : make_nccl_transport(rendezvous, nccl_gpu(options));
    check_ranks_agree(*transport, options, lowered);
    return run_agreed_rank(*transport, options, lowered);
}

}  // namespace

run_record::PipelineRunResult merge_rank_reports(const std::vector<std::string>& payloads,
                                                 const std::vector<std::string>& deaths,
                                                 const run_record::PipelineRunOptions& given,
                                                 const Schedule& lowered) {
    const run_record::PipelineRunOptions options = with_model_layers(given, lowered);
    run_record::PipelineRunResult result;
    try {
        result = merge_reports(reports_from_payloads(payloads, options, deaths), options);
    } catch (const nlohmann::json::exception& error) {
        throw std::invalid_argument(fmt::format("a rank's report is malformed: {}", error.what()));
    }
    result.stage_inputs = boundary_inputs(options, lowered);
    return result;
}

namespace {

run_record::PipelineRunResult run_pipeline_here(const run_record::PipelineRunOptions& given,
                                                const Schedule& lowered) {
    if (!lowered.has_communication)
        throw std::invalid_argument("run_pipeline needs a lowered schedule (with SEND/RECV)");
    // Before anything computes, so `--threads` holds for all this process does: LibTorch's
    // intra-op pool takes one thread per core at its first parallel operation (building the
    // model, inferring its boundaries, below) unless told otherwise first.
    torch::set_num_threads(given.intra_op_threads);
    run_record::PipelineRunOptions options = with_model_layers(given, lowered);
    // Once per process, before any rank starts: a device it cannot use is one usage error.
    options.device = resolve_run_device(options.device, options.local_rank);
    run_record::check_faults(options.faults, options.transport, lowered.rank_count,
                             lowered.stage_count);
    // Builds, splits and infers once up front, so a bad model, split or batch is one error
    // here instead of one per rank.
    std::vector<std::vector<TensorMeta>> stage_inputs = boundary_inputs(options, lowered);
    run_record::PipelineRunResult result;
    if (options.transport == "local")
        result = run_local(options, lowered);
    else if (options.transport == "gloo" || options.transport == "nccl")
        result = run_distributed(options, lowered);
    else
        throw std::invalid_argument("unknown transport '" + options.transport +
                                    "' (use local, gloo or nccl)");
    result.stage_inputs = std::move(stage_inputs);
    return result;
}

}  // namespace

run_record::PipelineRunResult run_pipeline(const run_record::PipelineRunOptions& given,
                                           const Schedule& lowered) {
    // What a thread rank runs out of is named by rethrow_rank_error; here the model built once
    // up front, or this process's rank.
    const std::string who = given.transport == "local" ? std::string("building the model")
                                                       : fmt::format("rank {}", given.rank);
    try {
        return run_pipeline_here(given, lowered);
    } catch (...) {
        // Too large an input, not a failed check; the memory is free again by now.
        if (std::optional<std::string> detail = out_of_memory_detail(std::current_exception()))
            throw ScheduleTooLargeError(out_of_memory_message(who, std::move(*detail)));
        throw;
    }
}

}  // namespace pipelens::runtime
