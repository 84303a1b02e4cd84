// The `gloo` transport: one process per rank, tensors over TCP through LibTorch's c10d
// ProcessGroupGloo, bootstrapped through a c10d TCPStore at the rendezvous address. The store
// also carries the abort flag and the reports gathered on rank 0.
#pragma once

#include <memory>

#include "engine/runtime/transport.hpp"

namespace pipelens::runtime {

// False in a build whose LibTorch has no gloo headers: make_gloo_transport then always throws
// TransportUnavailable saying so.
bool gloo_transport_built();

std::unique_ptr<Transport> make_gloo_transport(const Rendezvous& rendezvous);

}  // namespace pipelens::runtime
