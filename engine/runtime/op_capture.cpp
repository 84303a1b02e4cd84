// The callback API takes plain function pointers, so the capture in progress is reached
// through a thread-local pointer that exists only while a stage is being traced.
#include "engine/runtime/op_capture.hpp"

#include <ATen/record_function.h>

namespace pipelens::runtime {
namespace {

struct OpCapture {
    std::vector<std::string> ops;
    int depth = 0;
};

thread_local OpCapture* active_capture = nullptr;

std::unique_ptr<at::ObserverContext> on_op_start(const at::RecordFunction& function) {
    if (active_capture != nullptr && active_capture->depth++ == 0)
        active_capture->ops.emplace_back(function.name());
    return nullptr;
}

void on_op_end(const at::RecordFunction&, at::ObserverContext*) {
    if (active_capture != nullptr)
        --active_capture->depth;
}

}  // namespace

std::vector<std::string> capture_ops(const std::vector<ModelLayer>& layers,
                                     const TensorList& inputs) {
    OpCapture capture;
    active_capture = &capture;
    const at::CallbackHandle handle = at::addThreadLocalCallback(
        at::RecordFunctionCallback(on_op_start, on_op_end).scopes({at::RecordScope::FUNCTION}));
    try {
        run_layers(layers, inputs);
    } catch (...) {
        at::removeCallback(handle);
        active_capture = nullptr;
        throw;
    }
    at::removeCallback(handle);
    active_capture = nullptr;
    return capture.ops;
}

}  // namespace pipelens::runtime
