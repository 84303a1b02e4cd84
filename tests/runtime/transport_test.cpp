// The multi-process transports. Gloo runs for real: each test starts one
// pipelens_transport_peer process per rank on a fresh port and compares what the ranks print
// with exact expected text (values, error messages) and times (timeouts, abort latency). The
// nccl transport cannot run without a GPU; what is checked here is that it says so clearly.
//
// Nothing here can hang: every read from a child has a deadline, and a child still running at
// its deadline is killed with SIGKILL and reaped.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "app/cli/rendezvous_port.hpp"
#include "engine/runtime/gloo_transport.hpp"
#include "engine/runtime/local_transport.hpp"
#include "engine/runtime/message_header.hpp"
#include "engine/runtime/nccl_transport.hpp"
#include "engine/runtime/rendezvous_store.hpp"
#include "tests/child_process.hpp"
#include "tests/temp_directory.hpp"

namespace pipelens::runtime {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr auto kPeerDeadline = std::chrono::seconds(20);

// A TCP socket listening on a port the kernel picked (another program holding a port).
class ListeningSocket {
  public:
    ListeningSocket() {
        descriptor_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_ANY);
        socklen_t length = sizeof address;
        if (descriptor_ < 0 ||
            bind(descriptor_, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
            listen(descriptor_, 1) != 0 ||
            getsockname(descriptor_, reinterpret_cast<sockaddr*>(&address), &length) != 0)
            return;
        port_ = ntohs(address.sin_port);
    }
    ~ListeningSocket() {
        if (descriptor_ >= 0)
            close(descriptor_);
    }
    ListeningSocket(const ListeningSocket&) = delete;
    ListeningSocket& operator=(const ListeningSocket&) = delete;

    int port() const { return port_; }

  private:
    int descriptor_ = -1;
    int port_ = 0;
};

struct PeerOutput {
    std::vector<std::string> lines;
    bool exited_cleanly = false;  // exit status 0 before the deadline
};

// One pipelens_transport_peer child whose stdout is read through a pipe.
class Peer : public testing::ChildProcess {
  public:
    explicit Peer(const std::vector<std::string>& arguments)
        : ChildProcess(with_program(arguments)) {}

    // Everything the child prints until it closes stdout, then its exit; SIGKILL at `deadline`.
    PeerOutput collect(Clock::time_point deadline) {
        PeerOutput output;
        if (!started())
            return output;
        output.lines = all_lines(deadline);
        output.exited_cleanly = wait(deadline) == 0;
        return output;
    }

