#include "core/allocator.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>

#include <atomic>
#include <cstdlib>

#include "core/error.h"
#include "core/profiler.h"

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

// Note [Huge block cache]: a freed huge buffer is kept (up to 128 of them, 1 GiB in all) and
// handed to the next request of the same rounded size. Without it every large temporary came
// back from the kernel as fresh pages that had to be faulted in and zeroed: a 4e6-element
// float32 op spent 1.2 ms of its 3-5 ms clearing its output's pages, where glibc's malloc,
// which PyTorch uses, reuses its heap. Sizes are exact (2 MiB multiples), so a cached block
// never wastes more than the rounding did. When the cache is full, the blocks cached longest
// ago are released to make room: the sizes in use now are the ones worth keeping. (With 8
// blocks / 512 MiB and new blocks refused when full, a language model's training step kept
// stale sizes and faulted in 160 MiB of fresh pages per step, 10-20% of the step; with 32
// blocks, its forward's temporaries still pushed out the block its loss backward needed.)
//
// Note [Medium block cache]: buffers from 64 KiB up to the huge threshold are cached the same
// way, in a second, smaller cache (64 blocks, 64 MiB), their sizes rounded up to one of eight
// classes per power of two (at most 12.5% more) so that similar requests share blocks. glibc
// serves these sizes with mmap, or from a heap it trims once its free top passes twice the
// largest recent request, so a chain of temporaries of a few MiB came back as fresh pages on
// every call: the float route of a quantized convolution (dequantize, convolve, ReLU,
// requantize: 1-3 MiB each) took 2.6-4.9 ms, mostly page faults, and takes 0.9 ms with it.
struct CachedBlock {
  void* ptr;
  size_t size;
};

class BlockCache {
 public:
  BlockCache(int max_blocks, size_t max_bytes) : max_blocks_(max_blocks), max_bytes_(max_bytes) {}

  void* take(size_t size) {
    CacheLock lock(flag_);
    for (int i = count_ - 1; i >= 0; --i) {  // the most recently cached first
      if (blocks_[i].size != size) continue;
      void* p = blocks_[i].ptr;
      for (int j = i + 1; j < count_; ++j) blocks_[j - 1] = blocks_[j];  // keep the age order
      --count_;
      bytes_ -= size;
      return p;
    }
    return nullptr;
  }

  // Caches ptr, releasing the oldest blocks when it does not fit; false (nothing cached) for a
  // block larger than the whole cache.
  bool put(void* ptr, size_t size) {
    if (size > max_bytes_) return false;
    void* evicted[kMaxBlocks];
    int n_evicted = 0;
    {
      CacheLock lock(flag_);
      int drop = 0;  // the oldest blocks are at the front
      size_t bytes = bytes_;
      while (count_ - drop == max_blocks_ || bytes + size > max_bytes_) {
        bytes -= blocks_[drop].size;
        evicted[n_evicted++] = blocks_[drop++].ptr;
      }
      for (int i = drop; i < count_; ++i) blocks_[i - drop] = blocks_[i];
      count_ -= drop;
      blocks_[count_++] = {ptr, size};
      bytes_ = bytes + size;
    }
    for (int i = 0; i < n_evicted; ++i) std::free(evicted[i]);  // outside the lock
    return true;
  }

  // After fork(): a lock held by another thread at fork() would otherwise never be released.
  void reset_lock() { flag_.clear(); }

  static constexpr int kMaxBlocks = 128;

 private:
  // A spin lock rather than a mutex so that a forked child (DataLoader workers) can reset it.
  struct CacheLock {
    explicit CacheLock(std::atomic_flag& flag) : flag(flag) {
      while (flag.test_and_set(std::memory_order_acquire)) {
      }
    }
    ~CacheLock() { flag.clear(std::memory_order_release); }
    std::atomic_flag& flag;
  };
  const int max_blocks_;
  const size_t max_bytes_;
  CachedBlock blocks_[kMaxBlocks];
  int count_ = 0;
  size_t bytes_ = 0;
  std::atomic_flag flag_ = ATOMIC_FLAG_INIT;
};

