// The counting CPU allocator. Each block carries a 64-byte header in front of the tensor's data
// (keeping LibTorch's 64-byte alignment) that names the account it was charged to and its size,
// so the deleter, called on any thread, refunds the right account without a lookup table. Every
// block has the header, charged or not, so data and context stay the same pointer and the raw
// allocate/deallocate interface keeps working.
#include "engine/runtime/memory_account.hpp"

#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>
#include <torch/version.h>

#include <chrono>
#include <mutex>

namespace pipelens::runtime {
namespace {

thread_local MemoryAccount* active_account = nullptr;

constexpr std::size_t kHeaderBytes = 64;

struct BlockHeader {
    MemoryAccount* account;
    std::int64_t bytes;
};
static_assert(sizeof(BlockHeader) <= kHeaderBytes);

void free_block(void* data) {
    if (data == nullptr)
        return;
    auto* base = static_cast<char*>(data) - kHeaderBytes;
    const BlockHeader header = *reinterpret_cast<BlockHeader*>(base);
    c10::free_cpu(base);
    if (header.account != nullptr) {
        header.account->refund(header.bytes);
        header.account->release();
    }
}

// LibTorch 2.3 made allocate non-const and added copy_data.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
#define PIPELENS_ALLOCATE_CONST
#else
#define PIPELENS_ALLOCATE_CONST const
#endif

class CountingCpuAllocator final : public c10::Allocator {
  public:
    c10::DataPtr allocate(std::size_t bytes) PIPELENS_ALLOCATE_CONST override {
        auto* base = static_cast<char*>(c10::alloc_cpu(bytes + kHeaderBytes));
        MemoryAccount* account = active_account;
        *reinterpret_cast<BlockHeader*>(base) = {account, static_cast<std::int64_t>(bytes)};
        if (account != nullptr) {
            account->retain();
            account->charge(static_cast<std::int64_t>(bytes));
        }
        void* data = base + kHeaderBytes;
        return {data, data, &free_block, c10::Device(c10::DeviceType::CPU)};
    }
    c10::DeleterFnPtr raw_deleter() const override { return &free_block; }
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
    void copy_data(void* destination, const void* source, std::size_t count) const override {
        default_copy_data(destination, source, count);
    }
#endif
};

// Installed once and never removed: blocks it handed out must find their deleter alive for as
// long as the process runs, so the allocator is a process-lifetime object by design.
void install_counting_allocator() {
    static std::once_flag installed;
    std::call_once(installed, [] {
        static CountingCpuAllocator allocator;
        c10::SetCPUAllocator(&allocator, /*priority=*/100);
    });
}

std::int64_t steady_now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace

MemoryAccount* MemoryAccount::create() {
    return new MemoryAccount();
}

void MemoryAccount::release() {
    if (references_.fetch_sub(1, std::memory_order_acq_rel) == 1)
        delete this;
}

void MemoryAccount::charge(std::int64_t bytes) {
    const std::int64_t now = current_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    std::int64_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak) {
        if (peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
            peak_time_ns_.store(steady_now_ns(), std::memory_order_relaxed);
            break;
        }
    }
}

void MemoryAccount::refund(std::int64_t bytes) {
    current_.fetch_sub(bytes, std::memory_order_relaxed);
}

void MemoryAccount::mark() {
    peak_.store(current_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    peak_time_ns_.store(steady_now_ns(), std::memory_order_relaxed);
}

ScopedMemoryAccount::ScopedMemoryAccount(MemoryAccount* account) : previous_(active_account) {
    install_counting_allocator();
    active_account = account;
}

ScopedMemoryAccount::~ScopedMemoryAccount() {
    active_account = previous_;
}

}  // namespace pipelens::runtime
