// One rank of a multi-process transport test: transport_test.cpp starts one of these per rank,
// each a real process with its own gloo transport, and checks what they print on stdout.
//
//   pipelens_transport_peer RANK WORLD_SIZE PORT SCENARIO [COUNT [NOTICES]]
//
// Scenarios: ping_pong, out_of_order, timeout (COUNT: ms), unreceived, abort, peer_exits
// (COUNT: the rank that dies), barrier, barrier_timeout, gather, mismatch, latency (COUNT: round
// trips), gather_ended, barrier_rank_ended, ended_before_join, ended_while_connecting,
// never_comes. NOTICES is a directory of launcher notices (rank_files.hpp) the ranks read as
// Rendezvous::ended; a scenario's "dying" rank writes its own notice there, as the launcher
// would once it saw the process end. Each prints plain lines ("small 0 Float [2, 3] 0 0.5 ...",
// "error TransportTimeout: ...", "abort_at_ms 1234" on the machine-wide steady clock) and then
// "done" once its transport is destroyed, so a test compares exact text and times across
// processes (and sees that destruction did not hang). Errors a scenario does not expect print as
// "error <kind>: <message>" and the process still exits 0; only bad arguments give 2.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/run_record/rank_files.hpp"
#include "engine/runtime/gloo_transport.hpp"
#include "engine/runtime/memory_account.hpp"
#include "engine/runtime/rendezvous_store.hpp"

