// The action interpreter. Tensors move between actions through per-(stage, microbatch) slots:
// a RECV fills a slot that the consuming F or I/B empties, an F or I/B fills the slot a SEND (or
// the neighbouring stage on this rank) empties. The schedule's static check guarantees every
// slot is filled before it is read; a missing one is reported as a broken schedule, not a crash.
#include "engine/runtime/rank_executor.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <thread>

#include <ATen/record_function.h>
#include <fmt/format.h>

#include "engine/runtime/out_of_memory.hpp"
#include "engine/runtime/torch_meta.hpp"
#include "engine/schedule/action_facts.hpp"

namespace pipelens::runtime {
namespace {

// A failure with the fields the errors table wants.
class StepFailure : public std::runtime_error {
  public:
    explicit StepFailure(run_record::RunFailure failure)
        : std::runtime_error(failure.message), failure_(std::move(failure)) {}
    const run_record::RunFailure& failure() const { return failure_; }

  private:
    run_record::RunFailure failure_;
};

using SlotKey = std::pair<int, int>;  // stage, microbatch

// A receive that did not complete in time; names the RECV action it belongs to.
class ReceiveTimeout : public TransportTimeout {
  public:
    ReceiveTimeout(const TransportTimeout& cause, Action receive)
        : TransportTimeout(cause.what()), receive(receive) {}
    Action receive;
};

// A RECV that was posted and is waited for by the action consuming its data.
struct PostedReceive {
    Action receive;
    int peer = 0;
    TensorList buffers;
    std::size_t timeline_index = 0;  // its entry, whose end becomes the arrival time
};

// The device's timer; the host's where the device's was not built (a CUDA LibTorch found
// without the CUDA runtime's headers), so the run still has times, the host's.
std::unique_ptr<ActionTimer> action_timer_for(const c10::Device& device,
                                              std::chrono::steady_clock::time_point epoch) {
    try {
        return make_action_timer(device, epoch);
    } catch (const std::runtime_error&) {
        return std::make_unique<HostActionTimer>();
    }
}

// A device's computations run after the host queued them: their times become the device's (a
// timer's spans, on the same clock). Transfers keep the host's, which is when they were waited
// for. The spans are in the timeline's order (one per action that ran); when the device cannot
// say (an error reading its events), the host's times stay.
void take_device_times(const Schedule& lowered, int rank, ActionTimer& timer,
                       RankOutcome& outcome) {
    std::vector<TimedSpan> spans;
    try {
        spans = timer.spans();
    } catch (const std::exception&) {
        return;
    }
    if (spans.size() != outcome.timeline.size())
        return;
    for (std::size_t index = 0; index < spans.size(); ++index) {
        TimedAction& timed = outcome.timeline[index];
        if (!is_compute(lowered.ranks.at(rank).at(timed.step).kind))
            continue;
        timed.start_ns = spans[index].start_ns;
        timed.end_ns = spans[index].end_ns;
    }
}

class Executor {
  public:
    Executor(RankPlan& plan, Transport& transport, std::chrono::steady_clock::time_point epoch,
             ActionTimer& timer)
        : plan_(plan), transport_(transport), epoch_(epoch), timer_(timer) {}

