// The Sharding panel: the run's sharding decisions, the chosen decision's mesh coloured by the
// block of the tensor each device holds (numbered by its place in the tensor, the indices it
// holds written under each device), and its strategy table. The mesh's grid and the chosen
// strategy's tensors come from sharding_mesh.hpp; the panel keeps the choices and draws.
#pragma once

#include <optional>
#include <string>

#include "app/viewer/sharding_mesh.hpp"

namespace pipelens::viewer {

struct ViewerState;

struct ShardingPanelState {
    int selected = 0;            // index into the run's decisions
    int tensor = -1;             // the tensor drawn on the mesh: -1 the output, else an input
    bool scroll_pending = true;  // scroll the strategy table to the chosen row
    bool columns_set = false;    // the list's column given its first width
    // The selected decision's tensor shapes (decision_shapes propagates the op: found once per
    // decision chosen, not every frame); `shapes_of` is the decision they are of, -1 none yet.
    int shapes_of = -1;
    DecisionShapes shapes;
};

void draw_sharding_panel(ViewerState& state);

// Why the panel cannot draw tensor `input` (-1 the output, else an input) of the decision it opens
// on: the run has no decisions, or the decision's chosen strategy has fewer inputs. None when it
// can.
std::optional<std::string> tensor_choice_refused(const ViewerState& state, int input);

}  // namespace pipelens::viewer
