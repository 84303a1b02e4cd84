// The model a real run trains, as a user comparing schedules relies on: the default model is
// the same whatever v (two layers per pipeline rank), so 1F1B and ZBVZeroBubble of one pp train
// the same parameters to the same loss; a v whose stages the default cannot fill is refused
// naming --layers. A rank started by hand over gloo says whom it waits for and gives up after
// --timeout instead of waiting on the rendezvous in silence, and --nproc beside a flag that
// contradicts it is refused.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <future>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/rendezvous_port.hpp"
#include "tests/cli/run_pipelens.hpp"
#include "tests/fresh_trace.hpp"

namespace pipelens {
namespace {

using testing::run_pipelens;

int layer_count(const nlohmann::json& explanation) {
    int layers = 0;
    for (const auto& stage : explanation["stages"])
        layers += static_cast<int>(stage["layers"].size());
    return layers;
}

TEST(RunModelCli, TheDefaultModelDoesNotDependOnV) {
    const auto one_f_one_b = run_pipelens("explain --schedule 1F1B --pp 2 --m 4 --json");
    const auto zbv = run_pipelens("explain --schedule ZBVZeroBubble --pp 2 --m 4 --json");
    ASSERT_EQ(one_f_one_b.exit_code, 0) << one_f_one_b.err;
    ASSERT_EQ(zbv.exit_code, 0) << zbv.err;
    const auto first = nlohmann::json::parse(one_f_one_b.out);
    const auto second = nlohmann::json::parse(zbv.out);
    EXPECT_EQ(layer_count(first), 4);
    EXPECT_EQ(layer_count(second), 4);
    EXPECT_EQ(first["parameter_count"], second["parameter_count"]);
}

TEST(RunModelCli, OnePpTrainsTheSameModelToTheSameLossAtAnyV) {
    const auto loss_of = [](const std::string& kind) {
        const auto result =
            run_pipelens("run --schedule " + kind + " --pp 2 --m 4 --seed 7 --json");
        EXPECT_EQ(result.exit_code, 0) << kind << ": " << result.err;
        return result.exit_code == 0 ? nlohmann::json::parse(result.out)["loss"].get<double>()
                                     : -1.0;
    };
    const double reference = loss_of("1F1B");
    EXPECT_GT(reference, 0);
    for (const char* kind : {"ZBVZeroBubble", "Interleaved1F1B", "DualPipeV"})
        EXPECT_NEAR(loss_of(kind), reference, 1e-5 * reference) << kind;
}

TEST(RunModelCli, AVTheDefaultModelCannotFillIsRefusedNamingLayers) {
    const auto result = run_pipelens("explain --schedule Interleaved1F1B --pp 2 --v 4 --m 4");
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.err,
              "pipelens: explain: the default model has two layers per pipeline rank (4 for "
              "pp=2), too few for 8 stages (4 per rank): give --layers (a multiple of 8 splits "
              "evenly)\n");
    EXPECT_EQ(
        run_pipelens("explain --schedule Interleaved1F1B --pp 2 --v 4 --m 4 --layers 8").exit_code,
        0);
}

TEST(RunModelCli, ARankStartedByHandSaysWhomItWaitsForAndHonoursTheTimeout) {
    PIPELENS_SKIP_WITHOUT_GLOO();
    const int port = cli::rendezvous_port();
    const std::string master = "127.0.0.1:" + std::to_string(port);
    const auto result =
        run_pipelens("run --transport gloo --pp 2 --m 4 --timeout 2s --master " + master);
    EXPECT_NE(result.exit_code, 0);
    EXPECT_NE(result.err.find(
                  "pipelens run: rank 0 of 2 (gloo) waits for the other ranks at " + master +
                  "; start each with the same command and --rank R "
                  "--world-size 2 --master " +
                  master + ", or give --nproc 2 to start them all here; giving up after 2.000 s"),
              std::string::npos)
        << result.err;
    // Said at the rendezvous, after --timeout, not after the transport's bootstrap has waited a
    // second --timeout of its own for the missing rank.
    EXPECT_NE(result.err.find("gloo transport: only 1 of 2 ranks joined the rendezvous at " +
                              master + " within 2000 ms"),
              std::string::npos)
        << result.err;
}

// Two gloo ranks started by hand on one rendezvous, rank 0 with --hidden `zero_hidden` and rank
// 1 with `one_hidden`: rank 0 refuses the difference (exit 2) and rank 1 stops with its words
// (exit 1), whichever of them gets there first.
void expect_hidden_sizes_refused(int zero_hidden, int one_hidden) {
    const std::string ranks =
        " --transport gloo --pp 2 --m 4 --timeout 5s --world-size 2 --master 127.0.0.1:" +
        std::to_string(cli::rendezvous_port());
    auto zero = std::async(std::launch::async, [&] {
        return run_pipelens("run --rank 0 --hidden " + std::to_string(zero_hidden) + ranks);
    });
    const auto one = run_pipelens("run --rank 1 --hidden " + std::to_string(one_hidden) + ranks);
    const auto first = zero.get();
    const std::string difference =
        "rank 1 was started with --hidden " + std::to_string(one_hidden) +
        ", rank 0 with --hidden " + std::to_string(zero_hidden) +
        ": start every rank of a run with the same model, sizes, split, schedule, steps and dtype";
    EXPECT_EQ(first.exit_code, 2) << first.err;
    EXPECT_NE(first.err.find("pipelens: run: " + difference + "\n"), std::string::npos)
        << first.err;
    EXPECT_EQ(one.exit_code, 1) << one.err;
    EXPECT_NE(one.err.find("pipelens: rank 1: stopped before step 0: " + difference),
              std::string::npos)
        << one.err;
}

// Ranks started by hand with another --hidden: the larger messages once made gloo abort the
// receiving process (SIGABRT). Rank 0 compares the ranks' runs first and refuses, naming both.
TEST(RunModelCli, RanksStartedWithDifferentRunsAreRefusedNamingTheDifference) {
    PIPELENS_SKIP_WITHOUT_GLOO();
    expect_hidden_sizes_refused(32, 64);
}

// Rank 1 reads the refusal at its first barrier, after building its model (here a larger one
// than rank 0's, a few hundred ms more): rank 0, which serves the store, once ended before
// that, and rank 1 said only "lost the rendezvous store (has rank 0 exited?)".
TEST(RunModelCli, ARankStillBuildingItsModelReadsWhyItsRunWasRefused) {
    PIPELENS_SKIP_WITHOUT_GLOO();
    expect_hidden_sizes_refused(32, 512);
}

// A rendezvous port held by another program that takes connections and never answers (here a
// socket listening, never accepting: the kernel completes the connection) once held a rank for
// good; it now gives up after --timeout and a little more, saying what it found.
TEST(RunModelCli, ARendezvousPortHeldByAnotherProgramEndsTheRankInTime) {
    PIPELENS_SKIP_WITHOUT_GLOO();
    const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(listener, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), length), 0);
    ASSERT_EQ(::listen(listener, 16), 0);
    ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
    const int port = ntohs(address.sin_port);
    const auto result = run_pipelens(
        "run --transport gloo --pp 2 --m 4 --rank 1 --world-size 2 --timeout 1s "
        "--master 127.0.0.1:" +
        std::to_string(port));
    ::close(listener);
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_NE(
        result.err.find("rank 1 cannot reach the rendezvous at 127.0.0.1:" + std::to_string(port) +
                        " within 1000 ms: nothing answered as a rendezvous store does "
                        "within 3000 ms (is another program listening on that port?)"),
        std::string::npos)
        << result.err;
    const auto bad = run_pipelens("run --transport gloo --pp 2 --m 4 --master 127.0.0.1:abc");
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("--master '127.0.0.1:abc': expected HOST:PORT with a port from 1 to "
                           "65535"),
              std::string::npos)
        << bad.err;
}

