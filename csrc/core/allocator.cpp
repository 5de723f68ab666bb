#include "core/allocator.h"

#include <pthread.h>
#include <sys/mman.h>

#include <atomic>
#include <cstdlib>

#include "core/error.h"

namespace ember {

namespace {
std::atomic<int64_t> g_current{0};
std::atomic<int64_t> g_peak{0};
std::atomic<int64_t> g_count{0};
constexpr size_t kAlignment = 64;
// Note [Huge Pages]: buffers of several MiB are aligned to 2 MiB and marked MADV_HUGEPAGE, as
// NumPy does for its arrays. With 4 KiB pages a streaming kernel spends a large share of its
// time on TLB misses: a 40 MB float32 sum ran at half the speed on malloc'd memory as on a
// NumPy-allocated buffer. (A no-op where transparent huge pages are disabled.)
constexpr size_t kHugePage = size_t(2) << 20;
constexpr size_t kHugeThreshold = size_t(4) << 20;

// Note [Huge block cache]: a freed huge buffer is kept (up to kCachedBlocks of them, kCacheBytes
// in all) and handed to the next request of the same rounded size. Without it every large
// temporary came back from the kernel as fresh pages that had to be faulted in and zeroed: a
// 4e6-element float32 op spent 1.2 ms of its 3-5 ms clearing its output's pages, where glibc's
// malloc, which PyTorch uses, reuses its heap. Sizes are exact (2 MiB multiples), so a cached
// block never wastes more than the rounding did. When the cache is full, the blocks cached
// longest ago are released to make room: the sizes in use now are the ones worth keeping. (With
// 8 blocks / 512 MiB and new blocks refused when full, a language model's training step kept
// stale sizes and faulted in 160 MiB of fresh pages per step, 10-20% of the step; with 32
// blocks, its forward's temporaries still pushed out the block its loss backward needed.)
constexpr int kCachedBlocks = 128;
constexpr size_t kCacheBytes = size_t(1) << 30;
struct CachedBlock {
  void* ptr;
  size_t size;
};
CachedBlock g_cache[kCachedBlocks];
int g_cached = 0;
size_t g_cached_bytes = 0;
// A spin lock rather than a mutex so that a forked child (DataLoader workers) can reset it: a
// lock held by another thread at fork() would otherwise never be released in the child.
std::atomic_flag g_cache_lock = ATOMIC_FLAG_INIT;
struct CacheLock {
  CacheLock() {
    while (g_cache_lock.test_and_set(std::memory_order_acquire)) {
    }
  }
  ~CacheLock() { g_cache_lock.clear(std::memory_order_release); }
};
const bool g_atfork_registered = [] {
  pthread_atfork(nullptr, nullptr, [] { g_cache_lock.clear(); });
  return true;
}();

void* take_cached(size_t size) {
  CacheLock lock;
  for (int i = g_cached - 1; i >= 0; --i) {  // the most recently cached first
    if (g_cache[i].size != size) continue;
    void* p = g_cache[i].ptr;
    for (int j = i + 1; j < g_cached; ++j) g_cache[j - 1] = g_cache[j];  // keep the age order
    --g_cached;
    g_cached_bytes -= size;
    return p;
  }
  return nullptr;
}

// Caches ptr, releasing the oldest blocks when it does not fit; false (nothing cached) for a
// block larger than the whole cache.
bool put_cached(void* ptr, size_t size) {
  if (size > kCacheBytes) return false;
  void* evicted[kCachedBlocks];
  int n_evicted = 0;
  {
    CacheLock lock;
    int drop = 0;  // the oldest blocks are at the front
    size_t bytes = g_cached_bytes;
    while (g_cached - drop == kCachedBlocks || bytes + size > kCacheBytes) {
      bytes -= g_cache[drop].size;
      evicted[n_evicted++] = g_cache[drop++].ptr;
    }
    for (int i = drop; i < g_cached; ++i) g_cache[i - drop] = g_cache[i];
    g_cached -= drop;
    g_cache[g_cached++] = {ptr, size};
    g_cached_bytes = bytes + size;
  }
  for (int i = 0; i < n_evicted; ++i) std::free(evicted[i]);  // outside the lock
  return true;
}

// The size cpu_alloc actually requests for nbytes, and whether it is a huge buffer.
size_t rounded_size(size_t nbytes, bool& huge) {
  size_t rounded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  huge = rounded >= nbytes && rounded >= kHugeThreshold && rounded <= SIZE_MAX - kHugePage;
  if (huge) rounded = (rounded + kHugePage - 1) / kHugePage * kHugePage;
  return rounded;
}
}  // namespace

void* cpu_alloc(size_t nbytes, const char* op) {
  if (nbytes == 0) return nullptr;
  // Round up so aligned_alloc's size-multiple-of-alignment rule holds; checked for overflow.
  size_t rounded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  EMBER_CHECK_T(OutOfMemoryError, rounded >= nbytes, "[", op, "] cannot allocate ", nbytes,
                " bytes");
  bool huge = false;
  rounded = rounded_size(nbytes, huge);
  void* p = huge ? take_cached(rounded) : nullptr;
  if (p == nullptr) {
    p = std::aligned_alloc(huge ? kHugePage : kAlignment, rounded);
#ifdef MADV_HUGEPAGE
    if (huge && p != nullptr) madvise(p, rounded, MADV_HUGEPAGE);  // advisory: failure is harmless
#endif
  }
  EMBER_CHECK_T(OutOfMemoryError, p != nullptr, "[", op, "] failed to allocate ", nbytes,
                " bytes (", static_cast<double>(nbytes) / (1 << 30), " GiB) of CPU memory");
  int64_t now = g_current.fetch_add(static_cast<int64_t>(nbytes)) + static_cast<int64_t>(nbytes);
  int64_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
  }
  g_count.fetch_add(1, std::memory_order_relaxed);
  return p;
}

void cpu_free(void* ptr, size_t nbytes) noexcept {
  if (!ptr) return;
  g_current.fetch_sub(static_cast<int64_t>(nbytes));
  bool huge = false;
  const size_t rounded = rounded_size(nbytes, huge);
  if (huge && put_cached(ptr, rounded)) return;
  std::free(ptr);
}

AllocatorStats cpu_allocator_stats() {
  return {g_current.load(), g_peak.load(), g_count.load()};
}

void reset_cpu_allocator_peak() {
  g_peak.store(g_current.load());
}

}  // namespace ember
