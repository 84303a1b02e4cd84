// Which layers each stage runs. Split points follow upstream's SplitPoint: a layer named (or
// numbered) with BEGINNING starts a new stage at that layer, with END ends a stage after it.
// Without split points the layers are shared out evenly, earlier stages taking the remainder.
//
// Torch-free: it only sees layer names.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace pipelens::runtime {

struct SplitPoint {
    std::string layer;    // a layer name ("layers.3") or index ("3")
    bool at_end = false;  // SplitPoint.END: split after the layer, else before it
};

// "layers.3" -> BEGINNING; "layers.3:end" -> END; "layers.3:beginning" -> BEGINNING.
SplitPoint parse_split_point(const std::string& text);

struct StageLayers {
    int first = 0;  // index of the stage's first layer
    int count = 0;
};

class SplitError : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

// The layer count of the model a real run builds: `layers_given` when above 0, else two per
// pipeline rank. Per rank, never per stage: 1F1B and ZBVZeroBubble (v = 2) of the same pp must
// train the same model, or their step times and losses are not comparable. Throws SplitError
// when the default cannot fill `stage_count` stages, naming the flag that fixes it.
int model_layer_count(int layers_given, int rank_count, int stage_count);

// One entry per stage; every layer in exactly one stage, none empty. Throws SplitError naming
// the split point or the counts that do not fit.
std::vector<StageLayers> split_layers(const std::vector<std::string>& layer_names, int stage_count,
                                      const std::vector<SplitPoint>& points);

}  // namespace pipelens::runtime
