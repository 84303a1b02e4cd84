// The gloo transport in a build whose LibTorch ships no gloo headers (some pip wheels compile
// gloo into libtorch_cpu but leave gloo/*.h out, and ProcessGroupGloo.hpp includes them): callers
// link the same way in every build and learn at run time, with a message saying what is missing
// and which transports remain, that it is absent. Compiled instead of gloo_transport.cpp, never
// beside it.
#include "engine/runtime/gloo_transport.hpp"

namespace pipelens::runtime {

bool gloo_transport_built() {
    return false;
}

std::unique_ptr<Transport> make_gloo_transport(const Rendezvous&) {
    throw TransportUnavailable(
        "pipelens was built without the gloo transport: the LibTorch it was built against has no "
        "gloo headers (gloo/algorithm.h); use --transport local or nccl, or build against a "
        "LibTorch that ships them (Debian's libtorch-dev with libgloo-dev does)");
}

}  // namespace pipelens::runtime
