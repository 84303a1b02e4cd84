// The launcher's rendezvous port: below the kernel's ephemeral range, so that no connection or
// port-0 listener of another run can take it between the pick and rank 0's bind, and free.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <set>

#include "app/cli/rendezvous_port.hpp"

namespace pipelens::cli {
namespace {

int ephemeral_low() {
    std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
    int low = 0;
    range >> low;
    return low;
}

bool can_listen_on(int port) {
    const int socket_fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    const bool bound =
        bind(socket_fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
        listen(socket_fd, 1) == 0;
    close(socket_fd);
    return bound;
}

TEST(RendezvousPort, IsBelowTheEphemeralRangeAndFree) {
    const int low = ephemeral_low();
    if (low < 20000 + 1024)
        GTEST_SKIP() << "ephemeral range starts at " << low << ": the kernel picks instead";
    for (int round = 0; round < 20; ++round) {
        const int port = rendezvous_port();
        EXPECT_GE(port, 20000);
        EXPECT_LT(port, low);
        EXPECT_TRUE(can_listen_on(port)) << port;
    }
}

// Two launchers started together must not meet on one port: the pick is random, not a
// function of the time or the process.
TEST(RendezvousPort, SuccessivePicksDiffer) {
    std::set<int> ports;
    for (int round = 0; round < 16; ++round)
        ports.insert(rendezvous_port());
    EXPECT_GE(ports.size(), 12u);
}

}  // namespace
}  // namespace pipelens::cli
