// The picture of a sweep: on the left every simulated configuration's step time against its peak
// memory, coloured by schedule, the Pareto front joined and ringed; on the right, per schedule,
// the bubble ratio against the microbatch count m (each configuration a faint dot, the line
// through the lowest ratio the schedule reaches at each m).
#pragma once

#include <string>
#include <vector>

#include "app/cli/chart_scene.hpp"
#include "sim/sweep.hpp"

namespace pipelens::cli {

// `title` heads the picture. Points that were not simulated are left out.
ChartScene sweep_chart(const std::vector<sim::SweepPoint>& points, const std::string& title,
                       sim::SweepRanking ranking = sim::SweepRanking::per_global_batch);

}  // namespace pipelens::cli