  private:
    static std::vector<std::string> with_program(const std::vector<std::string>& arguments) {
        std::vector<std::string> all{PIPELENS_TRANSPORT_PEER};
        all.insert(all.end(), arguments.begin(), arguments.end());
        return all;
    }
};

// Runs `scenario` with one peer per rank and returns what each rank printed. `notices`: where
// the ranks read (and the scenario's dying rank writes) launcher notices of ended ranks.
std::vector<PeerOutput> run_ranks(int world_size, const std::string& scenario,
                                  const std::string& count = "0", const std::string& notices = "") {
    const std::string port = std::to_string(cli::rendezvous_port());
    std::vector<std::unique_ptr<Peer>> peers;
    for (int rank = 0; rank < world_size; ++rank) {
        std::vector<std::string> arguments{std::to_string(rank), std::to_string(world_size), port,
                                           scenario, count};
        if (!notices.empty())
            arguments.push_back(notices);
        peers.push_back(std::make_unique<Peer>(arguments));
    }
    const auto deadline = Clock::now() + kPeerDeadline;
    std::vector<PeerOutput> outputs;
    for (auto& peer : peers)
        outputs.push_back(peer->collect(deadline));
    return outputs;
}

// The value after `key ` on the line that starts with it.
std::optional<std::string> value_of(const PeerOutput& output, const std::string& key) {
    for (const std::string& line : output.lines)
        if (line.rfind(key + " ", 0) == 0)
            return line.substr(key.size() + 1);
    return std::nullopt;
}

// The values after `key ` on every line that starts with it, in order.
std::vector<std::string> values_of(const PeerOutput& output, const std::string& key) {
    std::vector<std::string> values;
    for (const std::string& line : output.lines)
        if (line.rfind(key + " ", 0) == 0)
            values.push_back(line.substr(key.size() + 1));
    return values;
}

// Milliseconds from rank `from`'s `from_key` to rank `to`'s `to_key` (steady clock, one machine).
std::optional<long long> latency(const std::vector<PeerOutput>& ranks, int from,
                                 const std::string& from_key, int to, const std::string& to_key) {
    const std::optional<std::string> start = value_of(ranks[from], from_key);
    const std::optional<std::string> end = value_of(ranks[to], to_key);
    if (!start || !end)
        return std::nullopt;
    return std::stoll(*end) - std::stoll(*start);
}

std::vector<std::string> ping_lines(const std::string& label, bool large) {
    std::vector<std::string> lines{
        label + " 0 Float [2, 3] 0 0.5 1 1.5 2 2.5", label + " 1 Long [4] -3 0 7 1099511627776",
        label + " 2 Double [] 3.141592653589793",    label + " 3 Bool [3] 1 0 1",
        label + " 4 BFloat16 [2, 2] 1.5 -2 0.25 8",  label + " 5 Float [0]",
        label + " 6 Byte [5] 250 251 252 253 254",
    };
    if (large)
        lines.push_back(label + " 7 Float [200, 100] sum 199990000 first 0 last 19999");
    return lines;
}

// Skipped, saying why, in a build whose LibTorch has no gloo headers (the transport is a stub).
class GlooTransportTest : public testing::TempDirectoryTest {
  protected:
    GlooTransportTest() : TempDirectoryTest("transport") {}
    void SetUp() override {
        TempDirectoryTest::SetUp();
        if (!gloo_transport_built())
            GTEST_SKIP() << "built without the gloo transport (no gloo headers beside LibTorch)";
    }
};

// A rank thread inside a long computation when another rank's timeout stopped the run cannot be
// interrupted: rank 0 stops waiting for its report (an empty payload, as for a silent process)
// instead of failing the whole run, and the report it sends once its computation ends is read.
TEST(LocalTransport, ARankThatReportsLateIsEmptyToTheGatherAndReadOnceItEnds) {
    auto fabric = std::make_shared<LocalFabric>(2);
    LocalTransport zero(fabric, 0), one(fabric, 1);
    const auto started = std::chrono::steady_clock::now();
    const std::vector<std::string> gathered =
        zero.gather_to_rank_zero("zero", std::chrono::milliseconds(50));
    EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(50));
    EXPECT_EQ(gathered, (std::vector<std::string>{"zero", ""}));
    EXPECT_TRUE(one.gather_to_rank_zero("one", std::chrono::milliseconds(50)).empty());
    EXPECT_EQ(fabric->reports(), (std::vector<std::string>{"zero", "one"}));
}

TEST_F(GlooTransportTest, PingPongCarriesShapesDtypesAndValuesExactly) {
    std::vector<std::string> expected = ping_lines("small", false);
    for (const std::string& line : ping_lines("large", true))
        expected.push_back(line);
    expected.push_back("done");
    const std::vector<PeerOutput> ranks = run_ranks(2, "ping_pong");
    for (const PeerOutput& rank : ranks) {
        EXPECT_TRUE(rank.exited_cleanly);
        EXPECT_EQ(rank.lines, expected);
    }
}

TEST_F(GlooTransportTest, TagsMatchMessagesPostedOutOfOrder) {
    std::vector<std::string> expected{"tag 1 Long [2] 1 1", "tag 2 Float [3] 2 2 2"};
    for (int tag = 100; tag <= 131; ++tag)
        expected.push_back("tag " + std::to_string(tag) + " Int [1] " + std::to_string(tag) +
                           " | Float [2] " + fmt::format("{} {}", tag * 0.25, tag * 0.25));
    expected.push_back("done");
    const std::vector<PeerOutput> ranks = run_ranks(2, "out_of_order");
    EXPECT_TRUE(ranks[0].exited_cleanly);
    EXPECT_EQ(ranks[0].lines, (std::vector<std::string>{"sends finished", "done"}));
    EXPECT_TRUE(ranks[1].exited_cleanly);
    EXPECT_EQ(ranks[1].lines, expected);
}