TEST(RunModelCli, NprocBesideFlagsItContradictsIsRefusedNamingBoth) {
    const auto local = run_pipelens("run --transport local --nproc 2 --pp 2 --m 4");
    EXPECT_EQ(local.exit_code, 2);
    EXPECT_EQ(local.err,
              "pipelens: --nproc 2 starts one process per rank, but --transport local runs the "
              "ranks as threads of one process: give --transport gloo (or nccl) with --nproc, or "
              "drop --nproc\n");
    const auto by_default = run_pipelens("run --nproc 2 --pp 2 --m 4");
    EXPECT_EQ(by_default.exit_code, 2);
    EXPECT_NE(by_default.err.find("but the default transport (local) runs the ranks as threads"),
              std::string::npos)
        << by_default.err;
    // Threads are every rank at once: a rank or world size beside them was silently ignored.
    const auto threads = run_pipelens("run --pp 2 --m 4 --rank 1 --world-size 2");
    EXPECT_EQ(threads.exit_code, 2);
    EXPECT_EQ(threads.err,
              "pipelens: --rank names one process of a run, but the default transport (local) "
              "runs every rank as a thread of this one: drop it, or give --transport gloo (or "
              "nccl) and start each rank\n");
    const auto rank = run_pipelens("run --transport gloo --nproc 2 --rank 1 --pp 2 --m 4");
    EXPECT_EQ(rank.exit_code, 2);
    EXPECT_EQ(rank.err,
              "pipelens: --nproc 2 starts all the ranks, but --rank says this process is one of "
              "them: give --nproc alone, or start each rank by hand with --rank/--world-size\n");
}

