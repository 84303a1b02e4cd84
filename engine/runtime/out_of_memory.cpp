// The allocator-failure test and message of out_of_memory.hpp.
#include "engine/runtime/out_of_memory.hpp"

#include <string>

#include <fmt/format.h>

namespace pipelens::runtime {

bool is_torch_out_of_memory(const c10::Error& error) {
    return dynamic_cast<const c10::OutOfMemoryError*>(&error) != nullptr ||
           error.msg().find("can't allocate memory") != std::string::npos;
}

std::string out_of_memory_message(const std::string& who, std::string detail) {
    // The CPU allocator's enforcement starts with where and what it enforced: only its sentence.
    if (detail.starts_with("[enforce fail"))
        if (const std::size_t sentence = detail.find(". ", detail.find(']'));
            sentence != std::string::npos)
            detail.erase(0, sentence + 2);
    return fmt::format(
        "{} ran out of memory{}: the model, its activations and every recorded action are held "
        "until the run is written; lower --layers, --hidden, --batch, --m or --steps",
        who, detail.empty() ? "" : " (" + detail + ")");
}

}  // namespace pipelens::runtime