BlockCache g_huge_cache(128, size_t(1) << 30);
constexpr size_t kMediumThreshold = size_t(64) << 10;
BlockCache g_medium_cache(64, size_t(64) << 20);

const bool g_atfork_registered = [] {
  pthread_atfork(nullptr, nullptr, [] {
    g_huge_cache.reset_lock();
    g_medium_cache.reset_lock();
  });
  return true;
}();

enum class SizeTier { kSmall, kMedium, kHuge };

// The size cpu_alloc actually requests for nbytes, and its tier.
size_t rounded_size(size_t nbytes, SizeTier& tier) {
  size_t rounded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  tier = SizeTier::kSmall;
  if (rounded < nbytes || rounded > SIZE_MAX - kHugePage) return rounded;  // overflow: refused
  if (rounded >= kHugeThreshold) {
    tier = SizeTier::kHuge;
    return (rounded + kHugePage - 1) / kHugePage * kHugePage;
  }
  if (rounded >= kMediumThreshold) {
    tier = SizeTier::kMedium;
    // Eight classes per power of two: steps of 2^(floor(log2(rounded)) - 3).
    const int top = 63 - __builtin_clzll(static_cast<unsigned long long>(rounded));
    const size_t step = size_t(1) << (top - 3);
    return (rounded + step - 1) / step * step;
  }
  return rounded;
}

// RAM plus swap: a block larger than that can never be backed. Where the kernel overcommits
// (vm.overcommit_memory = 1, as on some VMs), malloc grants it anyway, and the first kernel that
// writes it is killed or swaps for minutes instead of raising OutOfMemoryError.
size_t total_memory() {
  static const size_t total = [] {
    struct sysinfo info {};
    if (sysinfo(&info) != 0) return SIZE_MAX;
    size_t units = 0, bytes = 0;
    if (__builtin_add_overflow(info.totalram, info.totalswap, &units) ||
        __builtin_mul_overflow(units, static_cast<size_t>(info.mem_unit), &bytes)) {
      return SIZE_MAX;
    }
    return bytes;
  }();
  return total;
}

BlockCache* cache_for(SizeTier tier) {
  return tier == SizeTier::kHuge     ? &g_huge_cache
         : tier == SizeTier::kMedium ? &g_medium_cache
                                     : nullptr;
}
}  // namespace

void* cpu_alloc(size_t nbytes, const char* op) {
  if (nbytes == 0) return nullptr;
  // Round up so aligned_alloc's size-multiple-of-alignment rule holds; checked for overflow.
  size_t rounded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  EMBER_CHECK_T(OutOfMemoryError, rounded >= nbytes, "[", op, "] cannot allocate ", nbytes,
                " bytes");
  SizeTier tier = SizeTier::kSmall;
  rounded = rounded_size(nbytes, tier);
  EMBER_CHECK_T(OutOfMemoryError, tier != SizeTier::kHuge || rounded <= total_memory(), "[", op,
                "] cannot allocate ", nbytes, " bytes (", static_cast<double>(nbytes) / (1 << 30),
                " GiB): more than this machine's memory and swap (",
                static_cast<double>(total_memory()) / (1 << 30), " GiB)");
  BlockCache* cache = cache_for(tier);
  void* p = cache ? cache->take(rounded) : nullptr;
  if (p == nullptr) {
    const bool huge = tier == SizeTier::kHuge;
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
  if (profiler::memory_enabled()) profiler::record_memory(static_cast<int64_t>(nbytes));
  return p;
}

void cpu_free(void* ptr, size_t nbytes) noexcept {
  if (!ptr) return;
  g_current.fetch_sub(static_cast<int64_t>(nbytes));
  if (profiler::memory_enabled()) profiler::record_memory(-static_cast<int64_t>(nbytes));
  SizeTier tier = SizeTier::kSmall;
  const size_t rounded = rounded_size(nbytes, tier);
  BlockCache* cache = cache_for(tier);
  if (cache && cache->put(ptr, rounded)) return;
  std::free(ptr);
}

AllocatorStats cpu_allocator_stats() {
  return {g_current.load(), g_peak.load(), g_count.load()};
}

void reset_cpu_allocator_peak() {
  g_peak.store(g_current.load());
}

}  // namespace ember
