// `pipelens summary --critical-path`: a run's critical path as text (shares by kind, then each
// action and transfer on it) and as JSON, for CI scripts and for reading beside the viewer.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "engine/analysis/critical_path.hpp"

namespace pipelens::cli {

std::string format_critical_path(const analysis::TimedSchedule& timed,
                                 const analysis::CriticalPath& path);

// {"end_ns", "shares": {"F": ns, ...}, "links": [{"rank", "action", "from_ns", "end_ns",
// "waited_ns"}]}
nlohmann::ordered_json critical_path_json(const analysis::TimedSchedule& timed,
                                          const analysis::CriticalPath& path);

}  // namespace pipelens::cli
