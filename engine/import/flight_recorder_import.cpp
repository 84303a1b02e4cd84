// Writing an analysed set of flight-recorder dumps into a trace (the mapping is described in the
// header). Rows are written straight through TraceWriter: a dump has no compute, schedule or
// stage split for the measured-run recorder to derive figures from.
#include "engine/import/flight_recorder_import.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/import/scalar_type_bytes.hpp"
#include "engine/schedule/action.hpp"

namespace pipelens::import {
namespace {

// Saturating arithmetic: times and sizes come from files and must not overflow.
std::int64_t times(std::int64_t a, std::int64_t b) {
    std::int64_t out = 0;
    return __builtin_mul_overflow(a, b, &out) ? std::numeric_limits<std::int64_t>::max() : out;
}
std::int64_t plus(std::int64_t a, std::int64_t b) {
    std::int64_t out = 0;
    if (!__builtin_add_overflow(a, b, &out))
        return out;
    return b > 0 ? std::numeric_limits<std::int64_t>::max()
                 : std::numeric_limits<std::int64_t>::min();
}
std::int64_t minus(std::int64_t a, std::int64_t b) {
    std::int64_t out = 0;
    if (!__builtin_sub_overflow(a, b, &out))
        return out;
    return b < 0 ? std::numeric_limits<std::int64_t>::max()
                 : std::numeric_limits<std::int64_t>::min();
}

std::int64_t tensor_bytes(const std::vector<std::vector<std::int64_t>>& sizes,
                          const std::vector<std::string>& dtypes) {
    std::int64_t total = 0;
    for (std::size_t i = 0; i < sizes.size() && i < dtypes.size(); ++i) {
        std::int64_t count = scalar_type_bytes(dtypes[i]);
        for (const std::int64_t dim : sizes[i])
            count = times(count, std::max<std::int64_t>(dim, 0));
        total = plus(total, count);
    }
    return total;
}

std::int64_t bytes_of(const FlightRecorderEntry& entry) {
    return entry.op.is_recv() ? tensor_bytes(entry.output_sizes, entry.output_dtypes)
                              : tensor_bytes(entry.input_sizes, entry.input_dtypes);
}

std::int32_t clamp32(std::int64_t value) {
    return static_cast<std::int32_t>(std::clamp<std::int64_t>(
        value, std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()));
}

ActionKind kind_of(const FlightRecorderEntry& entry) {
    if (entry.op.is_send())
        return ActionKind::send_forward;
    if (entry.op.is_recv())
        return ActionKind::recv_forward;
    const std::string& type = entry.op.type;
    const bool gathers = type.find("all_gather") != std::string::npos ||
                         type.find("allgather") != std::string::npos || type == "broadcast";
    return gathers ? ActionKind::unshard : ActionKind::reduce_grad;
}

// The span every dump covers: the earliest creation (the run's 0) and the latest time recorded.
struct Span {
    std::int64_t zero = 0;
    std::int64_t horizon = 0;
};

Span span_of(const std::vector<FlightRecorderDump>& dumps) {
    std::int64_t zero = std::numeric_limits<std::int64_t>::max();
    std::int64_t horizon = std::numeric_limits<std::int64_t>::min();
    for (const FlightRecorderDump& dump : dumps)
        for (const FlightRecorderEntry& entry : dump.entries) {
            zero = std::min(zero, entry.time_created_ns);
            horizon = std::max({horizon, entry.time_created_ns,
                                entry.time_discovered_started_ns.value_or(horizon),
                                entry.time_discovered_completed_ns.value_or(horizon)});
        }
    if (zero > horizon)
        return {};
    return {zero, horizon};
}

std::int64_t end_of(const FlightRecorderEntry& entry, EntryState state, const Span& span) {
    if (state != EntryState::completed)
        return span.horizon;
    if (entry.time_discovered_completed_ns)
        return std::max(*entry.time_discovered_completed_ns, entry.time_created_ns);
    if (entry.duration_ms) {
        const double ns = *entry.duration_ms * 1e6;
        return plus(entry.time_created_ns,
                    std::isnan(ns) ? 0 : static_cast<std::int64_t>(std::clamp(ns, 0.0, 1e18)));
    }
    return entry.time_created_ns;
}

std::string run_config(const std::vector<FlightRecorderDump>& dumps,
                       const FlightRecorderReport& report) {
    nlohmann::json config;
    config["imported"] = "flight-recorder";
    nlohmann::json sources = nlohmann::json::array();
    for (const FlightRecorderDump& dump : dumps)
        sources.push_back({{"rank", dump.rank}, {"file", dump.file}, {"version", dump.version}});
    config["sources"] = sources;
    config["notes"] = report.notes;
    config["hang"] = report.hang;
    config["mismatch"] = report.mismatch;
    config["findings"] = report.findings.size();
    return config.dump(2);
}

// Pair ids by (rank, step) of both sides, in the report's order.
std::map<std::pair<int, int>, std::int32_t> pair_ids(const FlightRecorderReport& report) {
    std::map<std::pair<int, int>, std::int32_t> ids;
    for (std::size_t i = 0; i < report.transfers.size(); ++i) {
        const MatchedTransfer& transfer = report.transfers[i];
        ids[{transfer.send_rank, transfer.send_step}] = static_cast<std::int32_t>(i);
        ids[{transfer.recv_rank, transfer.recv_step}] = static_cast<std::int32_t>(i);
    }
    return ids;
}

void write_actions(traces::TraceWriter& writer, std::int64_t run_id,
                   const std::vector<FlightRecorderDump>& dumps, const FlightRecorderReport& report,
                   const Span& span) {
    const auto ids = pair_ids(report);
    for (const FlightRecorderDump& dump : dumps) {
        writer.add_rank(run_id, traces::RankRecord{dump.rank, 0, 0, 0, 0, 0, 0, "", {}, {}, {}});
        const std::vector<EntryState> states = effective_states(dump);
        for (std::size_t step = 0; step < dump.entries.size(); ++step) {
            const FlightRecorderEntry& entry = dump.entries[step];
            if (entry.op.type == "coalesced")
                continue;
            traces::ActionRecord action;
            action.rank = dump.rank;
            action.step = static_cast<std::int32_t>(step);
            action.lane = traces::ActionLane::communication;
            action.kind = static_cast<std::uint8_t>(kind_of(entry));
            action.stage = entry.op.is_p2p() ? entry.peer_rank : clamp32(entry.pg_id);
            action.microbatch =
                clamp32(entry.op.is_p2p() ? entry.p2p_seq_id : entry.collective_seq_id);
            action.start_ns = minus(entry.time_created_ns, span.zero);
            action.end_ns = minus(end_of(entry, states[step], span), span.zero);
            action.bytes = bytes_of(entry);
            const auto pair = ids.find({dump.rank, static_cast<int>(step)});
            action.pair_id = pair == ids.end() ? -1 : pair->second;
            action.kept_text = op_label(entry);  // its stage and microbatch name no pipeline action
            writer.add_action(run_id, action);
        }
    }
    for (std::size_t i = 0; i < report.transfers.size(); ++i) {
        const MatchedTransfer& t = report.transfers[i];
        const auto& send = std::find_if(dumps.begin(), dumps.end(), [&](const auto& d) {
                               return d.rank == t.send_rank;
                           })->entries[static_cast<std::size_t>(t.send_step)];
        writer.add_pair(run_id, {static_cast<std::int32_t>(i), t.send_rank, t.send_step,
                                 t.recv_rank, t.recv_step, bytes_of(send)});
    }
}

void write_findings(traces::TraceWriter& writer, std::int64_t run_id,
                    const std::vector<FlightRecorderDump>& dumps,
                    const FlightRecorderReport& report, const Span& span) {
    for (const FlightRecorderFinding& finding : report.findings) {
        traces::ErrorRecord error{finding.rank,
                                  -1,
                                  -1,
                                  finding.action,
                                  finding.kind,
                                  finding.expected,
                                  finding.actual,
                                  finding.message,
                                  std::nullopt,
                                  std::nullopt};
        const auto dump = std::find_if(dumps.begin(), dumps.end(),
                                       [&](const auto& d) { return d.rank == finding.rank; });
        if (dump != dumps.end() && finding.step >= 0 &&
            finding.step < static_cast<int>(dump->entries.size())) {
            const FlightRecorderEntry& entry =
                dump->entries[static_cast<std::size_t>(finding.step)];
            error.time_ns = minus(entry.time_created_ns, span.zero);
            if (finding.kind == "hang") {
                // The op in flight when the dump was taken: the error is at the dump's end.
                error.started_ns = minus(
                    entry.time_discovered_started_ns.value_or(entry.time_created_ns), span.zero);
                error.time_ns = minus(span.horizon, span.zero);
            }
        }
        writer.add_error(run_id, error);
    }
}

}  // namespace

std::int64_t record_flight_recorder(traces::TraceWriter& writer,
                                    const std::vector<FlightRecorderDump>& dumps,
                                    const FlightRecorderReport& report) {
    traces::RunRecord run;
    run.kind = traces::RunKind::real;
    run.schedule = traces::kFlightRecorderSchedule;
    for (const FlightRecorderDump& dump : dumps)
        run.pp = std::max(run.pp, dump.rank + 1);
    run.v = 1;
    run.m = 0;
    run.config = run_config(dumps, report);
    const Span span = span_of(dumps);
    return writer.write_run(run, [&](std::int64_t run_id) {
        write_actions(writer, run_id, dumps, report, span);
        write_findings(writer, run_id, dumps, report, span);
        if ((report.hang || report.mismatch) && !report.findings.empty())
            writer.fail_run(run_id, report.findings.front().message);
        else if (report.hang || report.mismatch)
            writer.fail_run(run_id, "the dumps show a hang or mismatch");
        else
            writer.finish_run(run_id, minus(span.horizon, span.zero), 0.0);
    });
}

}  // namespace pipelens::import