    RankOutcome run() {
        RankOutcome outcome;
        outcome.rank = plan_.rank;
        const auto& actions = plan_.lowered->ranks.at(plan_.rank);
        for (std::size_t step = 0; step < actions.size(); ++step) {
            const Action& action = actions[step];
            std::int64_t start = 0;
            std::size_t span = 0;
            try {
                // Receives are posted by RECV and waited for here, by the action that consumes
                // them (PyTorch's irecv + wait), so a posted receive never holds up work the
                // schedule put after it. Waits (and a sleeping fault) notice aborts themselves.
                await_inputs(action, outcome.timeline);
                start = now();
                span = timer_.begin(start);
                memory_at_start(start, outcome);
                if (plan_.mark_actions) {
                    RECORD_USER_SCOPE("PP:" + plan_.lowered->text(action));
                    execute(action, outcome.timeline.size());
                } else {
                    execute(action, outcome.timeline.size());
                }
            } catch (const StepFailure& failure) {
                outcome.failure = failure.failure();
            } catch (const TransportAborted& aborted) {
                outcome.failure =
                    failure_of(action, "stopped", fmt::format("stopped: {}", aborted.what()));
            } catch (const ReceiveTimeout& timeout) {
                outcome.failure =
                    failure_of(timeout.receive, "timeout",
                               fmt::format("rank {} timed out waiting for {}: {}", plan_.rank,
                                           plan_.lowered->text(timeout.receive), timeout.what()));
            } catch (const BackendError& error) {
                outcome.failure =
                    failure_of(action, error.kind(),
                               fmt::format("rank {} failed at {}: {}", plan_.rank,
                                           plan_.lowered->text(action), error.what()));
                outcome.failure->expected = error.expected();
                outcome.failure->actual = error.actual();
            } catch (const std::exception& error) {
                const std::optional<std::string> detail =
                    out_of_memory_detail(std::current_exception());
                outcome.failure =
                    detail
                        ? out_of_memory_failure(action, *detail)
                        : failure_of(action, "error",
                                     fmt::format("rank {} failed at {}: {}", plan_.rank,
                                                 plan_.lowered->text(action), error_text(error)));
            }
            if (outcome.failure) {
                outcome.failure->time_ns = now();
                close_unawaited_receives(outcome.failure->time_ns, outcome.timeline);
                if (start != 0)  // it had got past its inputs: the action was in flight
                    outcome.failure->started_ns = start;
                if (outcome.failure->kind != "stopped")
                    transport_.abort(naming_the_rank(outcome.failure->message));
                return outcome;
            }
            const std::int64_t end = now();
            timer_.end(span, end);
            outcome.timeline.push_back({static_cast<int>(step), start, end});
            memory_at_end(outcome);
        }
        try {
            transport_.finish_sends(plan_.timeout);
        } catch (const std::exception& error) {
            outcome.failure = failure_of(actions.back(), "error", error.what());
        }
        return outcome;
    }

  private:
    // The action's start: what the rank holds, and the high-water mark starts from it.
    void memory_at_start(std::int64_t start, RankOutcome& outcome) {
        if (plan_.device_memory != nullptr) {
            plan_.device_memory->mark();
            add_memory_point(outcome, start, plan_.device_memory->sample().allocated_bytes);
            return;
        }
        if (plan_.memory == nullptr)
            return;
        plan_.memory->mark();
        add_memory_point(outcome, start, plan_.memory->current_bytes());
    }

    // The action's end, after its high-water mark when that was above both ends (a backward's
    // temporaries).
    void memory_at_end(RankOutcome& outcome) {
        if (plan_.device_memory != nullptr) {
            // The allocator keeps no time for its peak: it is shown at the action's end, just
            // before what the action left held.
            const MemorySample sample = plan_.device_memory->sample();
            const std::int64_t end = outcome.timeline.back().end_ns;
            if (sample.peak_allocated_bytes > sample.allocated_bytes &&
                sample.peak_allocated_bytes > outcome.memory.back().bytes)
                add_memory_point(outcome, end, sample.peak_allocated_bytes);
            add_memory_point(outcome, end, sample.allocated_bytes);
            return;
        }
        if (plan_.memory == nullptr)
            return;
        const std::int64_t end = outcome.timeline.back().end_ns;
        const std::int64_t held = plan_.memory->current_bytes();
        const std::int64_t peak = plan_.memory->peak_bytes();
        if (peak > held && peak > outcome.memory.back().bytes) {
            const std::int64_t at = plan_.memory->peak_time_ns() - epoch_ns();
            add_memory_point(outcome, std::clamp(at, outcome.timeline.back().start_ns, end), peak);
        }
        add_memory_point(outcome, end, held);
    }

    static void add_memory_point(RankOutcome& outcome, std::int64_t time, std::int64_t bytes) {
        outcome.memory.push_back({time, bytes});
        outcome.peak_memory_bytes = std::max(outcome.peak_memory_bytes, bytes);
    }

    std::int64_t epoch_ns() const {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(epoch_.time_since_epoch())
            .count();
    }

    std::int64_t now() const {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now() - epoch_)
            .count();
    }

    run_record::RunFailure failure_of(const Action& action, std::string kind,
                                      std::string message) const {
        run_record::RunFailure failure;
        failure.rank = plan_.rank;
        failure.stage = action.stage;
        failure.microbatch = action.microbatch;
        failure.action = plan_.lowered->text(action);
        failure.kind = std::move(kind);
        failure.message = std::move(message);
        return failure;
    }

    // The reason the others stop with: it names this rank once ("rank 1 in 1F3 ran out...").
    std::string naming_the_rank(const std::string& message) const {
        const std::string rank = fmt::format("rank {} ", plan_.rank);
        return message.starts_with(rank) ? message
                                         : fmt::format("rank {}: {}", plan_.rank, message);
    }

