// Edited copies of the traces PyTorch wrote (tests/data/pytorch/profiler/), made at test time:
// what a longer profile of the same run would hold. The copies are never committed; each test
// writes them to a temporary file and imports that.
//
// Invariants: a copy keeps every event of the original (metadata once), its times shifted by
// one second per copy (every rank's alike, as one clock would see them; a trace longer than that
// throws) and its flow ids by 1,000,000, so flows never join across copies; torch.profiler's step
// ranges, where asked for, are "ProfilerStep#N" on the thread of the trace's first operator,
// spanning the copy's CPU events (as step() opens and closes them around the loop's body).
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/import/byte_source.hpp"

namespace pipelens::testing {

inline nlohmann::json read_gzipped_json(const std::string& path) {
    import::FileSource file(path);
    import::GzipSource gzip(file, path);
    std::string text;
    char buffer[1 << 16];
    for (std::size_t n; (n = gzip.read(buffer, sizeof buffer)) > 0;)
        text.append(buffer, n);
    return nlohmann::json::parse(text);
}

struct RepeatedSteps {
    int copies = 2;
    int first_step_number = -1;  // N of the first ProfilerStep#N; -1: no ProfilerStep ranges
    // Called on each copied event with its copy number, after its times were shifted.
    std::function<void(nlohmann::json& event, int copy)> edit;
};

// `trace` (a whole Kineto trace) with its events repeated as `how` says.
inline nlohmann::json repeated_steps(nlohmann::json trace, const RepeatedSteps& how) {
    nlohmann::json& events = trace.at("traceEvents");
    double first = 1e300;
    double last = -1e300;
    const nlohmann::json* first_operator = nullptr;
    for (const nlohmann::json& event : events) {
        if (!event.contains("ts") || event.value("ph", "") == "M")
            continue;
        const double start = event.at("ts").get<double>();
        first = std::min(first, start);
        last = std::max(last, start + event.value("dur", 0.0));
        if (event.value("cat", "") == "cpu_op" &&
            (first_operator == nullptr || start < first_operator->at("ts").get<double>()))
            first_operator = &event;
    }
    constexpr double gap = 1e6;  // us
    if (last - first >= gap)
        throw std::runtime_error("repeated_steps: the trace spans a second or more");
    nlohmann::json out = nlohmann::json::array();
    nlohmann::json steps = nlohmann::json::array();
    for (int copy = 0; copy < how.copies; ++copy) {
        double cpu_first = 1e300;
        double cpu_last = -1e300;
        for (nlohmann::json event : events) {
            const bool timed = event.contains("ts") && event.value("ph", "") != "M";
            if (!timed) {
                if (copy == 0)
                    out.push_back(std::move(event));
                continue;
            }
            // Whole nanoseconds, as Kineto writes them: a copy's times are the original's exactly.
            event["ts"] = std::round((event.at("ts").get<double>() + copy * gap) * 1000) / 1000;
            if (event.contains("id") && event.at("id").is_number_integer())
                event["id"] = event.at("id").get<std::int64_t>() + copy * 1'000'000;
            const std::string cat = event.value("cat", "");
            if (event.value("ph", "") == "X" && (cat == "cpu_op" || cat == "user_annotation")) {
                cpu_first = std::min(cpu_first, event.at("ts").get<double>());
                cpu_last =
                    std::max(cpu_last, event.at("ts").get<double>() + event.value("dur", 0.0));
            }
            if (how.edit)
                how.edit(event, copy);
            out.push_back(std::move(event));
        }
        if (how.first_step_number >= 0 && first_operator != nullptr)
            steps.push_back(
                {{"ph", "X"},
                 {"cat", "user_annotation"},
                 {"name", "ProfilerStep#" + std::to_string(how.first_step_number + copy)},
                 {"pid", first_operator->at("pid")},
                 {"tid", first_operator->at("tid")},
                 {"ts", cpu_first - 1.0},
                 {"dur", cpu_last - cpu_first + 2.0},
                 {"args", nlohmann::json::object()}});
    }
    for (nlohmann::json& step : steps)
        out.push_back(std::move(step));
    events = std::move(out);
    return trace;
}

}  // namespace pipelens::testing