TEST_F(GlooTransportTest, ReceiveTimesOutNamingThePeerAndTag) {
    const std::vector<PeerOutput> ranks = run_ranks(2, "timeout", "500");
    EXPECT_TRUE(ranks[0].exited_cleanly);
    EXPECT_EQ(ranks[0].lines, std::vector<std::string>{"done"});
    EXPECT_TRUE(ranks[1].exited_cleanly);
    EXPECT_EQ(value_of(ranks[1], "error"),
              "TransportTimeout: no data from rank 0 (tag 7) within 500 ms");
    const std::optional<std::string> elapsed = value_of(ranks[1], "elapsed_ms");
    ASSERT_TRUE(elapsed);
    EXPECT_GE(std::stoi(*elapsed), 500);
    EXPECT_LE(std::stoi(*elapsed), 2000);  // a missed deadline would wait seconds more
}

TEST_F(GlooTransportTest, FinishSendsTimesOutNamingTheReceiverAndTag) {
    const std::vector<PeerOutput> ranks = run_ranks(2, "unreceived");
    EXPECT_TRUE(ranks[0].exited_cleanly);
    EXPECT_EQ(value_of(ranks[0], "error"),
              "TransportTimeout: rank 1 did not receive the message from rank 0 (tag 9) within "
              "500 ms");
    const std::optional<std::string> elapsed = value_of(ranks[0], "elapsed_ms");
    ASSERT_TRUE(elapsed);
    EXPECT_GE(std::stoi(*elapsed), 500);
    EXPECT_LE(std::stoi(*elapsed), 2000);  // a missed deadline would wait seconds more
}

// Gloo sends only into a posted buffer: a receive posted when the schedule's RECV runs lets the
// sender's message move while the receiver is still busy (what PyTorch's irecv does), instead
// of a round trip after the receiver finally asks for it.
TEST_F(GlooTransportTest, AReceivePostedAheadTakesTheMessageBeforeItIsAskedFor) {
    const std::vector<PeerOutput> ranks = run_ranks(2, "posted_ahead");
    EXPECT_TRUE(ranks[0].exited_cleanly);
    EXPECT_TRUE(ranks[1].exited_cleanly);
    EXPECT_EQ(value_of(ranks[0], "error"), std::nullopt);
    const std::optional<long long> ahead =
        latency(ranks, 0, "small_delivered_at_ms", 1, "receive_at_ms");
    ASSERT_TRUE(ahead);
    EXPECT_GT(*ahead, 0);  // delivered before the receiver asked for it
    EXPECT_EQ(value_of(ranks[1], "small"), "Float [4] 0 1 2 3");
    EXPECT_EQ(value_of(ranks[1], "large"), "Float [200, 100] sum 199990000 first 0 last 19999");
    EXPECT_NE(std::find(ranks[0].lines.begin(), ranks[0].lines.end(), "sends finished"),
              ranks[0].lines.end());
}

TEST_F(GlooTransportTest, AbortEndsABlockedReceiveWithTheFirstReason) {
    const std::string reason = "rank 0: Stage 0 forward failed (injected by the test)";
    const std::vector<PeerOutput> ranks = run_ranks(2, "abort");
    EXPECT_TRUE(ranks[0].exited_cleanly);
    EXPECT_TRUE(ranks[1].exited_cleanly);
    EXPECT_EQ(value_of(ranks[1], "error"), "TransportAborted: " + reason);
    EXPECT_EQ(value_of(ranks[1], "check_aborted:"), reason);
    const std::optional<long long> ended = latency(ranks, 0, "abort_at_ms", 1, "ended_at_ms");
    ASSERT_TRUE(ended);
    EXPECT_GE(*ended, 0);
    EXPECT_LT(*ended, 2500);  // the receive's own timeout is 10 s
}