// Sizes LibTorch would refuse deep inside with a C++ backtrace, or a negative layer count that
// would quietly mean the default: one line naming the option, exit 2, before anything is built.
TEST(RunCli, ImpossibleModelSizesAreRefusedNamingTheOption) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"--hidden 0", "--hidden (model.hidden): 0 is not a hidden size (1 or more)"},
        {"--hidden -4", "--hidden (model.hidden): -4 is not a hidden size (1 or more)"},
        {"--layers -1",
         "--layers (model.layers): -1 is not a layer count (0 for two per pipeline rank, or "
         "more)"},
        {"--batch -8", "--batch (model.batch_size): -8 is not a batch size (1 or more)"},
        {"--seed -1", "--seed (model.seed): -1 is out of range (at least 0)"},
        {"--input-shape 16,abc",
         "--input-shape (model.input_shape): 'abc' in '16,abc' is not a size (a whole number of "
         "1 or more)"},
        // Once rank 0 first announced it waited for its peers over the unknown transport.
        {"--transport bogus", "--transport: 'bogus' is no transport: use local, gloo or nccl"},
    };
    for (const auto& [option, message] : cases) {
        const auto run = run_pipelens("run --schedule 1F1B --pp 2 --m 4 --model mlp " + option);
        EXPECT_EQ(run.exit_code, 2) << option << run.err;
        EXPECT_EQ(run.err, "pipelens: " + message + "\n") << option;
    }
}

// LibTorch reads a model file: on a FIFO it blocked until a writer came, and a trace got its zip
// reader's error. Both are refused before, naming the file.
TEST(RunCli, AModelThatIsNoTorchScriptFileIsRefusedNamingIt) {
    const std::filesystem::path fifo = std::filesystem::temp_directory_path() /
                                       ("pipelens_model_" + std::to_string(::getpid()) + ".pt");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    for (const std::string command : {"run", "explain"}) {
        const auto result =
            testing::run_command("timeout 20 " + std::string(PIPELENS_BINARY) + " " + command +
                                 " --pp 2 --m 4 --input-shape 64 --model " + fifo.string());
        EXPECT_EQ(result.exit_code, 2) << command;
        EXPECT_EQ(result.err, "pipelens: --model (model.name): " + fifo.string() +
                                  " is not a regular file (a directory, FIFO, device or socket); "
                                  "give the TorchScript .pt file itself\n")
            << command;
    }
    std::filesystem::remove(fifo);
    const auto trace = testing::fresh_trace("as_model");
    ASSERT_EQ(run_pipelens("simulate --out " + trace.string()).exit_code, 0);
    const auto traced = run_pipelens("run --pp 2 --m 4 --input-shape 64 --model " + trace.string());
    EXPECT_EQ(traced.exit_code, 2);
    EXPECT_EQ(traced.err, "pipelens: --model (model.name): " + trace.string() +
                              " is a pipelens trace, not a TorchScript model (a .pt file from "
                              "torch.jit.save)\n");
}

// Every rank builds the whole model and the reference one more copy: a model whose copies
// cannot fit this machine's memory is refused before any is built (exit 3), once, by the
// launcher when there is one. Hidden 10^6: 8e12 parameters, more than any machine holds.
// Every recorded action is held until the run is written: a step count whose actions cannot
// fit once ran its steps and died of std::bad_alloc (exit 1, nothing recorded).
// A cut the model cannot take was LibTorch's own error, exit 1; a tied weight was counted twice
// in the model's parameters (embed and project share one tensor: 20736 distinct, not 24832).
TEST(RunCli, AChunkDimTheModelCannotTakeIsAUsageErrorAndATiedWeightCountsOnce) {
    for (const std::string command : {"run", "explain"}) {
        const auto result = run_pipelens(command + " --pp 2 --m 4 --chunk-dim 1");
        EXPECT_EQ(result.exit_code, 2) << command;
        EXPECT_EQ(result.err, "pipelens: " + command +
                                  ": stage 0 cannot run on its first microbatch ([32, 16]; the "
                                  "batch is cut into microbatches along --chunk-dim): mat1 and "
                                  "mat2 shapes cannot be multiplied (32x16 and 64x64)\n");
    }
    const auto tied = run_pipelens("explain --pp 2 --m 4 --model tied");
    ASSERT_EQ(tied.exit_code, 0) << tied.err;
    EXPECT_NE(tied.out.find("Parameter Count: 20736\n"), std::string::npos) << tied.out;
}

