// `--device` texts, their resolution against what the runtime can use, and the note about ranks
// sharing a GPU (see device_choice.hpp).
#include "engine/stage_plan/device_choice.hpp"

#include <charconv>

#include <fmt/format.h>

namespace pipelens::runtime {
namespace {

constexpr std::string_view kCudaPrefix = "cuda:";

// "cuda:0..cuda:3", "cuda:0"
std::string seen_range(int gpu_count) {
    return gpu_count == 1 ? "cuda:0" : fmt::format("cuda:0..cuda:{}", gpu_count - 1);
}

std::string gpus_seen(int gpu_count) {
    return fmt::format("only {} GPU{} seen ({})", gpu_count, gpu_count == 1 ? " is" : "s are",
                       seen_range(gpu_count));
}

// How a message names the request: the user's text, or the default that chose CUDA.
std::string requested(const DeviceChoice& choice) {
    return choice.kind == DeviceChoice::Kind::automatic ? "cuda (the default where a GPU is seen)"
                                                        : to_string(choice);
}

std::string resolve_cuda(const DeviceChoice& choice, const DeviceFacts& facts) {
    const std::string what = requested(choice);
    if (!facts.build_has_cuda)
        throw DeviceChoiceError(fmt::format(
            "--device {}: this build of pipelens-runtime has no CUDA (LibTorch {} CPU); give "
            "--device cpu, or build pipelens against a CUDA LibTorch",
            what, facts.torch_version));
    if (facts.gpu_count <= 0)
        throw DeviceChoiceError(fmt::format(
            "--device {}: no GPU seen ({}); give --device cpu", what,
            facts.cuda_visible_devices ? "CUDA_VISIBLE_DEVICES=" + *facts.cuda_visible_devices
                                       : std::string("CUDA_VISIBLE_DEVICES unset")));
    if (choice.index) {
        if (*choice.index >= facts.gpu_count)
            throw DeviceChoiceError(
                fmt::format("--device {}: {}", what, gpus_seen(facts.gpu_count)));
        return fmt::format("cuda:{}", *choice.index);
    }
    const int index = facts.local_rank >= 0 ? facts.local_rank : 0;
    if (index >= facts.gpu_count)
        throw DeviceChoiceError(fmt::format(
            "--device {}: the rank with LOCAL_RANK {} takes cuda:{}, but {}; start at most {} "
            "rank{} per host, or give every rank --device cuda:N",
            what, index, index, gpus_seen(facts.gpu_count), facts.gpu_count,
            facts.gpu_count == 1 ? "" : "s"));
    return fmt::format("cuda:{}", index);
}

}  // namespace

std::string to_string(const DeviceChoice& choice) {
    switch (choice.kind) {
        case DeviceChoice::Kind::automatic:
            return "auto";
        case DeviceChoice::Kind::cpu:
            return "cpu";
        case DeviceChoice::Kind::cuda:
            return choice.index ? fmt::format("cuda:{}", *choice.index) : "cuda";
    }
    return "auto";
}

DeviceChoice parse_device_choice(std::string_view text) {
    if (text == "cpu")
        return {DeviceChoice::Kind::cpu, std::nullopt};
    if (text == "cuda")
        return {DeviceChoice::Kind::cuda, std::nullopt};
    if (text.starts_with(kCudaPrefix)) {
        const std::string_view digits = text.substr(kCudaPrefix.size());
        int index = -1;
        const auto [end, error] =
            std::from_chars(digits.data(), digits.data() + digits.size(), index);
        // Digits only: from_chars would take "-1", and "+1" or " 1" are not indices either.
        const bool all_digits =
            !digits.empty() && digits.find_first_not_of("0123456789") == std::string_view::npos;
        if (all_digits && error == std::errc() && end == digits.data() + digits.size())
            return {DeviceChoice::Kind::cuda, index};
    }
    throw DeviceChoiceError(fmt::format(
        "--device '{}': expected cpu, cuda or cuda:N (N a GPU index: 0, 1, ...)", text));
}

std::string resolve_device(const DeviceChoice& choice, const DeviceFacts& facts) {
    switch (choice.kind) {
        case DeviceChoice::Kind::cpu:
            return "cpu";
        case DeviceChoice::Kind::cuda:
            return resolve_cuda(choice, facts);
        case DeviceChoice::Kind::automatic:
            return facts.build_has_cuda && facts.gpu_count > 0 ? resolve_cuda(choice, facts)
                                                               : "cpu";
    }
    return "cpu";
}

std::optional<std::string> shared_device_note(const std::string& transport,
                                              const std::string& device, int rank_count) {
    if (transport != "local" || rank_count < 2 || !device.starts_with("cuda"))
        return std::nullopt;
    return fmt::format(
        "the {} ranks share one GPU ({}): --transport local runs them as threads of one process, "
        "so their computations and memory compete, and each rank's memory figures are the whole "
        "GPU's (the CUDA caching allocator counts per device, not per rank); give --transport "
        "nccl (or gloo) --nproc {} for a GPU per rank",
        rank_count, device, rank_count);
}

}  // namespace pipelens::runtime
