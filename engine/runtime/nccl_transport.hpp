// The `nccl` transport: one process per GPU, point-to-point ncclSend/ncclRecv on a dedicated
// CUDA stream, the NCCL unique id exchanged through a c10d TCPStore. CPU tensors (a CPU-only
// LibTorch) are staged through device buffers; CUDA tensors are sent in place.
#pragma once

#include <memory>

#include "engine/runtime/transport.hpp"

namespace pipelens::runtime {

// True when this build includes the NCCL transport (PIPELENS_CUDA found CUDA and NCCL).
bool nccl_transport_built();

// Uses GPU `device` (usually the local rank). Throws TransportUnavailable when NCCL is not built
// in or no CUDA device is visible, with the CUDA error text.
std::unique_ptr<Transport> make_nccl_transport(const Rendezvous& rendezvous, int device);

}  // namespace pipelens::runtime