TEST(RunCli, StepsWhoseActionsCannotBeHeldAreRefusedBeforeTheFirstStep) {
    for (const std::string launch : {"", " --transport gloo --nproc 4"}) {
        const auto result = run_pipelens(
            "run --schedule 1F1B --pp 4 --m 64 --steps 1000000 --no-reference" + launch);
        EXPECT_EQ(result.exit_code, 3) << launch << result.err;
        EXPECT_NE(result.err.find("pipelens: run: --steps 1000000 records 1.28e+09 actions (1280 "
                                  "a step), at least 610.4 GiB held until the run is written, "
                                  "more than the "),
                  std::string::npos)
            << result.err;
        EXPECT_NE(result.err.find("available: lower --steps\n"), std::string::npos) << result.err;
    }
}

TEST(RunCli, AModelTooLargeForThisMachineIsRefusedBeforeAnyRankBuildsIt) {
    const auto threads =
        run_pipelens("run --schedule 1F1B --pp 2 --m 4 --model mlp --hidden 1000000");
    EXPECT_EQ(threads.exit_code, 3) << threads.err;
    EXPECT_EQ(threads.err.rfind("pipelens: run: the mlp model (4 layers, hidden 1000000) has "
                                "8e+12 parameters, ",
                                0),
              0u)
        << threads.err;
    EXPECT_NE(threads.err.find("this run builds 3 copies of it (2 ranks each build the whole "
                               "model, the reference one more)"),
              std::string::npos)
        << threads.err;
    EXPECT_NE(threads.err.find("lower --hidden or --layers, or give --no-reference\n"),
              std::string::npos)
        << threads.err;

    const auto processes = run_pipelens(
        "run --schedule 1F1B --pp 2 --m 4 --model transformer --hidden 1000000 --no-reference "
        "--transport gloo --nproc 2");
    EXPECT_EQ(processes.exit_code, 3) << processes.err;
    EXPECT_NE(processes.err.find("this run builds 2 copies of it (2 ranks each build the whole "
                                 "model), "),
              std::string::npos)
        << processes.err;
    EXPECT_EQ(processes.err.find("rank 0"), std::string::npos) << processes.err;  // none started

    // The batch is built whole: LibTorch's allocator once refused it ("[enforce fail at
    // alloc_cpu.cpp]", exit 1).
    const auto batch =
        run_pipelens("run --schedule 1F1B --pp 2 --m 4 --model mlp --batch 1000000000");
    EXPECT_EQ(batch.exit_code, 3) << batch.err;
    EXPECT_EQ(batch.err.rfind("pipelens: run: a batch of 1000000000 samples of 64 values each is "
                              "238.4 GiB in float32, more than the ",
                              0),
              0u)
        << batch.err;

    const auto explain = run_pipelens(
        "explain --schedule 1F1B --pp 2 --m 4 --model mlp "
        "--hidden 1000000");
    EXPECT_EQ(explain.exit_code, 3) << explain.err;
    EXPECT_NE(explain.err.find("in float32; explain builds it once, more than the "),
              std::string::npos)
        << explain.err;
}

// Whether pipelens-runtime links a CUDA LibTorch, whose libraries take more address space than
// the limits below: the runtime would not even load (exit 127, seen with PyTorch 2.11's wheel),
// and its runs would use the GPU's allocator. Names the library, or "".
std::string cuda_torch_library() {
    for (const std::string& library : testing::loaded_libraries(PIPELENS_RUNTIME_BINARY))
        if (library.rfind("libc10_cuda", 0) == 0 || library.rfind("libtorch_cuda", 0) == 0)
            return library;
    return "";
}

