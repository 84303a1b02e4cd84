// Test helpers: a rank's actions as PyTorch texts, and a space-separated expectation split
// into the same form, so expected orders read like PyTorch's printed schedules.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "engine/schedule/schedule.hpp"

namespace pipelens::testing {

inline std::vector<std::string> texts(const Schedule& schedule, int rank) {
    std::vector<std::string> out;
    for (const Action& action : schedule.ranks[rank])
        out.push_back(schedule.text(action));
    return out;
}

inline std::vector<std::string> split(const std::string& line) {
    std::vector<std::string> out;
    std::istringstream stream(line);
    for (std::string word; stream >> word;)
        out.push_back(word);
    return out;
}

}  // namespace pipelens::testing
