// The port probe (see tcp_port.hpp). Nothing listens: the socket is closed before returning.
#include "engine/run_record/tcp_port.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <stdexcept>

namespace pipelens::run_record {

PortProbe probe_tcp_port(int port) {
    const int socket_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (socket_fd < 0)
        throw std::runtime_error("cannot open a TCP socket to look for a free port");
    const int yes = 1;
    setsockopt(socket_fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    socklen_t length = sizeof address;
    PortProbe probe;
    if (bind(socket_fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
        probe.error = errno;
    else if (getsockname(socket_fd, reinterpret_cast<sockaddr*>(&address), &length) == 0)
        probe.bound_port = ntohs(address.sin_port);
    close(socket_fd);
    return probe;
}

}  // namespace pipelens::run_record