    // Too large an input (exit 3), not a failed check: the run is recorded up to the action
    // that could not get its memory. The action's own tensors are free again by now.
    run_record::RunFailure out_of_memory_failure(const Action& action, std::string detail) const {
        return failure_of(action, std::string(run_record::kOutOfMemoryKind),
                          out_of_memory_message(
                              fmt::format("rank {} in {}", plan_.rank, plan_.lowered->text(action)),
                              std::move(detail)));
    }

    PipelineStage& stage(int index) { return *plan_.stages.at(index); }
    bool holds(int stage_index) const { return plan_.stages.contains(stage_index); }

    TensorList take(std::map<SlotKey, TensorList>& slots, const Action& action, int stage_index,
                    const char* what) {
        const auto found = slots.find({stage_index, action.microbatch});
        if (found == slots.end())
            throw std::runtime_error(fmt::format("the schedule runs {} before its {} arrived",
                                                 plan_.lowered->text(action), what));
        TensorList values = std::move(found->second);
        slots.erase(found);
        return values;
    }

    void check_metadata(const Action& action, const std::string& what,
                        const std::vector<TensorMeta>& expected, const TensorList& actual) {
        const auto mismatch = check_tensors_metadata(what, expected, metas_of(actual));
        if (!mismatch)
            return;
        run_record::RunFailure failure = failure_of(action, mismatch->kind + "_mismatch", "");
        failure.expected = mismatch->expected;
        failure.actual = mismatch->actual;
        failure.message = fmt::format("{} (rank {}, microbatch {})", mismatch->message, plan_.rank,
                                      action.microbatch);
        throw StepFailure(std::move(failure));
    }

    void sleep_if_faulted(int stage_index) {
        for (const run_record::Fault& fault : plan_.faults)
            if (fault.kind == run_record::Fault::Kind::die && fault.stage == stage_index)
                ::kill(::getpid(), SIGKILL);
        for (const run_record::Fault& fault : plan_.faults)
            if (fault.kind == run_record::Fault::Kind::sleep && fault.stage == stage_index) {
                // Sleep in slices so an abort from another rank still ends it promptly.
                const auto until =
                    std::chrono::steady_clock::now() + std::chrono::nanoseconds(fault.sleep_ns);
                while (std::chrono::steady_clock::now() < until) {
                    transport_.check_aborted();
                    std::this_thread::sleep_for(std::chrono::milliseconds(20));
                }
            }
    }

    TensorList stage_zero_inputs(int microbatch) {
        TensorList inputs = plan_.microbatch_inputs.at(microbatch);
        for (const run_record::Fault& fault : plan_.faults) {
            if (fault.kind == run_record::Fault::Kind::extra_input_sample)
                for (torch::Tensor& input : inputs)
                    input = torch::cat({input, input.narrow(0, 0, 1)});
            if (fault.kind == run_record::Fault::Kind::input_dtype)
                for (torch::Tensor& input : inputs)
                    input = input.to(scalar_type_of(fault.dtype));
        }
        return inputs;
    }

    TensorList faulted_outputs(int stage_index, TensorList outputs) {
        for (const run_record::Fault& fault : plan_.faults) {
            if (fault.stage != stage_index)
                continue;
            if (fault.kind == run_record::Fault::Kind::output_dtype)
                for (torch::Tensor& output : outputs)
                    output = output.to(scalar_type_of(fault.dtype));
            if (fault.kind == run_record::Fault::Kind::flatten_output)
                for (torch::Tensor& output : outputs)
                    output = output.flatten();
            // Multiplied in, so the outputs stay in the graph and backward runs on (NaN) values,
            // as with a NaN a layer computed.
            if (fault.kind == run_record::Fault::Kind::nan_output)
                for (torch::Tensor& output : outputs)
                    if (output.is_floating_point())
                        output = output * std::numeric_limits<double>::quiet_NaN();
        }
        return outputs;
    }

    void forward(const Action& action) {
        const int index = action.stage;
        TensorList inputs;
        if (index == 0) {
            inputs = stage_zero_inputs(action.microbatch);
            check_metadata(action, "Stage 0 forward inputs", plan_.stage_meta[0].inputs, inputs);
        } else if (holds(index - 1)) {
            inputs = take(local_forward_, action, index, "input from the previous stage");
        } else {
            inputs = take(received_forward_, action, index, "RECV_F");
        }
        sleep_if_faulted(index);
        const torch::Tensor target =
            stage(index).is_last() ? plan_.targets.at(action.microbatch) : torch::Tensor();
        // Every stage's outputs are validated, the last one's before its loss, as PyTorch's
        // PipelineStage validates each forward's outputs against the inferred metadata.
        TensorList outputs =
            stage(index).forward(action.microbatch, inputs, target, [&](TensorList computed) {
                computed = faulted_outputs(index, std::move(computed));
                check_metadata(action, fmt::format("Stage {} forward outputs", index),
                               plan_.stage_meta[index].outputs, computed);
                return computed;
            });
        if (stage(index).is_last())
            return;
        (holds(index + 1) ? local_forward_ : to_send_forward_)[{index + 1, action.microbatch}] =
            std::move(outputs);
    }

