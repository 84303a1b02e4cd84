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

// Whether rank 0's store could listen on `port`. It sets SO_REUSEADDR, as c10d's TCPStore does,
// so a port whose last connection (another test's run) is still in TIME_WAIT is free to it; a
// listener without it was refused such a port now and then when tests ran side by side.
bool can_listen_on(int port) {
    const int socket_fd = socket(AF_INET, SOCK_STREAM, 0);
    const int yes = 1;
    setsockopt(socket_fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
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
