// Picks the rendezvous port: see rendezvous_port.hpp for why it avoids the ephemeral range.
#include "app/cli/rendezvous_port.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <random>
#include <stdexcept>

namespace pipelens::cli {
namespace {

// Ports below this are left alone: many services listen there by convention.
constexpr int kLowestPick = 20000;
// Fewer free ports than this below the ephemeral range: pick with the kernel instead.
constexpr int kFewestPicks = 1024;
constexpr int kAttempts = 64;
// Linux's default lower bound, for a kernel whose setting cannot be read.
constexpr int kDefaultEphemeralLow = 32768;

int ephemeral_low() {
    std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
    int low = 0;
    int high = 0;
    if (range >> low >> high && low > 0 && low <= high)
        return low;
    return kDefaultEphemeralLow;
}

// Binds `port` (0: the kernel picks) on every address, as rank 0's store will, and returns the
// port bound, or 0 when it is taken. Nothing listens: the socket closes on return.
int bind_port(int port) {
    const int socket_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (socket_fd < 0)
        throw std::runtime_error("cannot open a socket to find a free port for the rendezvous");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    socklen_t length = sizeof address;
    int bound = 0;
    if (bind(socket_fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
        getsockname(socket_fd, reinterpret_cast<sockaddr*>(&address), &length) == 0)
        bound = ntohs(address.sin_port);
    close(socket_fd);
    return bound;
}

}  // namespace

int rendezvous_port() {
    const int below = ephemeral_low();
    if (below - kLowestPick >= kFewestPicks) {
        std::random_device seed;
        std::mt19937 generator(seed());
        std::uniform_int_distribution<int> pick(kLowestPick, below - 1);
        for (int attempt = 0; attempt < kAttempts; ++attempt)
            if (const int port = bind_port(pick(generator)); port != 0)
                return port;
    }
    if (const int port = bind_port(0); port != 0)
        return port;
    throw std::runtime_error("cannot find a free TCP port for the rendezvous");
}

}  // namespace pipelens::cli
