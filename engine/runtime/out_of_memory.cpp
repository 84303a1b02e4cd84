// The allocator-failure test of out_of_memory.hpp.
#include "engine/runtime/out_of_memory.hpp"

#include <string>

namespace pipelens::runtime {

bool is_torch_out_of_memory(const c10::Error& error) {
    return dynamic_cast<const c10::OutOfMemoryError*>(&error) != nullptr ||
           error.msg().find("can't allocate memory") != std::string::npos;
}

}  // namespace pipelens::runtime
