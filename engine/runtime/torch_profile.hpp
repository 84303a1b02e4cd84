// LibTorch's own profiler around a rank's recorded steps, written as a Chrome trace: the operators
// (and, on a GPU, the kernels) inside each pipelens action, which the pipelens trace does not
// hold. Each action is marked "PP:<action>" the way torch.distributed.pipelining marks its own,
// so PyTorch's tools, Perfetto and `pipelens import` read the file like a PyTorch run's.
//
// Invariants: a session profiles the thread that started it and the threads LibTorch hands its
// work to (the autograd engine's); at most one session is active in a process (LibTorch's profiler
// is per process), so ranks that are threads of one process cannot each have one; the profiler is
// stopped by write() or, failing that, by the destructor, never left running.
#pragma once

#include <string>

#include <c10/core/Device.h>

namespace pipelens::runtime {

// The file rank `rank` writes its profile to in `directory`.
std::string torch_profile_path(const std::string& directory, int rank);

class TorchProfile {
  public:
    // Starts profiling this thread's LibTorch operators, and the device's kernels on a GPU.
    // Throws std::runtime_error when LibTorch cannot start its profiler.
    explicit TorchProfile(const c10::Device& device);
    ~TorchProfile();
    TorchProfile(const TorchProfile&) = delete;
    TorchProfile& operator=(const TorchProfile&) = delete;

    // Stops profiling and writes what was recorded to `path` (Chrome trace JSON, with PyTorch's
    // distributedInfo naming the rank). Throws std::runtime_error naming the file when it cannot.
    void write(const std::string& path, int rank, int world_size, const std::string& backend);

  private:
    bool active_ = false;
};

}  // namespace pipelens::runtime
