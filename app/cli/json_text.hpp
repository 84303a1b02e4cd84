// JSON as the CLI prints and writes it.
//
// Invariant: the text is always valid UTF-8, so every JSON reader takes it: a string holding
// bytes that are not UTF-8 (a file name from a Latin-1 directory, a recorded label) has them
// replaced by U+FFFD, where nlohmann's plain dump would throw after the command's work is done.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace pipelens::cli {

// `indent` as nlohmann::json::dump's: -1 for one line.
template <typename Json>
std::string json_text(const Json& json, int indent = -1) {
    return json.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace pipelens::cli
