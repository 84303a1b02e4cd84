// Format detection reads at most the first 64 KiB: enough to see a JSON document's top-level
// keys or a pickle's first opcode, small enough for a 2 GB trace. Which kind of file the bytes
// are is traces/file_kind.hpp's rule, shared with every other command that takes a file.
#include "engine/import/import_format.hpp"

#include <array>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>
#include <zlib.h>

#include "engine/import/imported_run.hpp"
#include "traces/file_kind.hpp"

namespace pipelens::import {
namespace {

struct FormatName {
    ImportFormat format;
    std::string_view name;
};

constexpr std::array<FormatName, 5> kNames{{
    {ImportFormat::pytorch_profiler, "pytorch-profiler"},
    {ImportFormat::pipelining_chrometrace, "pipelining-chrometrace"},
    {ImportFormat::pipelining_csv, "pipelining-csv"},
    {ImportFormat::flight_recorder, "flight-recorder"},
    {ImportFormat::megatron_timers, "megatron-timers"},
}};

constexpr std::size_t kHeadBytes = 64 * 1024;

bool ends_with(std::string_view text, std::string_view tail) {
    return text.size() >= tail.size() && text.substr(text.size() - tail.size()) == tail;
}

}  // namespace

std::string_view format_name(ImportFormat format) {
    for (const FormatName& entry : kNames)
        if (entry.format == format)
            return entry.name;
    return "?";
}

std::vector<std::string> format_names() {
    std::vector<std::string> names;
    for (const FormatName& entry : kNames)
        names.emplace_back(entry.name);
    return names;
}

std::optional<ImportFormat> format_from_name(std::string_view name) {
    for (const FormatName& entry : kNames)
        if (entry.name == name)
            return entry.format;
    return std::nullopt;
}

std::optional<ImportFormat> format_of_head(std::string_view head, std::string_view file_name) {
    switch (traces::file_kind_of_head(head)) {
        case traces::FileKind::pytorch_profiler:
            return ImportFormat::pytorch_profiler;
        case traces::FileKind::pipelining_chrometrace:
            return ImportFormat::pipelining_chrometrace;
        case traces::FileKind::schedule_csv:
            return ImportFormat::pipelining_csv;
        case traces::FileKind::flight_recorder:
            return ImportFormat::flight_recorder;
        case traces::FileKind::megatron_timers:
            return ImportFormat::megatron_timers;
        case traces::FileKind::unknown:
            // A one-column dump (one action per rank, no comma) is still a CSV by its name.
            if (ends_with(file_name, ".csv") && !head.empty() && head.front() != '{')
                return ImportFormat::pipelining_csv;
            return std::nullopt;
        case traces::FileKind::sqlite:
        case traces::FileKind::experiment_toml:
        case traces::FileKind::plan_toml:
            return std::nullopt;
    }
    return std::nullopt;
}

ImportFormat detect_format(const std::string& path) {
    gzFile file = gzopen(path.c_str(), "rb");  // reads plain files unchanged
    if (file == nullptr)
        throw ImportError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
    std::string head(kHeadBytes, '\0');
    const int read = gzread(file, head.data(), static_cast<unsigned>(head.size()));
    int stream_error = Z_OK;
    gzerror(file, &stream_error);
    gzclose(file);
    if (read < 0)
        throw ImportError(fmt::format("{}: cannot read (corrupt gzip?)", path));
    // A stream cut short before the head was whole is said as such, as reading it whole would;
    // its few bytes once made it "not a format pipelens can import".
    if (stream_error == Z_BUF_ERROR)
        throw ImportError(fmt::format(
            "{}: the gzip stream ends early, after {} decompressed bytes (a truncated file?)", path,
            read));
    head.resize(static_cast<std::size_t>(read));
    if (const auto format = format_of_head(head, path))
        return *format;
    throw ImportError(fmt::format(
        "{}: not a format pipelens can import (expected a PyTorch profiler trace, a pipelining "
        "chrometrace or CSV dump, a flight-recorder dump or Megatron event times); give "
        "--format to force one",
        path));
}

}  // namespace pipelens::import
