// Tensor memory per rank: which rank's tensors are alive, in bytes, over time. LibTorch's CPU
// allocator is wrapped once per process; every allocation made on a thread that has an account
// (ScopedMemoryAccount) is charged to that account, and its free, on whatever thread it happens
// (a received tensor dropped by another rank's thread, an autograd worker), goes back to the
// same account. Allocations on threads without an account (set-up, LibTorch's own intra-op
// workers) are not counted, nor is memory libraries take outside tensors (BLAS/oneDNN scratch,
// the allocator's own bookkeeping): these figures are tensor bytes, not the process's RSS.
//
// Invariants: an account lives until its owner and every allocation charged to it are gone
// (reference counted), so a tensor freed after the run cannot touch freed memory; `current`
// never counts an allocation twice; `peak_since_mark` >= current at all times.
#pragma once

#include <atomic>
#include <cstdint>

namespace pipelens::runtime {

class MemoryAccount {
  public:
    // A new account with one reference, held by the returned handle's owner.
    static MemoryAccount* create();
    void retain() { references_.fetch_add(1, std::memory_order_relaxed); }
    void release();  // deletes the account with its last reference

    void charge(std::int64_t bytes);  // an allocation
    void refund(std::int64_t bytes);  // its free

    std::int64_t current_bytes() const { return current_.load(std::memory_order_relaxed); }
    // The most held at once since the last mark, and when (steady clock ns since its epoch).
    std::int64_t peak_bytes() const { return peak_.load(std::memory_order_relaxed); }
    std::int64_t peak_time_ns() const { return peak_time_ns_.load(std::memory_order_relaxed); }
    void mark();  // the peak starts again from what is held now

  private:
    MemoryAccount() = default;
    std::atomic<std::int64_t> references_{1};
    std::atomic<std::int64_t> current_{0};
    std::atomic<std::int64_t> peak_{0};
    std::atomic<std::int64_t> peak_time_ns_{0};
};

// Owns one reference to a fresh account.
class MemoryAccountHandle {
  public:
    MemoryAccountHandle() : account_(MemoryAccount::create()) {}
    ~MemoryAccountHandle() { account_->release(); }
    MemoryAccountHandle(const MemoryAccountHandle&) = delete;
    MemoryAccountHandle& operator=(const MemoryAccountHandle&) = delete;
    MemoryAccount& operator*() const { return *account_; }
    MemoryAccount* operator->() const { return account_; }
    MemoryAccount* get() const { return account_; }

  private:
    MemoryAccount* account_;
};

// While alive, CPU tensors allocated on this thread are charged to `account` (nullptr: to
// none). Installs the counting allocator on first use.
class ScopedMemoryAccount {
  public:
    explicit ScopedMemoryAccount(MemoryAccount* account);
    ~ScopedMemoryAccount();
    ScopedMemoryAccount(const ScopedMemoryAccount&) = delete;
    ScopedMemoryAccount& operator=(const ScopedMemoryAccount&) = delete;

  private:
    MemoryAccount* previous_;
};

}  // namespace pipelens::runtime
