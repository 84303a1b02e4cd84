// Probing a TCP port on this machine the way rank 0's rendezvous store will bind it: on every
// IPv4 address, with SO_REUSEADDR as c10d's server sets it (a port whose last connection lingers
// in TIME_WAIT is free to it), closed again at once. The launcher picking a port for the ranks
// and rank 0 checking the port it was given read the same answer from this one probe.
#pragma once

namespace pipelens::run_record {

struct PortProbe {
    int bound_port = 0;  // the port bound (the kernel's pick for port 0); 0 when the bind failed
    int error = 0;       // errno of the failed bind: EADDRINUSE when something else holds it
};

// Throws std::runtime_error when no socket can be opened at all.
PortProbe probe_tcp_port(int port);

}  // namespace pipelens::run_record