// A model that passes the up-front estimate (its parameters fit) but not the memory it is given:
// LibTorch's allocator once ended the run with its own enforcement text and exit 1, naming no
// rank. Out of memory is too large an input (exit 3), naming who ran out, threads or processes.
TEST(RunCli, RunningOutOfMemoryAllTheSameIsTooLargeNamingWhoRanOut) {
    if (const std::string library = cuda_torch_library(); !library.empty())
        GTEST_SKIP() << "pipelens-runtime links a CUDA LibTorch (" << library
                     << "): an address-space limit cannot model a small CPU machine";
    const auto limited = [](const std::string& arguments) {
        return testing::run_command("sh -c 'ulimit -v 1500000; exec " +
                                    std::string(PIPELENS_BINARY) + " " + arguments + "'");
    };
    const std::string run =
        "run --schedule 1F1B --pp 2 --m 4 --layers 20000 --no-reference --steps 1";
    const auto threads = limited(run);
    EXPECT_EQ(threads.exit_code, 3) << threads.err;
    EXPECT_EQ(
        threads.err.rfind("pipelens: building the model ran out of memory (DefaultCPUAllocator: "
                          "can't allocate memory: ",
                          0),
        0u)
        << threads.err;
    EXPECT_NE(threads.err.find("lower --layers, --hidden, --batch, --m or --steps\n"),
              std::string::npos)
        << threads.err;
    // Out of memory while the stages' shapes are found on the first microbatch was "stage 1
    // cannot run on its first microbatch" (exit 2), as if the split were wrong.
    const auto shapes = testing::run_command(
        "sh -c 'ulimit -v 2000000; exec " + std::string(PIPELENS_BINARY) +
        " run --schedule GPipe --pp 2 --m 8 --layers 12 --split layers.1 --hidden 2048 "
        "--batch 16384 --no-reference --steps 1'");
    EXPECT_EQ(shapes.exit_code, 3) << shapes.err;
    EXPECT_NE(shapes.err.find("ran out of memory (DefaultCPUAllocator"), std::string::npos)
        << shapes.err;
    const auto processes = limited(run + " --transport gloo --nproc 2");
    EXPECT_EQ(processes.exit_code, 3) << processes.err;
    EXPECT_NE(processes.err.find("pipelens: rank 0 ran out of memory ("), std::string::npos)
        << processes.err;
    EXPECT_EQ(processes.err.find("enforce fail"), std::string::npos) << processes.err;
}

// A model that fits, whose steps do not: GPipe keeps every microbatch's activations until its
// backward (64 layers of 32,768 x 16 float32 values, 2 MiB each, twice a layer, for 32
// microbatches: 8 GiB a stage, past a 2.5 GB address space after a few microbatches; one
// intra-op thread each, so that the address space does not grow with the cores). An
// action's allocator failure was "rank 1 failed at 1F3: <LibTorch's message and its C++
// backtrace>", exit 1, as if the run were wrong. It is too large an input (exit 3) naming the
// rank and the action, and the run is recorded up to it.
TEST(RunCli, RunningOutOfMemoryInAnActionIsTooLargeNamingTheActionAndTheRunIsRecorded) {
    if (const std::string library = cuda_torch_library(); !library.empty())
        GTEST_SKIP() << "pipelens-runtime links a CUDA LibTorch (" << library
                     << "): an address-space limit cannot model a small CPU machine";
    const auto trace = testing::fresh_trace("out_of_memory_in_an_action");
    const auto result = testing::run_command(
        "sh -c 'ulimit -v 2500000; exec " + std::string(PIPELENS_BINARY) +
        " run --schedule GPipe --pp 2 --m 32 --layers 64 --hidden 16 --batch 1048576 "
        "--no-reference --steps 1 --warmup 0 --threads 1 --json --out " +
        trace.string() + "'");
    ASSERT_EQ(result.exit_code, 3) << result.err;
    const auto failed = nlohmann::json::parse(result.out).at("failed");
    EXPECT_EQ(failed.at("kind"), "out_of_memory");
    const std::string message = failed.at("message");
    const std::string who =
        fmt::format("rank {} in {} ran out of memory (DefaultCPUAllocator: can't allocate memory",
                    failed.at("rank").get<int>(), failed.at("action").get<std::string>());
    EXPECT_EQ(message.rfind(who, 0), 0u) << message;
    EXPECT_NE(message.find("lower --layers, --hidden, --batch, --m or --steps"), std::string::npos)
        << message;
    EXPECT_EQ(result.err.find("frame #"), std::string::npos) << result.err;
    const auto summary = run_pipelens("summary --json " + trace.string());
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    const auto run = nlohmann::json::parse(summary.out).at("runs").at(0);
    EXPECT_EQ(run.at("status"), "failed");
    EXPECT_EQ(run.at("failed"), failed);
    EXPECT_GT(run.at("actions").get<int>(), 0);  // the actions before the failure
}