TEST_F(GlooTransportTest, ReceiveFromAPeerThatDiedEndsPromptlyNamingIt) {
    const std::vector<PeerOutput> ranks = run_ranks(3, "peer_exits", "2");
    EXPECT_TRUE(ranks[1].exited_cleanly);
    const std::optional<std::string> error = value_of(ranks[1], "error");
    ASSERT_TRUE(error);
    EXPECT_EQ(error->rfind("runtime_error: gloo transport: rank 1 could not receive from rank 2 "
                           "(tag 3): ",
                           0),
              0u)
        << *error;
    const std::optional<long long> ended = latency(ranks, 2, "exit_at_ms", 1, "ended_at_ms");
    ASSERT_TRUE(ended);
    EXPECT_LT(*ended, 2500);  // the receive's own timeout is 10 s
}

TEST_F(GlooTransportTest, ReceiveAfterRankZeroDiedEndsPromptlyAsLostStore) {
    const std::vector<PeerOutput> ranks = run_ranks(2, "peer_exits", "0");
    EXPECT_TRUE(ranks[1].exited_cleanly);
    const std::optional<std::string> error = value_of(ranks[1], "error");
    ASSERT_TRUE(error);
    EXPECT_EQ(error->rfind("TransportAborted: gloo transport: rank 1 lost the rendezvous store "
                           "at 127.0.0.1:",
                           0),
              0u)
        << *error;
    const std::optional<long long> ended = latency(ranks, 0, "exit_at_ms", 1, "ended_at_ms");
    ASSERT_TRUE(ended);
    EXPECT_LT(*ended, 2500);  // the receive's own timeout is 10 s
}

TEST_F(GlooTransportTest, BarrierReleasesAllRanksTogetherOnceTheLastArrives) {
    const std::vector<PeerOutput> ranks = run_ranks(3, "barrier");
    for (int round = 1; round <= 2; ++round) {
        long long last_arrival = 0;
        long long first_leave = LLONG_MAX;
        long long last_leave = 0;
        for (const PeerOutput& rank : ranks) {
            EXPECT_TRUE(rank.exited_cleanly);
            const auto arrive = value_of(rank, fmt::format("arrive_{}_at_ms", round));
            const auto leave = value_of(rank, fmt::format("leave_{}_at_ms", round));
            ASSERT_TRUE(arrive && leave);
            last_arrival = std::max(last_arrival, std::stoll(*arrive));
            first_leave = std::min(first_leave, std::stoll(*leave));
            last_leave = std::max(last_leave, std::stoll(*leave));
        }
        EXPECT_GE(first_leave, last_arrival);
        EXPECT_LT(last_leave - first_leave, 150);  // the ranks arrived 200 ms apart
    }
}

TEST_F(GlooTransportTest, BarrierTimesOutSayingHowManyRanksArrived) {
    const std::vector<PeerOutput> ranks = run_ranks(2, "barrier_timeout");
    EXPECT_TRUE(ranks[0].exited_cleanly);
    EXPECT_EQ(value_of(ranks[0], "error"),
              "TransportTimeout: not every rank reached the barrier within 500 ms (1 of 2 did)");
}

// A rank the launcher saw die while the others wait at a barrier, or before it joined: they stop
// within a fraction of their 20 s and 5 s waits, naming it and how it ended.
TEST_F(GlooTransportTest, ARankThatDiedBeforeTheBarrierEndsTheOthersWaitNamingIt) {
    const std::vector<PeerOutput> ranks =
        run_ranks(3, "barrier_rank_ended", "0", directory_.string());
    for (int rank = 0; rank < 2; ++rank) {
        EXPECT_TRUE(ranks[rank].exited_cleanly);
        EXPECT_EQ(value_of(ranks[rank], "error"),
                  "TransportAborted: rank 2 ended (killed by signal 9 (Killed))");
        const std::optional<long long> ended = latency(ranks, 2, "exit_at_ms", rank, "ended_at_ms");
        ASSERT_TRUE(ended);
        EXPECT_LT(*ended, 3000);  // the barrier's own timeout is 20 s
    }
}

