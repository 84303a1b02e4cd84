// Which device a real run computes on, from `run --device`: a torch-free value that the CLI
// parses and the runtime resolves against the facts only it can know (whether its LibTorch was
// built with CUDA, how many GPUs it sees). Deciding from those facts lives here, without
// LibTorch, so that every message can be tested on a machine without a GPU.
//
// Invariants: parse_device_choice accepts exactly "cpu", "cuda" and "cuda:N" (N decimal, 0 or
// more) and nothing else; resolve_device returns "cpu" or "cuda:N" with N below the GPU count
// it was given, or throws DeviceChoiceError saying why not.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace pipelens::runtime {

class DeviceChoiceError : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

struct DeviceChoice {
    enum class Kind { automatic, cpu, cuda };
    Kind kind = Kind::automatic;
    std::optional<int> index;  // cuda:N; none: the rank's local GPU (LOCAL_RANK, else 0)
    friend bool operator==(const DeviceChoice&, const DeviceChoice&) = default;
};

// "auto", "cpu", "cuda" or "cuda:N": the text parse_device_choice reads back (except "auto").
std::string to_string(const DeviceChoice& choice);

// Throws DeviceChoiceError naming --device and what it accepts.
DeviceChoice parse_device_choice(std::string_view text);

// What the runtime knows about where it can compute.
struct DeviceFacts {
    bool build_has_cuda = false;  // LibTorch was built with CUDA
    std::string torch_version;    // e.g. "1.13.1"
    int gpu_count = 0;            // GPUs LibTorch sees
    // CUDA_VISIBLE_DEVICES as this process got it; none: unset.
    std::optional<std::string> cuda_visible_devices;
    int local_rank = -1;  // this process's rank on its host (LOCAL_RANK); -1: not given
};

// The device text c10::Device reads: "cpu" or "cuda:N". The default (automatic) is the rank's
// GPU when the build has CUDA and a GPU is seen, else the CPU. `cuda` without an index is GPU
// LOCAL_RANK (GPU 0 without one), so the processes of one host take one GPU each.
std::string resolve_device(const DeviceChoice& choice, const DeviceFacts& facts);

// With `--transport local` every rank is a thread of one process on one device: on a GPU that
// is worth saying, since the ranks then share its compute and memory. None otherwise.
std::optional<std::string> shared_device_note(const std::string& transport,
                                              const std::string& device, int rank_count);

}  // namespace pipelens::runtime
