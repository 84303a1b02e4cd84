// The port probe the launcher and rank 0 share: a port something listens on is in use, a port
// the kernel picks is bound and named, and nothing stays bound after the probe.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "engine/run_record/tcp_port.hpp"

namespace pipelens::run_record {
namespace {

// A listening socket on a port the kernel picked; closed on destruction.
class Listener {
  public:
    Listener() {
        socket_fd_ = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_ANY);
        socklen_t length = sizeof address;
        if (bind(socket_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
            listen(socket_fd_, 1) == 0 &&
            getsockname(socket_fd_, reinterpret_cast<sockaddr*>(&address), &length) == 0)
            port_ = ntohs(address.sin_port);
    }
    ~Listener() { close(socket_fd_); }
    Listener(const Listener&) = delete;
    Listener& operator=(const Listener&) = delete;
    int port() const { return port_; }

  private:
    int socket_fd_ = -1;
    int port_ = 0;
};

TEST(TcpPort, APortSomethingListensOnIsInUse) {
    const Listener listener;
    ASSERT_NE(listener.port(), 0);
    const PortProbe probe = probe_tcp_port(listener.port());
    EXPECT_EQ(probe.bound_port, 0);
    EXPECT_EQ(probe.error, EADDRINUSE);
}

TEST(TcpPort, TheKernelsPickIsNamedAndFreeAgainAfterTheProbe) {
    const PortProbe picked = probe_tcp_port(0);
    ASSERT_GT(picked.bound_port, 0);
    EXPECT_EQ(picked.error, 0);
    const PortProbe again = probe_tcp_port(picked.bound_port);
    EXPECT_EQ(again.bound_port, picked.bound_port);
    EXPECT_EQ(again.error, 0);
}

}  // namespace
}  // namespace pipelens::run_record
