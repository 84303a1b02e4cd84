// An input file's JSON read whole as a document (a flight-recorder dump, a pipelining
// chrometrace), bounded by the memory there is: a document takes tens of bytes per value, so a
// few kilobytes of gzip holding 20 million empty arrays took 1.5 GB, and under a memory limit the
// document's own destructor then ran out too and aborted the process. Its values are counted
// first without building anything, and a text that would not fit is refused by name.
//
// Invariants: nothing is allocated per value before the count passes; a refusal is
// TextFileError (too large, exit 3), a malformed text ImportError naming the file and the byte.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace pipelens::import {

nlohmann::json parse_json_document(std::string_view text, const std::string& path);

// nlohmann's message without its "[json.exception.parse_error.101] " prefix.
std::string json_error_text(const nlohmann::json::exception& error);

}  // namespace pipelens::import
