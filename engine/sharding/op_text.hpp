// An op call as typed on the command line, e.g.
//   aten.mm(f32[1024,512](S(1)), f32[512,256](S(0)))
//   aten.sum(f32[8,16](S(1)), [1], True)
// Tensor arguments are DTYPE[SHAPE](PLACEMENTS) on the given mesh; anything else is kept as a
// value, printed as upstream's OpSchema prints it (Python's str: "[2,8]" as "[2, 8]", a bool
// argument such as keepdim as True or False). An op name without an overload gets the
// registered one ("aten.mm" -> "aten.mm.default", "aten.mean(x)" -> "aten.mean.default").
#pragma once

#include <string_view>

#include "engine/sharding/op_schema.hpp"

namespace pipelens::sharding {

// std::invalid_argument naming the text for unbalanced brackets, a malformed tensor, or a bool
// argument that is none of True, False, true, false, 1, 0.
OpSchema parse_op_call(std::string_view text, const DeviceMesh& mesh);

}  // namespace pipelens::sharding