namespace pipelens::runtime {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kTimeout{5'000};

void print(const std::string& line) {
    std::cout << line << std::endl;  // flushed: the test reads lines as they come
}

long long steady_ms() {
    return std::chrono::duration_cast<milliseconds>(Clock::now().time_since_epoch()).count();
}

// Rank 2 dies 300 ms from now, as SIGKILL would end it, and notes so as its launcher would.
[[noreturn]] void die_noted(const std::string& notices) {
    std::this_thread::sleep_for(milliseconds(300));
    print(fmt::format("exit_at_ms {}", steady_ms()));
    run_record::note_rank_ended(notices, 2, "killed by signal 9 (Killed)");
    std::_Exit(0);
}

// "Float [2, 3] 0 0.5 1 1.5 2 2.5": dtype, shape, then the values in row-major order; tensors of
// more than 16 elements show their sum, first and last value instead.
std::string describe(const torch::Tensor& tensor) {
    const torch::Tensor values = tensor.contiguous().to(torch::kDouble).flatten();
    std::string text = fmt::format("{} [{}]", c10::toString(tensor.scalar_type()),
                                   fmt::join(tensor.sizes(), ", "));
    if (values.numel() > 16)
        return text + fmt::format(" sum {} first {} last {}", values.sum().item<double>(),
                                  values[0].item<double>(), values[-1].item<double>());
    for (std::int64_t index = 0; index < values.numel(); ++index)
        text += fmt::format(" {}", values[index].item<double>());
    return text;
}

void print_received(const std::string& label, const TensorList& tensors) {
    for (std::size_t index = 0; index < tensors.size(); ++index)
        print(fmt::format("{} {} {}", label, index, describe(tensors[index])));
}

// Tensors of several shapes and dtypes whose values are exact in their dtype; `large` adds one
// of 80 KB, which makes the message too big to travel inline with its header.
TensorList ping_tensors(bool large) {
    TensorList tensors{
        torch::arange(6, torch::kFloat32).mul(0.5).reshape({2, 3}),
        torch::tensor({std::int64_t{-3}, std::int64_t{0}, std::int64_t{7}, std::int64_t{1} << 40}),
        torch::tensor(3.141592653589793, torch::kFloat64).reshape({}),
        torch::tensor({true, false, true}),
        torch::tensor({1.5, -2.0, 0.25, 8.0}).to(torch::kBFloat16).reshape({2, 2}),
        torch::empty({0}, torch::kFloat32),
        torch::arange(250, 255, torch::kInt64).to(torch::kUInt8),
    };
    if (large)
        tensors.push_back(torch::arange(20'000, torch::kFloat32).reshape({200, 100}));
    return tensors;
}

// Buffers for ping_tensors(); the first is not contiguous (a transposed view).
TensorList ping_buffers(bool large) {
    TensorList buffers;
    for (const torch::Tensor& tensor : ping_tensors(large))
        buffers.push_back(torch::full_like(tensor, 0));
    buffers[0] = torch::zeros({3, 2}, torch::kFloat32).t();
    return buffers;
}

// Rank 0 sends a small message (tag 1) and a large one (tag 3); rank 1 echoes them back (tags
// 2 and 4). Both print what they hold at the end.
void ping_pong(Transport& transport) {
    constexpr int kRounds = 3;
    TensorList small = ping_buffers(false);
    TensorList large = ping_buffers(true);
    for (int round = 0; round < kRounds; ++round) {
        if (transport.rank() == 0) {
            transport.send(1, 1, ping_tensors(false));
            transport.send(1, 3, ping_tensors(true));
            transport.recv(1, 2, small, kTimeout);
            transport.recv(1, 4, large, kTimeout);
        } else {
            transport.recv(0, 1, small, kTimeout);
            transport.recv(0, 3, large, kTimeout);
            transport.send(0, 2, small);
            transport.send(0, 4, large);
        }
    }
    transport.finish_sends(kTimeout);
    print_received("small", small);
    print_received("large", large);
}

// Rank 0 posts tag 2 before tag 1 and tags 131..100 in descending order; rank 1 receives them
// in ascending order.
void out_of_order(Transport& transport) {
    constexpr int kFirstTag = 100;
    constexpr int kLastTag = 131;
    if (transport.rank() == 0) {
        transport.send(1, 2, {torch::full({3}, 2.0f)});
        transport.send(1, 1, {torch::full({2}, std::int64_t{1})});
        for (int tag = kLastTag; tag >= kFirstTag; --tag)
            transport.send(1, tag,
                           {torch::full({1}, tag, torch::kInt32), torch::full({2}, tag * 0.25)});
        transport.finish_sends(kTimeout);
        print("sends finished");
        return;
    }
    TensorList first{torch::zeros({2}, torch::kInt64)};
    transport.recv(0, 1, first, kTimeout);
    print(fmt::format("tag 1 {}", describe(first[0])));
    TensorList second{torch::zeros({3})};
    transport.recv(0, 2, second, kTimeout);
    print(fmt::format("tag 2 {}", describe(second[0])));
    for (int tag = kFirstTag; tag <= kLastTag; ++tag) {
        TensorList buffers{torch::zeros({1}, torch::kInt32), torch::zeros({2})};
        transport.recv(0, tag, buffers, kTimeout);
        print(fmt::format("tag {} {} | {}", tag, describe(buffers[0]), describe(buffers[1])));
    }
}

// Rank 1 waits for a tag that rank 0 never sends; rank 0 stays up until rank 1 has reported.
void receive_timeout(Transport& transport, milliseconds timeout) {
    if (transport.rank() == 1) {
        TensorList buffers{torch::zeros({4})};
        const auto started = Clock::now();
        try {
            transport.recv(0, 7, buffers, timeout);
            print("received unexpectedly");
        } catch (const TransportTimeout& error) {
            print(fmt::format("error TransportTimeout: {}", error.what()));
        }
        print(
            fmt::format("elapsed_ms {}",
                        std::chrono::duration_cast<milliseconds>(Clock::now() - started).count()));
    }
    transport.gather_to_rank_zero("", kTimeout + timeout);
}

// Rank 0 sends a message that rank 1 never receives and waits for its sends to leave.
void unreceived(Transport& transport) {
    if (transport.rank() == 1) {
        std::this_thread::sleep_for(milliseconds(3000));
        return;
    }
    transport.send(1, 9, {torch::ones({4})});
    const auto started = Clock::now();
    try {
        transport.finish_sends(milliseconds(500));
        print("finished unexpectedly");
    } catch (const TransportTimeout& error) {
        print(fmt::format("error TransportTimeout: {}", error.what()));
    }
    print(fmt::format("elapsed_ms {}",
                      std::chrono::duration_cast<milliseconds>(Clock::now() - started).count()));
}

// Rank 1 posts two receives ahead (post_recv) and asks for their data only 3 s later: rank 0's
// small message must be delivered into the posted buffer before that (its finish_sends returns
// at once), and a large one, whose header alone was posted, arrives whole when received.
void posted_ahead(Transport& transport) {
    if (transport.rank() == 0) {
        transport.send(1, 9, {torch::arange(4, torch::kFloat32)});
        try {
            transport.finish_sends(milliseconds(2000));
            print(fmt::format("small_delivered_at_ms {}", steady_ms()));
        } catch (const TransportTimeout& error) {
            print(fmt::format("error TransportTimeout: {}", error.what()));
        }
        transport.send(1, 10, {torch::arange(20000, torch::kFloat32).reshape({200, 100})});
        transport.finish_sends(kTimeout);
        print("sends finished");
        return;
    }
    transport.post_recv(0, 9, {}, {});
    transport.post_recv(0, 10, {}, {});
    std::this_thread::sleep_for(milliseconds(3000));
    print(fmt::format("receive_at_ms {}", steady_ms()));
    TensorList small{torch::zeros({4})};
    transport.recv(0, 9, small, kTimeout);
    print(fmt::format("small {}", describe(small[0])));
    TensorList large{torch::zeros({200, 100})};
    transport.recv(0, 10, large, kTimeout);
    print(fmt::format("large {}", describe(large[0])));
}

// Rank 1 posts, under its own memory account, a receive for an expected message of 8 KiB (one
// that travels inline) and then one of unknown size, printing the bytes each posting holds; rank
// 0 then sends both so that nothing stays posted.
void posted_bytes(Transport& transport) {
    const ExpectedMessage eight_kib{{8192}, true};
    if (transport.rank() == 0) {
        transport.send_expected(1, 20, {torch::zeros({2048})}, eight_kib);
        transport.send(1, 21, {torch::zeros({4})});
        transport.finish_sends(kTimeout);
        return;
    }
    const MemoryAccountHandle account;
    {
        const ScopedMemoryAccount charged(account.get());
        transport.post_recv(0, 20, eight_kib, {});
        print(fmt::format("posted_expected_bytes {}", account->current_bytes()));
        const std::int64_t before = account->current_bytes();
        transport.post_recv(0, 21, {}, {});
        print(fmt::format("posted_unknown_bytes {}", account->current_bytes() - before));
    }
    TensorList expected{torch::zeros({2048})};
    transport.recv(0, 20, expected, kTimeout);
    TensorList small{torch::zeros({4})};
    transport.recv(0, 21, small, kTimeout);
    print("received");
}

// A receive from rank 0 on `tag` that must be refused: prints the error it raised.
void print_refused_receive(Transport& transport, int tag, TensorList& buffers) {
    try {
        transport.recv(0, tag, buffers, kTimeout);
        print("received unexpectedly");
    } catch (const std::runtime_error& error) {
        print(fmt::format("error runtime_error: {}", error.what()));
    }
}

// Rank 1 expects 4 floats on tags 11 and 12 and posts landing buffers for just that; rank 0
// sends what was expected on 11, and on 12 a message 250 times larger than expected (past the
// landing buffer, within gloo's largest inline size): it must come as a clean mismatch on rank
// 1, never as gloo overrunning the buffer.
void expected_sizes(Transport& transport) {
    const ExpectedMessage four_floats{{16}, true};
    if (transport.rank() == 0) {
        transport.send_expected(1, 11, {torch::arange(4, torch::kFloat32)}, four_floats);
        transport.send_expected(1, 12, {torch::zeros({1000})}, four_floats);
        transport.gather_to_rank_zero("", kTimeout);
        return;
    }
    transport.post_recv(0, 11, four_floats, {});
    transport.post_recv(0, 12, four_floats, {});
    TensorList expected{torch::zeros({4})};
    transport.recv(0, 11, expected, kTimeout);
    print(fmt::format("expected {}", describe(expected[0])));
    TensorList larger{torch::zeros({4})};
    print_refused_receive(transport, 12, larger);
    transport.gather_to_rank_zero("", kTimeout);
}

// Rank 1 expects a large message (80,000 bytes, past the inline size) on tags 13, 14 and 15 and
// posts its own buffers for them ahead; it asks for the data only 3 s later. Rank 0 sends the
// expected message on 13, which must be delivered into the posted buffer before that (its
// finish_sends returns at once: no round trip after the receiver asks); on 14 a message twice
// as large and on 15 one of half the size: each refused on its header, never written into a
// buffer posted for another size.
void posted_large_ahead(Transport& transport) {
    const ExpectedMessage large{{80'000}, true};
    if (transport.rank() == 0) {
        transport.send_expected(1, 13, {torch::arange(20'000, torch::kFloat32).reshape({200, 100})},
                                large);
        try {
            transport.finish_sends(milliseconds(2000));
            print(fmt::format("large_delivered_at_ms {}", steady_ms()));
        } catch (const TransportTimeout& error) {
            print(fmt::format("error TransportTimeout: {}", error.what()));
        }
        transport.send_expected(1, 14, {torch::ones({400, 100})}, large);
        transport.send_expected(1, 15, {torch::ones({100, 100})}, large);
        transport.send(1, 16, {torch::arange(20'000, torch::kFloat32).reshape({200, 100})});
        transport.send(1, 17, {torch::ones({4})});
        transport.gather_to_rank_zero("", kTimeout);
        return;
    }
    TensorList expected{torch::zeros({200, 100})};
    TensorList larger{torch::zeros({200, 100})};
    TensorList smaller{torch::zeros({200, 100})};
    transport.post_recv(0, 13, large, expected);
    transport.post_recv(0, 14, large, larger);
    transport.post_recv(0, 15, large, smaller);
    TensorList undescribed{torch::zeros({200, 100})};
    transport.post_recv(0, 16, {}, undescribed);  // size unknown: only its header is posted
    std::this_thread::sleep_for(milliseconds(3000));
    print(fmt::format("receive_at_ms {}", steady_ms()));
    // How long the data takes once asked for, posted ahead against not: one round trip.
    const auto timed_recv = [&](int tag, TensorList& buffers) {
        const auto asked = Clock::now();
        transport.recv(0, tag, buffers, kTimeout);
        return std::chrono::duration<double, std::micro>(Clock::now() - asked).count();
    };
    TensorList warm_up{torch::zeros({4})};
    timed_recv(17, warm_up);  // a process's first receive pays for more than its data
    print(fmt::format("unposted_wait_us {:.1f}", timed_recv(16, undescribed)));
    print(fmt::format("posted_wait_us {:.1f}", timed_recv(13, expected)));
    print(fmt::format("large {}", describe(expected[0])));
    print(fmt::format("undescribed {}", describe(undescribed[0])));
    print_refused_receive(transport, 14, larger);
    print(fmt::format("larger_buffer {}", describe(larger[0])));
    print_refused_receive(transport, 15, smaller);
    print(fmt::format("smaller_buffer {}", describe(smaller[0])));
    transport.gather_to_rank_zero("", kTimeout);
}

// Rank 0 aborts while rank 1 is blocked in a receive, then stays up long enough for rank 1 to
// see the store.
void abort_while_receiving(Transport& transport) {
    const std::string reason = "rank 0: Stage 0 forward failed (injected by the test)";
    if (transport.rank() == 0) {
        std::this_thread::sleep_for(milliseconds(300));
        print(fmt::format("abort_at_ms {}", steady_ms()));
        transport.abort(reason);
        transport.abort("rank 0: a second reason that must not replace the first");
        std::this_thread::sleep_for(milliseconds(4000));
        return;
    }
    TensorList buffers{torch::zeros({4})};
    try {
        transport.recv(0, 3, buffers, milliseconds(10'000));
        print("received unexpectedly");
    } catch (const TransportAborted& error) {
        print(fmt::format("ended_at_ms {}", steady_ms()));
        print(fmt::format("error TransportAborted: {}", error.what()));
    }
    try {
        transport.check_aborted();
        print("check_aborted did not throw");
    } catch (const TransportAborted& error) {
        print(fmt::format("check_aborted: {}", error.what()));
    }
}

// Rank `exiting` dies (no destructors, no abort) while rank 1 waits for its data; any other
// rank keeps the store up meanwhile.
void peer_exits(Transport& transport, int exiting) {
    if (transport.rank() == exiting) {
        std::this_thread::sleep_for(milliseconds(300));
        print(fmt::format("exit_at_ms {}", steady_ms()));
        std::_Exit(0);
    }
    if (transport.rank() != 1) {
        std::this_thread::sleep_for(milliseconds(4000));
        return;
    }
    TensorList buffers{torch::zeros({4})};
    try {
        transport.recv(exiting, 3, buffers, milliseconds(10'000));
        print("received unexpectedly");
    } catch (const TransportAborted& error) {
        print(fmt::format("ended_at_ms {}", steady_ms()));
        print(fmt::format("error TransportAborted: {}", error.what()));
    } catch (const std::runtime_error& error) {
        print(fmt::format("ended_at_ms {}", steady_ms()));
        print(fmt::format("error runtime_error: {}", error.what()));
    }
}

// Rank r arrives at each of two barriers r * 200 ms after rank 0; all leave together.
void barriers(Transport& transport) {
    for (int round = 1; round <= 2; ++round) {
        std::this_thread::sleep_for(milliseconds(200 * transport.rank()));
        print(fmt::format("arrive_{}_at_ms {}", round, steady_ms()));
        transport.barrier(kTimeout);
        print(fmt::format("leave_{}_at_ms {}", round, steady_ms()));
    }
}

// Rank 1 never reaches the barrier rank 0 waits at.
void barrier_timeout(Transport& transport) {
    if (transport.rank() == 1) {
        std::this_thread::sleep_for(milliseconds(1500));
        return;
    }
    try {
        transport.barrier(milliseconds(500));
        print("passed unexpectedly");
    } catch (const TransportTimeout& error) {
        print(fmt::format("error TransportTimeout: {}", error.what()));
    }
}

// Rank 2 dies before the barrier the others wait at (with a long timeout), and its notice says
// so: they stop at once, naming it.
void barrier_rank_ended(Transport& transport, const std::string& notices) {
    if (transport.rank() == 2)
        die_noted(notices);
    try {
        transport.barrier(milliseconds(20'000));
        print("passed unexpectedly");
    } catch (const TransportAborted& error) {
        print(fmt::format("ended_at_ms {}", steady_ms()));
        print(fmt::format("error TransportAborted: {}", error.what()));
    }
}

void gather(Transport& transport) {
    for (int step = 1; step <= 2; ++step) {
        const std::string payload = fmt::format("step {} from rank {}: {{\"loss\": {}}}", step,
                                                transport.rank(), 0.5 * transport.rank());
        const std::vector<std::string> reports = transport.gather_to_rank_zero(payload, kTimeout);
        for (std::size_t index = 0; index < reports.size(); ++index)
            print(fmt::format("report {} {}", index, reports[index]));
        print(fmt::format("step {} reports {}", step, reports.size()));
    }
}

// Rank 2 never reports, and rank 0 is told it ended (a launcher's notice), while rank 1 reports
// and is noted as ended as well: rank 0 keeps rank 1's report, gives rank 2 an empty one, and
// says whether it returned before its (long) timeout, which it must not wait out.
void gather_ended(Transport& transport, const std::string& notices) {
    constexpr milliseconds kLongTimeout{20'000};
    if (transport.rank() == 1)
        transport.gather_to_rank_zero("rank 1's report", kLongTimeout);
    transport.barrier(kTimeout);  // rank 1's report is published before rank 0 gathers
    if (transport.rank() != 0) {
        run_record::note_rank_ended(notices, transport.rank(), "exited with code 1");
        return;
    }
    const auto started = Clock::now();
    const std::vector<std::string> reports =
        transport.gather_to_rank_zero("rank 0's report", kLongTimeout);
    for (std::size_t index = 0; index < reports.size(); ++index)
        print(fmt::format("report {} '{}'", index, reports[index]));
    print(Clock::now() - started < kLongTimeout ? "returned before its timeout"
                                                : "waited out its timeout");
}

// Rank 1 expects 3 floats where rank 0 sends 4.
void mismatch(Transport& transport) {
    if (transport.rank() == 0) {
        transport.send(1, 5, {torch::zeros({4})});
        transport.gather_to_rank_zero("", kTimeout);
        return;
    }
    TensorList buffers{torch::zeros({3})};
    print_refused_receive(transport, 5, buffers);
    transport.gather_to_rank_zero("", kTimeout);
}

// `count` round trips of one small tensor; rank 0 prints the mean round trip.
void latency(Transport& transport, int count) {
    TensorList message{torch::ones({16})};
    TensorList buffers{torch::zeros({16})};
    const int peer = 1 - transport.rank();
    const auto started = Clock::now();
    for (int round = 0; round < count; ++round) {
        if (transport.rank() == 0) {
            transport.send(peer, 1, message);
            transport.recv(peer, 2, buffers, kTimeout);
        } else {
            transport.recv(peer, 1, buffers, kTimeout);
            transport.send(peer, 2, buffers);
        }
    }
    transport.finish_sends(kTimeout);
    const auto elapsed = std::chrono::duration<double, std::micro>(Clock::now() - started);
    if (transport.rank() == 0)
        print(fmt::format("round_trip_us {:.1f}", elapsed.count() / count));
}

void run(const std::string& scenario, Transport& transport, int count, const std::string& notices) {
    if (scenario == "ping_pong")
        ping_pong(transport);
    else if (scenario == "out_of_order")
        out_of_order(transport);
    else if (scenario == "timeout")
        receive_timeout(transport, milliseconds(count));
    else if (scenario == "unreceived")
        unreceived(transport);
    else if (scenario == "posted_ahead")
        posted_ahead(transport);
    else if (scenario == "expected_sizes")
        expected_sizes(transport);
    else if (scenario == "posted_bytes")
        posted_bytes(transport);
    else if (scenario == "posted_large_ahead")
        posted_large_ahead(transport);
    else if (scenario == "abort")
        abort_while_receiving(transport);
    else if (scenario == "peer_exits")
        peer_exits(transport, count);
    else if (scenario == "barrier")
        barriers(transport);
    else if (scenario == "barrier_timeout")
        barrier_timeout(transport);
    else if (scenario == "gather")
        gather(transport);
    else if (scenario == "gather_ended")
        gather_ended(transport, notices);
    else if (scenario == "barrier_rank_ended")
        barrier_rank_ended(transport, notices);
    else if (scenario == "mismatch")
        mismatch(transport);
    else if (scenario == "latency")
        latency(transport, count);
    else
        print(fmt::format("error unknown scenario {}", scenario));
}

}  // namespace
}  // namespace pipelens::runtime

int main(int argc, char** argv) {
    using namespace pipelens::runtime;
    if (argc < 5) {
        std::cerr << "usage: pipelens_transport_peer RANK WORLD_SIZE PORT SCENARIO [COUNT]\n";
        return 2;
    }
    Rendezvous rendezvous;
    rendezvous.rank = std::stoi(argv[1]);
    rendezvous.world_size = std::stoi(argv[2]);
    rendezvous.master_port = std::stoi(argv[3]);
    rendezvous.timeout = kTimeout;
    const std::string scenario = argv[4];
    const int count = argc > 5 ? std::stoi(argv[5]) : 0;
    const std::string notices = argc > 6 ? argv[6] : "";
    if (!notices.empty())
        rendezvous.ended = [notices](int rank) {
            return pipelens::run_record::rank_ended(notices, rank);
        };
    // Rank 2 joins the rendezvous, then dies before gloo connects the ranks: the others' connect
    // must not wait for it.
    if (scenario == "ended_while_connecting" && rendezvous.rank == 2) {
        const RendezvousStore joined(rendezvous, "gloo transport");
        // Once all three have joined, the others are past the meeting: checking world sizes
        // (a few round trips), then in gloo's connect, which waits for this rank.
        const auto store = joined.store();
        for (int look = 0; look < 500 && store->add("pipelens/joined", 0) < 3; ++look)
            std::this_thread::sleep_for(milliseconds(10));
        // Time for those round trips on a loaded machine, well inside the connect's 5 s.
        std::this_thread::sleep_for(milliseconds(1200));
        die_noted(notices);
    }
    // Rank 2 dies before it reaches the rendezvous: the others must not wait out the timeout.
    if (scenario == "ended_before_join" && rendezvous.rank == 2)
        die_noted(notices);
    // Rank 2 is never started (no launcher notes anything); in the second form rank 0 gives up
    // half a second after rank 1's connect has timed out.
    const bool zero_late = scenario == "never_comes_zero_late";
    if ((scenario == "never_comes" || zero_late) && rendezvous.rank == 2)
        return 0;
    if (zero_late && rendezvous.rank == 0)
        rendezvous.timeout += milliseconds(500);
    try {
        std::unique_ptr<Transport> transport = make_gloo_transport(rendezvous);
        run(scenario, *transport, count, notices);
    } catch (const TransportTimeout& error) {
        print(fmt::format("error TransportTimeout: {}", error.what()));
    } catch (const TransportAborted& error) {
        print(fmt::format("error TransportAborted: {}", error.what()));
    } catch (const TransportUnavailable& error) {
        print(fmt::format("ended_at_ms {}", steady_ms()));
        print(fmt::format("error TransportUnavailable: {}", error.what()));
    } catch (const std::exception& error) {
        print(fmt::format("error exception: {}", error.what()));
    }
    print("done");
    // As pipelens-runtime ends: a connect given up may have left a thread in c10d or gloo.
    std::fflush(nullptr);
    std::_Exit(0);
}