// Ranks started by hand, rank 0 with less memory than its run needs: a 20,000-layer model fits
// its 2.9 GB address space, its gradients do not. It runs out in its first backward, which it
// records and tells rank 1, and again writing its report, which ended it at once: rank 0 serves
// the rendezvous store, so rank 1, still stopping, read only "lost the rendezvous store at ...
// (has rank 0 exited?)". Rank 0 now tells what it ends with and stays until rank 1 has read it.
// One intra-op thread each, so that the address space does not grow with the cores.
TEST(RunCli, ARankStartedByHandReadsThatRankZeroRanOutOfMemory) {
    PIPELENS_SKIP_WITHOUT_GLOO();
    if (const std::string library = cuda_torch_library(); !library.empty())
        GTEST_SKIP() << "pipelens-runtime links a CUDA LibTorch (" << library
                     << "): an address-space limit cannot model a small CPU machine";
    const std::string ranks =
        " --transport gloo --pp 2 --m 4 --layers 20000 --steps 1 --threads 1 --timeout 60s "
        "--world-size 2 --master 127.0.0.1:" +
        std::to_string(cli::rendezvous_port());
    auto zero = std::async(std::launch::async, [&] {
        return testing::run_command("sh -c 'ulimit -v 2900000; exec " +
                                    std::string(PIPELENS_BINARY) + " run --rank 0" + ranks + "'");
    });
    const auto one = run_pipelens("run --rank 1" + ranks);
    const auto first = zero.get();
    EXPECT_EQ(first.exit_code, 3) << first.err;
    EXPECT_NE(first.err.find("pipelens: rank 0 ran out of memory"), std::string::npos) << first.err;
    EXPECT_EQ(one.exit_code, 1) << one.err;
    EXPECT_NE(one.err.find("rank 0 in 0B0 ran out of memory (DefaultCPUAllocator"),
              std::string::npos)
        << one.err;
    EXPECT_EQ(one.err.find("lost the rendezvous store"), std::string::npos) << one.err;
}

// The other way round: rank 1, by hand, runs its steps, then runs out of memory checking the
// whole model on the whole batch against the pipelined result (16 layers of 262,144 x 64
// values, 2 GiB with their graph, past its 2.4 GB). It sent no report, so rank 0 waited out its
// --timeout and recorded "rank 1 sent no report ... (it died or hangs)", exit 1. Rank 1 now
// leaves its failure for rank 0's gather: the run is recorded with it, too large, exit 3.
TEST(RunCli, ARankThatRanOutOfMemoryByHandIsRecordedByRankZeroAsTooLarge) {
    PIPELENS_SKIP_WITHOUT_GLOO();
    if (const std::string library = cuda_torch_library(); !library.empty())
        GTEST_SKIP() << "pipelens-runtime links a CUDA LibTorch (" << library
                     << "): an address-space limit cannot model a small CPU machine";
    const auto trace = testing::fresh_trace("rank_one_out_of_memory");
    const std::string ranks =
        " --transport gloo --pp 2 --m 64 --layers 16 --batch 262144 --steps 1 --threads 1 "
        "--timeout 60s --world-size 2 --master 127.0.0.1:" +
        std::to_string(cli::rendezvous_port());
    auto zero = std::async(std::launch::async, [&] {
        return run_pipelens("run --rank 0 --json --out " + trace.string() + ranks);
    });
    const auto one =
        testing::run_command("sh -c 'ulimit -v 2400000; exec " + std::string(PIPELENS_BINARY) +
                             " run --rank 1" + ranks + "'");
    const auto first = zero.get();
    EXPECT_EQ(one.exit_code, 3) << one.err;
    ASSERT_EQ(first.exit_code, 3) << first.err;
    const auto failed = nlohmann::json::parse(first.out).at("failed");
    EXPECT_EQ(failed.at("rank"), 1);
    EXPECT_EQ(failed.at("kind"), "out_of_memory");
    EXPECT_EQ(failed.at("message").get<std::string>().rfind("rank 1 ran out of memory (", 0), 0u)
        << failed;
    const auto summary = run_pipelens("summary --json " + trace.string());
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    EXPECT_EQ(nlohmann::json::parse(summary.out).at("runs").at(0).at("failed"), failed);
}

}  // namespace
}  // namespace pipelens