    TensorList output_gradients(const Action& action) {
        const int index = action.stage;
        if (stage(index).is_last())
            return {};
        TensorList gradients =
            holds(index + 1) ? take(local_backward_, action, index, "gradient from the next stage")
                             : take(received_backward_, action, index, "RECV_B");
        // Received gradients come only for outputs that require one: spread them back.
        const auto& outputs = plan_.stage_meta[index].outputs;
        if (gradients.size() == outputs.size())
            return gradients;
        TensorList spread(outputs.size());
        std::size_t next = 0;
        for (std::size_t slot = 0; slot < outputs.size() && next < gradients.size(); ++slot)
            if (outputs[slot].requires_grad)
                spread[slot] = gradients[next++];
        return spread;
    }

    void hand_back(const Action& action, TensorList input_gradients) {
        const int index = action.stage;
        if (index == 0)
            return;
        if (holds(index - 1)) {
            local_backward_[{index - 1, action.microbatch}] = std::move(input_gradients);
            return;
        }
        TensorList sent;
        for (std::size_t slot = 0; slot < input_gradients.size(); ++slot)
            if (plan_.stage_meta[index].inputs[slot].requires_grad)
                sent.push_back(input_gradients[slot]);
        to_send_backward_[{index - 1, action.microbatch}] = std::move(sent);
    }

    // What a transfer into `receiving_stage` carries, as configured: the stage's inputs (a
    // forward transfer) or the gradients of its outputs that need one (a backward transfer).
    // The sender's ExpectedMessage and the receiver's buffers both come from it.
    std::vector<TensorMeta> carried_into(int receiving_stage, bool forward) const {
        const StageMeta& meta = plan_.stage_meta.at(static_cast<std::size_t>(receiving_stage));
        std::vector<TensorMeta> carried;
        for (const TensorMeta& tensor : forward ? meta.inputs : meta.outputs)
            if (forward || tensor.requires_grad)
                carried.push_back(tensor);
        return carried;
    }

    ExpectedMessage expected_message(int receiving_stage, bool forward) const {
        ExpectedMessage expected{{}, true};
        for (const TensorMeta& tensor : carried_into(receiving_stage, forward))
            expected.tensor_bytes.push_back(tensor.byte_count());
        return expected;
    }

    TensorList buffers_for(int receiving_stage, bool forward) {
        TensorList buffers;
        for (const TensorMeta& meta : carried_into(receiving_stage, forward))
            buffers.push_back(empty_like_meta(meta, plan_.device));
        return buffers;
    }

    void communicate(const Action& action, std::size_t timeline_index) {
        const int index = action.stage;
        const int microbatch = action.microbatch;
        // Outputs wait in the slot of the stage they go to (see forward() and hand_back()).
        const int peer_stage = transfer_peer_stage(action);
        const int peer = transfer_peer_rank(*plan_.lowered, action);
        switch (action.kind) {
            case ActionKind::send_forward:
                transport_.send_expected(
                    peer, plan_.tag_offset + action.link,
                    take(to_send_forward_, action, peer_stage, "forward output"),
                    expected_message(peer_stage, true));
                break;
            case ActionKind::send_backward:
                transport_.send_expected(
                    peer, plan_.tag_offset + action.link,
                    take(to_send_backward_, action, peer_stage, "input gradient"),
                    expected_message(peer_stage, false));
                break;
            case ActionKind::recv_forward:
            case ActionKind::recv_backward: {
                const bool forward = action.kind == ActionKind::recv_forward;
                TensorList buffers = buffers_for(index, forward);
                transport_.post_recv(peer, plan_.tag_offset + action.link,
                                     expected_message(index, forward), buffers);
                (forward ? posted_forward_ : posted_backward_)[{index, microbatch}] = {
                    action, peer, std::move(buffers), timeline_index};
                break;
            }
            default:
                break;
        }
    }

