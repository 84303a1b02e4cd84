// The Sharding panel: the run's sharding decisions, the chosen decision's mesh coloured by the
// shard each device holds, and its strategy table. The mesh's grid and the chosen strategy's
// tensors come from sharding_mesh.hpp; the panel keeps the choices and draws.
#pragma once

namespace pipelens::viewer {

struct ViewerState;

struct ShardingPanelState {
    int selected = 0;            // index into the run's decisions
    int tensor = -1;             // the tensor drawn on the mesh: -1 the output, else an input
    bool scroll_pending = true;  // scroll the strategy table to the chosen row
};

void draw_sharding_panel(ViewerState& state);

}  // namespace pipelens::viewer
