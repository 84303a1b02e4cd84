// The step x rank grid. Columns are as wide as their widest cell or label, so the grid stays
// aligned for any number of ranks.
#include "engine/schedule/schedule_table.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace pipelens {

std::string format_schedule_table(const Schedule& schedule) {
    std::size_t steps = 0;
    for (const auto& actions : schedule.ranks)
        steps = std::max(steps, actions.size());
    const std::size_t digits = fmt::format("{}", steps == 0 ? 0 : steps - 1).size();

    std::vector<std::vector<std::string>> cells(schedule.ranks.size());
    std::vector<std::size_t> widths(schedule.ranks.size());
    for (std::size_t rank = 0; rank < schedule.ranks.size(); ++rank) {
        widths[rank] = fmt::format("Rank {}", rank).size();
        for (const Action& action : schedule.ranks[rank]) {
            cells[rank].push_back(schedule.text(action));
            widths[rank] = std::max(widths[rank], cells[rank].back().size());
        }
    }

    std::string out(digits + 7, ' ');
    for (std::size_t rank = 0; rank < schedule.ranks.size(); ++rank)
        out += fmt::format("{:<{}}", fmt::format("Rank {}", rank), widths[rank] + 1);
    while (!out.empty() && out.back() == ' ')
        out.pop_back();
    out += '\n';
    for (std::size_t step = 0; step < steps; ++step) {
        std::string line = fmt::format("Step {:0{}}: ", step, digits);
        for (std::size_t rank = 0; rank < schedule.ranks.size(); ++rank) {
            const std::string empty;
            const std::string& cell = step < cells[rank].size() ? cells[rank][step] : empty;
            line += fmt::format("{:<{}}", cell, widths[rank] + 1);
        }
        while (!line.empty() && line.back() == ' ')
            line.pop_back();
        out += line + '\n';
    }
    return out;
}

}  // namespace pipelens