    // A RECV's row ends when its data arrived, which the transport or, failing it, the wait of
    // the action consuming it sees (arrival_ns). When the step fails first, the receives posted and
    // never waited for were, as far as this rank knows, outstanding until it stopped: their rows
    // end then, not at their posting (which drew a RECV ending before its SEND began).
    void close_unawaited_receives(std::int64_t stop_ns, std::vector<TimedAction>& timeline) {
        for (const auto* posted : {&posted_forward_, &posted_backward_})
            for (const auto& [key, receive] : *posted)
                timeline.at(receive.timeline_index).end_ns = stop_ns;
    }

    // When a RECV's data arrived, on this rank's timeline: where the transport saw it land, else
    // now, when the wait for it returned. Data that was there before the RECV posted arrived, as
    // far as the row can say, at its posting (a row never ends before it starts).
    std::int64_t arrival_ns(const TimedAction& row, const ReceiveArrival& arrived) const {
        const std::int64_t returned = now();
        if (!arrived)
            return returned;
        const auto landed =
            std::chrono::duration_cast<std::chrono::nanoseconds>(*arrived - epoch_).count();
        return std::clamp(landed, std::min(row.start_ns, returned), returned);
    }

    // Completes the posted receives `action` consumes, recording each one's arrival.
    void await_inputs(const Action& action, std::vector<TimedAction>& timeline) {
        for (const Action& part : plan_.lowered->parts_of(action)) {
            const std::optional<ActionKind> consumed = receive_consumed_by(part.kind);
            if (!consumed)
                continue;
            const bool forward = *consumed == ActionKind::recv_forward;
            auto& posted = forward ? posted_forward_ : posted_backward_;
            const auto found = posted.find({part.stage, part.microbatch});
            if (found == posted.end())
                continue;
            PostedReceive receive = std::move(found->second);
            posted.erase(found);
            TimedAction& row = timeline.at(receive.timeline_index);
            ReceiveArrival arrived;
            try {
                arrived = transport_.recv(receive.peer, plan_.tag_offset + receive.receive.link,
                                          receive.buffers, plan_.timeout);
            } catch (const TransportTimeout& timeout) {
                row.end_ns = now();  // outstanding until now
                throw ReceiveTimeout(timeout, receive.receive);
            } catch (...) {
                row.end_ns = now();
                throw;
            }
            row.end_ns = arrival_ns(row, arrived);
            (forward ? received_forward_ : received_backward_)[{part.stage, part.microbatch}] =
                std::move(receive.buffers);
        }
    }

    void execute_part(const Action& part, std::size_t timeline_index) {
        PipelineStage* current = holds(part.stage) ? &stage(part.stage) : nullptr;
        switch (part.kind) {
            case ActionKind::forward:
                forward(part);
                break;
            case ActionKind::backward_input:
                hand_back(part, current->backward_input(part.microbatch, output_gradients(part)));
                break;
            case ActionKind::backward_weight:
                current->backward_weight(part.microbatch);
                break;
            case ActionKind::full_backward:
                hand_back(part, current->full_backward(part.microbatch, output_gradients(part)));
                break;
            case ActionKind::send_forward:
            case ActionKind::send_backward:
            case ActionKind::recv_forward:
            case ActionKind::recv_backward:
                communicate(part, timeline_index);
                break;
            default:
                break;  // FSDP actions: the built-in models are not sharded
        }
    }

    void execute(const Action& action, std::size_t timeline_index) {
        for (const Action& part : plan_.lowered->parts_of(action))
            execute_part(part, timeline_index);
    }

    RankPlan& plan_;
    Transport& transport_;
    std::chrono::steady_clock::time_point epoch_;
    ActionTimer& timer_;
    std::map<SlotKey, TensorList> received_forward_, received_backward_;
    std::map<SlotKey, TensorList> local_forward_, local_backward_;
    std::map<SlotKey, TensorList> to_send_forward_, to_send_backward_;
    std::map<SlotKey, PostedReceive> posted_forward_, posted_backward_;
};

}  // namespace

RankOutcome execute_rank(RankPlan& plan, Transport& transport,
                         std::chrono::steady_clock::time_point epoch) {
    const std::unique_ptr<ActionTimer> timer = action_timer_for(plan.device, epoch);
    RankOutcome outcome = Executor(plan, transport, epoch, *timer).run();
    outcome.epoch = epoch;
    if (!plan.device.is_cpu() && !outcome.failure)
        take_device_times(*plan.lowered, plan.rank, *timer, outcome);
    return outcome;
}

}  // namespace pipelens::runtime