TEST_F(GlooTransportTest, ARankThatDiedBeforeItJoinedEndsRankZerosWaitNamingIt) {
    const std::vector<PeerOutput> ranks =
        run_ranks(3, "ended_before_join", "0", directory_.string());
    const std::optional<std::string> error = value_of(ranks[0], "error");
    ASSERT_TRUE(error);
    // Waiting for the others to join, or (a slow start) still setting up its own store.
    const bool waiting = error->rfind(
                             "TransportUnavailable: gloo transport: rank 2 ended (killed "
                             "by signal 9 (Killed)) before every rank joined the "
                             "rendezvous (",
                             0) == 0;
    const bool starting = error->rfind(
                              "TransportUnavailable: gloo transport: rank 0 stopped "
                              "connecting to the rendezvous at ",
                              0) == 0 &&
                          error->ends_with(": rank 2 ended (killed by signal 9 (Killed))");
    EXPECT_TRUE(waiting || starting) << *error;
    const std::optional<long long> ended = latency(ranks, 2, "exit_at_ms", 0, "ended_at_ms");
    ASSERT_TRUE(ended);
    EXPECT_LT(*ended, 3000);  // the rendezvous's own timeout is 5 s
}

// Gloo's own connect waits for every peer: one that joined and then died was waited for until
// the connect's timeout, in some tries well past it.
TEST_F(GlooTransportTest, ARankThatDiedWhileTheRanksConnectEndsTheOthersConnectNamingIt) {
    const std::vector<PeerOutput> ranks =
        run_ranks(3, "ended_while_connecting", "0", directory_.string());
    for (int rank = 0; rank < 2; ++rank) {
        SCOPED_TRACE(rank);
        EXPECT_TRUE(ranks[rank].exited_cleanly);
        EXPECT_EQ(value_of(ranks[rank], "error"),
                  fmt::format("TransportUnavailable: gloo transport: rank {} stopped connecting to "
                              "the other ranks through gloo: rank 2 ended (killed by signal 9 "
                              "(Killed))",
                              rank));
        const std::optional<long long> ended = latency(ranks, 2, "exit_at_ms", rank, "ended_at_ms");
        ASSERT_TRUE(ended);
        EXPECT_LT(*ended, 2000);  // the connect's own timeout is 5 s, from 1.5 s before the death
    }
}

// A rank that is never started: rank 0 gives up after its timeout and stays until the rank that
// came has read why, which that rank then says (it said "Connection reset by peer").
TEST_F(GlooTransportTest, ARankThatNeverComesIsNamedByEveryRankThatDid) {
    const std::vector<PeerOutput> ranks = run_ranks(3, "never_comes");
    const std::string why = "only 2 of 3 ranks joined the rendezvous at 127.0.0.1:";
    const std::optional<std::string> zero = value_of(ranks[0], "error");
    ASSERT_TRUE(zero);
    EXPECT_EQ(zero->rfind("TransportUnavailable: gloo transport: " + why, 0), 0u) << *zero;
    const std::optional<std::string> one = value_of(ranks[1], "error");
    ASSERT_TRUE(one);
    EXPECT_EQ(one->rfind("TransportUnavailable: gloo transport: rank 1 stopped connecting to the "
                         "other ranks through gloo: rank 0 gave up the rendezvous: " +
                             why,
                         0),
              0u)
        << *one;
}

// Rank 0, woken late on a loaded machine, gives up its wait for the others after rank 1's
// connect has already timed out: rank 1 waits a moment for the reason and names it, rather than
// its own "could not connect ... within 5000 ms".
TEST_F(GlooTransportTest, ARankWhoseConnectTimedOutJustBeforeRankZeroGaveUpNamesRankZerosReason) {
    const std::vector<PeerOutput> ranks = run_ranks(3, "never_comes_zero_late");
    const std::optional<std::string> one = value_of(ranks[1], "error");
    ASSERT_TRUE(one);
    EXPECT_EQ(one->rfind("TransportUnavailable: gloo transport: rank 1 stopped connecting to the "
                         "other ranks through gloo: rank 0 gave up the rendezvous: only 2 of 3 "
                         "ranks joined the rendezvous at 127.0.0.1:",
                         0),
              0u)
        << *one;
}

