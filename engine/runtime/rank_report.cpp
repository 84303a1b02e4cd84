// Rank reports as JSON and their merge on rank 0 (see rank_report.hpp).
#include "engine/runtime/rank_report.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "engine/recorder/recorded_trace.hpp"
#include "engine/run_record/statistics.hpp"

namespace pipelens::runtime {
namespace {

// JSON has no NaN or Inf (nlohmann writes them as null), yet a loss may well be NaN: such
// values travel as their names.
nlohmann::json number_to_json(double value) {
    if (std::isfinite(value))
        return value;
    return std::isnan(value) ? "nan" : (value > 0 ? "inf" : "-inf");
}

double number_from_json(const nlohmann::json& json) {
    if (!json.is_string())
        return json.get<double>();
    const std::string text = json.get<std::string>();
    if (text == "nan")
        return std::numeric_limits<double>::quiet_NaN();
    return text == "inf" ? std::numeric_limits<double>::infinity()
                         : -std::numeric_limits<double>::infinity();
}

// The devices the ranks computed on, in rank order without repeats ("cpu", "cuda:0, cuda:1"); the
// run's own when no rank said (the CPU where none was resolved).
std::string run_device(const std::vector<RankReport>& reports,
                       const run_record::PipelineRunOptions& options) {
    std::vector<std::string> devices;
    for (const RankReport& report : reports)
        if (!report.run.device.empty() &&
            std::find(devices.begin(), devices.end(), report.run.device) == devices.end())
            devices.push_back(report.run.device);
    if (devices.empty())
        return options.device.empty() ? "cpu" : options.device;
    std::string joined = devices.front();
    for (std::size_t index = 1; index < devices.size(); ++index)
        joined += ", " + devices[index];
    return joined;
}

// When each recorded step began by the barrier before it: as rank 0 saw it (the run's clock),
// else the earliest rank's; none when no rank recorded a step start (a run stopped before its
// first step).
std::vector<std::int64_t> barrier_exits(const std::vector<run_record::RankRun>& ranks) {
    for (const run_record::RankRun& rank : ranks)
        if (rank.rank == 0 && !rank.step_starts_ns.empty())
            return rank.step_starts_ns;
    std::vector<std::int64_t> starts;
    for (const run_record::RankRun& rank : ranks)
        for (std::size_t step = 0; step < rank.step_starts_ns.size(); ++step) {
            if (step >= starts.size())
                starts.push_back(rank.step_starts_ns[step]);
            starts[step] = std::min(starts[step], rank.step_starts_ns[step]);
        }
    return starts;
}

// Moves everything a rank recorded in time by `shift_ns`.
void shift_rank_times(run_record::PipelineRunResult& result, std::size_t index,
                      std::int64_t shift_ns) {
    run_record::RankRun& rank = result.ranks[index];
    for (run_record::ActionTiming& timing : rank.timeline) {
        timing.start_ns += shift_ns;
        timing.end_ns += shift_ns;
    }
    for (std::int64_t& start : rank.step_starts_ns)
        start += shift_ns;
    for (run_record::MemoryPoint& point : rank.memory)
        point.time_ns += shift_ns;
    if (rank.failure && rank.failure->time_ns != 0) {
        rank.failure->time_ns += shift_ns;
        if (rank.failure->started_ns)
            *rank.failure->started_ns += shift_ns;
    }
    for (run_record::RankRecording& recording : result.recordings)
        if (recording.rank == rank.rank)
            for (recorder::Event& event : recording.parts.events)
                if (event.time_ns)
                    *event.time_ns += shift_ns;
}

// Ranks that read rank 0's host clock (threads, processes of one boot) are put on rank 0's clock
// exactly, from where each one's zero lay on that clock: the ping-pong estimate only adds its
// error (microseconds idle, milliseconds on a loaded machine, where RECVs then seemed to end
// before their SENDs). A failed step measured nothing, so this is the only placement its ranks
// get; the offset is then what their `clock:` faults put between them. A process whose `clock:`
// fault puts it off rank 0's clock keeps its estimate: the fault stands for another host's
// clock, and is how the estimate is exercised. Ranks of other hosts keep theirs (or, unmeasured,
// their own clock and no offset).
void put_same_clock_ranks_exactly(run_record::PipelineRunResult& result) {
    const auto rank_zero =
        std::find_if(result.ranks.begin(), result.ranks.end(),
                     [](const run_record::RankRun& rank) { return rank.rank == 0; });
    if (rank_zero == result.ranks.end() || !rank_zero->host_zero)
        return;
    const run_record::HostZero zero = *rank_zero->host_zero;
    for (std::size_t index = 0; index < result.ranks.size(); ++index) {
        run_record::RankRun& rank = result.ranks[index];
        if (!rank.host_zero || rank.host_zero->clock_id != zero.clock_id)
            continue;
        const std::int64_t skew_between = zero.skew_ns - rank.host_zero->skew_ns;
        if (rank.clock && skew_between != 0)
            continue;
        // A measured rank's times already moved by its zero on its clock, plus the estimate,
        // minus rank 0's zero on rank 0's clock; an unmeasured rank's still count from its zero.
        shift_rank_times(result, index,
                         rank.clock ? skew_between - rank.clock->offset_ns
                                    : rank.host_zero->zero_ns - zero.zero_ns);
        rank.clock = run_record::ClockOffset{skew_between, 0};
    }
}

// Each recorded step's time: from the earliest start of its actions on any rank to their latest
// end, the run's step time their median. The same span every reader of the trace takes
// (analysis::training_steps), so `run`, `calibrate`, `diff` and the straggler report give one
// step time: starting at rank 0's barrier instead missed a RECV another rank posted before
// rank 0 left the barrier (gloo: up to 0.4 ms a step). A step none of whose actions started
// keeps its barrier exit.
void time_steps(run_record::PipelineRunResult& result) {
    result.step_starts_ns = barrier_exits(result.ranks);
    constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::max();
    std::vector<std::int64_t> ends(std::max<std::size_t>(result.step_starts_ns.size(), 1), 0);
    std::vector<std::int64_t> first_starts(ends.size(), kNone);
    for (const run_record::RankRun& rank : result.ranks)
        for (const run_record::ActionTiming& timing : rank.timeline) {
            const auto repeat = static_cast<std::size_t>(std::max(timing.repeat, 0));
            if (repeat >= ends.size()) {
                ends.resize(repeat + 1, 0);
                first_starts.resize(repeat + 1, kNone);
            }
            ends[repeat] = std::max(ends[repeat], timing.end_ns);
            first_starts[repeat] = std::min(first_starts[repeat], timing.start_ns);
        }
    result.step_starts_ns.resize(ends.size(), 0);
    result.step_times_ns.clear();
    for (std::size_t step = 0; step < ends.size(); ++step) {
        if (first_starts[step] != kNone)
            result.step_starts_ns[step] = first_starts[step];
        result.step_times_ns.push_back(
            std::max<std::int64_t>(ends[step] - result.step_starts_ns[step], 0));
    }
    result.step_time_ns = run_record::median_of(result.step_times_ns);
}

// The last stage's NaN check sees where NaNs ended up, not where they began; with
// --check-accuracy the merged comparison knows the first stage and microbatch whose outputs held
// them (not necessarily its first divergence, which can be a finite error before them), and the
// failure says it, or that no stage's outputs held any (the loss alone was not finite).
void name_where_non_finite_values_began(run_record::PipelineRunResult& result) {
    if (!result.accuracy.checked)
        return;
    const auto& stages = result.accuracy.stages;  // by stage, then microbatch
    const auto first =
        std::find_if(stages.begin(), stages.end(),
                     [](const run_record::StageAccuracy& entry) { return entry.non_finite; });
    const std::string where =
        first == stages.end()
            ? std::string("; no stage's outputs held NaN or Inf as --check-accuracy compared them")
            : fmt::format(
                  "; they first appear in stage {}'s outputs (rank {}, microbatch {}), as "
                  "--check-accuracy found",
                  first->stage, first->rank, first->microbatch);
    for (run_record::RankRun& rank : result.ranks)
        if (rank.failure && rank.failure->kind == "non_finite")
            rank.failure->message += where;
}

}  // namespace

nlohmann::json rank_report_to_json(const RankReport& report) {
    nlohmann::json json;
    json["rank"] = report.run.rank;
    json["device"] = report.run.device;
    json["busy_ns"] = report.run.busy_ns;
    nlohmann::json timeline = nlohmann::json::array();
    for (const run_record::ActionTiming& timing : report.run.timeline)
        timeline.push_back({timing.step, timing.start_ns, timing.end_ns, timing.repeat});
    json["timeline"] = std::move(timeline);
    json["step_starts_ns"] = report.run.step_starts_ns;
    nlohmann::json memory = nlohmann::json::array();
    for (const run_record::MemoryPoint& point : report.run.memory)
        memory.push_back({point.time_ns, point.bytes});
    json["memory"] = std::move(memory);
    json["peak_memory_bytes"] = report.run.peak_memory_bytes;
    if (report.run.memory_before_steps_bytes)
        json["memory_before_steps_bytes"] = *report.run.memory_before_steps_bytes;
    json["core_waits_ns"] = report.run.core_waits_ns;
    nlohmann::json profile = nlohmann::json::array();
    for (const run_record::ProfileFigure& figure : report.profile)
        profile.push_back({figure.rank, figure.stage, figure.layer, figure.layer_name,
                           figure.quantity, figure.peer, figure.bytes, figure.median, figure.low,
                           figure.high, figure.samples});
    json["profile"] = std::move(profile);
    if (report.run.clock)
        json["clock"] = {report.run.clock->offset_ns, report.run.clock->uncertainty_ns};
    if (report.run.host_zero)
        json["host_zero"] = {report.run.host_zero->clock_id, report.run.host_zero->zero_ns,
                             report.run.host_zero->skew_ns};
    if (report.run.failure) {
        const run_record::RunFailure& failure = *report.run.failure;
        json["failure"] = {{"rank", failure.rank},
                           {"stage", failure.stage},
                           {"microbatch", failure.microbatch},
                           {"action", failure.action},
                           {"kind", failure.kind},
                           {"expected", failure.expected},
                           {"actual", failure.actual},
                           {"message", failure.message},
                           {"time_ns", failure.time_ns}};
        if (failure.started_ns)
            json["failure"]["started_ns"] = *failure.started_ns;
    }
    json["holds_last_stage"] = report.holds_last_stage;
    json["loss"] = number_to_json(report.loss);
    json["reference_loss"] = number_to_json(report.reference_loss);
    json["output_max_error"] = number_to_json(report.output_max_error);
    json["gradient_max_error"] = number_to_json(report.gradient_max_error);
    json["outputs_match"] = report.outputs_match;
    json["gradients_match"] = report.gradients_match;
    nlohmann::json accuracy = nlohmann::json::array();
    for (const run_record::StageAccuracy& entry : report.accuracy)
        accuracy.push_back({entry.stage, entry.microbatch, number_to_json(entry.max_abs_error),
                            number_to_json(entry.max_relative_error), entry.diverges,
                            entry.non_finite});
    json["accuracy"] = std::move(accuracy);
    json["recording"] = report.recording;
    return json;
}

RankReport rank_report_from_json(const nlohmann::json& json) {
    RankReport report;
    report.run.rank = json.at("rank");
    report.run.device = json.value("device", "");
    report.run.busy_ns = json.at("busy_ns");
    for (const auto& timing : json.at("timeline"))
        report.run.timeline.push_back(
            {timing[0], timing[1], timing[2], -1, timing.size() > 3 ? timing[3].get<int>() : 0});
    report.run.step_starts_ns = json.value("step_starts_ns", std::vector<std::int64_t>{});
    for (const auto& point : json.at("memory"))
        report.run.memory.push_back({point[0], point[1]});
    report.run.peak_memory_bytes = json.at("peak_memory_bytes");
    if (json.contains("memory_before_steps_bytes"))
        report.run.memory_before_steps_bytes =
            json["memory_before_steps_bytes"].get<std::int64_t>();
    if (json.contains("core_waits_ns"))
        report.run.core_waits_ns = json["core_waits_ns"].get<std::vector<std::int64_t>>();
    for (const auto& figure : json.at("profile"))
        report.profile.push_back({figure[0], figure[1], figure[2], figure[3], figure[4], figure[5],
                                  figure[6], figure[7], figure[8], figure[9], figure[10]});
    if (json.contains("clock"))
        report.run.clock = run_record::ClockOffset{json["clock"][0], json["clock"][1]};
    if (json.contains("host_zero"))
        report.run.host_zero =
            run_record::HostZero{json["host_zero"][0], json["host_zero"][1], json["host_zero"][2]};
    if (json.contains("failure")) {
        const auto& failure = json["failure"];
        report.run.failure = run_record::RunFailure{
            failure["rank"],    failure["stage"],    failure["microbatch"], failure["action"],
            failure["kind"],    failure["expected"], failure["actual"],     failure["message"],
            failure["time_ns"], std::nullopt};
        if (failure.contains("started_ns"))
            report.run.failure->started_ns = failure["started_ns"].get<std::int64_t>();
    }
    report.holds_last_stage = json.at("holds_last_stage");
    report.loss = number_from_json(json.at("loss"));
    report.reference_loss = number_from_json(json.at("reference_loss"));
    report.output_max_error = number_from_json(json.at("output_max_error"));
    report.gradient_max_error = number_from_json(json.at("gradient_max_error"));
    report.outputs_match = json.at("outputs_match");
    report.gradients_match = json.at("gradients_match");
    for (const auto& entry : json.at("accuracy"))
        report.accuracy.push_back({entry[0], entry[1], number_from_json(entry[2]),
                                   number_from_json(entry[3]), entry[4], entry[5]});
    report.recording = json.at("recording");
    return report;
}

std::vector<RankReport> reports_from_payloads(const std::vector<std::string>& payloads,
                                              const run_record::PipelineRunOptions& options,
                                              const std::vector<std::string>& deaths) {
    std::vector<RankReport> reports;
    for (std::size_t rank = 0; rank < payloads.size(); ++rank) {
        const bool died = rank < deaths.size() && !deaths[rank].empty();
        if (!payloads[rank].empty()) {
            RankReport report = rank_report_from_json(nlohmann::json::parse(payloads[rank]));
            // Rank 0 died after its report, while it recorded the run (the launcher records it
            // from the reports instead): the run is recorded, but it did not end as it should.
            if (died && !report.run.failure)
                report.run.failure = run_record::RunFailure{
                    static_cast<int>(rank),
                    -1,
                    -1,
                    "",
                    "rank_died",
                    "",
                    "",
                    fmt::format("rank {} died ({}) after its step, while it recorded the run; "
                                "the launcher recorded it from the ranks' reports",
                                rank, deaths[rank]),
                    0,
                    std::nullopt};
            reports.push_back(std::move(report));
            continue;
        }
        RankReport lost;
        lost.run.rank = static_cast<int>(rank);
        lost.run.failure = run_record::RunFailure{
            static_cast<int>(rank),
            -1,
            -1,
            "",
            died ? "rank_died" : "lost",
            "",
            "",
            died ? fmt::format("rank {} {} ({}) before it reported; its actions are not "
                               "recorded",
                               rank, deaths[rank].starts_with("exited") ? "ended" : "died",
                               deaths[rank])
                 : fmt::format("rank {} sent no report within {} ms: it died or hangs", rank,
                               options.timeout_ms),
            0,
            std::nullopt};
        reports.push_back(std::move(lost));
    }
    return reports;
}

run_record::PipelineRunResult merge_reports(const std::vector<RankReport>& reports,
                                            const run_record::PipelineRunOptions& options) {
    run_record::PipelineRunResult result;
    result.completed = true;
    result.device = run_device(reports, options);
    result.reference.checked = options.check_reference;
    result.reference.outputs_match = true;
    result.reference.gradients_match = true;
    result.accuracy.checked = options.check_accuracy;
    result.accuracy.tolerance = run_record::reference_tolerance(options.dtype);
    for (const RankReport& report : reports) {
        result.ranks.push_back(report.run);
        if (!report.recording.is_null())
            result.recordings.push_back(
                {report.run.rank, recorder::recording_from_json(report.recording)});
        for (run_record::StageAccuracy entry : report.accuracy) {
            entry.rank = report.run.rank;
            result.accuracy.stages.push_back(entry);
        }
        result.profile.insert(result.profile.end(), report.profile.begin(), report.profile.end());
        result.completed &= !report.run.failure.has_value();
        if (report.holds_last_stage) {
            result.loss = report.loss;
            result.reference.reference_loss = report.reference_loss;
            result.reference.loss_error = std::abs(report.loss - report.reference_loss);
        }
        result.reference.output_max_error =
            run_record::larger_error(result.reference.output_max_error, report.output_max_error);
        result.reference.gradient_max_error = run_record::larger_error(
            result.reference.gradient_max_error, report.gradient_max_error);
        result.reference.outputs_match &= report.outputs_match;
        result.reference.gradients_match &= report.gradients_match;
    }
    put_same_clock_ranks_exactly(result);
    time_steps(result);
    if (!result.completed) {
        result.reference.outputs_match = result.reference.gradients_match = false;
    }
    std::sort(result.accuracy.stages.begin(), result.accuracy.stages.end(),
              [](const run_record::StageAccuracy& left, const run_record::StageAccuracy& right) {
                  return std::pair(left.stage, left.microbatch) <
                         std::pair(right.stage, right.microbatch);
              });
    for (const run_record::StageAccuracy& entry : result.accuracy.stages)
        if (entry.diverges) {
            result.accuracy.first_divergence = entry;
            break;
        }
    name_where_non_finite_values_began(result);
    return result;
}

}  // namespace pipelens::runtime
