// A run's timeline as an SVG picture, for CI artifacts, READMEs and anyone without the desktop
// viewer: one compute lane and one communication lane per rank, actions coloured by kind and
// labelled with their PyTorch text where wide enough, idle gaps on the compute lane hatched
// (the bubbles), send -> recv arrows, a time ruler, and per-rank busy/bubble/peak memory.
//
// Invariants: the picture's size does not grow with the run: actions narrower than a pixel are
// merged into one block per lane, and arrows are drawn only when few enough to read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "traces/trace_reader.hpp"

namespace pipelens::traces {

struct SvgTimelineOptions {
    int width = 1600;  // pixels
    int max_arrows = 600;
    // The part of the run drawn (the viewer's current view); the whole step when unset. Shapes
    // beyond it are cut at its edges.
    std::optional<std::int64_t> from_ns;
    std::optional<std::int64_t> to_ns;
};

std::string svg_timeline(const TraceReader& reader, std::int64_t run_id,
                         const SvgTimelineOptions& options = {});

}  // namespace pipelens::traces
