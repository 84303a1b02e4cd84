// The per-rank tensor memory account: what a thread with an account allocates is charged to it,
// a free on any other thread refunds the same account, threads without one are not counted, and
// the high-water mark since the last mark survives the frees after it.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <thread>

#include "engine/runtime/memory_account.hpp"

namespace pipelens::runtime {
namespace {

constexpr std::int64_t kFloats = 1000;
constexpr std::int64_t kBytes = kFloats * 4;

TEST(MemoryAccount, ChargesTheAllocatingThreadAndRefundsFromAnyThread) {
    MemoryAccountHandle account;
    torch::Tensor tensor;
    {
        const ScopedMemoryAccount charged(account.get());
        tensor = torch::empty({kFloats}, torch::kFloat32);
    }
    EXPECT_EQ(account->current_bytes(), kBytes);
    std::thread([moved = std::move(tensor)]() mutable { moved = torch::Tensor(); }).join();
    EXPECT_EQ(account->current_bytes(), 0);
}

TEST(MemoryAccount, ThreadsWithoutAnAccountAreNotCounted) {
    MemoryAccountHandle account;
    const ScopedMemoryAccount charged(account.get());
    torch::Tensor elsewhere;
    std::thread([&] { elsewhere = torch::empty({kFloats}, torch::kFloat32); }).join();
    EXPECT_EQ(account->current_bytes(), 0);
    {
        const ScopedMemoryAccount none(nullptr);
        const torch::Tensor uncounted = torch::empty({kFloats}, torch::kFloat32);
        EXPECT_EQ(account->current_bytes(), 0);
    }
    const torch::Tensor counted = torch::empty({kFloats}, torch::kFloat32);
    EXPECT_EQ(account->current_bytes(), kBytes);
}

TEST(MemoryAccount, PeakIsTheMostHeldSinceTheMark) {
    MemoryAccountHandle account;
    const ScopedMemoryAccount charged(account.get());
    const torch::Tensor kept = torch::empty({kFloats}, torch::kFloat32);
    account->mark();
    EXPECT_EQ(account->peak_bytes(), kBytes);
    { const torch::Tensor temporary = torch::empty({3 * kFloats}, torch::kFloat32); }
    EXPECT_EQ(account->current_bytes(), kBytes);
    EXPECT_EQ(account->peak_bytes(), 4 * kBytes);
    account->mark();
    EXPECT_EQ(account->peak_bytes(), kBytes);
}

TEST(MemoryAccount, OutlivesItsOwnerWhileItsTensorsLive) {
    torch::Tensor survivor;
    {
        MemoryAccountHandle account;
        const ScopedMemoryAccount charged(account.get());
        survivor = torch::ones({kFloats}, torch::kFloat32);
    }
    // The account is gone from its owner; the tensor still works and its free is safe.
    EXPECT_EQ(survivor.sum().item<float>(), static_cast<float>(kFloats));
    survivor = torch::Tensor();
}

}  // namespace
}  // namespace pipelens::runtime
