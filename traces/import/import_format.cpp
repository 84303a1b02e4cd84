// Format detection reads at most the first 64 KiB: enough to see a JSON document's top-level
// keys or a pickle's first opcode, small enough for a 2 GB trace.
#include "traces/import/import_format.hpp"

#include <array>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>
#include <zlib.h>

#include "traces/import/imported_run.hpp"

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

bool contains(std::string_view text, std::string_view part) {
    return text.find(part) != std::string_view::npos;
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
    // A pickle starts with PROTO (0x80) and its version; the flight recorder's default dump.
    if (!head.empty() && static_cast<unsigned char>(head[0]) == 0x80)
        return ImportFormat::flight_recorder;
    const std::size_t first = head.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos)
        return std::nullopt;
    if (head[first] != '{') {
        if (ends_with(file_name, ".csv") || contains(head.substr(0, head.find('\n')), ","))
            return ImportFormat::pipelining_csv;
        return std::nullopt;
    }
    if (contains(head, "\"pg_config\"") || contains(head, "\"profiling_name\""))
        return ImportFormat::flight_recorder;
    if (contains(head, "\"traceEvents\"")) {
        // _dump_chrometrace writes only name/cat/ph/pid/tid/ts/dur with these two categories.
        const bool unit_steps = contains(head, "\"cat\": \"computation\"") ||
                                contains(head, "\"cat\": \"communication\"");
        const bool profiler = contains(head, "\"schemaVersion\"") ||
                              contains(head, "\"distributedInfo\"") ||
                              contains(head, "\"deviceProperties\"");
        return unit_steps && !profiler ? ImportFormat::pipelining_chrometrace
                                       : ImportFormat::pytorch_profiler;
    }
    if (contains(head, "\"forward-") || contains(head, "\"backward-"))
        return ImportFormat::megatron_timers;
    return std::nullopt;
}

ImportFormat detect_format(const std::string& path) {
    gzFile file = gzopen(path.c_str(), "rb");  // reads plain files unchanged
    if (file == nullptr)
        throw ImportError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
    std::string head(kHeadBytes, '\0');
    const int read = gzread(file, head.data(), static_cast<unsigned>(head.size()));
    gzclose(file);
    if (read < 0)
        throw ImportError(fmt::format("{}: cannot read (corrupt gzip?)", path));
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
