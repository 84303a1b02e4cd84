// A sweep: an experiment and the axes it varies (schedule kind, pp, v, m, any cost or network
// field), each configuration one point of their product. Axes come from `--sweep KEY=VALUES`
// flags or an experiment file's `[sweep]` table; a configuration is the experiment with one
// value of every axis applied as if its file had said so (experiment_toml.hpp), so a swept
// field is checked exactly as a written one.
//
// Invariants: keys are unique and name experiment fields (checked when the grid is made, by
// applying every value alone, so a typo stops before any simulating); configurations are
// numbered in mixed radix with the last axis varying fastest, so a number names the same
// configuration in every process and every shard; a shard I/N holds the configurations whose
// number is I-1 modulo N (dealt round-robin, so neighbours of different cost spread evenly).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "engine/experiment/experiment.hpp"
#include "engine/experiment/experiment_toml.hpp"

namespace pipelens {

struct SweepAxis {
    std::string key;                  // dotted experiment key: "schedule.pp", "costs.f"
    std::vector<std::string> values;  // TOML value text: "4", "\"1F1B\"", "[\"1ms\", \"2ms\"]"
    std::vector<std::string> labels;  // as tables show them: "4", "1F1B", "[1ms, 2ms]"
    std::string where;                // "--sweep pp=2,4,8" or "file:line:column: sweep.pp"
};

// "KEY=V1,V2,...": a KEY without a table is schedule.KEY for kind (or schedule), pp, v, m, file,
// max_activations and defer_recv, network.rendezvous for rendezvous, and costs.KEY otherwise; a
// value in brackets is a list (one value per stage): "f=1ms,[1ms,2ms,2ms,1ms]". Numbers and
// true/false stay as they are, other words are strings. Throws ExperimentError naming the flag.
SweepAxis parse_sweep_flag(std::string_view text);
SweepAxis sweep_axis_from_file(const SweepAxisText& axis);

// The value's label: a TOML string without its quotes, anything else as written.
std::string sweep_value_label(std::string_view toml_value);

// For each axis, the index of the value configuration `index` takes (the last axis fastest).
std::vector<std::size_t> sweep_value_indices(const std::vector<SweepAxis>& axes, std::size_t index);

// Which part of a grid one process takes: "I/N" with 1 <= I <= N.
struct SweepShard {
    std::size_t index = 1;
    std::size_t count = 1;
    bool holds(std::size_t configuration) const { return configuration % count == index - 1; }
    std::size_t size_of(std::size_t grid_size) const;  // how many configurations it holds
};
SweepShard parse_sweep_shard(std::string_view text);  // ExperimentError naming --shard

class SweepGrid {
  public:
    // Throws ExperimentError for a repeated key, an axis without values, a value its field does
    // not take (naming the axis's `where`) or a grid of more than 2^62 configurations.
    SweepGrid(Experiment base, std::vector<SweepAxis> axes);

    std::size_t size() const { return size_; }
    const Experiment& base() const { return base_; }
    const std::vector<SweepAxis>& axes() const { return axes_; }

    // For each axis, the index of the value configuration `index` takes.
    std::vector<std::size_t> value_indices(std::size_t index) const;
    // The experiment of configuration `index`, not yet validated (an impossible combination,
    // such as 1F1B with v=2, is for the caller to report).
    Experiment configuration(std::size_t index) const;

  private:
    Experiment base_;
    std::vector<SweepAxis> axes_;
    std::size_t size_ = 1;
};

}  // namespace pipelens