TEST_F(GlooTransportTest, GatherReturnsEveryPayloadInRankOrderOnRankZero) {
    const std::vector<PeerOutput> ranks = run_ranks(3, "gather");
    std::vector<std::string> expected;
    for (int step = 1; step <= 2; ++step) {
        for (int rank = 0; rank < 3; ++rank)
            expected.push_back(fmt::format("report {} step {} from rank {}: {{\"loss\": {}}}", rank,
                                           step, rank, 0.5 * rank));
        expected.push_back(fmt::format("step {} reports 3", step));
    }
    expected.push_back("done");
    EXPECT_TRUE(ranks[0].exited_cleanly);
    EXPECT_EQ(ranks[0].lines, expected);
    for (int rank = 1; rank < 3; ++rank) {
        EXPECT_TRUE(ranks[rank].exited_cleanly);
        EXPECT_EQ(ranks[rank].lines,
                  (std::vector<std::string>{"step 1 reports 0", "step 2 reports 0", "done"}));
    }
}

TEST_F(GlooTransportTest, GatherStopsWaitingForARankKnownToHaveEndedButKeepsWhatItSent) {
    const std::vector<PeerOutput> ranks = run_ranks(3, "gather_ended", "0", directory_.string());
    EXPECT_TRUE(ranks[0].exited_cleanly);
    EXPECT_EQ(ranks[0].lines,
              (std::vector<std::string>{"report 0 'rank 0's report'", "report 1 'rank 1's report'",
                                        "report 2 ''", "returned before its timeout", "done"}));
}

TEST_F(GlooTransportTest, MessageThatDoesNotFitIsRefusedLikeTheLocalTransport) {
    const std::vector<PeerOutput> ranks = run_ranks(2, "mismatch");
    EXPECT_TRUE(ranks[1].exited_cleanly);
    EXPECT_EQ(value_of(ranks[1], "error"),
              "runtime_error: rank 0 sent tensor 0 (tag 5) with 4 elements of Float but rank 1 "
              "expects 3 of Float");
}

TEST_F(GlooTransportTest, ALandingBufferSizedToItsMessageRefusesALargerOneCleanly) {
    const std::vector<PeerOutput> ranks = run_ranks(2, "expected_sizes");
    EXPECT_TRUE(ranks[0].exited_cleanly);
    EXPECT_TRUE(ranks[1].exited_cleanly);
    EXPECT_EQ(value_of(ranks[1], "expected"), "Float [4] 0 1 2 3");
    EXPECT_EQ(value_of(ranks[1], "error"),
              "runtime_error: rank 0 sent tensor 0 (tag 12) with 1000 elements of Float but rank "
              "1 expects 4 of Float");
}

// A posted receive holds a landing buffer until its data is taken: for a message whose size the
// receiver knows, exactly the header and that message (here 8 KiB), not gloo's largest inline
// message (64 KiB), which on a small model outweighed what the stage itself held; only a
// message of unknown size is posted at the largest inline size.
TEST_F(GlooTransportTest, APostedReceiveHoldsOnlyTheBytesOfTheMessageItExpects) {
    const std::vector<PeerOutput> ranks = run_ranks(2, "posted_bytes");
    EXPECT_TRUE(ranks[0].exited_cleanly);
    EXPECT_TRUE(ranks[1].exited_cleanly);
    EXPECT_EQ(value_of(ranks[1], "error"), std::nullopt);
    EXPECT_EQ(value_of(ranks[1], "posted_expected_bytes"),
              std::to_string(kMessageHeaderBytes + 8192));
    EXPECT_EQ(value_of(ranks[1], "posted_unknown_bytes"),
              std::to_string(kMessageHeaderBytes + 65536));
    EXPECT_NE(std::find(ranks[1].lines.begin(), ranks[1].lines.end(), "received"),
              ranks[1].lines.end());
}

