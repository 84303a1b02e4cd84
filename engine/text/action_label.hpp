// The engine's name for action labels (`0F1`, `(0F7;7B3)OVERLAP_F_B`): the one definition is
// traces/text/action_label.hpp, below the engine so that the trace store (which depends on nothing
// of ours) uses it too. Including this header is the same as including that one.
#pragma once

#include "traces/text/action_label.hpp"
