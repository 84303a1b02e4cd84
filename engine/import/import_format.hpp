// The formats `pipelens import` reads, their command-line names, and how a file's format is
// told from its first bytes when `--format` is not given.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pipelens::import {

enum class ImportFormat {
    pytorch_profiler,        // Chrome/Kineto JSON from torch.profiler, one file per rank
    pipelining_chrometrace,  // torch.distributed.pipelining's _dump_chrometrace (unit steps)
    pipelining_csv,          // torch.distributed.pipelining's _dump_csv schedule
    flight_recorder,         // NCCL flight-recorder dumps (pickle or JSON), one per rank
    megatron_timers,         // Megatron-LM per-microbatch event_times JSON, one per rank
};

std::string_view format_name(ImportFormat format);  // "pytorch-profiler", ...
std::vector<std::string> format_names();
std::optional<ImportFormat> format_from_name(std::string_view name);

// Reads the start of `path` (gzip-decompressed when it is gzip) and says which format it is;
// throws ImportError naming the file when it is unreadable or none of them.
ImportFormat detect_format(const std::string& path);

// The same from a file's first bytes (already decompressed) and its name.
std::optional<ImportFormat> format_of_head(std::string_view head, std::string_view file_name);

}  // namespace pipelens::import