// A large message of known size lands in buffers the receiver posted when its RECV ran, so it
// moves while the receiver computes, as a small one does; a message of another size is refused
// on its header and leaves the posted buffer untouched.
TEST_F(GlooTransportTest, ALargeExpectedMessageLandsInBuffersPostedAhead) {
    const std::vector<PeerOutput> ranks = run_ranks(2, "posted_large_ahead");
    EXPECT_TRUE(ranks[0].exited_cleanly);
    EXPECT_TRUE(ranks[1].exited_cleanly);
    EXPECT_EQ(value_of(ranks[0], "error"), std::nullopt);
    const std::optional<long long> ahead =
        latency(ranks, 0, "large_delivered_at_ms", 1, "receive_at_ms");
    ASSERT_TRUE(ahead);
    EXPECT_GT(*ahead, 0);  // delivered before the receiver asked for it
    EXPECT_EQ(value_of(ranks[1], "large"), "Float [200, 100] sum 199990000 first 0 last 19999");
    EXPECT_EQ(value_of(ranks[1], "undescribed"),
              "Float [200, 100] sum 199990000 first 0 last 19999");
    std::cout << "80 KB message, asked for 3 s after it was sent: posted ahead "
              << value_of(ranks[1], "posted_wait_us").value_or("?") << " us, size unknown "
              << value_of(ranks[1], "unposted_wait_us").value_or("?") << " us\n";
    const std::vector<std::string> errors = values_of(ranks[1], "error");
    EXPECT_EQ(errors, (std::vector<std::string>{
                          "runtime_error: rank 0 sent tensor 0 (tag 14) with 40000 elements of "
                          "Float but rank 1 expects 20000 of Float",
                          "runtime_error: rank 0 sent tensor 0 (tag 15) with 10000 elements of "
                          "Float but rank 1 expects 20000 of Float"}));
    EXPECT_EQ(value_of(ranks[1], "larger_buffer"), "Float [200, 100] sum 0 first 0 last 0");
    EXPECT_EQ(value_of(ranks[1], "smaller_buffer"), "Float [200, 100] sum 0 first 0 last 0");
}

TEST_F(GlooTransportTest, SmallMessageRoundTrip) {
    const std::vector<PeerOutput> ranks = run_ranks(2, "latency", "300");
    EXPECT_TRUE(ranks[0].exited_cleanly);
    EXPECT_TRUE(ranks[1].exited_cleanly);
    const std::optional<std::string> round_trip = value_of(ranks[0], "round_trip_us");
    ASSERT_TRUE(round_trip);
    std::cout << "gloo round trip of a 16-float message on loopback: " << *round_trip << " us\n";
}

TEST_F(GlooTransportTest, UnreachableRendezvousIsUnavailableWithinTheTimeout) {
    Rendezvous rendezvous;
    rendezvous.master_port = cli::rendezvous_port();
    rendezvous.rank = 1;
    rendezvous.world_size = 2;
    rendezvous.timeout = milliseconds(1000);
    const auto started = Clock::now();
    try {
        make_gloo_transport(rendezvous);
        FAIL() << "a transport without a rendezvous";
    } catch (const TransportUnavailable& error) {
        EXPECT_EQ(std::string(error.what())
                      .rfind(fmt::format("gloo transport: rank 1 cannot reach the rendezvous at "
                                         "127.0.0.1:{} within 1000 ms: ",
                                         rendezvous.master_port),
                             0),
                  0u)
            << error.what();
    }
    EXPECT_LT(Clock::now() - started, milliseconds(4000));  // its own bound: timeout + 2 s
}

TEST_F(GlooTransportTest, RendezvousPortInUseIsUnavailable) {
    ListeningSocket taken;
    Rendezvous rendezvous;
    rendezvous.master_port = taken.port();
    rendezvous.timeout = milliseconds(1000);
    try {
        make_gloo_transport(rendezvous);
        FAIL() << "a rendezvous on a port in use";
    } catch (const TransportUnavailable& error) {
        // Said at once, before c10d's server logs its own attempts to bind.
        EXPECT_EQ(std::string(error.what()),
                  fmt::format("gloo transport: rank 0 cannot hold the rendezvous at 127.0.0.1:{}: "
                              "the port is in use (another program or run listens on it); give "
                              "--master another port, or --nproc to have one picked",
                              taken.port()));
    }
}

