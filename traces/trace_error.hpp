// The one error type of traces/: a message a user can act on, naming the file and what is wrong
// with it in one line ("trace.db: not a pipelens trace (no meta table)").
#pragma once

#include <stdexcept>
#include <string>

namespace pipelens::traces {

class TraceError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

}  // namespace pipelens::traces
