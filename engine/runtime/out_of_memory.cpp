// The allocator-failure test and the messages of out_of_memory.hpp.
#include "engine/runtime/out_of_memory.hpp"

#include <new>
#include <string>

#include <fmt/format.h>

namespace pipelens::runtime {

bool is_torch_out_of_memory(const c10::Error& error) {
    return dynamic_cast<const c10::OutOfMemoryError*>(&error) != nullptr ||
           error.msg().find("can't allocate memory") != std::string::npos;
}

std::optional<std::string> out_of_memory_detail(const std::exception_ptr& error) {
    try {
        std::rethrow_exception(error);
    } catch (const std::bad_alloc&) {
        return std::string();
    } catch (const c10::Error& torch_error) {
        if (is_torch_out_of_memory(torch_error))
            return torch_error.msg();
    } catch (...) {
    }
    return std::nullopt;
}

std::string error_text(const std::exception& error) {
    if (const auto* torch_error = dynamic_cast<const c10::Error*>(&error))
        return torch_error->what_without_backtrace();
    return error.what();
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
