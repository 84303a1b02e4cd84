// Picks the rendezvous port: see rendezvous_port.hpp for why it avoids the ephemeral range.
#include "app/cli/rendezvous_port.hpp"

#include <fstream>
#include <random>
#include <stdexcept>

#include "engine/run_record/tcp_port.hpp"

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

// The port bound (the kernel's pick for 0), or 0 when it is taken.
int bind_port(int port) {
    return run_record::probe_tcp_port(port).bound_port;
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
