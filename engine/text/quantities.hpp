// The engine's name for durations and sizes printed for people: the one definition is
// traces/text/quantities.hpp, below the engine so that the trace store (which depends on nothing of
// ours) uses it too. Including this header is the same as including that one.
#pragma once

#include "traces/text/quantities.hpp"
