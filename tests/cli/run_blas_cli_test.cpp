// Debian's LibTorch computes its matrix products with whatever libblas.so.3 resolves to; the
// reference BLAS (netlib) made an mlp step 17x slower than OpenBLAS on the 2-core development
// machine, so a run on it says so, once a run, naming the file, and a run on an optimised BLAS
// says nothing of it.
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>

#include "tests/cli/run_pipelens.hpp"

namespace pipelens {
namespace {

using testing::run_command;

// Debian's reference BLAS: /usr/lib/<triplet>/blas/libblas.so.3 (libblas3), if installed.
std::optional<std::filesystem::path> installed_reference_blas() {
    std::error_code error;
    for (std::filesystem::directory_iterator entry("/usr/lib", error), end; !error && entry != end;
         entry.increment(error)) {
        const std::filesystem::path file = entry->path() / "blas" / "libblas.so.3";
        if (std::filesystem::exists(file, error))
            return std::filesystem::canonical(file, error);
    }
    return std::nullopt;
}

// The file pipelens-runtime's libblas.so.3 resolves to without help, "" if it has none.
std::string resolved_blas() {
    const auto ldd = run_command("ldd " + std::string(PIPELENS_RUNTIME_BINARY));
    std::istringstream lines(ldd.out);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::string name, arrow, path;
        if (words >> name >> arrow >> path && name == "libblas.so.3") {
            std::error_code error;
            return std::filesystem::canonical(path, error).string();
        }
    }
    return "";
}

std::size_t occurrences(const std::string& text, const std::string& part) {
    std::size_t count = 0;
    for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
        ++count;
    return count;
}

constexpr const char* kRun =
    " run --model empty --schedule 1F1B --pp 2 --m 4 --no-reference --steps 1 --warmup 0";

TEST(RunCli, ARunOnTheReferenceBlasSaysSoOnceNamingItsFile) {
    const std::optional<std::filesystem::path> reference = installed_reference_blas();
    if (!reference)
        GTEST_SKIP() << "Debian's reference BLAS (libblas3) is not installed here";
    if (resolved_blas().empty())
        GTEST_SKIP() << "pipelens-runtime links no libblas.so.3 (its LibTorch has its own BLAS)";
    // A directory ahead of the system's on the search path, whose libblas.so.3 is the reference.
    const std::filesystem::path directory = testing::process_temp_path("reference_blas");
    std::filesystem::create_directories(directory);
    std::filesystem::remove(directory / "libblas.so.3");  // left by an earlier --gtest_repeat
    std::filesystem::create_symlink(*reference, directory / "libblas.so.3");
    const std::string note =
        "pipelens: note: LibTorch's matrix products run on the reference "
        "BLAS (" +
        reference->string() + "), many times slower than an optimised one";
    for (const std::string transport : {"", " --transport gloo --nproc 2"}) {
        SCOPED_TRACE(transport);
        if (!transport.empty() && !PIPELENS_GLOO_TRANSPORT)
            continue;  // this build's gloo transport is a stub
        const auto result = run_command("env LD_LIBRARY_PATH=" + directory.string() + " " +
                                        PIPELENS_BINARY + kRun + transport);
        EXPECT_EQ(result.exit_code, 0) << result.err;
        EXPECT_EQ(occurrences(result.err, note), 1u) << result.err;
        EXPECT_NE(result.err.find("install libopenblas0-openmp"), std::string::npos) << result.err;
    }
}

TEST(RunCli, ARunOnAnOptimisedBlasSaysNothingOfIt) {
    const std::string blas = resolved_blas();
    if (blas.empty())
        GTEST_SKIP() << "pipelens-runtime links no libblas.so.3 (its LibTorch has its own BLAS)";
    if (std::filesystem::path(blas).parent_path().filename() == "blas")
        GTEST_SKIP() << "this machine's libblas.so.3 is the reference BLAS (" << blas
                     << "): `make` installs libopenblas0-openmp";
    const auto result = run_command(std::string(PIPELENS_BINARY) + kRun);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.err.find("BLAS"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace pipelens
