// The critical path's text and JSON forms (critical_path_report.hpp). Both list the shares in
// PathShare order, so a script can diff two runs' outputs line by line.
#include "app/cli/critical_path_report.hpp"

#include <fmt/format.h>

#include "traces/text/quantities.hpp"

namespace pipelens::cli {
namespace {

std::string action_text(const analysis::TimedSchedule& timed, analysis::ActionRef ref) {
    return timed.text(ref.rank, ref.index);
}

std::string percent_of(std::int64_t part, std::int64_t whole) {
    return whole > 0 ? fmt::format("{:.1f}%",
                                   100.0 * static_cast<double>(part) / static_cast<double>(whole))
                     : "-";
}

}  // namespace

std::string format_critical_path(const analysis::TimedSchedule& timed,
                                 const analysis::CriticalPath& path) {
    if (path.links.empty())
        return "critical path: none (no action of this run ended)\n";
    std::size_t transfers = 0;
    for (const analysis::PathLink& link : path.links)
        transfers +=
            is_communication(timed.schedule.ranks[link.action.rank][link.action.index].kind);
    std::string out = fmt::format("critical path: {} over {} actions ({} of them transfers)\n",
                                  format_duration(path.length_ns()), path.links.size(), transfers);
    for (int share = 0; share < analysis::kPathShareCount; ++share) {
        const std::int64_t ns = path.share_ns[static_cast<std::size_t>(share)];
        if (ns > 0)
            out += fmt::format("  {:<14} {:>12}  {:>6}\n",
                               analysis::share_name(static_cast<analysis::PathShare>(share)),
                               format_duration(ns), percent_of(ns, path.length_ns()));
    }
    out += fmt::format("  {:>5}  {:<24} {:>12} {:>12} {:>12}\n", "rank", "action", "from", "to",
                       "waited");
    for (const analysis::PathLink& link : path.links)
        out += fmt::format("  {:>5}  {:<24} {:>12} {:>12} {:>12}\n", link.action.rank,
                           action_text(timed, link.action), format_duration(link.from_ns),
                           format_duration(link.end_ns), format_duration(link.waited_ns));
    return out;
}

nlohmann::ordered_json critical_path_json(const analysis::TimedSchedule& timed,
                                          const analysis::CriticalPath& path) {
    nlohmann::ordered_json shares = nlohmann::ordered_json::object();
    for (int share = 0; share < analysis::kPathShareCount; ++share)
        shares[std::string(analysis::share_name(static_cast<analysis::PathShare>(share)))] =
            path.share_ns[static_cast<std::size_t>(share)];
    nlohmann::ordered_json links = nlohmann::ordered_json::array();
    for (const analysis::PathLink& link : path.links)
        links.push_back({{"rank", link.action.rank},
                         {"action", action_text(timed, link.action)},
                         {"from_ns", link.from_ns},
                         {"end_ns", link.end_ns},
                         {"waited_ns", link.waited_ns}});
    return {{"start_ns", path.start_ns},
            {"end_ns", path.end_ns},
            {"length_ns", path.length_ns()},
            {"shares", shares},
            {"links", links}};
}

}  // namespace pipelens::cli