// Ranks started with different world sizes: each says which, instead of gloo's own check
// failing inside its connect ("enforce fail ... 136 vs 272").
TEST_F(GlooTransportTest, RanksStartedWithDifferentWorldSizesSaySo) {
    const int port = cli::rendezvous_port();
    const auto start = [&](int rank, int world_size) {
        return std::async(std::launch::async, [=] {
            Rendezvous rendezvous;
            rendezvous.master_port = port;
            rendezvous.rank = rank;
            rendezvous.world_size = world_size;
            rendezvous.timeout = milliseconds(3000);
            try {
                make_gloo_transport(rendezvous);
                return std::string("connected");
            } catch (const TransportUnavailable& error) {
                return std::string(error.what());
            }
        });
    };
    auto zero = start(0, 2);
    auto one = start(1, 3);
    const std::string why =
        "rank 1 was started with world size 3, rank 0 with 2: start every rank "
        "with the same --world-size (or give --nproc)";
    EXPECT_EQ(zero.get(), "gloo transport: " + why);
    // Rank 1 reads the sizes itself, or rank 0's refusal if rank 0 read them first.
    const std::string one_said = one.get();
    EXPECT_NE(one_said.find(why), std::string::npos) << one_said;
}

// Two ranks as threads of this process: enough to check the arguments a send refuses.
TEST_F(GlooTransportTest, RefusesBadPeersTagsAndTooManyTensors) {
    Rendezvous rendezvous;
    rendezvous.master_port = cli::rendezvous_port();
    rendezvous.world_size = 2;
    rendezvous.timeout = milliseconds(5000);
    Rendezvous other = rendezvous;
    other.rank = 1;
    auto second = std::async(std::launch::async, [&] { return make_gloo_transport(other); });
    std::unique_ptr<Transport> first = make_gloo_transport(rendezvous);
    std::unique_ptr<Transport> peer = second.get();
    const TensorList one{torch::zeros({2})};
    EXPECT_THROW(first->send(0, 1, one), std::invalid_argument);  // itself
    EXPECT_THROW(first->send(2, 1, one), std::invalid_argument);  // outside the world
    EXPECT_THROW(first->send(1, -1, one), std::invalid_argument);
    EXPECT_THROW(first->send(1, 1 << 30, one), std::invalid_argument);
    EXPECT_THROW(first->send(1, 1, TensorList(16, torch::zeros({1}))), std::invalid_argument);
    first->send(1, 1, TensorList(15, torch::ones({1})));
    TensorList buffers(15);
    for (torch::Tensor& buffer : buffers)
        buffer = torch::zeros({1});
    peer->recv(0, 1, buffers, milliseconds(5000));
    EXPECT_EQ(buffers[14].item<float>(), 1.0f);
    first->finish_sends(milliseconds(5000));
}

TEST(NcclTransportTest, SaysWhyItIsUnavailableHere) {
    Rendezvous rendezvous;
    rendezvous.master_port = cli::rendezvous_port();
    try {
        make_nccl_transport(rendezvous, 0);
        GTEST_SKIP() << "a CUDA device is visible: the nccl transport is available here";
    } catch (const TransportUnavailable& error) {
        const std::string message = error.what();
        if (nccl_transport_built())
            EXPECT_EQ(message.rfind("nccl transport: no CUDA device is visible to rank 0 "
                                    "(cudaGetDeviceCount: ",
                                    0),
                      0u)
                << message;
        else
            EXPECT_EQ(message,
                      "pipelens was built without the NCCL transport (configure with "
                      "PIPELENS_CUDA=ON and CUDA + NCCL at /usr/local/cuda)");
    }
}

}  // namespace
}  // namespace pipelens::runtime
