// The `nccl` transport: one process per GPU. NCCL has no tags and a send it cannot complete
// blocks its stream, so every direction between two ranks gets its own two-rank communicator
// and stream (unique ids exchanged through the c10d TCPStore), and messages for tags nobody has
// asked for yet are kept until someone does. CPU tensors (a CPU-only LibTorch) are staged
// through device buffers; CUDA tensors are copied on the GPU first, so the caller may reuse
// them as with the other transports.
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
