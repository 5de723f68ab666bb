// CPU kernels for the gather side of indexing (getitem, gather, take, index_select, ...) and
// for index bounds checks. Data movement is instantiated per element size, not per dtype.
#include <atomic>
#include <limits>
#include <mutex>

#include "core/parallel.h"
#include "kernels/cpu/index_loops.h"
#include "kernels/indexing_stubs.h"

namespace ember {
namespace native {
namespace {

// Index ranges for a gather that validates inside the loop: index j is valid iff
// (uint64)(i - lo[j]) < span[j]. An invalid index is never dereferenced; it only sets `bad`.
struct InlineCheck {
  const int64_t* lo;
  const uint64_t* span;
};

template <typename E, bool kChecked>
void gather_loop(TensorIterator& iter, const IndexOffsets& offs, const InlineCheck& chk,
                 std::atomic<bool>& bad) {
  auto valid = [&](int j, int64_t i) {
    return static_cast<uint64_t>(i) - static_cast<uint64_t>(chk.lo[j]) < chk.span[j];
  };
  iter.for_each([&](char** data, const int64_t* st, int64_t len) {
    char* out = data[0];
    const char* src = data[1];
    const int64_t so = st[0], ss = st[1];
    if (offs.constant(st + 2)) {
      if constexpr (kChecked) {
        for (int j = 0; j < offs.n; ++j) {
          if (!valid(j, *reinterpret_cast<const int64_t*>(data[2 + j]))) {
            bad.store(true, std::memory_order_relaxed);
            return;
          }
        }
      }
      // One offset for the whole inner loop: a row copy (memcpy when both sides are dense).
      const char* base = src + offs.at(data + 2, st + 2, 0);
      if (so == sizeof(E) && ss == sizeof(E)) {
        std::memcpy(out, base, len * sizeof(E));
        return;
      }
      for (int64_t k = 0; k < len; ++k) copy_word<E>(out + k * so, base + k * ss);
      return;
    }
    if (offs.n == 1) {  // gather, index_select, take and single-tensor getitem
      const char* ip = data[2];
      const int64_t is = st[2], size = offs.sizes[0], stride = offs.strides[0];
      if (so == sizeof(E) && ss == 0 && is == sizeof(int64_t)) {
        // Dense output and index, src fixed along the loop (gather along the inner dim, take,
        // 1-d getitem): a plain indexed load.
        E* o = reinterpret_cast<E*>(out);
        const int64_t* idx = reinterpret_cast<const int64_t*>(ip);
        for (int64_t k = 0; k < len; ++k) {
          int64_t i = idx[k];
          if constexpr (kChecked) {
            if (__builtin_expect(!valid(0, i), 0)) {
              bad.store(true, std::memory_order_relaxed);
              return;
            }
          }
          i += (i >> 63) & size;  // wrap negatives without a branch
          o[k] = *reinterpret_cast<const E*>(src + i * stride);
        }
        return;
      }
      for (int64_t k = 0; k < len; ++k) {
        int64_t i = *reinterpret_cast<const int64_t*>(ip + k * is);
        if constexpr (kChecked) {
          if (__builtin_expect(!valid(0, i), 0)) {
            bad.store(true, std::memory_order_relaxed);
            return;
          }
        }
        if (i < 0) i += size;
        copy_word<E>(out + k * so, src + k * ss + i * stride);
      }
      return;
    }
    for (int64_t k = 0; k < len; ++k) {
      if constexpr (kChecked) {
        for (int j = 0; j < offs.n; ++j) {
          if (!valid(j, *reinterpret_cast<const int64_t*>(data[2 + j] + k * st[2 + j]))) {
            bad.store(true, std::memory_order_relaxed);
            return;
          }
        }
      }
      copy_word<E>(out + k * so, src + k * ss + offs.at(data + 2, st + 2, k));
    }
  });
}

bool index_gather_kernel(TensorIterator& iter, IntArrayRef sizes, IntArrayRef byte_strides,
                         const int64_t* check_lo, const uint64_t* check_span) {
  IndexOffsets offs{static_cast<int>(sizes.size()), sizes.data(), byte_strides.data()};
  InlineCheck chk{check_lo, check_span};
  std::atomic<bool> bad{false};
  dispatch_word(element_size(iter.dtype(1)), [&](auto tag) {
    using E = typename decltype(tag)::type;
    if (check_lo != nullptr) {
      gather_loop<E, true>(iter, offs, chk, bad);
    } else {
      gather_loop<E, false>(iter, offs, chk, bad);
    }
  });
  return !bad.load();
}

// Finds a value outside [lo, hi). Chunks run in parallel; the chunk that starts first reports,
// so the value named in the error does not depend on thread timing.
bool index_bounds_kernel(TensorIterator& iter, int64_t lo, int64_t hi, int64_t* bad) {
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  std::mutex mu;
  int64_t first_chunk = std::numeric_limits<int64_t>::max();
  int64_t value = 0;
  auto scan = [&](int64_t begin, int64_t end) {
    int64_t found = 0;
    bool any = false;
    iter.serial_for_each(
        [&](char** data, const int64_t* st, int64_t n) {
          if (any) return;
          const char* p = data[0];
          // In range iff (v - lo) as unsigned < span; one compare per element, vectorisable.
          bool hit = false;
          for (int64_t k = 0; k < n; ++k) {
            int64_t v = *reinterpret_cast<const int64_t*>(p + k * st[0]);
            hit |= static_cast<uint64_t>(v) - static_cast<uint64_t>(lo) >= span;
          }
          if (!hit) return;
          for (int64_t k = 0; k < n; ++k) {
            int64_t v = *reinterpret_cast<const int64_t*>(p + k * st[0]);
            if (static_cast<uint64_t>(v) - static_cast<uint64_t>(lo) >= span) {
              found = v;
              any = true;
              return;
            }
          }
        },
        begin, end);
    if (!any) return;
    std::lock_guard<std::mutex> lock(mu);
    if (begin < first_chunk) {
      first_chunk = begin;
      value = found;
    }
  };
  if (iter.numel() < kGrainSize) {
    scan(0, iter.numel());
  } else {
    parallel_for(0, iter.numel(), kGrainSize, scan);
  }
  if (first_chunk == std::numeric_limits<int64_t>::max()) return false;
  *bad = value;
  return true;
}

}  // namespace

EMBER_REGISTER_KERNEL(index_gather_stub, CPU, index_gather_kernel);
EMBER_REGISTER_KERNEL(index_bounds_stub, CPU, index_bounds_kernel);

}  // namespace native
}  // namespace ember
