// The offset estimate: intersect the bounds every exchange puts on the offset (see the header).
#include "engine/run_record/clock_offset.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <limits>

#include <fmt/format.h>

namespace pipelens::run_record {
namespace {

struct Bounds {
    std::int64_t lowest = std::numeric_limits<std::int64_t>::min();
    std::int64_t highest = std::numeric_limits<std::int64_t>::max();
};

Bounds bounds_of(const ClockExchange& exchange, std::size_t index) {
    if (exchange.answer_received_ns < exchange.asked_ns)
        throw ClockExchangeError(fmt::format(
            "clock exchange {}: the answer came back ({} ns) before the question was asked ({} ns)",
            index, exchange.answer_received_ns, exchange.asked_ns));
    if (exchange.answered_ns < exchange.question_received_ns)
        throw ClockExchangeError(
            fmt::format("clock exchange {}: answered ({} ns) before the question arrived ({} ns)",
                        index, exchange.answered_ns, exchange.question_received_ns));
    return {exchange.answered_ns - exchange.answer_received_ns,
            exchange.question_received_ns - exchange.asked_ns};
}

ClockOffset middle_of(const Bounds& bounds) {
    // Rounded outwards, so the stated interval always contains the bounds.
    const std::int64_t width = bounds.highest - bounds.lowest;
    return {bounds.lowest + width / 2, width - width / 2};
}

}  // namespace

std::string host_clock_id() {
    std::ifstream boot("/proc/sys/kernel/random/boot_id");
    std::string id;
    if (boot && std::getline(boot, id) && !id.empty())
        return "boot " + id;
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    return std::string("host ") + host;
}

ClockOffset estimate_clock_offset(std::span<const ClockExchange> exchanges) {
    if (exchanges.empty())
        throw ClockExchangeError("no clock exchanges to estimate an offset from");
    Bounds common;
    Bounds shortest;
    std::int64_t shortest_width = std::numeric_limits<std::int64_t>::max();
    for (std::size_t index = 0; index < exchanges.size(); ++index) {
        const Bounds bounds = bounds_of(exchanges[index], index);
        common.lowest = std::max(common.lowest, bounds.lowest);
        common.highest = std::min(common.highest, bounds.highest);
        if (bounds.highest - bounds.lowest < shortest_width) {
            shortest_width = bounds.highest - bounds.lowest;
            shortest = bounds;
        }
    }
    return middle_of(common.lowest <= common.highest ? common : shortest);
}

}  // namespace pipelens::run_record
