// The engine's name for text made safe for XML and SVG: the one definition is
// traces/text/xml_escape.hpp, below the engine so that the trace store (which depends on nothing of
// ours) uses it too. Including this header is the same as including that one.
#pragma once

#include "traces/text/xml_escape.hpp"
