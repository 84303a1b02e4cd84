// The nccl transport in a build without CUDA and NCCL: it exists so that callers link the same
// way in every build and learn at run time, with a message saying how to get it, that it is
// missing. Compiled instead of nccl_transport.cpp, never beside it.
#include "engine/runtime/nccl_transport.hpp"

namespace pipelens::runtime {

bool nccl_transport_built() {
    return false;
}

std::unique_ptr<Transport> make_nccl_transport(const Rendezvous&, int) {
    throw TransportUnavailable(
        "pipelens was built without the NCCL transport (configure with PIPELENS_CUDA=ON and "
        "CUDA + NCCL at /usr/local/cuda)");
}

}  // namespace pipelens::runtime
