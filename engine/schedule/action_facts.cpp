// The cold path of action_facts.hpp: the error for asking a non-transfer for its peer.
#include "engine/schedule/action_facts.hpp"

#include <stdexcept>
#include <string>

namespace pipelens {

void throw_not_a_transfer(ActionKind kind) {
    throw std::invalid_argument(std::string(kind_text(kind)) +
                                " is not a SEND or RECV: only transfers have a peer stage");
}

}  // namespace pipelens
